package query

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/fakesysfs"
	"github.com/ibkey/ibkey/internal/ibverbs"
)

// watchFixture is a tree the test rewrites between samples, with a clock it advances.
type watchFixture struct {
	t   *testing.T
	dir string
	now time.Time
}

func newWatchFixture(t *testing.T) *watchFixture {
	t.Helper()
	port := func(n int) fakesysfs.Port {
		return fakesysfs.Port{Num: n, State: "4: ACTIVE", PhysState: "5: LinkUp", LinkLayer: "InfiniBand",
			PKeys: fakesysfs.Table(4, "0xffff"), Counters: fakesysfs.IBCounters(nil)}
	}
	noPMA := port(1)
	noPMA.Counters = nil
	h := fakesysfs.Host{Devices: []fakesysfs.Device{
		{Name: "mlx5_0", PCI: "0000:03:00.0", NodeType: "1: CA", Ports: []fakesysfs.Port{port(1), port(2)}},
		{Name: "mlx5_9", PCI: "0000:09:00.0", NodeType: "1: CA", Ports: []fakesysfs.Port{noPMA}},
	}}
	dir := t.TempDir()
	if err := fakesysfs.Write(dir, h); err != nil {
		t.Fatal(err)
	}
	return &watchFixture{t: t, dir: dir, now: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
}

func (f *watchFixture) clock() time.Time { return f.now }

func (f *watchFixture) portDir(dev string, port int) string {
	return filepath.Join(f.dir, "class", "infiniband", dev, "ports", strconv.Itoa(port))
}

func (f *watchFixture) set(dev string, port int, name, value string) {
	f.t.Helper()
	p := filepath.Join(f.portDir(dev, port), "counters", name)
	if err := os.Remove(p); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(value+"\n"), 0o444); err != nil {
		f.t.Fatal(err)
	}
}

// unreadable makes a counter file a symlink to itself: reading it fails (ELOOP) even as root.
func (f *watchFixture) unreadable(dev string, port int, name string) {
	f.t.Helper()
	p := filepath.Join(f.portDir(dev, port), "counters", name)
	if err := os.Remove(p); err != nil {
		f.t.Fatal(err)
	}
	if err := os.Symlink(name, p); err != nil {
		f.t.Fatal(err)
	}
}

func (f *watchFixture) sampler(sel ...Selector) *Sampler {
	f.t.Helper()
	s, err := NewSampler(&Host{Sys: ibverbs.Open(f.dir)}, sel, f.clock)
	if err != nil {
		f.t.Fatal(err)
	}
	return s
}

func counter(t *testing.T, s *Snapshot, port PortRef, name string) CounterDelta {
	t.Helper()
	for _, p := range s.Ports {
		if p.Ref != port {
			continue
		}
		if p.Err != "" {
			t.Fatalf("%s: port error %s", port, p.Err)
		}
		for _, c := range p.Counters {
			if c.Name == name {
				return c
			}
		}
	}
	t.Fatalf("no %s on %s", name, port)
	return CounterDelta{}
}

var p01, p02, p91 = PortRef{"mlx5_0", 1}, PortRef{"mlx5_0", 2}, PortRef{"mlx5_9", 1}

