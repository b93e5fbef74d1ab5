package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/earlysig"
)

// The front and the full ibkey.
//
// `make build` builds two binaries from this package. bin/ibkey, the front (build tags
// ibkey_front and ibkey_static), is a static binary that runs every command but two:
// `exporter` (Prometheus client_golang and exporter-toolkit, whose package
// initialisation alone costs about 1.5 ms of every process that links them) and `watch
// counters` (libibverbs through purego, which makes a binary dynamically linked: the
// dynamic loader and purego's thread setup cost about 1 ms of every process). For
// those two the front execs bin/ibkey-full, the complete ibkey (every command, the
// default `go build ./cmd/ibkey`), with the same arguments, so they behave exactly as
// in one binary: the same flags, help, completions and exit codes. Both are
// long-running, so the exec's few milliseconds are paid once. The exec happens in
// earlysig's package init, before any signal handler exists (see there why), for every
// command line earlysig.Delegates picks; in the front's command tree the two commands
// are placeholders (delegateStub) that only give their names and one-line help.

// companionName is the full ibkey the front execs, installed beside it.
const companionName = earlysig.Companion

// delegateAnnotation marks a front placeholder for a command the front does not link.
const delegateAnnotation = "ibkey_runs_in_full"

// exporterUse and exporterShort are `ibkey exporter`'s name and one-line help
// for the front's placeholder (the command itself is in cmd/ibkey/internal/exporter;
// TestFrontStubsMatch keeps them equal).
const (
	exporterUse   = "exporter"
	exporterShort = "Prometheus metrics: P_Key tables, IPoIB membership, partition drops, fabric audit"
)

// delegateStub is the front's placeholder for a command that runs in ibkey-full: it
// has the command's name, aliases and one-line help (so `ibkey --help` and command
// name completion list it); earlysig execs ibkey-full before main would run it.
func delegateStub(use, short string, aliases []string) *cobra.Command {
	return &cobra.Command{
		Use:                use,
		Short:              short,
		Aliases:            aliases,
		DisableFlagParsing: true,
		Annotations:        map[string]string{delegateAnnotation: companionName},
		RunE: func(c *cobra.Command, _ []string) error {
			// earlysig execs ibkey-full for every command line that can reach this
			// (earlysig.Delegates; TestDelegated); reaching it is a bug, not something
			// a user can fix.
			return fmt.Errorf("internal error: %s runs in %s, which was not started", c.CommandPath(), companionName)
		},
	}
}

// stubCounters replaces w's `counters` subcommand by its placeholder (same name,
// aliases and one-line help).
func stubCounters(w *cobra.Command) *cobra.Command {
	for _, c := range w.Commands() {
		if c.Name() == "counters" {
			w.RemoveCommand(c)
			w.AddCommand(delegateStub(c.Use, c.Short, c.Aliases))
		}
	}
	return w
}
