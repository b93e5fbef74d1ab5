package cmdtest

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// UnreadableDevice makes device dev of the sysfs tree at dir unreadable: its ports/
// directory becomes a FIFO, which ibkey refuses to open (a device that cannot be read
// beside ones that can).
func UnreadableDevice(t testing.TB, dir, dev string) {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join(dir, "devices", "*", "*", "infiniband", dev, "ports"))
	if len(matches) != 1 {
		t.Fatalf("no %s/ports under %s", dev, dir)
	}
	if err := os.RemoveAll(matches[0]); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(matches[0], 0o644); err != nil {
		t.Fatal(err)
	}
}
