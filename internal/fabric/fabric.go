package fabric

import (
	"cmp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/textsafe"
)

// A Fabric is one sweep of a subnet: every node that answered, its ports with their
// state, LIDs, links, partition enforcement bits and P_Key tables, and what could not be
// read and why. It is built by internal/query (a directed-route sweep) or decoded from a
// saved file (DecodeFabric), and read by the rules in this package: AuditFabric,
// Members, Diff.
//
// A Fabric is a plain value: nothing here talks to the fabric.
type Fabric struct {
	// Source says where the sweep ran: "ibsim sim at HcaA", "umad mlx5_0/1".
	Source string
	// SweptAt is when the sweep started; Duration how long it took.
	SweptAt  time.Time
	Duration time.Duration
	// Local is the port the sweep started from (its node answers the empty
	// directed route).
	Local check.PortID
	// Nodes, sorted by node GUID.
	Nodes []*Node
	// Unreachable are links whose far end did not answer NodeInfo: the node behind
	// them is missing from Nodes.
	Unreachable []Unreachable
	// Incomplete is why the sweep stopped before the end (its overall timeout), or "".
	Incomplete string

	byGUID map[check.GUID]*Node
}

// Node is one node of the fabric (NodeInfo, NodeDescription, SwitchInfo).
type Node struct {
	GUID            check.GUID     `json:"node_guid"`
	Type            check.NodeType `json:"type"`
	Description     string         `json:"node_desc"`
	SystemImageGUID check.GUID     `json:"system_image_guid"`
	VendorID        uint32         `json:"vendor_id"`
	DeviceID        uint16         `json:"device_id"`
	NumPorts        int            `json:"num_ports"`
	// PartitionCap is NodeInfo PartitionCap: the table length of CA and router ports
	// and of a switch's port 0.
	PartitionCap int `json:"partition_cap"`
	// PartitionEnforcementCap is SwitchInfo's: the table length of a switch's external
	// ports (0 for CAs).
	PartitionEnforcementCap int `json:"partition_enforcement_cap,omitempty"`
	// Path is the directed route the node was read through, "0,1,3".
	Path string `json:"dr_path"`
	// Ports in port order; a switch's management port 0 comes first. A CA port that
	// no directed route arrived on has no GUID and no table.
	Ports []*Port `json:"ports"`
	// Errors are reads of the node as a whole that failed (NodeDescription,
	// SwitchInfo), each "what: why".
	Errors []string `json:"errors,omitempty"`
}

// Port is one port of a node (PortInfo, P_KeyTable).
type Port struct {
	Num   int        `json:"port"`
	GUID  check.GUID `json:"port_guid"`
	LID   uint16     `json:"lid"`
	LMC   uint8      `json:"lmc"`
	SMLID uint16     `json:"sm_lid"`
	// GIDPrefix is PortInfo GIDPrefix (end ports; 0 when not read): with SMLID, what
	// tells subnets apart (subnet.go).
	GIDPrefix check.GUID `json:"gid_prefix,omitempty"`
	State     string     `json:"state"`      // DOWN, INIT, ARMED, ACTIVE
	PhysState string     `json:"phys_state"` // LinkUp, Polling, Disabled, ...
	// Enforcement is PortInfo's partition enforcement bits; set on switch external
	// ports, where they mean something.
	Enforcement    *check.Enforcement `json:"enforcement,omitempty"`
	PKeyViolations uint16             `json:"pkey_violations"`
	// Peer is the port at the other end of the cable, nil when there is none or it
	// did not answer (then PeerError says why).
	Peer      *check.PortID `json:"peer"`
	PeerError string        `json:"peer_error,omitempty"`
	// TableSize is the P_Key table length; PKeys the table as read (every entry,
	// invalid ones included, index = position), nil when it was not read and
	// PKeysError says why.
	TableSize  int    `json:"table_size"`
	PKeysError string `json:"pkeys_error,omitempty"`
	// Error is why PortInfo could not be read.
	Error string    `json:"error,omitempty"`
	PKeys PKeyTable `json:"pkeys"` // last in the fabric file
}

