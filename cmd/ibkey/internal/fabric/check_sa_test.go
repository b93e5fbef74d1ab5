package fabric

import (
	"testing"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/fabric/fabrictest"
)

// A port another SM manages answers to a LID of its own subnet: OpenSM's SA looks a
// P_KeyTableRecord up by LID (osm_sa_pkey_record.c), so asking it for that LID
// compares another port's table (a false sa-table-differs). --sa asks only for the
// ports of the swept subnet; before, it asked for every port with a LID.
func TestSAPortsOnlyInSubnet(t *testing.T) {
	fab := fabrictest.FatTree(1, 0, 2)
	var cas []*fabric.Node
	for _, n := range fab.Nodes {
		if n.Type == check.NodeCA {
			cas = append(cas, n)
		} else {
			n.Port(0).SMLID = 1
		}
	}
	fab.Local = check.PortID{Node: cas[0].GUID, Port: 1}
	other := cas[1].Port(1)
	other.SMLID = 9 // another master SM
	asked := map[check.PortID]bool{}
	for _, sp := range saPorts(fab) {
		asked[sp.id] = true
	}
	otherID := check.PortID{Node: cas[1].GUID, Port: 1}
	if asked[otherID] || !asked[fab.Local] {
		t.Errorf("asked %v: want %v (the local subnet's), not %v (another SM's)", asked, fab.Local, otherID)
	}
	if s, _ := fab.PortScope(otherID); s != fabric.ScopeOtherSubnet {
		t.Fatalf("fixture: %s", s)
	}
}
