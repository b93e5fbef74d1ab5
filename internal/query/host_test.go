package query

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fakesysfs"
	"github.com/ibkey/ibkey/internal/ibverbs"
)

func raw(vals ...int) []ibverbs.PKeyEntry {
	out := make([]ibverbs.PKeyEntry, len(vals))
	for i, v := range vals {
		out[i] = ibverbs.PKeyEntry{Index: i, Value: uint16(v)}
		if v < 0 {
			out[i] = ibverbs.PKeyEntry{Index: i, Err: errors.New("read failed: EIO")}
		}
	}
	return out
}

func TestDecodeTable(t *testing.T) {
	// 0xffff, hole, limited 5, invalid 0x8000 (hole), full 5, unreadable, dup 0xffff, empty tail
	tab := DecodeTable(raw(0xffff, 0x0000, 0x0005, 0x8000, 0x8005, -1, 0xffff, 0, 0))
	if tab.Valid != 4 {
		t.Errorf("Valid = %d, want 4", tab.Valid)
	}
	e := tab.Entries
	if !e[1].Hole || !e[3].Hole || e[7].Hole || e[8].Hole {
		t.Errorf("holes: invalid entries below the last valid one only: %+v", e)
	}
	if !e[2].Both || !e[4].Both || e[0].Both {
		t.Error("key 5 is held as full and limited")
	}
	if e[6].DuplicateOf != 0 || e[0].DuplicateOf != -1 {
		t.Errorf("duplicate: %+v", e[6])
	}
	if e[5].Unreadable == "" || e[5].Valid() || e[5].Hole || e[5].PKey != 0 {
		t.Errorf("unreadable entry: %+v", e[5])
	}
}

func TestFindIndex(t *testing.T) {
	tab := DecodeTable(raw(0xffff, 0x0005, 0x0000, 0x8005, 0x0007, 0x0007, -1, 0x8000))
	tests := []struct {
		key   check.PKey
		index int
		ok    bool
	}{
		{0x8005, 3, true},                      // a full entry is preferred over an earlier limited one
		{0x0005, 3, true},                      // the lookup is by 15-bit key
		{0x8007, 4, true},                      // only limited entries: the lowest index
		{0x7fff, 0, true},                      // default partition
		{0x0000, 0, false}, {0x8000, 0, false}, // key 0 never matches, not even the 0x8000 entry
		{0x8009, 0, false},
	}
	v := &PortView{Port: &ibverbs.Port{Device: "mlx5_0", Num: 1}, Table: tab}
	for _, tc := range tests {
		r := FindPKey(v, tc.key)
		e, ok := r.Entry, r.Outcome == FindFound
		if ok != tc.ok || (ok && e.Index != tc.index) {
			t.Errorf("FindPKey(%v) = %+v, %v; want %d, %v", tc.key, e, ok, tc.index, tc.ok)
		}
	}
}

