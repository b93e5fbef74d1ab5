package fabric

import (
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
)

// The audit's counted messages agree in number: one table or port, "was" and "it";
// more, "were" and "them".
func TestAuditMessagesAgreeInNumber(t *testing.T) {
	messages := func(f *Fabric) string {
		var b strings.Builder
		for _, fd := range AuditFabric(f, AuditOptions{}).Findings {
			b.WriteString(fd.Message + "\n")
		}
		return b.String()
	}
	port := func(f *Fabric, n check.GUID, p int) *Port { return f.Node(n).Port(p) }

	// HcaA's table not read: partition 1 has only HcaB's limited member left.
	one := testFabric()
	port(one, 0xa0, 1).PKeys = nil
	got := messages(one)
	for _, want := range []string{
		"1 P_Key table was not read: the sweep did not read tables (fabric discover --no-tables), so no partition rule was checked on it (",
		"(among the tables read: 1 end-port table was not read, a full member may be there)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("one table not read: no %q in\n%s", want, got)
		}
	}

	// And switch T's port 0 (an end port) and its cabled port 1.
	two := testFabric()
	port(two, 0xa0, 1).PKeys = nil
	port(two, 0x60, 0).PKeys = nil
	port(two, 0x60, 1).PKeys = nil
	got = messages(two)
	for _, want := range []string{
		"3 P_Key tables were not read: the sweep did not read tables (fabric discover --no-tables), so no partition rule was checked on them (",
		"(among the tables read: 2 end-port tables were not read, a full member may be there)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("three tables not read: no %q in\n%s", want, got)
		}
	}

	// HcaA holds one, then two, keys the enforcing switch port it is cabled to lacks.
	for keys, want := range map[int]string{1: "packets of that partition to and from", 2: "packets of those partitions to and from"} {
		f := testFabric()
		a := port(f, 0xa0, 1)
		for i := range keys {
			a.PKeys[2+i] = check.PKey(0x8002 + i)
		}
		if got := messages(f); !strings.Contains(got, want) {
			t.Errorf("%d keys not on the switch: no %q in\n%s", keys, want, got)
		}
	}
}

// A finding names at most maxListed ports, then counts the others.
func TestLabelsCapped(t *testing.T) {
	f := testFabric()
	var ids []check.PortID
	for i := range maxListed + 2 {
		ids = append(ids, check.PortID{Node: 0xa0, Port: i})
	}
	got := f.labels(ids)
	if want := `"HcaA"[7], and 2 more`; !strings.HasSuffix(got, want) || strings.Count(got, ", ") != maxListed {
		t.Errorf("labels of %d ports = %q, want %d names then %q", len(ids), got, maxListed, want)
	}
	if got, want := f.labels(ids[:1]), `"HcaA"[0]`; got != want {
		t.Errorf("labels of one port = %q, want %q", got, want)
	}
}
