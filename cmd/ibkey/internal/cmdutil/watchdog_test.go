package cmdutil

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// watchdogChild is set in the environment of the child process TestWatchdog starts:
// the child is a command that never looks at its context, with the given grace.
const watchdogChild = "IBKEY_CMDUTIL_WATCHDOG_CHILD"

func TestMain(m *testing.M) {
	if g := os.Getenv(watchdogChild); g != "" {
		grace, err := time.ParseDuration(g)
		if err != nil {
			os.Exit(99)
		}
		ctx, stop := SignalContext(context.Background())
		go Watchdog(ctx, stop, make(chan struct{}), os.Stderr, grace)
		os.Stdout.WriteString("ready\n")
		select {} // a command stuck in a read that ignores ctx
	}
	os.Exit(m.Run())
}

// startChild runs the stuck command and waits until its handler is installed.
func startChild(t *testing.T, grace string) (*exec.Cmd, *strings.Builder) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), watchdogChild+"="+grace)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if l, err := bufio.NewReader(out).ReadString('\n'); err != nil || l != "ready\n" {
		t.Fatalf("child: %q %v", l, err)
	}
	return cmd, &stderr
}

// TestWatchdog: a command that ignores the context is still ended by a signal: after
// the grace with 128+signo and a line saying so, or at once by a second signal.
func TestWatchdog(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT} {
		cmd, stderr := startChild(t, "200ms")
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 128+int(sig) {
			t.Errorf("%v: %v, want exit status %d", sig, err, 128+int(sig))
		}
		if !strings.Contains(stderr.String(), "ibkey: "+sig.String()+" signal received: the command did not stop within 200ms") {
			t.Errorf("%v: stderr %q", sig, stderr.String())
		}
	}
	// A second signal does not wait for the grace: SIGTERM again until the process
	// is gone (the first only cancels the context).
	cmd, _ := startChild(t, "1h")
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(30 * time.Second)
	for {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-done:
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
				t.Errorf("second SIGTERM: %v, want killed by SIGTERM", err)
			}
			return
		case <-deadline:
			_ = cmd.Process.Kill()
			t.Fatal("repeated SIGTERMs did not end the process within 30s")
		case <-tick.C:
		}
	}
}
