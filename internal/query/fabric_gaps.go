package query

import (
	"fmt"
	"strings"
	"time"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/textsafe"
)

// What a swept (or saved) fabric did not read, as a command reports it: the items of
// a document's "incomplete" (FabricGapList) and the one line on stderr
// (PartialSummary). What counts as not read, and why, is fabric.NotRead's to
// say: these only count and word its list.

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
