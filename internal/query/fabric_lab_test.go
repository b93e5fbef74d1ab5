package query_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/lab"
	"github.com/ibkey/ibkey/internal/partconf"
	"github.com/ibkey/ibkey/internal/query"
)

// The audit on the simulated fabric: OpenSM programs small.net from labConf, the sweep
// reads it back, then each problem is injected and must be found.
//
// small.net port GUIDs: HcaA 0x100001, HcaB 0x100004, HcaC 0x100007, HcaD 0x10000a
// (port 1) and 0x10000b (port 2); Switch1 0x200000, Switch2 0x200001.
const labConf = `Default=0x7fff, ipoib : ALL=full ;
storage=0x0001 : 0x100001=full, 0x100004, 0x10000a ;
compute=0x0002, defmember=full : 0x100004, 0x100007=limited, 0x10000b ;
`

func partconfModel(t *testing.T, f *fabric.Fabric, conf string) *partconf.Model {
	t.Helper()
	c := partconf.Parse("partitions.conf", []byte(conf))
	if c.Rejected {
		t.Fatalf("the test's partitions.conf is rejected: %v", c.Findings)
	}
	return partconf.NewFabricModel(c, f, partconf.Options{})
}

func findingsText(fs []check.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "  %s\n", f)
	}
	return b.String()
}

func errorsOf(fs []check.Finding) []check.Finding {
	var out []check.Finding
	for _, f := range fs {
		if f.Severity == check.SeverityError {
			out = append(out, f)
		}
	}
	return out
}

// hasFinding reports whether a finding of rule names the port (node GUID, port) and,
// when key is not 0, the 15-bit key.
func hasFinding(fs []check.Finding, rule string, port check.PortID, key uint16) bool {
	for _, f := range fs {
		if f.Rule != rule {
			continue
		}
		named := false
		for _, p := range f.Ports {
			named = named || p.PortID == port
		}
		if !named {
			continue
		}
		if key == 0 {
			return true
		}
		for _, k := range f.PKeys {
			if uint16(k.Partition()) == key {
				return true
			}
		}
	}
	return false
}

var (
	hcaA1    = check.PortID{Node: 0x100000, Port: 1}
	hcaB1    = check.PortID{Node: 0x100003, Port: 1}
	switch12 = check.PortID{Node: 0x200000, Port: 2}
)

