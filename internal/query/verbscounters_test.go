package query

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fakesysfs"
	"github.com/ibkey/ibkey/internal/ibverbs"
	"github.com/ibkey/ibkey/internal/ibverbs/verbs"
)

// fakeVerbs is a libibverbs with settable counters per device/port.
type fakeVerbs struct {
	mu     sync.Mutex
	attrs  map[PortRef]verbs.PortAttr
	opened map[string]int
	fail   map[string]error
	query  map[string]error // ibv_query_port's error on a device (EIO once it is removed)
	// maxPKeys is ibv_query_device's max_pkeys per device; a device not in it fails
	// the query.
	maxPKeys map[string]uint16
	closed   int // devices closed
}

func (f *fakeVerbs) OpenDevice(name string) (VerbsDevice, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.fail[name]; err != nil {
		return nil, err
	}
	f.opened[name]++
	return fakeVerbsDev{f, name}, nil
}

func (f *fakeVerbs) Close() error { return nil }

func (f *fakeVerbs) set(dev string, port int, bad, qkey uint32) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.attrs[PortRef{dev, port}] = verbs.PortAttr{State: 4, BadPKeyCntr: bad, QKeyViolCntr: qkey}
}

type fakeVerbsDev struct {
	f    *fakeVerbs
	name string
}

func (d fakeVerbsDev) QueryPort(port int) (verbs.PortAttr, error) {
	d.f.mu.Lock()
	defer d.f.mu.Unlock()
	if err := d.f.query[d.name]; err != nil {
		return verbs.PortAttr{}, err
	}
	a, ok := d.f.attrs[PortRef{d.name, port}]
	if !ok {
		return a, errors.New("ibv_query_port: invalid argument")
	}
	return a, nil
}

func (d fakeVerbsDev) QueryDevice() (verbs.DeviceAttr, error) {
	d.f.mu.Lock()
	defer d.f.mu.Unlock()
	m, ok := d.f.maxPKeys[d.name]
	if !ok {
		return verbs.DeviceAttr{}, &verbs.CallError{Call: "ibv_query_device " + d.name, Errno: syscall.EOPNOTSUPP}
	}
	return verbs.DeviceAttr{MaxPKeys: m, PhysPortCnt: 1}, nil
}

func (d fakeVerbsDev) Close() error {
	d.f.mu.Lock()
	defer d.f.mu.Unlock()
	d.f.closed++
	return nil
}

func newFakeVerbs() *fakeVerbs {
	return &fakeVerbs{attrs: map[PortRef]verbs.PortAttr{}, opened: map[string]int{}, fail: map[string]error{}, query: map[string]error{}}
}

