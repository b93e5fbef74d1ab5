//go:build linux

package fabric

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/ptytest"
)

// buildIbkey builds the ibkey binary into a temporary directory.
func buildIbkey(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "ibkey")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/ibkey/ibkey/cmd/ibkey").CombinedOutput(); err != nil {
		t.Fatalf("building ibkey: %v\n%s", err, out)
	}
	return bin
}

// TestLabSweepProgressTerminal runs `ibkey fabric discover` like a user, on the fat
// tree: on a terminal the sweep's progress is drawn on stderr and erased before the
// table; with stderr a pipe, and with -o json to a pipe (stderr still the terminal),
// nothing of it is written.
func TestLabSweepProgressTerminal(t *testing.T) {
	l := startFabricLab(t, "fattree.net")
	bin := buildIbkey(t)
	args := []string{"--ibsim=" + l.SockName, "--sim-node", l.from, "fabric", "discover"}
	const progress = "sweeping: "

	t.Run("terminal", func(t *testing.T) {
		s, err := ptytest.Start(exec.Command(bin, args...), 100, 30)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if err := s.Wait(time.Minute); err != nil {
			t.Fatal(err)
		}
		out := string(s.Output())
		if s.ExitCode() != 0 {
			t.Fatalf("exit %d:\n%s", s.ExitCode(), out)
		}
		i := strings.Index(out, progress)
		if i < 0 {
			t.Fatalf("no progress on the terminal:\n%q", out)
		}
		// Erased (CR, erase in line) before the fabric's table is printed.
		rest := out[i:]
		end := strings.LastIndex(rest, "\r\x1b[K")
		if end < 0 || strings.Contains(rest[:end], "\n") {
			t.Fatalf("progress not redrawn in place and erased:\n%q", rest)
		}
		if !strings.Contains(rest[end:], "GUID") && !strings.Contains(rest[end:], "fabric:") {
			t.Fatalf("nothing printed after the progress:\n%q", rest[end:])
		}
		t.Logf("progress lines drawn: %d", strings.Count(out, progress))
	})

	t.Run("pipe", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(bin, args...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v\n%s", err, stderr.String())
		}
		if strings.Contains(stderr.String()+stdout.String(), progress) || strings.Contains(stderr.String(), "\x1b") {
			t.Fatalf("progress on a pipe:\nstderr %q", stderr.String())
		}
	})

	t.Run("json to a pipe", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "fabric.json")
		// The shell runs on the terminal and sends stdout to the file; stderr stays the
		// terminal.
		sh := `"$0" "$@" -o json > ` + file
		s, err := ptytest.Start(exec.Command("/bin/sh", append([]string{"-c", sh, bin}, args...)...), 100, 30)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if err := s.Wait(time.Minute); err != nil {
			t.Fatal(err)
		}
		if out := string(s.Output()); s.ExitCode() != 0 || strings.Contains(out, progress) {
			t.Fatalf("exit %d, terminal got:\n%q", s.ExitCode(), out)
		}
		if b, err := os.ReadFile(file); err != nil || !bytes.HasPrefix(bytes.TrimSpace(b), []byte("{")) {
			t.Fatalf("no JSON in the file (%v): %q", err, b)
		}
	})
}