func TestParseSelector(t *testing.T) {
	good := map[string]Selector{"mlx5_0": {Device: "mlx5_0"}, "mlx5_0/1": {"mlx5_0", 1, true}, "sw/0": {"sw", 0, true}}
	for in, want := range good {
		if got, err := ParseSelector(in); err != nil || got != want {
			t.Errorf("ParseSelector(%q) = %+v, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "/1", "../x", "..", "mlx5_0/", "mlx5_0/x", "mlx5_0/256", "mlx5_0/-1", "mlx5_0/01", "mlx5_0/1/2", "a\x00b/1"} {
		var u *UsageError
		if _, err := ParseSelector(in); !errors.As(err, &u) {
			t.Errorf("ParseSelector(%q) = %v, want a UsageError", in, err)
		}
	}
}

func TestLoadNotFound(t *testing.T) {
	h := &Host{Sys: ibverbs.Open("../../testdata/sysfs/mlx5")}
	_, err := h.Load(Selector{Device: "mlx5_9"}, LoadOptions{})
	var nf *NotFoundError
	if !errors.As(err, &nf) || err.Error() != "no device mlx5_9 (devices: irdma0, mlx5_0, mlx5_1, mlx5_2)" {
		t.Errorf("err = %v", err)
	}
	_, err = h.Load(Selector{Device: "mlx5_1", Port: 3, HasPort: true}, LoadOptions{})
	if !errors.As(err, &nf) || err.Error() != "no port 3 on mlx5_1 (ports: 1, 2)" {
		t.Errorf("err = %v", err)
	}
	_, err = (&Host{Sys: ibverbs.Open(t.TempDir())}).Load(Selector{}, LoadOptions{})
	var env *EnvError
	if !errors.As(err, &env) || !strings.Contains(err.Error(), "class/infiniband does not exist") {
		t.Errorf("no sysfs: %v", err)
	}
}

func TestLoadWarningsAndInterfaces(t *testing.T) {
	h := &Host{Sys: ibverbs.Open("../../testdata/sysfs/mlx5")}
	views, err := h.Load(Selector{}, LoadOptions{Tables: true, Interfaces: true})
	if err != nil {
		t.Fatal(err)
	}
	byRef := map[string]*PortView{}
	for _, v := range views {
		byRef[v.Ref().String()] = v
	}
	if got := len(views); got != 5 {
		t.Fatalf("%d ports", got)
	}
	p := byRef["mlx5_0/1"]
	var names []string
	for _, ip := range p.Interfaces {
		names = append(names, ip.Name)
	}
	if strings.Join(names, " ") != "ib0 ib0.8001 ib0.8002 ib0.8004" {
		t.Errorf("interfaces on mlx5_0/1: %v", names)
	}
	if p.Table.Entries[1].Interfaces[0] != "ib0.8001" || p.Interfaces[2].Membership != check.Limited || p.Interfaces[3].Index != -1 {
		t.Errorf("interface mapping: %+v", p.Interfaces)
	}
	wantWarn := map[string][]string{
		"mlx5_0/1": {"ib0.8002 shows P_Key 0x8002", "runs as a limited member", "ib0.8004 uses P_Key 0x8004", "cannot come up"},
		"mlx5_1/1": {"1 P_Key entry could not be read: 3"},
		"mlx5_1/2": {"is DOWN", "ARMED or ACTIVE"},
		"mlx5_2/1": {"RoCE"},
	}
	for ref, wants := range wantWarn {
		all := strings.Join(byRef[ref].Warnings, "\n")
		for _, w := range wants {
			if !strings.Contains(all, w) {
				t.Errorf("%s warnings %q: want %q", ref, all, w)
			}
		}
	}
	if w := byRef["irdma0/1"]; w.Table != nil || !strings.Contains(w.TableMissing, "iWARP") {
		t.Errorf("iWARP: %+v", w)
	}
	if len(byRef["mlx5_1/1"].Interfaces) != 1 {
		t.Errorf("ib1 sits on mlx5_1/1 (matched by GID 0, not by name)")
	}
}

// TestNoDevicesTyped: a tree without the RDMA device class is ErrNoDevices (exit 3
// through *EnvError), names the missing directory, and names no flag unless the
// command gave its hint.
func TestNoDevicesTyped(t *testing.T) {
	dir := t.TempDir()
	for _, hint := range []string{"", "try --demo"} {
		h := &Host{Sys: ibverbs.Open(dir), NoDevicesHint: hint}
		_, err := h.Devices("")
		var env *EnvError
		if !errors.Is(err, ErrNoDevices) || !errors.As(err, &env) {
			t.Fatalf("hint %q: %v (%T), want ErrNoDevices in an *EnvError", hint, err, err)
		}
		msg := err.Error()
		if !strings.Contains(msg, dir+"/class/infiniband does not exist") {
			t.Errorf("hint %q: %q does not name the missing directory", hint, msg)
		}
		if strings.Contains(msg, "--") != (hint != "") {
			t.Errorf("hint %q: %q", hint, msg)
		}
	}
}

// TestSysfsNotADirectory: a file where the tree or a directory of it goes (--sysfs
// FILE) says what was expected, a directory shaped like /sys, in one line (before: "X:
// not a directory", no hint); exit 3 as a tree without devices.
func TestSysfsNotADirectory(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	classFile := filepath.Join(dir, "tree")
	for _, f := range []string{file, filepath.Join(classFile, "class")} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for root, want := range map[string]string{
		file:      "no RDMA devices: " + file + " is a file, not a directory shaped like /sys: expected one holding class/infiniband/DEV, as /sys, a saved tree or a test fixture does; try --demo",
		classFile: "no RDMA devices: " + classFile + " is not a directory shaped like /sys (" + classFile + "/class/infiniband: not a directory): expected one holding class/infiniband/DEV",
	} {
		_, err := (&Host{Sys: ibverbs.Open(root), NoDevicesHint: "try --demo"}).Devices("")
		var env *EnvError
		if !errors.As(err, &env) || !errors.Is(err, ErrNoDevices) || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v (%T)\nwant %s", root, err, err, want)
		}
	}
}

// partialReadHost is one port whose table has an unreadable entry (index 3) and IPoIB
// interfaces whose keys are: full in the table (ib0), only limited among the entries
// read (ib0.8002), in no entry read (ib0.8009); on a second port whose every entry was
// read, a key in no entry (ib1.8009).
func partialReadHost() fakesysfs.Host {
	const g0, g1 = 0x0002c90300c0ffe0, 0x0002c90300c0fff0
	p0 := fakesysfs.Port{Num: 1, State: "4: ACTIVE", PhysState: "5: LinkUp", LID: "0x3", SMLID: "0x1", LMC: "0", SMSL: "0",
		CapMask: "0x2651e848", Rate: "100 Gb/sec (4X EDR)", LinkLayer: "InfiniBand", GIDs: []string{fakesysfs.GID0(g0 + 1)},
		PKeys: fakesysfs.Table(16, "0xffff", "0x0002", "0x8001", "0x8005", "0x8006"), Counters: fakesysfs.IBCounters(nil)}
	p0.Unreadable = []int{3}
	p1 := p0
	p1.GIDs, p1.Unreadable = []string{fakesysfs.GID0(g1 + 1)}, nil
	ipoib := func(name, dev string, guid uint64, pkey, parent string) fakesysfs.NetIf {
		return fakesysfs.NetIf{Name: name, Device: dev, Type: "32", Address: fakesysfs.IPoIBAddress(0x1049, guid), PKey: pkey,
			Parent: parent, DevPort: "0", OperState: "up"}
	}
	return fakesysfs.Host{
		Devices: []fakesysfs.Device{
			{Name: "mlx5_0", NodeType: "1: CA", NodeGUID: fakesysfs.GUID(g0), NodeDesc: "a", Ports: []fakesysfs.Port{p0}},
			{Name: "mlx5_1", NodeType: "1: CA", NodeGUID: fakesysfs.GUID(g1), NodeDesc: "b", Ports: []fakesysfs.Port{p1}},
		},
		Net: []fakesysfs.NetIf{
			ipoib("ib0", "mlx5_0", g0+1, "0xffff", ""),
			ipoib("ib0.8002", "mlx5_0", g0+1, "0x8002", "ib0"),
			ipoib("ib0.8009", "mlx5_0", g0+1, "0x8009", "ib0"),
			ipoib("ib0.8006", "mlx5_0", g0+1, "0x8006", "ib0"),
			ipoib("ib1.8009", "mlx5_1", g1+1, "0x8009", ""),
		},
	}
}

// TestInterfacesOnPartialTable: not read is unknown, never "not in the table" (issue
// 28): an interface's entry is known only when the entries read decide it, and only a
// key absent from a wholly read table "cannot come up".
func TestInterfacesOnPartialTable(t *testing.T) {
	dir := t.TempDir()
	if err := fakesysfs.Write(dir, partialReadHost()); err != nil {
		t.Fatal(err)
	}
	views, err := (&Host{Sys: ibverbs.Open(dir)}).Load(Selector{}, LoadOptions{Tables: true, Interfaces: true})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]IPoIB{}
	warnings := ""
	for _, v := range views {
		for _, ip := range v.Interfaces {
			got[ip.Name] = ip
		}
		warnings += strings.Join(v.Warnings, "\n") + "\n"
	}
	for name, want := range map[string]struct {
		index   int
		member  check.Membership
		unknown string
	}{
		"ib0":      {0, check.Full, ""},
		"ib0.8002": {1, check.Limited, "a full entry may be among them"},
		"ib0.8009": {-1, 0, "it may be in one of them"},
		// Full at index 4, entry 3 not read: a full entry there would be the one
		// the kernel uses (FindPKey, wave 11): the membership is known, the index not.
		"ib0.8006": {4, check.Full, "a full entry there would be the one used"},
		"ib1.8009": {-1, 0, ""},
	} {
		ip := got[name]
		if ip.Index != want.index || ip.Index >= 0 && ip.Membership != want.member || (want.unknown == "") != (ip.Unknown == "") ||
			!strings.Contains(ip.Unknown, want.unknown) {
			t.Errorf("%s: index %d, membership %v, unknown %q; want %d, %v, %q", name, ip.Index, ip.Membership, ip.Unknown, want.index, want.member, want.unknown)
		}
	}
	for _, w := range []string{
		"ib0.8002 uses P_Key 0x8002: the mlx5_0/1 table holds it, but which entry it runs with (full or limited) is unknown",
		"ib0.8006 uses P_Key 0x8006: the mlx5_0/1 table holds it as a full member, but which entry it runs with is unknown",
		"ib0.8009 uses P_Key 0x8009: whether the mlx5_0/1 table holds it, and so whether it can come up, is unknown",
		"ib1.8009 uses P_Key 0x8009 (partition 0x0009), which is not in the mlx5_1/1 table: the interface cannot come up",
	} {
		if !strings.Contains(warnings, w) {
			t.Errorf("warnings lack %q:\n%s", w, warnings)
		}
	}
	if strings.Contains(warnings, "ib0.8009 uses P_Key 0x8009 (partition 0x0009), which is not") {
		t.Errorf("a key that may sit in an unread entry is said to be missing:\n%s", warnings)
	}
}

