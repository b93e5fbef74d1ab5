// Package mad encodes and decodes InfiniBand management datagrams (MADs) and
// sends them over a Transport: the kernel's umad interface on real hardware, or
// ibsim's socket protocol on the simulated fabric.
//
// Only the pieces ibkey needs are here: subnet management packets (SMPs,
// LID-routed class 0x01 and directed-route class 0x81), the performance
// management class (PMA, 0x04), with the attributes NodeInfo, NodeDescription,
// PortInfo, P_KeyTable, SwitchInfo and PortCounters, and the
// subnet administration class (SA, 0x03; sa.go) with PathRecord,
// P_KeyTableRecord and MCMemberRecord.
//
// Layouts follow the InfiniBand Architecture Specification vol. 1, chapters 13
// (MAD format), 14 (subnet management) and 16.1 (performance management); every
// offset is checked in tests against infiniband-diags run on ibsim. ibkey only
// reads the fabric: Request.MarshalTo encodes Get (and, for the SA, GetTable) and
// nothing else, so no program built from this package can send a Set or a Trap
// (tests that must inject a table, a trap or a join into the simulator build
// them in internal/lab).
package mad

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Size is the length of every MAD on the wire.
const Size = 256

// Class is a management class (MAD header byte 1).
type Class uint8

// Management classes used by ibkey.
const (
	ClassSubnLID      Class = 0x01 // subnet management, LID-routed
	ClassSubnAdm      Class = 0x03 // subnet administration (SA), on QP1
	ClassPerf         Class = 0x04 // performance management (PMA)
	ClassSubnDirected Class = 0x81 // subnet management, directed route
)

var classNames = map[Class]string{ClassSubnLID: "SubnLID", ClassPerf: "Perf", ClassSubnAdm: "SubnAdm", ClassSubnDirected: "SubnDirected"}

func (c Class) String() string { return name(classNames, c, "class 0x%02x") }

// name is names[v], or v printed with unknown when it has no name.
func name[T ~uint8](names map[T]string, v T, unknown string) string {
	if s, ok := names[v]; ok {
		return s
	}
	return fmt.Sprintf(unknown, uint8(v))
}

// Method is a MAD method (header byte 3).
type Method uint8

// Methods ibkey knows (IBA 13.4.5, table 97; 15.2.4 for the SA's GetTable).
// Only Get, and for the SA GetTable, are ever encoded; MethodSet is named so
// that errors and decoded packets can say "Set".
const (
	MethodGet          Method = 0x01
	MethodSet          Method = 0x02
	MethodGetResp      Method = 0x81
	MethodGetTable     Method = 0x12 // SubnAdmGetTable (IBA 15.2.4)
	MethodGetTableResp Method = 0x92
)

// ErrMethodRefused: Request.MarshalTo was asked to encode a method other than
// Get (or GetTable, for the SA). ibkey is read-only by construction; see the
// package comment.
var ErrMethodRefused = errors.New("mad: ibkey only sends Get (and the SA's GetTable)")

var methodNames = map[Method]string{MethodGet: "Get", MethodSet: "Set", MethodGetResp: "GetResp", MethodGetTable: "GetTable", MethodGetTableResp: "GetTableResp"}

func (m Method) String() string { return name(methodNames, m, "method 0x%02x") }

// AttrID is a MAD attribute identifier (header bytes 16-17). The same number
// means different attributes in different classes (0x0012 is SwitchInfo for
// SMPs and PortCounters for the PMA).
type AttrID uint16

// SMP attributes (IBA 14.2.5).
const (
	AttrNodeDescription AttrID = 0x0010
	AttrNodeInfo        AttrID = 0x0011
	AttrSwitchInfo      AttrID = 0x0012
	AttrPortInfo        AttrID = 0x0015
	AttrPKeyTable       AttrID = 0x0016
)

// AttrPortCounters is the PMA's PortCounters (IBA 16.1.3).
const AttrPortCounters AttrID = 0x0012

// Offsets inside the 256-byte MAD (IBA 13.4.2 common header, 14.2.1 SMP
// formats, 16.1.2 PMA format).
const (
	offBaseVersion  = 0
	offClass        = 1
	offClassVersion = 2
	offMethod       = 3
	offStatus       = 4
	offHopPointer   = 6 // directed route: ClassSpecific high byte
	offHopCount     = 7 // directed route: ClassSpecific low byte
	offTID          = 8
	offAttrID       = 16
	offAttrModifier = 20
	offDrSLID       = 32 // directed route only
	offDrDLID       = 34 // directed route only
	offData         = 64
	offInitialPath  = 128 // directed route only
	smpDataSize     = 64
	drDirectionBit  = 0x8000
	permissiveLID   = 0xffff
	baseVersion     = 1
	classVersionSA  = 2 // IBA 15.2.1.1
)

