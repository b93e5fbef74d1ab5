package devices

import (
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
	"github.com/ibkey/ibkey/internal/fakesysfs"
)

// TestJSONIncomplete: a device that cannot be read is named in the JSON's incomplete
// list (kind unread-device) and the exit is 4; a host read whole has none (the runner
// checks "incomplete exactly on exit 4" for every JSON run).
func TestJSONIncomplete(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sys")
	if err := fakesysfs.Write(dir, fakesysfs.MLX5()); err != nil {
		t.Fatal(err)
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "devices", "*", "*", "infiniband", "mlx5_1", "ports"))
	if len(matches) != 1 {
		t.Fatalf("no mlx5_1/ports under %s", dir)
	}
	if err := os.RemoveAll(matches[0]); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(matches[0], 0o644); err != nil {
		t.Fatal(err)
	}
	r := cmdtest.Run(t, root, false, nil, "--sysfs", dir, "devices", "-o", "json")
	var doc struct {
		Incomplete []struct{ Kind, Message string } `json:"incomplete"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if r.Code != 4 || len(doc.Incomplete) != 1 || doc.Incomplete[0].Kind != "unread-device" {
		t.Errorf("exit %d, incomplete %+v; want 4 and one unread-device\n%s", r.Code, doc.Incomplete, r.Stdout)
	}
}
