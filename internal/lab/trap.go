package lab

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"

	"github.com/ibkey/ibkey/internal/ibverbs/mad"
)

// Traps for tests: a port reports a P_Key or Q_Key violation to the SM with a
// SubnTrap(Notice) SMP (IBA 14.2.5.1, 14.3.1; the shipped codec refuses to encode
// a Trap). The layout is libibmad's and OpenSM's ib_mad_notice_attr_t: byte 0 IsGeneric
// (bit 7) and Type, bytes 1-3 ProducerType, 4-5 TrapNumber, 6-7 IssuerLID, 8-9
// NoticeToggle/NoticeCount, 10-63 the data details. ibsim hands a LID-routed SMP it
// has no handler for (Notice) to the client that is the SM (ibsim/sim_mad.c
// process_packet, find_client) and fills in the sender's LID as the source.

// Notice types and producers (IBA 13.4.8.2, table 119).
const (
	noticeTypeSecurity = 2
	producerCA         = 1
	methodTrap         = 0x05
	attrNotice         = 0x0002
)

// Trap is one security notice (traps 256-259) to send.
type Trap struct {
	Number    uint16
	Producer  uint32 // 1 a CA, 2 a switch (IBA 13.4.8.2, table 119)
	IssuerLID uint16
	Details   [54]byte
}

// BadKeyTrap is trap 257 (Bad P_Key, pkey true) or 258 (Bad Q_Key): a port dropped a
// packet from lid1/qp1 to lid2/qp2 carrying key on service level sl (IBA 14.3.1,
// table 180: the 24-bit QP numbers, SL in the top 4 bits of QP1's word).
func BadKeyTrap(pkey bool, issuer, lid1, lid2 uint16, key uint32, sl uint8, qp1, qp2 uint32, gid1, gid2 mad.GID) Trap {
	t := Trap{Number: 258, Producer: producerCA, IssuerLID: issuer}
	if pkey {
		t.Number = 257
	}
	d := t.Details[:]
	be := binary.BigEndian
	be.PutUint16(d[2:], lid1)
	be.PutUint16(d[4:], lid2)
	be.PutUint32(d[6:], key)
	be.PutUint32(d[10:], uint32(sl)<<28|qp1&0xffffff)
	be.PutUint32(d[14:], qp2&0xffffff)
	copy(d[18:34], gid1[:])
	copy(d[34:50], gid2[:])
	return t
}

// SendTrap sends t, a SubnTrap(Notice) SMP LID-routed to the SM at smLID, from a
// client attached at node (the trap's source LID is node's). The SM answers with a
// TrapRepress, which ibsim drops ("got trap repress - dropping"), so nothing comes
// back: wait for the SM's log.
func (l *Lab) SendTrap(ctx context.Context, node string, smLID uint16, t Trap) error {
	b := NewMAD(classSubnLID, 1, methodTrap, rand.Uint64()>>1, attrNotice)
	n := b[offData:]
	n[0] = 0x80 | noticeTypeSecurity // IsGeneric
	n[1], n[2], n[3] = byte(t.Producer>>16), byte(t.Producer>>8), byte(t.Producer)
	binary.BigEndian.PutUint16(n[4:], t.Number)
	binary.BigEndian.PutUint16(n[6:], t.IssuerLID)
	copy(n[10:64], t.Details[:])
	if _, err := l.Send(ctx, node, smLID, 0, b, false); err != nil {
		return fmt.Errorf("lab: trap %d: %w", t.Number, err)
	}
	return nil
}
