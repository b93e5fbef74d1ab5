//go:build !ibkey_front

// The complete build (go build ./cmd/ibkey, make build's bin/ibkey-full; see delegate.go).

package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/exporter"
	"github.com/ibkey/ibkey/internal/query"
)

// newExporterCmd is `ibkey exporter` with its dependencies from the factory and its MAD
// flags.
func newExporterCmd(f *cmdutil.Factory) *cobra.Command {
	var m *cmdutil.MADFlags
	c := exporter.NewCmdExporter(exporter.Deps{
		In: f.IOStreams.In, Out: f.IOStreams.Out, ErrOut: f.IOStreams.ErrOut,
		Host: f.Host, Getenv: f.Getenv,
		OpenFabric: func(ctx context.Context) (*query.Fabric, error) { return m.Open(ctx) },
	}, nil)
	m = cmdutil.AddMADFlags(c, f)
	return c
}

// frontWatch leaves `ibkey watch` as it is: this binary runs `watch counters` itself.
func frontWatch(w *cobra.Command) *cobra.Command { return w }
