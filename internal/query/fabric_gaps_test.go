package query

import "github.com/ibkey/ibkey/internal/fabric"

// Gaps counts what a sweep did not read (fabric.NotRead, tables that failed but not
// tables a sweep made without them), for the tests; a command says it with
// fabric.NotCheckedSummary and fabric.NotCheckedLines.
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
