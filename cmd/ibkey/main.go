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
	"runtime/debug"
	"time"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
)

// stampedVersion is set by the Makefile with -ldflags "-X main.stampedVersion=...".
var stampedVersion string

// version is ibkey's version: the Makefile's stamp, else the module version or VCS
// revision the go command recorded (`go install ./cmd/ibkey@v1.2.3`, or a build in a
// git checkout: runtime/debug.ReadBuildInfo), else "dev".
func version() string {
	if stampedVersion != "" {
		return stampedVersion
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev == "" {
		return "dev"
	}
	return rev + dirty
}

func main() {
	// The one signal handler of the process, installed first so that no signal finds
	// main.main without it (a SIGQUIT would get the runtime's goroutine dump: make
	// faults caught one during the command tree's build). SIGINT, SIGTERM, SIGHUP and
	// SIGQUIT cancel ctx, which every command receives through cobra; a command cleans
	// up and returns (the screen restores the terminal, a fabric transport gives its
	// slot back), and a signal that came before it ran is its exit code all the same
	// (cmdutil.Execute). A command that does not stop within cmdutil.SignalGrace after
	// a signal, or a second signal, ends the process anyway (Watchdog). The process
	// exits right after the command returns, so the signals are not unregistered
	// (signal.Stop would cost a round trip to the runtime's signal thread per signal).
	ctx, stop := cmdutil.SignalContext(context.Background())
	done := make(chan struct{})
	// The watchdog's goroutine starts only once ctx is done (a command that ends
	// without a signal never needs it).
	context.AfterFunc(ctx, func() { cmdutil.Watchdog(ctx, stop, done, os.Stderr, cmdutil.SignalGrace) })
	streams := cmdutil.SystemIOStreams()
	f := cmdutil.NewFactory(streams, os.Getenv, time.Now)
	f.Environ = os.Environ
	args := os.Args[1:]
	root := newRootCmd(f)
	code := cmdutil.Execute(ctx, root, args, streams)
	close(done)
	os.Exit(code)
}
