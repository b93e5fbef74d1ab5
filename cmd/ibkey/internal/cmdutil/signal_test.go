package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/ibkey/ibkey/internal/tui"
)

// TestExitCodeSignals: a screen ended by a signal exits 128+signo, as a shell reports
// it; never 2 (bad input). The causes are made by a real NotifyContext.
func TestExitCodeSignals(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT} {
		ctx, stop := SignalContext(context.Background())
		if err := syscall.Kill(syscall.Getpid(), sig); err != nil {
			t.Fatal(err)
		}
		<-ctx.Done()
		err := fmt.Errorf("watch: %w", &tui.InterruptedError{Cause: context.Cause(ctx)})
		stop()
		if got, want := ExitCode(err), 128+int(sig); got != want {
			t.Errorf("%v (cause %q): exit %d, want %d", sig, context.Cause(ctx), got, want)
		}
	}
	if got := ExitCode(&tui.InterruptedError{Cause: context.Canceled}); got != 130 {
		t.Errorf("cancelled without a signal: exit %d, want 130", got)
	}
}

func TestExitCodes(t *testing.T) {
	cases := []struct {
		err  error
		want int
	}{
		{nil, ExitOK},
		{Exit(ExitNo), ExitNo},
		{Usagef("bad"), ExitUsage},
		{&IncompleteError{Unchecked: []string{"mlx5_0/1 entry 3"}}, ExitIncomplete},
		{fmt.Errorf("wrapped: %w", &IncompleteError{}), ExitIncomplete},
		{errors.New("unknown flag: --x"), ExitUsage},
	}
	for _, tc := range cases {
		if got := ExitCode(tc.err); got != tc.want {
			t.Errorf("ExitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}
