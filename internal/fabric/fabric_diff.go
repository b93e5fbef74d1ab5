package fabric

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/ibkey/ibkey/internal/check"
)

// Change kinds of Diff, stable identifiers for scripts: the Rule of each finding.
const (
	ChangeNodeAdded   = "node-added"
	ChangeNodeRemoved = "node-removed"
	ChangeNode        = "node-changed" // type, description, port count
	ChangeLinkAdded   = "link-added"
	ChangeLinkRemoved = "link-removed"
	ChangePort        = "port-changed" // state, physical state, LID, LMC, port GUID, GID prefix, enforcement
	ChangePKeyAdded   = "pkey-added"
	ChangePKeyRemoved = "pkey-removed"
	ChangePKeyMoved   = "pkey-moved" // same value, other index
	// ChangePKeyMembership: a key replaced by the same partition's other membership
	// (0x0001 <-> 0x8001): one change, as watch pkeys reports it.
	ChangePKeyMembership = "pkey-membership"
	ChangeTableRead      = "table-readable" // read in one sweep, not the other
	ChangeTableResized   = "table-resized"
)

// DiffSeverity is the severity of every finding of Diff: a difference is reported,
// not judged (whether a change is wanted is for the reader to say).
const DiffSeverity = check.SeverityWarning

// Diff lists what changed from sweep a to sweep b: nodes, links, port attributes and
// P_Key table entries, one finding per change (Rule is the Change kind; Field, Before
// and After the value that changed, when one did). Nodes are matched by node GUID, ports by number. Counters (P_Key
// violations), LIDs of the SM and the sweep's own metadata are not compared.
//
// What one sweep did not read is not a change: in a sweep that missed links
// (MissedLinks) a node it lacks was not read, not gone (or new in the other), and a
// link it lacks is gone only when an end of it there is DOWN or cabled elsewhere.
func Diff(a, b *Fabric) []check.Finding {
	var out []check.Finding
	aMissed, bMissed := a.MissedLinks(), b.MissedLinks()
	name := diffLabels(a, b)
	label := func(id check.PortID) (check.FindingPort, string) {
		f := b
		if f.Node(id.Node) == nil {
			f = a
		}
		return f.FindingPort(id), name(f, id)
	}
	add := func(kind, field, before, after, msg string, ids ...check.PortID) {
		c := check.Finding{Severity: DiffSeverity, Rule: kind, Field: field, Before: before, After: after, Message: msg}
		for _, id := range ids {
			fp, _ := label(id)
			c.Ports = append(c.Ports, fp)
		}
		out = append(out, c)
	}
	for _, na := range a.Nodes {
		nb := b.Node(na.GUID)
		if nb == nil && bMissed {
			continue // not read in b
		}
		if nb == nil {
			add(ChangeNodeRemoved, "", "", "", fmt.Sprintf("%s %s (%s) is gone", na.Type, quoteDesc(na), na.GUID), check.PortID{Node: na.GUID, Port: 0})
			continue
		}
		id0 := check.PortID{Node: na.GUID, Port: 0}
		for _, c := range []struct{ field, before, after string }{
			{"type", string(na.Type), string(nb.Type)},
			{"node_desc", na.Description, nb.Description}, // the fabric file's member names
			{"num_ports", fmt.Sprint(na.NumPorts), fmt.Sprint(nb.NumPorts)},
		} {
			// A NodeDescription not read is not an empty one (NotRead names it).
			if c.field == "node_desc" && (na.readFailed("NodeDescription") || nb.readFailed("NodeDescription")) {
				continue
			}
			if c.before != c.after {
				add(ChangeNode, c.field, c.before, c.after, fmt.Sprintf("node %s: %s %q -> %q", na.GUID, c.field, c.before, c.after), id0)
			}
		}
		for _, pa := range na.Ports {
			pb := nb.Port(pa.Num)
			if pb == nil {
				continue
			}
			out = append(out, diffPort(b, na, pa, pb, name(b, check.PortID{Node: na.GUID, Port: pa.Num}))...)
		}
	}
	for _, nb := range b.Nodes {
		if a.Node(nb.GUID) == nil && !aMissed {
			add(ChangeNodeAdded, "", "", "", fmt.Sprintf("new %s %s (%s)", nb.Type, quoteDesc(nb), nb.GUID), check.PortID{Node: nb.GUID, Port: 0})
		}
	}
	la, lb := map[Link]bool{}, map[Link]bool{}
	for _, l := range a.Links() {
		la[l] = true
	}
	for _, l := range b.Links() {
		lb[l] = true
		if !la[l] && linkGone(a, l, aMissed) {
			_, x := label(l.A)
			_, y := label(l.B)
			add(ChangeLinkAdded, "", "", "", fmt.Sprintf("new link %s - %s", x, y), l.A, l.B)
		}
	}
	for _, l := range a.Links() {
		if !lb[l] && linkGone(b, l, bMissed) {
			_, x := label(l.A)
			_, y := label(l.B)
			add(ChangeLinkRemoved, "", "", "", fmt.Sprintf("link %s - %s is gone", x, y), l.A, l.B)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		pi, pj := out[i].Ports[0].PortID, out[j].Ports[0].PortID
		if pi != pj {
			return check.LessPortID(pi, pj)
		}
		return out[i].Rule < out[j].Rule
	})
	return out
}

