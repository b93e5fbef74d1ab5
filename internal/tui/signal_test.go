//go:build linux

package tui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/procfs"

	"github.com/ibkey/ibkey/internal/ptytest"
	"github.com/ibkey/ibkey/internal/query"
)

// childEnv makes the test binary run childMain instead of the tests (the re-exec
// trick): the child is a small program doing what ibkey's main does for the TUI.
const childEnv = "IBKEY_TUI_TEST_CHILD"

// exitInterrupted is the child's exit code when Run returns *InterruptedError.
const exitInterrupted = 130

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(childMain(mode))
	}
	os.Exit(m.Run())
}

// childMain owns the signals in one place, like ibkey's main: a NotifyContext for
// INT, TERM, HUP and QUIT, passed to Run; the screen samples a fake. mode "stuck":
// the third sample never returns (a read that hangs, as a MAD to a dead node can).
func childMain(mode string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	defer stop()
	f := &fakeSampler{}
	var s Sampler = f
	if mode == "stuck" {
		s = &stuckSampler{fakeSampler: f, after: 2}
	}
	err := Run(ctx, Options{Sampler: s, Interval: 100 * time.Millisecond, Color: true}, os.Stdin, os.Stdout)
	var intr *query.InterruptedError
	switch {
	case errors.As(err, &intr):
		fmt.Fprintf(os.Stderr, "child: %v\n", err)
		return exitInterrupted
	case err != nil:
		fmt.Fprintf(os.Stderr, "child: %v\n", err)
		return 1
	}
	return 0
}

// stuckSampler blocks for good after `after` samples.
type stuckSampler struct {
	*fakeSampler
	after int
	n     int
	mu    sync.Mutex
}

func (s *stuckSampler) Take(all bool) *query.Sample {
	s.mu.Lock()
	s.n++
	n := s.n
	s.mu.Unlock()
	if n > s.after {
		select {}
	}
	return s.fakeSampler.Take(all)
}

// TestSignalsEndTUI runs the TUI in a fresh process on a pty for each of 50 SIGTERM,
// 50 SIGINT and 50 SIGHUP, sent at random moments (while the terminal is being set
// up, or 0-250 ms after the screen is up, half the time with a sample read that
// never returns), and checks every time that the process exits by itself with the
// interrupted code, and leaves the terminal cooked (stty: icanon, echo), the cursor
// shown, the alternate screen off and the keyboard modes reset, having asked the
// terminal nothing it waits for (ptytest.Queries).
func TestSignalsEndTUI(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("ptytest needs Linux ptys")
	}
	n := 50
	if testing.Short() {
		n = 3
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 12))
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
		var ok, early, stuck int
		for i := range n {
			mode := "normal"
			if rng.IntN(2) == 0 {
				mode = "stuck"
				stuck++
			}
			// A third are sent as soon as the child writes anything (raw mode is on,
			// the screen is being set up); the rest once the screen is up, after a
			// random pause.
			atStart := rng.IntN(3) == 0
			if atStart {
				early++
			}
			pause := time.Duration(rng.IntN(250)) * time.Millisecond
			if err := signalOnce(exe, mode, sig, atStart, pause); err != nil {
				t.Errorf("%s #%d (%s, at start %v, pause %s): %v", sig, i+1, mode, atStart, pause, err)
				continue
			}
			ok++
		}
		t.Logf("%s: %d/%d runs exited %d with the terminal restored (%d sent during setup, %d with a stuck sample)",
			sig, ok, n, exitInterrupted, early, stuck)
	}
}

