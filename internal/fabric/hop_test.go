package fabric

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
)

// readSmallFabric decodes one of the committed sweeps of cmd/ibkey/testdata/fabric.
func readSmallFabric(t *testing.T, name string) *Fabric {
	t.Helper()
	r, err := os.Open("../../cmd/ibkey/testdata/fabric/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	f, err := DecodeFabric(r)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return f
}

// caPortsUp lists the CA ports of f whose link is up (not DOWN) and whose peer is known.
func caPortsUp(f *Fabric) []check.PortID {
	var out []check.PortID
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if n.Type != check.NodeSwitch && p.State != check.StateDown && p.Peer != nil {
				out = append(out, check.PortID{Node: n.GUID, Port: p.Num})
			}
		}
	}
	return out
}

// TestPeerNotReadIsNotChecked: a CA port whose link is up and whose far end the fabric
// does not name (peer null in a fabric file) faces a switch port that was not read,
// which may enforce partitions and lack the key: its hop is not checked (HopUnknown both
// ways), never nothing. So can-talk's yes becomes unknown, and a definite no that does
// not rest on that end's switch port stays a no. Generated over every CA port with a
// link of the committed sweeps, against every other one. Until wave 29 CheckHop said
// "nothing to check" and the yes stood.
func TestPeerNotReadIsNotChecked(t *testing.T) {
	var yes, no int
	for _, file := range []string{"small.json", "small-changed-enforcing.json"} {
		orig := readSmallFabric(t, file)
		for _, id := range caPortsUp(orig) {
			f := readSmallFabric(t, file)
			p := f.Port(id)
			sw := *p.Peer
			p.Peer, f.Port(sw).Peer = nil, nil // the decoder wants both ends or neither
			for _, k := range p.PKeys {
				if !k.Valid() {
					continue
				}
				h, ok := f.CheckHop(id, k.Partition())
				if !ok || h.FromEnd != check.HopUnknown || h.ToEnd != check.HopUnknown || h.TableRead || h.PeerNotRead == "" {
					t.Errorf("%s %s: key %s: hop %+v, %v; want not checked both ways", file, f.Label(id), k, h, ok)
				}
				if s := h.Sentence(f); !strings.Contains(s, f.Label(id)) || !strings.Contains(s, "not known") {
					t.Errorf("%s %s: sentence %q", file, f.Label(id), s)
				}
			}
			for _, other := range caPortsUp(orig) {
				if other == id {
					continue
				}
				for i, pair := range endpointPairs(orig, f, id, other) {
					before, after := check.CanTalk(pair[0], pair[1]), check.CanTalk(pair[2], pair[3])
					where := fmt.Sprintf("%s %s and %s (pair %d)", file, f.Label(id), f.Label(other), i)
					switch {
					case after.Kind == check.VerdictYes:
						t.Errorf("%s: yes with %s's far end not read: %v", where, f.Label(id), after.Reasons)
					case before.Kind == check.VerdictYes:
						yes++
						if after.Kind != check.VerdictUnknown || !strings.Contains(strings.Join(after.Reasons, "\n"), f.Label(id)+" was not read") {
							t.Errorf("%s: was yes, now %s: %v", where, after.Kind, after.Reasons)
						}
					case before.Kind.ExitCode() == 1 && !dropsAt(before, id):
						// A no from the tables, or from the other end's switch port.
						no++
						if after.Kind.ExitCode() != 1 {
							t.Errorf("%s: was %s, now %s: %v", where, before.Kind, after.Kind, after.Reasons)
						}
					}
				}
			}
		}
	}
	if yes == 0 || no == 0 {
		t.Errorf("generated %d yes and %d no pairs: the committed sweeps no longer cover both", yes, no)
	}
}

// endpointPairs are the can-talk questions between ports a and b of orig, asked in orig
// and in f (the same fabric, edited): {a, b, a in f, b in f}, for each of a's endpoints
// (the port, and a QP on it using each of its valid entries) against each of b's.
func endpointPairs(orig, f *Fabric, a, b check.PortID) [][4]check.Endpoint {
	ends := func(id check.PortID, label string) []check.Endpoint {
		e := portEndpoint(orig, id, label)
		out := []check.Endpoint{e}
		for _, te := range e.Entries {
			if te.PKey.Valid() {
				qp := e
				qp.Port, qp.Entries = false, []check.TableEntry{te}
				out = append(out, qp)
			}
		}
		return out
	}
	in := func(e check.Endpoint) check.Endpoint {
		e.Fabric = f
		return e
	}
	var out [][4]check.Endpoint
	for _, x := range ends(a, "A") {
		for _, y := range ends(b, "B") {
			out = append(out, [4]check.Endpoint{x, y, in(x), in(y)})
		}
	}
	return out
}