func TestSamplerDeltasAndRates(t *testing.T) {
	f := newWatchFixture(t)
	s := f.sampler()
	tr := NewTracker()
	f.set("mlx5_0", 1, RcvConstraintErrors, "10")
	first := tr.Add(s.Take(false))
	c := counter(t, first, p01, RcvConstraintErrors)
	if c.Value != 10 || c.HasDelta || c.Source != "sysfs" || first.Interval != 0 {
		t.Errorf("first sample: %+v (interval %s)", c, first.Interval)
	}
	f.now = f.now.Add(2 * time.Second)
	f.set("mlx5_0", 1, RcvConstraintErrors, "16")
	snap := tr.Add(s.Take(false))
	c = counter(t, snap, p01, RcvConstraintErrors)
	if !c.HasDelta || c.Delta != 6 || c.Rate != 3 || c.Total != 6 || c.Saturated || c.Reset {
		t.Errorf("after +6 in 2s: %+v", c)
	}
	if snap.Interval != 2*time.Second || !snap.Ports[0].Moved || snap.Ports[0].Activity != 6 {
		t.Errorf("snapshot: interval %s, port %+v", snap.Interval, snap.Ports[0])
	}
	if x := counter(t, snap, p01, XmitConstraintErrors); !x.HasDelta || x.Delta != 0 || x.Rate != 0 {
		t.Errorf("quiet counter: %+v", x)
	}
	if snap.Ports[1].Moved {
		t.Errorf("mlx5_0/2 did not move: %+v", snap.Ports[1])
	}
	// The PortInfo violation counters are n/a with the reason, never 0.
	for _, name := range []string{PKeyViolations, QKeyViolations} {
		v := counter(t, snap, p01, name)
		if v.Unavailable != NeedsFabricAccess("") || v.Source != SourcePortInfo || v.OK() || v.HasDelta {
			t.Errorf("%s: %+v", name, v)
		}
	}
	// A port without counters/ says so.
	if v := counter(t, snap, p91, RcvConstraintErrors); !strings.Contains(v.Unavailable, "no PMA counters") {
		t.Errorf("no counters/: %+v", v)
	}
	if snap.Ports[0].State != "ACTIVE" {
		t.Errorf("state %q", snap.Ports[0].State)
	}
}

func TestSamplerSaturation8Bit(t *testing.T) {
	f := newWatchFixture(t)
	s, tr := f.sampler(Selector{Device: "mlx5_0", Port: 1, HasPort: true}), NewTracker()
	step := func(v string) CounterDelta {
		f.now = f.now.Add(time.Second)
		f.set("mlx5_0", 1, RcvConstraintErrors, v)
		return counter(t, tr.Add(s.Take(false)), p01, RcvConstraintErrors)
	}
	step("250")
	if c := step("255"); !c.Saturated || !c.HasDelta || c.Delta != 5 || !c.TotalLowerBound {
		t.Errorf("reaching 255: %+v", c)
	}
	if c := step("255"); !c.Saturated || c.HasDelta || c.Rate != 0 || !c.TotalLowerBound || c.Total != 5 {
		t.Errorf("staying at 255: real count unknown: %+v", c)
	}
	if c := step("3"); c.Saturated || !c.Reset || c.Delta != 3 || c.Total != 8 {
		t.Errorf("reset after saturation: %+v", c)
	}
	if c := step("4"); c.Reset || c.Delta != 1 {
		t.Errorf("counting again: %+v", c)
	}
}

func TestSamplerSaturation16Bit(t *testing.T) {
	f := newWatchFixture(t)
	s, tr := f.sampler(Selector{Device: "mlx5_0"}), NewTracker()
	step := func(v string) CounterDelta {
		f.now = f.now.Add(time.Second)
		f.set("mlx5_0", 1, "symbol_error", v)
		return counter(t, tr.Add(s.Take(true)), p01, "symbol_error")
	}
	if c := step("255"); c.Saturated {
		t.Errorf("255 is not the maximum of a 16-bit counter: %+v", c)
	}
	if c := step("300"); c.Saturated || c.Delta != 45 {
		t.Errorf("16-bit counter past 255: %+v", c)
	}
	if c := step("65535"); !c.Saturated || c.Delta != 65235 {
		t.Errorf("reaching 65535: %+v", c)
	}
	if c := step("65535"); !c.Saturated || c.HasDelta {
		t.Errorf("staying at 65535: %+v", c)
	}
}

