package fabric

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
)

// portEndpoint is the swept port id of f as a can-talk endpoint, placed in f.
func portEndpoint(f *Fabric, id check.PortID, label string) check.Endpoint {
	p := f.Port(id)
	var entries []check.TableEntry
	for i, k := range p.PKeys {
		entries = append(entries, check.TableEntry{Index: i, PKey: k, Readable: true})
	}
	e := check.Endpoint{Label: label, Port: true, Entries: entries, LinkLayer: "InfiniBand", State: p.State, Fabric: f, At: &id}
	if p.GIDPrefix != 0 {
		e.Subnet = &check.SubnetID{SMLID: p.SMLID, GIDPrefix: p.GIDPrefix}
	}
	return e
}

func TestCanTalkHopsShareTheAuditRule(t *testing.T) {
	a1, b1 := check.PortID{Node: 0xa0, Port: 1}, check.PortID{Node: 0xb0, Port: 1}
	s1 := check.PortID{Node: 0x50, Port: 1}
	for _, tc := range []struct {
		name    string
		change  func(f *Fabric)
		kind    check.VerdictKind
		text    string // in the reasons (or warnings for yes)
		audited bool   // the audit reports hca-key-not-on-switch
	}{
		{"clean", func(f *Fabric) {}, check.VerdictYes, "share partition 0x0001", false},
		{"key removed from the switch port facing A, enforcement on", func(f *Fabric) { f.Port(s1).PKeys[1] = 0 },
			check.VerdictNo, `"S"[1], the switch port facing "HcaA"[1], lacks partition 0x0001 and enforces partitions`, true},
		{"key removed, enforcement off", func(f *Fabric) {
			f.Port(s1).PKeys[1] = 0
			f.Port(s1).Enforcement = &check.Enforcement{}
		}, check.VerdictYes, "does not enforce partitions, so it passes them", true},
		{"key removed, inbound only", func(f *Fabric) {
			f.Port(s1).PKeys[1] = 0
			f.Port(s1).Enforcement = &check.Enforcement{Inbound: true}
		}, check.VerdictOneWay, "enforces inbound", true},
		{"switch table not read", func(f *Fabric) { f.Port(s1).PKeys, f.Port(s1).PKeysError = nil, "P_KeyTable: timeout" },
			check.VerdictUnknown, "was not read", false},
		{"switch enforcement bits not read, key missing", func(f *Fabric) {
			f.Port(s1).PKeys[1] = 0
			f.Port(s1).Enforcement = nil
		}, check.VerdictUnknown, "enforcement bits were not read", true},
		{"B not active", func(f *Fabric) { f.Port(b1).State = check.StateInit }, check.VerdictNotActive, "B is INIT", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := testFabric()
			// Only 0x0001 is shared: drop the default partition from the CA ports.
			for _, id := range []check.PortID{a1, b1, s1, {Node: 0x50, Port: 2}} {
				f.Port(id).PKeys[0] = 0
			}
			tc.change(f)
			v := check.CanTalk(portEndpoint(f, a1, "A"), portEndpoint(f, b1, "B"))
			all := strings.Join(append(append([]string{}, v.Reasons...), v.Warnings...), "\n")
			if v.Kind != tc.kind || !strings.Contains(all, tc.text) {
				t.Errorf("verdict %s, want %s with %q:\n%s\nnot checked: %v", v.Kind, tc.kind, tc.text, all, v.NotChecked)
			}
			found := false
			for _, fd := range AuditFabric(f, AuditOptions{}).Findings {
				found = found || fd.Rule == RuleHCAKeyNotOnSwitch
			}
			if found != tc.audited {
				t.Errorf("audit reports %s: %v, want %v", RuleHCAKeyNotOnSwitch, found, tc.audited)
			}
		})
	}
}