// signalOnce runs one child and checks how it ends.
func signalOnce(exe, mode string, sig syscall.Signal, atStart bool, pause time.Duration) error {
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+mode, "TERM=xterm-256color")
	s, err := ptytest.Start(cmd, 80, 24)
	if err != nil {
		return err
	}
	defer s.Close()
	// The limits are hang detectors on a loaded machine, not speed assertions.
	const limit = 20 * time.Second
	want := "ibkey watch counters" // a frame is up
	if atStart {
		want = ptytest.CursorHide // bubbletea's first write, right after raw mode
	}
	if err := s.WaitFor(0, want, limit); err != nil {
		s.Signal(syscall.SIGKILL)
		s.Wait(limit)
		return err
	}
	if !atStart {
		time.Sleep(pause)
	}
	if err := s.Signal(sig); err != nil {
		return err
	}
	if err := s.Wait(limit); err != nil {
		return err
	}
	out := s.Output()
	var problems []string
	if ps := s.Cmd.ProcessState; !ps.Exited() {
		problems = append(problems, "killed by "+ps.String()+" (the signal was not handled)")
	} else if ps.ExitCode() != exitInterrupted {
		problems = append(problems, fmt.Sprintf("exit code %d, want %d", ps.ExitCode(), exitInterrupted))
	}
	if !strings.Contains(string(out), sig.String()+" signal received") {
		problems = append(problems, fmt.Sprintf("the error does not name %q", sig.String()))
	}
	stty, err := s.Stty()
	if err != nil {
		return err
	}
	if cooked, off := ptytest.Cooked(stty); !cooked {
		problems = append(problems, "terminal left "+off+": "+strings.Join(strings.Fields(stty), " "))
	}
	if left := ptytest.LeftModes(out); left != nil {
		problems = append(problems, "left on: "+strings.Join(left, ", "))
	}
	if q := ptytest.FindQuery(out); q != "" {
		problems = append(problems, fmt.Sprintf("asked the terminal %q", q))
	}
	if problems != nil {
		return fmt.Errorf("%s; output tail %q", strings.Join(problems, "; "), tailOf(out))
	}
	return nil
}

func tailOf(b []byte) []byte {
	if len(b) > 300 {
		return b[len(b)-300:]
	}
	return b
}

// TestSuspendResume: under a job-control shell (bash, as a user runs the screen), the
// screen stops and comes back with its keys working. A SIGTSTP from outside (kill
// -TSTP, a supervisor) and ctrl+z (a key: the terminal is raw) each stop the process
// with the terminal given back (the alternate screen left, the cursor shown, the
// keyboard modes reset: the shell's prompt works); fg takes it again (a repaint) and
// keys act. Twice in a row, then q quits with exit 0 and the terminal cooked. Before
// this, an external SIGTSTP stopped the process with the terminal raw and in the
// alternate screen, and after fg the screen ignored keys.
func TestSuspendResume(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("ptytest needs Linux ptys")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("needs bash, a job-control shell")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const limit = 20 * time.Second // hang detectors
	for _, how := range []string{"SIGTSTP", "ctrl+z"} {
		t.Run(how, func(t *testing.T) {
			// --noediting: bash reads its lines in canonical mode, so the terminal's
			// modes at the prompt are the ones the screen left.
			sh := exec.Command(bash, "--norc", "--noprofile", "--noediting", "-i")
			sh.Env = append(os.Environ(), "PS1=test-shell$ ", "HISTFILE=/dev/null", "TERM=xterm-256color")
			s, err := ptytest.Start(sh, 80, 24)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			defer s.Signal(syscall.SIGKILL)
			if err := s.WaitFor(0, "test-shell$ ", limit); err != nil {
				t.Fatal(err)
			}
			if err := s.Write(fmt.Sprintf("%s=normal %s -test.run='^$'\n", childEnv, exe)); err != nil {
				t.Fatal(err)
			}
			if err := s.WaitFor(0, "ibkey watch counters", limit); err != nil {
				t.Fatal(err)
			}
			// The shell's children, from /proc/PID/stat (proc(5)).
			procs, err := procfs.AllProcs()
			var kids []int
			for _, p := range procs {
				if st, err := p.Stat(); err == nil && st.PPID == sh.Process.Pid {
					kids = append(kids, p.PID)
				}
			}
			if err != nil || len(kids) != 1 {
				t.Fatalf("the shell's children: %v %v", kids, err)
			}
			child := kids[0]
			// Each round a key whose effect writes new text (bubbletea writes only the
			// cells that change): p pauses, ? opens the help page.
			for round, k := range []struct{ key, shows string }{{"p", "PAUSED"}, {"?", "COLUMNS"}} {
				mark := s.Len()
				if how == "SIGTSTP" {
					err = syscall.Kill(child, syscall.SIGTSTP)
				} else {
					err = s.Write("\x1a")
				}
				if err != nil {
					t.Fatal(err)
				}
				if err := waitStopped(child, limit); err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
				if err := s.WaitFor(mark, "test-shell$ ", limit); err != nil {
					t.Fatalf("round %d: no prompt after the stop: %v", round, err)
				}
				if err := s.Drain(limit); err != nil {
					t.Fatal(err)
				}
				if left := ptytest.LeftModes(s.Output()); left != nil {
					t.Errorf("round %d: stopped with %s still on: %q", round, strings.Join(left, ", "), tailOf(s.Output()[mark:]))
				}
				if stty, err := s.Stty(); err != nil {
					t.Fatal(err)
				} else if cooked, off := ptytest.Cooked(stty); !cooked {
					t.Errorf("round %d: the shell got the terminal %s", round, off)
				}
				mark = s.Len()
				if err := s.Write("fg\n"); err != nil {
					t.Fatal(err)
				}
				if err := s.WaitFor(mark, ptytest.AltScreenOn, limit); err != nil {
					t.Fatalf("round %d: the screen did not come back: %v", round, err)
				}
				if err := s.WaitFor(mark, "ibkey watch counters", limit); err != nil {
					t.Fatalf("round %d: no repaint after fg: %v", round, err)
				}
				mark = s.Len()
				if err := s.Write(k.key); err != nil {
					t.Fatal(err)
				}
				if err := s.WaitFor(mark, k.shows, limit); err != nil {
					t.Fatalf("round %d: %q after fg did nothing: %v", round, k.key, err)
				}
			}
			mark := s.Len()
			if err := s.Write("q"); err != nil {
				t.Fatal(err)
			}
			if err := s.WaitFor(mark, "test-shell$ ", limit); err != nil {
				t.Fatal(err)
			}
			// The shell reports the screen's exit status, then exits.
			if err := s.Write("echo status=$?; exit\n"); err != nil {
				t.Fatal(err)
			}
			if err := s.Wait(limit); err != nil {
				t.Fatal(err)
			}
			out := s.Output()
			if !strings.Contains(string(out[mark:]), "status=0") {
				t.Errorf("q: the screen did not exit 0: %q", tailOf(out))
			}
			stty, err := s.Stty()
			if err != nil {
				t.Fatal(err)
			}
			if cooked, off := ptytest.Cooked(stty); !cooked {
				t.Errorf("terminal left %s", off)
			}
			if left := ptytest.LeftModes(out); left != nil {
				t.Errorf("left on: %s", strings.Join(left, ", "))
			}
			if q := ptytest.FindQuery(out); q != "" {
				t.Errorf("asked the terminal %q", q)
			}
		})
	}
}