// MaxHops is the longest directed route: InitialPath holds 64 entries and entry
// 0 is unused (IBA 14.2.2.1).
const MaxHops = 63

// Address says where a MAD goes: a destination LID, or a directed route.
type Address struct {
	// LID is the destination for LID-routed MADs. Unused when Directed.
	LID uint16
	// Directed selects a directed-route SMP along Path.
	Directed bool
	// Path holds the egress port of each hop (InitialPath[1..n]); an empty
	// path with Directed set addresses the local node.
	Path []uint8
}

// LIDAddress returns the address of a LID-routed destination.
func LIDAddress(lid uint16) Address { return Address{LID: lid} }

// DirectedRoute returns the directed-route address that leaves the local node
// through the given egress ports in turn. No ports means the local node.
func DirectedRoute(ports ...uint8) Address {
	return Address{Directed: true, Path: append([]uint8{}, ports...)}
}

// ParseDRPath parses a directed route in infiniband-diags notation: "0" is the
// local node, "0,1,3" leaves it through port 1, then the next node's port 3.
func ParseDRPath(s string) (Address, error) {
	parts := strings.Split(strings.TrimSpace(s), ",")
	if parts[0] != "0" {
		return Address{}, fmt.Errorf("bad directed route %q: must start with 0 (the local node), e.g. 0,1,3", s)
	}
	if len(parts)-1 > MaxHops {
		return Address{}, fmt.Errorf("bad directed route %q: %d hops, at most %d", s, len(parts)-1, MaxHops)
	}
	a := Address{Directed: true, Path: make([]uint8, 0, len(parts)-1)}
	for _, p := range parts[1:] {
		n, err := strconv.ParseUint(strings.TrimSpace(p), 10, 8)
		if err != nil || n == 0 {
			return Address{}, fmt.Errorf("bad directed route %q: hop %q is not a port number 1-255", s, p)
		}
		a.Path = append(a.Path, uint8(n))
	}
	return a, nil
}

// String prints the address as infiniband-diags does: "lid 3" or "DR path 0,1,3".
func (a Address) String() string {
	if !a.Directed {
		return "lid " + strconv.Itoa(int(a.LID))
	}
	return "DR path " + FormatDRPath(a.Path)
}

func (a Address) validate() error {
	if a.Directed {
		if len(a.Path) > MaxHops {
			return fmt.Errorf("mad: directed route of %d hops, at most %d", len(a.Path), MaxHops)
		}
		for _, p := range a.Path {
			if p == 0 {
				return fmt.Errorf("mad: %s: egress port 0 inside a directed route", a)
			}
		}
		return nil
	}
	if a.LID == 0 || a.LID == permissiveLID {
		return fmt.Errorf("mad: LID %d is not a destination (use a directed route before the SM assigned LIDs)", a.LID)
	}
	return nil
}

// Request is one MAD to send. Class is ClassSubnLID for SMPs (the transport
// switches to ClassSubnDirected when Addr is a directed route), ClassPerf or
// ClassSubnAdm (sent to the SM's LID on QP1 with the GSI Q_Key).
type Request struct {
	Addr     Address
	Class    Class
	Method   Method
	Attr     AttrID
	Modifier uint32
	// Data is copied into the attribute data area: at most 64 bytes for SMPs,
	// 192 for the PMA, 200 for the SA. PMA PortCounters needs PortSelect here,
	// an SA query its template record.
	Data []byte
	// SMKey and CompMask are the SA header's SM_Key and ComponentMask (IBA
	// 15.2.1.1); ClassSubnAdm only.
	SMKey    uint64
	CompMask uint64
}

// wireClass returns the class put on the wire for r.
func (r *Request) wireClass() (Class, error) {
	switch r.Class {
	case ClassSubnLID, ClassSubnDirected:
		if r.Addr.Directed {
			return ClassSubnDirected, nil
		}
		return ClassSubnLID, nil
	case ClassPerf, ClassSubnAdm:
		if r.Addr.Directed {
			return 0, fmt.Errorf("mad: %s MADs cannot use a directed route; address the port by LID", r.Class)
		}
		return r.Class, nil
	}
	return 0, fmt.Errorf("mad: unsupported class 0x%02x", uint8(r.Class))
}

