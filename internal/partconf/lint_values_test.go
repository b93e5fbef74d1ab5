package partconf

import (
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
)

func TestLintValues(t *testing.T) {
	const def = "Default=0x7fff, ipoib : ALL=full;\n"
	for _, tc := range []struct {
		in, rule, text string
	}{
		{def + "a=0x10 : 0000000000100004=full;\n", "octal-guid", "0x0000000000008004"},
		{def + "a=0x10 : 1048580=full;\n", "decimal-guid", "0x0000000000100004"},
		{"Default=0x7fff, ipoib, mtu=2048 : ALL=full;\n", "mtu-code", "mtu=4"},
		{"Default=0x7fff, ipoib, rate=100 : ALL=full;\n", "rate-code", "rate=16"},
		// 258 cut to OpenSM's 8 bits is 2, a code: still not what was meant.
		{"Default=0x7fff, ipoib, rate=258 : ALL=full;\n", "rate-code", "OpenSM stores 2 "},
		{"Default=0x7fff, ipoib, mtu=0 : ALL=full;\n", "mtu-code", "IB MTU code"},
	} {
		var got []check.Finding
		for _, fd := range Lint(Parse("p.conf", []byte(tc.in)), LintOptions{}) {
			if fd.Rule == tc.rule {
				got = append(got, fd)
			}
		}
		if len(got) != 1 || !strings.Contains(got[0].Message+" "+got[0].Action, tc.text) || got[0].Severity != check.SeverityWarning {
			t.Errorf("%q: %s findings %v, want one with %q", tc.in, tc.rule, got, tc.text)
		}
	}
	// Codes as OpenSM means them, hex GUIDs: quiet.
	for _, fd := range Lint(Parse("p.conf", []byte("Default=0x7fff, ipoib, mtu=5, rate=7 : ALL=full;\na=0x10 : 0x0002c90300000204=full;\n")), LintOptions{}) {
		t.Errorf("clean file: %s", fd)
	}
}

func TestUnknownGUIDs(t *testing.T) {
	f := &fabric.Fabric{Nodes: []*fabric.Node{
		{GUID: 0xa0, Type: check.NodeCA, Description: "HcaA", Ports: []*fabric.Port{{Num: 1, GUID: 0xa1}}},
		{GUID: 0x50, Type: check.NodeSwitch, Description: "S", Ports: []*fabric.Port{{Num: 0, GUID: 0x50}, {Num: 1}}},
	}}
	f.Normalize()
	c := Parse("p.conf", []byte("Default=0x7fff : ALL=full;\na=0x10 : 0xa1=full, 0xa0, 0x50, 0xdead, 0xdead=limited;\n"))
	got := UnknownGUIDs(c, f)
	if len(got) != 2 || !strings.Contains(got[0].Message, `node GUID of "HcaA"`) || !strings.Contains(got[1].Message, "0x000000000000dead") || got[1].Pos.Col != 33 {
		t.Errorf("%v", got)
	}
	f.Unreachable = []fabric.Unreachable{{}}
	if got := UnknownGUIDs(c, f); !strings.Contains(got[1].Message, "partial") {
		t.Errorf("partial sweep: %v", got)
	}
}

// TestUnknownGUIDsOutsideSubnet: a port the sweep holds outside its subnet (another
// SM's, here a CA's second port with another master SM LID) is no port of this
// subnet's OpenSM either: osm_prtn_add_port finds no such port ("port ... not found",
// osm_prtn.c) and skips the item, as for a GUID the sweep lacks. The file's item for
// it is reported, saying where the port is, not that it is missing; the ports of the
// subnet are not.
func TestUnknownGUIDsOutsideSubnet(t *testing.T) {
	port := func(num int, guid check.GUID, lid, smLID uint16) *fabric.Port {
		return &fabric.Port{Num: num, GUID: guid, LID: lid, SMLID: smLID, State: check.StateActive, PhysState: "LinkUp"}
	}
	f := &fabric.Fabric{Local: check.PortID{Node: 0xa0, Port: 1}, Nodes: []*fabric.Node{
		{GUID: 0xa0, Type: check.NodeCA, Description: "HcaA", NumPorts: 2, Ports: []*fabric.Port{port(1, 0xa1, 1, 1), port(2, 0xa2, 5, 7)}},
		{GUID: 0xb0, Type: check.NodeCA, Description: "HcaB", NumPorts: 1, Ports: []*fabric.Port{port(1, 0xb1, 2, 1)}},
	}}
	f.Normalize()
	c := Parse("p.conf", []byte("Default=0x7fff : ALL=full;\na=0x10 : 0xa1=full, 0xa2=full, 0xb1;\n"))
	got := UnknownGUIDs(c, f)
	if len(got) != 1 || got[0].Rule != RuleGUIDNotInFabric || !strings.Contains(got[0].Message, "0x00000000000000a2 (0xa2=full) is outside the swept subnet (its master SM is LID 7") ||
		got[0].Pos.Line != 2 || got[0].Pos.Col != 21 {
		t.Errorf("%v", got)
	}
}

// TestOneSeverityOneFinding: lint, audit and the comparison with a file share one
// Severity (errors sort first everywhere) and one Finding.
func TestOneSeverityOneFinding(t *testing.T) {
	// partconf names check's severities (its aliases went); errors rank above warnings.
	if !(check.SeverityError > check.SeverityWarning) {
		t.Fatalf("severities: Error %d Warning %d", check.SeverityError, check.SeverityWarning)
	}
	fs := Lint(Parse("p.conf", []byte("a=0x10 : 0x1=full, 0x1=limited;\nb=0x20 : ALL_CAs;\n")), LintOptions{})
	check.SortFindings(fs)
	if len(fs) < 2 || fs[0].Severity != check.SeverityError || fs[len(fs)-1].Severity != check.SeverityWarning {
		t.Errorf("sorted lint findings: %v", fs)
	}
	var f check.Finding = fs[0] // the same type
	if f.Pos.IsZero() || !strings.HasPrefix(f.String(), "p.conf:") {
		t.Errorf("a file finding keeps its position: %s", f)
	}
}
