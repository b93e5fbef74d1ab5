package mad

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// The subnet administration class (IBA vol. 1 §15.2): queries to the Subnet
// Manager's SA, sent to the SM's LID on QP1 with the GSI Q_Key 0x80010000. ibkey asks
// with SubnAdmGet for one record at a time: PathRecord (§15.2.5.16), P_KeyTableRecord
// (§15.2.5.11) and MCMemberRecord (§15.2.5.17). Layouts are OpenSM's
// include/iba/ib_types.h (ib_path_rec_t, ib_pkey_table_record_t, ib_member_rec_t) and
// are checked against saquery run on the simulated fabric.
//
// A SubnAdmGetTable answer longer than one MAD travels in RMPP segments (§13.6).
// ibkey does not reassemble them: its umad agent is registered without RMPP and ibsim
// has none, so such an answer arrives cut to its first segment. Packet.Cut says
// so, and nothing here takes a cut answer as the whole one. OpenSM marks every
// GetTable answer RMPP Active and leaves First and Last to the kernel (osm_sa.c
// osm_sa_respond), so under ibsim even one that fits reads as cut; saquery there
// prints what the first MAD holds as the whole answer (TestLabSAGetTableCut).

// SA header offsets (IBA 15.2.1.1, table 184).
const (
	offRMPPFlags = 26 // RRespTime (high 5 bits), RMPPFlags (low 3 bits)
	offSMKey     = 36
	offCompMask  = 48
	offSAData    = 56
)

// SA attributes (IBA 15.2.5, table 195; OpenSM IB_MAD_ATTR_*).
const (
	AttrPKeyTableRecord AttrID = 0x0033
	AttrPathRecord      AttrID = 0x0035
	AttrMCMemberRecord  AttrID = 0x0038
)

// RMPP flags (IBA 13.6.2.1).
const (
	rmppFlagActive = 1 << 0
	rmppFlagFirst  = 1 << 1
	rmppFlagLast   = 1 << 2
)

// SA status codes: the class-specific bits 8-15 of the MAD status (IBA 15.2.1.2,
// table 185; OpenSM IB_SA_MAD_STATUS_*, infiniband-diags ibdiag_sa.c
// ib_sa_error_str). The ones ibkey acts on are named; all are in SAStatusText.
const (
	SAStatusReqInvalid = 2
	SAStatusNoRecords  = 3
)

// SAStatusText describes an SA reply's status: the common bits as StatusText, and
// the SA's class-specific code (1-8) by name.
func SAStatusText(s uint16) string {
	names := [...]string{
		1:                  "ERR_NO_RESOURCES",
		SAStatusReqInvalid: "ERR_REQ_INVALID",
		SAStatusNoRecords:  "ERR_NO_RECORDS",
		4:                  "ERR_TOO_MANY_RECORDS",
		5:                  "ERR_REQ_INVALID_GID",
		6:                  "ERR_REQ_INSUFFICIENT_COMPONENTS",
		7:                  "ERR_REQ_DENIED",
		8:                  "ERR_STATUS_PRIO_SUGGESTED",
	}
	var parts []string
	if common := StatusText(s & 0xff); common != "success" {
		parts = append(parts, common)
	}
	if c := s >> 8; c != 0 {
		if int(c) < len(names) && names[c] != "" {
			parts = append(parts, names[c])
		} else {
			parts = append(parts, fmt.Sprintf("SA status %d", c))
		}
	}
	if len(parts) == 0 {
		return "success"
	}
	return strings.Join(parts, ", ")
}

// SAStatus returns the SA's class-specific status code of a reply error (a
// *StatusError from an SA query), or false.
func SAStatus(err error) (uint8, bool) {
	var se *StatusError
	if !errors.As(err, &se) || se.Class != ClassSubnAdm {
		return 0, false
	}
	return uint8(se.Status >> 8), true
}

// GID is a 128-bit port or multicast GID.
type GID [16]byte