// Unreachable is a link whose far end did not answer.
type Unreachable struct {
	// From is the port the probe left through.
	From check.PortID `json:"from"`
	// Path is the directed route probed, "0,1,3".
	Path  string `json:"dr_path"`
	Error string `json:"error"`
}

// Link is one cable, A < B by (node GUID, port).
type Link struct {
	A, B check.PortID
}

// Normalize sorts nodes by GUID and ports by number and rebuilds the index. Builders
// (the sweep, DecodeFabric, the demo fabric) call it once when they are done, before
// the fabric is shared; lookups never call it, so they only read.
func (f *Fabric) Normalize() {
	sort.Slice(f.Nodes, func(i, j int) bool { return f.Nodes[i].GUID < f.Nodes[j].GUID })
	f.byGUID = make(map[check.GUID]*Node, len(f.Nodes))
	for _, n := range f.Nodes {
		sort.Slice(n.Ports, func(i, j int) bool { return n.Ports[i].Num < n.Ports[j].Num })
		f.byGUID[n.GUID] = n
	}
	sort.Slice(f.Unreachable, func(i, j int) bool { return check.LessPortID(f.Unreachable[i].From, f.Unreachable[j].From) })
}

// Node returns the node with this GUID, or nil. It only reads: on a fabric that was
// never normalized (no index) it looks through the nodes in their order.
func (f *Fabric) Node(g check.GUID) *Node {
	if f.byGUID != nil {
		return f.byGUID[g]
	}
	for _, n := range f.Nodes {
		if n.GUID == g {
			return n
		}
	}
	return nil
}

// Port returns the port, or nil.
func (f *Fabric) Port(id check.PortID) *Port {
	if n := f.Node(id.Node); n != nil {
		return n.Port(id.Port)
	}
	return nil
}

// Port returns port num of the node, or nil.
func (n *Node) Port(num int) *Port {
	for _, p := range n.Ports {
		if p.Num == num {
			return p
		}
	}
	return nil
}

// Links lists every cable once, sorted.
func (f *Fabric) Links() []Link {
	var out []Link
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p.Peer == nil {
				continue
			}
			a := check.PortID{Node: n.GUID, Port: p.Num}
			if check.LessPortID(a, *p.Peer) {
				out = append(out, Link{a, *p.Peer})
			}
		}
	}
	// A port has one peer: no two links share their A.
	sort.Slice(out, func(i, j int) bool { return check.LessPortID(out[i].A, out[j].A) })
	return out
}

// FindNodes returns the nodes whose description is s, or whose node GUID or one of
// whose port GUIDs is s (0x optional), for endpoints given by name or GUID.
func (f *Fabric) FindNodes(s string) []*Node {
	var out []*Node
	g, gErr := check.ParseGUID(s)
	for _, n := range f.Nodes {
		// The name as shown (escaped) or as typed (textsafe.String escaped it).
		match := n.Description == s || textsafe.Unescape(n.Description) == s
		if gErr == nil && !match {
			match = n.GUID == g
			for _, p := range n.Ports {
				match = match || (p.GUID != 0 && p.GUID == g)
			}
		}
		if match {
			out = append(out, n)
		}
	}
	return out
}

// Name names the node for people: its description, or its GUID when it has none.
func (n *Node) Name() string { return cmp.Or(n.Description, n.GUID.String()) }

// IsEndPort reports whether the port is an end port: a CA or router port, or a
// switch's port 0. End ports are what a Subnet Manager's partition configuration
// names; a switch's external ports only mirror the end port they face.
func (n *Node) IsEndPort(p *Port) bool { return n.Type != check.NodeSwitch || p.Num == 0 }