func TestSamplerReset(t *testing.T) {
	f := newWatchFixture(t)
	s, tr := f.sampler(), NewTracker()
	f.set("mlx5_0", 2, XmitConstraintErrors, "100")
	tr.Add(s.Take(false))
	f.now = f.now.Add(500 * time.Millisecond)
	f.set("mlx5_0", 2, XmitConstraintErrors, "7")
	snap := tr.Add(s.Take(false))
	c := counter(t, snap, p02, XmitConstraintErrors)
	if !c.Reset || !c.HasDelta || c.Delta != 7 || c.Rate != 14 || c.Total != 7 || !snap.Ports[1].Moved {
		t.Errorf("reset 100 -> 7: %+v", c)
	}
	// What was counted between the first reading and the reset is lost: the total
	// of 7 is at least what happened, not all of it.
	if !c.TotalLowerBound {
		t.Errorf("reset 100 -> 7: total %d given as exact: %+v", c.Total, c)
	}
	f.now = f.now.Add(time.Second)
	snap = tr.Add(s.Take(false))
	if c := counter(t, snap, p02, XmitConstraintErrors); c.Reset || c.Delta != 0 || snap.Ports[1].Moved {
		t.Errorf("after the reset: %+v", c)
	}
}

func TestSamplerVanishedPort(t *testing.T) {
	f := newWatchFixture(t)
	s, tr := f.sampler(), NewTracker()
	f.set("mlx5_0", 2, RcvConstraintErrors, "5")
	tr.Add(s.Take(false))
	saved := t.TempDir() + "/port2"
	if err := os.Rename(f.portDir("mlx5_0", 2), saved); err != nil {
		t.Fatal(err)
	}
	f.now = f.now.Add(time.Second)
	f.set("mlx5_0", 1, RcvConstraintErrors, "1")
	snap := tr.Add(s.Take(false))
	if p := snap.Ports[1]; !strings.Contains(p.Err, "went away") || len(p.Counters) != 0 {
		t.Errorf("vanished port: %+v", p)
	}
	if c := counter(t, snap, p01, RcvConstraintErrors); c.Delta != 1 {
		t.Errorf("other ports go on: %+v", c)
	}
	// It comes back, here with its device registered again: its counter restarted at
	// 0 and counted 9, past the 5 read before it went away. 9-5 would be a delta too
	// small given as exact; the reading is a new first one: no delta, the total a
	// lower bound.
	if err := os.Rename(saved, f.portDir("mlx5_0", 2)); err != nil {
		t.Fatal(err)
	}
	f.set("mlx5_0", 2, RcvConstraintErrors, "9")
	f.now = f.now.Add(time.Second)
	if c := counter(t, tr.Add(s.Take(false)), p02, RcvConstraintErrors); c.Value != 9 || c.HasDelta || c.Reset || !c.TotalLowerBound {
		t.Errorf("port back: %+v, want 9 with no delta and a total that is a lower bound", c)
	}
	// From there it counts as before.
	f.set("mlx5_0", 2, RcvConstraintErrors, "12")
	f.now = f.now.Add(time.Second)
	if c := counter(t, tr.Add(s.Take(false)), p02, RcvConstraintErrors); !c.HasDelta || c.Delta != 3 || c.Rate != 3 || !c.TotalLowerBound {
		t.Errorf("counting again: %+v", c)
	}
	// The other port, read throughout, kept its deltas.
	if c := counter(t, tr.Add(s.Take(false)), p01, RcvConstraintErrors); !c.HasDelta || c.TotalLowerBound {
		t.Errorf("mlx5_0/1: %+v", c)
	}
}