func TestCanTalkUnreadEntriesAreUnknown(t *testing.T) {
	// issue: with entries 0 and 1 unreadable, a definite NO was given.
	a := check.Endpoint{Label: "A", Port: true, Entries: []check.TableEntry{{Index: 0}, {Index: 1}, {Index: 2, PKey: 0x0005, Readable: true}}}
	b := check.Endpoint{Label: "B", Port: true, Entries: []check.TableEntry{{Index: 0, PKey: 0xffff, Readable: true}}}
	v := check.CanTalk(a, b)
	if v.Kind != check.VerdictUnknown || v.CanTalk() || v.Kind.ExitCode() != 4 || len(v.NotChecked) == 0 {
		t.Errorf("verdict %s (exit %d), not checked %v; reasons %v", v.Kind, v.Kind.ExitCode(), v.NotChecked, v.Reasons)
	}
	// A rule decided without the unread entries still gives a definite no.
	a.QPType, b.QPType = check.QPUD, check.QPRC
	if v := check.CanTalk(a, b); v.Kind != check.VerdictNo {
		t.Errorf("QP types differ: verdict %s, want no", v.Kind)
	}
	// Readable entries that already work: yes.
	a.Entries[2].PKey, a.QPType, b.QPType = 0x7fff, check.QPAny, check.QPAny
	if v := check.CanTalk(a, b); v.Kind != check.VerdictYes {
		t.Errorf("shared default partition: verdict %s, want yes", v.Kind)
	}
}

func TestCanTalkSubnets(t *testing.T) {
	e := func(label string, prefix uint64, sm uint16) check.Endpoint {
		return check.Endpoint{Label: label, Port: true, State: check.StateActive, Entries: []check.TableEntry{{Index: 0, PKey: 0xffff, Readable: true}},
			Subnet: &check.SubnetID{SMLID: sm, GIDPrefix: check.GUID(prefix)}}
	}
	v := check.CanTalk(e("A", 0xfe80000000000000, 1), e("B", 0xfe80000000000001, 1))
	if v.Kind != check.VerdictDifferentSubnets || v.CanTalk() || !strings.Contains(v.Reasons[0], "router") || v.Kind.ExitCode() != 4 {
		t.Errorf("different prefixes: %s %v", v.Kind, v.Reasons)
	}
	v = check.CanTalk(e("A", 0xfe80000000000000, 1), e("B", 0xfe80000000000000, 1))
	if v.Kind != check.VerdictYes {
		t.Errorf("same subnet: %s %v", v.Kind, v.Reasons)
	}
	// Two SMs may manage the same default prefix (ee475e31): the tables' yes depends
	// on it.
	v = check.CanTalk(e("A", 0xfe80000000000000, 1), e("B", 0xfe80000000000000, 7))
	if v.Kind != check.VerdictUnknown || v.Kind.ExitCode() != 4 || !slices.ContainsFunc(v.NotChecked, func(n check.NotChecked) bool { return n.Cause == check.NotCheckedSubnet }) {
		t.Errorf("same prefix, other SM LID: %s, not checked %v (want unknown on the subnet)", v.Kind, v.NotChecked)
	}
	down := e("B", 0xfe80000000000000, 1)
	down.State = check.StateDown
	if v := check.CanTalk(e("A", 0xfe80000000000000, 1), down); v.Kind != check.VerdictNotActive || v.Kind.ExitCode() != 1 || !strings.Contains(v.Reasons[0], "B is DOWN") {
		t.Errorf("down port: %s %v", v.Kind, v.Reasons)
	}
}

