//go:build linux

package main

import (
	"bufio"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestWatchSignalExit: a watch stopped by a signal exits 128+signo, as the exit-code
// table says; watch pkeys returned nil from its loop and exited 0 while watch counters
// exited 130 only because it had also found a counter not read.
func TestWatchSignalExit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "ibkey")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		cmd := exec.Command(bin, "--demo", "watch", "pkeys", "-o", "plain", "--interval", "100ms")
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		r := bufio.NewReader(stderr)
		var seen strings.Builder
		for !strings.Contains(seen.String(), "note: watching") {
			l, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("%v before the watch started: %q", err, seen.String())
			}
			seen.WriteString(l)
		}
		_ = cmd.Process.Signal(sig)
		rest, _ := r.ReadString(0)
		err = cmd.Wait()
		code := cmd.ProcessState.ExitCode()
		if code != 128+int(sig) || !strings.Contains(rest, "ibkey: stopped by a signal (") {
			t.Errorf("%v: exit %d (%v), want %d; stderr after the start: %q", sig, code, err, 128+int(sig), rest)
		}
	}
}
