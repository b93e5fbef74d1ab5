package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cantalk"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/decode"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/devices"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/exporter"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/job"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/partitions"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/pkeys"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/sm"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/watch"
	"github.com/ibkey/ibkey/internal/query"
)

// newRootCmd assembles the whole command tree. Building it touches nothing on the
// system, so completions and man pages can be generated anywhere.
func newRootCmd(f *cmdutil.Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "ibkey",
		Short: "Explain InfiniBand partitions: P_Key tables, P_Key/Q_Key values, who can talk",
		Long: `ibkey explains InfiniBand partitions. It reads a host's P_Key tables from
sysfs (or any port's over MADs), decodes P_Key and Q_Key values, predicts
whether two endpoints can talk under the P_Key and Q_Key rules, watches the
counters that show dropped packets, checks an OpenSM partitions.conf and
audits a whole fabric. It only reads: it never writes sysfs and sends only Get
MADs.

Without hardware, --demo shows every command on an embedded demo host and the
fabric it is cabled to (sm log still needs an OpenSM log: the demo has none).`,
		Version: version(),
	}
	cmdutil.AddRootFlags(root, f)
	// --version only: cobra would also take -v, which diags and ssh users type for
	// "verbose" (FlagError explains -v).
	root.Flags().Bool("version", false, "print ibkey's version")
	root.SetVersionTemplate("ibkey version {{.Version}}\n")
	root.AddCommand(
		devices.NewCmdDevices(f, nil),
		pkeys.NewCmdPKeys(f, nil),
		decode.NewCmdDecode(f),
		cantalk.NewCmdCanTalk(f, nil),
		watch.NewCmdWatch(f),
		job.NewCmdJob(f, nil),
		newExporterCmd(f),
		partitions.NewCmdPartitions(f),
		fabric.NewCmdFabric(f),
		sm.NewCmdSM(f),
	)
	cmdutil.UseFixedBashCompletion(root)
	return root
}

// newExporterCmd is `ibkey exporter` with its dependencies from the factory and its MAD
// flags.
func newExporterCmd(f *cmdutil.Factory) *cobra.Command {
	var m *cmdutil.MADFlags
	c := exporter.NewCmdExporter(exporter.Deps{
		Out: f.IOStreams.Out, ErrOut: f.IOStreams.ErrOut,
		Host: f.Host, Demo: f.IsDemo, Verbs: query.LocalVerbs,
		OpenFabric: func(ctx context.Context) (*query.Fabric, error) { return m.Open(ctx) },
	})
	m = cmdutil.AddMADFlags(c, f)
	m.NoMADs = func() string {
		for _, name := range []string{"sweep", "lid", "portinfo"} {
			if v := c.Flags().Lookup(name).Value.String(); v != "" && v != "false" {
				return ""
			}
		}
		return "'ibkey exporter' sends them only in fabric mode (--sweep, --lid) or for --portinfo (give one, or leave out the MAD flags to export this host)"
	}
	return c
}
