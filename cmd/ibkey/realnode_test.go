package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/fakesysfs"
)

// What real machines write (issue 24, items 6-10): the fixture trees testdata/sysfs/
// dangling and odd (internal/fakesysfs: Dangling, Odd).

const (
	danglingTree = "../../testdata/sysfs/dangling"
	oddTree      = "../../testdata/sysfs/odd"
	// scif0Dangling is how a host command names the dangling entry: what it is, not
	// "does not exist".
	scif0Dangling = "device scif0: " + danglingTree + "/class/infiniband/scif0: is a symlink to ../../devices/virtual/infiniband/scif0, which does not exist (a dangling link)"
)

// TestDanglingDeviceEveryHostCommand: one dangling device entry (class/infiniband/scif0
// whose target was not captured) silences no host command. Each shows what it read
// (mlx4_0), names scif0 as a dangling link on stderr, and exits 4 when its answer could
// depend on scif0 (pkeys --find too: a key found on mlx4_0 says nothing of scif0); an
// answer read whole elsewhere (an interface's port, two named ports) exits 0 and still
// names it where the host was listed.
func TestDanglingDeviceEveryHostCommand(t *testing.T) {
	cases := []struct {
		args   []string
		code   int
		stdout string // a line fragment the answer must hold
		named  bool   // stderr names scif0 as dangling
	}{
		{[]string{"devices"}, 4, "mlx4_0  1     InfiniBand  ACTIVE", true},
		{[]string{"devices", "-o", "json"}, 4, `"device": "mlx4_0"`, true},
		{[]string{"pkeys"}, 4, "mlx4_0/1  1      0x8001", true},
		{[]string{"pkeys", "-o", "json"}, 4, `"unread-device"`, true},
		// ib0 runs on mlx4_0/1, which was read whole.
		{[]string{"pkeys", "ib0"}, 0, "mlx4_0/1  1      0x8001  full        0x0001  -        ib0.8001", true},
		// A port holds the key, and scif0's ports, asked about too, have no answer:
		// the port found is printed and the exit is 4 (it was 0 until wave 11).
		{[]string{"pkeys", "--find", "0x8001"}, 4, "mlx4_0/1  1      0x8001  full", true},
		{[]string{"pkeys", "--find", "0x8001", "-o", "json"}, 4, `"found": true`, true},
		// Not in what was read: it may be on scif0.
		{[]string{"pkeys", "--find", "0x8077"}, 4, "", true},
		{[]string{"pkeys", "--find", "0x8077", "-o", "json"}, 4, `"unread-device"`, true},
		{[]string{"can-talk", "ib0.8001", "mlx4_0/1"}, 0, "YES: A (mlx4_0/1) and B (mlx4_0/1) can talk", true},
		{[]string{"can-talk", "mlx4_0/1", "mlx4_0/1"}, 0, "YES", false},
		{[]string{"watch", "counters", "--once"}, 4, "mlx4_0/1 ACTIVE port_rcv_constraint_errors=5", true},
		{[]string{"watch", "pkeys", "--count", "1", "--interval", "10ms"}, 4, "", true},
		{[]string{"job"}, 4, "nccl      local  mlx4_0/1  yes   0      0xffff  full    uses", true},
		{[]string{"job", "-o", "json"}, 4, `"unread-device"`, true},
		// The exporter exports what it read and the unreadable device as a series.
		{[]string{"exporter", "--once"}, 4, `ibkey_device_unreadable{device="scif0",port="",reason=`, true},
	}
	for _, c := range cases {
		args := append([]string{"--sysfs", danglingTree}, c.args...)
		r := runIbkey(t, false, nil, args...)
		if r.code != c.code || !strings.Contains(r.stdout, c.stdout) || strings.Contains(r.stderr, "does not exist:") ||
			c.named != strings.Contains(r.stderr, scif0Dangling) {
			t.Errorf("ibkey %s: exit %d, want %d (stdout must hold %q, stderr name scif0: %v)\n%s--- stderr\n%s",
				strings.Join(args, " "), r.code, c.code, c.stdout, c.named, r.stdout, r.stderr)
		}
	}
	// Every device that can be read is shown; only scif0 is named.
	r := runIbkey(t, false, nil, "--sysfs", danglingTree, "devices", "-o", "json")
	var doc struct {
		Ports      []struct{ Device string }
		Incomplete []struct{ Kind, Message string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Ports) != 2 || len(doc.Incomplete) != 1 || doc.Incomplete[0].Kind != "unread-device" ||
		!strings.Contains(doc.Incomplete[0].Message, "dangling link") {
		t.Errorf("devices -o json: %+v", doc)
	}
}

// TestManyBrokenDevices: 20,000 device entries that cannot be read beside one that
// can are a screenful of stderr, not 20,000 lines (issue 28), and the error when none
// can be read is one bounded line; JSON still lists every one.
func TestManyBrokenDevices(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sys")
	h := fakesysfs.Dangling()
	for i := range 20000 {
		h.Dangling = append(h.Dangling, "bogus"+strconv.Itoa(i))
	}
	if err := fakesysfs.Write(dir, h); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"devices"}, {"pkeys"}, {"watch", "counters", "--once"}, {"job"}} {
		r := runIbkey(t, false, nil, append([]string{"--sysfs", dir}, args...)...)
		lines := strings.Count(r.stderr, "\n")
		if r.code != 4 || lines > 20 || !strings.Contains(r.stderr, "and 19996 more (every one is in -o json's incomplete)") ||
			!strings.Contains(r.stdout, "mlx4_0") {
			t.Errorf("ibkey %s: exit %d, %d lines of stderr:\n%.3000s", strings.Join(args, " "), r.code, lines, r.stderr)
		}
	}
	r := runIbkey(t, false, nil, "--sysfs", dir, "devices", "-o", "json")
	if n := strings.Count(r.stdout, `"unread-device"`); n != 20001 {
		t.Errorf("devices -o json lists %d unread devices, want 20001", n)
	}
	// None readable: one error, bounded; exit 4, as in a listing (they exist and were
	// not read; it was 3 until wave 8).
	if err := os.RemoveAll(filepath.Join(dir, "class", "infiniband", "mlx4_0")); err != nil {
		t.Fatal(err)
	}
	r = runIbkey(t, false, nil, "--sysfs", dir, "devices")
	if r.code != 4 || strings.Count(r.stderr, "\n") > 3 || len(r.stderr) > 2000 {
		t.Errorf("no device readable: exit %d, %d bytes of stderr:\n%.3000s", r.code, len(r.stderr), r.stderr)
	}
}