// PathRecord component mask bits (IBA 15.2.5.16; OpenSM IB_PR_COMPMASK_*).
const (
	PRCompDLID  uint64 = 1 << 4
	PRCompSLID  uint64 = 1 << 5
	PRCompPKey  uint64 = 1 << 13
	pathRecSize        = 64 // OpenSM's ib_path_rec_t
)

// encodePathQuery is the template of a PathRecord query for slid, dlid and pkey.
func encodePathQuery(slid, dlid, pkey uint16) []byte {
	d := make([]byte, pathRecSize)
	be := binary.BigEndian
	be.PutUint16(d[40:], dlid)
	be.PutUint16(d[42:], slid)
	be.PutUint16(d[50:], pkey)
	return d
}

// P_KeyTableRecord component mask bits (IBA 15.2.5.11; OpenSM IB_PKEY_COMPMASK_*).
const (
	PKTRCompLID   uint64 = 1 << 0
	PKTRCompBlock uint64 = 1 << 1
	PKTRCompPort  uint64 = 1 << 2
	pkeyRecSize          = 72
)

// PKeyTableRecord is SA attribute 0x0033 (IBA 15.2.5.11, OpenSM
// ib_pkey_table_record_t): one block of 32 entries of a port's P_Key table as the
// SM believes it is.
type PKeyTableRecord struct {
	LID   uint16 // bytes 0-1: the port's LID (a switch's port 0 LID for its ports)
	Block uint16 // 2-3
	Port  uint8  // 4
	PKeys [PKeysPerBlock]uint16
}

// ParsePKeyTableRecord decodes a P_KeyTableRecord from the start of an SA data area.
func ParsePKeyTableRecord(d []byte) (PKeyTableRecord, error) {
	if err := need("P_KeyTableRecord", d, pkeyRecSize); err != nil {
		return PKeyTableRecord{}, err
	}
	be := binary.BigEndian
	r := PKeyTableRecord{LID: be.Uint16(d[0:]), Block: be.Uint16(d[2:]), Port: d[4]}
	r.PKeys, _ = ParsePKeyBlock(d[8:pkeyRecSize]) // 64 bytes: no error
	return r, nil
}

func encodePKeyQuery(lid uint16, port uint8, block uint16) []byte {
	d := make([]byte, pkeyRecSize)
	binary.BigEndian.PutUint16(d[0:], lid)
	binary.BigEndian.PutUint16(d[2:], block)
	d[4] = port
	return d
}

// MCMemberRecord component mask bits (IBA 15.2.5.17; OpenSM IB_MCR_COMPMASK_*).
const (
	MCRCompMGID  uint64 = 1 << 0
	mcMemberSize        = 56 // OpenSM's ib_member_rec_t, padded (AttributeOffset 7)
)

// MCMemberRecord is SA attribute 0x0038 (IBA 15.2.5.17, OpenSM ib_member_rec_t):
// the group's Q_Key, MTU and rate, the fields ibkey compares with partitions.conf.
type MCMemberRecord struct {
	QKey uint32 // bytes 32-35
	MTU  uint8  // 38: selector (bits 6-7), MTU code
	Rate uint8  // 42: selector, rate code
}

// MTUCode and RateCode are the MTU and rate without their selector bits.
func (r MCMemberRecord) MTUCode() uint8  { return r.MTU & 0x3f }
func (r MCMemberRecord) RateCode() uint8 { return r.Rate & 0x3f }

// ParseMCMemberRecord decodes an MCMemberRecord from the start of an SA data area.
func ParseMCMemberRecord(d []byte) (MCMemberRecord, error) {
	if err := need("MCMemberRecord", d, 43); err != nil {
		return MCMemberRecord{}, err
	}
	return MCMemberRecord{QKey: binary.BigEndian.Uint32(d[32:]), MTU: d[38], Rate: d[42]}, nil
}

func encodeMCMemberQuery(mgid GID) []byte {
	d := make([]byte, mcMemberSize)
	copy(d[0:16], mgid[:])
	return d
}
