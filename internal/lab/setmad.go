package lab

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
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

// EncodePKeyBlock lays out one P_KeyTable block (IBA 14.2.5.7): 32 big-endian
// entries, the inverse of mad.ParsePKeyBlock.
func EncodePKeyBlock(blk [mad.PKeysPerBlock]uint16) []byte {
	d := make([]byte, 2*mad.PKeysPerBlock)
	for i, v := range blk {
		binary.BigEndian.PutUint16(d[2*i:], v)
	}
	return d
}

// EncodeSetPKeyBlock encodes a SubnSet(P_KeyTable) SMP for block of port at a
// (LID-routed or a pure directed route from the attaching node).
func EncodeSetPKeyBlock(a mad.Address, port uint8, block uint16, entries [mad.PKeysPerBlock]uint16, tid uint64) ([]byte, error) {
	if a.Directed && len(a.Path) > mad.MaxHops {
		return nil, fmt.Errorf("lab: directed route of %d hops, at most %d", len(a.Path), mad.MaxHops)
	}
	if !a.Directed && (a.LID == 0 || a.LID >= 0xc000) {
		return nil, fmt.Errorf("lab: LID %d is not a unicast destination", a.LID)
	}
	b := make([]byte, mad.Size)
	b[0] = 1 // base version
	b[offClass] = classSubnLID
	b[offClassVer] = 1
	b[offMethod] = methodSubnSet
	binary.BigEndian.PutUint64(b[offTID:], tid)
	binary.BigEndian.PutUint16(b[offAttrID:], attrPKeyTable)
	binary.BigEndian.PutUint32(b[offAttrMod:], mad.PKeyTableModifier(block, port))
	copy(b[offData:], EncodePKeyBlock(entries))
	if a.Directed {
		b[offClass] = classSubnDR
		b[offHopCount] = byte(len(a.Path))
		binary.BigEndian.PutUint16(b[offDrSLID:], permissiveLID)
		binary.BigEndian.PutUint16(b[offDrDLID:], permissiveLID)
		copy(b[offInitialPath+1:], a.Path)
	}
	return b, nil
}

