package check

import (
	"cmp"
	"fmt"
	"strconv"
)

// GUID is a node or port GUID (also used for a GID prefix, the first 64 bits of a
// GID): the one GUID type above internal/ibverbs. It prints and encodes as 0x%016x,
// ibstat's form; ParseGUID reads what users write.
type GUID uint64

func (g GUID) String() string {
	// 0x%016x without fmt: a sweep's listing prints thousands.
	var b [18]byte
	b[0], b[1] = '0', 'x'
	for i := len(b) - 1; i >= 2; i-- {
		b[i] = "0123456789abcdef"[g&0xf]
		g >>= 4
	}
	return string(b[:])
}

// MarshalText encodes the GUID as 0x%016x.
func (g GUID) MarshalText() ([]byte, error) { return []byte(g.String()), nil }

// UnmarshalText reads 0x followed by 1 to 16 hex digits.
func (g *GUID) UnmarshalText(b []byte) error {
	s := string(b)
	if len(s) < 3 || len(s) > 18 || (s[:2] != "0x" && s[:2] != "0X") || !allHex(s[2:]) {
		return fmt.Errorf("bad GUID %q: want 0x and 1-16 hex digits, e.g. 0x0002c90300000204", s)
	}
	v, _ := strconv.ParseUint(s[2:], 16, 64) // 1-16 hex digits: it fits
	*g = GUID(v)
	return nil
}

// NodeType is NodeInfo's NodeType (IBA 14.2.5.3) as ibkey prints and the fabric JSON
// writes it.
type NodeType string

const (
	NodeCA     NodeType = "ca"
	NodeSwitch NodeType = "switch"
	NodeRouter NodeType = "router"
)

// NodeTypeOf returns the type NodeInfo's NodeType number names (IBA 14.2.5.3: 1 CA,
// 2 switch, 3 router); ok is false for any other number.
func NodeTypeOf(num uint8) (t NodeType, ok bool) {
	switch num {
	case 1:
		return NodeCA, true
	case 2:
		return NodeSwitch, true
	case 3:
		return NodeRouter, true
	}
	return "", false
}

// Word names the type in a sentence: "CA", "switch", "router", or "node" when the
// type is not known.
func (t NodeType) Word() string {
	switch t {
	case NodeCA:
		return "CA"
	case NodeSwitch, NodeRouter:
		return string(t)
	}
	return "node"
}

// Port states as sysfs and `ibkey devices` print them (PortInfo PortState).
const (
	StateDown   = "DOWN"
	StateInit   = "INIT"
	StateArmed  = "ARMED"
	StateActive = "ACTIVE"
)

// PortID names a port in a fabric: a node GUID and a port number (0 is a switch's
// port 0).
type PortID struct {
	Node GUID `json:"node_guid"`
	Port int  `json:"port"`
}

// LessPortID orders ports by node GUID, then port number.
func LessPortID(a, b PortID) bool {
	return cmp.Or(cmp.Compare(a.Node, b.Node), cmp.Compare(a.Port, b.Port)) < 0
}

// Enforcement is PortInfo's partition enforcement and raw packet filter bits
// (IBA 14.2.5.6: PartitionEnforcementInbound/Outbound, FilterRawInbound/Outbound).
type Enforcement struct {
	Inbound           bool `json:"inbound"`
	Outbound          bool `json:"outbound"`
	FilterRawInbound  bool `json:"filter_raw_inbound"`
	FilterRawOutbound bool `json:"filter_raw_outbound"`
}

// SubnetID is what tells subnets apart: the master SM's LID and the GID prefix, as the
// local port reports them.
type SubnetID struct {
	SMLID     uint16
	GIDPrefix GUID
}

// FormatGIDPrefix prints a GID prefix as the first half of a GID: fe80:0000:0000:0000.
func FormatGIDPrefix(g GUID) string {
	v := uint64(g)
	return fmt.Sprintf("%04x:%04x:%04x:%04x", v>>48, v>>32&0xffff, v>>16&0xffff, v&0xffff)
}

// LIDRangeHolds reports whether lid is one of a port's LIDs: a port with base LID
// base and LID Mask Control lmc answers the 2^lmc LIDs from base (IBA 14.2.5.6
// PortInfo:LID and LMC); base 0 is no LID (none assigned yet).
func LIDRangeHolds(base uint16, lmc uint8, lid uint16) bool {
	return base != 0 && lid >= base && int(lid) < int(base)+1<<lmc
}
