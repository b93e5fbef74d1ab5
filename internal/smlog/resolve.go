package smlog

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
)

// End is one port of an event, resolved: what the event says of it, and what a
// fabric (a saved sweep or a sweep now) or the log's own lines add. What nothing says
// stays unknown: a LID is never turned into a name by guessing.
type End struct {
	Port // as the log says it, with what the fabric and the log's names add
	// From says where the name came from: "fabric", "log", or "" (not resolved).
	From string
	// ID is the port in the fabric, when found there.
	ID   *check.PortID
	port *fabric.Port // the port in the fabric, nil when not found there
}

// Label names the port for people: "HcaB"[1] when its node is known (as
// infiniband-diags and fabric.Label write it), else its GUID, else "LID n".
func (e End) Label() string {
	switch {
	case e.NodeDesc != "" && e.Num >= 0:
		return fmt.Sprintf("%q[%d]", e.NodeDesc, e.Num)
	case e.NodeDesc != "":
		return fmt.Sprintf("%q", e.NodeDesc)
	case e.GUID != 0:
		return e.GUID.String()
	case e.NodeGUID != 0 && e.Num >= 0:
		return fmt.Sprintf("%s[%d]", e.NodeGUID, e.Num)
	case e.NodeGUID != 0:
		return e.NodeGUID.String()
	case multicastLID(e.LID):
		return fmt.Sprintf("multicast LID 0x%04x", e.LID)
	case e.LID != 0:
		return fmt.Sprintf("LID %d", e.LID)
	}
	return "an unknown port"
}

// LongLabel is Label with the LID and GUID that are known beside the name.
func (e End) LongLabel() string {
	l := e.Label()
	var extra []string
	if e.LID != 0 && l != fmt.Sprintf("LID %d", e.LID) && !multicastLID(e.LID) {
		extra = append(extra, fmt.Sprintf("LID %d", e.LID))
	}
	if e.GUID != 0 && l != e.GUID.String() {
		extra = append(extra, e.GUID.String())
	}
	if len(extra) == 0 {
		return l
	}
	return l + " (" + strings.Join(extra, ", ") + ")"
}

// Resolver finds ports by LID and GUID in a fabric and in the log's own lines.
type Resolver struct {
	Fabric *fabric.Fabric
	Names  *Names
	byLID  map[uint16]check.PortID
	byPort map[check.GUID]check.PortID
}

// NewResolver indexes f (nil: none) and the log's names.
func NewResolver(f *fabric.Fabric, names *Names) *Resolver {
	r := &Resolver{Fabric: f, Names: names}
	if f == nil {
		return r
	}
	r.byLID = map[uint16]check.PortID{}
	r.byPort = map[check.GUID]check.PortID{}
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if !n.IsEndPort(p) {
				continue
			}
			id := check.PortID{Node: n.GUID, Port: p.Num}
			if p.GUID != 0 {
				r.byPort[p.GUID] = id
			}
			if p.LID == 0 {
				continue
			}
			// An end port answers to 2^LMC LIDs from its base LID (IBA 7.11.1).
			for i := 0; i < 1<<min(p.LMC, 7); i++ {
				if l := int(p.LID) + i; l < 0xc000 {
					r.byLID[uint16(l)] = id
				}
			}
		}
	}
	return r
}

// Resolve fills in p: by its GUID, else by its LID, in the fabric first (a sweep
// names every port) and then in the log. notes receives where the two disagree.
func (r *Resolver) Resolve(p Port, notes *[]string) End {
	e := End{Port: p}
	if e.NodeDesc != "" || e.GUID != 0 || e.NodeGUID != 0 {
		e.From = "log"
	}
	// The log's own LID -> GUID (a trap report names its issuer by both).
	if e.GUID == 0 && e.NodeGUID == 0 && e.LID != 0 && r.Names != nil {
		if g, ok := r.Names.guidByLID[e.LID]; ok {
			e.GUID, e.From = g, "log"
		}
	}
	if r.Fabric != nil {
		var id check.PortID
		var ok bool
		switch {
		case e.GUID != 0:
			id, ok = r.byPort[e.GUID]
		case e.NodeGUID != 0 && e.Num >= 0:
			id, ok = check.PortID{Node: e.NodeGUID, Port: e.Num}, r.Fabric.Port(check.PortID{Node: e.NodeGUID, Port: e.Num}) != nil
		}
		if !ok && e.GUID == 0 && e.LID != 0 {
			id, ok = r.byLID[e.LID]
		}
		if ok {
			n, fp := r.Fabric.Node(id.Node), r.Fabric.Port(id)
			if e.LID != 0 && fp.LID != 0 && !check.LIDRangeHolds(fp.LID, min(fp.LMC, 7), e.LID) {
				*notes = append(*notes, fmt.Sprintf("the log names LID %d for %s, which has LID %d in %s: LIDs were reassigned since, the name is by GUID", e.LID, r.Fabric.Label(id), fp.LID, cmp.Or(r.Fabric.Source, "the fabric")))
			}
			e.ID = &id
			e.NodeGUID = n.GUID
			if fp.GUID != 0 {
				e.GUID = fp.GUID
			}
			if e.Num < 0 || e.NodeDesc == "" {
				e.Num = id.Port
			}
			if n.Description != "" {
				e.NodeDesc = n.Description
			}
			e.LID = cmp.Or(e.LID, fp.LID)
			e.port = fp
			e.From = "fabric"
			return e
		}
	}
	if r.Names != nil && e.GUID != 0 {
		if lp, ok := r.Names.byGUID[e.GUID]; ok {
			e.NodeDesc = cmp.Or(e.NodeDesc, lp.NodeDesc)
			if e.Num < 0 {
				e.Num = lp.Num
			}
			e.From = "log"
		}
	}
	return e
}
