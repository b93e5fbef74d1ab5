package query

import (
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/ibverbs"
	"github.com/ibkey/ibkey/internal/ibverbs/verbs"
)

// fakeVerbs is a libibverbs with settable counters per device/port.
type fakeVerbs struct {
	mu     sync.Mutex
	attrs  map[PortRef]verbs.PortAttr
	opened map[string]int
	fail   map[string]error
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
	a, ok := d.f.attrs[PortRef{d.name, port}]
	if !ok {
		return a, errors.New("ibv_query_port: invalid argument")
	}
	return a, nil
}

func (fakeVerbsDev) Close() error { return nil }

func newFakeVerbs() *fakeVerbs {
	return &fakeVerbs{attrs: map[PortRef]verbs.PortAttr{}, opened: map[string]int{}, fail: map[string]error{}}
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
	if v.Port.Counters.OK() || !v.Port.HWCounter.OK() {
		t.Errorf("counters %+v hw_counters %+v: rxe has only hw_counters/", v.Port.Counters, v.Port.HWCounter)
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