// MarshalTo encodes r as a 256-byte MAD with transaction ID tid into b (at
// least Size bytes; the first Size are overwritten). It refuses any method but
// Get (and the SA's GetTable) with ErrMethodRefused.
func (r *Request) MarshalTo(b []byte, tid uint64) error {
	class, err := r.wireClass()
	if err != nil {
		return err
	}
	if err := r.Addr.validate(); err != nil {
		return err
	}
	if r.Method != MethodGet && (r.Method != MethodGetTable || class != ClassSubnAdm) {
		// The one guard that keeps the shipped binary read-only: every
		// transport encodes through MarshalTo.
		return fmt.Errorf("%w: refusing to encode %s %s", ErrMethodRefused, class, r.Method)
	}
	if len(b) < Size {
		return fmt.Errorf("mad: a %d-byte buffer holds no %d-byte MAD", len(b), Size)
	}
	b = b[:Size]
	data := dataArea(class, b)
	if len(r.Data) > len(data) {
		return fmt.Errorf("mad: %d bytes of attribute data, %s carries at most %d", len(r.Data), class, len(data))
	}
	clear(b)
	b[offBaseVersion] = baseVersion
	b[offClass] = byte(class)
	b[offClassVersion] = classVersion(class)
	b[offMethod] = byte(r.Method)
	binary.BigEndian.PutUint64(b[offTID:], tid)
	binary.BigEndian.PutUint16(b[offAttrID:], uint16(r.Attr))
	binary.BigEndian.PutUint32(b[offAttrModifier:], r.Modifier)
	if class == ClassSubnAdm {
		// The SA header (IBA 15.2.1.1): no RMPP on a request, the SM_Key and
		// the component mask; the record template follows it.
		binary.BigEndian.PutUint64(b[offSMKey:], r.SMKey)
		binary.BigEndian.PutUint64(b[offCompMask:], r.CompMask)
	}
	copy(data, r.Data)
	if class == ClassSubnDirected {
		// Outbound directed route: D=0, hop pointer 0, hop count n, both
		// DR LIDs permissive (a pure directed route, IBA 14.2.2.2).
		b[offHopPointer] = 0
		b[offHopCount] = byte(len(r.Addr.Path))
		binary.BigEndian.PutUint16(b[offDrSLID:], permissiveLID)
		binary.BigEndian.PutUint16(b[offDrDLID:], permissiveLID)
		copy(b[offInitialPath+1:], r.Addr.Path)
	}
	return nil
}

// Packet is a decoded MAD.
type Packet struct {
	Class    Class
	Method   Method
	Status   uint16 // for directed-route SMPs without the D bit
	Attr     AttrID
	Modifier uint32

	// Cut is set on an SA reply that is one of several RMPP segments (sa.go):
	// the rest of the answer did not come.
	Cut bool

	// Data is the attribute data area: 64 bytes for SMPs, 192 for the PMA,
	// 200 (the records) for the SA.
	Data []byte
}

// Decode parses a 256-byte MAD. It checks the versions and the class and that
// the directed-route hop count fits the path arrays (IBA 14.2.2.1); it never
// panics.
func Decode(b []byte) (*Packet, error) {
	if len(b) != Size {
		return nil, fmt.Errorf("mad: %d bytes, want %d", len(b), Size)
	}
	if err := checkHeader(b); err != nil {
		return nil, fmt.Errorf("mad: %w", err)
	}
	p := &Packet{
		Class:    Class(b[offClass]),
		Method:   Method(b[offMethod]),
		Status:   replyStatus(b),
		Attr:     AttrID(binary.BigEndian.Uint16(b[offAttrID:])),
		Modifier: binary.BigEndian.Uint32(b[offAttrModifier:]),
		Data:     append([]byte(nil), dataArea(Class(b[offClass]), b)...),
	}
	if p.Class == ClassSubnAdm {
		// Active, and not both the first and the last segment (RMPP flags,
		// IBA 13.6.2.1). Linux's RMPP sender sets First on segment 1 and Last
		// on the final one (drivers/infiniband/core/mad_rmpp.c send_next_seg),
		// so a final segment that arrives alone carries Last without First:
		// it is not the whole answer either.
		f := b[offRMPPFlags]
		p.Cut = f&rmppFlagActive != 0 && f&(rmppFlagFirst|rmppFlagLast) != rmppFlagFirst|rmppFlagLast
	}
	return p, nil
}

