package fabric

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
)

// TestNotRead: what a sweep did not read, on its edge cases. Each case edits the test
// fabric (testFabric: HcaA, HcaB, switches S and T, all tables read) and lists what
// NotRead says was not read, as "What port" items.
func TestNotRead(t *testing.T) {
	a1, s0, s1, s4 := check.PortID{Node: 0xa0, Port: 1}, check.PortID{Node: 0x50}, check.PortID{Node: 0x50, Port: 1}, check.PortID{Node: 0x50, Port: 4}
	noTables := func(f *Fabric) {
		for _, n := range f.Nodes {
			for _, p := range n.Ports {
				if p.State != check.StateDown {
					p.PKeys, p.PKeysError = nil, ""
				}
			}
		}
	}
	// HcaA's second port, cabled back to back to HcaX: INIT with LID 0, no SM on it.
	backToBack := func(f *Fabric) {
		a := f.Node(0xa0)
		a.NumPorts = 2
		a.Ports = append(a.Ports, &Port{Num: 2, State: check.StateInit, PhysState: "LinkUp", TableSize: 8,
			PKeysError: NotReadPrefix + "no directed route from the swept subnet arrives on this port"})
	}
	for _, tc := range []struct {
		name   string
		edit   func(f *Fabric)
		tables bool
		want   string // the items, "What port", one per line
	}{
		{"complete", func(f *Fabric) {}, true, ""},
		{"a DOWN port's table is no gap, whatever its reason", func(f *Fabric) { f.Port(s4).PKeysError = "table size unknown: SwitchInfo could not be read" }, true, ""},
		{"stopped, unanswered, node, PortInfo and table reads, each once", func(f *Fabric) {
			f.Incomplete = "context deadline exceeded after 1s"
			f.Unreachable = []Unreachable{{From: check.PortID{Node: 0x60, Port: 1}, Path: "0,1,3,1", Error: "no reply"}}
			f.Node(0x50).Errors = []string{"NodeDescription: no reply", "SwitchInfo: no reply"}
			f.Port(a1).Error = "PortInfo: no reply" // its table was read: the arrival port
			f.Port(s1).PKeys, f.Port(s1).PKeysError = nil, "table size unknown: SwitchInfo could not be read"
		}, false, "sweep \nlink T[1]\nnode S[0]\nnode S[0]\nPortInfo HcaA[1]\nP_Key table S[1]"},
		{"a switch's port 0: its table failed (it has no peer)", func(f *Fabric) { f.Port(s0).PKeys, f.Port(s0).PKeysError = nil, "P_KeyTable: no reply" }, false, "P_Key table S[0]"},
		{"a PortInfo not read: the port once, not its table as --no-tables", func(f *Fabric) {
			p := f.Port(s1)
			p.Error, p.State, p.PhysState, p.PKeys = "PortInfo: no reply", "", "", nil
		}, true, "PortInfo S[1]"},
		{"--no-tables, needed", noTables, true, "P_Key table not swept S[0]\nP_Key table not swept S[1]\nP_Key table not swept S[2]\nP_Key table not swept S[3]\nP_Key table not swept T[0]\nP_Key table not swept T[1]\nP_Key table not swept HcaA[1]\nP_Key table not swept HcaB[1]"},
		{"--no-tables, not needed", noTables, false, ""},
		{"--no-tables: a port outside the subnet is not listed", func(f *Fabric) {
			backToBack(f)
			f.Port(check.PortID{Node: 0xa0, Port: 2}).PKeysError = ""
			noTables(f)
		}, true, "P_Key table not swept S[0]\nP_Key table not swept S[1]\nP_Key table not swept S[2]\nP_Key table not swept S[3]\nP_Key table not swept T[0]\nP_Key table not swept T[1]\nP_Key table not swept HcaA[1]\nP_Key table not swept HcaB[1]"},
		{"a CA port no route arrives on (out of the subnet)", backToBack, true, ""},
		{"a port no route arrived on, in the subnet, in a sweep that missed a link: a gap", func(f *Fabric) {
			backToBack(f)
			p := f.Port(check.PortID{Node: 0xa0, Port: 2})
			p.State, p.LID, p.SMLID = check.StateActive, 9, 1
			f.Unreachable = []Unreachable{{From: check.PortID{Node: 0x60, Port: 1}, Path: "0,1,3,1", Error: "no reply"}}
		}, true, "link T[1]\nP_Key table HcaA[2]"},
		{"the same outside the subnet: no gap", func(f *Fabric) {
			backToBack(f)
			f.Unreachable = []Unreachable{{From: check.PortID{Node: 0x60, Port: 1}, Path: "0,1,3,1", Error: "no reply"}}
		}, true, "link T[1]"},
		{"an older sweep: the back-to-back port not read yet, the node past it swept", func(f *Fabric) {
			// Before 2026-11-27 the sweep left a CA through its other port (ibsim
			// forwards it) and marked the port "not read yet" at the end.
			backToBack(f)
			p := f.Port(check.PortID{Node: 0xa0, Port: 2})
			p.Peer, p.PKeysError = &check.PortID{Node: 0xc0, Port: 1}, "not read yet: no directed route arrived on this port"
			f.Nodes = append(f.Nodes, &Node{GUID: 0xc0, Type: check.NodeCA, Description: "HcaX", NumPorts: 1, PartitionCap: 8, Ports: []*Port{
				{Num: 1, GUID: 0xc1, State: check.StateInit, PhysState: "LinkUp", Peer: &check.PortID{Node: 0xa0, Port: 2}, TableSize: 8, PKeys: make([]check.PKey, 8)}}})
		}, true, ""},
		{"a switch port without PortInfo: its link was not probed", func(f *Fabric) {
			p := f.Port(check.PortID{Node: 0x50, Port: 3})
			p.Error, p.State, p.PhysState, p.Peer, p.PKeys = "PortInfo: no reply", "", "", nil, nil
			f.Nodes = slicesDelete(f.Nodes, 0x60) // reached only through S[3]
		}, true, "PortInfo S[3]"},
		// A fabric file that names no peer for a port whose link is up (peer null):
		// the far end was not read, on each end of the link the file left out.
		{"a link up whose far end is not named", func(f *Fabric) {
			f.Port(a1).Peer, f.Port(s1).Peer = nil, nil
		}, false, "far end S[1]\nfar end HcaA[1]"},
		{"the same, INIT", func(f *Fabric) {
			f.Port(a1).Peer, f.Port(s1).Peer = nil, nil
			f.Port(a1).State, f.Port(s1).State = check.StateInit, check.StateInit
		}, false, "far end S[1]\nfar end HcaA[1]"},
		{"the same, DOWN: no link, no far end", func(f *Fabric) {
			f.Port(a1).Peer, f.Port(s1).Peer = nil, nil
			f.Port(a1).State, f.Port(s1).State = check.StateDown, check.StateDown
		}, false, ""},
		{"a far end that did not answer is listed once, as the link", func(f *Fabric) {
			f.Port(a1).Peer, f.Port(a1).PeerError = nil, "no reply to NodeInfo after 4 attempt(s)"
			f.Unreachable = []Unreachable{{From: a1, Path: "0", Error: "no reply to NodeInfo after 4 attempt(s)"}}
			f.Nodes = slicesDelete(slicesDelete(slicesDelete(f.Nodes, 0x50), 0x60), 0xb0)
		}, false, "link HcaA[1]"},
		{"a peer error without its link (a file written otherwise)", func(f *Fabric) {
			f.Port(a1).Peer, f.Port(a1).PeerError, f.Port(s1).Peer = nil, "no reply", nil
		}, false, "far end S[1]\nfar end HcaA[1]"},
		{"'not read:' on a cabled port is a gap: a link of the sweep reaches it", func(f *Fabric) {
			f.Port(a1).PKeys, f.Port(a1).PKeysError = nil, NotReadPrefix+"skipped"
		}, true, "P_Key table HcaA[1]"},
		{"a node error of any kind", func(f *Fabric) { f.Node(0xb0).Errors = []string{"VendorInfo: no reply"} }, false, "node HcaB[0]"},
		{"a switch at 63 hops: its cabled ports no other route found", func(f *Fabric) {
			f.Node(0x60).Errors = []string{NotProbedPrefix + ": the route to this node already has 63 hops"}
			f.Node(0x60).Ports = append(f.Node(0x60).Ports, &Port{Num: 2, State: check.StateActive}, &Port{Num: 3, State: check.StateDown})
			f.Node(0x60).NumPorts = 3
		}, false, "unprobed link T[2]"},
		{"a switch at 63 hops whose links other routes found", func(f *Fabric) {
			f.Node(0x60).Errors = []string{NotProbedPrefix + ": the route to this node already has 63 hops"}
		}, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := testFabric()
			tc.edit(f)
			f.Normalize()
			var got []string
			for _, nc := range f.NotRead(tc.tables) {
				where := ""
				if nc.What != NotReadSweep {
					where = strings.ReplaceAll(f.Label(nc.Port.PortID), `"`, "")
				}
				got = append(got, fmt.Sprintf("%s %s", nc.What, where))
			}
			if g := strings.Join(got, "\n"); g != tc.want {
				t.Errorf("NotRead:\n%s\nwant\n%s", g, tc.want)
			}
		})
	}
}