// TestSuspendOrphaned: with no job-control shell to continue it (the screen is the
// session's own process, as in a tmux pane or `ssh -t host ibkey ...`), a SIGTSTP and
// ctrl+z are ignored, as the kernel ignores the terminal's stop signals for an
// orphaned process group: the screen keeps running and its keys work, where stopping
// would freeze the terminal for good.
func TestSuspendOrphaned(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("ptytest needs Linux ptys")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const limit = 20 * time.Second
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=normal", "TERM=xterm-256color")
	s, err := ptytest.Start(cmd, 80, 24)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	defer s.Signal(syscall.SIGKILL)
	if err := s.WaitFor(0, "ibkey watch counters", limit); err != nil {
		t.Fatal(err)
	}
	for _, k := range []struct{ stop, key, shows string }{{"SIGTSTP", "p", "PAUSED"}, {"ctrl+z", "?", "COLUMNS"}} {
		mark := s.Len()
		if k.stop == "SIGTSTP" {
			err = s.Signal(syscall.SIGTSTP)
		} else {
			err = s.Write("\x1a")
		}
		if err != nil {
			t.Fatal(err)
		}
		// The key after the stop request: it acts only if the screen kept running.
		if err := s.Write(k.key); err != nil {
			t.Fatal(err)
		}
		if err := s.WaitFor(mark, k.shows, limit); err != nil {
			t.Fatalf("%s: the screen stopped: %v", k.stop, err)
		}
		if bytes.Contains(s.Output()[mark:], []byte(ptytest.AltScreenOff)) {
			t.Errorf("%s: the screen gave the terminal up", k.stop)
		}
	}
	if err := s.Write("q"); err != nil {
		t.Fatal(err)
	}
	if err := s.Wait(limit); err != nil {
		t.Fatal(err)
	}
	if code := s.ExitCode(); code != 0 {
		t.Errorf("q: exit %d", code)
	}
}

// waitStopped waits until process pid is stopped (job control: state T in
// /proc/PID/stat, see proc(5)), at most limit.
func waitStopped(pid int, limit time.Duration) error {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return err
	}
	for deadline := time.Now().Add(limit); ; time.Sleep(10 * time.Millisecond) {
		st, err := p.Stat()
		if err != nil {
			return err
		}
		if st.State == "T" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("process %d did not stop within %s (state %s)", pid, limit, st.State)
		}
	}
}