func TestScopeAndAuditOutside(t *testing.T) {
	f := testFabric()
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if n.IsEndPort(p) {
				p.GIDPrefix = 0xfe80000000000000
			}
		}
	}
	// A back-to-back link from HcaA's port 2 to HcaX, no SM on it; HcaY on another subnet.
	a := f.Node(0xa0)
	a.NumPorts = 2
	a.Ports = append(a.Ports, &Port{Num: 2, State: check.StateInit, PhysState: "LinkUp", Peer: &check.PortID{Node: 0xc0, Port: 1}, PKeysError: "not read yet: no directed route arrived on this port"})
	f.Nodes = append(f.Nodes,
		&Node{GUID: 0xc0, Type: check.NodeCA, Description: "HcaX", NumPorts: 1, PartitionCap: 8, Ports: []*Port{
			{Num: 1, GUID: 0xc1, State: check.StateInit, PhysState: "LinkUp", Peer: &check.PortID{Node: 0xa0, Port: 2}, TableSize: 8, PKeys: make([]check.PKey, 8)}}},
		&Node{GUID: 0xd0, Type: check.NodeCA, Description: "HcaY", NumPorts: 1, PartitionCap: 8, Ports: []*Port{
			{Num: 1, GUID: 0xd1, LID: 1, SMLID: 1, GIDPrefix: 0xfe80000000000001, State: check.StateActive, PhysState: "LinkUp", Peer: &check.PortID{Node: 0x60, Port: 1}, TableSize: 8, PKeys: make([]check.PKey, 8)}}})
	f.Normalize()
	for _, tc := range []struct {
		id   check.PortID
		want Scope
	}{{check.PortID{Node: 0xa0, Port: 1}, ScopeSubnet}, {check.PortID{Node: 0xa0, Port: 2}, ScopeUnmanaged}, {check.PortID{Node: 0xc0, Port: 1}, ScopeUnmanaged},
		{check.PortID{Node: 0xd0, Port: 1}, ScopeOtherSubnet}, {check.PortID{Node: 0x50, Port: 1}, ScopeSubnet}, {check.PortID{Node: 0x50, Port: 4}, ScopeDown}} {
		if got, why := f.PortScope(tc.id); got != tc.want {
			t.Errorf("%s: %s (%s), want %s", f.Label(tc.id), got, why, tc.want)
		}
	}
	res := AuditFabric(f, AuditOptions{})
	for _, fd := range res.Findings {
		for _, p := range fd.Ports {
			if p.Node == 0xc0 || p.Node == 0xd0 || p.PortID == (check.PortID{Node: 0xa0, Port: 2}) {
				t.Errorf("finding about a port outside the subnet: %s", fd)
			}
		}
	}
	if len(res.Outside) != 3 || res.Incomplete() {
		t.Errorf("outside %+v, not checked %+v", res.Outside, res.NotChecked)
	}
}

func TestAuditNoTablesIsIncomplete(t *testing.T) {
	f := testFabric()
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			p.PKeys, p.PKeysError = nil, ""
		}
	}
	res := AuditFabric(f, AuditOptions{})
	if !res.Incomplete() || res.TablesChecked != 0 {
		t.Fatalf("a sweep without tables: incomplete %v, %d tables checked", res.Incomplete(), res.TablesChecked)
	}
	// 2 CA ports, 2 switch port 0s, 4 cabled switch ports.
	if len(res.NotChecked) != 8 || !strings.Contains(NotCheckedSummary(res.NotChecked), "--no-tables") {
		t.Errorf("not checked %d: %s", len(res.NotChecked), NotCheckedSummary(res.NotChecked))
	}
	// One line for the eight: its kind, its count, why, and the first three ports.
	want := []NotCheckedLine{{Kind: UnreadTable, Text: `8 P_Key tables not in the sweep (made with --no-tables): "S"[0], "S"[1], "S"[2], and 5 more`}}
	if got := NotCheckedLines(res.NotChecked); len(got) != 1 || got[0] != want[0] || NotCheckedSummary(res.NotChecked) != want[0].Text {
		t.Errorf("lines %q, summary %q, want %q", got, NotCheckedSummary(res.NotChecked), want)
	}
	found := false
	for _, fd := range res.Findings {
		found = found || fd.Rule == RuleNotRead && strings.Contains(fd.Message, "8 P_Key tables were not read")
	}
	if !found {
		t.Errorf("no not-read finding: %v", res.Findings)
	}
	if full := AuditFabric(testFabric(), AuditOptions{}); full.Incomplete() || full.TablesChecked != 8 {
		t.Errorf("full sweep: incomplete %v, %d tables", full.Incomplete(), full.TablesChecked)
	}
}