func TestSamplerUnreadableFile(t *testing.T) {
	f := newWatchFixture(t)
	s, tr := f.sampler(), NewTracker()
	f.set("mlx5_0", 1, RcvConstraintErrors, "20")
	tr.Add(s.Take(false))
	f.unreadable("mlx5_0", 1, RcvConstraintErrors)
	f.now = f.now.Add(time.Second)
	snap := tr.Add(s.Take(false))
	c := counter(t, snap, p01, RcvConstraintErrors)
	if c.Err == "" || c.OK() || c.HasDelta || !strings.Contains(c.Err, "symbolic links") {
		t.Errorf("unreadable: %+v", c)
	}
	if x := counter(t, snap, p01, XmitConstraintErrors); !x.OK() {
		t.Errorf("the other counters are still read: %+v", x)
	}
	f.set("mlx5_0", 1, RcvConstraintErrors, "22")
	f.now = f.now.Add(time.Second)
	if c := counter(t, tr.Add(s.Take(false)), p01, RcvConstraintErrors); c.Delta != 2 || c.Rate != 1 {
		t.Errorf("readable again: %+v", c)
	}
}

// countingFS counts opens per path.
type countingFS struct {
	fs.FS
	mu    sync.Mutex
	opens map[string]int
}

func (c *countingFS) Open(name string) (fs.File, error) {
	c.mu.Lock()
	c.opens[name]++
	c.mu.Unlock()
	return c.FS.Open(name)
}

func TestSamplerReadsEachFileOnce(t *testing.T) {
	f := newWatchFixture(t)
	cfs := &countingFS{FS: os.DirFS(f.dir), opens: map[string]int{}}
	s, err := NewSampler(&Host{Sys: ibverbs.FromFS(cfs, f.dir)}, nil, f.clock)
	if err != nil {
		t.Fatal(err)
	}
	cfs.opens = map[string]int{}
	s.Take(true)
	reads := 0
	for p, n := range cfs.opens {
		if n != 1 {
			t.Errorf("%s opened %d times in one sample", p, n)
		}
		if strings.Contains(p, "/counters/") {
			reads++
		}
	}
	// 2 ports with PMA x 12 error counters; the port without counters/ reads none.
	if reads != 24 {
		t.Errorf("%d counter files read, want 24: %v", reads, cfs.opens)
	}
}

func TestResetBaseline(t *testing.T) {
	f := newWatchFixture(t)
	s, tr := f.sampler(), NewTracker()
	tr.Add(s.Take(false))
	f.set("mlx5_0", 1, RcvConstraintErrors, "5")
	f.now = f.now.Add(time.Second)
	tr.Add(s.Take(false))
	tr.ResetBaseline(f.now)
	if tr.Base != f.now {
		t.Errorf("baseline %s, want %s", tr.Base, f.now)
	}
	f.set("mlx5_0", 1, RcvConstraintErrors, "6")
	f.now = f.now.Add(time.Second)
	if c := counter(t, tr.Add(s.Take(false)), p01, RcvConstraintErrors); c.Total != 1 || c.Value != 6 {
		t.Errorf("total since the new baseline: %+v", c)
	}
}

// synthetic is a sample of ports ports without I/O, for memory tests and benchmarks.
func synthetic(ports int, at time.Time, v uint64) *Sample {
	cs := DefaultCounterSets(&NoPortInfoSource{Label: "sysfs"})
	s := &Sample{Time: at, Counters: cs.Violations, Ports: make([]PortSample, ports)}
	for i := range s.Ports {
		s.Ports[i] = PortSample{Ref: PortRef{"mlx5_" + strconv.Itoa(i), 1}, State: "ACTIVE",
			Readings: []Reading{{Value: v % 256}, {Value: v % 7}, {Unavailable: "x"}, {Unavailable: "x"}}}
	}
	return s
}