// linkGone reports whether link l, which f does not hold, is known not to be there:
// always when f missed no links; otherwise only when an end of it in f is DOWN or
// cabled to another port.
func linkGone(f *Fabric, l Link, missed bool) bool {
	if !missed {
		return true
	}
	return slices.ContainsFunc([]check.PortID{l.A, l.B}, func(id check.PortID) bool {
		p := f.Port(id)
		return p != nil && (p.State == check.StateDown || p.Peer != nil)
	})
}

// diffLabels names ports as Label does, with the node GUID added where one
// NodeDescription is held by more than one node in a and b together: a node replaced
// by another of the same name, or cards left with the vendor's default description.
// Two changes naming different nodes alike would otherwise read as one node's.
func diffLabels(a, b *Fabric) func(*Fabric, check.PortID) string {
	guids := map[string]map[check.GUID]bool{}
	for _, f := range []*Fabric{a, b} {
		for _, n := range f.Nodes {
			if guids[n.Description] == nil {
				guids[n.Description] = map[check.GUID]bool{}
			}
			guids[n.Description][n.GUID] = true
		}
	}
	return func(f *Fabric, id check.PortID) string {
		n := f.Node(id.Node)
		if n == nil || n.Description == "" || len(guids[n.Description]) < 2 {
			return f.Label(id)
		}
		return fmt.Sprintf("%s (node %s)", f.Label(id), id.Node)
	}
}