// TestDanglingDeviceLoad: one dangling class/infiniband entry leaves the others read.
// Load, LoadMany and NewSampler return what was read with a *PartialError naming the
// entry as a dangling link (not "does not exist").
func TestDanglingDeviceLoad(t *testing.T) {
	h := &Host{Sys: ibverbs.Open("../../testdata/sysfs/dangling")}
	views, err := h.Load(Selector{}, LoadOptions{Tables: true})
	var pe *PartialError
	if !errors.As(err, &pe) || len(views) != 2 || len(pe.Unread) != 1 || pe.Unread[0].What != "device scif0" || pe.Unread[0].Device != "scif0" || pe.Unread[0].Port != -1 ||
		!strings.Contains(pe.Error(), "is a symlink to ../../devices/virtual/infiniband/scif0, which does not exist (a dangling link)") {
		t.Fatalf("Load = %d views, %v", len(views), err)
	}
	views, err = h.LoadMany([]Selector{{}, {Device: "mlx4_0"}})
	if !errors.As(err, &pe) || len(views) != 2 || len(pe.Unread) != 1 {
		t.Errorf("LoadMany = %d views, %v", len(views), err)
	}
	s, err := NewSampler(h, nil, time.Now)
	if !errors.As(err, &pe) || s == nil || len(s.Ports) != 2 {
		t.Fatalf("NewSampler = %+v, %v", s, err)
	}
	if smp := s.Take(false); smp.Ports[0].Readings[0].Value != 5 {
		t.Errorf("sample = %+v", smp.Ports[0])
	}
	// Named, the device not read is not known (exit 4), as in a listing; never
	// missing (*NotFoundError, *EnvError: exit 3).
	for _, sel := range []Selector{{Device: "scif0"}, {Device: "scif0", Port: 1, HasPort: true}} {
		_, err := h.Load(sel, LoadOptions{Tables: true})
		var unknown *UnknownError
		if !errors.As(err, &unknown) || errors.As(err, new(*EnvError)) || errors.As(err, new(*NotFoundError)) ||
			!strings.HasPrefix(err.Error(), "not read: device scif0: ") {
			t.Errorf("Load(%+v) = %T %v, want an *UnknownError naming the device", sel, err, err)
		}
	}
	// Named, the one readable device is read whole.
	if _, err := h.Load(Selector{Device: "mlx4_0"}, LoadOptions{Tables: true}); err != nil {
		t.Errorf("Load(mlx4_0) = %v", err)
	}
}

