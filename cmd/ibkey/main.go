// Command ibkey explains InfiniBand partitions: P_Key tables, P_Key and Q_Key values,
// whether two endpoints can talk, and the counters that show dropped packets.
//
// This package only assembles: main makes the process context and the streams, root.go
// the command tree. The commands live in cmd/ibkey/internal/<noun>, their shared
// plumbing in cmd/ibkey/internal/cmdutil.
package main

import (
	"context"
	"os"
	"time"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
)

// version is stamped by the Makefile with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	streams := cmdutil.SystemIOStreams()
	f := cmdutil.NewFactory(streams, os.Getenv, time.Now)
	args := os.Args[1:]
	root := newRootCmdFor(f, args)
	// The one signal handler of the process: SIGINT, SIGTERM, SIGHUP and SIGQUIT cancel
	// ctx, which every command receives through cobra; a command cleans up and returns
	// (the screen restores the terminal, a fabric transport gives its slot back).
	// A command that does not stop within cmdutil.SignalGrace after a signal, or a
	// second signal, ends the process anyway (Watchdog). The process exits right after
	// the command returns, so the signals are not unregistered (signal.Stop would cost
	// a round trip to the runtime's signal thread per signal).
	ctx, stop := cmdutil.SignalContext(context.Background())
	done := make(chan struct{})
	// The watchdog's goroutine starts only once ctx is done (a command that ends
	// without a signal never needs it).
	context.AfterFunc(ctx, func() { cmdutil.Watchdog(ctx, stop, done, os.Stderr, cmdutil.SignalGrace) })
	code := cmdutil.Execute(ctx, root, args, streams)
	close(done)
	os.Exit(code)
}
