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