func heapAfterGC() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestTrackerMemoryFlat feeds 100,000 samples: the heap must not grow with them.
func TestTrackerMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("100,000 samples")
	}
	tr := NewTracker()
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	pre := make([]*Sample, 40) // values that go up and reset
	for i := range pre {
		pre[i] = synthetic(64, at, uint64(i))
	}
	add := func(i int) {
		s := *pre[i%len(pre)]
		s.Time = at
		at = at.Add(time.Second)
		tr.Add(&s)
	}
	for i := range 1000 { // warm up: every counter's state exists
		add(i)
	}
	before := heapAfterGC()
	for i := range 100_000 {
		add(i)
	}
	after := heapAfterGC()
	runtime.KeepAlive(pre) // in both figures
	t.Logf("tracker, 64 ports: heap %d bytes before, %d after 100,000 samples", before, after)
	if after > before+256<<10 {
		t.Errorf("heap grew from %d to %d bytes over 100,000 samples", before, after)
	}
}

// BenchmarkSample64Ports reads one sample of 64 ports (32 devices x 2 ports) from a
// fixture tree: the partition counters plus each port's state file.
func BenchmarkSample64Ports(b *testing.B) {
	dir := b.TempDir()
	if err := fakesysfs.Write(dir, fakesysfs.Large(32, 2, 4)); err != nil {
		b.Fatal(err)
	}
	s, err := NewSampler(&Host{Sys: ibverbs.Open(dir)}, nil, time.Now)
	if err != nil {
		b.Fatal(err)
	}
	if len(s.Ports) != 64 {
		b.Fatalf("%d ports", len(s.Ports))
	}
	tr := NewTracker()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		tr.Add(s.Take(false))
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/64, "ns/port")
}

// TestSamplerMemoryFlat reads 100,000 real samples (files, one port) through Take and
// Add: the heap must not grow with them.
func TestSamplerMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("100,000 samples")
	}
	f := newWatchFixture(t)
	s, tr := f.sampler(Selector{Device: "mlx5_0", Port: 1, HasPort: true}), NewTracker()
	for range 1000 {
		f.now = f.now.Add(time.Second)
		tr.Add(s.Take(false))
	}
	before := heapAfterGC()
	for range 100_000 {
		f.now = f.now.Add(time.Second)
		tr.Add(s.Take(false))
	}
	after := heapAfterGC()
	t.Logf("sampler+tracker, 1 port read from files: heap %d bytes before, %d after 100,000 samples", before, after)
	if after > before+256<<10 {
		t.Errorf("heap grew from %d to %d bytes over 100,000 samples", before, after)
	}
}

