package devices

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
	"github.com/ibkey/ibkey/internal/fakesysfs"
)

// TestOneBadDeviceShowsTheRest: a device that cannot be read (its ports/ is a FIFO)
// does not hide the others: they are listed, the one not read is named on stderr, and
// the exit is 4 (incomplete), not 3 for the whole host.
func TestOneBadDeviceShowsTheRest(t *testing.T) {
	dir := unreadableDeviceTree(t)
	r := cmdtest.Run(t, root, false, nil, "--sysfs", dir, "devices")
	if r.Code != 4 || !strings.Contains(r.Stdout, "mlx5_0") || strings.Contains(r.Stdout, "mlx5_1 ") ||
		!strings.Contains(r.Stderr, "not read: device mlx5_1") {
		t.Errorf("exit %d\n%s--- stderr\n%s", r.Code, r.Stdout, r.Stderr)
	}
}

// unreadableDeviceTree is the mlx5 fixture with mlx5_1's ports/ replaced by a FIFO:
// a device that cannot be read beside one that can.
func unreadableDeviceTree(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "sys")
	if err := fakesysfs.Write(dir, fakesysfs.MLX5()); err != nil {
		t.Fatal(err)
	}
	cmdtest.UnreadableDevice(t, dir, "mlx5_1")
	return dir
}
