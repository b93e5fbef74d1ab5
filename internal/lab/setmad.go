package lab

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/ibkey/ibkey/internal/ibverbs/mad"
)

// The Set path lives here, in a package only tests import, and not in
// internal/ibverbs/mad: mad.Request.Marshal refuses every method but Get, so
// the shipped binary cannot encode a Set. ibsim accepts a SubnSet(P_KeyTable)
// from any client (it does not check that the sender is the SM), which is how
// tests inject tables that OpenSM would never program.
//
// This is a deliberately small second client of ibsim's socket protocol
// (ibsim 0.10 include/ibsim.h and ibsim/sim_net.c): bind BASE:ctlID and
// BASE:inID, CONNECT on BASE:ctl, send struct sim_request to BASE:outSLOT,
// DISCONNECT when done. Control messages are host byte order, sim_request
// fields big-endian.
const (
	simMagic      = 0xdeadbeef
	simCtlSize    = 80 // u32 magic, clientid, type, len; 64 bytes data
	simCtlError   = 0
	simCtlConnect = 1
	simCtlDisconn = 2
	simHdrSize    = 32 // dlid, slid, dqp, sqp, status, pad, u64 length
	simTimeout    = 5 * time.Second
	permissiveLID = 0xffff
)

// MAD header offsets (IBA 13.4.2 common header, 14.2.1.2 directed-route SMP).
const (
	offClass       = 1
	offClassVer    = 2
	offMethod      = 3
	offHopCount    = 7
	offTID         = 8
	offAttrID      = 16
	offAttrMod     = 20
	offDrSLID      = 32
	offDrDLID      = 34
	offData        = 64
	offInitialPath = 128
	methodSubnSet  = 0x02 // IBA 13.4.5 table 97
	attrPKeyTable  = 0x0016
	classSubnLID   = 0x01
	classSubnDR    = 0x81
)

// NewMAD is a MAD with its common header (IBA 13.4.2) filled in: base version 1,
// management class and class version, method, transaction ID, attribute ID.
func NewMAD(class, classVer, method byte, tid uint64, attr uint16) []byte {
	b := make([]byte, mad.Size)
	b[0], b[offClass], b[offClassVer], b[offMethod] = 1, class, classVer, method
	binary.BigEndian.PutUint64(b[offTID:], tid)
	binary.BigEndian.PutUint16(b[offAttrID:], attr)
	return b
}

// SetPKeyBlock writes one P_KeyTable block (IBA 14.2.5.7: 32 big-endian entries) of
// port at a (LID-routed or a pure directed route from the attaching node) with a
// SubnSet sent from its own client of this lab's ibsim attached at node ("" = ibsim's
// first node). It holds one of ibsim's 10 client slots only for the call. The reply
// must be a GetResp with status 0 showing entries.
func (l *Lab) SetPKeyBlock(ctx context.Context, node string, a mad.Address, port uint8, block uint16, entries [mad.PKeysPerBlock]uint16) error {
	if a.Directed && len(a.Path) > mad.MaxHops {
		return fmt.Errorf("lab: directed route of %d hops, at most %d", len(a.Path), mad.MaxHops)
	}
	if !a.Directed && (a.LID == 0 || a.LID >= 0xc000) {
		return fmt.Errorf("lab: LID %d is not a unicast destination", a.LID)
	}
	m := NewMAD(classSubnLID, 1, methodSubnSet, rand.Uint64()>>1, attrPKeyTable)
	binary.BigEndian.PutUint32(m[offAttrMod:], mad.PKeyTableModifier(block, port))
	for i, v := range entries {
		binary.BigEndian.PutUint16(m[offData+2*i:], v)
	}
	dlid := a.LID
	if a.Directed {
		m[offClass] = classSubnDR
		m[offHopCount] = byte(len(a.Path))
		binary.BigEndian.PutUint16(m[offDrSLID:], permissiveLID)
		binary.BigEndian.PutUint16(m[offDrDLID:], permissiveLID)
		copy(m[offInitialPath+1:], a.Path)
		dlid = permissiveLID
	}
	reply, err := l.Send(ctx, node, dlid, 0, m, true)
	if err != nil {
		return fmt.Errorf("lab: SubnSet(P_KeyTable) %s port %d block %d: %w", a, port, block, err)
	}
	p, err := mad.Decode(reply)
	if err != nil {
		return fmt.Errorf("lab: SubnSet reply: %w", err)
	}
	if p.Method != mad.MethodGetResp || p.Status != 0 {
		return fmt.Errorf("lab: SubnSet(P_KeyTable) %s port %d block %d: %s, status 0x%04x (%s)", a, port, block, p.Method, p.Status, mad.StatusText(p.Status))
	}
	got, err := mad.ParsePKeyBlock(p.Data)
	if err != nil {
		return err
	}
	if got != entries {
		return fmt.Errorf("lab: SubnSet(P_KeyTable) %s port %d block %d: reply shows %04x, want %04x", a, port, block, got, entries)
	}
	return nil
}
