package demo_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/demo"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/query"
)

// fixed is a clock that stands still.
func fixed() time.Time { return time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC) }

// TestDemoFabricSweep: the sweep of the demo fabric through its transport, from either
// cabled port of the demo host, is the fabric itself: every node, link, state, LID
// and table, nothing unread; its audit finds the one thing wrong it was built with.
func TestDemoFabricSweep(t *testing.T) {
	want := demo.Fabric()
	for _, dev := range []string{"mlx5_0", "mlx5_1"} {
		tr, err := demo.OpenTransport(dev, 1, fixed)
		if err != nil {
			t.Fatal(err)
		}
		f, err := query.Sweep(context.Background(), tr, query.SweepOptions{})
		if err != nil {
			t.Fatalf("%s: %v", dev, err)
		}
		if s := fabric.NotCheckedSummary(f.NotRead(false)); s != "" {
			t.Errorf("%s: partial: %s", dev, s)
		}
		if len(f.Nodes) != len(want.Nodes) || fmt.Sprint(f.Links()) != fmt.Sprint(want.Links()) {
			t.Errorf("%s: %d nodes, links %v; want %d, %v", dev, len(f.Nodes), f.Links(), len(want.Nodes), want.Links())
		}
		for _, wn := range want.Nodes {
			n := f.Node(wn.GUID)
			if n == nil || n.Description != wn.Description || n.Type != wn.Type {
				t.Errorf("%s: node %s %q: swept %+v", dev, wn.GUID, wn.Description, n)
				continue
			}
			for _, wp := range wn.Ports {
				p := n.Port(wp.Num)
				id := f.Label(check.PortID{Node: n.GUID, Port: wp.Num})
				if p.State != wp.State || p.LID != wp.LID && n.IsEndPort(p) || p.SMLID != wp.SMLID && n.IsEndPort(p) {
					t.Errorf("%s: %s: %s LID %d SM %d; want %s %d %d", dev, id, p.State, p.LID, p.SMLID, wp.State, wp.LID, wp.SMLID)
				}
				if (p.State != check.StateDown || !n.IsEndPort(p)) && p.PKeys != nil && fmt.Sprint(p.PKeys) != fmt.Sprint(wp.PKeys) {
					t.Errorf("%s: %s: table %v, want %v", dev, id, p.PKeys, wp.PKeys)
				}
				if p.State != check.StateDown && p.PKeys == nil {
					t.Errorf("%s: %s: table not read: %s", dev, id, p.PKeysError)
				}
			}
		}
		var errs []string
		for _, fd := range fabric.AuditFabric(f, fabric.AuditOptions{}).Findings {
			if fd.Severity == check.SeverityError {
				errs = append(errs, fd.Rule+" "+f.Label(fd.Ports[0].PortID))
			}
		}
		if fmt.Sprint(errs) != `[hca-key-not-on-switch "storage01"[1]]` {
			t.Errorf("%s: audit errors %v, want the one built in", dev, errs)
		}
	}
}

// TestDemoHostAgrees: the demo host's sysfs and the demo fabric say the same about its
// InfiniBand ports: LID, SM LID, state and every table entry.
func TestDemoHostAgrees(t *testing.T) {
	h := &query.Host{Sys: demo.LiveSysfs(fixed)}
	views, err := h.Load(query.Selector{}, query.LoadOptions{Tables: true})
	if err != nil {
		t.Fatal(err)
	}
	f := demo.Fabric()
	checked := 0
	for _, v := range views {
		if v.LinkLayer() != "InfiniBand" || !v.Port.GID0.OK() {
			continue
		}
		g := check.GUID(v.Port.GID0.Value.PortGUID())
		var p *fabric.Port
		for _, n := range f.Nodes {
			for _, q := range n.Ports {
				if q.GUID == g && n.IsEndPort(q) {
					p = q
				}
			}
		}
		if p == nil {
			t.Errorf("%s (port GUID %s) is not in the demo fabric", v.Ref(), g)
			continue
		}
		var table []check.PKey
		for _, e := range v.Table.Entries {
			table = append(table, e.PKey)
		}
		if v.Port.LID.Value != p.LID || v.Port.SMLID.Value != p.SMLID || v.Port.State.Name != p.State || fmt.Sprint(table) != fmt.Sprint(p.PKeys[:len(table)]) {
			t.Errorf("%s: sysfs LID %d SM %d %s %v; fabric %d %d %s %v", v.Ref(), v.Port.LID.Value, v.Port.SMLID.Value, v.Port.State.Name, table, p.LID, p.SMLID, p.State, p.PKeys[:len(table)])
		}
		checked++
	}
	if checked != 3 { // mlx5_0/1, mlx5_1/1, mlx5_1/2
		t.Errorf("%d ports compared, want 3", checked)
	}
}

// TestDemoTransportRoutes: the transport routes as a fabric does: a directed route
// leaves the local CA only through its own port and crosses switches only (IBA
// C14-9); a LID reaches its port; PortCounters of the demo host's ports are its sysfs
// counters.
func TestDemoTransportRoutes(t *testing.T) {
	tr, err := demo.OpenTransport("mlx5_0", 1, fixed)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		addr mad.Address
		want string // node description, "" no answer
	}{
		{mad.DirectedRoute(), "demo-node HCA-1"},
		{mad.DirectedRoute(1), "leaf01"},
		{mad.DirectedRoute(2), ""},       // out of another port of the local CA
		{mad.DirectedRoute(1, 1, 1), ""}, // through sm01, a CA
		{mad.DirectedRoute(1, 7, 2), "storage01"},
		{mad.DirectedRoute(1, 5), ""}, // a port with no cable
		{mad.LIDAddress(6), "storage01"},
		{mad.LIDAddress(7), "leaf02"},
		{mad.LIDAddress(40), ""},
	} {
		desc, err := mad.GetNodeDesc(ctx, tr, tc.addr)
		var te *mad.TimeoutError
		switch {
		case tc.want == "" && !errors.As(err, &te):
			t.Errorf("%s: %q, %v; want no answer", tc.addr, desc, err)
		case tc.want != "" && desc != tc.want:
			t.Errorf("%s: %q, %v; want %q", tc.addr, desc, err, tc.want)
		}
	}
	r := query.ReadPortCounters(ctx, tr, []query.PMAPort{{LID: 3, Port: 1}})[0]
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	pc := r.Counters
	// movers: mlx5_0/1 port_rcv_constraint_errors starts at 12.
	if pc.PortRcvConstraintErrors != 12 {
		t.Errorf("mlx5_0/1 PortRcvConstraintErrors %d over the PMA, sysfs says 12", pc.PortRcvConstraintErrors)
	}
	if _, err := demo.OpenTransport("mlx5_1", 2, fixed); err == nil {
		t.Error("attached at mlx5_1/2, a DOWN port")
	}
}