// TestNotCheckedLines: one line per kind of thing, counted, naming three.
func TestNotCheckedLines(t *testing.T) {
	f := testFabric()
	f.Incomplete = "--timeout 1s expired"
	f.Unreachable = []Unreachable{{From: check.PortID{Node: 0x60, Port: 1}, Path: "0,1,3,1", Error: "no reply"}}
	for _, id := range []check.PortID{{Node: 0x50}, {Node: 0x50, Port: 1}, {Node: 0x50, Port: 2}, {Node: 0x50, Port: 3}} {
		f.Port(id).PKeys, f.Port(id).PKeysError = nil, "P_KeyTable: no reply"
	}
	items := append(f.NotRead(true), NotChecked{Kind: OtherNotChecked, What: "SA MCMemberRecord", Reason: "ff12::1: timed out"},
		NotChecked{Kind: OtherNotChecked, What: "SA P_KeyTableRecord", Reason: "a"}, NotChecked{Kind: OtherNotChecked, What: "SA P_KeyTableRecord", Reason: "b"})
	want := []NotCheckedLine{
		{PartialSweep, "the sweep stopped early (--timeout 1s expired): nodes past that point were not swept"},
		{PartialSweep, `1 link with no answer from the far end (the nodes behind them are missing): behind "T"[1] (DR path 0,1,3,1): no reply`},
		{UnreadTable, `4 P_Key tables not read: "S"[0]: P_KeyTable: no reply; "S"[1]: P_KeyTable: no reply; "S"[2]: P_KeyTable: no reply; and 1 more`},
		{OtherNotChecked, "SA MCMemberRecord not checked: ff12::1: timed out"},
		{OtherNotChecked, "2 × SA P_KeyTableRecord not checked (e.g. a)"},
	}
	got := NotCheckedLines(items)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("lines:\n%q\nwant\n%q", got, want)
	}
	if s := NotCheckedSummary(items); !strings.HasPrefix(s, want[0].Text+"; "+want[1].Text+"; ") {
		t.Errorf("summary %q", s)
	}
	if len(NotCheckedLines(nil)) != 0 || NotCheckedSummary(nil) != "" {
		t.Errorf("nothing not read: %q", NotCheckedSummary(nil))
	}
}