// TestVerbsSourceDeltas: the verbs source feeds the sampler's violation counters, the
// tracker turns them into deltas, and a counter stuck at 0xffff (rdma_rxe caps them
// there) is saturated, not "no change".
func TestVerbsSourceDeltas(t *testing.T) {
	f := newWatchFixture(t)
	h := &Host{Sys: ibverbs.Open(f.dir)}
	s, err := NewSampler(h, nil, f.clock)
	if err != nil {
		t.Fatal(err)
	}
	fv := newFakeVerbs()
	fv.fail["mlx5_9"] = errors.New("verbs: open mlx5_9: no such file or directory (can this user read and write its /dev/infiniband/uverbsN?)")
	fv.set("mlx5_0", 1, 0, 3)
	fv.set("mlx5_0", 2, 5, 0)
	s.PreferVerbs(NewVerbsCounters(fv, nil))
	tr := NewTracker()
	get := func(snap *Snapshot, ref PortRef, name string) CounterDelta {
		t.Helper()
		for _, p := range snap.Ports {
			if p.Ref != ref {
				continue
			}
			for _, c := range p.Counters {
				if c.Name == name {
					return c
				}
			}
		}
		t.Fatalf("no %s on %s", name, ref)
		return CounterDelta{}
	}
	tr.Add(s.Take(false))
	fv.set("mlx5_0", 1, 0, 10)
	fv.set("mlx5_0", 2, 0xffff, 0)
	f.now = f.now.Add(2e9)
	snap := tr.Add(s.Take(false))
	q := get(snap, PortRef{"mlx5_0", 1}, QKeyViolations)
	if q.Source != SourceVerbs || !q.HasDelta || q.Delta != 7 || q.Value != 10 {
		t.Errorf("mlx5_0/1 qkey: %+v, want verbs, value 10, delta 7", q)
	}
	p := get(snap, PortRef{"mlx5_0", 2}, PKeyViolations)
	if !p.Saturated || p.Value != 0xffff {
		t.Errorf("mlx5_0/2 pkey at 0xffff: %+v, want saturated", p)
	}
	f.now = f.now.Add(2e9)
	snap = tr.Add(s.Take(false))
	if p := get(snap, PortRef{"mlx5_0", 2}, PKeyViolations); p.HasDelta {
		t.Errorf("mlx5_0/2 pkey still at 0xffff: %+v, want no delta (the real count is unknown)", p)
	}
	// A device verbs cannot open: n/a naming both sources, never 0.
	n := get(snap, PortRef{"mlx5_9", 1}, QKeyViolations)
	if n.Unavailable == "" || !strings.Contains(n.Unavailable, "verbs: verbs: open mlx5_9") || !strings.Contains(n.Unavailable, SourcePortInfo) {
		t.Errorf("mlx5_9/1 qkey: %+v, want n/a naming verbs and smp portinfo", n)
	}
	if fv.opened["mlx5_0"] != 1 {
		t.Errorf("mlx5_0 opened %d times, want once for the whole watch", fv.opened["mlx5_0"])
	}
	// M_KeyViolations is not in ibv_query_port: it falls back to the PortInfo source.
	snap = tr.Add(s.Take(true))
	m := get(snap, PortRef{"mlx5_0", 1}, MKeyViolations)
	if m.Unavailable == "" || !strings.Contains(m.Unavailable, "not in ibv_query_port") {
		t.Errorf("mkey: %+v, want n/a saying ibv_query_port lacks it", m)
	}
}

// TestPreferredFallsBack: what the first source cannot read comes from the second,
// labelled with the second's name.
func TestPreferredFallsBack(t *testing.T) {
	p := Preferred{First: &NoPortInfoSource{Label: "verbs", Reason: "no library"}, Then: constSource{"smp portinfo", 42}}
	out := make([]Reading, 2)
	p.Read(PortRef{"x", 1}, []string{PKeyViolations, QKeyViolations}, out)
	for _, r := range out {
		if r.Value != 42 || r.Source != "smp portinfo" || r.Unavailable != "" {
			t.Errorf("reading %+v, want 42 from smp portinfo", r)
		}
	}
	if p.Name() != "verbs" {
		t.Errorf("Name = %q", p.Name())
	}
}

type constSource struct {
	label string
	v     uint64
}

func (c constSource) Name() string { return c.label }
func (c constSource) Read(_ PortRef, _ []string, out []Reading) {
	for i := range out {
		out[i] = Reading{Value: c.v}
	}
}

func TestVerbsUnavailable(t *testing.T) {
	v := NewVerbsCounters(nil, &verbs.UnavailableError{Reason: "cannot load libibverbs.so.1"})
	out := make([]Reading, 1)
	v.Read(PortRef{"rxe0", 1}, []string{QKeyViolations}, out)
	if !strings.Contains(out[0].Unavailable, "cannot load libibverbs.so.1") {
		t.Errorf("reading %+v, want n/a with the reason", out[0])
	}
}

