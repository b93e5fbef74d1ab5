package smlog

import "github.com/ibkey/ibkey/internal/check"

// Names is what the log itself says about ports: the port GUID behind a LID (a trap's
// report names its issuer by both, osm_inform.c) and the node description and port
// number of a GUID (the SA's refusals, osm_sa_path_record.c). It is how an event's
// ends get names when no sweep or fabric file is given; what the log does not say
// stays unknown.
type Names struct {
	guidByLID map[uint16]check.GUID
	byGUID    map[check.GUID]Port
}

// NewNames returns an empty table.
func NewNames() *Names {
	return &Names{guidByLID: map[uint16]check.GUID{}, byGUID: map[check.GUID]Port{}}
}

// learn records what p says of its GUID.
func (n *Names) learn(p Port) {
	if p.GUID == 0 {
		return
	}
	old, ok := n.byGUID[p.GUID]
	if !ok {
		old.Num = -1
	}
	if p.NodeDesc != "" {
		old.NodeDesc = p.NodeDesc
	}
	if p.Num >= 0 {
		old.Num = p.Num
	}
	old.GUID = p.GUID
	n.byGUID[p.GUID] = old
	if p.LID != 0 {
		n.guidByLID[p.LID] = p.GUID
	}
}