// TestDiffPartial: what a sweep did not read is not a change. B missed the link to T
// (it did not answer): T and its link are not gone; a link whose end in B is DOWN is.
// A missed links: a node only B has is not new.
func TestDiffPartial(t *testing.T) {
	a, b := testFabric(), testFabric()
	b.Nodes = slicesDelete(b.Nodes, 0x60)
	s3 := check.PortID{Node: 0x50, Port: 3}
	b.Port(s3).Peer, b.Port(s3).PeerError = nil, "no reply to NodeInfo after 4 attempt(s)"
	b.Unreachable = []Unreachable{{From: s3, Path: "0,1,3", Error: "no reply to NodeInfo after 4 attempt(s)"}}
	b.Normalize()
	if d := Diff(a, b); len(d) != 0 {
		t.Errorf("B missed T: changes %v, want none (not read is not gone)", d)
	}
	// HcaB's link goes DOWN in B: that link is gone, whatever B missed.
	b.Port(check.PortID{Node: 0x50, Port: 2}).Peer, b.Port(check.PortID{Node: 0x50, Port: 2}).State = nil, check.StateDown
	b.Port(check.PortID{Node: 0xb0, Port: 1}).Peer = nil
	var rules []string
	for _, c := range Diff(a, b) {
		rules = append(rules, c.Rule)
	}
	if !strings.Contains(strings.Join(rules, " "), ChangeLinkRemoved) {
		t.Errorf("a link whose end is DOWN: %v, want %s", rules, ChangeLinkRemoved)
	}
	// Reversed: A missed T, so T is not new in the complete sweep.
	for _, c := range Diff(b, a) {
		if c.Rule == ChangeNodeAdded || c.Rule == ChangeLinkAdded && strings.Contains(c.Message, `"T"`) {
			t.Errorf("A missed T: %s %s", c.Rule, c.Message)
		}
	}
	// Complete sweeps: T is gone, and S[3]'s link with it (a link up whose far end
	// the sweep does not name would be a link not read).
	c := testFabric()
	c.Nodes = slicesDelete(c.Nodes, 0x60)
	c.Port(s3).Peer, c.Port(s3).State = nil, check.StateDown
	c.Normalize()
	if d := Diff(a, c); len(d) != 3 || d[0].Rule != ChangeLinkRemoved || d[1].Rule != ChangePort || d[2].Rule != ChangeNodeRemoved {
		t.Errorf("complete sweeps: %v, want T and its link gone, S[3] DOWN", d)
	}
}

func slicesDelete(nodes []*Node, g check.GUID) []*Node {
	var out []*Node
	for _, n := range nodes {
		if n.GUID != g {
			out = append(out, n)
		}
	}
	return out
}