// TestBadDeviceNameEntry: a class/infiniband entry that is not a device name (root
// can rename a device to any non-empty name: nldev_set_doit) is a device not read,
// named terminal-safe, beside the devices read; alone, it is not "no RDMA devices"
// (exit 3) but not known (exit 4). It was dropped in silence.
func TestBadDeviceNameEntry(t *testing.T) {
	tree := t.TempDir()
	if err := os.CopyFS(filepath.Join(tree, "devices"), os.DirFS("../../testdata/sysfs/dangling/devices")); err != nil {
		t.Fatal(err)
	}
	class := filepath.Join(tree, "class", "infiniband")
	if err := os.MkdirAll(class, 0o755); err != nil {
		t.Fatal(err)
	}
	const target = "../../devices/pci0000:00/0000:81:00.0/infiniband/mlx4_0"
	bad := "rx\x1be0"
	if err := os.Symlink(target, filepath.Join(class, bad)); err != nil {
		t.Fatal(err)
	}
	h := &Host{Sys: ibverbs.Open(tree)}
	_, err := h.Devices("")
	var unknown *UnknownError
	want := `not read: class/infiniband entry: "rx\x1be0": not a device name (contains a control character)`
	if !errors.As(err, &unknown) || errors.As(err, new(*EnvError)) || err.Error() != want || strings.Contains(err.Error(), "\x1b") {
		t.Errorf("Devices with only %q = %T %v, want an *UnknownError: %s", bad, err, err, want)
	}
	if err := os.Symlink(target, filepath.Join(class, "mlx4_0")); err != nil {
		t.Fatal(err)
	}
	devs, err := h.Devices("")
	var pe *PartialError
	if !errors.As(err, &pe) || len(devs) != 1 || devs[0].Name != "mlx4_0" || len(pe.Unread) != 1 ||
		pe.Unread[0].Device != `rx\x1be0` || pe.Unread[0].Port != -1 {
		t.Errorf("Devices = %d devices, %v", len(devs), err)
	}
	// Named, a good device is read whole and the bad entry is not its business.
	if devs, err := h.Devices("mlx4_0"); err != nil || len(devs) != 1 {
		t.Errorf("Devices(mlx4_0) = %d devices, %v", len(devs), err)
	}
}

