package main

// Temporary glue while cmd/ibkey moves to cmdutil.Factory (issue 10): the partitions
// and fabric commands live in cmd/ibkey/internal/{partitions,fabric} and are built on
// a Factory; the commands still in this package use Globals. Once root.go builds the
// Factory and main passes the signal context (cmdA's part), bridged and the rest of
// this file go away: can-talk is its last user (FabricSource, PartitionsOptions).

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/internal/check"
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

// FabricSource is can-talk's --fabric-file and --timeout.
type FabricSource struct {
	*Globals
	File    string        // --fabric-file
	Timeout time.Duration // --timeout
}

func (s *FabricSource) addFlags(c *cobra.Command) {
	c.Flags().StringVar(&s.File, "fabric-file", "", "read a saved sweep from `FILE` (ibkey fabric discover -o json > FILE) instead of sweeping the fabric")
	c.Flags().DurationVar(&s.Timeout, "timeout", 5*time.Minute, "stop the sweep after this long and report what was read (exit 3)")
	_ = c.MarkFlagFilename("fabric-file", "json")
}

func readFabricFile(path string) (*check.Fabric, error) { return cmdutil.ReadFabricFile(path) }

// sweep runs a sweep through the open transport. A sweep that stopped early comes back
// with what it read and the error.
func (s *FabricSource) sweep(ctx context.Context, fab *query.Fabric, noTables bool) (*check.Fabric, error) {
	f, err := query.Sweep(ctx, fab.T, query.SweepOptions{Timeout: s.Timeout, NoTables: noTables, Source: fab.Via})
	if f == nil {
		return nil, &query.EnvError{Msg: fmt.Sprintf("%v (via %s)", err, fab.Via)}
	}
	return f, err
}

// sweepWindowIbsim: see cmdutil's.
const sweepWindowIbsim = 8

// prepare sets the transport up for a sweep.
func (s *FabricSource) prepare() error {
	if s.Timeout <= 0 {
		return &query.UsageError{Msg: fmt.Sprintf("invalid --timeout %v (accepted: a positive duration, e.g. 30s)", s.Timeout)}
	}
	if s.ibsimBase() != "" && s.Globals.Fabric.window == 0 {
		s.Globals.Fabric.window = sweepWindowIbsim
	}
	return nil
}