// SetPKeyBlock writes one P_KeyTable block of port at a with a SubnSet sent
// from its own ibsim client attached at node ("" = ibsim's first node) on the
// simulator with socket base name sockName. It holds one of ibsim's 10 client
// slots only for the call. The reply must be a GetResp with status 0.
func SetPKeyBlock(ctx context.Context, sockName, node string, a mad.Address, port uint8, block uint16, entries [mad.PKeysPerBlock]uint16) error {
	if sockName == "" {
		sockName = "sim"
	}
	if len(node) > 31 {
		return fmt.Errorf("lab: node name %q longer than 31 bytes", node)
	}
	deadline := time.Now().Add(simTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	addr := func(name string) *net.UnixAddr {
		return &net.UnixAddr{Name: "@" + sockName + ":" + name + "\x00", Net: "unixgram"}
	}
	id := uint32(rand.Int32N(1<<31-2)) + 1
	ctl, err := net.ListenUnixgram("unixgram", addr(fmt.Sprintf("ctl%d", id)))
	if err != nil {
		return fmt.Errorf("lab: ibsim control socket: %w", err)
	}
	defer ctl.Close()
	data, err := net.ListenUnixgram("unixgram", addr(fmt.Sprintf("in%d", id)))
	if err != nil {
		return fmt.Errorf("lab: ibsim data socket: %w", err)
	}
	defer data.Close()
	ctl.SetDeadline(deadline)
	data.SetDeadline(deadline)

	call := func(typ, client uint32, payload []byte) ([]byte, error) {
		var m [simCtlSize]byte
		ne := binary.NativeEndian
		ne.PutUint32(m[0:], simMagic)
		ne.PutUint32(m[4:], client)
		ne.PutUint32(m[8:], typ)
		ne.PutUint32(m[12:], uint32(len(payload)))
		copy(m[16:], payload)
		if _, err := ctl.WriteToUnix(m[:], addr("ctl")); err != nil {
			return nil, err
		}
		var r [simCtlSize + 1]byte
		for {
			n, _, err := ctl.ReadFromUnix(r[:])
			if err != nil {
				return nil, err
			}
			if n != simCtlSize || ne.Uint32(r[0:]) != simMagic {
				continue
			}
			if ne.Uint32(r[8:]) == simCtlError {
				return nil, errors.New("ibsim answered with an error")
			}
			return append([]byte(nil), r[16:simCtlSize]...), nil
		}
	}

	var info [44]byte // struct sim_client_info: u32 id, qp, issm; char nodeid[32]
	binary.NativeEndian.PutUint32(info[0:], id)
	copy(info[12:43], node)
	reply, err := call(simCtlConnect, 0, info[:])
	if err != nil {
		return fmt.Errorf("lab: ibsim %q: CONNECT at node %q: %w", sockName, node, err)
	}
	slot := binary.NativeEndian.Uint32(reply[0:])
	defer func() {
		ctl.SetDeadline(time.Now().Add(time.Second))
		call(simCtlDisconn, slot, nil)
	}()

	tid := rand.Uint64() >> 1
	m, err := EncodeSetPKeyBlock(a, port, block, entries, tid)
	if err != nil {
		return err
	}
	req := make([]byte, simHdrSize+mad.Size)
	be := binary.BigEndian
	dlid, slid := a.LID, uint16(0)
	if a.Directed {
		dlid, slid = permissiveLID, permissiveLID
	}
	be.PutUint16(req[0:], dlid)
	be.PutUint16(req[4:], slid)
	be.PutUint64(req[24:], mad.Size)
	copy(req[simHdrSize:], m)
	if _, err := data.WriteToUnix(req, addr(fmt.Sprintf("out%d", slot))); err != nil {
		return fmt.Errorf("lab: send SubnSet to ibsim slot %d: %w", slot, err)
	}
	buf := make([]byte, simHdrSize+mad.Size+1)
	for {
		n, _, err := data.ReadFromUnix(buf)
		if err != nil {
			return fmt.Errorf("lab: SubnSet(P_KeyTable) %s port %d block %d: no reply: %w", a, port, block, err)
		}
		if n != simHdrSize+mad.Size {
			continue
		}
		if st := be.Uint32(buf[16:]); st != 0 {
			return fmt.Errorf("lab: SubnSet(P_KeyTable) %s port %d block %d: ibsim dropped it (status %d)", a, port, block, st)
		}
		p, err := mad.Decode(buf[simHdrSize:n])
		if err != nil {
			return fmt.Errorf("lab: SubnSet reply: %w", err)
		}
		if uint32(p.TID) != uint32(tid) { // low 32 bits: what mad's engine matches too
			continue
		}
		if p.Method != mad.MethodGetResp || p.Status != 0 {
			return fmt.Errorf("lab: SubnSet(P_KeyTable) %s port %d block %d: %s, status 0x%04x (%s)", a, port, block, p.Method, p.Status, mad.StatusText(p.Status))
		}
		got, err := mad.ParsePKeyBlock(p.Data)
		if err != nil {
			return err
		}
		if !bytes.Equal(EncodePKeyBlock(got), EncodePKeyBlock(entries)) {
			return fmt.Errorf("lab: SubnSet(P_KeyTable) %s port %d block %d: reply shows %04x, want %04x", a, port, block, got, entries)
		}
		return nil
	}
}

// SetPKeyBlock is SetPKeyBlock on this lab's simulator.
func (l *Lab) SetPKeyBlock(ctx context.Context, node string, a mad.Address, port uint8, block uint16, entries [mad.PKeysPerBlock]uint16) error {
	return SetPKeyBlock(ctx, l.SockName, node, a, port, block, entries)
}