// TestPartialErrorLines: a few unread parts are named, the rest counted.
func TestPartialErrorLines(t *testing.T) {
	pe := &PartialError{}
	for i := range 5000 {
		pe.Unread = append(pe.Unread, Unread{What: fmt.Sprintf("device d%d", i), Err: errors.New("gone")})
	}
	lines := pe.Lines()
	if len(lines) != MaxListed+1 || lines[MaxListed] != "and 4995 more (every one is in -o json's incomplete)" || len(pe.Error()) > 400 {
		t.Errorf("Lines = %q\nError = %.500s", lines, pe.Error())
	}
	pe.Unread = pe.Unread[:MaxListed+1] // one more than MaxListed: named, not counted
	if lines := pe.Lines(); len(lines) != MaxListed+1 || !strings.HasPrefix(lines[MaxListed], "device d5") {
		t.Errorf("Lines = %q", lines)
	}
}

// TestTableAbsentOrNotRead: an iWARP port has no table ("none", a definite not-found);
// an InfiniBand port whose pkeys/ is missing has a table that was not read.
func TestTableAbsentOrNotRead(t *testing.T) {
	h := &Host{Sys: ibverbs.Open("../../testdata/sysfs/odd")}
	views, err := h.Load(Selector{}, LoadOptions{Tables: true})
	if err != nil || len(views) != 3 {
		t.Fatalf("Load = %d, %v", len(views), err)
	}
	iw, ib := views[0], views[2]
	if iw.Ref().String() != "cxgb4_0/1" || !iw.TableAbsent || iw.Table != nil || !strings.Contains(iw.TableMissing, "iWARP") {
		t.Errorf("iWARP: %+v", iw)
	}
	if ib.Ref().String() != "mlx4_0/2" || ib.TableAbsent || ib.Table != nil || !strings.Contains(ib.TableMissing, "P_Key table not read") {
		t.Errorf("InfiniBand without pkeys/: %+v", ib)
	}
	if r := FindPKey(iw, 0x8001); r.Outcome != FindNotFound {
		t.Errorf("FindPKey on iWARP = %+v", r)
	}
	if r := FindPKey(ib, 0x8001); r.Outcome != FindNoTable {
		t.Errorf("FindPKey on a table not read = %+v", r)
	}
	// A port without a table is a definite no (exit 1), a table not read is not (4):
	// pkeys --find's TestJSONIncomplete.
}

// TestNotRead: the one rule for what a read of the host did not read lists the devices
// a *PartialError names, then each table not read (never an iWARP port's absent one)
// and each port's entries not read; any other error is fatal.
func TestNotRead(t *testing.T) {
	for _, tc := range []struct {
		tree string
		want []string
	}{
		{"dangling", []string{"not read: device scif0: "}},
		{"odd", []string{"mlx4_0/2: P_Key table not read: pkeys/ does not exist"}},
		{"mlx5", []string{"mlx5_1/1: 1 P_Key table entry could not be read (index 3)"}},
	} {
		views, err := (&Host{Sys: ibverbs.Open("../../testdata/sysfs/" + tc.tree)}).Load(Selector{}, LoadOptions{Tables: true})
		unread, err := NotRead(views, err)
		var got []string
		for _, u := range unread {
			got = append(got, u.Message())
		}
		if err != nil || len(got) != len(tc.want) {
			t.Errorf("%s: NotRead = %q, %v; want %q", tc.tree, got, err, tc.want)
			continue
		}
		for i, w := range tc.want {
			if !strings.HasPrefix(got[i], w) {
				t.Errorf("%s: NotRead[%d] = %q, want %q...", tc.tree, i, got[i], w)
			}
		}
	}
	boom := &EnvError{Msg: "boom"}
	if unread, err := NotRead(nil, boom); err != boom || unread != nil {
		t.Errorf("NotRead(EnvError) = %v, %v; want it fatal", unread, err)
	}
}

// oddTree copies testdata/sysfs/mlx5 to a temp dir and breaks it with damage (run
// with the copy's root and mlx5_0's PCI directory below it).
func oddTree(t *testing.T, damage func(root, dev0 string) error) *Host {
	t.Helper()
	root := filepath.Join(t.TempDir(), "mlx5")
	if out, err := exec.Command("cp", "-a", "../../testdata/sysfs/mlx5", root).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	if err := damage(root, filepath.Join(root, "devices/pci0000:00/0000:03:00.0")); err != nil {
		t.Fatal(err)
	}
	return &Host{Sys: ibverbs.Open(root)}
}

