package cmdutil

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"testing"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/internal/query"
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
		err := fmt.Errorf("watch: %w", &query.InterruptedError{Cause: context.Cause(ctx)})
		stop()
		if got, want := ExitCode(err), 128+int(sig); got != want {
			t.Errorf("%v (cause %q): exit %d, want %d", sig, context.Cause(ctx), got, want)
		}
	}
	if got := ExitCode(&query.InterruptedError{Cause: context.Canceled}); got != 130 {
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
		{&query.UnknownError{Msg: "mlx5_0/1 entry 3"}, ExitIncomplete},
		{fmt.Errorf("wrapped: %w", &query.UnknownError{}), ExitIncomplete},
		// cobra's flag errors are typed where they arise (FlagError); an error no
		// layer typed is an answer not given, not bad input.
		{FlagError(&cobra.Command{Use: "x"}, errors.New("unknown flag: --x")), ExitUsage},
		{errors.New("write /dev/stdout: broken pipe"), ExitIncomplete},
	}
	for _, tc := range cases {
		if got := ExitCode(tc.err); got != tc.want {
			t.Errorf("ExitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

// TestExecuteSignalled: a command that returns an error after a signal cancelled the
// process context (a MAD read cut short, an attach given up) exits 128+signo and names
// the signal, whatever its error would map to; a command that finished anyway exits 0,
// and an error without a signal keeps its own code.
func TestExecuteSignalled(t *testing.T) {
	for _, tc := range []struct {
		sig    syscall.Signal
		runErr error
		want   int
	}{
		{syscall.SIGHUP, &query.EnvError{Msg: "4 of 4 addresses failed: context canceled"}, 129},
		{syscall.SIGINT, &query.UnknownError{Msg: "lid 3"}, 130},
		{syscall.SIGQUIT, Exit(ExitIncomplete), 131},
		{syscall.SIGTERM, nil, 0},
		{0, &query.EnvError{Msg: "no such device"}, ExitEnv},
	} {
		ctx, cancel := context.WithCancelCause(context.Background())
		if tc.sig != 0 {
			cancel(errors.New(tc.sig.String() + " signal received"))
		}
		var stderr bytes.Buffer
		root := &cobra.Command{Use: "ibkey", SilenceErrors: true, SilenceUsage: true,
			RunE: func(*cobra.Command, []string) error { return tc.runErr }}
		got := Execute(ctx, root, nil, &IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: &stderr})
		cancel(nil)
		if got != tc.want {
			t.Errorf("%v, command error %v: exit %d, want %d (stderr %q)", tc.sig, tc.runErr, got, tc.want, stderr.String())
		}
		if tc.sig != 0 && tc.runErr != nil && !Reported(tc.runErr) && !strings.Contains(stderr.String(), tc.sig.String()+" signal received") {
			t.Errorf("%v: stderr %q does not name the signal", tc.sig, stderr.String())
		}
	}
}
