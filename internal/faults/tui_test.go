//go:build linux

package faults

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ibkey/ibkey/internal/lab"
	"github.com/ibkey/ibkey/internal/ptytest"
)

// screenUp is the title of the screen's first frame.
const screenUp = "ibkey watch counters"

// tuiClass is one way of running the watch screen.
type tuiClass struct {
	name string
	// lab: the class reads the simulated fabric (a slot must not leak).
	lab  bool
	args func(l *lab.Lab) []string
	// quit is the exit code q gives: 4 when a counter the screen showed was not read
	// (the demo host's violation counters: not in sysfs), as the lines exit.
	quit int
}

var tuiClasses = []tuiClass{
	{name: "watch screen, demo host", args: func(*lab.Lab) []string {
		return []string{"--demo", "watch", "counters", "--interval", "100ms"}
	}, quit: 4},
	{name: "watch screen, fabric (ibsim)", lab: true, args: func(l *lab.Lab) []string {
		return append([]string{"watch", "counters", "--lid", "1-4", "--interval", "100ms"}, madFlags(l)...)
	}},
}

// tuiRound is how one screen run on a pty ended.
type tuiRound struct {
	hung     bool
	code     int    // exit code; -1 when a signal killed it
	killedBy string // the signal that killed it (its default action)
	out      []byte // everything written to the terminal
	stty     string // `stty -a` of the terminal after the exit
	took     time.Duration
}

// startScreen runs ibkey args on a new 100x30 pty that never answers a query.
func startScreen(t *testing.T, args []string) *ptytest.Session {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "TERM=xterm-256color", "LANG=C.UTF-8"}
	s, err := ptytest.Start(cmd, 100, 30)
	if err != nil {
		t.Fatalf("start %v on a pty: %v", args, err)
	}
	return s
}

// endScreen waits for the process (a hang is killed after hangLimit) and reads the
// terminal's modes.
func endScreen(t *testing.T, s *ptytest.Session, start time.Time) tuiRound {
	t.Helper()
	var r tuiRound
	if err := s.Wait(hangLimit); err != nil {
		r.hung = true
	}
	r.took = time.Since(start)
	r.out = s.Output()
	r.code = s.ExitCode()
	if ws, ok := s.Cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		r.killedBy = unix.SignalName(ws.Signal())
	}
	stty, err := s.Stty()
	if err != nil {
		t.Fatalf("stty -a on the pty: %v", err)
	}
	r.stty = stty
	return r
}

// restored lists what the process left wrong on the terminal: modes a shell needs
// (stty: icanon, echo, isig, icrnl, opost), the alternate screen, a hidden cursor, or a
// query a real terminal would answer.
func (r tuiRound) restored() []string {
	var bad []string
	if ok, off := ptytest.Cooked(r.stty); !ok {
		bad = append(bad, "terminal left "+off)
	}
	left := ptytest.LeftModes(r.out)
	if slices.Contains(left, "the alternate screen") {
		bad = append(bad, "alternate screen left on")
	}
	if slices.Contains(left, "the cursor hidden") {
		bad = append(bad, "cursor left hidden")
	}
	if q := ptytest.FindQuery(r.out); q != "" {
		bad = append(bad, fmt.Sprintf("asked the terminal %q", q))
	}
	return bad
}

func (r tuiRound) outcome() string {
	s := string(r.out)
	switch {
	case r.hung:
		return "HUNG (killed after " + hangLimit.String() + ")"
	case crashed(s) != "":
		return "CRASHED (" + strings.TrimSpace(crashed(s)) + ")"
	case startedQuit(s):
		return "SIGQUIT before main (runtime default: goroutine dump; nothing acquired yet)"
	case r.killedBy != "":
		return "killed by " + r.killedBy + " (its default action: no cleanup)"
	}
	return fmt.Sprintf("exit %d", r.code)
}