// TestSysfsNoPMAByLinkLayer: sysfs shows no PMA counter (no counters/, or a file
// holding "N/A (no PMA)"). On a port whose link layer is not InfiniBand that is the
// answer: the device has no PMA (absent). An InfiniBand port has a PMA, and the kernel
// leaves counters/ out of the device a container's own network namespace sees
// (drivers/infiniband/core/sysfs.c setup_port, is_full_dev) and wrote "N/A (no PMA)"
// for a PMA that did not answer (Linux 4.5 to 2018): there the counter exists and was
// not read, never absent.
func TestSysfsNoPMAByLinkLayer(t *testing.T) {
	port := func(ll string, counters map[string]string) fakesysfs.Port {
		return fakesysfs.Port{Num: 1, State: "4: ACTIVE", PhysState: "5: LinkUp", LinkLayer: ll,
			PKeys: fakesysfs.Table(1, "0xffff"), Counters: counters}
	}
	na := fakesysfs.IBCounters(map[string]string{RcvConstraintErrors: ibverbs.NoPMA})
	h := fakesysfs.Host{Devices: []fakesysfs.Device{
		{Name: "ibnodir", PCI: "0000:01:00.0", NodeType: "1: CA", Ports: []fakesysfs.Port{port("InfiniBand", nil)}},
		{Name: "ibna", PCI: "0000:02:00.0", NodeType: "1: CA", Ports: []fakesysfs.Port{port("InfiniBand", na)}},
		{Name: "ethnodir", PCI: "0000:03:00.0", NodeType: "1: CA", Ports: []fakesysfs.Port{port("Ethernet", nil)}},
		{Name: "ethna", PCI: "0000:04:00.0", NodeType: "4: RNIC", Ports: []fakesysfs.Port{port("Ethernet", na)}},
	}}
	dir := t.TempDir()
	if err := fakesysfs.Write(dir, h); err != nil {
		t.Fatal(err)
	}
	s, err := NewSampler(&Host{Sys: ibverbs.FromFS(os.DirFS(dir), dir)}, nil, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	sample := s.Take(false)
	snap := NewTracker().Add(sample)
	for _, tc := range []struct {
		dev    string
		absent bool
		want   string
	}{
		{"ibnodir", false, "no PMA counters here (counters/: does not exist; an InfiniBand port has a PMA"},
		{"ibna", false, `no PMA counters here (counters/port_rcv_constraint_errors holds "N/A (no PMA)"; an InfiniBand port has a PMA`},
		{"ethnodir", true, "no PMA counters (counters/: does not exist)"},
		{"ethna", true, `no PMA on this device (counters/port_rcv_constraint_errors holds "N/A (no PMA)")`},
	} {
		var r Reading
		for _, p := range sample.Ports {
			if p.Ref.Device == tc.dev {
				r = p.Readings[0]
			}
		}
		if r.Absent != tc.absent || !strings.HasPrefix(r.Unavailable, tc.want) {
			t.Errorf("%s: %+v, want absent %v and %q", tc.dev, r, tc.absent, tc.want)
		}
		if c := counter(t, snap, PortRef{tc.dev, 1}, RcvConstraintErrors); c.OK() {
			t.Errorf("%s: read as %d", tc.dev, c.Value)
		}
	}
}

// TestHFI1CountersNotCounted: hfi1 (Omni-Path) answers PortCounters with a constant 0
// for SymbolErrorCounter, VL15Dropped and PortRcvSwitchRelayErrors (mad.c, "N/A for
// OPA"): its counters/ files read 0, which is no count. They are absent (not counted
// by the driver), not readings of 0; the other counters, and the same counters of
// another driver, are read.
func TestHFI1CountersNotCounted(t *testing.T) {
	port := fakesysfs.Port{Num: 1, State: "4: ACTIVE", PhysState: "5: LinkUp", LinkLayer: "InfiniBand",
		PKeys: fakesysfs.Table(4, "0xffff"), Counters: fakesysfs.IBCounters(map[string]string{"port_rcv_errors": "5"})}
	h := fakesysfs.Host{Devices: []fakesysfs.Device{
		{Name: "hfi1_0", PCI: "0000:03:00.0", NodeType: "1: CA", Driver: "hfi1", Ports: []fakesysfs.Port{port}},
		{Name: "mlx5_0", PCI: "0000:04:00.0", NodeType: "1: CA", Driver: "mlx5_core", Ports: []fakesysfs.Port{port}},
	}}
	dir := t.TempDir()
	if err := fakesysfs.Write(dir, h); err != nil {
		t.Fatal(err)
	}
	s, err := NewSampler(&Host{Sys: ibverbs.Open(dir)}, nil, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	sample := s.Take(true)
	notCountedBy := map[string]bool{"symbol_error": true, "VL15_dropped": true, "port_rcv_switch_relay_errors": true}
	seen := 0
	for _, p := range sample.Ports {
		for i, c := range sample.Counters {
			if c.Source.Name() != "sysfs" {
				continue
			}
			r := p.Readings[i]
			seen++
			switch {
			case p.Ref.Device == "hfi1_0" && notCountedBy[c.Name]:
				if !r.Absent || !strings.Contains(r.Unavailable, "not counted by hfi1") {
					t.Errorf("%s %s: %+v, want absent (not counted by hfi1)", p.Ref, c.Name, r)
				}
			case r.Unavailable != "" || r.Err != "":
				t.Errorf("%s %s: %+v, want a reading", p.Ref, c.Name, r)
			case c.Name == "port_rcv_errors" && r.Value != 5:
				t.Errorf("%s %s: %d, want 5", p.Ref, c.Name, r.Value)
			}
		}
	}
	if seen != 2*len(ErrorCounters) {
		t.Errorf("%d sysfs readings, want %d", seen, 2*len(ErrorCounters))
	}
}

// TestSysfsMissingCounterFileNotRead: every kernel's counters/ holds all twelve
// PortCounters error counters (drivers/infiniband/core/sysfs.c: pma_attrs,
// pma_attrs_ext and pma_attrs_noietf each list them all), so a counters/ without one
// of them is a tree the kernel did not write as it is now (a saved copy, a file that
// went away): the counter is not read, never absent. Each counter in turn is removed
// from a port whose other counters are read.
func TestSysfsMissingCounterFileNotRead(t *testing.T) {
	for _, missing := range ErrorCounters {
		t.Run(missing, func(t *testing.T) {
			f := newWatchFixture(t)
			if err := os.Remove(filepath.Join(f.portDir("mlx5_0", 1), "counters", missing)); err != nil {
				t.Fatal(err)
			}
			sample := f.sampler(Selector{Device: "mlx5_0", Port: 1, HasPort: true}).Take(true)
			if len(sample.Ports) != 1 || sample.Ports[0].Err != "" {
				t.Fatalf("ports: %+v", sample.Ports)
			}
			for i, c := range sample.Counters {
				if c.Source.Name() != "sysfs" {
					continue
				}
				r := sample.Ports[0].Readings[i]
				switch {
				case c.Name != missing && (r.Err != "" || r.Unavailable != ""):
					t.Errorf("%s: %+v, want a reading", c.Name, r)
				case c.Name == missing && (r.Absent || r.Err == "" && r.Unavailable == ""):
					t.Errorf("%s without its file: %+v, want not read (an error, or n/a not absent)", c.Name, r)
				}
			}
		})
	}
}

// TestSysfsCountersDirUnreadable: the kernel makes counters/ for a device with a PMA
// and leaves it out otherwise (drivers/infiniband/core/sysfs.c setup_port), so only a
// counters/ that is not there at all says "no PMA". One that is there and cannot be
// read (here a link to itself) holds counters that were not read, on an Ethernet port
// as on an InfiniBand one: never absent.
func TestSysfsCountersDirUnreadable(t *testing.T) {
	for _, ll := range []string{"InfiniBand", "Ethernet"} {
		t.Run(ll, func(t *testing.T) {
			h := fakesysfs.Host{Devices: []fakesysfs.Device{{Name: "mlx5_0", PCI: "0000:03:00.0", NodeType: "1: CA",
				Ports: []fakesysfs.Port{{Num: 1, State: "4: ACTIVE", PhysState: "5: LinkUp", LinkLayer: ll,
					PKeys: fakesysfs.Table(1, "0xffff"), Counters: fakesysfs.IBCounters(nil)}}}}}
			dir := t.TempDir()
			if err := fakesysfs.Write(dir, h); err != nil {
				t.Fatal(err)
			}
			counters := filepath.Join(dir, "class", "infiniband", "mlx5_0", "ports", "1", "counters")
			if err := os.RemoveAll(counters); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("counters", counters); err != nil {
				t.Fatal(err)
			}
			s, err := NewSampler(&Host{Sys: ibverbs.Open(dir)}, nil, time.Now)
			if err != nil {
				t.Fatal(err)
			}
			sample := s.Take(true)
			n := 0
			for i, c := range sample.Counters {
				if c.Source.Name() != "sysfs" {
					continue
				}
				n++
				if r := sample.Ports[0].Readings[i]; r.Absent || r.Err == "" && r.Unavailable == "" {
					t.Errorf("%s: %+v, want not read", c.Name, r)
				}
			}
			if n != len(ErrorCounters) {
				t.Errorf("%d sysfs counters, want %d", n, len(ErrorCounters))
			}
		})
	}
}
