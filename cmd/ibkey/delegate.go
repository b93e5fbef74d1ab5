package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
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
// long-running, so the exec's few milliseconds are paid once.

// companionName is the full ibkey the front execs, installed beside it.
const companionName = "ibkey-full"

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
// name completion list it), and main execs ibkey-full before cobra would run it.
func delegateStub(use, short string, aliases []string) *cobra.Command {
	return &cobra.Command{
		Use:                use,
		Short:              short,
		Aliases:            aliases,
		DisableFlagParsing: true,
		Annotations:        map[string]string{delegateAnnotation: companionName},
		RunE: func(c *cobra.Command, _ []string) error {
			// main resolves every command line before cobra runs; reaching this is a
			// bug in delegated, not something a user can fix.
			return fmt.Errorf("internal error: %s runs in %s, which main did not start", c.CommandPath(), companionName)
		},
	}
}

// delegated says whether args (without the program name) run a command the front
// does not link: the command itself, `help` for it, or a completion request for it
// (the shell scripts call `ibkey __complete ARGS...`). cobra's own lookup (Find, which
// skips flags the way Execute does) decides, on commandWords(args). Erring towards ibkey-full is harmless: it runs
// every command the same way.
func delegated(root *cobra.Command, args []string) bool {
	c, _, err := root.Find(commandWords(args))
	if err != nil {
		return false
	}
	for ; c != nil; c = c.Parent() {
		if c.Annotations[delegateAnnotation] != "" {
			return true
		}
	}
	return false
}

// execCompanion replaces this process with ibkey-full, same arguments and environment.
// It returns only when that is impossible, with the exit code: 3 when ibkey-full is not
// installed beside this binary, 128+N when signal N arrived first.
//
// Signals: until here earlysig holds INT/TERM/HUP/QUIT for main. signal.Stop returns
// when any such signal has either reached earlysig.C or will take its default action
// (the process ends; nothing has been acquired), so none is lost in the exec: one
// already held ends the process with its exit code, a later one reaches ibkey-full,
// whose own earlysig takes over once it starts.
func execCompanion(self string, args, env []string, errOut io.Writer) int {
	path := filepath.Join(filepath.Dir(self), companionName)
	signal.Stop(earlysig.C)
	select {
	case s := <-earlysig.C:
		return cmdutil.ExitSignal + int(s.(syscall.Signal))
	default:
	}
	err := syscall.Exec(path, append([]string{os.Args[0]}, args...), env)
	fmt.Fprintf(errOut, "ibkey: this command runs in %s (the complete ibkey: Prometheus exporter, verbs counters, the counters screen), which is not beside this ibkey: %v; `make install` installs both, `go build ./cmd/ibkey` builds one binary with every command\n", path, err)
	return cmdutil.ExitEnv
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
