package query_test

import (
	"testing"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/query"
)

func TestFabricGaps(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    fabric.Fabric
		want query.Gaps
		text string
	}{
		{name: "complete, a port without a link is not a gap", f: fabric.Fabric{Nodes: []*fabric.Node{{Ports: []*fabric.Port{
			{Num: 1, PKeysError: "not read: the port is DOWN (a table is meaningful only on a port with a link)"},
		}}}}},
		{name: "everything counted once", f: fabric.Fabric{
			Incomplete:  "context deadline exceeded after 1s",
			Unreachable: []fabric.Unreachable{{Path: "0,1"}, {Path: "0,2"}, {Path: "0,3"}},
			Nodes: []*fabric.Node{
				{Errors: []string{"NodeDescription: no reply", "SwitchInfo: no reply", "neighbours not probed: the route to this node already has 63 hops, the most a directed route holds"},
					Ports: []*fabric.Port{
						{Num: 0, Error: "PortInfo: no reply", PKeysError: "P_KeyTable: P_KeyTable block 0 of port 0: no reply"},
						{Num: 1, PKeysError: "table size unknown: SwitchInfo could not be read"},
						{Num: 2, PeerError: "no reply to NodeInfo after 4 attempt(s)"},
					}},
				{Ports: []*fabric.Port{{Num: 1, PKeysError: "not read yet: no directed route arrived on this port"}}},
			}},
			want: query.Gaps{NodeReads: 2, PortReads: 1, TableReads: 3, UnansweredLinks: 3, Stopped: "context deadline exceeded after 1s"},
			text: "the sweep stopped early (context deadline exceeded after 1s); 2 node attribute reads, 1 PortInfo read, 3 P_Key tables not read; 3 links with no answer from the far end (the nodes behind them are missing)"},
		{name: "a switch at 63 hops: its cabled ports no other route found", f: fabric.Fabric{Nodes: []*fabric.Node{
			{Type: check.NodeSwitch, Errors: []string{"neighbours not probed: the route to this node already has 63 hops, the most a directed route holds"},
				Ports: []*fabric.Port{
					{Num: 0, State: check.StateActive},
					{Num: 1, State: check.StateActive, Peer: &check.PortID{Node: 1, Port: 1}}, // the route it was found by
					{Num: 2, State: check.StateActive},                                        // cabled, never probed
					{Num: 3, State: check.StateDown},
				}},
		}},
			want: query.Gaps{UnprobedLinks: 1},
			text: "1 link past the 63 hops a directed route holds, not probed (the nodes behind them are missing)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := query.FabricGaps(&tc.f)
			if g != tc.want {
				t.Errorf("FabricGaps = %+v, want %+v", g, tc.want)
			}
			if g.Partial() != (tc.text != "") {
				t.Errorf("Partial = %v", g.Partial())
			}
			if gl := query.FabricGapList(&tc.f, false); (len(gl) > 0) != g.Partial() {
				t.Errorf("FabricGapList = %v, Partial = %v", gl, g.Partial())
			}
			if s := g.String(); s != tc.text {
				t.Errorf("String:\n got %q\nwant %q", s, tc.text)
			}
		})
	}
}
