package fabric

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/textsafe"
)

// What a sweep did not read.
//
// One rule, NotRead, decides what a sweep (run now or saved in a fabric file) did not
// read that an answer from it needs, and why. Every command answers from it: the
// partial-sweep line on stderr and exit 4 (fabric discover, pkeys, check, diff, sm log),
// a JSON document's incomplete items, fabric check's not-checked list and not-read
// findings, and whether a port missing from a sweep may be in the part not read
// (can-talk).

// The sweep's markers, kept in a fabric file as the sweep wrote them (internal/query).
const (
	// NotReadPrefix begins a Port.PKeysError for a table the sweep chose not to read
	// because it is no part of the subnet's answer: a port without a link, or a CA port
	// no directed route from the subnet arrives on (its link leads out of the subnet).
	NotReadPrefix = "not read: "
	// NotProbedPrefix begins the Node.Errors entry of a switch whose neighbours the
	// sweep did not probe: its route already holds the 63 hops a directed route can
	// (IBA 14.2.2).
	NotProbedPrefix = "neighbours not probed"
)

// What a NotChecked of NotRead names (its What); NotCheckedLines gives each one line.
const (
	// NotReadSweep: the sweep stopped early (Fabric.Incomplete).
	NotReadSweep = "sweep"
	// NotReadLink: a link whose far end did not answer NodeInfo (Fabric.Unreachable).
	NotReadLink = "link"
	// NotReadUnprobed: a cabled port of a switch at 63 hops that no route probed.
	NotReadUnprobed = "unprobed link"
	// NotReadPeer: any other port whose link is up and whose far end the sweep does
	// not name (peerNotRead), as a fabric file may leave it (peer null).
	NotReadPeer = "far end"
	// NotReadNode: a read of a node as a whole that failed (Node.Errors).
	NotReadNode = "node"
	// NotReadPortInfo: a PortInfo read that failed (Port.Error).
	NotReadPortInfo = "PortInfo"
	// NotReadTable: a P_Key table not read, and why (Port.PKeysError).
	NotReadTable = "P_Key table"
	// NotReadNoTables: a P_Key table not in the sweep at all (fabric discover
	// --no-tables, which leaves no reason).
	NotReadNoTables = "P_Key table not swept"
)

