package query

import (
	"context"
	"fmt"
	"strings"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/textsafe"
)

// GUIDSelector finds GUID g (a port GUID, else a node GUID) in the swept fabric f and
// returns the address that reaches it: a CA port through its own LID (a CA answers
// only for the port an SMP arrives at), a node by its directed route; base's port
// choice applies to a node GUID. A GUID not in f is an *EnvError naming the sweep.
func GUIDSelector(f *fabric.Fabric, g check.GUID, base FabricSelector) (FabricSelector, error) {
	route := func(n *fabric.Node) (FabricSelector, error) {
		sel := base
		addr, err := mad.ParseDRPath(n.Path)
		if err != nil {
			return sel, &EnvError{Msg: fmt.Sprintf("GUID %s: %s has no usable directed route (%q)", g, n.Description, n.Path)}
		}
		sel.Addr = addr
		return sel, nil
	}
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p.GUID != g || g == 0 {
				continue
			}
			if p.LID != 0 && n.Type != check.NodeSwitch {
				sel := base
				sel.Addr = mad.LIDAddress(p.LID)
				return sel, nil
			}
			sel, err := route(n)
			if err == nil && !sel.AllPorts {
				sel.Port, sel.HasPort = p.Num, true
			}
			return sel, err
		}
	}
	if n := f.Node(g); n != nil {
		return route(n)
	}
	// What exists: the nodes' GUIDs, with their descriptions (the first 12).
	var guids []string
	for _, n := range f.Nodes {
		guids = append(guids, fmt.Sprintf("%s %q", n.GUID, n.Description))
	}
	return base, &EnvError{Msg: fmt.Sprintf("no port or node with GUID %s in the fabric (%s; node GUIDs: %s)", g, SweepSummary(f), strings.Join(textsafe.Capped(guids, 12), ", "))}
}

// FindGUID sweeps the fabric (no tables) and finds GUID g in it (GUIDSelector). A
// sweep that read nothing is an *EnvError; a GUID not in a partial sweep is an
// *UnknownError: it may be in the part not read.
func (fab *Fabric) FindGUID(ctx context.Context, g check.GUID, base FabricSelector) (FabricSelector, error) {
	f, err := Sweep(ctx, fab.T, SweepOptions{NoTables: true, Source: fab.Via})
	if f == nil {
		return base, &EnvError{Msg: fmt.Sprintf("finding GUID %s: %v (via %s)", g, err, fab.Via)}
	}
	sel, gerr := GUIDSelector(f, g, base)
	if gerr != nil && err != nil {
		return base, notChecked(fmt.Sprintf("GUID %s: not in the part of the fabric swept before: %v", g, err))
	}
	return sel, gerr
}
