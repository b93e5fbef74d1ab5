package pkeys

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
	"github.com/ibkey/ibkey/internal/fakesysfs"
)

// TestJSONIncomplete: --find of a key that is not in the entries read of a port with
// an unreadable entry exits 4 and says so in incomplete (kind unread-entries); a key
// found, or absent from a table read whole, has no incomplete list (the runner checks
// "incomplete exactly on exit 4").
func TestJSONIncomplete(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		kind string
	}{
		{[]string{"--sysfs", cmdtest.MLX5, "pkeys", "mlx5_1/1", "--find", "0x0009", "-o", "json"}, 4, "unread-entries"},
		{[]string{"--sysfs", cmdtest.MLX5, "pkeys", "mlx5_1/1", "--find", "0x0002", "-o", "json"}, 0, ""},
		{[]string{"--sysfs", cmdtest.MLX5, "pkeys", "mlx5_0/1", "--find", "0x0009", "-o", "json"}, 1, ""},
		// Key 0 matches no entry, read or not: a definite no beside unread entries.
		{[]string{"--sysfs", cmdtest.MLX5, "pkeys", "mlx5_1/1", "--find", "0x0000", "-o", "json"}, 1, ""},
		{[]string{"--sysfs", cmdtest.MLX5, "pkeys", "--find", "0x7fff", "-o", "json"}, 0, ""},
		// iWARP has no table at all (issue 24, item 10: "none" is its real lack of
		// one): a definite not-found. It was exit 4 "unread-table" before.
		{[]string{"--sysfs", cmdtest.MLX5, "pkeys", "irdma0", "--find", "0x0009", "-o", "json"}, 1, ""},
		// An InfiniBand port whose pkeys/ is missing has a table that was not read.
		{[]string{"--sysfs", cmdtest.Odd, "pkeys", "mlx4_0/2", "--find", "0x0009", "-o", "json"}, 4, "unread-table"},
		{[]string{"--sysfs", cmdtest.Odd, "pkeys", "mlx4_0/2", "-o", "json"}, 4, "unread-table"},
		// A device not read: only a key not found is incomplete.
		{[]string{"--sysfs", cmdtest.Dangling, "pkeys", "--find", "0x0009", "-o", "json"}, 4, "unread-device"},
		{[]string{"--sysfs", cmdtest.Dangling, "pkeys", "--find", "0x8001", "-o", "json"}, 0, ""},
	} {
		r := cmdtest.Run(t, root, false, nil, tc.args...)
		var doc struct {
			Incomplete []struct{ Kind string } `json:"incomplete"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
			t.Fatalf("%v: %v\n%s", tc.args, err, r.Stdout)
		}
		kind := ""
		if len(doc.Incomplete) > 0 {
			kind = doc.Incomplete[0].Kind
		}
		if r.Code != tc.code || kind != tc.kind {
			t.Errorf("%v: exit %d, incomplete %q; want %d, %q\n%s", tc.args, r.Code, kind, tc.code, tc.kind, r.Stdout)
		}
	}
}

// TestFindPartialHost: a key not in the tables read while a device of the host could
// not be read is not a definite no: exit 4, with the device in incomplete.
func TestFindPartialHost(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sys")
	host := fakesysfs.MLX5()
	var devs []fakesysfs.Device
	for _, d := range host.Devices {
		if d.Name != "irdma0" { // no table: an answer of its own, not wanted here
			devs = append(devs, d)
		}
	}
	host.Devices = devs
	if err := fakesysfs.Write(dir, host); err != nil {
		t.Fatal(err)
	}
	cmdtest.UnreadableDevice(t, dir, "mlx5_1")
	for _, format := range []string{"plain", "json"} {
		r := cmdtest.Run(t, root, false, nil, "--sysfs", dir, "pkeys", "--find", "0x0009", "-o", format)
		if r.Code != 4 {
			t.Errorf("-o %s: exit %d, want 4 (mlx5_1 was not read)\n%s%s", format, r.Code, r.Stdout, r.Stderr)
		}
	}
}

// TestListingNotReadExit4: the listing shows what was read and exits 4 when entries
// or a table were not read: an entry (mlx5_1/1[3] of the fixture) and a pkeys/ that
// cannot be read (a link loop: the port's row stays, the table named not read), each
// in incomplete (red-team finding 5).
func TestListingNotReadExit4(t *testing.T) {
	r := cmdtest.Run(t, root, false, nil, "--sysfs", cmdtest.MLX5, "pkeys", "-o", "plain")
	if r.Code != 4 || !strings.Contains(r.Stderr, "mlx5_1/1: 1 P_Key entry could not be read: 3 (") {
		t.Errorf("pkeys: exit %d, stderr %q", r.Code, r.Stderr)
	}
	dir := filepath.Join(t.TempDir(), "sys")
	if err := fakesysfs.Write(dir, fakesysfs.MLX5()); err != nil {
		t.Fatal(err)
	}
	if err := fakesysfs.LoopPKeys(dir, "mlx5_0", 1); err != nil {
		t.Fatal(err)
	}
	r = cmdtest.Run(t, root, false, nil, "--sysfs", dir, "pkeys", "mlx5_0/1", "-o", "json")
	if r.Code != 4 || !strings.Contains(r.Stdout, `"pkeys_error": "P_Key table not read: `) || !strings.Contains(r.Stdout, `"kind": "unread-table"`) {
		t.Errorf("pkeys/ not read: exit %d\n%s--- stderr\n%s", r.Code, r.Stdout, r.Stderr)
	}
}