// calibrateScreen returns how long the screen takes to come up, undisturbed; it
// fails the test when it does not, or when q does not end it cleanly.
func calibrateScreen(t *testing.T, cl tuiClass, l *lab.Lab) time.Duration {
	t.Helper()
	start := time.Now()
	s := startScreen(t, cl.args(l))
	defer s.Close()
	err := s.WaitFor(0, screenUp, hangLimit)
	up := time.Since(start)
	if err == nil {
		err = s.Write("q")
	}
	r := endScreen(t, s, start)
	if err != nil {
		t.Fatalf("%s undisturbed: %v", cl.name, err)
	}
	if r.code != cl.quit || r.restored() != nil {
		t.Fatalf("%s: q ended it with %s, terminal: %v; output tail %q", cl.name, r.outcome(), r.restored(), tailBytes(r.out))
	}
	return up
}

// TestFaultsTUI runs the watch screen on a pty (the demo host, and the simulated
// fabric) and sends INT, TERM, HUP or QUIT at a random moment: while the process
// starts, while it sets the terminal up, or while the screen runs. Every run must end
// within the hang limit, with 128+signo (the process handled the signal), without a
// crash, holding no ibsim slot, and leave the terminal as it found it: stty modes back
// (icanon, echo, isig, icrnl, opost), the alternate screen left, the cursor shown.
func TestFaultsTUI(t *testing.T) {
	var c tally
	defer c.log(t, "watch screen on a pty")
	rng := newRand(t)
	var topo string
	for _, cl := range tuiClasses {
		t.Run(cl.name, func(t *testing.T) {
			var l *lab.Lab
			if cl.lab {
				if topo == "" {
					topo = fatTree(t)
				}
				l = startLab(t, topo, nil)
			}
			// A third of the moments fall between exec and the first frame (the
			// runtime starting, the command reading its ports, the terminal being set
			// up), the rest in the 400ms after it.
			// The quickest of three undisturbed runs: the first of a binary is slower,
			// and a longer calibration would put most of the first third after the frame.
			up := calibrateScreen(t, cl, l)
			for range 2 {
				up = min(up, calibrateScreen(t, cl, l))
			}
			var fails failures
			for range *rounds {
				sig := signals[rng.IntN(len(signals))]
				start := time.Now()
				s := startScreen(t, cl.args(l))
				if rng.IntN(3) == 0 {
					time.Sleep(at(rng, up))
				} else {
					time.Sleep(up + at(rng, 400*time.Millisecond))
				}
				drawn := bytes.Contains(s.Output(), []byte(screenUp))
				_ = s.Signal(sig) // exactly the process this test started
				r := endScreen(t, s, start)
				s.Close()
				when := "before the screen was up"
				if drawn {
					when = "with the screen up"
				}
				what := unix.SignalName(sig) + " " + when + ": " + r.outcome()
				example := fmt.Sprintf("%v, %s after %v; output tail %q", cl.args(l), unix.SignalName(sig), r.took.Round(time.Millisecond), tailBytes(r.out))
				if bad := r.restored(); bad != nil {
					what += ", " + strings.Join(bad, ", ")
					fails.add(strings.Join(bad, ", ")+" after "+unix.SignalName(sig), example+"; stty: "+strings.Join(strings.Fields(r.stty), " "))
				}
				c.add(cl.name, what)
				switch {
				case r.hung:
					fails.add("hung after "+unix.SignalName(sig), example)
				case crashed(string(r.out)) != "":
					fails.add("crashed after "+unix.SignalName(sig), example)
				case startedQuit(string(r.out)), r.killedBy != "":
					// A signal before ibkey's handler exists (the dynamic loader, the
					// runtime): the default action, before anything was acquired; the
					// terminal checks above still apply.
				case r.code != 128+int(sig):
					fails.add(fmt.Sprintf("exit %d after %s, want %d", r.code, unix.SignalName(sig), 128+int(sig)), example)
				}
				if l == nil {
					continue
				}
				if cs := leaked(t, l); len(cs) > 0 {
					c.add(cl.name, "LEAKED an ibsim slot after "+what)
					fails.add("leaked an ibsim client slot after "+unix.SignalName(sig), strings.Join(cs, "\n"))
					l.Kill()
					l = startLab(t, topo, nil)
				}
			}
			fails.report(t, *rounds)
			if l != nil {
				checkSlots(t, l, cl.name)
			}
		})
	}
}

func tailBytes(b []byte) []byte {
	if len(b) > 400 {
		return b[len(b)-400:]
	}
	return b
}