// dropsAt reports whether v's no rests on the switch port facing end.
func dropsAt(v check.Verdict, end check.PortID) bool {
	for _, h := range v.Hops {
		if h.End == end && (h.FromEnd == check.HopDrops || h.ToEnd == check.HopDrops) {
			return true
		}
	}
	return false
}

// TestPeerNotReadOnlyWhereALinkMayBeUp: a port without a link (DOWN), a switch's
// port 0 and a CA port the sweep found leads out of the subnet (no route arrived on
// it, NotReadPrefix) face nothing to check; a port whose far end did not answer, or
// whose PortInfo was not read, faces a hop not checked, as a peer the file leaves out.
func TestPeerNotReadOnlyWhereALinkMayBeUp(t *testing.T) {
	a1 := check.PortID{Node: 0xa0, Port: 1}
	for _, tc := range []struct {
		name string
		edit func(p *Port)
		want string // in PeerNotRead; "" for nothing to check
	}{
		{"DOWN", func(p *Port) { p.State = check.StateDown }, ""},
		{"out of the subnet", func(p *Port) {
			p.PKeysError = NotReadPrefix + "no directed route from the swept subnet arrives on this port"
		}, ""},
		{"ACTIVE", func(p *Port) {}, "the port is ACTIVE"},
		{"INIT", func(p *Port) { p.State = check.StateInit }, "the port is INIT"},
		{"ARMED", func(p *Port) { p.State = check.StateArmed }, "the port is ARMED"},
		{"no answer", func(p *Port) { p.PeerError = "no reply to NodeInfo after 3 attempt(s)" }, "did not answer: no reply"},
		{"PortInfo not read", func(p *Port) { p.Error, p.State = "PortInfo: no reply", "" }, "PortInfo was not read"},
	} {
		f := testFabric()
		p := f.Port(a1)
		p.Peer, f.Port(check.PortID{Node: 0x50, Port: 1}).Peer = nil, nil
		tc.edit(p)
		h, ok := f.CheckHop(a1, 0x0001)
		if ok != (tc.want != "") || !strings.Contains(h.PeerNotRead, tc.want) {
			t.Errorf("%s: hop %+v, %v; want %q", tc.name, h, ok, tc.want)
		}
	}
	if _, ok := testFabric().CheckHop(check.PortID{Node: 0x50, Port: 0}, 0x0001); ok {
		t.Error("a switch's port 0 has no cable: nothing to check")
	}
}

// TestPeerNotReadAudited: the audit (and every command answering from a sweep,
// through NotRead) says a link up whose far end the fabric file does not name was not
// read: a not-read finding naming the port, and the audit is incomplete (exit 4),
// where the switch-port rules (hca-key-not-on-switch, enforcement-off) could not run.
// Generated over every CA port with a link of the committed sweeps; until wave 29
// the audit said nothing and was complete.
func TestPeerNotReadAudited(t *testing.T) {
	for _, file := range []string{"small.json", "small-changed-enforcing.json"} {
		orig := readSmallFabric(t, file)
		for _, nc := range orig.NotRead(true) {
			t.Fatalf("%s: not read %+v before the edit", file, nc)
		}
		for _, id := range caPortsUp(orig) {
			f := readSmallFabric(t, file)
			sw := *f.Port(id).Peer
			f.Port(id).Peer, f.Port(sw).Peer = nil, nil
			res := AuditFabric(f, AuditOptions{})
			var items []string
			for _, nc := range res.NotChecked {
				if nc.What == NotReadPeer {
					items = append(items, f.Label(nc.Port.PortID))
				}
			}
			found := false
			for _, fd := range res.Findings {
				found = found || fd.Rule == RuleNotRead && fd.Ports[0].PortID == id && strings.Contains(fd.Message, "far end of the link at "+f.Label(id)+" was not read")
			}
			want := []string{f.Label(sw), f.Label(id)} // both ends of the link left out
			slices.Sort(items)
			slices.Sort(want)
			if !res.Incomplete() || !found || !slices.Equal(items, want) {
				t.Errorf("%s %s: incomplete %v, finding %v, far ends not read %v; want %v", file, f.Label(id), res.Incomplete(), found, items, want)
			}
			if !f.MissedLinks() {
				t.Errorf("%s %s: a node only behind that link would be missing, not gone", file, f.Label(id))
			}
		}
	}
}
