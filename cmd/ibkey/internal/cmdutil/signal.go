package cmdutil

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// Signals are the signals that end a command: main turns them into the cancellation of
// the one process context (SignalContext); nothing else in ibkey registers a handler.
// SIGHUP (the terminal closed) and SIGQUIT must clean up like SIGINT and SIGTERM: a
// watch on the fabric gives its ibsim client slot back, the screen restores the terminal.
var Signals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// SignalContext is the process context: cancelled when one of Signals arrives. Only
// main calls it; commands get the context through cobra (Context). The cause says which
// signal, in os/signal's words ("terminated signal received"); stop cancels ctx and
// restores the signals' default action.
func SignalContext(parent context.Context) (ctx context.Context, stop context.CancelFunc) {
	return signal.NotifyContext(parent, Signals...)
}

// signalOf is the signal that cancelled a SignalContext, from its cause; ok is false
// for a context ended some other way (counted as SIGINT, the user's interrupt). os/signal
// documents the cause as "an error describing the signal" (its text is the signal's
// name and " signal received").
func signalOf(cause error) (sig syscall.Signal, ok bool) {
	if cause != nil {
		for _, s := range Signals {
			if cause.Error() == s.String()+" signal received" {
				return s.(syscall.Signal), true
			}
		}
	}
	return syscall.SIGINT, false
}

// SignalGrace is how long a command has, after a signal, to clean up and return before
// the process exits without it (Watchdog).
const SignalGrace = 3 * time.Second

// Watchdog makes sure a signal ends the process even when the running command does
// not watch ctx (a read that blocks in the kernel, a FIFO that never opens): once ctx
// is cancelled by a signal, stop restores the signals' default action, so a second
// signal ends the process at once, and after grace the process exits with 128+signo,
// saying so on errOut. main starts it; done is closed when the command returned.
func Watchdog(ctx context.Context, stop context.CancelFunc, done <-chan struct{}, errOut io.Writer, grace time.Duration) {
	select {
	case <-done:
		return
	case <-ctx.Done():
	}
	stop()
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		cause := context.Cause(ctx)
		fmt.Fprintf(errOut, "ibkey: %v: the command did not stop within %v; exiting without its cleanup\n", cause, grace)
		os.Exit(SignalExitCode(cause))
	}
}

// SignalExitCode is the exit code for a command ended by the signal that cancelled a
// SignalContext (cause is context.Cause of it): 128+signo, as a shell reports it.
func SignalExitCode(cause error) int {
	sig, _ := signalOf(cause)
	return ExitSignal + int(sig)
}
