package query

import (
	"fmt"
	"strings"
	"time"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/textsafe"
)

// What a swept (or saved) fabric could not read, as a command reports it: the items of
// a document's "incomplete" and the one line on stderr (FabricGaps counts them).

// Gaps counts what a sweep could not read, so a caller can say that the result is
// partial (and exit non-zero) without walking the fabric itself.
type Gaps struct {
	// NodeReads: NodeDescription and SwitchInfo reads that failed.
	NodeReads int
	// PortReads: PortInfo reads that failed.
	PortReads int
	// TableReads: P_Key tables not read because a read failed or no route reached
	// the port (tables of ports without a link are not counted).
	TableReads int
	// UnansweredLinks: links whose far end did not answer NodeInfo; the nodes
	// behind them are missing (how many is unknown: one node may sit behind several
	// such links, and a whole subtree behind one).
	UnansweredLinks int
	// UnprobedLinks: cabled ports of switches at the most hops a directed route holds
	// (IBA 14.2.2: 63) whose far end no other route found; the nodes behind them
	// are missing, as behind an unanswered link.
	UnprobedLinks int
	// Stopped is why the sweep ended early (Fabric.Incomplete), or "".
	Stopped string
}

// notProbed begins the node error of a node whose neighbours the sweep could not probe
// (its route already has mad.MaxHops hops).
const notProbed = "neighbours not probed"

// FabricGaps counts the gaps of a swept (or saved) fabric.
func FabricGaps(f *fabric.Fabric) Gaps {
	g := Gaps{UnansweredLinks: len(f.Unreachable), Stopped: f.Incomplete}
	for _, n := range f.Nodes {
		for _, e := range n.Errors {
			if strings.HasPrefix(e, "NodeDescription:") || strings.HasPrefix(e, "SwitchInfo:") {
				g.NodeReads++
			}
			if strings.HasPrefix(e, notProbed) && n.Type == check.NodeSwitch {
				// A CA is probed through its arrival port only (sweep.go), whose
				// peer is the route it was found by.
				for _, p := range n.Ports {
					if p.Num > 0 && p.Peer == nil && p.Error == "" && p.State != check.StateDown {
						g.UnprobedLinks++
					}
				}
			}
		}
		for _, p := range n.Ports {
			if p.Error != "" {
				g.PortReads++
			}
			// A table past a subnet boundary (fabric.Fabric.InSubnet) not being read is
			// not a gap of this subnet's sweep.
			if p.PKeysError != "" && !strings.HasPrefix(p.PKeysError, notRead) && f.InSubnet(check.PortID{Node: n.GUID, Port: p.Num}) {
				g.TableReads++
			}
		}
	}
	return g
}

// Partial reports whether anything was not read.
func (g Gaps) Partial() bool { return g != Gaps{} }

// String summarises the gaps in one line: "the sweep stopped early (...); 3 PortInfo
// reads, 2 P_Key tables not read; 5 links with no answer from the far end (the nodes
// behind them are missing)"; "" when there are none.
func (g Gaps) String() string {
	var parts, failed []string
	if g.Stopped != "" {
		parts = append(parts, "the sweep stopped early ("+g.Stopped+")")
	}
	if g.NodeReads > 0 {
		failed = append(failed, textsafe.Plural(g.NodeReads, "node attribute read", "node attribute reads"))
	}
	if g.PortReads > 0 {
		failed = append(failed, textsafe.Plural(g.PortReads, "PortInfo read", "PortInfo reads"))
	}
	if g.TableReads > 0 {
		failed = append(failed, textsafe.Plural(g.TableReads, "P_Key table", "P_Key tables"))
	}
	if len(failed) > 0 {
		parts = append(parts, strings.Join(failed, ", ")+" not read")
	}
	if g.UnansweredLinks > 0 {
		parts = append(parts, unansweredText(g.UnansweredLinks))
	}
	if g.UnprobedLinks > 0 {
		parts = append(parts, unprobedText(g.UnprobedLinks))
	}
	return strings.Join(parts, "; ")
}

func unansweredText(n int) string {
	return textsafe.Plural(n, "link", "links") + " with no answer from the far end (the nodes behind them are missing)"
}

func unprobedText(n int) string {
	return textsafe.Plural(n, "link", "links") + " past the 63 hops a directed route holds, not probed (the nodes behind them are missing)"
}

