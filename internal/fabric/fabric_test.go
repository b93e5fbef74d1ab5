package fabric

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/check"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// testFabric is a small clean fabric after a Subnet Manager ran:
//
//	HcaA (0xa0) port 1 (0xa1) -- Switch S (0x50) port 1
//	HcaB (0xb0) port 1 (0xb1) -- S port 2
//	S port 3 -- Switch T (0x60) port 1
//
// A is full and B limited in 0x0001; both full in the default partition. The switch
// ports facing the CAs mirror them and enforce partitions.
func testFabric() *Fabric {
	on := func() *check.Enforcement { return &check.Enforcement{Inbound: true, Outbound: true} }
	table := func(size int, keys ...check.PKey) []check.PKey {
		t := make([]check.PKey, size)
		copy(t, keys)
		return t
	}
	peer := func(n check.GUID, p int) *check.PortID { return &check.PortID{Node: n, Port: p} }
	f := &Fabric{
		Source: "test", SweptAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Duration: 1500 * time.Microsecond,
		Local: check.PortID{Node: 0xa0, Port: 1},
		Nodes: []*Node{
			{GUID: 0xa0, Type: check.NodeCA, Description: "HcaA", NumPorts: 1, PartitionCap: 8, Path: "0", Ports: []*Port{
				{Num: 1, GUID: 0xa1, LID: 1, SMLID: 1, State: check.StateActive, PhysState: "LinkUp", Peer: peer(0x50, 1), TableSize: 8, PKeys: table(8, 0xffff, 0x8001)},
			}},
			{GUID: 0xb0, Type: check.NodeCA, Description: "HcaB", NumPorts: 1, PartitionCap: 8, Path: "0,1,2", Ports: []*Port{
				{Num: 1, GUID: 0xb1, LID: 2, SMLID: 1, State: check.StateActive, PhysState: "LinkUp", Peer: peer(0x50, 2), TableSize: 8, PKeys: table(8, 0xffff, 0x0001)},
			}},
			{GUID: 0x50, Type: check.NodeSwitch, Description: "S", NumPorts: 4, PartitionCap: 8, PartitionEnforcementCap: 8, Path: "0,1", Ports: []*Port{
				{Num: 0, GUID: 0x50, LID: 3, SMLID: 1, State: check.StateActive, PhysState: "LinkUp", TableSize: 8, PKeys: table(8, 0xffff)},
				{Num: 1, State: check.StateActive, PhysState: "LinkUp", Enforcement: on(), Peer: peer(0xa0, 1), TableSize: 8, PKeys: table(8, 0xffff, 0x8001)},
				{Num: 2, State: check.StateActive, PhysState: "LinkUp", Enforcement: on(), Peer: peer(0xb0, 1), TableSize: 8, PKeys: table(8, 0xffff, 0x0001)},
				{Num: 3, State: check.StateActive, PhysState: "LinkUp", Enforcement: &check.Enforcement{}, Peer: peer(0x60, 1), TableSize: 8, PKeys: table(8, 0xffff)},
				{Num: 4, State: check.StateDown, PhysState: "Polling", Enforcement: &check.Enforcement{}, TableSize: 8, PKeysError: "not read: the port is DOWN"},
			}},
			{GUID: 0x60, Type: check.NodeSwitch, Description: "T", NumPorts: 1, PartitionCap: 8, PartitionEnforcementCap: 8, Path: "0,1,3", Ports: []*Port{
				{Num: 0, GUID: 0x60, LID: 4, SMLID: 1, State: check.StateActive, PhysState: "LinkUp", TableSize: 8, PKeys: table(8, 0xffff)},
				{Num: 1, State: check.StateActive, PhysState: "LinkUp", Enforcement: &check.Enforcement{}, Peer: peer(0x50, 3), TableSize: 8, PKeys: table(8, 0xffff)},
			}},
		},
	}
	f.Normalize()
	return f
}

func TestAuditClean(t *testing.T) {
	if fs := AuditFabric(testFabric(), AuditOptions{}).Findings; len(fs) > 0 {
		t.Errorf("clean fabric: %v", fs)
	}
}

