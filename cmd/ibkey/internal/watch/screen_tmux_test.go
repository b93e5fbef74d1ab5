//go:build linux

package watch

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
)

// The screen in a real terminal: tmux runs the built binary in a pane of a given
// size, and capture-pane reads what the pane shows (what a user sees, whatever
// escape sequences drew it).

var (
	builtOnce sync.Once
	builtPath string
	builtErr  error
)

// ibkeyBinary builds cmd/ibkey once per test run.
func ibkeyBinary(t *testing.T) string {
	t.Helper()
	builtOnce.Do(func() {
		dir, err := os.MkdirTemp("", "ibkey-watch-screen")
		if err != nil {
			builtErr = err
			return
		}
		builtPath = filepath.Join(dir, "ibkey")
		if out, err := exec.Command("go", "build", "-o", builtPath, "github.com/ibkey/ibkey/cmd/ibkey").CombinedOutput(); err != nil {
			builtErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if builtErr != nil {
		t.Fatal(builtErr)
	}
	return builtPath
}

// tmuxServer is a private tmux server (its own socket): nothing else is touched.
type tmuxServer struct {
	t    *testing.T
	tmux string
	sock string
}

func newTmux(t *testing.T) *tmuxServer {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary and runs it in tmux")
	}
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("tmux is missing (CI is set: install tmux)")
		}
		t.Skip("tmux is missing: apt-get install -y tmux")
	}
	s := &tmuxServer{t: t, tmux: tmux, sock: filepath.Join(t.TempDir(), "tmux.sock")}
	// One idle session keeps the server up between the tests' sessions.
	s.run("-f", "/dev/null", "new-session", "-d", "-s", "keep", "sleep", "600")
	t.Cleanup(func() { _ = exec.Command(tmux, "-S", s.sock, "kill-server").Run() })
	return s
}

