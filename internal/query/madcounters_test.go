package query

import (
	"context"
	"encoding/binary"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/ibverbs"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
)

// fakeFabric answers Get PortInfo and Get PortCounters for one CA port with the
// values the test sets, and counts the MADs of each kind.
type fakeFabric struct {
	mu                  sync.Mutex
	pkey, qkey, mkey    uint16
	rcvConstraint       uint8
	lid                 uint16
	down                bool // PortInfo says DOWN
	dropPMA             bool
	otherPort           bool // PortCounters answer for the next port, not the one asked
	zeroPortSelect      bool // PortCounters leave PortSelect 0 (mlx5's kernel PMA)
	portInfos, counters int
}

func (f *fakeFabric) Do(_ context.Context, req mad.Request) (*mad.Packet, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case req.Class == mad.ClassSubnLID && req.Attr == mad.AttrPortInfo:
		f.portInfos++
		d := make([]byte, 64)
		binary.BigEndian.PutUint16(d[16:], f.lid)
		d[32] = byte(mad.PortStateActive)
		if f.down {
			d[32] = byte(mad.PortStateDown)
		}
		binary.BigEndian.PutUint16(d[44:], f.mkey)
		binary.BigEndian.PutUint16(d[46:], f.pkey)
		binary.BigEndian.PutUint16(d[48:], f.qkey)
		return &mad.Packet{Class: req.Class, Attr: req.Attr, Data: d}, nil
	case req.Class == mad.ClassPerf && req.Attr == mad.AttrPortCounters:
		f.counters++
		if f.dropPMA {
			return nil, &mad.TimeoutError{Attempts: 1, Timeout: time.Millisecond}
		}
		d := make([]byte, 192)
		d[1] = req.Data[1] // PortSelect
		if f.otherPort {
			d[1]++
		}
		if f.zeroPortSelect {
			d[1] = 0
		}
		d[17] = f.rcvConstraint
		return &mad.Packet{Class: req.Class, Attr: req.Attr, Data: d}, nil
	}
	return nil, &mad.StatusError{Status: 0x000c}
}

func (f *fakeFabric) Close() error { return nil }