func TestAuditRules(t *testing.T) {
	a1, b1 := check.PortID{Node: 0xa0, Port: 1}, check.PortID{Node: 0xb0, Port: 1}
	s1, s2 := check.PortID{Node: 0x50, Port: 1}, check.PortID{Node: 0x50, Port: 2}
	for _, tc := range []struct {
		name   string
		change func(f *Fabric)
		rule   string
		sev    check.Severity
		ports  []check.PortID
		keys   []check.PKey
		text   string
		n      int // findings of rule, default 1
	}{
		{"CA key missing on the switch port", func(f *Fabric) { f.Port(s1).PKeys[1] = 0 },
			RuleHCAKeyNotOnSwitch, check.SeverityError, []check.PortID{a1, s1}, []check.PKey{0x8001}, "switch drops them", 1},
		{"CA key missing on a switch port with enforcement off", func(f *Fabric) {
			f.Port(s1).PKeys[1] = 0
			f.Port(s1).Enforcement.Inbound, f.Port(s1).Enforcement.Outbound = false, false
		}, RuleHCAKeyNotOnSwitch, check.SeverityWarning, []check.PortID{a1, s1}, []check.PKey{0x8001}, "passes them now; once enforcement is on", 1},
		{"CA key missing on a switch port enforcing inbound only", func(f *Fabric) {
			f.Port(s1).PKeys[1] = 0
			f.Port(s1).Enforcement.Outbound = false
		}, RuleHCAKeyNotOnSwitch, check.SeverityError, []check.PortID{a1, s1}, []check.PKey{0x8001}, "do not pass the switch", 1},
		{"CA key missing on a switch port whose enforcement was not read", func(f *Fabric) {
			f.Port(s1).PKeys[1] = 0
			f.Port(s1).Enforcement = nil
		}, RuleHCAKeyNotOnSwitch, check.SeverityWarning, []check.PortID{a1, s1}, []check.PKey{0x8001}, "enforcement bits were not read", 1},
		{"switch port key the CA lacks", func(f *Fabric) { f.Port(s2).PKeys[2] = 0x8005 },
			RuleSwitchKeyNotOnHCA, check.SeverityWarning, []check.PortID{b1, s2}, []check.PKey{0x8005}, "which drops those packets itself", 1},
		{"enforcement off facing a CA", func(f *Fabric) { f.Port(s2).Enforcement.Inbound, f.Port(s2).Enforcement.Outbound = false, false },
			RuleEnforcementOff, check.SeverityWarning, []check.PortID{b1, s2}, nil, "off (inbound, outbound) on \"S\"[2], which faces \"HcaB\"[1]: packets of any partition pass the switch there", 1},
		// part_enforce in and out (OpenSM): one direction is still checked.
		{"outbound enforcement off facing a CA", func(f *Fabric) { f.Port(s2).Enforcement.Outbound = false },
			RuleEnforcementOff, check.SeverityWarning, []check.PortID{b1, s2}, nil, "off (outbound) on \"S\"[2], which faces \"HcaB\"[1]: packets of any partition leave the switch toward it (what it sends is still checked)", 1},
		{"inbound enforcement off facing a CA", func(f *Fabric) { f.Port(s2).Enforcement.Inbound = false },
			RuleEnforcementOff, check.SeverityWarning, []check.PortID{b1, s2}, nil, "off (inbound) on \"S\"[2], which faces \"HcaB\"[1]: packets of any partition it sends enter the fabric (what the switch sends it is still checked)", 1},
		{"limited-only partition", func(f *Fabric) {
			for _, id := range []check.PortID{a1, b1, s1, s2} {
				f.Port(id).PKeys[2] = 0x0003
			}
		}, RuleLimitedOnly, check.SeverityWarning, []check.PortID{a1, b1}, []check.PKey{0x0003}, "all 2 member ports are limited", 1},
		{"full table", func(f *Fabric) {
			for i := 2; i < len(f.Port(a1).PKeys); i++ {
				f.Port(a1).PKeys[i] = 0x8010 + check.PKey(i)
			}
			copy(f.Port(s1).PKeys, f.Port(a1).PKeys)
		}, RuleTableFull, check.SeverityWarning, []check.PortID{s1}, nil, "8 of 8", 2}, // S[1] mirrors HcaA[1]
		{"cabled port not active", func(f *Fabric) { f.Port(b1).State = check.StateInit },
			RulePortNotActive, check.SeverityWarning, []check.PortID{b1}, nil, "is INIT", 1},
		{"node behind a link did not answer", func(f *Fabric) {
			f.Unreachable = []Unreachable{{From: check.PortID{Node: 0x60, Port: 1}, Path: "0,1,3,1", Error: "no reply"}}
		}, RuleNotRead, check.SeverityWarning, []check.PortID{{Node: 0x60, Port: 1}}, nil, "did not answer", 1},
		{"PortInfo not read", func(f *Fabric) { f.Port(b1).Error = "PortInfo: timeout" },
			RuleNotRead, check.SeverityWarning, []check.PortID{b1}, nil, "PortInfo: timeout", 1},
		{"table of a cabled port not read", func(f *Fabric) {
			f.Port(b1).PKeys, f.Port(b1).PKeysError = nil, "P_KeyTable: timeout"
		}, RuleNotRead, check.SeverityWarning, []check.PortID{b1}, nil, "P_KeyTable: timeout", 1},
		{"node attribute not read", func(f *Fabric) { f.Node(0x60).Errors = []string{"NodeDescription: timeout"} },
			RuleNotRead, check.SeverityWarning, []check.PortID{{Node: 0x60, Port: 0}}, nil, "NodeDescription: timeout", 1},
		{"sweep stopped", func(f *Fabric) { f.Incomplete = "context deadline exceeded after 5s" },
			RuleSweepIncomplete, check.SeverityWarning, nil, nil, "stopped early", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := testFabric()
			tc.change(f)
			all := AuditFabric(f, AuditOptions{}).Findings
			var fs []check.Finding
			for _, fd := range all {
				if fd.Rule == tc.rule {
					fs = append(fs, fd)
				} else if fd.Severity == check.SeverityError {
					t.Errorf("other error: %v", fd)
				}
			}
			if tc.n == 0 {
				tc.n = 1
			}
			if len(fs) != tc.n {
				t.Fatalf("%d %s findings, want %d:\n%v", len(fs), tc.rule, tc.n, all)
			}
			got := fs[0]
			var ports []check.PortID
			for _, p := range got.Ports {
				ports = append(ports, p.PortID)
			}
			if got.Rule != tc.rule || got.Severity != tc.sev || !cmp.Equal(ports, tc.ports) || !cmp.Equal(got.PKeys, tc.keys) {
				t.Errorf("got %s %s ports %v keys %v, want %s %s ports %v keys %v", got.Severity, got.Rule, ports, got.PKeys, tc.sev, tc.rule, tc.ports, tc.keys)
			}
			if !strings.Contains(got.Message, tc.text) || got.Action == "" {
				t.Errorf("message %q lacks %q (action %q)", got.Message, tc.text, got.Action)
			}
			if check.HasErrors(fs, false) != (tc.sev == check.SeverityError) || !check.HasErrors(fs, true) {
				t.Errorf("HasErrors: %v (strict %v) for a %s", check.HasErrors(fs, false), check.HasErrors(fs, true), tc.sev)
			}
		})
	}
}

