package partconf

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/fabric/fabrictest"
)

// fabric: CA A (port GUID 0xa1, LID 1, the SM) and CA B (0xb1) on switch S (0x50);
// tables as OpenSM programs them from conf below (the simulator's 8-entry tables).
func compareFabricFixture() *fabric.Fabric {
	t := func(keys ...check.PKey) []check.PKey {
		out := make([]check.PKey, 8)
		copy(out, keys)
		return out
	}
	peer := func(n check.GUID, p int) *check.PortID { return &check.PortID{Node: n, Port: p} }
	f := &fabric.Fabric{Nodes: []*fabric.Node{
		{GUID: 0xa0, Type: check.NodeCA, Description: "A", NumPorts: 1, PartitionCap: 8, Ports: []*fabric.Port{
			{Num: 1, GUID: 0xa1, LID: 1, SMLID: 1, Peer: peer(0x50, 1), TableSize: 8, PKeys: t(0xffff, 0x8001)}}},
		{GUID: 0xb0, Type: check.NodeCA, Description: "B", NumPorts: 1, PartitionCap: 8, Ports: []*fabric.Port{
			{Num: 1, GUID: 0xb1, LID: 2, SMLID: 1, Peer: peer(0x50, 2), TableSize: 8, PKeys: t(0xffff, 0x0001)}}},
		{GUID: 0x50, Type: check.NodeSwitch, Description: "S", NumPorts: 2, PartitionCap: 8, Ports: []*fabric.Port{
			{Num: 0, GUID: 0x50, LID: 3, SMLID: 1, TableSize: 8, PKeys: t(0xffff)},
			{Num: 1, Peer: peer(0xa0, 1), TableSize: 8, PKeys: t(0xffff, 0x8001)},
			{Num: 2, Peer: peer(0xb0, 1), TableSize: 8, PKeys: t(0xffff, 0x0001)}}},
	}}
	f.Normalize()
	return f
}

const compareConf = `Default=0x7fff : ALL_CAS=full, ALL_SWITCHES=full ;
storage=0x0001 : SELF=full, 0xb1 ;
`

func compare(t *testing.T, f *fabric.Fabric, conf string) []check.Finding {
	t.Helper()
	return CompareFabric(f, NewFabricModel(Parse("partitions.conf", []byte(conf)), f, Options{}))
}

func TestFabricPorts(t *testing.T) {
	ports, sm := FabricPorts(compareFabricFixture())
	if sm != 0xa1 {
		t.Errorf("SM port GUID %s, want 0xa1 (the port with LID 1, the SM LID)", sm)
	}
	var got []string
	for _, p := range ports {
		got = append(got, p.GUID.String()+"/"+p.Type.Word())
	}
	if want := "0x0000000000000050/switch 0x00000000000000a1/CA 0x00000000000000b1/CA"; strings.Join(got, " ") != want {
		t.Errorf("ports %v, want %s", got, want)
	}
}

func TestCompareFabricClean(t *testing.T) {
	if fs := compare(t, compareFabricFixture(), compareConf); len(fs) > 0 {
		t.Errorf("%v", fs)
	}
}