// TestOddValues: what drivers and older kernels write (issue 24, items 8-10).
func TestOddValues(t *testing.T) {
	run := func(args ...string) result {
		return runIbkey(t, false, nil, append([]string{"--sysfs", oddTree}, args...)...)
	}
	// Item 8: link_layer "InfiniBand\n\n" is InfiniBand: not escaped, and watch and
	// job treat the port as InfiniBand.
	// Exit 4: mlx4_0/2's table exists and was not read (item 10 below).
	r := run("devices")
	if r.code != 4 || !strings.Contains(r.stdout, "mlx4_0   1     InfiniBand  ACTIVE  LinkUp  43") || strings.Contains(r.stdout, `\n`) {
		t.Errorf("devices: exit %d\n%s--- stderr\n%s", r.code, r.stdout, r.stderr)
	}
	// Item 10: an InfiniBand port without pkeys/ is n/a with the reason, not "none"
	// (which is iWARP's real lack of a table); a missing gids/0 names the file.
	if !strings.Contains(r.stdout, "mlx4_0   2     InfiniBand  ACTIVE  LinkUp  44   1       56_Gb/sec_(4X_FDR)  n/a    n/a") ||
		!strings.Contains(r.stdout, "cxgb4_0  1     Ethernet    ACTIVE  LinkUp  0    0       10_Gb/sec_(4X_SDR)  none") ||
		!strings.Contains(r.stderr, "warning: mlx4_0/2: PKEYS n/a: P_Key table not read: pkeys/ does not exist, and the kernel writes it for every InfiniBand port") {
		t.Errorf("devices:\n%s--- stderr\n%s", r.stdout, r.stderr)
	}
	r = run("devices", "-o", "json")
	var doc struct {
		Ports []struct {
			Device    string
			Port      int
			LinkLayer *string `json:"link_layer"`
			Missing   map[string]string
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	for _, p := range doc.Ports {
		if p.Device == "mlx4_0" && (p.LinkLayer == nil || *p.LinkLayer != "InfiniBand") {
			t.Errorf("%s/%d link_layer %v", p.Device, p.Port, p.LinkLayer)
		}
		if p.Device == "mlx4_0" && p.Port == 2 && p.Missing["port_guid"] != "gids/0: does not exist" {
			t.Errorf("a missing gids/0: %q", p.Missing["port_guid"])
		}
	}
	// The table not read makes pkeys' answer incomplete; iWARP's none does not.
	r = run("pkeys")
	if r.code != 4 || !strings.Contains(r.stderr, "note: cxgb4_0/1: no P_Key table") || !strings.Contains(r.stderr, "mlx4_0/2: P_Key table not read") {
		t.Errorf("pkeys: exit %d\n%s--- stderr\n%s", r.code, r.stdout, r.stderr)
	}
	if r = run("pkeys", "cxgb4_0"); r.code != 0 {
		t.Errorf("pkeys cxgb4_0 (iWARP, no table): exit %d\n%s", r.code, r.stderr)
	}
	// Item 9: N/A (no PMA) is "no PMA on this device", not a parse error.
	r = run("watch", "counters", "--once")
	if r.code != 4 || !strings.Contains(r.stderr, "pkey_violations, qkey_violations not read on") || !strings.Contains(r.stdout, "cxgb4_0/1 ACTIVE port_rcv_constraint_errors=n/a(no_PMA_on_this_device)") ||
		strings.Contains(r.stdout+r.stderr, "decimal") || !strings.Contains(r.stdout, "mlx4_0/1 ACTIVE port_rcv_constraint_errors=0") {
		t.Errorf("watch counters: exit %d\n%s--- stderr\n%s", r.code, r.stdout, r.stderr)
	}
	// mlx4_0/1 is used as the InfiniBand port it is; mlx4_0/2's table was not read,
	// so what the libraries do there is not checked.
	r = run("job")
	if r.code != 4 || !strings.Contains(r.stdout, "nccl      local  mlx4_0/1   yes   0      0xffff  full    uses") ||
		!strings.Contains(r.stderr, "warning: not checked: NCCL: mlx4_0/2: P_Key table not read") {
		t.Errorf("job: exit %d\n%s--- stderr\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestGarbagePKeyFile: one 64 KiB garbage pkeys file is quoted by its head on stderr,
// not whole (issue 28).
func TestGarbagePKeyFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sys")
	if err := fakesysfs.Write(dir, fakesysfs.Dangling()); err != nil {
		t.Fatal(err)
	}
	entry := filepath.Join(dir, "devices/pci0000:00/0000:81:00.0/infiniband/mlx4_0/ports/1/pkeys/5")
	if err := os.Chmod(entry, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(entry, []byte(strings.Repeat("\x1b[2Jgarbage", 65536/11)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"pkeys", "mlx4_0/1"}, {"devices"}, {"pkeys", "mlx4_0/1", "-o", "json"}} {
		r := runIbkey(t, false, nil, append([]string{"--sysfs", dir}, args...)...)
		quoted := args[0] == "devices" || strings.Contains(r.stderr, `("\\x1b[2Jgarbage`) && strings.Contains(r.stderr, `"... (truncated) is not a hex number`)
		if len(r.stderr) > 1000 || len(r.stdout) > 4000 || !quoted || strings.Contains(r.stderr, "\x1b") {
			t.Errorf("ibkey %s: %d bytes of stderr:\n%.2000s", strings.Join(args, " "), len(r.stderr), r.stderr)
		}
	}
}

// TestDemoExporterMarked (issue 25 item 10): --demo exporter says its metrics are demo
// data; a real (or saved) host's do not.
func TestDemoExporterMarked(t *testing.T) {
	// --portinfo reads the InfiniBand ports' violation counters (over the demo
	// fabric); the RoCE port's Q_Key violations stay unread (PortInfo has none; only
	// verbs read them, and the demo host has no verbs): exit 4, that counter alone
	// named. Without --portinfo the InfiniBand ports' are not read either (not in
	// sysfs).
	if r := runIbkey(t, false, nil, "--demo", "exporter", "--once", "--portinfo"); r.code != 4 || !strings.Contains(r.stdout, "\nibkey_demo_info 1\n") ||
		r.stderr != "ibkey: qkey_violations not read on 1 port: no PortInfo: the Ethernet link layer has no QP0 (no SMPs); only verbs read it (ibv_query_port, on the host itself)\n" {
		t.Errorf("--demo exporter --once --portinfo: exit %d, no ibkey_demo_info 1:\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runIbkey(t, false, nil, "--demo", "exporter", "--once"); r.code != 4 || !strings.Contains(r.stdout, "\nibkey_demo_info 1\n") ||
		r.stderr != "ibkey: pkey_violations, qkey_violations not read on 3 ports: not in sysfs: needs a verbs or MAD source (PortInfo P_KeyViolations/Q_KeyViolations)\n"+
			"ibkey: qkey_violations not read on 1 port: no PortInfo: the Ethernet link layer has no QP0 (no SMPs); only verbs read it (ibv_query_port, on the host itself)\n" {
		t.Errorf("--demo exporter --once: exit %d, want 4, ibkey_demo_info 1 and the counters not read named:\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runIbkey(t, false, nil, "--demo", "exporter", "--lid", "1-3", "--once"); r.code != 0 || !strings.Contains(r.stdout, "\nibkey_demo_info 1\n") {
		t.Errorf("--demo exporter --lid --once (the demo fabric): exit %d, no ibkey_demo_info 1:\n%s", r.code, r.stdout)
	}
	if r := runIbkey(t, false, nil, "--sysfs", mlx5, "exporter", "--once"); strings.Contains(r.stdout, "ibkey_demo_info") {
		t.Errorf("a saved host's metrics are marked as demo data:\n%s", r.stdout)
	}
}

// TestExporterEmptyPartitionConfigFile: with --opensm-conf whose
// partition_config_file is empty, the exporter audits the sweep against what OpenSM
// then programs (its own Default=0x7fff, ipoib : ALL=full), as fabric check does:
// the demo fabric's other keys are partitions-extra-key errors.
func TestExporterEmptyPartitionConfigFile(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "opensm.conf")
	if err := os.WriteFile(conf, []byte("partition_config_file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runIbkey(t, false, nil, "--demo", "exporter", "--sweep", "--opensm-conf", conf, "--once")
	if !strings.Contains(r.stderr, "OpenSM reads no partitions.conf") || strings.Contains(r.stdout, `ibkey_fabric_findings{rule="partitions-extra-key",severity="error"} 0`) ||
		!strings.Contains(r.stdout, `ibkey_fabric_findings{rule="partitions-extra-key",severity="error"}`) {
		t.Errorf("exit %d\n%s", r.code, r.stderr)
	}
}
