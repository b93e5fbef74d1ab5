package main

// Shims for the commands not yet moved to cmd/ibkey/internal (partitions and fabric, in
// partitions.go, fabric.go and fabriccmd.go): the old Globals and the old package's
// helpers, each a thin wrapper of cmdutil. Delete this file when those commands have
// their own packages.

import (
	"context"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/internal/query"
)

// IOStreams are cmdutil's.
type IOStreams = cmdutil.IOStreams

// Globals are the old shared flags and dependencies of the commands not yet moved.
// The root's flags are parsed into the factory; addLegacyCmds copies them here before
// a command runs.
type Globals struct {
	IO       *IOStreams
	Getenv   func(string) string
	SysfsDir string
	Demo     bool
	Output   string
	NoColor  bool
	Now      func() time.Time
	// Fabric selects the MAD transport (fabric.go). Its flags are on the commands that
	// send MADs (addLegacyCmds), no longer on the root.
	Fabric FabricFlags

	// ctx is main's signal context, set before a command runs.
	ctx context.Context
	// f is the factory the root's flags are parsed into (nil in tests that build a
	// Globals by hand): Host and Format read it, also during completion, when no
	// PersistentPreRunE runs.
	f *cmdutil.Factory
}

// context is main's signal context (cobra's), or Background in tests that build a
// Globals by hand.
func (g *Globals) context() context.Context {
	if g.ctx == nil {
		return context.Background()
	}
	return g.ctx
}

// addLegacyCmds adds `partitions` and `fabric`, with the old Globals filled from f.
func addLegacyCmds(root *cobra.Command, f *cmdutil.Factory) {
	g := &Globals{IO: f.IOStreams, Getenv: f.Getenv, Now: f.Now, f: f}
	fabric := newFabricCmd(g)
	g.Fabric.register(fabric.PersistentFlags())
	root.AddCommand(newPartitionsCmd(g), fabric)
	pre := root.PersistentPreRunE
	root.PersistentPreRunE = func(c *cobra.Command, args []string) error {
		g.SysfsDir, g.Demo, g.Output, g.NoColor = f.SysfsDir, f.Demo, f.Output, f.NoColor
		g.ctx = cmdutil.Context(c)
		return pre(c, args)
	}
}

func (g *Globals) factory() *cmdutil.Factory {
	if g.f != nil {
		return g.f
	}
	f := cmdutil.NewFactory(g.IO, g.Getenv, g.Now)
	f.SysfsDir, f.Demo, f.Output, f.NoColor = g.SysfsDir, g.Demo, g.Output, g.NoColor
	return f
}

// Host is cmdutil.Factory.Host.
func (g *Globals) Host() *query.Host { return g.factory().Host() }

// Format is cmdutil.Factory.Format.
func (g *Globals) Format() (format, error) { return g.factory().Format() }

func (g *Globals) notices() *notices { return &notices{g.factory().Notices()} }

type format = cmdutil.Format

const (
	formatTable = cmdutil.FormatTable
	formatPlain = cmdutil.FormatPlain
	formatJSON  = cmdutil.FormatJSON
)

// notices is cmdutil.Notices with the old method names.
type notices struct{ n *cmdutil.Notices }

func (n *notices) warn(msg string)   { n.n.Warn(msg) }
func (n *notices) note(msg string)   { n.n.Note(msg) }
func (n *notices) label(host string) { n.n.Label(host) }

// grid is cmdutil.Grid with the old field and method names.
type grid struct {
	header []string
	rows   [][]string
}

func (g *grid) add(cells ...string) { g.rows = append(g.rows, cells) }

func (g *grid) render(w io.Writer, f format) error {
	return (&cmdutil.Grid{Header: g.header, Rows: g.rows}).Render(w, f)
}

func writeJSON(w io.Writer, v any) error { return cmdutil.WriteJSON(w, v) }

func usageArgs(v cobra.PositionalArgs) cobra.PositionalArgs { return cmdutil.UsageArgs(v) }

// silentError carries an exit code for an outcome already reported; Unwrap makes it
// the cmdutil.SilentError that ExitCode maps.
type silentError struct{ code int }

func (e *silentError) Error() string { return (&cmdutil.SilentError{Code: e.code}).Error() }
func (e *silentError) Unwrap() error { return &cmdutil.SilentError{Code: e.code} }

const (
	exitOK    = cmdutil.ExitOK
	exitNo    = cmdutil.ExitNo
	exitUsage = cmdutil.ExitUsage
	exitEnv   = cmdutil.ExitEnv
)

func exitCode(err error) int { return cmdutil.ExitCode(err) }
