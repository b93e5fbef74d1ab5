package cmdutil

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// Signals are the signals that end a command: main turns them into the cancellation of
// the one process context (SignalContext); nothing else in ibkey registers a handler.
// SIGHUP (the terminal closed) and SIGQUIT must clean up like SIGINT and SIGTERM: a
// watch on the fabric gives its ibsim client slot back, the screen restores the terminal.
var Signals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// SignalContext is the process context: cancelled when one of Signals arrives. Only
// main calls it; commands get the context through cobra (Context).
func SignalContext(parent context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(parent, Signals...)
}

// signalOf is the signal that cancelled a SignalContext, from its cause. os/signal
// documents the cause as "an error describing the signal" (its text is the signal's
// name and " signal received"); a context ended some other way counts as SIGINT, the
// user's interrupt.
func signalOf(cause error) syscall.Signal {
	if cause != nil {
		for _, s := range Signals {
			if cause.Error() == s.String()+" signal received" {
				return s.(syscall.Signal)
			}
		}
	}
	return syscall.SIGINT
}