func (f *fakeFabric) set(fn func(f *fakeFabric)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

func fakeCAView(lid uint16, addr mad.Address) *PortView {
	d := &ibverbs.Device{Name: "HcaB", NodeType: ibverbs.Opt[ibverbs.Enum]{Value: ibverbs.Enum{Num: 1, Name: "CA"}}}
	p := &ibverbs.Port{Device: "HcaB", Num: 1}
	p.LID.Value = lid
	return &PortView{Device: d, Port: p, Fabric: &FabricPort{Address: addr.String(), Addr: addr}}
}

// TestMADCountersSaturate: the PortInfo violation counters are 16-bit and saturate at
// 65535; the tracker flags them and keeps deltas honest. One PortInfo and one
// PortCounters MAD per port per sample.
func TestMADCountersSaturate(t *testing.T) {
	f := &fakeFabric{lid: 4, pkey: 65530, qkey: 7}
	fab := &Fabric{T: f, Via: "fake"}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { now = now.Add(time.Second); return now }
	s, err := NewFabricSampler(context.Background(), fab, []*PortView{fakeCAView(4, mad.LIDAddress(4))}, clock)
	if err != nil {
		t.Fatal(err)
	}
	tr := NewTracker()
	get := func(snap *Snapshot, name string) CounterDelta {
		t.Helper()
		for i, c := range snap.Counters {
			if c.Name == name {
				return snap.Ports[0].Counters[i]
			}
		}
		t.Fatalf("no counter %s", name)
		return CounterDelta{}
	}

	snap := tr.Add(s.Take(true))
	if snap.Ports[0].Err != "" || snap.Ports[0].State != "ACTIVE" || snap.Ports[0].Address != "lid 4" {
		t.Fatalf("port: %+v", snap.Ports[0])
	}
	pk := get(snap, PKeyViolations)
	if pk.Value != 65530 || pk.Source != SourcePortInfo || pk.Saturated {
		t.Errorf("first: %+v", pk)
	}
	if q := get(snap, QKeyViolations); q.Value != 7 || q.Source != SourcePortInfo {
		t.Errorf("qkey: %+v", q)
	}
	if m := get(snap, MKeyViolations); !m.OK() || m.Value != 0 {
		t.Errorf("mkey: %+v", m)
	}
	if r := get(snap, RcvConstraintErrors); r.Source != SourcePortCounters || r.Value != 0 {
		t.Errorf("rcv constraint: %+v", r)
	}
	if f.portInfos != 1 || f.counters != 1 {
		t.Errorf("one sample sent %d PortInfo and %d PortCounters Gets, want 1 and 1", f.portInfos, f.counters)
	}

	// 65530 + 100 saturates at 65535: flagged, the delta (5) is a lower bound.
	f.set(func(f *fakeFabric) { f.pkey, f.mkey = 65535, 65535 })
	snap = tr.Add(s.Take(true))
	pk = get(snap, PKeyViolations)
	if pk.Value != 65535 || !pk.Saturated || !pk.HasDelta || pk.Delta != 5 || !pk.TotalLowerBound {
		t.Errorf("saturating: %+v", pk)
	}
	if m := get(snap, MKeyViolations); m.Value != 65535 || !m.Saturated {
		t.Errorf("mkey saturating: %+v", m)
	}
	// Still saturated: no delta, never a made-up 0.
	snap = tr.Add(s.Take(true))
	if pk = get(snap, PKeyViolations); !pk.Saturated || pk.HasDelta {
		t.Errorf("still saturated: %+v", pk)
	}
	// Someone reset it: the reset is reported and the delta counts from 0.
	f.set(func(f *fakeFabric) { f.pkey = 3 })
	snap = tr.Add(s.Take(true))
	if pk = get(snap, PKeyViolations); !pk.Reset || pk.Delta != 3 || pk.Saturated {
		t.Errorf("after a reset: %+v", pk)
	}

	// A PortCounters timeout is an error on those counters; PortInfo's still read.
	f.set(func(f *fakeFabric) { f.dropPMA = true })
	snap = tr.Add(s.Take(false))
	if r := get(snap, RcvConstraintErrors); r.OK() || r.Err == "" {
		t.Errorf("dropped PMA: %+v", r)
	}
	if pk = get(snap, PKeyViolations); !pk.OK() || pk.Value != 3 {
		t.Errorf("PortInfo with PMA dropped: %+v", pk)
	}
}

// TestReadPortCounters: the one PMA reader keeps the order of the ports asked, and a
// reply that answers for another port than the PortSelect asked (a PMA ignoring it)
// is an error, never that port's counters.
func TestReadPortCounters(t *testing.T) {
	f := &fakeFabric{rcvConstraint: 5}
	got := ReadPortCounters(context.Background(), f, []PMAPort{{LID: 4, Port: 1}, {LID: 2, Port: 7}})
	if len(got) != 2 || got[0].Err != nil || got[1].Err != nil || got[0].Counters.PortSelect != 1 || got[1].Counters.PortSelect != 7 ||
		got[1].Counters.PortRcvConstraintErrors != 5 || f.counters != 2 {
		t.Errorf("ReadPortCounters = %+v (%d MADs)", got, f.counters)
	}
	f.set(func(f *fakeFabric) { f.otherPort = true })
	got = ReadPortCounters(context.Background(), f, []PMAPort{{LID: 4, Port: 1}})
	if got[0].Err == nil || !strings.Contains(got[0].Err.Error(), "PortCounters reply for port 2, asked for 1") || got[0].Counters != (mad.PortCounters{}) {
		t.Errorf("a reply for another port: %+v", got[0])
	}
}

// TestReadPortCountersZeroPortSelect: mlx5's kernel PMA answers for the port the MAD
// arrives on and leaves the reply's PortSelect 0 (mlx5_ib_process_mad zeroes the data
// area, process_pma_cmd fills in only the counters). From an end port's PMA, at its
// own LID, that is the port asked; from a switch's, whose ports share its LID, it is
// not known to be, and stays an error.
func TestReadPortCountersZeroPortSelect(t *testing.T) {
	f := &fakeFabric{rcvConstraint: 5, zeroPortSelect: true}
	got := ReadPortCounters(context.Background(), f, []PMAPort{{LID: 4, Port: 2, EndPort: true}, {LID: 2, Port: 7}})
	if got[0].Err != nil || got[0].Counters.PortSelect != 2 || got[0].Counters.PortRcvConstraintErrors != 5 {
		t.Errorf("an end port's reply with PortSelect 0: %+v", got[0])
	}
	if got[1].Err == nil || !strings.Contains(got[1].Err.Error(), "PortCounters reply for port 0, asked for 7") {
		t.Errorf("a switch port's reply with PortSelect 0: %+v", got[1])
	}
	// watch counters --lid on a CA port reads it.
	f.lid = 4
	s, err := NewFabricSampler(context.Background(), &Fabric{T: f, Via: "fake"}, []*PortView{fakeCAView(4, mad.LIDAddress(4))}, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	snap := NewTracker().Add(s.Take(true))
	i := slices.IndexFunc(snap.Counters, func(c Counter) bool { return c.Name == RcvConstraintErrors })
	if i < 0 || snap.Ports[0].Err != "" || snap.Ports[0].Counters[i].Err != "" || snap.Ports[0].Counters[i].Value != 5 {
		t.Errorf("watch counters --lid on a CA whose PMA leaves PortSelect 0: %+v", snap.Ports[0])
	}
}

// TestMADCountersNoLID: a port reached by directed route without a LID has its
// PortInfo counters, and the PortCounters ones n/a with the reason; once an SM gives
// the port a LID, PortCounters are read.
func TestMADCountersNoLID(t *testing.T) {
	f := &fakeFabric{}
	fab := &Fabric{T: f, Via: "fake"}
	s, err := NewFabricSampler(context.Background(), fab, []*PortView{fakeCAView(0, mad.DirectedRoute(1, 2))}, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	smp := s.Take(false)
	for i, c := range smp.Counters {
		r := smp.Ports[0].Readings[i]
		switch c.Source.Name() {
		case SourcePortInfo:
			if r.Unavailable != "" || r.Err != "" {
				t.Errorf("%s: %+v", c.Name, r)
			}
		case SourcePortCounters:
			if r.Unavailable == "" || !strings.Contains(r.Unavailable, "needs a LID") || !strings.Contains(r.Unavailable, "DR path 0,1,2") {
				t.Errorf("%s: want n/a, needs a LID: %+v", c.Name, r)
			}
		}
	}
	if f.counters != 0 {
		t.Errorf("%d PortCounters sent without a LID", f.counters)
	}
	f.set(func(f *fakeFabric) { f.lid, f.rcvConstraint = 9, 2 })
	smp = s.Take(false)
	if r := smp.Ports[0].Readings[0]; smp.Counters[0].Name != RcvConstraintErrors || r.Value != 2 || r.Unavailable != "" {
		t.Errorf("after the SM: %+v", r)
	}
}

// TestMADCountersDownCAPort: a CA port reached through another port's LID (--lid 4
// --port all) that is DOWN and has no LID: its PortCounters are n/a with a reason that
// names the port (not the LID it was reached through) and says why (DOWN, no LID of
// its own, a CA's PMA answers only for the port a MAD arrives on), and no PMA is sent.
func TestMADCountersDownCAPort(t *testing.T) {
	f := &fakeFabric{down: true}
	fab := &Fabric{T: f, Via: "fake"}
	v := fakeCAView(0, mad.LIDAddress(4))
	v.Port.Num = 2
	s, err := NewFabricSampler(context.Background(), fab, []*PortView{v}, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	smp := s.Take(false)
	if smp.Ports[0].State != "DOWN" {
		t.Fatalf("state %q", smp.Ports[0].State)
	}
	for i, c := range smp.Counters {
		r := smp.Ports[0].Readings[i]
		if c.Source.Name() != SourcePortCounters {
			continue
		}
		for _, want := range []string{"port DOWN (", "HcaB/2 is DOWN and has no LID of its own", "only for the port the MAD arrives on"} {
			if !strings.Contains(r.Unavailable, want) {
				t.Errorf("%s: %q lacks %q", c.Name, r.Unavailable, want)
			}
		}
		if !r.Absent {
			t.Errorf("%s: a DOWN CA port's PortCounters are nothing the fabric can give (Absent), not a gap: %+v", c.Name, r)
		}
		if strings.Contains(r.Unavailable, "lid 4 has no LID") {
			t.Errorf("%s: names the LID it was reached through: %q", c.Name, r.Unavailable)
		}
	}
	if f.counters != 0 {
		t.Errorf("%d PortCounters sent for a DOWN CA port", f.counters)
	}
}

// TestFabricSamplerUniquePorts: selectors that name the same port (--lid 6,7 --port
// all: two LIDs of one node) give one view per port from Fabric.LoadMany (uniquePorts:
// by node GUID and port number, at the first address; GUID 0 names no node), and the
// sampler names another node with the same description by its address.
func TestFabricSamplerUniquePorts(t *testing.T) {
	view := func(guid check.GUID, num int, lid uint16) *PortView {
		v := fakeCAView(lid, mad.LIDAddress(lid))
		v.Port.Num, v.Fabric.NodeGUID = num, guid
		return v
	}
	views := uniquePorts([]*PortView{view(0x10, 1, 6), view(0x10, 2, 6), view(0x10, 1, 7), view(0x10, 2, 7), view(0x10, 2, 6), view(0x20, 1, 9), view(0, 1, 11), view(0, 1, 12)})
	s, err := NewFabricSampler(context.Background(), &Fabric{T: &fakeFabric{lid: 6}, Via: "fake"}, views, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"HcaB (lid 6)/1", "HcaB (lid 6)/2", "HcaB (lid 9)/1", "HcaB (lid 11)/1", "HcaB (lid 12)/1"}
	var got []string
	for _, p := range s.Ports {
		got = append(got, p.String())
	}
	if strings.Join(got, " ") != strings.Join(want, " ") || strings.Join(s.Addresses, ",") != "lid 6,lid 6,lid 9,lid 11,lid 12" {
		t.Errorf("ports %q at %q, want %q", got, s.Addresses, want)
	}
}

// TestUsePortInfo: the local sampler's PortInfo counters move to another source.
func TestUsePortInfo(t *testing.T) {
	s := &Sampler{Sets: DefaultCounterSets(&NoPortInfoSource{Label: "sysfs"})}
	src := &NoPortInfoSource{Label: "x"}
	s.UsePortInfo(src)
	for _, set := range [][]Counter{s.Sets.Violations, s.Sets.All} {
		for _, c := range set {
			isPI := c.Name == PKeyViolations || c.Name == QKeyViolations || c.Name == MKeyViolations
			if isPI != (c.Source.Name() == "x") || isPI && c.Width != 16 {
				t.Errorf("%s from %s (width %d)", c.Name, c.Source.Name(), c.Width)
			}
		}
	}
}

// TestMADCountersLIDWithdrawn: a CA port's PMA LID follows its PortInfo, also when
// the LID goes away (a subnet manager restarting assigns LIDs anew, and until it
// does the port reports 0): PortCounters are then n/a, needs a LID, and none is sent
// to the LID the port had, which may by then be another port's.
func TestMADCountersLIDWithdrawn(t *testing.T) {
	f := &fakeFabric{lid: 4, rcvConstraint: 3}
	fab := &Fabric{T: f, Via: "fake"}
	s, err := NewFabricSampler(context.Background(), fab, []*PortView{fakeCAView(4, mad.DirectedRoute(1, 2))}, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	if r := s.Take(false).Ports[0].Readings[0]; r.Value != 3 || r.Unavailable != "" || r.Err != "" || f.counters != 1 {
		t.Fatalf("with LID 4: %+v, %d PortCounters", r, f.counters)
	}
	f.set(func(f *fakeFabric) { f.lid = 0 })
	smp := s.Take(false)
	for i, c := range smp.Counters {
		r := smp.Ports[0].Readings[i]
		if c.Source.Name() == SourcePortCounters && (!strings.Contains(r.Unavailable, "needs a LID") || r.Absent) {
			t.Errorf("%s without a LID: %+v, want n/a, needs a LID (not read)", c.Name, r)
		}
	}
	if f.counters != 1 {
		t.Errorf("%d PortCounters sent, want none after the LID went away", f.counters-1)
	}
}
