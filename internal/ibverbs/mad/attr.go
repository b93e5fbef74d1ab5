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

// String names the type as smpquery prints it.
func (t NodeType) String() string {
	switch t {
	case NodeCA:
		return "Channel Adapter"
	case NodeSwitch:
		return "Switch"
	case NodeRouter:
		return "Router"
	}
	return fmt.Sprintf("?(%d)", uint8(t))
}

// NodeInfo is SMP attribute 0x0011 (IBA 14.2.5.3).
type NodeInfo struct {
	BaseVersion     uint8    // byte 0
	ClassVersion    uint8    // byte 1
	NodeType        NodeType // byte 2
	NumPorts        uint8    // byte 3
	SystemImageGUID uint64   // bytes 4-11
	NodeGUID        uint64   // bytes 12-19
	PortGUID        uint64   // bytes 20-27
	PartitionCap    uint16   // bytes 28-29: P_Key table length of CA ports and switch port 0
	DeviceID        uint16   // bytes 30-31
	Revision        uint32   // bytes 32-35
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
		BaseVersion:     d[0],
		ClassVersion:    d[1],
		NodeType:        NodeType(d[2]),
		NumPorts:        d[3],
		SystemImageGUID: be.Uint64(d[4:]),
		NodeGUID:        be.Uint64(d[12:]),
		PortGUID:        be.Uint64(d[20:]),
		PartitionCap:    be.Uint16(d[28:]),
		DeviceID:        be.Uint16(d[30:]),
		Revision:        be.Uint32(d[32:]),
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

// String names the state as smpquery prints LinkState.
func (s PortState) String() string {
	switch s {
	case PortStateNoChange:
		return "NoChange"
	case PortStateDown:
		return "Down"
	case PortStateInit:
		return "Initialize"
	case PortStateArmed:
		return "Armed"
	case PortStateActive:
		return "Active"
	}
	return fmt.Sprintf("?(%d)", uint8(s))
}

// PhysState is PortInfo's PortPhysicalState.
type PhysState uint8

// String names the state as smpquery prints PhysLinkState.
func (s PhysState) String() string {
	switch s {
	case 0:
		return "NoChange"
	case 1:
		return "Sleep"
	case 2:
		return "Polling"
	case 3:
		return "Disabled"
	case 4:
		return "PortConfigurationTraining"
	case 5:
		return "LinkUp"
	case 6:
		return "LinkErrorRecovery"
	case 7:
		return "PhyTest"
	}
	return fmt.Sprintf("?(%d)", uint8(s))
}

// PortInfo is SMP attribute 0x0015 (IBA 14.2.5.6); the attribute modifier is
// the port number. Only the fields ibkey reports are decoded.
type PortInfo struct {
	GIDPrefix          uint64    // bytes 8-15
	LID                uint16    // bytes 16-17
	MasterSMLID        uint16    // bytes 18-19
	CapabilityMask     uint32    // bytes 20-23
	DiagCode           uint16    // bytes 24-25
	LocalPortNum       uint8     // byte 28
	LinkWidthEnabled   uint8     // byte 29
	LinkWidthSupported uint8     // byte 30
	LinkWidthActive    uint8     // byte 31
	LinkSpeedSupported uint8     // byte 32, high 4 bits
	PortState          PortState // byte 32, low 4 bits
	PhysState          PhysState // byte 33, high 4 bits
	LinkDownDefState   uint8     // byte 33, low 4 bits
	MKeyProtectBits    uint8     // byte 34, bits 7-6
	LMC                uint8     // byte 34, low 3 bits
	LinkSpeedActive    uint8     // byte 35, high 4 bits
	LinkSpeedEnabled   uint8     // byte 35, low 4 bits
	NeighborMTU        uint8     // byte 36, high 4 bits (1=256 ... 5=4096)
	MasterSMSL         uint8     // byte 36, low 4 bits
	VLCap              uint8     // byte 37, high 4 bits
	MTUCap             uint8     // byte 41, low 4 bits
	OperationalVLs     uint8     // byte 43, high 4 bits
	// Partition enforcement on this (switch) port, byte 43 bits 3-0.
	PartitionEnforcementInbound  bool   // bit 3
	PartitionEnforcementOutbound bool   // bit 2
	FilterRawInbound             bool   // bit 1
	FilterRawOutbound            bool   // bit 0
	MKeyViolations               uint16 // bytes 44-45
	PKeyViolations               uint16 // bytes 46-47
	QKeyViolations               uint16 // bytes 48-49
	GUIDCap                      uint8  // byte 50
	ClientReregister             bool   // byte 51, bit 7
	SubnetTimeout                uint8  // byte 51, low 5 bits
}

// ParsePortInfo decodes PortInfo from an SMP data area.
func ParsePortInfo(d []byte) (PortInfo, error) {
	if err := need("PortInfo", d, 52); err != nil {
		return PortInfo{}, err
	}
	be := binary.BigEndian
	return PortInfo{
		GIDPrefix:                    be.Uint64(d[8:]),
		LID:                          be.Uint16(d[16:]),
		MasterSMLID:                  be.Uint16(d[18:]),
		CapabilityMask:               be.Uint32(d[20:]),
		DiagCode:                     be.Uint16(d[24:]),
		LocalPortNum:                 d[28],
		LinkWidthEnabled:             d[29],
		LinkWidthSupported:           d[30],
		LinkWidthActive:              d[31],
		LinkSpeedSupported:           d[32] >> 4,
		PortState:                    PortState(d[32] & 0x0f),
		PhysState:                    PhysState(d[33] >> 4),
		LinkDownDefState:             d[33] & 0x0f,
		MKeyProtectBits:              d[34] >> 6,
		LMC:                          d[34] & 0x07,
		LinkSpeedActive:              d[35] >> 4,
		LinkSpeedEnabled:             d[35] & 0x0f,
		NeighborMTU:                  d[36] >> 4,
		MasterSMSL:                   d[36] & 0x0f,
		VLCap:                        d[37] >> 4,
		MTUCap:                       d[41] & 0x0f,
		OperationalVLs:               d[43] >> 4,
		PartitionEnforcementInbound:  d[43]&0x08 != 0,
		PartitionEnforcementOutbound: d[43]&0x04 != 0,
		FilterRawInbound:             d[43]&0x02 != 0,
		FilterRawOutbound:            d[43]&0x01 != 0,
		MKeyViolations:               be.Uint16(d[44:]),
		PKeyViolations:               be.Uint16(d[46:]),
		QKeyViolations:               be.Uint16(d[48:]),
		GUIDCap:                      d[50],
		ClientReregister:             d[51]&0x80 != 0,
		SubnetTimeout:                d[51] & 0x1f,
	}, nil
}

// PKeysPerBlock is the number of P_Key entries in one P_KeyTable block.
const PKeysPerBlock = 32

// PKeyTableModifier is the attribute modifier of P_KeyTable: block number in
// bits 0-15, port number in bits 16-23 (used by switches, ignored by CAs,
// which answer for the port the SMP arrived on; IBA 14.2.5.7).
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

// SwitchInfo is SMP attribute 0x0012 (IBA 14.2.5.4).
type SwitchInfo struct {
	LinearFDBCap    uint16 // bytes 0-1
	RandomFDBCap    uint16 // bytes 2-3
	MulticastFDBCap uint16 // bytes 4-5
	LinearFDBTop    uint16 // bytes 6-7
	DefaultPort     uint8  // byte 8
	LifeTimeValue   uint8  // byte 11, bits 7-3
	PortStateChange bool   // byte 11, bit 2
	LIDsPerPort     uint16 // bytes 12-13
	// PartitionEnforcementCap is the P_Key table length of the switch's
	// external ports (bytes 14-15).
	PartitionEnforcementCap uint16
	InboundEnforcementCap   bool   // byte 16, bit 7
	OutboundEnforcementCap  bool   // byte 16, bit 6
	FilterRawInboundCap     bool   // byte 16, bit 5
	FilterRawOutboundCap    bool   // byte 16, bit 4
	EnhancedPort0           bool   // byte 16, bit 3
	MulticastFDBTop         uint16 // bytes 18-19
}

// ParseSwitchInfo decodes SwitchInfo from an SMP data area.
func ParseSwitchInfo(d []byte) (SwitchInfo, error) {
	if err := need("SwitchInfo", d, 20); err != nil {
		return SwitchInfo{}, err
	}
	be := binary.BigEndian
	return SwitchInfo{
		LinearFDBCap:            be.Uint16(d[0:]),
		RandomFDBCap:            be.Uint16(d[2:]),
		MulticastFDBCap:         be.Uint16(d[4:]),
		LinearFDBTop:            be.Uint16(d[6:]),
		DefaultPort:             d[8],
		LifeTimeValue:           d[11] >> 3,
		PortStateChange:         d[11]&0x04 != 0,
		LIDsPerPort:             be.Uint16(d[12:]),
		PartitionEnforcementCap: be.Uint16(d[14:]),
		InboundEnforcementCap:   d[16]&0x80 != 0,
		OutboundEnforcementCap:  d[16]&0x40 != 0,
		FilterRawInboundCap:     d[16]&0x20 != 0,
		FilterRawOutboundCap:    d[16]&0x10 != 0,
		EnhancedPort0:           d[16]&0x08 != 0,
		MulticastFDBTop:         be.Uint16(d[18:]),
	}, nil
}

// PortCounters is the PMA's PortCounters (attribute 0x0012, IBA 16.1.3.5).
// Counters saturate at their maximum instead of wrapping.
type PortCounters struct {
	PortSelect                   uint8  // byte 1
	CounterSelect                uint16 // bytes 2-3
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
	PortXmitData                 uint32 // bytes 24-27
	PortRcvData                  uint32 // bytes 28-31
	PortXmitPkts                 uint32 // bytes 32-35
	PortRcvPkts                  uint32 // bytes 36-39
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
		CounterSelect:                be.Uint16(d[2:]),
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
		PortXmitData:                 be.Uint32(d[24:]),
		PortRcvData:                  be.Uint32(d[28:]),
		PortXmitPkts:                 be.Uint32(d[32:]),
		PortRcvPkts:                  be.Uint32(d[36:]),
		PortXmitWait:                 be.Uint32(d[40:]),
	}, nil
}