// TestInterfacesNotRead: an IPoIB interface that could not be read (a dangling
// class/net link, a type file that cannot be read) or matched (a port's GID 0 not
// read) is named as not read (PartialError: exit 4), never left out (red-team
// finding 3).
func TestInterfacesNotRead(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(root, dev0 string) error
		want   string
	}{
		{"dangling", func(_, dev0 string) error { return os.RemoveAll(dev0 + "/net/ib0.8002") },
			"interface ib0.8002: " /* the reason follows */},
		{"type unreadable", func(_, dev0 string) error {
			f := dev0 + "/net/ib0.8004/type"
			return errors.Join(os.Remove(f), os.Symlink("type", f))
		}, "interface ib0.8004: "},
		{"gid0 missing", func(_, dev0 string) error { return os.Remove(dev0 + "/infiniband/mlx5_0/ports/1/gids/0") },
			"interface ib0.8004: not matched: GID 0 of mlx5_0/1 (gids/0: does not exist) not read"},
	} {
		h := oddTree(t, tc.damage)
		views, err := h.Load(Selector{Device: "mlx5_0"}, LoadOptions{Tables: true, Interfaces: true})
		var pe *PartialError
		if !errors.As(err, &pe) || len(views) != 1 || !strings.Contains(pe.Error(), tc.want) {
			t.Errorf("%s: Load = %d views, %v; want a PartialError with %q", tc.name, len(views), err, tc.want)
		}
	}
	h := oddTree(t, func(_, dev0 string) error { return os.Remove(dev0 + "/infiniband/mlx5_0/ports/1/gids/0") })
	_, _, err := h.ResolveDeviceOrInterface(Selector{Device: "ib0.8004"}, func(string) {})
	var ue *UnknownError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "GID 0 of mlx5_0/1") {
		t.Errorf("pkeys ib0.8004 with GID 0 not read: %v, want an UnknownError naming GID 0", err)
	}
}

// TestNotReadIsUnknown: a port, entry or table that exists and was not read is an
// *UnknownError (exit 4) when it is the answer, as in a listing, never an *EnvError
// (exit 3, which is for what does not exist) (red-team finding 8).
func TestNotReadIsUnknown(t *testing.T) {
	var ue *UnknownError
	h := oddTree(t, func(_, dev0 string) error {
		return os.WriteFile(dev0+"/infiniband/mlx5_0/ports/1/state", []byte("garbage\n"), 0o644)
	})
	if _, err := h.Load(Selector{Device: "mlx5_0"}, LoadOptions{Tables: true}); !errors.As(err, &ue) {
		t.Errorf("a port whose state is unparsable, its device named: %T %v", err, err)
	}
	// Named as in a listing: "not read: port mlx5_0/1: ...".
	if _, err := h.Load(Selector{Device: "mlx5_0", Port: 1, HasPort: true}, LoadOptions{Tables: true}); !errors.As(err, &ue) || !strings.HasPrefix(err.Error(), "not read: port mlx5_0/1: ") {
		t.Errorf("a port whose state is unparsable, named: %T %v", err, err)
	}
	h = &Host{Sys: ibverbs.Open("../../testdata/sysfs/mlx5")}
	idx, full := 3, check.DefaultFull
	// An entry index= pins that was not read: the endpoint carries it, and the
	// verdict is unknown (as for a table not read). The other end holds a valid key:
	// key 0 matches nothing, a no whatever the entry holds.
	eps, err := ResolveEndpointsFrom(EndpointSources{Host: func() *Host { return h }},
		check.EndpointSpec{Kind: check.EndpointPort, Device: "mlx5_1", Port: 1, Index: &idx}, check.EndpointSpec{Kind: check.EndpointPKey, PKey: &full})
	if err != nil || !strings.Contains(eps[0].Endpoint.EntryNotRead, "entry 3 could not be read") || CanTalk(eps[0], eps[1]).Kind != check.VerdictUnknown {
		t.Errorf("index= of an entry not read: %T %v", err, err)
	}
}

