package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/exporter"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/fabric"
	jobcmd "github.com/ibkey/ibkey/cmd/ibkey/internal/job"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/partitions"
	"github.com/ibkey/ibkey/internal/demo"
	"github.com/ibkey/ibkey/internal/ibverbs"
	"github.com/ibkey/ibkey/internal/query"
)

// Globals are the flags every command shares and the dependencies built from them.
type Globals struct {
	IO       *IOStreams
	Getenv   func(string) string
	SysfsDir string
	Demo     bool
	Output   string
	NoColor  bool
	// Now is the clock: sample times, and the demo host's moving counters.
	Now func() time.Time
	// Fabric selects the MAD transport for commands given a fabric address.
	Fabric FabricFlags
}

// Host returns the host the flags (and IBKEY_SYSFS / IBKEY_DEMO) select. Building the
// command tree never calls it, so completions and man pages can be generated anywhere.
func (g *Globals) Host() *query.Host {
	if g.Demo || g.Getenv("IBKEY_DEMO") == "1" {
		// The demo's counters move with the time elapsed since now (counters.txt).
		return &query.Host{Sys: demo.LiveSysfs(g.Now), Label: demo.Label}
	}
	dir := g.SysfsDir
	if dir == "" {
		dir = g.Getenv("IBKEY_SYSFS")
	}
	if dir == "" {
		dir = "/sys"
	}
	return &query.Host{Sys: ibverbs.Open(dir)}
}

type format int

const (
	formatTable format = iota
	formatPlain
	formatJSON
)

var outputFormats = []string{"table", "plain", "json"}

// Format decides table vs plain vs JSON once: -o wins, else table on a terminal.
func (g *Globals) Format() (format, error) {
	switch g.Output {
	case "":
		if g.IO.OutTTY {
			return formatTable, nil
		}
		return formatPlain, nil
	case "table":
		return formatTable, nil
	case "plain":
		return formatPlain, nil
	case "json":
		return formatJSON, nil
	}
	return 0, &query.UsageError{Msg: fmt.Sprintf("invalid output format %q (accepted: %s)", g.Output, strings.Join(outputFormats, ", "))}
}

// Color reports whether stderr may be colored.
func (g *Globals) Color() bool {
	return g.IO.ErrTTY && !g.NoColor && g.Getenv("NO_COLOR") == ""
}

func newRootCmd(streams *IOStreams, getenv func(string) string) *cobra.Command {
	g := &Globals{IO: streams, Getenv: getenv, Now: time.Now}
	root := &cobra.Command{
		Use:   "ibkey",
		Short: "Explain InfiniBand partitions: P_Key tables, P_Key/Q_Key values, who can talk",
		Long: `ibkey explains InfiniBand partitions. It reads a host's P_Key tables from sysfs
(or any port's over MADs), decodes P_Key and Q_Key values, predicts whether two
endpoints can communicate under the P_Key and Q_Key rules, watches the counters that
show dropped packets, checks an OpenSM partitions.conf and audits a whole fabric. It
only reads: it never writes sysfs and sends only Get MADs.

Without hardware, --demo shows every command on an embedded demo host.`,
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	root.SetVersionTemplate("ibkey version {{.Version}}\n")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &query.UsageError{Msg: fmt.Sprintf("%s (see 'ibkey %s --help')", err, c.Name())}
	})
	pf := root.PersistentFlags()
	pf.StringVar(&g.SysfsDir, "sysfs", "", "read sysfs from `DIR` instead of /sys (env IBKEY_SYSFS)")
	pf.BoolVar(&g.Demo, "demo", false, "use the embedded demo host (env IBKEY_DEMO=1)")
	pf.StringVarP(&g.Output, "output", "o", "", "output `FORMAT`: table, plain or json (default: table on a terminal, plain otherwise)")
	pf.BoolVar(&g.NoColor, "no-color", false, "no colors (also NO_COLOR)")
	g.Fabric.register(pf)
	_ = root.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(outputFormats, cobra.ShellCompDirectiveNoFileComp))
	_ = root.MarkPersistentFlagDirname("sysfs")

	root.AddCommand(
		newDevicesCmd(g),
		newPKeysCmd(g),
		newDecodeCmd(g),
		newCanTalkCmd(g),
		newWatchCmd(g),
		g.bridged(partitions.NewCmdPartitions),
		g.bridged(fabric.NewCmdFabric),
		jobcmd.NewCmdJob(jobcmd.Deps{Out: streams.Out, ErrOut: streams.ErrOut, OutTTY: streams.OutTTY, Host: g.Host, Getenv: getenv, Output: func() string { return g.Output }, Fabric: g.OpenFabric, Exit: func(c int) error { return &silentError{code: c} }}, nil),
		exporter.NewCmdExporter(exporter.Deps{In: streams.In, Out: streams.Out, ErrOut: streams.ErrOut, Host: g.Host, Getenv: getenv, OpenFabric: g.OpenFabric}, nil),
	)
	return root
}

// usageArgs wraps a cobra argument validator so its errors exit 2.
func usageArgs(v cobra.PositionalArgs) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if err := v(c, args); err != nil {
			return &query.UsageError{Msg: fmt.Sprintf("%s: %s (usage: %s)", c.CommandPath(), err, c.UseLine())}
		}
		return nil
	}
}