// TestLimitedOnlyPartial: a partition whose members read are all limited, in a sweep
// that missed a link: a full member may be behind it, and the finding says so.
func TestLimitedOnlyPartial(t *testing.T) {
	f := testFabric()
	f.Port(check.PortID{Node: 0xa0, Port: 1}).PKeys[1] = 0x0001 // HcaA and HcaB: limited
	f.Port(check.PortID{Node: 0x50, Port: 1}).PKeys[1] = 0x0001
	msg := func() string {
		for _, fd := range AuditFabric(f, AuditOptions{}).Findings {
			if fd.Rule == RuleLimitedOnly {
				return fd.Message
			}
		}
		return ""
	}
	if m := msg(); m == "" || strings.Contains(m, "may be there") {
		t.Errorf("complete sweep: %q", m)
	}
	f.Unreachable = []Unreachable{{From: check.PortID{Node: 0x60, Port: 1}, Path: "0,1,3,1", Error: "no reply"}}
	if m := msg(); !strings.Contains(m, "the nodes behind links the sweep missed were not read, a full member may be there") {
		t.Errorf("a link missed: %q", m)
	}
}

// TestDiffNotReadFields: a PortInfo or NodeDescription not read in one sweep is not a
// changed LID, state or name.
func TestDiffNotReadFields(t *testing.T) {
	a, b := testFabric(), testFabric()
	hb := b.Port(check.PortID{Node: 0xb0, Port: 1})
	hb.Error, hb.State, hb.PhysState, hb.LID = "PortInfo: timed out", "", "", 0
	b.Node(0xa0).Description, b.Node(0xa0).Errors = "", []string{"NodeDescription: timed out"}
	if d := Diff(a, b); len(d) != 0 {
		t.Errorf("changes %v, want none", d)
	}
	// Read in both: a changed LID is a change.
	b = testFabric()
	b.Port(check.PortID{Node: 0xb0, Port: 1}).LID = 7
	if d := Diff(a, b); len(d) != 1 || d[0].Field != "lid" {
		t.Errorf("changes %v, want the LID", d)
	}
}

// TestMissedLinks: the sweep may lack nodes when it stopped early, a link did not
// answer or was not probed (a 63-hop switch, a switch port whose PortInfo failed);
// not when only a table or a NodeDescription was not read.
func TestMissedLinks(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(f *Fabric)
		want bool
	}{
		{"complete", func(f *Fabric) {}, false},
		{"a table not read", func(f *Fabric) {
			f.Port(check.PortID{Node: 0x50}).PKeys, f.Port(check.PortID{Node: 0x50}).PKeysError = nil, "timed out"
		}, false},
		{"a NodeDescription not read", func(f *Fabric) { f.Node(0x60).Errors = []string{"NodeDescription: timed out"} }, false},
		{"stopped early", func(f *Fabric) { f.Incomplete = "--timeout 1s expired" }, true},
		{"a link with no answer", func(f *Fabric) { f.Unreachable = []Unreachable{{From: check.PortID{Node: 0x60, Port: 1}}} }, true},
		{"a switch port's PortInfo", func(f *Fabric) {
			p := f.Port(check.PortID{Node: 0x50, Port: 3})
			p.Error, p.State, p.Peer = "PortInfo: timed out", "", nil
			f.Port(check.PortID{Node: 0x60, Port: 1}).Peer = nil
		}, true},
		{"a CA port's PortInfo (the link it was found by)", func(f *Fabric) { f.Port(check.PortID{Node: 0xb0, Port: 1}).Error = "PortInfo: timed out" }, false},
	} {
		f := testFabric()
		tc.edit(f)
		if got := f.MissedLinks(); got != tc.want {
			t.Errorf("%s: MissedLinks %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestListed: listings show every end port and every switch port that has or may have
// a cable; only a switch port known to have none is left out.
func TestListed(t *testing.T) {
	sw := &Node{Type: check.NodeSwitch}
	ca := &Node{Type: check.NodeCA}
	peer := &check.PortID{Node: 1, Port: 1}
	for _, c := range []struct {
		name string
		n    *Node
		p    Port
		want bool
	}{
		{"CA port without a cable", ca, Port{Num: 2}, true},
		{"switch port 0", sw, Port{Num: 0}, true},
		{"switch port with a cable", sw, Port{Num: 3, Peer: peer}, true},
		{"switch port whose far end did not answer", sw, Port{Num: 3, PeerError: "timed out"}, true},
		{"switch port whose PortInfo was not read", sw, Port{Num: 3, Error: "PortInfo: timed out"}, true},
		{"switch port without a cable", sw, Port{Num: 3}, false},
	} {
		if got := c.n.Listed(&c.p); got != c.want {
			t.Errorf("%s: Listed %v, want %v", c.name, got, c.want)
		}
	}
}