// NotRead lists what f did not read that an answer from it needs, and why, in this
// order: the sweep stopped early, links whose far end did not answer, links past the
// 63 hops a directed route holds, other links up whose far end the sweep does not
// name, node reads, PortInfo reads, P_Key tables. tables:
// the answer needs the P_Key tables, so tables a sweep made without them (--no-tables)
// are listed too. Empty exactly when the answer rests on nothing unread.
//
// Not listed, being no part of the subnet's answer: a port that is DOWN; a port outside
// the subnet (InSubnet; OutsidePorts lists those); a switch's external port without a
// cable; a table the sweep chose not to read (NotReadPrefix) on a port no link of the
// sweep reaches, unless the sweep missed links (stopped early, a link that did not
// answer or was not probed) one of which may lead there. A port whose PortInfo was not
// read is listed once, as that read: its table only when reading the table failed too.
func (f *Fabric) NotRead(tables bool) []NotChecked {
	var sweep, links, unprobed, peers, nodes, infos, failed, noTables []NotChecked
	item := func(kind NotCheckedKind, what string, id check.PortID, reason, example, finding string) NotChecked {
		return NotChecked{Port: f.FindingPort(id), Kind: kind, What: what, Reason: reason, example: example, finding: finding, hides: kind == PartialSweep}
	}
	if f.Incomplete != "" {
		sweep = append(sweep, NotChecked{Kind: PartialSweep, What: NotReadSweep, Reason: f.Incomplete, hides: true,
			finding: "the sweep stopped early: " + f.Incomplete + "; nodes past that point are not checked"})
	}
	for _, u := range f.Unreachable {
		why := fmt.Sprintf("the node behind it (DR path %s) did not answer: %s", u.Path, u.Error)
		links = append(links, item(PartialSweep, NotReadLink, u.From, why,
			fmt.Sprintf("behind %s (DR path %s): %s", f.Label(u.From), u.Path, u.Error),
			fmt.Sprintf("the node behind %s (DR path %s) did not answer: %s", f.Label(u.From), u.Path, u.Error)))
	}
	unanswered := map[check.PortID]bool{}
	for _, u := range f.Unreachable {
		unanswered[u.From] = true
	}
	for _, n := range f.Nodes {
		unprobedSwitch := false
		for _, e := range n.Errors {
			if !strings.HasPrefix(e, NotProbedPrefix) {
				id := check.PortID{Node: n.GUID}
				nodes = append(nodes, item(UnreadNode, NotReadNode, id, e,
					fmt.Sprintf("%s (%s): %s", quoteDesc(n), n.GUID, e), fmt.Sprintf("%s (%s): %s", quoteDesc(n), n.GUID, e)))
				continue
			}
			if n.Type != check.NodeSwitch {
				continue // a CA is probed only through the port it was found by
			}
			unprobedSwitch = true
			for _, p := range n.Ports {
				if p.Num > 0 && p.Peer == nil && p.Error == "" && p.State != check.StateDown {
					id := check.PortID{Node: n.GUID, Port: p.Num}
					why := "not probed: the route to its switch already has the 63 hops a directed route holds"
					unprobed = append(unprobed, item(PartialSweep, NotReadUnprobed, id, why, f.Label(id),
						fmt.Sprintf("the link at %s was not probed: the route to its switch already has the 63 hops a directed route holds; the nodes behind it are not checked", f.Label(id))))
				}
			}
		}
		for _, p := range n.Ports {
			id := check.PortID{Node: n.GUID, Port: p.Num}
			// A link up whose far end the sweep does not name, but as listed above
			// (no answer, not probed) or as its PortInfo (below).
			if why := peerNotRead(n, p); why != "" && p.Error == "" && !unanswered[id] && !unprobedSwitch && f.InSubnet(id) {
				peers = append(peers, item(PartialSweep, NotReadPeer, id, why, f.Label(id)+": "+why,
					fmt.Sprintf("the far end of the link at %s was not read (%s): the port cabled there is not checked (if it is a switch port that enforces partitions, it drops the partitions its table lacks), nor nodes only behind it", f.Label(id), why)))
			}
			if p.Error == "" {
				continue
			}
			why := p.Error
			// The sweep probes a port's link only when its PortInfo says it is up.
			notProbed := p.Peer == nil && (n.Type == check.NodeSwitch && p.Num > 0 || id == f.Local)
			if notProbed {
				why += " (so its link was not probed: nodes behind it may be missing)"
			}
			nc := item(UnreadNode, NotReadPortInfo, id, why, f.Label(id)+": "+why, "PortInfo of "+f.Label(id)+": "+why)
			nc.hides = notProbed
			infos = append(infos, nc)
		}
	}
	// hidden: the sweep missed links, so a port no route arrived on may be behind one.
	hidden := slices.ContainsFunc(slices.Concat(sweep, links, unprobed, peers, infos), func(nc NotChecked) bool { return nc.hides })
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			id := check.PortID{Node: n.GUID, Port: p.Num}
			if p.PKeys != nil || p.State == check.StateDown || !n.IsEndPort(p) && p.Peer == nil || !f.InSubnet(id) {
				continue
			}
			switch {
			case p.PKeysError != "":
				why := p.PKeysError
				if strings.HasPrefix(why, NotReadPrefix) && p.Peer == nil {
					if !hidden {
						continue
					}
					// No route arrived on the port, but the sweep missed links a
					// route to it may go through.
					why += "; but the sweep did not reach every link, and one it missed may lead there"
				}
				failed = append(failed, item(UnreadTable, NotReadTable, id, why, f.Label(id)+": "+why, "P_Key table of "+f.Label(id)+": "+why))
			case p.Error != "":
				// Listed as its PortInfo read.
			case tables:
				noTables = append(noTables, item(UnreadTable, NotReadNoTables, id,
					"not read: the sweep did not read P_Key tables (fabric discover --no-tables)", f.Label(id), ""))
			}
		}
	}
	return slices.Concat(sweep, links, unprobed, peers, nodes, infos, failed, noTables)
}