// TestUnreadWarningGrouped: the unreadable-entries warning groups indexes by reason as
// ranges and caps the groups (red-team finding 9b: a stray pkeys/65535 made one line
// of 2.2 MB, one "N (reason)" per missing index).
func TestUnreadWarningGrouped(t *testing.T) {
	raw := make([]ibverbs.PKeyEntry, 65536)
	missing := errors.New("file missing from pkeys/")
	for i := range raw {
		raw[i] = ibverbs.PKeyEntry{Index: i, Err: missing}
	}
	raw[0] = ibverbs.PKeyEntry{Index: 0, Value: 0xffff}
	raw[65535] = ibverbs.PKeyEntry{Index: 65535, Value: 0x8001}
	raw[7].Err = errors.New("read failed: invalid argument")
	for i := 100; i < 120; i += 2 {
		raw[i].Err = fmt.Errorf("odd reason %d", i) // 10 reasons more: capped
	}
	v := &PortView{Port: &ibverbs.Port{Device: "rxe0", Num: 1, State: ibverbs.Enum{Num: ibverbs.StateActive}}, Table: DecodeTable(raw)}
	w := strings.Join(portWarnings(v), "\n")
	// 12 ranges for the first reason (8 shown), 12 reasons (5 shown).
	want := "rxe0/1: 65534 P_Key entries could not be read: 1-6, 8-99, 101, 103, 105, 107, 109, 111, and 4 more (file missing from pkeys/), 7 (read failed: invalid argument), 100 (odd reason 100), 102 (odd reason 102), 104 (odd reason 104), and 7 more"
	if w != want {
		t.Errorf("warning:\n%s\nwant:\n%s", w, want)
	}
}

