package exporter

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/demo"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/query"
)

// TestFabricLIDNotAnswering: in --lid mode, a LID that does not answer is a node not
// read (query.Fabric.LoadMany's *query.PartialError), as in a sweep: the ports that
// answered are served, with gaps (result="gaps", ibkey_fabric_not_read{what="node"},
// logged with the LID); never the previous read kept as if nothing changed, nor the
// LID dropped unsaid. With every LID answering, the count is 0.
func TestFabricLIDNotAnswering(t *testing.T) {
	tr, err := demo.OpenTransport("mlx5_0", 1, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	fab := &query.Fabric{T: tr, Via: demo.Via}
	var logged []string
	logf := func(format string, args ...any) { logged = append(logged, fmt.Sprintf(format, args...)) }
	sels := []query.FabricSelector{{Addr: mad.LIDAddress(9)}, {Addr: mad.LIDAddress(99)}}
	c := NewFabricCollector(FabricOptions{Fabric: fab, Interval: time.Minute, Selectors: sels, NoCounters: true, Logf: logf})
	if err := c.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := collect(t, c)
	expect(t, got, 1, "ibkey_fabric_port_info", "node_name", "demo-node HCA-2", "port", "1")
	expect(t, got, 1, "ibkey_fabric_not_read", "what", fabric.NotReadNode)
	expect(t, got, 1, "ibkey_fabric_sweeps_total", "result", ResultGaps)
	if len(logged) != 1 || !strings.Contains(logged[0], "not checked: lid 99: no answer via ") || strings.Count(logged[0], "99") != 1 {
		t.Errorf("logged %q, want lid 99 named", logged)
	}
	c = NewFabricCollector(FabricOptions{Fabric: fab, Interval: time.Minute, Selectors: sels[:1], NoCounters: true})
	if err := c.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	got = collect(t, c)
	expect(t, got, 0, "ibkey_fabric_not_read", "what", fabric.NotReadNode)
	expect(t, got, 1, "ibkey_fabric_sweeps_total", "result", ResultComplete)
}

// initPort is the demo fabric with port 2 of demo-node HCA-2 (LID 9) INIT instead of
// DOWN, still without a LID: its PortInfo replies say so. Exchange is left out, so
// mad.Exchange sends every batch through Do.
type initPort struct{ mad.Transport }

func (t initPort) Do(ctx context.Context, req mad.Request) (*mad.Packet, error) {
	p, err := t.Transport.Do(ctx, req)
	if err == nil && req.Attr == mad.AttrPortInfo && req.Modifier == 2 && !req.Addr.Directed && req.Addr.LID == 9 {
		p.Data[32] = p.Data[32]&0xf0 | byte(mad.PortStateInit)
	}
	return p, err
}

// TestFabricLIDTableNotRead: in --lid mode a P_Key table not read on a port that is
// not DOWN (a CA's other port without a LID: query reads it only through its own) is
// what fabric pkeys --lid counts not read (cmdutil.HostNotRead, exit 4): the read is
// served with gaps and ibkey_fabric_not_read{what="P_Key table"} counts it, never
// complete. A DOWN port's is part of no answer (query.PortView.DownTableNotRead), as a
// sweep leaves it out: complete, with the count at 0.
func TestFabricLIDTableNotRead(t *testing.T) {
	for _, tc := range []struct {
		name   string
		init   bool
		tables float64
		result string
	}{
		{"INIT port", true, 1, ResultGaps},
		{"DOWN port", false, 0, ResultComplete},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := demo.OpenTransport("mlx5_0", 1, time.Now)
			if err != nil {
				t.Fatal(err)
			}
			var mt mad.Transport = tr
			if tc.init {
				mt = initPort{tr}
			}
			fab := &query.Fabric{T: mt, Via: demo.Via}
			sels := []query.FabricSelector{{Addr: mad.LIDAddress(9), AllPorts: true}}
			c := NewFabricCollector(FabricOptions{Fabric: fab, Interval: time.Minute, Selectors: sels, NoCounters: true})
			if err := c.Sweep(context.Background()); err != nil {
				t.Fatal(err)
			}
			got := collect(t, c)
			expect(t, got, 1, "ibkey_fabric_pkey_table_unread", "node_name", "demo-node HCA-2", "port", "2")
			expect(t, got, tc.tables, "ibkey_fabric_not_read", "what", fabric.NotReadTable)
			expect(t, got, 0, "ibkey_fabric_not_read", "what", fabric.NotReadNode)
			expect(t, got, 1, "ibkey_fabric_sweeps_total", "result", tc.result)
			if gaps := fabric.NotCheckedSummary(c.NotRead()); tc.init != strings.Contains(gaps, "demo-node HCA-2") {
				t.Errorf("NotRead says %q", gaps)
			}
		})
	}
}
