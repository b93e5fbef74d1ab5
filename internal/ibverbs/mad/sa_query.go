package mad

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
)

// OpenSMDefaultSMKey is OpenSM's default SM_Key and SA key (opensm.conf sm_key and
// sa_key 0x0000000000000001): the key a trusted SA request carries.
const OpenSMDefaultSMKey uint64 = 1

// ErrNoSM: the port the transport sends from knows no Subnet Manager (its PortInfo
// MasterSMLID is 0), so there is no SA to ask.
var ErrNoSM = errors.New("no Subnet Manager: the local port's PortInfo MasterSMLID is 0")

// ErrCutAnswer: the SA's answer was longer than one MAD and only its first RMPP
// segment arrived (ibsim has no RMPP; the umad agent is registered without it).
var ErrCutAnswer = errors.New("the SA's answer was cut to its first MAD (RMPP segments are not reassembled)")

// FindSA returns the LID of the SA: the master SM's LID as the local port's PortInfo
// says it (MasterSMLID, IBA 14.2.5.6; the SA lives with the master SM, §15.1). It
// reads PortInfo of the port the SMP arrives on (a zero-hop directed route,
// modifier 0).
func FindSA(ctx context.Context, t Transport) (uint16, error) {
	pi, err := GetPortInfo(ctx, t, DirectedRoute(), 0)
	if err != nil {
		return 0, fmt.Errorf("finding the SM: PortInfo of the local port: %w", err)
	}
	if pi.MasterSMLID == 0 {
		return 0, ErrNoSM
	}
	if pi.MasterSMLID > 0xbfff {
		// Not a unicast LID (OpenSM ib_types.h IB_LID_UCAST_END_HO 0xBFFF): no SA
		// to send to, but not "MasterSMLID is 0" either.
		return 0, fmt.Errorf("no Subnet Manager: the local port's PortInfo MasterSMLID 0x%04x is not a unicast LID", pi.MasterSMLID)
	}
	return pi.MasterSMLID, nil
}

// GetPathRecord asks the SA at LID sa for the path from slid to dlid in the partition
// of pkey (SubnAdmGet PathRecord, component mask SLID, DLID and P_Key: what
// `saquery PR --slid --dlid --pkey` asks); nil means the SA answered with a path (the
// record itself is not used). The SA answers ERR_NO_RECORDS when it refuses the path;
// OpenSM does so silently to the asker and logs why (ERR 1F1A when the ends do not
// share the key), or does not log at all when the asker itself shares no partition
// with an end (osm_sa_path_record.c).
func GetPathRecord(ctx context.Context, t Transport, sa, slid, dlid, pkey uint16) error {
	_, err := get(ctx, t, Request{Addr: LIDAddress(sa), Class: ClassSubnAdm, Attr: AttrPathRecord, CompMask: PRCompSLID | PRCompDLID | PRCompPKey,
		Data: encodePathQuery(slid, dlid, pkey)}, func([]byte) (struct{}, error) { return struct{}{}, nil })
	return err
}

// GetPKeyTableRecord asks the SA at LID sa for block of the P_Key table of port of
// the node with LID lid, as the SM believes it (SubnAdmGet P_KeyTableRecord with
// LID, port and block). OpenSM answers only a trusted request: smKey must be its
// sa_key (default 1, OpenSMDefaultSMKey); key 0 is refused with ERR_REQ_INVALID (its
// log: ERR 4608) and any other key is dropped unanswered (ERR 1A04), which arrives
// here as a timeout. It answers only for ports that share a partition with the
// asker (osm_sa_pkey_record.c); for a CA the port is the LID's own.
func GetPKeyTableRecord(ctx context.Context, t Transport, sa uint16, smKey uint64, lid uint16, port uint8, block uint16) (PKeyTableRecord, error) {
	r, err := get(ctx, t, Request{Addr: LIDAddress(sa), Class: ClassSubnAdm, Attr: AttrPKeyTableRecord, SMKey: smKey,
		CompMask: PKTRCompLID | PKTRCompPort | PKTRCompBlock, Data: encodePKeyQuery(lid, port, block)}, ParsePKeyTableRecord)
	if err != nil {
		if smKey != 0 && errors.Is(err, ErrTimeout) {
			return PKeyTableRecord{}, fmt.Errorf("%w (OpenSM drops, unanswered, an SA request whose SM_Key is neither 0 nor its sa_key: is 0x%016x its key?)", err, smKey)
		}
		return r, err
	}
	// OpenSM 3.3.23 writes the record's BlockNum in host byte order
	// (osm_sa_pkey_record.c sa_pkey_create assigns it without cl_hton16): block 1
	// arrives as 0x0100 from an x86 SM (saquery prints it the same way, so the two
	// agree). The block asked for is the block answered; a record for another one
	// is an error.
	if r.Block != block && bits.ReverseBytes16(r.Block) == block {
		r.Block = block
	}
	if r.LID != lid || r.Block != block || r.Port != port {
		return r, fmt.Errorf("mad: %s: P_KeyTableRecord answer for LID %d port %d block %d, asked for LID %d port %d block %d", LIDAddress(sa), r.LID, r.Port, r.Block, lid, port, block)
	}
	return r, nil
}

// GetMCMemberRecord asks the SA at LID sa for the multicast group mgid
// (SubnAdmGet MCMemberRecord by MGID, untrusted: SM_Key 0, so the answer is the
// group's own record, with PortGID and JoinState zero). OpenSM answers only for a
// group whose P_Key the asker's port holds (osm_sa_mcmember_record.c): a group in a
// partition the asker is not in is ERR_NO_RECORDS, like one that does not exist.
func GetMCMemberRecord(ctx context.Context, t Transport, sa uint16, mgid GID) (MCMemberRecord, error) {
	return get(ctx, t, Request{Addr: LIDAddress(sa), Class: ClassSubnAdm, Attr: AttrMCMemberRecord, CompMask: MCRCompMGID,
		Data: encodeMCMemberQuery(mgid)}, ParseMCMemberRecord)
}