// TestRxeFixture: the tree Linux 6.1 writes for rdma_rxe (testdata/sysfs/rxe, saved in
// the kernel lab): one Ethernet port, one P_Key, no counters/ (so the constraint
// counters are n/a, never 0), and the verbatim Q_Key rule; can-talk between two QPs on
// it with a top-bit wr_qkey follows that rule and says so.
func TestRxeFixture(t *testing.T) {
	h := &Host{Sys: ibverbs.Open(filepath.Join("..", "..", "testdata", "sysfs", "rxe"))}
	views, err := h.Load(Selector{}, LoadOptions{Tables: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(views) != 1 || views[0].Ref() != (PortRef{"rxe0", 1}) || views[0].LinkLayer() != "Ethernet" {
		t.Fatalf("views %+v, want rxe0/1 on Ethernet", views)
	}
	v := views[0]
	if v.Table == nil || len(v.Table.Entries) != 1 || v.Table.Entries[0].PKey != 0xffff {
		t.Errorf("table %+v, want one entry 0xffff", v.Table)
	}
	if _, err := os.Stat(filepath.Join(h.Sys.Root, "class", "infiniband", "rxe0", "ports", "1", "hw_counters")); v.Port.HasCounters || err != nil {
		t.Errorf("counters/ there, or hw_counters/ %v: rxe has only hw_counters/", err)
	}
	if rule, why := QKeyRuleOf(h.Sys, v); rule != check.QKeyRuleVerbatim || !strings.Contains(why, "dummy0") {
		t.Errorf("QKeyRuleOf = %v (%s), want the verbatim rule", rule, why)
	}
	s, err := NewSampler(h, nil, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	smp := s.Take(false)
	for i, c := range smp.Counters {
		if r := smp.Ports[0].Readings[i]; r.Unavailable == "" {
			t.Errorf("%s (%s) = %+v on rxe without a verbs source: want n/a", c.Name, c.Source.Name(), r)
		}
	}
	a, err := check.ParseEndpoint("rxe0/1,qp=ud,qkey=0x11,wr_qkey=0x80000011")
	if err != nil {
		t.Fatal(err)
	}
	b, err := check.ParseEndpoint("rxe0/1,qp=ud,qkey=0x11")
	if err != nil {
		t.Fatal(err)
	}
	res, err := ResolveEndpointsFrom(EndpointSources{Host: func() *Host { return h }}, a, b)
	if err != nil {
		t.Fatal(err)
	}
	vd := check.CanTalk(res[0].Endpoint, res[1].Endpoint)
	if vd.AToB.OK || !strings.Contains(strings.Join(vd.AToB.Reasons, " "), "verbatim rule") || !vd.BToA.OK {
		t.Errorf("can-talk on rxe with wr_qkey 0x80000011: A→B %+v B→A ok=%v; want A→B dropped under the verbatim rule (measured), B→A fine", vd.AToB, vd.BToA.OK)
	}
}

// TestLocalVerbs: verbs read the running kernel, so only the real /sys gets them.
func TestLocalVerbs(t *testing.T) {
	for _, h := range []*Host{
		{Sys: ibverbs.Open(mlx5Fixture)},
		{Sys: ibverbs.Open("/sys"), Label: "demo host"},
	} {
		if v := LocalVerbs(h); v != nil {
			t.Errorf("%s (label %q): a verbs source for a host that is not this kernel", h.Sys.Root, h.Label)
		}
	}
	v := LocalVerbs(&Host{Sys: ibverbs.Open("/sys/")})
	if v == nil {
		t.Fatal("no verbs source for /sys")
	}
	defer v.Close()
	// Here there may be no libibverbs or no RDMA stack: then a reason, never a value.
	out := make([]Reading, 1)
	v.Read(PortRef{Device: "nosuchdev0", Port: 1}, []string{QKeyViolations}, out)
	if out[0].Unavailable == "" && out[0].Err == "" {
		t.Errorf("a device that does not exist read as %+v", out[0])
	}
}

// TestVerbsFollowsDevice: a long-running reader (the exporter) follows a device that
// comes later or is removed and comes back: a device that could not be opened is opened
// at the next read, and one whose query fails as a removed device's (EIO: rdma-core's
// disassociated context) is closed and opened again; any other query error keeps it.
func TestVerbsFollowsDevice(t *testing.T) {
	fv := newFakeVerbs()
	fv.set("mlx5_0", 1, 3, 5)
	fv.fail["mlx5_0"] = errors.New("verbs: open mlx5_0: permission denied")
	v := NewVerbsCounters(fv, nil)
	read := func() Reading {
		out := make([]Reading, 1)
		v.Read(PortRef{Device: "mlx5_0", Port: 1}, []string{PKeyViolations}, out)
		return out[0]
	}
	if r := read(); !strings.Contains(r.Unavailable, "permission denied") {
		t.Fatalf("device not opened: %+v", r)
	}
	delete(fv.fail, "mlx5_0") // the device plugin gives the container its device
	if r := read(); r.Value != 3 || r.Unavailable != "" || r.Err != "" || fv.opened["mlx5_0"] != 1 {
		t.Fatalf("device opened later: %+v, opened %d", r, fv.opened["mlx5_0"])
	}
	fv.query["mlx5_0"] = &verbs.CallError{Call: "ibv_query_port mlx5_0/1", Errno: syscall.EINVAL}
	if r := read(); r.Err == "" || read().Err == "" || fv.opened["mlx5_0"] != 1 {
		t.Fatalf("EINVAL: %+v, opened %d (want the device kept)", r, fv.opened["mlx5_0"])
	}
	fv.query["mlx5_0"] = &verbs.CallError{Call: "ibv_query_port mlx5_0/1", Errno: syscall.EIO}
	if r := read(); !strings.Contains(r.Err, "input/output error") {
		t.Fatalf("removed device: %+v", r)
	}
	delete(fv.query, "mlx5_0") // the driver is back
	fv.set("mlx5_0", 1, 0, 0)  // with counters from 0
	if r := read(); r.Value != 0 || r.Err != "" || fv.opened["mlx5_0"] != 2 {
		t.Fatalf("after the device came back: %+v, opened %d (want opened again)", r, fv.opened["mlx5_0"])
	}
}

// TestVerbsCountsByDriver: on an Ethernet link layer ibv_query_port reports 0 for a
// counter nothing counts, so only the drivers known to count one give a value:
// rdma_rxe both (rxe_recv.c check_keys), mlx5 the Q_Key violations
// (mlx5_query_port_roce) where the port has a GID table; mlx5's P_Key violations, its
// Q_Key violations on a port without a GID table (a representor, RoCE disabled) and
// iWARP's are absent, another driver's are not known (not read, never 0). On
// InfiniBand every driver counts both.
func TestVerbsCountsByDriver(t *testing.T) {
	fv := newFakeVerbs()
	for _, dev := range []string{"rxe0", "mlx5_2", "mlx5_3", "irdma0", "bnxt_re0", "mlx5_0"} {
		fv.set(dev, 1, 4, 6)
		if dev != "mlx5_0" {
			a := fv.attrs[PortRef{dev, 1}]
			a.LinkLayer = 2
			if dev != "mlx5_3" { // mlx5_3: a representor, or RoCE disabled: no GID table
				a.GIDTblLen = 256
			}
			fv.attrs[PortRef{dev, 1}] = a
		}
	}
	v := NewVerbsCounters(fv, nil)
	asked := map[string]int{}
	v.Driver = func(dev string) (string, bool) {
		asked[dev]++
		return map[string]string{"rxe0": "rdma_rxe", "mlx5_2": "mlx5_core", "mlx5_3": "mlx5_core", "irdma0": "irdma", "bnxt_re0": "bnxt_en"}[dev], dev == "irdma0"
	}
	type want struct {
		pkey, qkey string // the value, "absent" or "unknown"
	}
	for dev, w := range map[string]want{
		"rxe0": {"4", "6"}, "mlx5_2": {"absent", "6"}, "mlx5_3": {"absent", "absent"}, "irdma0": {"absent", "absent"}, "bnxt_re0": {"unknown", "unknown"}, "mlx5_0": {"4", "6"},
	} {
		out := make([]Reading, 2)
		v.Read(PortRef{dev, 1}, []string{PKeyViolations, QKeyViolations}, out)
		for i, w := range []string{w.pkey, w.qkey} {
			got := fmt.Sprint(out[i].Value)
			switch {
			case out[i].Unavailable != "" && out[i].Absent:
				got = "absent"
			case out[i].Unavailable != "":
				got = "unknown"
			}
			if got != w {
				t.Errorf("%s %d: %s (%+v), want %s", dev, i, got, out[i], w)
			}
		}
	}
	// Driver reads sysfs: asked once per open device (the loop read each device once
	// per counter set), never for an InfiniBand port; again once a removed device is
	// opened anew.
	out := make([]Reading, 2)
	v.Read(PortRef{"mlx5_2", 1}, []string{PKeyViolations, QKeyViolations}, out)
	fv.query["mlx5_2"] = &verbs.CallError{Call: "ibv_query_port mlx5_2/1", Errno: syscall.EIO}
	v.Read(PortRef{"mlx5_2", 1}, []string{PKeyViolations, QKeyViolations}, out)
	delete(fv.query, "mlx5_2")
	v.Read(PortRef{"mlx5_2", 1}, []string{PKeyViolations, QKeyViolations}, out)
	if fmt.Sprint(asked) != "map[bnxt_re0:1 irdma0:1 mlx5_2:2 mlx5_3:1 rxe0:1]" {
		t.Errorf("Driver asked %v", asked)
	}
	// A PCI device's driver, as the kernel links it: device/driver.
	pci := t.TempDir()
	if err := os.CopyFS(pci, os.DirFS(mlx5Fixture)); err != nil {
		t.Fatal(err)
	}
	dev := filepath.Join(pci, "devices/pci0000:00/0000:03:00.0")
	if err := os.MkdirAll(filepath.Join(pci, "bus/pci/drivers/mlx5_core"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../../0000:03:00.0", filepath.Join(dev, "infiniband/mlx5_0/device")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../../bus/pci/drivers/mlx5_core", filepath.Join(dev, "driver")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ root, dev, driver string }{
		{"../../testdata/sysfs/rxe", "rxe0", "rdma_rxe"},
		{pci, "mlx5_0", "mlx5_core"},
	} {
		if d, rnic := DriverOf(ibverbs.Open(c.root), c.dev); d != c.driver || rnic {
			t.Errorf("%s: driver %q (rnic %v), want %s", c.dev, d, rnic, c.driver)
		}
	}
	if _, rnic := DriverOf(ibverbs.Open(mlx5Fixture), "irdma0"); !rnic {
		t.Error("irdma0 (node type 4: RNIC) is not iWARP")
	}
}

// TestEthernetWithoutVerbs: where verbs do not read (a saved tree, the demo host, a
// --portinfo source), an Ethernet port has no PortInfo, but only the counters its
// driver does not fill are absent (ethernetCounts): mlx5's P_Key violations, iWARP's
// both, and M_KeyViolations (PortInfo's alone) everywhere; mlx5's Q_Key violations
// and rdma_rxe's both exist and are not read, another driver's are not known. They
// were all absent ("no such counter"), so a watch of a RoCE port exited 0 without
// its Q_Key violations. An InfiniBand port's are not read for the source's reason.
func TestEthernetWithoutVerbs(t *testing.T) {
	dir := t.TempDir()
	eth := func(name, pci, nodeType, driver string) fakesysfs.Device {
		return fakesysfs.Device{Name: name, PCI: pci, NodeType: nodeType, Driver: driver,
			Ports: []fakesysfs.Port{{Num: 1, State: "4: ACTIVE", PhysState: "5: LinkUp", LinkLayer: "Ethernet"}}}
	}
	h := fakesysfs.Host{Devices: []fakesysfs.Device{
		eth("mlx5_2", "0000:4b:00.0", "1: CA", "mlx5_core"),
		eth("irdma0", "0000:5e:00.0", "4: RNIC", "irdma"),
		eth("bnxt_re0", "0000:6a:00.0", "1: CA", "bnxt_en"),
		eth("roce9", "0000:6b:00.0", "1: CA", ""),
		{Name: "mlx5_0", PCI: "0000:17:00.0", NodeType: "1: CA", Driver: "mlx5_core",
			Ports: []fakesysfs.Port{{Num: 1, State: "4: ACTIVE", PhysState: "5: LinkUp", LinkLayer: "InfiniBand"}}},
	}}
	if err := fakesysfs.Write(dir, h); err != nil {
		t.Fatal(err)
	}
	host := &Host{Sys: ibverbs.Open(dir)}
	views, err := host.Load(Selector{}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	src := NewNoPortInfo(SourcePortInfo, "needs fabric access", host, views)
	names := []string{PKeyViolations, QKeyViolations, MKeyViolations}
	for dev, want := range map[string][3]string{ // "absent", "unread: WORDS"
		"mlx5_2":   {"absent", "unread: only verbs read it", "absent"},
		"irdma0":   {"absent", "absent", "absent"},
		"bnxt_re0": {"unread: not known whether bnxt_en counts it", "unread: not known whether bnxt_en counts it", "absent"},
		"roce9":    {"unread: the device's driver is not known", "unread: the device's driver is not known", "absent"},
		"mlx5_0":   {"unread: needs fabric access", "unread: needs fabric access", "unread: needs fabric access"},
	} {
		out := make([]Reading, len(names))
		src.Read(PortRef{dev, 1}, names, out)
		for i, r := range out {
			got := "absent"
			if !r.Absent {
				got = "unread: " + r.Unavailable
			}
			if r.Unavailable == "" || (want[i] == "absent") != r.Absent || !strings.Contains(got, strings.TrimPrefix(want[i], "unread: ")) {
				t.Errorf("%s %s: %+v, want %s", dev, names[i], r, want[i])
			}
		}
	}
	// Verbs first: a counter is absent when either source knows the port has none.
	// The device answered that its mlx5 RoCE port has no GID table (no Q_Key
	// violations counted), though sysfs alone cannot tell; verbs could not open the
	// iWARP device, whose counters sysfs says it has not.
	fv := newFakeVerbs()
	for _, dev := range []string{"mlx5_2", "roce9", "mlx5_0"} {
		fv.set(dev, 1, 0, 0)
		if dev != "mlx5_0" {
			a := fv.attrs[PortRef{dev, 1}]
			a.LinkLayer = 2
			fv.attrs[PortRef{dev, 1}] = a
		}
	}
	fv.fail["irdma0"] = errors.New("permission denied")
	v := NewVerbsCounters(fv, nil)
	v.Driver = func(dev string) (string, bool) { return DriverOf(host.Sys, dev) }
	p := Preferred{First: v, Then: src}
	for _, c := range []struct {
		dev, name string
		absent    bool
	}{
		{"mlx5_2", QKeyViolations, true}, {"mlx5_2", PKeyViolations, true}, {"irdma0", QKeyViolations, true},
		{"roce9", QKeyViolations, false}, {"mlx5_0", MKeyViolations, false},
	} {
		out := make([]Reading, 1)
		p.Read(PortRef{c.dev, 1}, []string{c.name}, out)
		if out[0].Unavailable == "" || out[0].Absent != c.absent {
			t.Errorf("verbs then PortInfo: %s %s: %+v, want absent %v", c.dev, c.name, out[0], c.absent)
		}
	}
}

// TestHostMaxPKeys: max_pkeys is read through verbs for this machine's devices only,
// each device opened, queried and closed; what is not read says why, never a value.
func TestHostMaxPKeys(t *testing.T) {
	devs := []string{"rxe0", "mlx5_0", "mlx5_1", "gone0"}
	f := newFakeVerbs()
	f.maxPKeys = map[string]uint16{"rxe0": 64, "mlx5_0": 128}
	f.fail["mlx5_1"] = &verbs.CallError{Call: "ibv_open_device mlx5_1", Errno: syscall.EACCES}
	f.fail["gone0"] = fmt.Errorf("verbs: gone0: %w", verbs.ErrNoDevice)
	f.maxPKeys["mlx5_1"] = 16 // never read: the device does not open
	h := &Host{Sys: ibverbs.Open("/sys"), CharDevs: "/dev/infiniband", Verbs: func() (VerbsLib, error) { return f, nil }}
	read, unread := h.MaxPKeys(append(devs, "noquery0"))
	if len(read) != 2 || read["rxe0"] != 64 || read["mlx5_0"] != 128 {
		t.Errorf("read %v, want rxe0 64 and mlx5_0 128", read)
	}
	for d, want := range map[string]string{
		"mlx5_1":   "max_pkeys not read: verbs: ibv_open_device mlx5_1: permission denied",
		"gone0":    "max_pkeys not read: verbs: gone0: no such verbs device",
		"noquery0": "max_pkeys not read: verbs: ibv_query_device noquery0: operation not supported",
	} {
		if unread[d] != want {
			t.Errorf("%s: unread %q, want %q", d, unread[d], want)
		}
	}
	if len(unread) != 3 || f.closed != 3 {
		t.Errorf("unread %v; %d devices closed, want the 3 opened", unread, f.closed)
	}
	// No library (the static build says why), and another machine's tree: every
	// device unread, with the reason.
	// The library is loaded once: a second call opens the devices again, not it.
	if read, _ := h.MaxPKeys(devs[:1]); read["rxe0"] != 64 || f.opened["rxe0"] != 2 {
		t.Errorf("second read: %v, rxe0 opened %d times", read, f.opened["rxe0"])
	}
	h = &Host{Sys: ibverbs.Open("/sys"), CharDevs: "/dev/infiniband", Verbs: func() (VerbsLib, error) {
		return nil, &verbs.UnavailableError{Reason: "the static flavour"}
	}}
	if read, unread := h.MaxPKeys(devs); len(read) != 0 || len(unread) != 4 || unread["rxe0"] != "max_pkeys not read: verbs unavailable: the static flavour" {
		t.Errorf("no library: read %v, unread %v", read, unread)
	}
	h = &Host{Sys: ibverbs.Open("testdata/x"), Verbs: h.Verbs}
	if read, unread := h.MaxPKeys(devs); len(read) != 0 || len(unread) != 4 || !strings.Contains(unread["mlx5_0"], "testdata/x is not this machine's /sys") {
		t.Errorf("another machine's tree: read %v, unread %v", read, unread)
	}
	h.Label = "demo host"
	if _, unread := h.MaxPKeys(devs); unread["rxe0"] != "max_pkeys not read: ibv_query_device asks the running kernel, and this is the demo host" {
		t.Errorf("demo host: %q", unread["rxe0"])
	}
}

// TestVerbsDeviceBackNoDelta: a device whose context was lost (a query failing as a
// removed device's, EIO) is opened again; it may be a new device whose counters
// restarted at 0 and counted past the last value read (here 5, then 9 after it came
// back), so its first reading after is a new first one: no delta, the total a lower
// bound. Then it counts as before.
func TestVerbsDeviceBackNoDelta(t *testing.T) {
	fv := newFakeVerbs()
	fv.set("mlx4_0", 1, 5, 0)
	fv.set("mlx4_0", 2, 5, 0)
	v := NewVerbsCounters(fv, nil)
	tr := NewTracker()
	at := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	refs := []PortRef{{Device: "mlx4_0", Port: 1}, {Device: "mlx4_0", Port: 2}}
	// take reads port 1 only when the device fails (a removed device's context
	// fails for every port, and the first failure forgets it), else both.
	take := func(ports int) []CounterDelta {
		at = at.Add(time.Second)
		s := &Sample{Time: at, Counters: []Counter{{Name: PKeyViolations, Source: v, Width: PortInfoViolationWidth}}}
		for _, ref := range refs[:ports] {
			ps := PortSample{Ref: ref, State: "ACTIVE", Readings: make([]Reading, 1)}
			v.Read(ref, []string{PKeyViolations}, ps.Readings)
			s.Ports = append(s.Ports, ps)
		}
		var out []CounterDelta
		for _, p := range tr.Add(s).Ports {
			out = append(out, p.Counters[0])
		}
		return out
	}
	for _, c := range take(2) {
		if c.Value != 5 || c.HasDelta {
			t.Fatalf("first: %+v", c)
		}
	}
	fv.query["mlx4_0"] = &verbs.CallError{Call: "ibv_query_port mlx4_0/1", Errno: syscall.EIO}
	if c := take(1)[0]; c.Err == "" {
		t.Fatalf("removed device: %+v", c)
	}
	delete(fv.query, "mlx4_0")
	fv.set("mlx4_0", 1, 9, 0)
	fv.set("mlx4_0", 2, 9, 0)
	for i, c := range take(2) {
		if c.Value != 9 || c.HasDelta || c.Reset || !c.TotalLowerBound || fv.opened["mlx4_0"] != 2 {
			t.Errorf("port %d back: %+v (opened %d), want 9 with no delta and a total that is a lower bound", i+1, c, fv.opened["mlx4_0"])
		}
	}
	fv.set("mlx4_0", 1, 11, 0)
	fv.set("mlx4_0", 2, 11, 0)
	for i, c := range take(2) {
		if !c.HasDelta || c.Delta != 2 {
			t.Errorf("port %d counting again: %+v", i+1, c)
		}
	}
}