// TestCarrier: an interface whose key the table holds as a full member and that is up
// without carrier is a warning naming the broadcast group and what to run (on a port
// that is not ACTIVE: that); one the user took down is not; flags, carrier and
// operstate not read are named, never taken as up or down (operstate "down" alone
// does not tell down from no carrier: net-sysfs.c operstate_show).
func TestCarrier(t *testing.T) {
	const g0, g1, g2 = 0x0002c90300c0ffe0, 0x0002c90300c0fff0, 0x0002c90300c0ff00
	p0 := fakesysfs.Port{Num: 1, State: "4: ACTIVE", PhysState: "5: LinkUp", LID: "0x3", SMLID: "0x1", LMC: "0", SMSL: "0",
		CapMask: "0x2651e848", Rate: "100 Gb/sec (4X EDR)", LinkLayer: "InfiniBand", GIDs: []string{fakesysfs.GID0(g0 + 1)},
		PKeys: fakesysfs.Table(16, "0xffff", "0x8001", "0x0002", "0x8005", "0x8006", "0x8007", "0x8008", "0x8009", "0x800a")}
	p1 := p0
	p1.State, p1.GIDs, p1.PKeys = "2: INIT", []string{fakesysfs.GID0(g1 + 1)}, fakesysfs.Table(16, "0xffff", "0x8001")
	p2 := p0
	p2.GIDs = []string{fakesysfs.GID0(g2 + 1)}
	nif := func(name string, guid uint64, pkey, flags, carrier, oper string, unreadable ...string) fakesysfs.NetIf {
		parent, _, _ := strings.Cut(name, ".")
		if parent == name {
			parent = ""
		}
		return fakesysfs.NetIf{Name: name, Parent: parent, Device: "mlx5_0", Type: "32", Address: fakesysfs.IPoIBAddress(0x1049, guid), PKey: pkey,
			DevPort: "0", Flags: flags, Carrier: carrier, OperState: oper, Unreadable: unreadable}
	}
	h := fakesysfs.Host{
		Devices: []fakesysfs.Device{
			{Name: "mlx5_0", NodeType: "1: CA", NodeGUID: fakesysfs.GUID(g0), NodeDesc: "a", Ports: []fakesysfs.Port{p0}},
			{Name: "mlx5_1", NodeType: "1: CA", NodeGUID: fakesysfs.GUID(g1), NodeDesc: "b", Ports: []fakesysfs.Port{p1}},
			{Name: "mlx5_2", NodeType: "1: CA", NodeGUID: fakesysfs.GUID(g2), NodeDesc: "c", Ports: []fakesysfs.Port{p2}},
		},
		Net: []fakesysfs.NetIf{
			nif("ib0", g0+1, "0xffff", "0x1003", "1", "up"),
			// A child without carrier whose parent has carrier: "down" (link_watch.c).
			nif("ib0.8001", g0+1, "0x8001", "0x1003", "0", "down"),
			// Limited: its own warning says so, not this one.
			nif("ib0.8002", g0+1, "0x8002", "0x1003", "0", "lowerlayerdown"),
			// Taken down by the user: carrier fails (EINVAL in the kernel).
			nif("ib0.8005", g0+1, "0x8005", "0x1002", "", "down", "carrier"),
			// Older kernels and trees without flags/carrier: operstate decides.
			nif("ib0.8006", g0+1, "0x8006", "", "", "lowerlayerdown"),
			nif("ib0.8007", g0+1, "0x8007", "", "", "down"),
			nif("ib0.8008", g0+1, "0x8008", "", "", "", "flags"),
			nif("ib0.8009", g0+1, "0x8009", "0x1003", "", "unknown", "carrier"),
			nif("ib0.800a", g0+1, "0x800a", "0x1003", "yes", ""),
			// Not in the table: "cannot come up" only.
			nif("ib0.8004", g0+1, "0x8004", "0x1003", "0", "down"),
			nif("ib1.8001", g1+1, "0x8001", "0x1003", "0", "lowerlayerdown"),
			// A child without carrier whose parent the user took down.
			nif("ib2", g2+1, "0xffff", "0x1002", "", "down", "carrier"),
			nif("ib2.8001", g2+1, "0x8001", "0x1003", "0", "lowerlayerdown"),
		},
	}
	dir := t.TempDir()
	if err := fakesysfs.Write(dir, h); err != nil {
		t.Fatal(err)
	}
	views, err := (&Host{Sys: ibverbs.Open(dir)}).Load(Selector{}, LoadOptions{Tables: true, Interfaces: true})
	if err != nil {
		t.Fatal(err)
	}
	got, warn := map[string]IPoIB{}, map[string][]string{}
	for _, v := range views {
		for _, ip := range v.Interfaces {
			got[ip.Name] = ip
		}
		for _, w := range v.Warnings {
			name, _, _ := strings.Cut(w, " ")
			name = strings.TrimSuffix(name, ":")
			warn[name] = append(warn[name], w)
		}
	}
	const unknown = -1
	for name, want := range map[string]struct {
		admin, carrier int // 0, 1, or unknown
		warning        []string
	}{
		"ib0":      {1, 1, nil},
		"ib0.8001": {1, 0, []string{"ib0.8001 is up without carrier though the mlx5_0/1 table holds P_Key 0x8001 (index 1): IPoIB gets carrier only once it joined the broadcast group ff12:401b:8001::ffff:ffff", "partitions.conf gives partition 0x0001 no ipoib flag", "run 'ibkey partitions check FILE' and 'ibkey sm log' (ERR 1B11)"}},
		"ib0.8002": {1, 0, []string{"runs as a limited member"}},
		"ib0.8005": {0, unknown, nil},
		"ib0.8006": {1, 0, []string{"ib0.8006 is up without carrier"}},
		"ib0.8007": {unknown, unknown, []string{`ib0.8007: whether it is up and has carrier is unknown (not read: flags: does not exist; operstate "down" fits both a down interface and one without carrier)`}},
		"ib0.8008": {unknown, unknown, []string{"ib0.8008: whether it is up and has carrier is unknown (not read: flags: ", "; operstate: does not exist)"}},
		"ib0.8009": {1, unknown, []string{`ib0.8009 is up; whether it has carrier is unknown (not read: carrier: `, `; operstate is "unknown")`}},
		"ib0.800a": {1, unknown, []string{"ib0.800a is up; whether it has carrier is unknown (not read: carrier: unparsable: not 0 or 1; operstate: does not exist)"}},
		"ib0.8004": {1, 0, []string{"cannot come up"}},
		"ib1.8001": {1, 0, []string{"ib1.8001 is up without carrier: mlx5_1/1 is INIT, and IPoIB joins its broadcast group, which turns carrier on, only on an ACTIVE port"}},
		"ib2":      {0, unknown, nil},
		"ib2.8001": {1, 0, []string{"ib2.8001 is up without carrier, and its parent ib2 is down: on some devices a child does not work while its parent is down (kernel ipoib_main.c ipoib_open); bring ib2 up first"}},
	} {
		ip, ok := got[name]
		if !ok {
			t.Errorf("%s not read", name)
			continue
		}
		tri := func(o ibverbs.Opt[bool]) int {
			switch {
			case !o.OK():
				return unknown
			case o.Value:
				return 1
			}
			return 0
		}
		if tri(ip.AdminUp) != want.admin || tri(ip.Carrier) != want.carrier {
			t.Errorf("%s: admin %+v carrier %+v; want %d, %d", name, ip.AdminUp, ip.Carrier, want.admin, want.carrier)
		}
		ws := warn[name]
		if len(want.warning) == 0 && len(ws) != 0 || len(want.warning) != 0 && len(ws) != 1 {
			t.Errorf("%s: warnings %q; want one holding %q", name, ws, want.warning)
			continue
		}
		for _, s := range want.warning {
			if !strings.Contains(ws[0], s) {
				t.Errorf("%s: warning %q lacks %q", name, ws[0], s)
			}
		}
	}
}