func TestAuditEnforceOff(t *testing.T) {
	// part_enforce off: OpenSM leaves the switch ports' tables (0xffff) and clears the bits.
	f := testFabric()
	for _, id := range []check.PortID{{Node: 0x50, Port: 1}, {Node: 0x50, Port: 2}} {
		p := f.Port(id)
		p.PKeys = make([]check.PKey, 8)
		p.PKeys[0] = 0xffff
		p.Enforcement = &check.Enforcement{}
	}
	if fs := AuditFabric(f, AuditOptions{}).Findings; len(fs) == 0 {
		t.Fatal("with enforcement assumed on, the audit should report the switch ports")
	}
	if fs := AuditFabric(f, AuditOptions{PartEnforce: "off"}).Findings; len(fs) != 0 {
		t.Errorf("part_enforce off: %v", fs)
	}
}

// TestAuditEnforceOnly: with part_enforce in (or out) OpenSM sets only that
// direction's bit on the switch ports facing CAs (osm_pkey_mgr.c
// pkey_mgr_enforce_partition: in 0x8, out 0x4), so the other direction off is no
// finding; the direction it was told to enforce, off, still is. What the switch port
// then drops is judged from the bits as read, whatever the mode.
func TestAuditEnforceOnly(t *testing.T) {
	for _, tc := range []struct {
		in, out bool
		only    string
		want    string // the directions enforcement-off names, "" for no finding
	}{
		{true, false, "", "outbound"},
		{true, false, "in", ""},
		{true, false, "out", "outbound"}, // inbound on: more than OpenSM sets, no finding
		{false, true, "out", ""},
		{false, true, "in", "inbound"},
		{false, false, "in", "inbound"},
		{false, false, "out", "outbound"},
		{false, false, "", "inbound, outbound"},
		{true, true, "in", ""},
	} {
		f := testFabric()
		sw := f.Port(check.PortID{Node: 0x50, Port: 1})
		sw.Enforcement = &check.Enforcement{Inbound: tc.in, Outbound: tc.out}
		// Rules other than enforcement-off do not depend on the mode.
		var others []string
		for i, only := range []string{"", tc.only} {
			var got []string
			var rest []string
			for _, fd := range AuditFabric(f, AuditOptions{PartEnforce: only}).Findings {
				if fd.Rule != RuleEnforcementOff {
					rest = append(rest, fd.String())
					continue
				}
				got = append(got, fd.Message)
			}
			if i == 0 {
				others = rest
				continue
			}
			if !slices.Equal(rest, others) {
				t.Errorf("in %v out %v, part_enforce %q: other findings %q, want %q", tc.in, tc.out, tc.only, rest, others)
			}
			want := 0
			if tc.want != "" {
				want = 1
			}
			if len(got) != want || want == 1 && !strings.Contains(got[0], "partition enforcement is off ("+tc.want+") on ") {
				t.Errorf("in %v out %v, part_enforce %q: %q, want %q", tc.in, tc.out, tc.only, got, tc.want)
			}
		}
	}
}

func TestAuditDefaultNotIndex0(t *testing.T) {
	f := testFabric()
	a := f.Port(check.PortID{Node: 0xa0, Port: 1})
	a.PKeys[0], a.PKeys[1] = a.PKeys[1], a.PKeys[0]
	var got []check.Finding
	for _, fd := range AuditFabric(f, AuditOptions{}).Findings {
		if fd.Rule == RuleDefaultNotIndex0 {
			got = append(got, fd)
		}
	}
	if len(got) != 1 || !strings.Contains(got[0].Message, "default partition is at index 1") || got[0].Severity != check.SeverityWarning {
		t.Errorf("%v", got)
	}
	// Switch ports (port 0 and external) are not IPoIB ports.
	f = testFabric()
	f.Port(check.PortID{Node: 0x50, Port: 0}).PKeys[0] = 0
	for _, fd := range AuditFabric(f, AuditOptions{}).Findings {
		if fd.Rule == RuleDefaultNotIndex0 {
			t.Errorf("switch port: %s", fd)
		}
	}
}