func (s *tmuxServer) run(args ...string) string {
	s.t.Helper()
	out, err := exec.Command(s.tmux, append([]string{"-S", s.sock}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// start runs argv in a new w x h session; the pane stays after it exits and shows
// "exit status N".
func (s *tmuxServer) start(name string, w, h int, argv ...string) {
	s.t.Helper()
	script := "env TERM=xterm-256color"
	for _, a := range argv {
		script += " " + strconv.Quote(a)
	}
	s.run("new-session", "-d", "-s", name, "-x", strconv.Itoa(w), "-y", strconv.Itoa(h), "sh", "-c", script+"; echo exit status $?; sleep 600")
}

func (s *tmuxServer) screen(name string) string { return s.run("capture-pane", "-p", "-t", name) }

func (s *tmuxServer) keys(name string, keys ...string) {
	s.run(append([]string{"send-keys", "-t", name}, keys...)...)
}

// waitScreen waits until the pane shows what ok accepts (20 s: a hang detector) and
// returns that screen.
func (s *tmuxServer) waitScreen(name, what string, ok func(string) bool) string {
	s.t.Helper()
	var scr string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if scr = s.screen(name); ok(scr) {
			return scr
		}
	}
	s.t.Fatalf("%s: the screen never showed %s:\n%s", name, what, scr)
	return ""
}

// pageEnd shows the end of the drill-down once its P_Key table was read (or said
// why not): G (the last line) again until the page is at its end (100%, or no
// scroll position: it fits).
func (s *tmuxServer) pageEnd(name string) string {
	s.t.Helper()
	pos := regexp.MustCompile(`\d+%\s*$`)
	return s.waitScreen(name, "the end of the P_Key table", func(scr string) bool {
		s.keys(name, "G")
		done := strings.Contains(scr, "INDEX  P_KEY") || strings.Contains(scr, "not read")
		end := strings.HasSuffix(strings.TrimSpace(scr), "100%") || !pos.MatchString(scr)
		return done && end
	})
}

func (s *tmuxServer) waitText(name, text string) string {
	s.t.Helper()
	return s.waitScreen(name, strconv.Quote(text), func(scr string) bool { return strings.Contains(scr, text) })
}

// wordsRun reports whether the words of want appear, in order and whole, among the
// words of scr: a sentence wrapped over lines, not cut.
func wordsRun(scr, want string) bool {
	have, w := strings.Fields(scr), strings.Fields(want)
	for i := 0; i+len(w) <= len(have); i++ {
		if slicesEqual(have[i:i+len(w)], w) {
			return true
		}
	}
	return false
}

func slicesEqual(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// rawDuration is a Go duration printed whole (1.002256326s): the history must read
// as a person reads it.
var rawDuration = regexp.MustCompile(`\d\.\d{3,}s`)

// TestWatchScreenTerminal: the screen in a real terminal at 80x24 and 200x50, on the
// demo host and on a --sysfs tree (issue 25 items 2 and 3): the help line shows
// `q quit`; the drill-down (enter) shows the port's P_Key table, as `ibkey pkeys`
// reads it, and names no SMP source for counters nothing was asked for (no MAD
// transport was given); its HISTORY reads `1.0s`; the help page wraps its
// explanations at spaces (the sentences appear whole); q ends it with exit 4, naming
// the counters it showed n/a and did not read.
func TestWatchScreenTerminal(t *testing.T) {
	tm := newTmux(t)
	bin := ibkeyBinary(t)
	tree := watchTree(t)
	for _, src := range []struct {
		name string
		args []string
		keys []string // the P_Keys of the first port
	}{
		{"demo", []string{"--demo"}, []string{"0xffff", "0x8001", "0x0002", "0x8003", "0x0003", "0x8010"}},
		{"sysfs", []string{"--sysfs", tree}, []string{"0xffff", "0x8001", "0x0002"}},
	} {
		for _, size := range [][2]int{{80, 24}, {200, 50}} {
			name := fmt.Sprintf("%s-%dx%d", src.name, size[0], size[1])
			t.Run(name, func(t *testing.T) {
				tm.t = t
				tm.start(name, size[0], size[1], append(append([]string{bin}, src.args...), "watch", "counters", "--interval", "1s")...)
				scr := tm.waitText(name, "q quit")
				lines := strings.Split(strings.TrimRight(scr, "\n "), "\n")
				if last := lines[len(lines)-1]; !strings.Contains(last, "q quit") || strings.Contains(last, "…") {
					t.Errorf("the help line: %q", last)
				}
				// The drill-down, after a few samples (its history needs two).
				time.Sleep(3500 * time.Millisecond)
				tm.keys(name, "Enter")
				top := tm.waitText(name, "COUNTER")
				if strings.Contains(top, "smp") {
					t.Errorf("the drill-down names an SMP source without a MAD transport:\n%s", top)
				}
				end := tm.pageEnd(name)
				page := top + end
				if strings.Contains(page, "not read") {
					t.Errorf("the P_Key table was not read:\n%s", end)
				}
				for _, k := range src.keys {
					if !regexp.MustCompile(`(?m)^ +\d+  ` + k + `  `).MatchString(end) {
						t.Errorf("no P_Key %s in the table:\n%s", k, end)
					}
				}
				if !regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d +1\.0s `).MatchString(page) || rawDuration.MatchString(page) {
					t.Errorf("the history's intervals:\n%s", page)
				}
				// The help page: every sentence whole, wrapped at spaces.
				tm.keys(name, "Escape")
				time.Sleep(300 * time.Millisecond) // esc alone, not the start of alt+?
				tm.keys(name, "?")
				help := tm.waitText(name, "COLUMNS")
				for _, want := range []string{
					"PortRcvConstraintErrors: packets dropped on receive by the partition (P_Key) enforcement of a switch port, or raw-packet filtering.",
					"the hardware counter now. ! it is at its maximum: it stopped counting, later drops are lost (error counters saturate, they do not wrap).",
				} {
					if !wordsRun(help, want) {
						t.Errorf("the help cuts %q:\n%s", want, help)
					}
				}
				// Quitting names what the screen showed n/a and did not read (the
				// violation counters: no verbs, no MAD transport), exit 4 as the lines'.
				tm.keys(name, "q")
				if after := tm.waitText(name, "exit status 4"); !strings.Contains(after, "qkey_violations not read on") {
					t.Errorf("the counters not read are not named after the screen:\n%s", after)
				}
				tm.run("kill-session", "-t", name)
			})
		}
	}
}

// TestLabWatchScreenPKeys: `ibkey --ibsim watch counters --lid 1-5` in a real
// terminal at 80x24: the drill-down shows the port's P_Key table read over MADs, the
// same keys smpquery pkeys reads (issue 25 item 3: it said the table was not read).
func TestLabWatchScreenPKeys(t *testing.T) {
	tm := newTmux(t)
	bin := ibkeyBinary(t)
	l := cmdtest.StartLab(t, "small.net", root)
	if err := l.RunOpenSM(cmdtest.FabricConf(t), false); err != nil {
		t.Fatal(err)
	}
	const name = "lab"
	tm.start(name, 80, 24, append(append([]string{bin}, l.Attach()...), "watch", "counters", "--lid", "1-5")...)
	tm.waitText(name, "q quit")
	tm.keys(name, "Enter")
	top := tm.waitText(name, "address  lid ")
	m := regexp.MustCompile(`(?m)^port +(.*)/(\d+) *$\n^address  lid (\d+)`).FindStringSubmatch(top)
	if m == nil {
		t.Fatalf("no port and address on the drill-down:\n%s", top)
	}
	lid, port := m[3], m[2]
	end := tm.pageEnd(name)
	if strings.Contains(end, "not read") {
		t.Fatalf("the P_Key table was not read:\n%s", end)
	}
	// smpquery pkeys LID PORT prints the table's blocks ("0: 0xffff 0x8001 ...");
	// its valid keys (a non-zero 15-bit key) are what the screen must list.
	pk := l.Diag(t, "smpquery", "pkeys", lid, port)
	var want []string
	for _, k := range regexp.MustCompile(`0x[0-9a-f]{4}`).FindAllString(pk, -1) {
		if v, _ := strconv.ParseUint(k[2:], 16, 16); v&0x7fff != 0 {
			want = append(want, k)
		}
	}
	if len(want) == 0 {
		t.Fatalf("smpquery pkeys %s %s read no key:\n%s", lid, port, pk)
	}
	for _, k := range want {
		if !regexp.MustCompile(`(?m)^ +\d+  ` + k + `  `).MatchString(end) {
			t.Errorf("smpquery pkeys %s %s has %s; the screen does not:\n%s", lid, port, k, end)
		}
	}
	t.Logf("lid %s port %s: %d keys, as smpquery pkeys reads them", lid, port, len(want))
	tm.keys(name, "q")
	tm.waitText(name, "exit status 0")
}