func TestAuditDownPortQuiet(t *testing.T) {
	// An uncabled DOWN port whose table was not read is not a finding.
	f := testFabric()
	if p := f.Port(check.PortID{Node: 0x50, Port: 4}); p.PKeys != nil || p.Peer != nil {
		t.Fatal("fixture changed")
	}
	if fs := AuditFabric(f, AuditOptions{}).Findings; len(fs) != 0 {
		t.Errorf("%v", fs)
	}
}

func TestFindingJSON(t *testing.T) {
	f := testFabric()
	f.Port(check.PortID{Node: 0x50, Port: 1}).PKeys[1] = 0
	b, err := json.Marshal(AuditFabric(f, AuditOptions{}).Findings)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"severity":"error","rule":"hca-key-not-on-switch","ports":[{"node_guid":"0x00000000000000a0","port":1,"node_desc":"HcaA"},{"node_guid":"0x0000000000000050","port":1,"node_desc":"S"}],"message":`
	if !strings.HasPrefix(string(b), want) || !strings.Contains(string(b), `"action":"make the Subnet Manager reprogram both ends: restart`) || !strings.HasSuffix(string(b), `"pkeys":["0x8001"]}]`) {
		t.Errorf("finding JSON:\n%s", b)
	}
}

func TestMembers(t *testing.T) {
	f := testFabric()
	var got []string
	for _, m := range f.Members(0x8001) {
		got = append(got, m.Description+"/"+string(m.Type)+"/"+m.Membership+"/"+ints(m.Indexes)+"/"+map[bool]string{true: "end", false: "mirror"}[m.EndPort])
	}
	want := []string{"S/switch/full/1/mirror", "S/switch/limited/1/mirror", "HcaA/ca/full/1/end", "HcaB/ca/limited/1/end"}
	if !cmp.Equal(got, want) {
		t.Errorf("members of 0x0001:\n got %v\nwant %v", got, want)
	}
	if m := f.Members(0x0009); m != nil {
		t.Errorf("members of an unused key: %v", m)
	}
}

func TestFindNodes(t *testing.T) {
	f := testFabric()
	for s, want := range map[string]check.GUID{"HcaB": 0xb0, "0xb0": 0xb0, "0xb1": 0xb0, "00000000000000a1": 0xa0, "T": 0x60} {
		n := f.FindNodes(s)
		if len(n) != 1 || n[0].GUID != want {
			t.Errorf("FindNodes(%q) = %v, want %s", s, n, want)
		}
	}
	if n := f.FindNodes("nope"); n != nil {
		t.Errorf("FindNodes(nope) = %v", n)
	}
}

func TestEndPorts(t *testing.T) {
	f := testFabric()
	// Switch S's external ports carry no GUID; port 0 carries the node's.
	for g, want := range map[check.GUID][]check.PortID{
		0xb1: {{Node: 0xb0, Port: 1}}, 0x50: {{Node: 0x50, Port: 0}}, 0xb0: nil, 0: nil,
	} {
		if got := f.EndPorts(g); !cmp.Equal(got, want) {
			t.Errorf("EndPorts(%s) = %v, want %v", g, got, want)
		}
	}
	// A repeated port GUID: every end port with it, in node order; the switch's
	// external port given the same GUID is not an end port.
	f.Node(0xa0).Ports[0].GUID = 0xb1
	f.Node(0x50).Ports[1].GUID = 0xb1
	want := []check.PortID{{Node: 0xa0, Port: 1}, {Node: 0xb0, Port: 1}}
	if got := f.EndPorts(0xb1); !cmp.Equal(got, want) {
		t.Errorf("EndPorts(0xb1) with a duplicate = %v, want %v", got, want)
	}
}

func TestLinks(t *testing.T) {
	got := testFabric().Links()
	want := []Link{{check.PortID{Node: 0x50, Port: 1}, check.PortID{Node: 0xa0, Port: 1}}, {check.PortID{Node: 0x50, Port: 2}, check.PortID{Node: 0xb0, Port: 1}}, {check.PortID{Node: 0x50, Port: 3}, check.PortID{Node: 0x60, Port: 1}}}
	if !cmp.Equal(got, want) {
		t.Errorf("links %v, want %v", got, want)
	}
}

