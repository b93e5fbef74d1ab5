package query

import (
	"fmt"
	"strings"
	"time"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/textsafe"
)

// What a swept (or saved) fabric did not read, as a command reports it: counts
// (FabricGaps), the items of a document's "incomplete" (FabricGapList) and the one line
// on stderr (PartialSummary). What counts as not read, and why, is fabric.NotRead's to
// say: these only count and word its list.

// Gaps counts what a sweep did not read (fabric.NotRead, tables that failed but not
// tables a sweep made without them), so a caller can say that the result is partial
// (and exit non-zero) without walking the fabric itself.
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

	summary string
}

// notProbed begins the node error of a node whose neighbours the sweep could not probe
// (its route already has mad.MaxHops hops).
const notProbed = fabric.NotProbedPrefix

// FabricGaps counts the gaps of a swept (or saved) fabric.
func FabricGaps(f *fabric.Fabric) Gaps {
	gaps := f.NotRead(false)
	g := Gaps{Stopped: f.Incomplete, summary: fabric.NotCheckedSummary(gaps)}
	for _, nc := range gaps {
		switch nc.What {
		case fabric.NotReadLink:
			g.UnansweredLinks++
		case fabric.NotReadUnprobed:
			g.UnprobedLinks++
		case fabric.NotReadNode:
			g.NodeReads++
		case fabric.NotReadPortInfo:
			g.PortReads++
		case fabric.NotReadTable:
			g.TableReads++
		}
	}
	return g
}

// Partial reports whether anything was not read.
func (g Gaps) Partial() bool { return g.summary != "" }

// String says in one line what was not read (fabric.NotCheckedSummary); "" when
// nothing.
func (g Gaps) String() string { return g.summary }

// FabricGapList lists the gaps of f (fabric.NotRead), one line per kind of thing not
// read with its kind (fabric.NotCheckedKind, as a document's incomplete kind names it):
// empty exactly when nothing the command needs is missing. needTables: the command
// answers from the tables, so tables a sweep made without them (--no-tables) are gaps
// too.
func FabricGapList(f *fabric.Fabric, needTables bool) []fabric.NotCheckedLine {
	return fabric.NotCheckedLines(f.NotRead(needTables))
}

// PartialSummary says in one line what f lacks ("1 P_Key table not read: ..."), for
// stderr: FabricGapList's lines joined; "" when it is empty.
func PartialSummary(f *fabric.Fabric, needTables bool) string {
	return fabric.NotCheckedSummary(f.NotRead(needTables))
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
