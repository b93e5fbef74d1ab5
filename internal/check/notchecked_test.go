package check

import (
	"fmt"
	"strings"
	"testing"
)

// hopFabric is a known fabric of one switch port facing every end, whose P_Key table
// and enforcement bits are given (nil: not read).
type hopFabric struct {
	table []PKey
	enf   *Enforcement
	// links: partitions dropped on a link between switches (BetweenSwitches).
	links map[PartitionKey]string
	// peerNotRead: the port cabled to every end was not read, and why.
	peerNotRead string
}

func (f hopFabric) BetweenSwitches(key PartitionKey) []string {
	if l, ok := f.links[key]; ok {
		return []string{l}
	}
	return nil
}

func (f hopFabric) CheckHop(end PortID, key PartitionKey) (HopCheck, bool) {
	if f.peerNotRead != "" {
		return PeerNotReadHop(end, key, f.peerNotRead), true
	}
	sw := PortID{Node: 0x100, Port: end.Port}
	return JudgeHop(end, sw, key, f.table, f.enf), true
}

func (f hopFabric) Label(id PortID) string { return fmt.Sprintf("%s/%d", id.Node, id.Port) }

// TestVerdictNotCheckedCause: an unknown verdict carries what was not read as a typed
// cause beside its sentence (entries of an end, a switch port's table, a switch port's
// enforcement bits), so a command names the kind without reading the words.
func TestVerdictNotCheckedCause(t *testing.T) {
	unreadEnd := port("a", 0xffff)
	unreadEnd.Entries = append(unreadEnd.Entries, TableEntry{Index: 1})
	at := func(e Endpoint, node GUID, f HopFabric) Endpoint {
		e.Fabric, e.At = f, &PortID{Node: node, Port: 1}
		return e
	}
	for _, tc := range []struct {
		name string
		a, b Endpoint
		want []NotCheckedCause
	}{
		{"end entries", unreadEnd, port("b", 0x0001), []NotCheckedCause{NotCheckedEntries}},
		{"switch table", at(port("a", 0x8001), 1, hopFabric{}), port("b", 0x8001), []NotCheckedCause{NotCheckedSwitchTable}},
		{"switch enforcement", at(port("a", 0x8001), 1, hopFabric{table: []PKey{0xffff}}), port("b", 0x8001), []NotCheckedCause{NotCheckedSwitchEnforcement}},
		// Not even the port facing the end was read: its table was not either.
		{"far end not read", at(port("a", 0x8001), 1, hopFabric{peerNotRead: "the port is ACTIVE"}), port("b", 0x8001), []NotCheckedCause{NotCheckedSwitchTable}},
		{"both ends' switches", at(port("a", 0x8001), 1, hopFabric{}), at(port("b", 0x8001), 2, hopFabric{table: []PKey{0xffff}}),
			[]NotCheckedCause{NotCheckedSwitchTable, NotCheckedSwitchEnforcement}},
		// The ends' switch ports pass it, and a link between switches that the route
		// may cross drops it.
		{"link between switches", at(port("a", 0x8001), 1, hopFabric{table: []PKey{0xffff, 0x8001}, enf: &Enforcement{Inbound: true, Outbound: true},
			links: map[PartitionKey]string{0x0001: "S[7] drops 0x0001"}}), port("b", 0x8001), []NotCheckedCause{NotCheckedRoute}},
	} {
		v := CanTalk(tc.a, tc.b)
		if v.Kind != VerdictUnknown {
			t.Errorf("%s: verdict %s, want unknown (%v)", tc.name, v.Kind, v.Reasons)
			continue
		}
		var got []NotCheckedCause
		for _, nc := range v.NotChecked {
			got = append(got, nc.Cause)
			if nc.Sentence == "" {
				t.Errorf("%s: cause %d without a sentence", tc.name, nc.Cause)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: causes %v, want %v (%v)", tc.name, got, tc.want, v.NotChecked)
		}
	}
}

// countingFabric is hopFabric counting the checks asked of it, per end and key.
type countingFabric struct {
	hopFabric
	calls map[HopCheck]int // End and Key set
}

func (f countingFabric) CheckHop(end PortID, key PartitionKey) (HopCheck, bool) {
	f.calls[HopCheck{End: end, Key: key}]++
	return f.hopFabric.CheckHop(end, key)
}

// TestHopCheckedOncePerVerdict: the switch port at each end is checked once per shared
// partition that works, whatever the verdict: the listing (SharedPartition.Switch,
// Hops) and the verdict read the same checks (both made their own until wave 10).
func TestHopCheckedOncePerVerdict(t *testing.T) {
	for _, f := range []hopFabric{
		{table: []PKey{0xffff, 0x8001, 0x8002}, enf: &Enforcement{Inbound: true, Outbound: true}}, // yes
		{table: []PKey{0xffff}, enf: &Enforcement{Inbound: true, Outbound: true}},                 // 0x0001, 0x0002 dropped
		{table: []PKey{0xffff}}, // 0x0001, 0x0002 not checked
		{},                      // no table read: unknown
	} {
		cf := countingFabric{f, map[HopCheck]int{}}
		a, b := port("a", 0xffff, 0x8001, 0x0002, 0x0003), port("b", 0xffff, 0x0001, 0x8002, 0x0003)
		a.Fabric, a.At = cf, &PortID{Node: 1, Port: 1}
		b.Fabric, b.At = cf, &PortID{Node: 2, Port: 1}
		v := CanTalk(a, b)
		want := map[HopCheck]int{}
		for _, end := range []PortID{*a.At, *b.At} {
			for _, k := range []PartitionKey{0x0001, 0x0002, 0x7fff} { // 0x0003: both limited
				want[HopCheck{End: end, Key: k}] = 1
			}
		}
		if fmt.Sprint(cf.calls) != fmt.Sprint(want) || len(v.Hops) != len(want) {
			t.Errorf("%+v: verdict %s, checks %v, hops %d; want each end and working key once", f, v.Kind, cf.calls, len(v.Hops))
		}
	}
}

// TestDroppedDefaultIsNotSaidToWork: when the switch ports drop the only partition
// that works between the end ports, the reasons never say it works ("they share only
// the default partition 0x7fff: ...; it works" beside a NO, until wave 10).
func TestDroppedDefaultIsNotSaidToWork(t *testing.T) {
	drops := hopFabric{table: []PKey{0x8001}, enf: &Enforcement{Inbound: true, Outbound: true}}
	for _, tc := range []struct{ a, b Endpoint }{
		{port("a", 0xffff), port("b", 0xffff)},
		{port("a", 0xffff, 0x0002), port("b", 0x7fff, 0x0002)}, // 0x0002: both limited
	} {
		tc.a.Fabric, tc.a.At = drops, &PortID{Node: 1, Port: 1}
		v := CanTalk(tc.a, tc.b)
		if all := strings.Join(v.Reasons, "\n"); v.Kind != VerdictNo || strings.Contains(all, "works") || !strings.Contains(all, "they share partition 0x7fff: ") {
			t.Errorf("verdict %s, reasons:\n%s", v.Kind, all)
		}
	}
}

// TestSwitchOKNotKnown: a direction no working partition passes is a switch that
// drops only where one does that way; where a switch port facing an end was not read
// that way, SwitchOK is not known (it read fails), per direction.
func TestSwitchOKNotKnown(t *testing.T) {
	at := func(e Endpoint, node GUID, f HopFabric) Endpoint {
		e.Fabric, e.At = f, &PortID{Node: node, Port: 1}
		return e
	}
	// Neither switch port read: not known both ways.
	v := CanTalk(at(port("a", 0x8001), 1, hopFabric{}), port("b", 0x8001))
	if v.AToB.SwitchOK != RuleNotKnown || v.BToA.SwitchOK != RuleNotKnown {
		t.Errorf("switch not read: %d, %d; want not known both ways", v.AToB.SwitchOK, v.BToA.SwitchOK)
	}
	// a's switch port enforces inbound only and lacks the key: a → b drops there; b's
	// was not read, so b → a is not known.
	v = CanTalk(at(port("a", 0x8001), 1, hopFabric{table: []PKey{0xffff}, enf: &Enforcement{Inbound: true}}), at(port("b", 0x8001), 2, hopFabric{}))
	if v.AToB.SwitchOK != RuleFails || v.BToA.SwitchOK != RuleNotKnown {
		t.Errorf("a's switch drops a → b, b's not read: %d, %d; want fails, not known", v.AToB.SwitchOK, v.BToA.SwitchOK)
	}
}