func TestDiff(t *testing.T) {
	a := testFabric()
	if d := Diff(a, testFabric()); len(d) != 0 {
		t.Errorf("a fabric differs from itself: %v", d)
	}
	b := testFabric()
	// HcaB's port goes INIT and gets 0x8002 at index 2; HcaA's 0x8001 moves to index 3;
	// T is replaced by U on S port 3.
	b.Port(check.PortID{Node: 0xb0, Port: 1}).State = check.StateInit
	b.Port(check.PortID{Node: 0xb0, Port: 1}).PKeys[2] = 0x8002
	pa := b.Port(check.PortID{Node: 0xa0, Port: 1})
	pa.PKeys[1], pa.PKeys[3] = 0, 0x8001
	b.Port(check.PortID{Node: 0x50, Port: 1}).PKeys, b.Port(check.PortID{Node: 0x50, Port: 1}).PKeysError = nil, "timeout"
	b.Nodes = append(b.Nodes[:1], b.Nodes[2:]...) // T, the second by GUID
	if b.Nodes[0].GUID != 0x50 || b.Nodes[1].GUID != 0xa0 {
		t.Fatal("fixture changed")
	}
	b.Nodes = append(b.Nodes, &Node{GUID: 0x70, Type: check.NodeSwitch, Description: "U", NumPorts: 1, Ports: []*Port{{Num: 0}, {Num: 1, Peer: &check.PortID{Node: 0x50, Port: 3}}}})
	b.Port(check.PortID{Node: 0x50, Port: 3}).Peer = &check.PortID{Node: 0x70, Port: 1}
	b.Port(check.PortID{Node: 0x50, Port: 2}).Enforcement = &check.Enforcement{FilterRawInbound: true, FilterRawOutbound: true}
	a.Port(check.PortID{Node: 0x50, Port: 3}).Enforcement = &check.Enforcement{Outbound: true}
	b.Normalize()
	var got []string
	for _, c := range Diff(a, b) {
		s := c.Rule + " " + c.Message
		if c.PKeys != nil {
			s += fmt.Sprintf(" %v", c.PKeys) // JSON "pkeys": the key, not only in the text
		}
		got = append(got, s)
	}
	want := []string{
		`table-readable "S"[1]: P_Key table read before, not read now; its entries are not compared`,
		`port-changed "S"[2]: enforcement inbound,outbound -> filter-raw-inbound,filter-raw-outbound`,
		`link-added new link "S"[3] - "U"[1]`,
		`link-removed link "S"[3] - "T"[1] is gone`,
		`port-changed "S"[3]: enforcement outbound -> off`,
		`node-removed switch "T" (0x0000000000000060) is gone`,
		`node-added new switch "U" (0x0000000000000070)`,
		`pkey-moved "HcaA"[1]: 0x8001 moved from index 1 to 3 (QPs holding the old index now use another entry) [0x8001]`,
		`pkey-added "HcaB"[1]: 0x8002 (full member of 0x0002) added at index 2 [0x8002]`,
		`port-changed "HcaB"[1]: state ACTIVE -> INIT`,
	}
	if !cmp.Equal(got, want) {
		t.Errorf("diff:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
}

// TestDiffSameName: a node replaced by another of the same NodeDescription (or two
// cards left with the vendor's default one) is named with its GUID in every line, so
// the link gone and the link new do not read alike.
func TestDiffSameName(t *testing.T) {
	a := testFabric()
	b := testFabric()
	b.Nodes = append(b.Nodes[:1], b.Nodes[2:]...) // T
	b.Nodes = append(b.Nodes, &Node{GUID: 0x61, Type: check.NodeSwitch, Description: "T", NumPorts: 1, Ports: []*Port{{Num: 0}, {Num: 1, Peer: &check.PortID{Node: 0x50, Port: 3}}}})
	b.Port(check.PortID{Node: 0x50, Port: 3}).Peer = &check.PortID{Node: 0x61, Port: 1}
	b.Port(check.PortID{Node: 0xb0, Port: 1}).State = check.StateInit
	b.Normalize()
	var got []string
	for _, c := range Diff(a, b) {
		got = append(got, c.Rule+" "+c.Message)
	}
	want := []string{
		`link-added new link "S"[3] - "T"[1] (node 0x0000000000000061)`,
		`link-removed link "S"[3] - "T"[1] (node 0x0000000000000060) is gone`,
		`node-removed switch "T" (0x0000000000000060) is gone`,
		`node-added new switch "T" (0x0000000000000061)`,
		`port-changed "HcaB"[1]: state ACTIVE -> INIT`,
	}
	if !cmp.Equal(got, want) {
		t.Errorf("diff:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
	// Renamed alike: HcaB now carries HcaA's name, so both are named by GUID.
	c := testFabric()
	c.Node(0xb0).Description = "HcaA"
	c.Port(check.PortID{Node: 0xb0, Port: 1}).State = check.StateInit
	got = got[:0]
	for _, d := range Diff(a, c) {
		got = append(got, d.Message)
	}
	want = []string{
		`node 0x00000000000000b0: node_desc "HcaB" -> "HcaA"`,
		`"HcaA"[1] (node 0x00000000000000b0): state ACTIVE -> INIT`,
	}
	if !cmp.Equal(got, want) {
		t.Errorf("renamed alike:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
}

// TestDiffMembership (issue 25 item 11): a key replaced by its partition's other
// membership is one change, at the same index or another; with both entries (-W)
// before and one after, the one left is a removal.
func TestDiffMembership(t *testing.T) {
	a := testFabric()
	b := testFabric()
	hb := check.PortID{Node: 0xb0, Port: 1}
	b.Port(hb).PKeys[1] = 0x8001 // limited -> full, same index
	ha := check.PortID{Node: 0xa0, Port: 1}
	b.Port(ha).PKeys[1], b.Port(ha).PKeys[4] = 0, 0x0001 // full -> limited, index 1 -> 4
	var got []string
	for _, c := range Diff(a, b) {
		if c.Ports[0].PortID == hb || c.Ports[0].PortID == ha {
			got = append(got, c.Rule+" "+c.Message+" ["+c.Before+" -> "+c.After+"]")
		}
	}
	want := []string{
		`pkey-membership "HcaA"[1]: partition 0x0001: full -> limited member (0x0001, at index 4 (was 0x8001 at 1)) [0x8001 -> 0x0001]`,
		`pkey-membership "HcaB"[1]: partition 0x0001: limited -> full member (0x8001, at index 1) [0x0001 -> 0x8001]`,
	}
	if !cmp.Equal(got, want) {
		t.Errorf("diff:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
	// Both memberships before (-W), only the full one after: the limited one left.
	a, b = testFabric(), testFabric()
	a.Port(hb).PKeys[2] = 0x8001
	var rules []string
	for _, c := range Diff(a, b) {
		rules = append(rules, c.Rule)
	}
	if strings.Join(rules, " ") != ChangePKeyRemoved {
		t.Errorf("both -> one: %v, want one %s", rules, ChangePKeyRemoved)
	}
}

// TestDiffGIDPrefix: OpenSM restarted with another subnet_prefix changes every end
// port's PortInfo GIDPrefix and so every GID (seen on ibsim: fabric diff said "no
// differences"); a prefix not read on a side (0) is not compared.
func TestDiffGIDPrefix(t *testing.T) {
	a, b := testFabric(), testFabric()
	ha := check.PortID{Node: 0xa0, Port: 1}
	a.Port(ha).GIDPrefix = 0xfe80000000000000
	b.Port(ha).GIDPrefix = 0xfe80000000000042
	b.Port(check.PortID{Node: 0xb0, Port: 1}).GIDPrefix = 0xfe80000000000042
	var got []string
	for _, c := range Diff(a, b) {
		got = append(got, c.Rule+" "+c.Message+" ["+c.Field+" "+c.Before+" -> "+c.After+"]")
	}
	want := []string{`port-changed "HcaA"[1]: gid_prefix fe80:0000:0000:0000 -> fe80:0000:0000:0042 [gid_prefix fe80:0000:0000:0000 -> fe80:0000:0000:0042]`}
	if !cmp.Equal(got, want) {
		t.Errorf("diff:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
}

func TestFabricJSONRoundTrip(t *testing.T) {
	f := testFabric()
	f.Unreachable = []Unreachable{{From: check.PortID{Node: 0x50, Port: 4}, Path: "0,1,4", Error: "no reply"}}
	f.Node(0x60).Errors = []string{"NodeDescription: timeout"}
	var buf bytes.Buffer
	if err := EncodeFabric(&buf, f); err != nil {
		t.Fatal(err)
	}
	g, err := DecodeFabric(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	if d := cmp.Diff(f, g, cmpopts.IgnoreUnexported(Fabric{}), cmpopts.EquateEmpty()); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
	// The fields the design names, and the value forms.
	var doc struct {
		Format  string `json:"format"`
		Version int    `json:"version"`
		Nodes   []map[string]any
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Format != FabricFormat || doc.Version != FabricVersion || len(doc.Nodes) != 4 {
		t.Fatalf("header %+v", doc)
	}
	n := doc.Nodes[0] // S, 0x50
	for _, k := range []string{"node_guid", "type", "node_desc", "ports"} {
		if _, ok := n[k]; !ok {
			t.Errorf("node lacks %q: %v", k, n)
		}
	}
	p := n["ports"].([]any)[1].(map[string]any)
	for _, k := range []string{"port", "lid", "port_guid", "peer", "state", "enforcement", "table_size", "pkeys"} {
		if _, ok := p[k]; !ok {
			t.Errorf("port lacks %q: %v", k, p)
		}
	}
	if n["node_guid"] != "0x0000000000000050" || n["type"] != "switch" || p["pkeys"].([]any)[1] != "0x8001" ||
		p["peer"].(map[string]any)["node_guid"] != "0x00000000000000a0" {
		t.Errorf("value forms: %v / %v", n, p)
	}
	if down := n["ports"].([]any)[4].(map[string]any); down["pkeys"] != nil || down["peer"] != nil {
		t.Errorf("unread table and no cable must be null: %v", down)
	}
}

func TestDecodeFabricErrors(t *testing.T) {
	var buf bytes.Buffer
	if err := EncodeFabric(&buf, testFabric()); err != nil {
		t.Fatal(err)
	}
	good := buf.String()
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"not JSON", good, "{", "not JSON"},
		{"other format", `"format": "ibkey-fabric"`, `"format": "x"`, `format "x"`},
		{"newer version", `"version": 2`, `"version": 3`, "version 3"},
		{"no version", `"version": 2`, `"version": 0`, "version 0"},
		{"bad GUID", `"node_guid": "0x0000000000000050"`, `"node_guid": "50"`, "bad GUID"},
		{"duplicate node", `"node_guid": "0x0000000000000060",
      "type"`, `"node_guid": "0x0000000000000050",
      "type"`, "listed twice"},
		{"bad type", `"type": "switch"`, `"type": "hub"`, `type "hub"`},
		{"bad pkey", `"0x8001"`, `"0x80011"`, "pkeys[1]"},
		{"lmc", `"lmc": 0`, `"lmc": 8`, "lmc 8 out of range 0-7"},
		{"table size", `"table_size": 8,
          "pkeys": [
            "0xffff",
            "0x8001"`, `"table_size": 9,
          "pkeys": [
            "0xffff",
            "0x8001"`, "8 pkeys for table_size 9"},
		{"one-sided peer", `"peer": {
            "node_guid": "0x0000000000000060",
            "port": 1
          }`, `"peer": {
            "node_guid": "0x0000000000000060",
            "port": 1
          }, "x": {
            "node_guid": "0x0000000000000060",
            "port": 1
          }`, ""},
		{"peer not in file", `"node_guid": "0x0000000000000060",
            "port": 1`, `"node_guid": "0x0000000000000061",
            "port": 1`, "not in the file"},
		{"port out of range", `"port": 4,`, `"port": 5,`, "out of range"},
		{"two documents", good, good + good, "more than one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := strings.Replace(good, tc.old, tc.new, 1)
			if in == good && tc.old != good {
				t.Fatalf("fixture: %q not found in\n%s", tc.old, good)
			}
			_, err := DecodeFabric(strings.NewReader(in))
			if tc.want == "" {
				if err != nil {
					t.Errorf("unexpected error %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one with %q", err, tc.want)
			}
		})
	}
}

// TestDecodeFabricRequiresKeys: a file that lacks a key every file ibkey writes has,
// and whose absence would read as a value, is refused with the key named, for each
// such key on every node and port of a real file; null is kept as "not read" or
// "none". Before, a port without "peer" read as a port without a cable, and fabric
// check judged no switch port of a file that had none.
func TestDecodeFabricRequiresKeys(t *testing.T) {
	var buf bytes.Buffer
	if err := EncodeFabric(&buf, testFabric()); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	decode := func() error {
		b, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		_, err = DecodeFabric(bytes.NewReader(b))
		return err
	}
	tried := 0
	for _, n := range doc["nodes"].([]any) {
		node := n.(map[string]any)
		for _, k := range []string{"type", "num_ports", "partition_cap", "ports"} {
			v := node[k]
			delete(node, k)
			if err := decode(); err == nil || !strings.Contains(err.Error(), `lacks "`+k+`"`) {
				t.Errorf("node %v without %q: %v", node["node_guid"], k, err)
			}
			node[k] = v
			tried++
		}
		for _, p := range node["ports"].([]any) {
			port := p.(map[string]any)
			for _, k := range []string{"port", "port_guid", "lid", "sm_lid", "state", "peer", "table_size", "pkeys"} {
				v := port[k]
				delete(port, k)
				if err := decode(); err == nil || !strings.Contains(err.Error(), `lacks "`+k+`"`) {
					t.Errorf("node %v port %v without %q: %v", node["node_guid"], port["port"], k, err)
				}
				port[k] = v
				tried++
			}
		}
	}
	if err := decode(); err != nil || tried < 40 {
		t.Fatalf("the file as written: %v (%d keys tried)", err, tried)
	}
}

// FuzzDecodeFabric: the --fabric-file decoder reads user input. The seed corpus is in
// testdata/fuzz/FuzzDecodeFabric and kept small: the fuzzer minimizes every new input,
// which takes minutes on a multi-kilobyte document.
func FuzzDecodeFabric(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		fab, err := DecodeFabric(bytes.NewReader(data))
		if err != nil {
			return
		}
		// Whatever decodes encodes, decodes again to the same fabric, and can be audited
		// and diffed without panicking.
		var out bytes.Buffer
		if err := EncodeFabric(&out, fab); err != nil {
			t.Fatalf("encode: %v", err)
		}
		again, err := DecodeFabric(bytes.NewReader(out.Bytes()))
		if err != nil {
			t.Fatalf("re-decode: %v\n%s", err, out.String())
		}
		var out2 bytes.Buffer
		if err := EncodeFabric(&out2, again); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out.Bytes(), out2.Bytes()) {
			t.Fatalf("not stable:\n%s\n---\n%s", out.String(), out2.String())
		}
		AuditFabric(fab, AuditOptions{})
		Diff(fab, again)
		fab.Links()
	})
}

// TestDecodeFabricVersion1: a file saved by an ibkey that wrote version 1 (the node
// description as "description") reads back as the same fabric as its version 2 form.
func TestDecodeFabricVersion1(t *testing.T) {
	var buf bytes.Buffer
	if err := EncodeFabric(&buf, testFabric()); err != nil {
		t.Fatal(err)
	}
	v2 := buf.String()
	v1 := strings.Replace(strings.ReplaceAll(v2, `"node_desc":`, `"description":`), `"version": 2`, `"version": 1`, 1)
	if v1 == v2 || strings.Contains(v1, "node_desc") {
		t.Fatalf("fixture: no version 1 form made of\n%s", v2)
	}
	a, err := DecodeFabric(strings.NewReader(v2))
	if err != nil {
		t.Fatal(err)
	}
	b, err := DecodeFabric(strings.NewReader(v1))
	if err != nil {
		t.Fatalf("version 1: %v", err)
	}
	var ea, eb bytes.Buffer
	if err := EncodeFabric(&ea, a); err != nil {
		t.Fatal(err)
	}
	if err := EncodeFabric(&eb, b); err != nil {
		t.Fatal(err)
	}
	if ea.String() != eb.String() || ea.String() != v2 {
		t.Errorf("version 1 read back differs:\n%s\nwant\n%s", eb.String(), v2)
	}
	for _, n := range b.Nodes {
		if n.Description == "" {
			t.Errorf("node %s lost its description", n.GUID)
		}
	}
}

// TestNodeReadOnly: a lookup on a fabric that was never normalized finds its nodes and
// ports without reordering them, concurrent lookups do not race (go test -race), and
// EncodeFabric writes it as it is.
func TestNodeReadOnly(t *testing.T) {
	f := &Fabric{Nodes: []*Node{
		{GUID: 0xb0, Ports: []*Port{{Num: 2}, {Num: 1}}},
		{GUID: 0xa0, Ports: []*Port{{Num: 1}}},
	}}
	done := make(chan bool)
	for range 2 {
		go func() {
			done <- f.Node(0xa0) != nil && f.Port(check.PortID{Node: 0xb0, Port: 1}) != nil && f.Node(0xc0) == nil
		}()
	}
	for range 2 {
		if !<-done {
			t.Error("lookup on an unnormalized fabric missed a node or port")
		}
	}
	if f.Nodes[0].GUID != 0xb0 || f.Nodes[0].Ports[0].Num != 2 {
		t.Errorf("a lookup reordered the fabric: first node %s, its first port %d", f.Nodes[0].GUID, f.Nodes[0].Ports[0].Num)
	}
	// Nor does writing it: the encoder reads what it is given.
	if err := EncodeFabric(io.Discard, f); err != nil || f.Nodes[0].GUID != 0xb0 || f.Nodes[0].Ports[0].Num != 2 || f.byGUID != nil {
		t.Errorf("EncodeFabric (%v) changed the fabric: first node %s, its first port %d", err, f.Nodes[0].GUID, f.Nodes[0].Ports[0].Num)
	}
	f.Normalize()
	if f.Nodes[0].GUID != 0xa0 || f.Node(0xb0).Ports[0].Num != 1 || f.Node(0xa0) != f.Nodes[0] {
		t.Error("Normalize did not sort the nodes and ports or index them")
	}
}

// A switch whose SwitchInfo says PartitionEnforcementCap 0 has no enforcement table on
// its external ports (the sweep reads them as tables of length 0) and OpenSM leaves
// them alone (osm_port_info_rcv.c, osm_pkey_mgr.c pkey_mgr_update_peer_port): the CA
// keys its port lacks are not dropped there, and enforcement off is no finding. Before,
// the audit reported hca-key-not-on-switch ("once enforcement is on, the switch will
// drop them") and enforcement-off for every CA on such a switch.
func TestAuditSwitchWithoutEnforcementCap(t *testing.T) {
	a1, b1 := check.PortID{Node: 0xa0, Port: 1}, check.PortID{Node: 0xb0, Port: 1}
	noCap := func(f *Fabric) {
		s := f.Node(0x50)
		s.PartitionEnforcementCap = 0
		for _, p := range s.Ports[1:] {
			p.Enforcement = &check.Enforcement{}
			p.TableSize = 0
			if p.PKeys != nil {
				p.PKeys = []check.PKey{}
			}
		}
	}
	f := testFabric()
	tables := AuditFabric(f, AuditOptions{}).TablesChecked
	noCap(f)
	res := AuditFabric(f, AuditOptions{})
	if fs := res.Findings; len(fs) != 0 {
		t.Errorf("switch without enforcement: %v", fs)
	}
	// Its external ports have no table: none of them counts as a table checked.
	cabled := 0
	for _, p := range f.Node(0x50).Ports[1:] {
		if p.Peer != nil {
			cabled++
		}
	}
	if cabled == 0 || res.TablesChecked != tables-cabled {
		t.Errorf("TablesChecked %d, want %d (%d before, less the switch's %d cabled external ports)", res.TablesChecked, tables-cabled, tables, cabled)
	}
	if _, ok := f.CheckHop(a1, 0x0001); ok {
		t.Error("CheckHop judged a switch port without enforcement")
	}
	if v := check.CanTalk(portEndpoint(f, a1, "A"), portEndpoint(f, b1, "B")); v.Kind != check.VerdictYes {
		t.Errorf("can-talk %s: %v", v.Kind, v.Reasons)
	}
	// SwitchInfo not read: the cap is not known to be 0, so the switch ports are still
	// judged (their enforcement off is a finding).
	f = testFabric()
	noCap(f)
	f.Node(0x50).Errors = []string{"SwitchInfo: timeout"}
	found := false
	for _, fd := range AuditFabric(f, AuditOptions{}).Findings {
		found = found || fd.Rule == RuleEnforcementOff
	}
	if !found {
		t.Error("SwitchInfo not read: enforcement-off not reported")
	}
	// A cap of 0 beside external tables (a fabric file that leaves the cap out): the
	// file contradicts itself, and the switch is judged on its tables.
	f = testFabric()
	f.Node(0x50).PartitionEnforcementCap = 0
	f.Node(0x50).Ports[1].PKeys[1] = 0 // HcaA's 0x8001, which the switch port now drops
	found = false
	for _, fd := range AuditFabric(f, AuditOptions{}).Findings {
		found = found || fd.Rule == RuleHCAKeyNotOnSwitch
	}
	if f.Node(0x50).NoEnforcementCap() || !found {
		t.Error("cap 0 beside switch tables: the switch was not judged")
	}
}

// With part_enforce off OpenSM leaves the tables of switch ports facing CAs as they
// were and turns their enforcement off (osm_pkey_mgr.c pkey_mgr_update_peer_port):
// enforcement off and keys that differ where it is off are no finding. But a port
// whose bits as read still enforce drops the CA keys its table lacks, as can-talk
// says over the same fabric (CheckHop); before, the audit skipped every switch port
// under part_enforce off and found no problem there.
func TestAuditPartEnforceOffStillEnforcing(t *testing.T) {
	a1, b1 := check.PortID{Node: 0xa0, Port: 1}, check.PortID{Node: 0xb0, Port: 1}
	s1, s2 := check.PortID{Node: 0x50, Port: 1}, check.PortID{Node: 0x50, Port: 2}
	f := testFabric()
	f.Port(s1).PKeys[1] = 0                                               // enforcing, lacks 0x8001
	f.Port(s2).PKeys[1], f.Port(s2).Enforcement = 0, &check.Enforcement{} // not enforcing, lacks 0x0001
	f.Port(s2).PKeys[2] = 0x8005                                          // stale
	fs := AuditFabric(f, AuditOptions{PartEnforce: "off"}).Findings
	if len(fs) != 1 || fs[0].Rule != RuleHCAKeyNotOnSwitch || fs[0].Severity != check.SeverityError ||
		fs[0].Ports[0].PortID != a1 || !strings.Contains(fs[0].Action, "part_enforce off") {
		t.Errorf("part_enforce off: %v", fs)
	}
	if h, ok := f.CheckHop(a1, 0x0001); !ok || h.FromEnd != check.HopDrops {
		t.Errorf("can-talk's hop: %+v", h)
	}
	if h, ok := f.CheckHop(b1, 0x0001); !ok || h.FromEnd != check.HopPasses {
		t.Errorf("can-talk's hop: %+v", h)
	}
}

// A switch port cabled to another switch that enforces partitions: OpenSM turns such
// enforcement off in every sweep whatever part_enforce says (osm_pkey_mgr.c
// osm_pkey_mgr_process), so one found on drops the partitions its table lacks on that
// link. The audit looked only at switch ports facing CAs and said nothing.
func TestAuditEnforcingBetweenSwitches(t *testing.T) {
	s3, t1 := check.PortID{Node: 0x50, Port: 3}, check.PortID{Node: 0x60, Port: 1}
	rules := func(f *Fabric, opt AuditOptions) []check.Finding {
		var out []check.Finding
		for _, fd := range AuditFabric(f, opt).Findings {
			if fd.Rule == RuleEnforcingBetweenSwitches {
				out = append(out, fd)
			}
		}
		return out
	}
	f := testFabric()
	if fs := rules(f, AuditOptions{}); len(fs) != 0 {
		t.Errorf("enforcement off between switches: %v", fs)
	}
	f.Port(s3).Enforcement = &check.Enforcement{Inbound: true}
	for _, mode := range []string{"", "off", "in"} {
		fs := rules(f, AuditOptions{PartEnforce: mode})
		if len(fs) != 1 || len(fs[0].Ports) != 2 || fs[0].Ports[0].PortID != s3 || fs[0].Ports[1].PortID != t1 ||
			!slices.Equal(fs[0].PKeys, []check.PKey{0x0001}) || fs[0].Severity != check.SeverityWarning ||
			!strings.Contains(fs[0].Message, "enforces partitions (inbound)") || !strings.Contains(fs[0].Message, "1 partition (0x0001)") {
			t.Errorf("part_enforce %q: %+v", mode, fs)
		}
	}
	// can-talk over the same fabric: routes are not read, so a partition such a link
	// drops is not known to pass; another that passes every port still makes a yes.
	a1, b1 := check.PortID{Node: 0xa0, Port: 1}, check.PortID{Node: 0xb0, Port: 1}
	v := check.CanTalk(portEndpoint(f, a1, "A"), portEndpoint(f, b1, "B"))
	if v.Kind != check.VerdictYes || !slices.ContainsFunc(v.Reasons, func(r string) bool {
		return strings.HasPrefix(r, "partition 0x0001 is not known to pass: ") && strings.Contains(r, "on a link to the switch port")
	}) {
		t.Errorf("can-talk with 0x7fff passing and 0x0001 dropped between switches: %s %v", v.Kind, v.Reasons)
	}
	f.Port(s3).PKeys[0] = 0 // the default partition is dropped there too
	v = check.CanTalk(portEndpoint(f, a1, "A"), portEndpoint(f, b1, "B"))
	if v.Kind != check.VerdictUnknown || len(v.NotChecked) != 2 || v.NotChecked[0].Cause != check.NotCheckedRoute {
		t.Errorf("can-talk with every shared partition dropped between switches: %s %+v", v.Kind, v.NotChecked)
	}
	// What was not read of such a link is not a pass. The audit leaves it to its
	// not-read findings; for can-talk, its enforcement bits not read (its table
	// lacking 0x0001, holding 0xffff) leave 0x0001 not known and 0x7fff a yes, and its
	// table not read while it enforces leaves every partition not known.
	g := testFabric()
	g.Port(s3).Enforcement = nil
	v = check.CanTalk(portEndpoint(g, a1, "A"), portEndpoint(g, b1, "B"))
	if fs := rules(g, AuditOptions{}); len(fs) != 0 || v.Kind != check.VerdictYes || !slices.ContainsFunc(v.Reasons, func(r string) bool {
		return strings.HasPrefix(r, "partition 0x0001 is not known to pass: ") && strings.Contains(r, "lacks partition 0x0001 and its enforcement bits were not read")
	}) {
		t.Errorf("link bits not read: audit %v, can-talk %s %v", fs, v.Kind, v.Reasons)
	}
	g = testFabric()
	g.Port(s3).Enforcement, g.Port(s3).PKeys, g.Port(s3).PKeysError = &check.Enforcement{Inbound: true}, nil, "timeout"
	v = check.CanTalk(portEndpoint(g, a1, "A"), portEndpoint(g, b1, "B"))
	if fs := rules(g, AuditOptions{}); len(fs) != 0 || v.Kind != check.VerdictUnknown || len(v.NotChecked) != 2 ||
		v.NotChecked[0].Cause != check.NotCheckedRoute || !strings.Contains(v.NotChecked[0].Sentence, "enforces partitions and its P_Key table was not read") {
		t.Errorf("link table not read: audit %v, can-talk %s %+v", fs, v.Kind, v.NotChecked)
	}
	// Its table holding every partition the end ports hold: nothing is dropped.
	f.Port(s3).PKeys[0], f.Port(s3).PKeys[1] = 0xffff, 0x8001
	if fs := rules(f, AuditOptions{}); len(fs) != 0 {
		t.Errorf("an enforcing link that holds every partition: %v", fs)
	}
	if v := check.CanTalk(portEndpoint(f, a1, "A"), portEndpoint(f, b1, "B")); v.Kind != check.VerdictYes || len(v.Reasons) != 1 {
		t.Errorf("can-talk with an enforcing link that holds every partition: %s %v", v.Kind, v.Reasons)
	}
}