// dataArea is the attribute data area of the MAD b of class c: 64 bytes for
// SMPs, 192 for the PMA, 200 (the records) for the SA.
func dataArea(c Class, b []byte) []byte {
	switch c {
	case ClassPerf:
		return b[offData:]
	case ClassSubnAdm:
		return b[offSAData:]
	}
	return b[offData : offData+smpDataSize]
}

// replyStatus is the status of the MAD b. In a directed-route SMP the status
// word's top bit is the D bit, set in replies travelling back (OpenSM
// ib_types.h IB_SMP_DIRECTION, IB_SMP_STATUS_MASK), and not part of the status.
func replyStatus(b []byte) uint16 {
	s := binary.BigEndian.Uint16(b[offStatus:])
	if Class(b[offClass]) == ClassSubnDirected {
		s &^= drDirectionBit
	}
	return s
}

// classVersion is the class version ibkey speaks for c (IBA 13.4.2 for the SMP and
// PMA classes, 15.2.1.1 for the SA's 2); 0 for a class ibkey does not speak.
func classVersion(c Class) uint8 {
	switch c {
	case ClassSubnLID, ClassSubnDirected, ClassPerf:
		return 1
	case ClassSubnAdm:
		return classVersionSA
	}
	return 0
}

// checkHeader checks what every MAD ibkey reads must carry: the base version, a
// class ibkey speaks in its class version, and a directed-route hop count that
// fits InitialPath (IBA 14.2.2.1). b is Size bytes.
func checkHeader(b []byte) error {
	if b[offBaseVersion] != baseVersion {
		return fmt.Errorf("base version %d, want %d", b[offBaseVersion], baseVersion)
	}
	c := Class(b[offClass])
	v := classVersion(c)
	if v == 0 {
		return fmt.Errorf("unsupported %s", c)
	}
	if b[offClassVersion] != v {
		return fmt.Errorf("%s class version %d, want %d", c, b[offClassVersion], v)
	}
	if c == ClassSubnDirected && b[offHopCount] > MaxHops {
		return fmt.Errorf("directed route hop count %d, at most %d", b[offHopCount], MaxHops)
	}
	return nil
}

// StatusError is a reply whose MAD status is not success (IBA 13.4.7).
type StatusError struct {
	Addr   Address
	Attr   AttrID
	Status uint16
	// Class is the reply's class: the class-specific bits (8-15) mean
	// different things per class (the SA's are SAStatusText).
	Class Class
}

func (e *StatusError) Error() string {
	text := StatusText(e.Status)
	if e.Class == ClassSubnAdm {
		text = SAStatusText(e.Status)
	}
	return fmt.Sprintf("mad: %s: attribute 0x%04x: status 0x%04x (%s)", e.Addr, uint16(e.Attr), e.Status, text)
}

// StatusText describes a MAD status word: bit 0 busy, bit 1 redirect, bits 2-4
// the invalid-field code, bits 5-7 reserved (IBA table 127). A status with only
// reserved bits set is not success: every reply whose status is not 0 is an
// error (libibmad's mad_rpc alike, rpc.c).
func StatusText(s uint16) string {
	var parts []string
	if s&0x1 != 0 {
		parts = append(parts, "busy")
	}
	if s&0x2 != 0 {
		parts = append(parts, "redirect required")
	}
	switch (s >> 2) & 0x7 {
	case 0:
	case 1:
		parts = append(parts, "bad base or class version")
	case 2:
		parts = append(parts, "method not supported")
	case 3:
		parts = append(parts, "method/attribute combination not supported")
	case 7:
		parts = append(parts, "invalid attribute or modifier value")
	default:
		parts = append(parts, fmt.Sprintf("reserved invalid-field code %d", (s>>2)&0x7))
	}
	if s&0xe0 != 0 {
		parts = append(parts, fmt.Sprintf("reserved bits 0x%02x", s&0xe0))
	}
	if s>>8 != 0 {
		parts = append(parts, fmt.Sprintf("class-specific 0x%02x", s>>8))
	}
	if len(parts) == 0 {
		return "success"
	}
	return strings.Join(parts, ", ")
}
