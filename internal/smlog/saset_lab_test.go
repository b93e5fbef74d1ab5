package smlog

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"

	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/lab"
)

// SubnAdmSet for the lab tests (IBA 15.2.4; a method the shipped codec refuses, sent
// through lab.Send): multicast joins and InformInfo subscriptions, to make OpenSM log
// what it logs when a port joins a group of a partition it is not in (ERR 1B14), a
// join names another Q_Key or P_Key (1B30-1B32), or an untrusted requester subscribes
// to security traps (430B).

const (
	classSubnAdm     = 0x03
	methodSubnAdmSet = 0x02 // IBA 13.4.5 table 97
	offSMKey         = 36
	offCompMask      = 48
	offSAData        = 56
	attrInformInfo   = 0x0003
	attrMCMember     = 0x0038
	mcrCompMGID      = 1 << 0
	mcrCompPort      = 1 << 1
	mcrCompQKey      = 1 << 2
	mcrCompPKey      = 1 << 7
	mcrCompJoin      = 1 << 16
)

// saSet sends a SubnAdmSet of attr with the record rec, component mask comp and SM_Key
// smKey from a client attached at node to the SA at smLID and returns the reply's MAD
// status (0 done; the SA's codes in bits 8-15).
func saSet(ctx context.Context, l *lab.Lab, node string, smLID uint16, attr uint16, comp, smKey uint64, rec []byte) (uint16, error) {
	b := lab.NewMAD(classSubnAdm, 2, methodSubnAdmSet, rand.Uint64()>>1, attr)
	binary.BigEndian.PutUint64(b[offSMKey:], smKey)
	binary.BigEndian.PutUint64(b[offCompMask:], comp)
	copy(b[offSAData:], rec)
	reply, err := l.Send(ctx, node, smLID, 1, b, true)
	if err != nil {
		return 0, fmt.Errorf("lab: SubnAdmSet attribute 0x%04x: %w", attr, err)
	}
	return binary.BigEndian.Uint16(reply[4:]), nil
}

// joinRequest is an MCMemberRecord join: portGID joins mgid as a full member; QKey
// and PKey, when not zero, are given too (component mask Q_Key, P_Key). Create adds
// what OpenSM needs to create a group that does not exist (the TClass, SL, FlowLabel
// and HopLimit components, o15-0.2.3).
type joinRequest struct {
	MGID, PortGID mad.GID
	QKey          uint32
	PKey          uint16
	Create        bool
}

// join sends the join from a client of l attached at node to the SA at smLID and
// returns the reply's MAD status.
func join(ctx context.Context, l *lab.Lab, node string, smLID uint16, j joinRequest) (uint16, error) {
	rec := make([]byte, 56)
	copy(rec[0:16], j.MGID[:])
	copy(rec[16:32], j.PortGID[:])
	comp := uint64(mcrCompMGID | mcrCompPort | mcrCompJoin)
	if j.QKey != 0 {
		binary.BigEndian.PutUint32(rec[32:], j.QKey)
		comp |= mcrCompQKey
	}
	if j.PKey != 0 {
		binary.BigEndian.PutUint16(rec[40:], j.PKey)
		comp |= mcrCompPKey
	}
	if j.Create {
		comp |= 1<<6 | 1<<12 | 1<<13 | 1<<14 // TClass, SL, FlowLabel, HopLimit (zero)
	}
	rec[48] = 1 // JoinState: full member
	return saSet(ctx, l, node, smLID, attrMCMember, comp, 0, rec)
}

// subscribeTrap subscribes the client of l at node to trap number trap of every LID
// (InformInfo, IBA 13.4.8.3) with SM_Key smKey. OpenSM takes subscriptions to the
// security traps 256-259 only with its SM_Key (osm_sa_informinfo.c, ERR 430B).
func subscribeTrap(ctx context.Context, l *lab.Lab, node string, smLID uint16, trap uint16, smKey uint64) (uint16, error) {
	return subscribeTrapLIDs(ctx, l, node, smLID, trap, smKey, 0xffff, 0)
}

// subscribeTrapLIDs is subscribeTrap for the traps of LIDs begin to end (begin 0xffff:
// every LID).
func subscribeTrapLIDs(ctx context.Context, l *lab.Lab, node string, smLID uint16, trap uint16, smKey uint64, begin, end uint16) (uint16, error) {
	rec := make([]byte, 36)
	binary.BigEndian.PutUint16(rec[16:], begin)  // LIDRangeBegin
	binary.BigEndian.PutUint16(rec[18:], end)    // LIDRangeEnd
	rec[22] = 1                                  // IsGeneric
	rec[23] = 1                                  // Subscribe
	binary.BigEndian.PutUint16(rec[24:], 0xffff) // Type: any
	binary.BigEndian.PutUint16(rec[26:], trap)
	rec[33], rec[34], rec[35] = 0xff, 0xff, 0xff // ProducerType: any
	return saSet(ctx, l, node, smLID, attrInformInfo, 0, smKey, rec)
}
