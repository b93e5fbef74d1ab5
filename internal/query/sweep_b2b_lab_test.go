package query_test

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/lab"
	"github.com/ibkey/ibkey/internal/query"
)

// TestLabSweepBackToBackHCAs (issue 24 item 4): two dual-port HCAs cabled to each
// other, no switch. Swept from HcaA's port 1 the subnet is HcaA[1]-HcaB[1], as
// ibnetdiscover at HcaA and OpenSM at HcaA see it: a CA sends an SMP only out of the
// port it was sent from (IBA C14-9:1; Linux smi.c discards any other InitialPath[1])
// and forwards none between its ports (C14-9:2), so the second cable is another subnet.
// Before, the sweep left HcaA through port 2 (ibsim forwards what real HCAs drop),
// listed the link HcaA[2]-HcaB[2] and read HcaB[2]'s table, which OpenSM never programs.
func TestLabSweepBackToBackHCAs(t *testing.T) {
	l := lab.Start(t, "testdata/b2b-dualport.net", nil)
	const (
		hcaA, hcaB = 0x100000, 0x100003
		conf       = "Default=0x7fff : ALL=full ;\na=0x0001 : ALL=full ;\n"
	)
	for _, phase := range []string{"before OpenSM", "after OpenSM"} {
		if phase == "after OpenSM" {
			if err := l.RunOpenSM(conf, false); err != nil {
				t.Fatal(err)
			}
		}
		f := sweepLab(t, l, "HcaA", query.SweepOptions{})
		nd := ibnetdiscover(t, l.MustTool("ibnetdiscover"))
		compareDiscovery(t, phase, f, nd, l.Topology)
		if len(f.Links()) != 1 {
			t.Errorf("%s: links %v, want HcaA[1]-HcaB[1] only", phase, f.Links())
		}
		for _, id := range []check.PortID{{Node: hcaA, Port: 2}, {Node: hcaB, Port: 2}} {
			p := f.Port(id)
			if p == nil {
				t.Fatalf("%s: %s not in the sweep", phase, f.Label(id))
			}
			if p.Peer != nil || p.PKeys != nil || p.GUID != 0 {
				t.Errorf("%s: %s: peer %v, table %v, port GUID %s: no route of this subnet arrives there", phase, f.Label(id), p.Peer, p.PKeys, p.GUID)
			}
			if p.State != check.StateInit {
				t.Errorf("%s: %s is %s, want INIT (its PortInfo is read through the port 1 route)", phase, f.Label(id), p.State)
			}
		}
		if g := query.FabricGaps(f); g.Partial() {
			t.Errorf("%s: the sweep counts as partial: %s", phase, g)
		}
		for _, fd := range fabric.AuditFabric(f, fabric.AuditOptions{}).Findings {
			// Before an SM runs, the cabled ports are INIT: port-not-active is right.
			if fd.Severity >= check.SeverityWarning && (phase == "after OpenSM" || fd.Rule != fabric.RulePortNotActive) {
				t.Errorf("%s: audit: %s", phase, fd)
			}
		}
	}

	// OpenSM programmed HcaA[1] and HcaB[1] (LIDs 1 and 2) and never reached HcaB[2]:
	// read through the second cable (which ibsim, unlike a real HCA, forwards), its
	// table still holds only the default key.
	f := sweepLab(t, l, "HcaA", query.SweepOptions{})
	for _, id := range []check.PortID{{Node: hcaA, Port: 1}, {Node: hcaB, Port: 1}} {
		p := f.Port(id)
		out, err := l.ToolAt("HcaA", "smpquery", "pkeys", strconv.Itoa(int(p.LID)))
		if err != nil {
			t.Fatal(err)
		}
		want, err := lab.ParsePKeys(out)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(p.PKeys) != fmt.Sprint(toPKeys(want.Entries[:want.Capacity])) {
			t.Errorf("%s: table %v, smpquery %v", f.Label(id), p.PKeys, want.Entries[:want.Capacity])
		}
	}
	out, err := l.ToolAt("HcaA", "smpquery", "-D", "pkeys", "0,2")
	if err != nil {
		t.Fatal(err)
	}
	b2, err := lab.ParsePKeys(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range b2.Entries {
		if k&0x7fff == 1 {
			t.Fatalf("OpenSM programmed HcaB[2] (%v): the second cable is in its subnet after all", b2.Entries[:8])
		}
	}
	if p := f.Port(check.PortID{Node: hcaB, Port: 2}); p.LID != 0 {
		t.Errorf("HcaB[2] has LID %d; OpenSM assigns none outside its subnet", p.LID)
	}
}
