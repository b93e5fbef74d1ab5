//go:build linux

package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/internal/ptytest"
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
	for _, c := range []struct {
		sig          syscall.Signal
		args         []string
		started, end string
	}{
		{syscall.SIGINT, []string{"pkeys"}, "note: watching", "ibkey: stopped by a signal ("},
		{syscall.SIGTERM, []string{"pkeys"}, "note: watching", "ibkey: stopped by a signal ("},
		// What the watch did not read is still named when a signal stops it.
		{syscall.SIGINT, []string{"counters"}, "note: qkey_violations", "warning: pkey_violations, qkey_violations not read on 4 ports"},
	} {
		sig := c.sig
		cmd := exec.Command(bin, append(append([]string{"--demo", "watch"}, c.args...), "-o", "plain", "--interval", "100ms")...)
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		r := bufio.NewReader(stderr)
		var seen strings.Builder
		for !strings.Contains(seen.String(), c.started) {
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
		if code != 128+int(sig) || !strings.Contains(rest, c.end) {
			t.Errorf("%v %v: exit %d (%v), want %d and %q; stderr after the start: %q", c.args, sig, code, err, 128+int(sig), c.end, rest)
		}
	}
}

// TestExporterSignalExit: what the exit-code table says of ibkey exporter, a daemon:
// once it serves (HTTP, or the textfile written), any of the signals that end a
// command stops it cleanly with exit 0 (as Prometheus; systemd counts an exit status
// of 143 a failure), where every other command exits 128+N.
func TestExporterSignalExit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "ibkey")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	c, _, err := newRootCmd(cmdutil.NewFactory(&cmdutil.IOStreams{}, func(string) string { return "" }, nil)).Find([]string{"exporter"})
	if err != nil {
		t.Fatal(err)
	}
	if rows, _ := cmdutil.CommandExits(c); !strings.Contains(cmdutil.ExitCodesText(rows), "stopped by a signal") ||
		!strings.Contains(cmdutil.ExitCodesText(cmdutil.ExitCodes), "(ibkey exporter, a daemon) stops cleanly and exits 0") {
		t.Fatalf("the exporter's exit codes, or the table's pointer to them, no longer name its exception: change this test with them")
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT} {
		for _, mode := range [][]string{{"--listen", "127.0.0.1:0"}, {"--textfile", dir, "--interval", "100ms"}} {
			cmd := exec.Command(bin, append([]string{"--demo", "exporter"}, mode...)...)
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			r := bufio.NewReader(stderr)
			if mode[0] == "--listen" {
				for l := ""; !strings.Contains(l, "Listening on"); {
					if l, err = r.ReadString('\n'); err != nil {
						t.Fatalf("%v before the exporter listened", err)
					}
				}
			} else {
				for start := time.Now(); ; time.Sleep(10 * time.Millisecond) {
					if _, err := os.Stat(filepath.Join(dir, "ibkey.prom")); err == nil {
						break
					}
					if time.Since(start) > time.Minute {
						t.Fatal("no textfile written")
					}
				}
			}
			_ = cmd.Process.Signal(sig)
			rest, _ := r.ReadString(0)
			_ = cmd.Wait()
			if code := cmd.ProcessState.ExitCode(); code != 0 {
				t.Errorf("exporter %v %v: exit %d, want 0; stderr: %q", mode[0], sig, code, rest)
			}
			_ = os.Remove(filepath.Join(dir, "ibkey.prom"))
		}
	}
}

// TestWatchScreenQuitExit: quitting the live screen (q, or Ctrl-C, a key there) ends
// the watch as the lines end it: the counters it showed n/a but did not read are named
// once the terminal is back, and the exit is 4, not 0 (rule 1: exit 0 says every
// counter asked for was read). The terminal is left cooked.
func TestWatchScreenQuitExit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "ibkey")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, key := range []string{"q", "\x03"} {
		cmd := exec.Command(bin, "--demo", "watch", "counters", "--interval", "100ms")
		cmd.Env = []string{"TERM=xterm-256color", "NO_COLOR=1", "PATH=/usr/bin:/bin"}
		s, err := ptytest.Start(cmd, 80, 24)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.WaitFor(0, "mlx5_2/1", time.Minute); err != nil {
			t.Fatal(err)
		}
		mark := s.Len()
		if err := s.Write(key); err != nil {
			t.Fatal(err)
		}
		if err := s.Wait(time.Minute); err != nil {
			t.Fatal(err)
		}
		after := strings.ReplaceAll(string(s.Output()[mark:]), "\r\n", "\n")
		if code := s.ExitCode(); code != 4 || !strings.Contains(after, "qkey_violations not read on 4 ports") {
			t.Errorf("key %q: exit %d, want 4 and the counters not read named after the screen; after the key:\n%s", key, code, after)
		}
		if stty, err := s.Stty(); err != nil {
			t.Error(err)
		} else if cooked, off := ptytest.Cooked(stty); !cooked {
			t.Errorf("key %q: the terminal was left with %s", key, off)
		}
		s.Close()
	}
}

// TestWatchDumbTerminal: on a terminal that cannot move its cursor (TERM=dumb: Emacs'
// shell, serial consoles) watch counters prints its samples as tables, one after the
// other, instead of drawing a screen; a signal ends it with 128+signo.
func TestWatchDumbTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "ibkey")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "--demo", "watch", "counters", "--interval", "100ms")
	cmd.Env = []string{"TERM=dumb", "PATH=/usr/bin:/bin"}
	s, err := ptytest.Start(cmd, 80, 24)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Two samples: the second table's header follows the first's rows.
	if err := s.WaitFor(0, "port_xmit_constraint_errors", time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := s.WaitFor(strings.LastIndex(string(s.Output()), "port_xmit_constraint_errors")+1, "│ PORT ", time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := s.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := s.Wait(time.Minute); err != nil {
		t.Fatal(err)
	}
	out := string(s.Output())
	if strings.Contains(out, "\x1b[?1049h") || strings.Contains(out, "q quit") {
		t.Errorf("TERM=dumb: a screen was drawn:\n%q", out)
	}
	if code := s.ExitCode(); code != 130 {
		t.Errorf("TERM=dumb: exit %d after SIGINT, want 130", code)
	}
}
