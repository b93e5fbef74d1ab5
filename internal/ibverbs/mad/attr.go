package mad

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/ibkey/ibkey/internal/textsafe"
)

// need reports a short attribute data area.
func need(attr string, data []byte, n int) error {
	if len(data) < n {
		return fmt.Errorf("mad: %s: %d bytes of data, need %d", attr, len(data), n)
	}
	return nil
}

// NodeType is NodeInfo's NodeType.
type NodeType uint8

// Node types (IBA 14.2.5.3).
const (
	NodeCA     NodeType = 1
	NodeSwitch NodeType = 2
	NodeRouter NodeType = 3
)

var nodeTypeNames = map[NodeType]string{NodeCA: "Channel Adapter", NodeSwitch: "Switch", NodeRouter: "Router"}

// String names the type as smpquery prints it.
func (t NodeType) String() string { return name(nodeTypeNames, t, "?(%d)") }

// NodeInfo is SMP attribute 0x0011 (IBA 14.2.5.3).
type NodeInfo struct {
	NodeType        NodeType // byte 2
	NumPorts        uint8    // byte 3
	SystemImageGUID uint64   // bytes 4-11
	NodeGUID        uint64   // bytes 12-19
	PortGUID        uint64   // bytes 20-27
	PartitionCap    uint16   // bytes 28-29: P_Key table length of CA ports and switch port 0
	DeviceID        uint16   // bytes 30-31
	LocalPortNum    uint8    // byte 36: the port the SMP arrived on
	VendorID        uint32   // bytes 37-39 (24 bits)
}

// ParseNodeInfo decodes NodeInfo from an SMP data area.
func ParseNodeInfo(d []byte) (NodeInfo, error) {
	if err := need("NodeInfo", d, 40); err != nil {
		return NodeInfo{}, err
	}
	be := binary.BigEndian
	return NodeInfo{
		NodeType:        NodeType(d[2]),
		NumPorts:        d[3],
		SystemImageGUID: be.Uint64(d[4:]),
		NodeGUID:        be.Uint64(d[12:]),
		PortGUID:        be.Uint64(d[20:]),
		PartitionCap:    be.Uint16(d[28:]),
		DeviceID:        be.Uint16(d[30:]),
		LocalPortNum:    d[36],
		VendorID:        uint32(d[37])<<16 | uint32(d[38])<<8 | uint32(d[39]),
	}, nil
}

// ParseNodeDescription decodes NodeDescription (attribute 0x0010, IBA 14.2.5.2): 64
// bytes of UTF-8, NUL-padded. Bytes after the first NUL are ignored. Any node on the
// subnet sets its own, so the text is returned terminal-safe (textsafe.String):
// controls, invalid UTF-8 and bidi overrides come back as visible escapes.
func ParseNodeDescription(d []byte) (string, error) {
	if err := need("NodeDescription", d, 64); err != nil {
		return "", err
	}
	s := d[:64]
	if i := bytes.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	return textsafe.String(string(s)), nil
}

// PortState is PortInfo's PortState (logical link state).
type PortState uint8

// Port states (IBA 14.2.5.6).
const (
	PortStateNoChange PortState = 0
	PortStateDown     PortState = 1
	PortStateInit     PortState = 2
	PortStateArmed    PortState = 3
	PortStateActive   PortState = 4
)

var portStateNames = map[PortState]string{PortStateNoChange: "NoChange", PortStateDown: "Down", PortStateInit: "Initialize",
	PortStateArmed: "Armed", PortStateActive: "Active"}

// String names the state as smpquery prints LinkState.
func (s PortState) String() string { return name(portStateNames, s, "?(%d)") }

// PhysState is PortInfo's PortPhysicalState.
type PhysState uint8

var physStateNames = map[PhysState]string{0: "NoChange", 1: "Sleep", 2: "Polling", 3: "Disabled",
	4: "PortConfigurationTraining", 5: "LinkUp", 6: "LinkErrorRecovery", 7: "PhyTest"}

// String names the state as smpquery prints PhysLinkState.
func (s PhysState) String() string { return name(physStateNames, s, "?(%d)") }

// CapExtendedSpeeds is PortInfo CapabilityMask.IsExtendedSpeedsSupported (bit 14, IBA
// 14.2.5.6): LinkSpeedExtActive (byte 62, high 4 bits) then names the speed.
const CapExtendedSpeeds = 1 << 14

// PortInfo is SMP attribute 0x0015 (IBA 14.2.5.6); the attribute modifier is
// the port number. Only the fields ibkey reads are decoded.
type PortInfo struct {
	GIDPrefix       uint64    // bytes 8-15
	LID             uint16    // bytes 16-17
	MasterSMLID     uint16    // bytes 18-19
	CapabilityMask  uint32    // bytes 20-23
	LinkWidthActive uint8     // byte 31
	PortState       PortState // byte 32, low 4 bits
	PhysState       PhysState // byte 33, high 4 bits
	LMC             uint8     // byte 34, low 3 bits
	LinkSpeedActive uint8     // byte 35, high 4 bits
	MasterSMSL      uint8     // byte 36, low 4 bits
	// Partition enforcement on this (switch) port, byte 43 bits 3-0.
	PartitionEnforcementInbound  bool   // bit 3
	PartitionEnforcementOutbound bool   // bit 2
	FilterRawInbound             bool   // bit 1
	FilterRawOutbound            bool   // bit 0
	MKeyViolations               uint16 // bytes 44-45
	PKeyViolations               uint16 // bytes 46-47
	QKeyViolations               uint16 // bytes 48-49
	LinkSpeedExtActive           uint8  // byte 62, high 4 bits; 0 when the data area ends before it
}