// NoEnforcementCap reports whether n is a switch whose SwitchInfo was read and says
// PartitionEnforcementCap 0: its external ports have no partition enforcement table
// (IBA 14.2.5.4), so they filter no partition. OpenSM neither reads their tables
// ("Bail out if this is a switch with no partition enforcement capability",
// osm_port_info_rcv.c) nor programs them or their enforcement bits
// (pkey_mgr_update_peer_port returns at once, osm_pkey_mgr.c, OpenSM 3.3.23).
// A switch port with a table contradicts a cap of 0 (a fabric file written by hand or
// by another tool, which may leave the cap out): the switch is then judged.
func (n *Node) NoEnforcementCap() bool {
	return n.Type == check.NodeSwitch && n.PartitionEnforcementCap == 0 && !n.readFailed("SwitchInfo") &&
		!slices.ContainsFunc(n.Ports, func(p *Port) bool { return p.Num > 0 && p.TableSize > 0 })
}

// readFailed reports whether the node's read of attribute what failed (Errors holds
// "what: why", as the sweep writes it).
func (n *Node) readFailed(what string) bool {
	return slices.ContainsFunc(n.Errors, func(e string) bool { return strings.HasPrefix(e, what+":") })
}

// Listed reports whether a listing of the fabric's ports (fabric discover, fabric
// pkeys, the exporter's per-port series) shows p: every end port, and a switch's
// external port with a cable, or one that may have a cable the sweep could not see
// (its far end did not answer, or its PortInfo was not read). Only a switch port known
// to have no cable is left out.
func (n *Node) Listed(p *Port) bool {
	return n.IsEndPort(p) || p.Peer != nil || p.PeerError != "" || p.Error != ""
}

// EndPorts returns the end ports whose port GUID is g, in node order: one on a sane
// fabric, several where a misconfigured (or simulated) fabric repeats a port GUID.
func (f *Fabric) EndPorts(g check.GUID) []check.PortID {
	var out []check.PortID
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p.GUID == g && n.IsEndPort(p) {
				out = append(out, check.PortID{Node: n.GUID, Port: p.Num})
			}
		}
	}
	return out
}

// Label names a port for people: "HcaB"[1] as ibsim and infiniband-diags write it,
// with the node GUID when the node has no description.
func (f *Fabric) Label(id check.PortID) string {
	n := f.Node(id.Node)
	// Not fmt (%s[%d], %q[%d]): a sweep's listing labels every link.
	if n == nil || n.Description == "" {
		return id.Node.String() + "[" + strconv.Itoa(id.Port) + "]"
	}
	return strconv.Quote(n.Description) + "[" + strconv.Itoa(id.Port) + "]"
}

// Entries returns the port's valid entries with their indexes, for the can-talk rules.
func (p *Port) Entries() []check.TableEntry {
	var out []check.TableEntry
	for i, k := range p.PKeys {
		if k.Valid() {
			out = append(out, check.TableEntry{Index: i, PKey: k, Readable: true})
		}
	}
	return out
}

// memberships returns, per 15-bit key, whether the table holds a full and a limited
// entry.
func memberships(t []check.PKey) map[check.PartitionKey]membershipSet {
	m := map[check.PartitionKey]membershipSet{}
	for _, k := range t {
		if !k.Valid() {
			continue
		}
		s := m[k.Partition()]
		s.add(k)
		m[k.Partition()] = s
	}
	return m
}

type membershipSet struct{ full, limited bool }

func (s *membershipSet) add(k check.PKey) {
	if k.IsFull() {
		s.full = true
	} else {
		s.limited = true
	}
}

// membership is the membership a key is written with: full when the table holds a
// full entry.
func (s membershipSet) membership() check.Membership {
	if s.full {
		return check.Full
	}
	return check.Limited
}

func (s membershipSet) String() string {
	switch {
	case s.full && s.limited:
		return "both"
	case s.full:
		return "full"
	case s.limited:
		return "limited"
	}
	return "none"
}