func TestScopeBeforeAnySM(t *testing.T) {
	// No SM has run: every LID is 0, the local port's too. Nothing is "outside".
	f := testFabric()
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			p.LID, p.SMLID, p.State = 0, 0, check.StateInit
		}
	}
	if out := f.OutsidePorts(); len(out) != 0 {
		t.Errorf("before an SM: outside %v", out)
	}
}

// TestCanTalkAndAuditAgree: on random tables and enforcement bits, can-talk's switch
// hops and the audit's hca-key-not-on-switch findings say the same about every key of
// every CA port (one rule, Fabric.CheckHop), and a pair whose every working partition
// the audit reports missing on an enforcing switch port is never a yes.
func TestCanTalkAndAuditAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	a1, b1 := check.PortID{Node: 0xa0, Port: 1}, check.PortID{Node: 0xb0, Port: 1}
	keys := []check.PKey{0xffff, 0x7fff, 0x8001, 0x0001, 0x8002, 0x0002, 0x8003}
	for round := 0; round < 2000; round++ {
		f := testFabric()
		for _, id := range []check.PortID{a1, b1, {Node: 0x50, Port: 1}, {Node: 0x50, Port: 2}} {
			p := f.Port(id)
			for i := range p.PKeys {
				p.PKeys[i] = 0
				if rng.IntN(2) == 0 {
					p.PKeys[i] = keys[rng.IntN(len(keys))]
				}
			}
			if id.Node == 0x50 {
				switch rng.IntN(4) {
				case 0:
					p.Enforcement = nil
				default:
					p.Enforcement = &check.Enforcement{Inbound: rng.IntN(2) == 0, Outbound: rng.IntN(2) == 0}
				}
			}
		}
		missing := map[[2]uint64]bool{} // {CA node, key}
		for _, fd := range AuditFabric(f, AuditOptions{}).Findings {
			if fd.Rule == RuleHCAKeyNotOnSwitch {
				for _, k := range fd.PKeys {
					missing[[2]uint64{uint64(fd.Ports[0].Node), uint64(uint16(k.Partition()))}] = true
				}
			}
		}
		v := check.CanTalk(portEndpoint(f, a1, "A"), portEndpoint(f, b1, "B"))
		for _, h := range v.Hops {
			if got := missing[[2]uint64{uint64(h.End.Node), uint64(h.Key)}]; got != (h.TableRead && !h.OnSwitch) {
				t.Fatalf("round %d: key %s at %s: audit missing %v, hop %+v", round, h.Key, f.Label(h.End), got, h)
			}
		}
		if v.Kind != check.VerdictYes {
			continue
		}
		// A yes needs a working shared partition whose hops all pass.
		ok := false
		for _, sp := range v.Shared {
			if !sp.Works {
				continue
			}
			pass := true
			for _, end := range []check.PortID{a1, b1} {
				h, _ := f.CheckHop(end, sp.Key)
				if h.FromEnd != check.HopPasses || h.ToEnd != check.HopPasses {
					pass = false
				}
			}
			ok = ok || pass
		}
		if !ok {
			t.Fatalf("round %d: yes without a partition that passes both switch ports: %v", round, v.Reasons)
		}
	}
}

func TestLimitedOnlyWithUnreadTables(t *testing.T) {
	// HcaA (the full member of 0x0001) was not read: the limited-only warning must say
	// a full member may be in a table not read.
	f := testFabric()
	f.Port(check.PortID{Node: 0xa0, Port: 1}).PKeys, f.Port(check.PortID{Node: 0xa0, Port: 1}).PKeysError = nil, "P_KeyTable: timeout"
	res := AuditFabric(f, AuditOptions{})
	found := false
	for _, fd := range res.Findings {
		if fd.Rule == RuleLimitedOnly {
			found = true
			if !strings.Contains(fd.Message, "a full member may be there") {
				t.Errorf("%s", fd)
			}
		}
	}
	if !found || !res.Incomplete() {
		t.Errorf("findings %v, incomplete %v", res.Findings, res.Incomplete())
	}
}
