//go:build linux

package ptytest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/ptytest"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// ibkeyBinary builds cmd/ibkey once per test run.
func ibkeyBinary(tb testing.TB) string {
	tb.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "ptytest-ibkey")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "ibkey")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/ibkey/ibkey/cmd/ibkey").CombinedOutput()
		if err != nil {
			buildErr = err
			binPath = string(out)
		}
	})
	if buildErr != nil {
		tb.Fatalf("building ibkey: %v\n%s", buildErr, binPath)
	}
	return binPath
}

// nonTUI are command lines that must not touch the terminal.
var nonTUI = [][]string{
	{"--version"},
	{"decode", "pkey", "0x8001"},
}

func skipUnlessLinux(tb testing.TB) {
	if runtime.GOOS != "linux" {
		tb.Skip("ptytest needs Linux ptys")
	}
}

// runOnPTY runs ibkey args on a pty that never answers and returns its output.
func runOnPTY(tb testing.TB, bin string, args []string) ([]byte, int) {
	tb.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "TERM=xterm-256color", "COLORTERM=")
	s, err := ptytest.Start(cmd, 80, 24)
	if err != nil {
		tb.Fatal(err)
	}
	defer s.Close()
	// 30 s: a hang detector. A terminal query would stall ~5 s (termenv's OSC
	// timeout); the assertion below is on the query bytes, not on the time.
	if err := s.Wait(30 * time.Second); err != nil {
		tb.Fatal(err)
	}
	return s.Output(), s.ExitCode()
}

// TestNonTUICommandsDoNotQueryTerminal: on a terminal that never answers, commands
// other than the TUI write no terminal query (issue: bubbletea's package init asked
// for the background colour and stalled every command ~5 s).
func TestNonTUICommandsDoNotQueryTerminal(t *testing.T) {
	skipUnlessLinux(t)
	bin := ibkeyBinary(t)
	for _, args := range nonTUI {
		t.Run(strings.Join(args, "_"), func(t *testing.T) {
			out, code := runOnPTY(t, bin, args)
			if code != 0 {
				t.Fatalf("ibkey %s: exit %d: %q", strings.Join(args, " "), code, out)
			}
			if q := ptytest.FindQuery(out); q != "" {
				t.Errorf("ibkey %s wrote the terminal query %q: %q", strings.Join(args, " "), q, out)
			}
			if strings.Contains(string(out), "\x1b") {
				t.Errorf("ibkey %s wrote escape sequences to a terminal: %q", strings.Join(args, " "), out)
			}
		})
	}
}

// BenchmarkStartupPTY: whole-process time of non-TUI commands on a pty that never
// answers (fork, exec, init, run, exit).
func BenchmarkStartupPTY(b *testing.B) {
	skipUnlessLinux(b)
	bin := ibkeyBinary(b)
	for _, args := range nonTUI {
		b.Run(strings.Join(args, "_"), func(b *testing.B) {
			for b.Loop() {
				runOnPTY(b, bin, args)
			}
		})
	}
}
