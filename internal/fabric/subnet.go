package fabric

import (
	"fmt"

	"github.com/ibkey/ibkey/internal/check"
)

// Subnet boundaries.
//
// A sweep stops where the subnet does (a CA forwards no SMP between its ports), but it
// reads the PortInfo of every port of the CAs it reaches: a CA's second port may be
// cabled back to back to another CA on a link no Subnet Manager runs on (its ports stay
// INIT with LID 0), or belong to a subnet another SM manages (another master SM LID,
// another GID prefix). Such ports have no partition configuration of this subnet's SM
// to check, so the audit lists them as not audited instead of reporting them as if they
// belonged to the subnet. A saved fabric file may hold nodes past such a port.
//
// The subnet is the local port's: its master SM LID (PortInfo MasterSMLID) and GID
// prefix (PortInfo GIDPrefix, IBA 14.2.5.6). An end port (a CA or router port, a
// switch's port 0) is
//   - outside, another subnet: its SM LID or its GID prefix differs from the local
//     port's (both known and non-zero);
//   - outside, not managed: its LID or its SM LID is 0 while its link is up (INIT or
//     ARMED), so no SM has configured it (the SM assigns both, IBA 14.4), while the
//     local port has an SM. When the local port has none either (no SM has run), the
//     whole sweep is one unmanaged fabric and every port is judged as part of it;
//   - in the subnet otherwise. An INIT or ARMED port with a LID and this SM LID is in
//     the subnet: its SM knows it and has not (yet) made it ACTIVE (port-not-active).
//
// A switch's external port is in the subnet when its switch's port 0 is. A link is a
// boundary when one end is in the subnet and the other is not.

// Scope says whether a port belongs to the swept subnet.
type Scope uint8

const (
	// ScopeSubnet: the port is in the subnet the sweep started in.
	ScopeSubnet Scope = iota
	// ScopeUnmanaged: no Subnet Manager has configured the port (LID or SM LID 0).
	ScopeUnmanaged
	// ScopeOtherSubnet: another SM manages the port (another SM LID or GID prefix).
	ScopeOtherSubnet
	// ScopeDown: the port has no link; it belongs to no subnet now.
	ScopeDown
	// ScopeUnknown: the port's PortInfo was not read.
	ScopeUnknown
)

var scopeNames = [...]string{"subnet", "unmanaged", "other-subnet", "down", "unknown"}

func (s Scope) String() string {
	if int(s) < len(scopeNames) {
		return scopeNames[s]
	}
	return fmt.Sprintf("Scope(%d)", uint8(s))
}

// Subnet returns the local port's subnet; ok is false when the local port is not in
// the fabric or was not read (then every port's scope is judged on its own).
func (f *Fabric) Subnet() (check.SubnetID, bool) {
	p := f.Port(f.Local)
	if p == nil || p.Error != "" || p.State == "" {
		return check.SubnetID{}, false
	}
	return check.SubnetID{SMLID: p.SMLID, GIDPrefix: p.GIDPrefix}, true
}

// PortScope says whether the port belongs to the swept subnet, and why not.
func (f *Fabric) PortScope(id check.PortID) (Scope, string) {
	n := f.Node(id.Node)
	var p *Port
	if n != nil {
		p = n.Port(id.Port)
	}
	switch {
	case p == nil:
		return ScopeUnknown, "not in the sweep"
	case p.Error != "" || p.State == "":
		return ScopeUnknown, "its PortInfo was not read"
	case p.State == check.StateDown:
		return ScopeDown, "the port is DOWN"
	case !n.IsEndPort(p):
		// An external switch port: the switch's scope, and its own link.
		if s, why := f.PortScope(check.PortID{Node: n.GUID, Port: 0}); s != ScopeSubnet {
			return s, "its switch: " + why
		}
		return ScopeSubnet, ""
	}
	sub, known := f.Subnet()
	if known && sub.SMLID != 0 && p.SMLID != 0 && p.SMLID != sub.SMLID {
		return ScopeOtherSubnet, fmt.Sprintf("its master SM is LID %d, the local port's is LID %d: another Subnet Manager manages it", p.SMLID, sub.SMLID)
	}
	if known && sub.GIDPrefix != 0 && p.GIDPrefix != 0 && p.GIDPrefix != sub.GIDPrefix {
		return ScopeOtherSubnet, fmt.Sprintf("its GID prefix is %s, the local port's %s: another subnet", check.FormatGIDPrefix(p.GIDPrefix), check.FormatGIDPrefix(sub.GIDPrefix))
	}
	if (p.LID == 0 || p.SMLID == 0) && known && sub.SMLID != 0 {
		return ScopeUnmanaged, fmt.Sprintf("it is %s with LID %d and SM LID %d: no Subnet Manager has configured it", p.State, p.LID, p.SMLID)
	}
	return ScopeSubnet, ""
}

// OutsidePort is a port the audit did not audit because it is not in the subnet.
type OutsidePort struct {
	check.FindingPort
	Scope  Scope
	Reason string
}

// OutsidePorts lists the ports with a link (not DOWN) that are not in the swept
// subnet, in node GUID and port order: subnet boundaries and what lies past them.
func (f *Fabric) OutsidePorts() []OutsidePort {
	var out []OutsidePort
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			id := check.PortID{Node: n.GUID, Port: p.Num}
			s, why := f.PortScope(id)
			if s == ScopeUnmanaged || s == ScopeOtherSubnet {
				out = append(out, OutsidePort{FindingPort: f.FindingPort(id), Scope: s, Reason: why})
			}
		}
	}
	return out
}

// InSubnet reports whether a port is audited: in the subnet, or not known to be
// outside it (a port whose PortInfo was not read is reported as not read instead).
func (f *Fabric) InSubnet(id check.PortID) bool {
	s, _ := f.PortScope(id)
	return s != ScopeUnmanaged && s != ScopeOtherSubnet
}