// peerNotRead says why the port cabled to port p of n was not read although p's link
// may be up: its PortState is INIT, ARMED or ACTIVE, or was not read (IBA 14.2.5.6: a
// port past DOWN has a physical link), and the sweep names no peer for it. "" when its
// peer is known, it has no link (DOWN, or a switch's port 0), or it is a CA port that
// no route of the subnet arrived on (its table's NotReadPrefix reason: the sweep found
// its link leads out of the subnet, sweep_ports.go in internal/query).
//
// The sweep probes every port whose link is up, so a sweep leaves such a port only
// when the probe got no answer (PeerError, with an Unreachable link) or was not sent
// (PortInfo not read; a switch at 63 hops); a fabric file written otherwise may leave
// any peer null.
func peerNotRead(n *Node, p *Port) string {
	switch {
	case p.Peer != nil || p.State == check.StateDown || n.Type == check.NodeSwitch && p.Num == 0:
		return ""
	case p.PeerError != "":
		return "the node behind it did not answer: " + p.PeerError
	case p.Error != "" || p.State == "":
		return "its PortInfo was not read, so whether its link is up is not known"
	case n.Type != check.NodeSwitch && strings.HasPrefix(p.PKeysError, NotReadPrefix):
		return ""
	}
	return "the port is " + p.State + ", but the sweep names no port cabled to it"
}

// MissedLinks reports whether the sweep may have missed nodes: it stopped early, or a
// link did not answer or was not probed (NotRead lists them). A node or link not in
// such a sweep is not read, not gone.
func (f *Fabric) MissedLinks() bool {
	return slices.ContainsFunc(f.NotRead(false), func(nc NotChecked) bool { return nc.hides })
}

// notReadLine is how NotCheckedLines starts the line of k of NotRead's items of one
// What, textsafe.Plural(k, one, many) + rest; the line then names them (their
// examples), joined by sep: "; " between examples with their reasons, ", " between
// ports alone.
var notReadLine = map[string]struct{ one, many, rest, sep string }{
	NotReadLink:     {"link", "links", " with no answer from the far end (the nodes behind them are missing)", "; "},
	NotReadUnprobed: {"link", "links", " past the 63 hops a directed route holds, not probed (the nodes behind them are missing)", ", "},
	NotReadPeer:     {"link", "links", " up whose far end was not read (the port cabled there is not checked, nor nodes only behind it)", "; "},
	NotReadNode:     {"node attribute read", "node attribute reads", " failed", "; "},
	NotReadPortInfo: {"PortInfo read", "PortInfo reads", " failed", "; "},
	NotReadTable:    {"P_Key table", "P_Key tables", " not read", "; "},
	NotReadNoTables: {"P_Key table", "P_Key tables", " not in the sweep (made with --no-tables)", ", "},
}

// maxNamed bounds the things a line names; the rest are counted ("and 12 more").
const maxNamed = 3

// NotCheckedLines says what was not checked, one line per kind of thing (What) in the
// order first met, with its kind: the items of a JSON document's incomplete list and,
// joined, the stderr line (NotCheckedSummary). A line of NotRead's items counts them and
// names up to three ("2 P_Key tables not read: \"HcaB\"[1]: P_KeyTable: timed out;
// ..."); other items (fabric check --sa's) read "SA P_KeyTableRecord not checked: why",
// or for several "3 × SA P_KeyTableRecord not checked (e.g. why)".
func NotCheckedLines(items []NotChecked) []NotCheckedLine {
	groups := map[string][]NotChecked{}
	var order []string
	for _, nc := range items {
		if groups[nc.What] == nil {
			order = append(order, nc.What)
		}
		groups[nc.What] = append(groups[nc.What], nc)
	}
	out := make([]NotCheckedLine, len(order))
	for i, what := range order {
		g := groups[what]
		line := NotCheckedLine{Kind: g[0].Kind}
		head, ok := notReadLine[what]
		switch {
		case what == NotReadSweep:
			line.Text = "the sweep stopped early (" + g[0].Reason + "): nodes past that point were not swept"
		case ok && g[0].example != "":
			named := make([]string, len(g))
			for j, nc := range g {
				named[j] = nc.example
			}
			line.Text = textsafe.Plural(len(g), head.one, head.many) + head.rest + ": " + strings.Join(textsafe.Capped(named, maxNamed), head.sep)
		case len(g) == 1:
			line.Text = fmt.Sprintf("%s not checked: %s", what, g[0].Reason)
		default:
			line.Text = fmt.Sprintf("%d × %s not checked (e.g. %s)", len(g), what, g[0].Reason)
		}
		out[i] = line
	}
	return out
}

// NotCheckedSummary says in one line what was not checked ("" when nothing): the
// lines of NotCheckedLines joined by "; ".
func NotCheckedSummary(items []NotChecked) string {
	var parts []string
	for _, l := range NotCheckedLines(items) {
		parts = append(parts, l.Text)
	}
	return strings.Join(parts, "; ")
}
