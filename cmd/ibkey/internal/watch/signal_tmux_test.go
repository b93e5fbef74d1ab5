//go:build linux

package watch

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestWatchScreenSignals runs the built binary's screen in a real terminal (tmux) and
// ends it with each signal main handles: the exit status is 128+signo (as a shell
// reports it, never 2), the alternate screen is left and the terminal is back in
// canonical mode with echo. IBKEY_SIGNAL_ROUNDS sets the rounds per signal (default 2).
func TestWatchScreenSignals(t *testing.T) {
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
	rounds := 2
	if s := os.Getenv("IBKEY_SIGNAL_ROUNDS"); s != "" {
		if rounds, err = strconv.Atoi(s); err != nil {
			t.Fatalf("IBKEY_SIGNAL_ROUNDS=%q: %v", s, err)
		}
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "ibkey")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/ibkey/ibkey/cmd/ibkey").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	sock := filepath.Join(tmp, "tmux.sock") // a private server: nothing else is touched
	tm := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(tmux, append([]string{"-S", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	// One idle session keeps the server up between the rounds' sessions.
	tm("-f", "/dev/null", "new-session", "-d", "-s", "keep", "sleep", "600")
	defer exec.Command(tmux, "-S", sock, "kill-server").Run()
	read := func(p string) string { b, _ := os.ReadFile(p); return strings.TrimSpace(string(b)) }

	counts := map[syscall.Signal]int{}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT} {
		for round := range rounds {
			name := fmt.Sprintf("s%d-%d", sig, round)
			dir := filepath.Join(tmp, name)
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			pidFile, status, stty := filepath.Join(dir, "pid"), filepath.Join(dir, "status"), filepath.Join(dir, "stty")
			// The inner sh writes its pid and becomes ibkey (exec), in the foreground of
			// the pane's terminal; the outer sh records the exit status and the terminal
			// modes after it.
			script := fmt.Sprintf(`sh -c 'echo $$ > %s; exec %s --demo watch counters --interval 100ms'; echo $? > %s; stty -a > %s; sleep 60`, pidFile, bin, status, stty)
			tm("new-session", "-d", "-s", name, "-x", "100", "-y", "30", "env", "TERM=xterm-256color", "sh", "-c", script)
			up := false
			for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && !up; {
				time.Sleep(200 * time.Millisecond)
				up = strings.Contains(tm("capture-pane", "-p", "-t", name), "q quit") && read(pidFile) != ""
			}
			if !up {
				t.Fatalf("%v round %d: the screen did not come up:\n%s", sig, round, tm("capture-pane", "-p", "-t", name))
			}
			pid, err := strconv.Atoi(read(pidFile))
			if err != nil {
				t.Fatal(err)
			}
			if err := syscall.Kill(pid, sig); err != nil {
				t.Fatalf("kill %d: %v", pid, err)
			}
			var code string
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && (code == "" || read(stty) == ""); {
				time.Sleep(100 * time.Millisecond)
				code = read(status)
			}
			if code == "" {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				t.Fatalf("%v round %d: ibkey did not exit within 10s", sig, round)
			}
			if want := strconv.Itoa(128 + int(sig)); code != want {
				t.Errorf("%v round %d: exit status %s, want %s", sig, round, code, want)
			}
			modes := " " + strings.Join(strings.Fields(read(stty)), " ") + " "
			if strings.Contains(modes, " -icanon ") || strings.Contains(modes, " -echo ") {
				t.Errorf("%v round %d: the terminal was left raw: %s", sig, round, modes)
			}
			if strings.Contains(tm("capture-pane", "-p", "-t", name), "q quit") {
				t.Errorf("%v round %d: the alternate screen was not left", sig, round)
			}
			tm("kill-session", "-t", name)
			counts[sig]++
		}
	}
	t.Logf("screen ended cleanly per signal: %v", counts)
}