func TestCompareFabric(t *testing.T) {
	a1, b1 := check.PortID{Node: 0xa0, Port: 1}, check.PortID{Node: 0xb0, Port: 1}
	s0, s2 := check.PortID{Node: 0x50, Port: 0}, check.PortID{Node: 0x50, Port: 2}
	for _, tc := range []struct {
		name   string
		conf   string
		change func(f *fabric.Fabric)
		want   []string // per finding: rule, the keys the port holds (or -), ports
	}{
		{"B should be full", strings.Replace(compareConf, "0xb1", "0xb1=full", 1), nil,
			[]string{"partitions-wrong-membership 0x0001 B[1] S[2]"}},
		{"B should not be in storage", strings.Replace(compareConf, ", 0xb1", "", 1), nil,
			[]string{"partitions-extra-key 0x0001 B[1] S[2]"}},
		{"a new partition", compareConf + "p2=0x0002 : 0xa1=full ;\n", nil,
			[]string{"partitions-missing-key 0x8002 A[1] S[1]"}},
		{"switch port 0 in ALL partitions", compareConf + "p3=0x0003 : ALL=full ;\n", func(f *fabric.Fabric) {
			for _, id := range []check.PortID{a1, b1, {Node: 0x50, Port: 1}, s2} {
				f.Port(id).PKeys[2] = 0x8003
			}
		}, []string{"partitions-missing-key 0x8003 S[0]"}},
		{"switch port differs from its CA", compareConf, func(f *fabric.Fabric) { f.Port(s2).PKeys[1] = 0 },
			[]string{"partitions-missing-key 0x0001 S[2] B[1]"}},
		{"default membership wrong on switch port 0", compareConf, func(f *fabric.Fabric) { f.Port(s0).PKeys[0] = 0x7fff },
			[]string{"partitions-wrong-membership 0x7fff S[0]"}},
		{"table not read", strings.Replace(compareConf, "0xb1", "0xb1=full", 1), func(f *fabric.Fabric) {
			f.Port(b1).PKeys = nil
		}, []string{"partitions-wrong-membership 0x0001 S[2] B[1]"}},
		{"table overflow", compareConf + "p4=0x0004 : 0xa1 ;\np5=0x0005 : 0xa1 ;\np6=0x0006 : 0xa1 ;\np7=0x0007 : 0xa1 ;\np8=0x0008 : 0xa1 ;\np9=0x0009 : 0xa1 ;\np10=0x000a : 0xa1 ;\n", func(f *fabric.Fabric) {
			for i, k := range []check.PKey{4, 5, 6, 7, 8, 9} {
				f.Port(a1).PKeys[2+i] = k
				f.Node(0x50).Port(1).PKeys[2+i] = k
			}
		}, []string{"partitions-table-overflow - A[1] S[1]"}},
		{"rejected file", "Default=0x7fff : ALL=full ;\nbroken\n=0x0001 : 0xa1 ;\n", func(f *fabric.Fabric) {
			for _, id := range []check.PortID{a1, b1, {Node: 0x50, Port: 1}, s2} {
				f.Port(id).PKeys[1] = 0
			}
		}, []string{"partitions-file-rejected -"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := compareFabricFixture()
			if tc.change != nil {
				tc.change(f)
			}
			var got []string
			for _, fd := range compare(t, f, tc.conf) {
				s := fd.Rule
				if len(fd.PKeys) == 0 {
					s += " -"
				}
				for _, k := range fd.PKeys {
					s += " " + k.String()
				}
				for _, p := range fd.Ports {
					s += " " + strings.Trim(f.Label(p.PortID), `"`)
					s = strings.Replace(s, `"[`, "[", 1)
				}
				if fd.Severity != check.SeverityError || fd.Action == "" {
					t.Errorf("%s: severity %s, action %q", s, fd.Severity, fd.Action)
				}
				got = append(got, s)
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("findings\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// Issue 11 items 7, 14 and 8: what OpenSM programs on switch ports and after a
// reconfiguration is clean, not a list of errors.
func TestCompareFabricAsOpenSMPrograms(t *testing.T) {
	b1, s2, s1 := check.PortID{Node: 0xb0, Port: 1}, check.PortID{Node: 0x50, Port: 2}, check.PortID{Node: 0x50, Port: 1}
	set := func(f *fabric.Fabric, id check.PortID, keys ...check.PKey) {
		t := make([]check.PKey, 8)
		copy(t, keys)
		f.Port(id).PKeys = t
	}
	// -W and both: B holds 0x0001 and 0x8001, the switch port only 0x8001.
	f := compareFabricFixture()
	set(f, b1, 0xffff, 0x0001, 0x8001)
	set(f, s2, 0xffff, 0x8001)
	conf := strings.Replace(compareConf, "0xb1", "0xb1=both", 1)
	if fs := CompareFabric(f, NewFabricModel(Parse("p.conf", []byte(conf)), f, Options{AllowBoth: true})); len(fs) > 0 {
		t.Errorf("-W both: %v", fs)
	}
	// part_enforce off: the switch ports keep 0xffff.
	f = compareFabricFixture()
	set(f, s1, 0xffff)
	set(f, s2, 0xffff)
	if fs := CompareFabric(f, NewFabricModel(Parse("p.conf", []byte(compareConf)), f, Options{EnforceOff: true})); len(fs) > 0 {
		t.Errorf("enforcement off: %v", fs)
	}
	if fs := CompareFabric(f, NewFabricModel(Parse("p.conf", []byte(compareConf)), f, Options{})); len(fs) == 0 {
		t.Error("enforcement on: switch ports without the CA's keys must be reported")
	}
	// Reconfiguration: A's 8-entry table is full of keys that stay; a new key is
	// dropped (ERR 0512), the kept ones are not "extra".
	f = compareFabricFixture()
	var keys []check.PKey
	conf = compareConf
	for k := check.PKey(0x10); k < 0x16; k++ {
		keys = append(keys, k|check.MembershipBit)
		conf += fmt.Sprintf("k%d=%#x : 0xa1=full ;\n", k, uint16(k))
	}
	set(f, check.PortID{Node: 0xa0, Port: 1}, append([]check.PKey{0xffff, 0x8001}, keys...)...)
	set(f, s1, append([]check.PKey{0xffff, 0x8001}, keys...)...)
	conf += "new=0x0002 : 0xa1=full ;\n"
	var rules []string
	for _, fd := range CompareFabric(f, NewFabricModel(Parse("p.conf", []byte(conf)), f, Options{})) {
		rules = append(rules, fd.Rule)
	}
	if strings.Join(rules, " ") != RuleTableOverflow {
		t.Errorf("reconfiguration overflow: %v, want only %s", rules, RuleTableOverflow)
	}
}

// Issue 24 (make truth seed 5295): with -W, `both` on the default partition over a
// table with 0x7fff at index 0 takes OpenSM two passes (onePassFrom0x7fff; the lab
// case is TestLabNextPass). After the first, the CA ports hold 0xffff only: a warning
// that the next pass adds 0x7fff (at index 2, after 0x0001), not wrong membership nor
// a moved index. Without -W the same tables are clean, and so are they after the
// second pass.
func TestCompareFabricNextPass(t *testing.T) {
	a1, b1 := check.PortID{Node: 0xa0, Port: 1}, check.PortID{Node: 0xb0, Port: 1}
	conf := strings.Replace(compareConf, "ALL_CAS=full", "ALL_CAS=both", 1)
	findings := func(f *fabric.Fabric, allowBoth bool) []string {
		var got []string
		for _, fd := range CompareFabric(f, NewFabricModel(Parse("p.conf", []byte(conf)), f, Options{AllowBoth: allowBoth})) {
			got = append(got, fmt.Sprintf("%s %s %s %v", fd.Severity, fd.Rule, f.Label(fd.Ports[0].PortID), fd.PKeys))
			if fd.Rule == RuleNextPass && !strings.Contains(fd.Message, "next pass adds 0x7fff at index 2") {
				t.Errorf("message: %s", fd.Message)
			}
		}
		return got
	}
	f := compareFabricFixture()
	if got, want := findings(f, true), []string{`warning partitions-next-pass "A"[1] [0xffff]`, `warning partitions-next-pass "B"[1] [0xffff]`}; !slices.Equal(got, want) {
		t.Errorf("findings\n got %q\nwant %q", got, want)
	}
	if got := findings(f, false); len(got) > 0 {
		t.Errorf("without -W: %v", got)
	}
	// Not OpenSM's one pass (B lacks 0x0001 too): the usual errors.
	f.Port(b1).PKeys[1] = 0
	if got, want := findings(f, true), []string{`error partitions-missing-key "B"[1] [0x0001]`,
		`error partitions-wrong-membership "B"[1] [0xffff]`, `warning partitions-next-pass "A"[1] [0xffff]`}; !slices.Equal(got, want) {
		t.Errorf("findings\n got %q\nwant %q", got, want)
	}
	f = compareFabricFixture()
	f.Port(a1).PKeys[2], f.Port(b1).PKeys[2] = 0x7fff, 0x7fff
	if got := findings(f, true); len(got) > 0 {
		t.Errorf("after the next pass: %v", got)
	}
}

// AuditRules names each rule with the severity the audit gives its findings: the
// exporter exports every rule at 0 under that severity, so a rule listed under another
// one has a 0 series that never moves and a series of its own only while found. Before,
// switch-key-not-on-hca was listed as an error; the audit reports it as a warning.
func TestAuditRulesSeverity(t *testing.T) {
	f := fabrictest.FatTree(1, 0, 1)
	var sw *fabric.Node
	for _, n := range f.Nodes {
		if n.Type == check.NodeSwitch {
			sw = n
		}
	}
	sw.Port(1).PKeys[2] = 0x8005 // a key the CA it faces lacks
	listed := map[AuditRule]bool{}
	for _, r := range AuditRules(false) {
		listed[r] = true
	}
	res := fabric.AuditFabric(f, fabric.AuditOptions{})
	if !slices.ContainsFunc(res.Findings, func(fd check.Finding) bool { return fd.Rule == fabric.RuleSwitchKeyNotOnHCA }) {
		t.Fatalf("fixture: no %s in %v", fabric.RuleSwitchKeyNotOnHCA, res.Findings)
	}
	for _, fd := range res.Findings {
		if !listed[AuditRule{fd.Rule, fd.Severity}] {
			t.Errorf("%s %s is not in AuditRules", fd.Severity, fd.Rule)
		}
	}
}
