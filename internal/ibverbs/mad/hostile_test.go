package mad

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestNodeDescriptionIsTerminalSafe: a NodeDescription is whatever the node says;
// escape sequences, C1 controls, bidi overrides and bad UTF-8 come out visible.
func TestNodeDescriptionIsTerminalSafe(t *testing.T) {
	d := make([]byte, 64)
	copy(d, "sw\x1b[2J\x1b]0;x\x07\xc2\x9b\u202e\xff")
	got, err := ParseNodeDescription(d)
	if err != nil {
		t.Fatal(err)
	}
	if want := `sw\x1b[2J\x1b]0;x\x07\u009b\u202e\xff`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestUmadIbdevSpecialFiles: the ibdev lookup refuses /dev/zero and a FIFO at once
// (it used to read /dev/zero until the machine ran out of memory, and to block on a
// FIFO for good).
func TestUmadIbdevSpecialFiles(t *testing.T) {
	for _, kind := range []string{"zero", "fifo"} {
		root := t.TempDir()
		dir := filepath.Join(root, "class", "infiniband_mad", "umad0")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		ibdev := filepath.Join(dir, "ibdev")
		switch kind {
		case "zero":
			if err := os.Symlink("/dev/zero", ibdev); err != nil {
				t.Fatal(err)
			}
		case "fifo":
			if err := syscall.Mkfifo(ibdev, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		os.WriteFile(filepath.Join(dir, "port"), []byte("1\n"), 0o644)
		done := make(chan error, 1)
		go func() { _, err := ListUmadPorts(root); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "ibdev") {
				t.Errorf("%s: ListUmadPorts: %v, want an error naming ibdev", kind, err)
			}
		case <-time.After(time.Minute):
			t.Fatalf("%s: ListUmadPorts still reading after a minute", kind)
		}
	}
}