// tablesNotRead counts the tables a sweep holds no answer for without a failure: end
// ports and cabled ports that are not DOWN, swept with --no-tables.
func tablesNotRead(f *fabric.Fabric) int {
	k := 0
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p.PKeys == nil && p.PKeysError == "" && p.State != check.StateDown && (n.IsEndPort(p) || p.Peer != nil) {
				k++
			}
		}
	}
	return k
}

// FabricGapList lists the gaps of f, each with its kind (fabric.NotCheckedKind, as a
// document's incomplete kind names it): empty exactly when nothing the command needs
// is missing. needTables: the command answers from the tables, so tables a sweep made
// without them (--no-tables) are gaps too.
func FabricGapList(f *fabric.Fabric, needTables bool) []fabric.NotCheckedLine {
	g := FabricGaps(f)
	var out []fabric.NotCheckedLine
	add := func(kind fabric.NotCheckedKind, text string) {
		out = append(out, fabric.NotCheckedLine{Kind: kind, Text: text})
	}
	if g.Stopped != "" {
		add(fabric.PartialSweep, "the sweep stopped early ("+g.Stopped+"): nodes past that point were not swept")
	}
	if k := len(f.Unreachable); k > 0 {
		add(fabric.PartialSweep, unansweredText(k)+": "+unreachableList(f))
	}
	if g.UnprobedLinks > 0 {
		add(fabric.PartialSweep, unprobedText(g.UnprobedLinks))
	}
	if g.NodeReads > 0 {
		add(fabric.UnreadNode, textsafe.Plural(g.NodeReads, "node attribute read", "node attribute reads")+" (NodeDescription, SwitchInfo) failed")
	}
	if g.PortReads > 0 {
		add(fabric.UnreadNode, textsafe.Plural(g.PortReads, "PortInfo read", "PortInfo reads")+" failed")
	}
	if g.TableReads > 0 {
		add(fabric.UnreadTable, textsafe.Plural(g.TableReads, "P_Key table", "P_Key tables")+" not read")
	}
	if needTables {
		if k := tablesNotRead(f); k > 0 {
			add(fabric.UnreadTable, textsafe.Plural(k, "P_Key table", "P_Key tables")+" not in the sweep (made with --no-tables)")
		}
	}
	return out
}

// PartialSummary says in one line what f lacks ("1 P_Key table not read: ...",
// with up to three of the links that did not answer), for stderr; "" when FabricGapList
// is empty.
func PartialSummary(f *fabric.Fabric, needTables bool) string {
	var parts []string
	if g := FabricGaps(f); g.Partial() {
		parts = append(parts, g.String())
	}
	if needTables {
		if k := tablesNotRead(f); k > 0 {
			parts = append(parts, textsafe.Plural(k, "P_Key table", "P_Key tables")+" not in the sweep (made with --no-tables)")
		}
	}
	if len(parts) == 0 {
		return ""
	}
	msg := strings.Join(parts, "; ")
	if len(f.Unreachable) > 0 {
		msg += ": " + unreachableList(f)
	}
	return msg
}

// unreachableList names up to three of the links of f whose far end did not answer,
// and how many more there are.
func unreachableList(f *fabric.Fabric) string {
	var where []string
	for _, u := range f.Unreachable {
		where = append(where, fmt.Sprintf("behind %s (DR path %s): %s", f.Label(u.From), u.Path, u.Error))
	}
	return strings.Join(textsafe.Capped(where, 3), "; ")
}

// SweepSummary is "6 nodes (2 switches, 4 CAs), 9 links, swept via X at T in D".
func SweepSummary(f *fabric.Fabric) string {
	var sw, ca, rt int
	for _, n := range f.Nodes {
		switch n.Type {
		case check.NodeSwitch:
			sw++
		case check.NodeRouter:
			rt++
		default:
			ca++
		}
	}
	kinds := []string{textsafe.Plural(sw, "switch", "switches"), textsafe.Plural(ca, "CA", "CAs")}
	if rt > 0 {
		kinds = append(kinds, textsafe.Plural(rt, "router", "routers"))
	}
	s := fmt.Sprintf("%s (%s), %s", textsafe.Plural(len(f.Nodes), "node", "nodes"), strings.Join(kinds, ", "), textsafe.Plural(len(f.Links()), "link", "links"))
	if f.Source != "" {
		s += ", swept via " + f.Source
	}
	if !f.SweptAt.IsZero() {
		s += " at " + f.SweptAt.UTC().Format(time.RFC3339)
	}
	return s + fmt.Sprintf(" in %v", f.Duration.Round(time.Millisecond))
}
