//go:build ibkey_front

// The front build (make build's bin/ibkey; see delegate.go).

package main

import (
	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
)

// newExporterCmd is the placeholder of `ibkey exporter`, which runs in ibkey-full.
func newExporterCmd(*cmdutil.Factory) *cobra.Command {
	return delegateStub(exporterUse, exporterShort, nil)
}

// frontWatch replaces `watch counters` (verbs through purego) by its placeholder.
func frontWatch(w *cobra.Command) *cobra.Command { return stubCounters(w) }