func TestLabFabricCheck(t *testing.T) {
	l := lab.Start(t, smallNet, nil)
	if err := l.RunOpenSM(labConf, false); err != nil {
		t.Fatal(err)
	}
	tr := l.Dial(t, "", labMAD)
	ctx := context.Background()
	sweep := func(t *testing.T) *fabric.Fabric {
		t.Helper()
		f, err := query.Sweep(ctx, tr, query.SweepOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	clean := sweep(t)

	t.Run("clean", func(t *testing.T) {
		audit := fabric.AuditFabric(clean, fabric.AuditOptions{}).Findings
		cmp := partconf.CompareFabric(clean, partconfModel(t, clean, labConf))
		if e := errorsOf(audit); len(e) > 0 {
			t.Errorf("clean fabric, audit errors:\n%s", findingsText(e))
		}
		if len(cmp) > 0 {
			t.Errorf("clean fabric differs from the partitions.conf OpenSM applied:\n%s", findingsText(cmp))
		}
		t.Logf("clean fabric, warnings:\n%s", findingsText(audit))
		for _, n := range clean.Nodes {
			for _, p := range n.Ports {
				if p.Peer != nil && p.State != check.StateActive {
					t.Errorf("%s is %s after OpenSM", clean.Label(check.PortID{Node: n.GUID, Port: p.Num}), p.State)
				}
			}
		}
	})

	t.Run("members", func(t *testing.T) {
		var got []string
		for _, m := range clean.Members(0x0001) {
			if m.EndPort {
				got = append(got, fmt.Sprintf("%s[%d]=%s", m.Description, m.Port, m.Membership))
			}
		}
		if want := `HcaA[1]=full HcaB[1]=limited HcaD[1]=limited`; strings.Join(got, " ") != want {
			t.Errorf("members of 0x0001: %s, want %s", strings.Join(got, " "), want)
		}
	})

	t.Run("edited partitions.conf", func(t *testing.T) {
		// HcaB becomes full in storage, HcaC joins storage, HcaD[2] leaves compute.
		edited := `Default=0x7fff, ipoib : ALL=full ;
storage=0x0001 : 0x100001=full, 0x100004=full, 0x10000a, 0x100007 ;
compute=0x0002, defmember=full : 0x100004, 0x100007=limited ;
`
		cmp := partconf.CompareFabric(clean, partconfModel(t, clean, edited))
		hcaC1 := check.PortID{Node: 0x100006, Port: 1}
		hcaD2 := check.PortID{Node: 0x100009, Port: 2}
		for _, w := range []struct {
			rule string
			port check.PortID
			key  uint16
		}{
			{partconf.RuleWrongMembership, hcaB1, 0x0001},
			{partconf.RuleMissingKey, hcaC1, 0x0001},
			{partconf.RuleExtraKey, hcaD2, 0x0002},
		} {
			if !hasFinding(cmp, w.rule, w.port, w.key) {
				t.Errorf("no %s for %s key 0x%04x in:\n%s", w.rule, clean.Label(w.port), w.key, findingsText(cmp))
			}
		}
		if !check.HasErrors(cmp, false) {
			t.Error("differences from --partitions must be errors")
		}
		t.Logf("edited file:\n%s", findingsText(cmp))
	})

	t.Run("switch port table changed", func(t *testing.T) {
		// Switch1 port 2 faces HcaB: drop storage (0x0001) from it and add 0x0005.
		sw := clean.Node(0x200000)
		old := sw.Port(2).PKeys
		var blk [mad.PKeysPerBlock]uint16
		for i := range blk {
			blk[i] = uint16(old[i])
			if uint16(check.PKey(blk[i]).Partition()) == 0x0001 {
				blk[i] = 0
			}
		}
		for i := range blk {
			if blk[i] == 0 {
				blk[i] = 0x8005
				break
			}
		}
		// Switch1 is one hop from HcaA.
		if err := l.SetPKeyBlock(ctx, "", mad.DirectedRoute(1), 2, 0, blk); err != nil {
			t.Fatal(err)
		}
		defer func() {
			var orig [mad.PKeysPerBlock]uint16
			for i := range orig {
				orig[i] = uint16(old[i])
			}
			if err := l.SetPKeyBlock(ctx, "", mad.DirectedRoute(1), 2, 0, orig); err != nil {
				t.Error(err)
			}
		}()
		f := sweep(t)
		audit := fabric.AuditFabric(f, fabric.AuditOptions{}).Findings
		if !hasFinding(audit, fabric.RuleHCAKeyNotOnSwitch, hcaB1, 0x0001) || !hasFinding(audit, fabric.RuleHCAKeyNotOnSwitch, switch12, 0x0001) {
			t.Errorf("no %s for HcaB/Switch1[2] key 0x0001:\n%s", fabric.RuleHCAKeyNotOnSwitch, findingsText(audit))
		}
		if !hasFinding(audit, fabric.RuleSwitchKeyNotOnHCA, switch12, 0x0005) {
			t.Errorf("no %s for Switch1[2] key 0x0005:\n%s", fabric.RuleSwitchKeyNotOnHCA, findingsText(audit))
		}
		// ibsim reports the switch port's enforcement off: nothing is dropped, both
		// are warnings. With the bits OpenSM's part_enforce both sets on a real
		// switch, the key the switch port lacks is an error; the key the CA lacks
		// stays a warning (the CA drops those packets itself).
		if n := len(errorsOf(audit)); n != 0 {
			t.Errorf("%d audit errors, want none (enforcement off):\n%s", n, findingsText(audit))
		}
		f.Port(switch12).Enforcement = &check.Enforcement{Inbound: true, Outbound: true}
		enforced := fabric.AuditFabric(f, fabric.AuditOptions{}).Findings
		if errs := errorsOf(enforced); len(errs) != 1 || errs[0].Rule != fabric.RuleHCAKeyNotOnSwitch || !hasFinding(enforced, fabric.RuleSwitchKeyNotOnHCA, switch12, 0x0005) {
			t.Errorf("enforcing: errors %s, want only %s; and %s as a warning:\n%s", findingsText(errs), fabric.RuleHCAKeyNotOnSwitch, fabric.RuleSwitchKeyNotOnHCA, findingsText(enforced))
		}
		f.Port(switch12).Enforcement = &check.Enforcement{}
		t.Logf("switch port changed:\n%s", findingsText(audit))
		diff := fabric.Diff(clean, f)
		kinds := map[string]bool{}
		for _, c := range diff {
			kinds[c.Rule] = true
			if c.Ports[0].PortID != switch12 {
				t.Errorf("diff names %v, want only Switch1[2]: %s", c.Ports, c.Message)
			}
		}
		if !kinds[fabric.ChangePKeyAdded] || !kinds[fabric.ChangePKeyRemoved] || len(diff) != 2 {
			t.Errorf("diff clean -> changed:\n%+v", diff)
		}
	})

	t.Run("limited-only partition", func(t *testing.T) {
		conf := labConf + "lonely=0x0003 : 0x100004, 0x100007 ;\n"
		if err := l.RunOpenSM(conf, false); err != nil {
			t.Fatal(err)
		}
		f := sweep(t)
		audit := fabric.AuditFabric(f, fabric.AuditOptions{}).Findings
		if !hasFinding(audit, fabric.RuleLimitedOnly, hcaB1, 0x0003) {
			t.Errorf("no %s for 0x0003:\n%s", fabric.RuleLimitedOnly, findingsText(audit))
		}
		if hasFinding(audit, fabric.RuleLimitedOnly, hcaA1, 0) {
			t.Errorf("limited-only finding names HcaA:\n%s", findingsText(audit))
		}
		if e := errorsOf(audit); len(e) > 0 {
			t.Errorf("a limited-only partition is a warning, got errors:\n%s", findingsText(e))
		}
		if cmp := partconf.CompareFabric(f, partconfModel(t, f, conf)); len(cmp) > 0 {
			t.Errorf("after OpenSM applied the file it still differs:\n%s", findingsText(cmp))
		}
	})
}
