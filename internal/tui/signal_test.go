//go:build linux

package tui

import (
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
	var intr *InterruptedError
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
// shown and the alternate screen off, having asked the terminal nothing.
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
	if err := s.WaitFor(want, limit); err != nil {
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
	if ptytest.LeftAltScreen(out) {
		problems = append(problems, "left in the alternate screen")
	}
	if ptytest.LeftCursorHidden(out) {
		problems = append(problems, "cursor left hidden")
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
