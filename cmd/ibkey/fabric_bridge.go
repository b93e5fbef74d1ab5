package main

// Temporary glue while cmd/ibkey moves to cmdutil.Factory (issue 10): the partitions
// and fabric commands live in cmd/ibkey/internal/{partitions,fabric} and are built on
// a Factory; the commands still in this package use Globals. Once root.go builds the
// Factory and main passes the signal context (cmdA's part), bridged and the rest of
// this file go away: can-talk is its last user (FabricSource, PartitionsOptions).

import (
	"errors"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/internal/check/partconf"
	"github.com/ibkey/ibkey/internal/query"
)

// bridged builds a command tree on a Factory that follows g: before a command runs,
// the root's parsed flags are copied into the Factory, SIGINT and SIGTERM cancel the
// command's context, and cmdutil's exit codes become this package's.
func (g *Globals) bridged(build func(*cmdutil.Factory) *cobra.Command) *cobra.Command {
	f := &cmdutil.Factory{
		IOStreams: &cmdutil.IOStreams{In: g.IO.In, Out: g.IO.Out, ErrOut: g.IO.ErrOut, InTTY: g.IO.InTTY, OutTTY: g.IO.OutTTY, ErrTTY: g.IO.ErrTTY},
		Getenv:    g.Getenv,
		Now:       g.Now,
	}
	c := build(f)
	var wrap func(c *cobra.Command)
	wrap = func(c *cobra.Command) {
		if run := c.RunE; run != nil {
			c.RunE = func(c *cobra.Command, args []string) error {
				f.SysfsDir, f.Demo, f.Output, f.NoColor = g.SysfsDir, g.Demo, g.Output, g.NoColor
				ctx, stop := signal.NotifyContext(cmdutil.Context(c), os.Interrupt, syscall.SIGTERM)
				defer stop()
				c.SetContext(ctx)
				err := run(c, args)
				var silent *cmdutil.SilentError
				if errors.As(err, &silent) {
					return &silentError{code: silent.Code}
				}
				return err
			}
		}
		for _, sub := range c.Commands() {
			wrap(sub)
		}
	}
	wrap(c)
	return c
}

// PartitionsOptions are can-talk's OpenSM flags (--allow-both, --sm-guid, --table-size).
type PartitionsOptions struct{ cmdutil.OpenSMFlags }

func (o *PartitionsOptions) addOpenSMFlags(c *cobra.Command) { o.AddFlags(c) }

func (o *PartitionsOptions) load(path string) (*query.Partitions, error) { return o.Load(path) }

func fileGUIDCompletions(path string) []cobra.Completion { return cmdutil.FileGUIDCompletions(path) }

func posText(p partconf.Pos, src *partconf.Config) string { return cmdutil.PartitionPos(p, src) }

func plural(n int, one, many string) string { return cmdutil.Plural(n, one, many) }
