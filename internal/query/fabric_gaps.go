package query

import (
	"fmt"
	"strings"
	"time"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/textsafe"
)

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