// ParsePortInfo decodes PortInfo from an SMP data area.
func ParsePortInfo(d []byte) (PortInfo, error) {
	if err := need("PortInfo", d, 50); err != nil {
		return PortInfo{}, err
	}
	be := binary.BigEndian
	pi := PortInfo{
		GIDPrefix:                    be.Uint64(d[8:]),
		LID:                          be.Uint16(d[16:]),
		MasterSMLID:                  be.Uint16(d[18:]),
		CapabilityMask:               be.Uint32(d[20:]),
		LinkWidthActive:              d[31],
		PortState:                    PortState(d[32] & 0x0f),
		PhysState:                    PhysState(d[33] >> 4),
		LMC:                          d[34] & 0x07,
		LinkSpeedActive:              d[35] >> 4,
		MasterSMSL:                   d[36] & 0x0f,
		PartitionEnforcementInbound:  d[43]&0x08 != 0,
		PartitionEnforcementOutbound: d[43]&0x04 != 0,
		FilterRawInbound:             d[43]&0x02 != 0,
		FilterRawOutbound:            d[43]&0x01 != 0,
		MKeyViolations:               be.Uint16(d[44:]),
		PKeyViolations:               be.Uint16(d[46:]),
		QKeyViolations:               be.Uint16(d[48:]),
	}
	if len(d) > 62 {
		pi.LinkSpeedExtActive = d[62] >> 4
	}
	return pi, nil
}

// PKeysPerBlock is the number of P_Key entries in one P_KeyTable block.
const PKeysPerBlock = 32

// PKeyTableModifier is the attribute modifier of P_KeyTable: block number in
// bits 0-15, port number in bits 16-31 (used by switches, ignored by CAs,
// which answer for the port the SMP arrived on; IBA 14.2.5.7). OpenSM sends
// port << 16 (osm_pkey_mgr.c), ibsim reads mod >> 16 (sim_mad.c do_pkeytbl).
func PKeyTableModifier(block uint16, port uint8) uint32 {
	return uint32(block) | uint32(port)<<16
}

// ParsePKeyBlock decodes one P_KeyTable block: 32 big-endian 16-bit entries,
// entry i is table index 32*block+i.
func ParsePKeyBlock(d []byte) ([PKeysPerBlock]uint16, error) {
	var blk [PKeysPerBlock]uint16
	if err := need("P_KeyTable", d, 2*PKeysPerBlock); err != nil {
		return blk, err
	}
	for i := range blk {
		blk[i] = binary.BigEndian.Uint16(d[2*i:])
	}
	return blk, nil
}

// SwitchInfo is SMP attribute 0x0012 (IBA 14.2.5.4). Only the field ibkey
// reads is decoded.
type SwitchInfo struct {
	// PartitionEnforcementCap is the P_Key table length of the switch's
	// external ports (bytes 14-15).
	PartitionEnforcementCap uint16
}

// ParseSwitchInfo decodes SwitchInfo from an SMP data area.
func ParseSwitchInfo(d []byte) (SwitchInfo, error) {
	if err := need("SwitchInfo", d, 16); err != nil {
		return SwitchInfo{}, err
	}
	return SwitchInfo{PartitionEnforcementCap: binary.BigEndian.Uint16(d[14:])}, nil
}

// PortCounters is the PMA's PortCounters (attribute 0x0012, IBA 16.1.3.5): the
// error counters and PortXmitWait (the data and packet counters are not
// decoded). Counters saturate at their maximum instead of wrapping.
type PortCounters struct {
	PortSelect                   uint8  // byte 1
	SymbolErrorCounter           uint16 // bytes 4-5
	LinkErrorRecoveryCounter     uint8  // byte 6
	LinkDownedCounter            uint8  // byte 7
	PortRcvErrors                uint16 // bytes 8-9
	PortRcvRemotePhysicalErrors  uint16 // bytes 10-11
	PortRcvSwitchRelayErrors     uint16 // bytes 12-13
	PortXmitDiscards             uint16 // bytes 14-15
	PortXmitConstraintErrors     uint8  // byte 16: outbound partition/raw filter drops
	PortRcvConstraintErrors      uint8  // byte 17: inbound partition/raw filter drops
	LocalLinkIntegrityErrors     uint8  // byte 19, high 4 bits
	ExcessiveBufferOverrunErrors uint8  // byte 19, low 4 bits
	VL15Dropped                  uint16 // bytes 22-23
	PortXmitWait                 uint32 // bytes 40-43
}

// PortCountersRequestData is the data area of a Get PortCounters for port.
func PortCountersRequestData(port uint8) []byte {
	d := make([]byte, 44)
	d[1] = port
	return d
}

// ParsePortCounters decodes PortCounters from a PMA data area.
func ParsePortCounters(d []byte) (PortCounters, error) {
	if err := need("PortCounters", d, 44); err != nil {
		return PortCounters{}, err
	}
	be := binary.BigEndian
	return PortCounters{
		PortSelect:                   d[1],
		SymbolErrorCounter:           be.Uint16(d[4:]),
		LinkErrorRecoveryCounter:     d[6],
		LinkDownedCounter:            d[7],
		PortRcvErrors:                be.Uint16(d[8:]),
		PortRcvRemotePhysicalErrors:  be.Uint16(d[10:]),
		PortRcvSwitchRelayErrors:     be.Uint16(d[12:]),
		PortXmitDiscards:             be.Uint16(d[14:]),
		PortXmitConstraintErrors:     d[16],
		PortRcvConstraintErrors:      d[17],
		LocalLinkIntegrityErrors:     d[19] >> 4,
		ExcessiveBufferOverrunErrors: d[19] & 0x0f,
		VL15Dropped:                  be.Uint16(d[22:]),
		PortXmitWait:                 be.Uint32(d[40:]),
	}, nil
}