func diffPort(b *Fabric, n *Node, pa, pb *Port, name string) []check.Finding {
	var out []check.Finding
	id := check.PortID{Node: n.GUID, Port: pa.Num}
	fp := b.FindingPort(id)
	// keys are the P_Keys a table finding is about (JSON "pkeys"): a script learns
	// which key moved without parsing the message.
	add := func(kind, field, before, after, msg string, keys ...check.PKey) {
		out = append(out, check.Finding{Severity: DiffSeverity, Rule: kind, Ports: []check.FindingPort{fp}, PKeys: keys, Field: field, Before: before, After: after, Message: msg})
	}
	enf := func(e *check.Enforcement) string {
		if e == nil {
			return ""
		}
		var on []string
		for i, b := range []bool{e.Inbound, e.Outbound, e.FilterRawInbound, e.FilterRawOutbound} {
			if b {
				on = append(on, [...]string{"inbound", "outbound", "filter-raw-inbound", "filter-raw-outbound"}[i])
			}
		}
		return cmp.Or(strings.Join(on, ","), "off")
	}
	// A GUID or GID prefix of 0 is none (not read): no value, not compared. The GID
	// prefix (0: not read, or a file from before it was kept) is the top half of each
	// of the port's GIDs (IBA 4.1.1, 14.2.5.6 PortInfo:GIDPrefix): the SM changing it
	// (OpenSM's subnet_prefix) readdresses every GID-routed peer.
	set := func(g check.GUID, format func(check.GUID) string) string {
		if g == 0 {
			return ""
		}
		return format(g)
	}
	// A PortInfo not read (NotRead names it) is not LID 0 or a state: its fields are
	// not compared.
	portInfo := pa.Error == "" && pb.Error == ""
	for _, c := range []struct{ field, before, after string }{
		{"state", pa.State, pb.State},
		{"phys_state", pa.PhysState, pb.PhysState},
		{"lid", fmt.Sprint(pa.LID), fmt.Sprint(pb.LID)},
		{"lmc", fmt.Sprint(pa.LMC), fmt.Sprint(pb.LMC)},
		{"port_guid", set(pa.GUID, check.GUID.String), set(pb.GUID, check.GUID.String)},
		{"gid_prefix", set(pa.GIDPrefix, check.FormatGIDPrefix), set(pb.GIDPrefix, check.FormatGIDPrefix)},
		{"enforcement", enf(pa.Enforcement), enf(pb.Enforcement)},
	} {
		if c.before != c.after && c.before != "" && c.after != "" && (portInfo || c.field == "port_guid") {
			add(ChangePort, c.field, c.before, c.after, fmt.Sprintf("%s: %s %s -> %s", name, c.field, c.before, c.after))
		}
	}
	switch {
	case pa.PKeys == nil && pb.PKeys == nil:
		return out
	case pa.PKeys == nil || pb.PKeys == nil:
		before, after := "read", "not read"
		if pa.PKeys == nil {
			before, after = after, before
		}
		add(ChangeTableRead, "pkeys", before, after, fmt.Sprintf("%s: P_Key table %s before, %s now; its entries are not compared", name, before, after))
		return out
	}
	if len(pa.PKeys) != len(pb.PKeys) {
		add(ChangeTableResized, "table_size", fmt.Sprint(len(pa.PKeys)), fmt.Sprint(len(pb.PKeys)),
			fmt.Sprintf("%s: P_Key table size %d -> %d", name, len(pa.PKeys), len(pb.PKeys)))
	}
	idx := func(t []check.PKey) map[check.PKey][]int {
		m := map[check.PKey][]int{}
		for i, k := range t {
			if k.Valid() {
				m[k] = append(m[k], i)
			}
		}
		return m
	}
	ia, ib := idx(pa.PKeys), idx(pb.PKeys)
	values := slices.Collect(maps.Keys(ia))
	for k := range ib {
		if _, ok := ia[k]; !ok {
			values = append(values, k)
		}
	}
	slices.SortFunc(values, func(a, b check.PKey) int {
		return cmp.Or(cmp.Compare(a.Partition(), b.Partition()), cmp.Compare(a, b))
	})
	// A key gone and the same partition's other membership new is one change: the
	// port's membership changed (full <-> limited), not a partition left and another
	// joined.
	paired := map[check.PKey]bool{}
	for _, k := range values {
		other := k ^ check.MembershipBit
		if len(ia[k]) > 0 && len(ib[k]) == 0 && len(ib[other]) > 0 && len(ia[other]) == 0 && !paired[k] && !paired[other] {
			paired[k], paired[other] = true, true
			where := "at index " + ints(ib[other])
			if ints(ia[k]) != ints(ib[other]) {
				where = fmt.Sprintf("at index %s (was %s at %s)", ints(ib[other]), k, ints(ia[k]))
			}
			add(ChangePKeyMembership, "pkeys", k.String(), other.String(), fmt.Sprintf("%s: partition %s: %s -> %s member (%s, %s)",
				name, k.Partition(), k.Membership(), other.Membership(), other, where), k, other)
		}
	}
	for _, k := range values {
		if paired[k] {
			continue
		}
		xa, xb := ia[k], ib[k]
		switch {
		case len(xb) == 0:
			add(ChangePKeyRemoved, "pkeys", k.String(), "", fmt.Sprintf("%s: %s (%s member of %s) removed from index %s", name, k, k.Membership(), k.Partition(), ints(xa)), k)
		case len(xa) == 0:
			add(ChangePKeyAdded, "pkeys", "", k.String(), fmt.Sprintf("%s: %s (%s member of %s) added at index %s", name, k, k.Membership(), k.Partition(), ints(xb)), k)
		case ints(xa) != ints(xb):
			add(ChangePKeyMoved, "pkeys", ints(xa), ints(xb), fmt.Sprintf("%s: %s moved from index %s to %s (QPs holding the old index now use another entry)", name, k, ints(xa), ints(xb)), k)
		}
	}
	return out
}

func ints(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}
