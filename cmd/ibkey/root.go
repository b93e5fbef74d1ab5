package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cantalk"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/decode"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/devices"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/fabric"
	jobcmd "github.com/ibkey/ibkey/cmd/ibkey/internal/job"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/partitions"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/pkeys"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/watch"
	"github.com/ibkey/ibkey/internal/query"
)

// noun is a top-level command: its name, for finding it in a command line without
// building it, and its constructor.
type noun struct {
	name  string
	build func(f *cmdutil.Factory) *cobra.Command
}

// nouns are ibkey's top-level commands (TestNounNames keeps the names equal to the
// built commands').
var nouns = []noun{
	{"devices", func(f *cmdutil.Factory) *cobra.Command { return devices.NewCmdDevices(f, nil) }},
	{"pkeys", func(f *cmdutil.Factory) *cobra.Command { return pkeys.NewCmdPKeys(f, nil) }},
	{"decode", decode.NewCmdDecode},
	{"can-talk", func(f *cmdutil.Factory) *cobra.Command { return cantalk.NewCmdCanTalk(f, nil) }},
	{"watch", func(f *cmdutil.Factory) *cobra.Command { return frontWatch(watch.NewCmdWatch(f)) }},
	{"job", newJobCmd},
	{"exporter", newExporterCmd},
	{"partitions", partitions.NewCmdPartitions},
	{"fabric", fabric.NewCmdFabric},
}

// newRootCmd assembles the whole command tree. Building it touches nothing on the
// system, so completions and man pages can be generated anywhere.
func newRootCmd(f *cmdutil.Factory) *cobra.Command { return newRootCmdFor(f, nil) }

// newRootCmdFor assembles the command tree args need: when they name a top-level
// command (as cobra finds it: after the root's flags, after "help" or a completion
// request), only that one, with all its subcommands; otherwise (no args, `ibkey
// --help`, `ibkey help`, an unknown command, `completion`) every one. Building the
// whole tree was a tenth of a short command's run time.
func newRootCmdFor(f *cmdutil.Factory, args []string) *cobra.Command {
	root := &cobra.Command{
		Use:   "ibkey",
		Short: "Explain InfiniBand partitions: P_Key tables, P_Key/Q_Key values, who can talk",
		Long: `ibkey explains InfiniBand partitions. It reads a host's P_Key tables from sysfs
(or any port's over MADs), decodes P_Key and Q_Key values, predicts whether two
endpoints can communicate under the P_Key and Q_Key rules, watches the counters that
show dropped packets, checks an OpenSM partitions.conf and audits a whole fabric. It
only reads: it never writes sysfs and sends only Get MADs.

Without hardware, --demo shows every command on an embedded demo host.`,
		Version: version,
	}
	cmdutil.AddRootFlags(root, f)
	// --version only: cobra would also take -v, which diags and ssh users type for
	// "verbose" (FlagError explains -v).
	root.Flags().Bool("version", false, "print ibkey's version")
	root.SetVersionTemplate("ibkey version {{.Version}}\n")

	only := ""
	if args != nil {
		only = nounIn(root, args)
	}
	if only != "" {
		// cobra's `completion` command (four subcommands with their flags, built on
		// every run) only for the command lines that can reach it.
		root.CompletionOptions.DisableDefaultCmd = true
	}
	for _, n := range nouns {
		if only == "" || n.name == only {
			root.AddCommand(n.build(f))
		}
	}
	cmdutil.UseFixedBashCompletion(root)
	// Interval flags take plain seconds (watch -n habits), --mad-timeout plain ms.
	cmdutil.AcceptPlainDurations(root)
	// The counters screen needs a terminal: -o table on a pipe is refused, not ignored.
	cmdutil.MarkTableNeedsTerminal(root, "watch", "counters")
	return root
}

// nounIn is the top-level command args run, "" when they name none. root has its
// flags and no commands yet; placeholders stand in for the nouns while cobra looks.
func nounIn(root *cobra.Command, args []string) string {
	stand := make([]*cobra.Command, len(nouns))
	for i, n := range nouns {
		stand[i] = &cobra.Command{Use: n.name, DisableFlagParsing: true, Run: func(*cobra.Command, []string) {}}
	}
	root.AddCommand(stand...)
	defer root.RemoveCommand(stand...)
	c, _, err := root.Find(commandWords(args))
	if err != nil || c == root {
		return ""
	}
	return c.Name()
}

// commandWords are args without the words that only say how to run a command
// ("help", cobra's completion requests), for finding the command they run.
func commandWords(args []string) []string {
	words := make([]string, 0, len(args))
	for _, a := range args {
		switch a {
		case "help", cobra.ShellCompRequestCmd, cobra.ShellCompNoDescRequestCmd:
		default:
			words = append(words, a)
		}
	}
	return words
}

// newJobCmd is `ibkey job` with its dependencies from the factory and its MAD flags.
func newJobCmd(f *cmdutil.Factory) *cobra.Command {
	var m *cmdutil.MADFlags
	c := jobcmd.NewCmdJob(jobcmd.Deps{
		Out: f.IOStreams.Out, ErrOut: f.IOStreams.ErrOut,
		Host: f.Host, Getenv: f.Getenv, Format: f.Format,
		Fabric: func(ctx context.Context) (*query.Fabric, error) { return m.Open(ctx) },
		Exit:   cmdutil.Exit,
	}, nil)
	m = cmdutil.AddMADFlags(c, f)
	return c
}
