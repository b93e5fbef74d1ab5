package kernellab_test

import (
	"strings"
	"testing"
)

// renamedDev is the name renamePlan gives rxe0 for one command: an ESC byte in it,
// which the kernel accepts from root (this test is where that was seen) and which
// ibverbs.CheckDeviceName refuses.
const renamedDev = `rx\033e0`

// renamePlan renames rxe0 to renamedDev, runs ibkey devices and ibv_devices, and
// names it rxe0 again, whatever they did (the pod plan after it needs rxe0).
func renamePlan(ibkey string) []Command {
	return []Command{{Name: "renamed_devices", Script: `new=$(printf '` + renamedDev + `')
rdma dev set ` + dev + ` name "$new"; echo "rename_exit=$?" >&2
ls /sys/class/infiniband | od -c | head -3 >&2
ibv_devices | cat -v >&2
` + ibkey + ` devices -o plain; rc=$?
rdma dev set "$new" name ` + dev + `; echo "rename_back_exit=$?" >&2
exit $rc`}}
}

// TestRenamedDeviceOnKernel: a device root renamed to a name ibkey does not accept
// as one is named as a class/infiniband entry not read (exit 4), never dropped: ibkey
// once skipped it in silence and said the host had no RDMA device (exit 3).
func TestRenamedDeviceOnKernel(t *testing.T) {
	r := result(t, "renamed_devices")
	if !strings.Contains(r.Stderr, "rename_exit=0") {
		t.Fatalf("the kernel refused the rename (the test's premise):\n%s", r.Stderr)
	}
	if !strings.Contains(r.Stderr, "rename_back_exit=0") {
		t.Errorf("rxe0 was not named back:\n%s", r.Stderr)
	}
	want := `not read: class/infiniband entry: "rx\x1be0": not a device name (contains a control character)`
	if r.Exit != 4 || !strings.Contains(r.Stderr, want) || strings.Contains(r.Stdout+r.Stderr, "\x1b") {
		t.Errorf("ibkey devices with %q in class/infiniband: exit %d, want 4 naming it terminal-safe (%s)\nstdout: %s\nstderr: %s",
			"rx\x1be0", r.Exit, want, r.Stdout, r.Stderr)
	}
	t.Logf("the guest with the renamed device:\n%s", r.Stderr)
}
