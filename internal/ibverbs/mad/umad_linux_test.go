package mad

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOpenUmadWithoutDevice(t *testing.T) {
	dev := t.TempDir()
	// No device file at all.
	_, err := openUmadFile(filepath.Join(dev, "umad0"))
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dev, "umad0")) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing device file: %v", err)
	}
	// A regular file answers the ioctls with ENOTTY.
	os.WriteFile(filepath.Join(dev, "umad0"), nil, 0o644)
	_, err = openUmadFile(filepath.Join(dev, "umad0"))
	if err == nil || !strings.Contains(err.Error(), "not a umad device") {
		t.Errorf("regular file: %v", err)
	}
	// Unknown port: the error lists the ports.
	if _, err := OpenUmad("mlx9_9", 1, UmadOptions{SysfsRoot: "testdata/sysfs"}); err == nil || !strings.Contains(err.Error(), "ports:") {
		t.Errorf("unknown port: %v", err)
	}
}
