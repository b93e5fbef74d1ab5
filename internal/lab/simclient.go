package lab

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"time"

	"github.com/ibkey/ibkey/internal/ibverbs/mad"
)

// simClient is the lab's own small client of ibsim's socket protocol, for what the
// shipped codec refuses to encode (Set, Trap): it holds one of ibsim's 10 client slots
// from dialSim until close (Send: one slot per call). See setmad.go for the protocol.
type simClient struct {
	sockName string
	ctl      *net.UnixConn
	data     *net.UnixConn
	slot     uint32
	deadline time.Time
}

func simAddr(sockName, name string) *net.UnixAddr {
	return &net.UnixAddr{Name: "@" + sockName + ":" + name + "\x00", Net: "unixgram"}
}

// dialSim attaches a client at node ("" = ibsim's first node) of the simulator with
// socket base name sockName. Every call on it ends by the earlier of ctx's deadline
// and simTimeout from now.
func dialSim(ctx context.Context, sockName, node string) (*simClient, error) {
	if len(node) > 31 {
		return nil, fmt.Errorf("lab: node name %q longer than 31 bytes", node)
	}
	c := &simClient{sockName: sockName, deadline: time.Now().Add(simTimeout)}
	if d, ok := ctx.Deadline(); ok && d.Before(c.deadline) {
		c.deadline = d
	}
	id := uint32(rand.Int32N(1<<31-2)) + 1
	var err error
	if c.ctl, err = net.ListenUnixgram("unixgram", simAddr(sockName, fmt.Sprintf("ctl%d", id))); err != nil {
		return nil, fmt.Errorf("lab: ibsim control socket: %w", err)
	}
	if c.data, err = net.ListenUnixgram("unixgram", simAddr(sockName, fmt.Sprintf("in%d", id))); err != nil {
		c.ctl.Close()
		return nil, fmt.Errorf("lab: ibsim data socket: %w", err)
	}
	c.ctl.SetDeadline(c.deadline)
	c.data.SetDeadline(c.deadline)
	var info [44]byte // struct sim_client_info: u32 id, qp, issm; char nodeid[32]
	binary.NativeEndian.PutUint32(info[0:], id)
	copy(info[12:43], node)
	reply, err := c.call(simCtlConnect, 0, info[:])
	if err != nil {
		c.ctl.Close()
		c.data.Close()
		return nil, fmt.Errorf("lab: ibsim %q: CONNECT at node %q: %w", sockName, node, err)
	}
	c.slot = binary.NativeEndian.Uint32(reply[0:])
	return c, nil
}

// call sends one control message and returns the reply's data.
func (c *simClient) call(typ, client uint32, payload []byte) ([]byte, error) {
	var m [simCtlSize]byte
	ne := binary.NativeEndian
	ne.PutUint32(m[0:], simMagic)
	ne.PutUint32(m[4:], client)
	ne.PutUint32(m[8:], typ)
	ne.PutUint32(m[12:], uint32(len(payload)))
	copy(m[16:], payload)
	if _, err := c.ctl.WriteToUnix(m[:], simAddr(c.sockName, "ctl")); err != nil {
		return nil, err
	}
	var r [simCtlSize + 1]byte
	for {
		n, _, err := c.ctl.ReadFromUnix(r[:])
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

// send writes one MAD (256 bytes) to dlid on QP dqp (0 SMPs, 1 GSI). dlid 0xffff is a
// directed route; slid is then permissive too, else 0 (ibsim fills in the client's).
func (c *simClient) send(dlid uint16, dqp uint32, m []byte) error {
	req := make([]byte, simHdrSize+mad.Size)
	be := binary.BigEndian
	slid := uint16(0)
	if dlid == permissiveLID {
		slid = permissiveLID
	}
	be.PutUint16(req[0:], dlid)
	be.PutUint16(req[4:], slid)
	be.PutUint32(req[8:], dqp)
	be.PutUint32(req[12:], dqp)
	be.PutUint64(req[24:], mad.Size)
	copy(req[simHdrSize:], m)
	if _, err := c.data.WriteToUnix(req, simAddr(c.sockName, fmt.Sprintf("out%d", c.slot))); err != nil {
		return fmt.Errorf("lab: send to ibsim slot %d: %w", c.slot, err)
	}
	return nil
}

// recv reads MADs until one carries the low 32 bits of tid (what mad's engine
// matches too: ibsim puts its client id in the high bits) and returns it; status is
// ibsim's (110: dropped, no route).
func (c *simClient) recv(tid uint64) (m []byte, status uint32, err error) {
	buf := make([]byte, simHdrSize+mad.Size+1)
	for {
		n, _, err := c.data.ReadFromUnix(buf)
		if err != nil {
			return nil, 0, err
		}
		if n != simHdrSize+mad.Size {
			continue
		}
		if binary.BigEndian.Uint32(buf[simHdrSize+offTID+4:]) != uint32(tid) {
			continue
		}
		return append([]byte(nil), buf[simHdrSize:n]...), binary.BigEndian.Uint32(buf[16:]), nil
	}
}

// sync returns once ibsim has handled every MAD this client sent before it: ibsim
// reads a client's MADs from its socket in order, so the answer to a Get of the local
// node's NodeInfo (a zero-hop directed route) comes after it handled the earlier
// ones. A MAD that gets no answer (a trap) must be followed by sync before close:
// ibsim handles the control socket's DISCONNECT apart from the data socket and would
// otherwise drop the MAD of a slot already gone.
func (c *simClient) sync() error {
	tid := rand.Uint64() >> 1
	b := NewMAD(classSubnDR, 1, 0x01, tid, 0x0011) // Get(NodeInfo)
	binary.BigEndian.PutUint16(b[offDrSLID:], permissiveLID)
	binary.BigEndian.PutUint16(b[offDrDLID:], permissiveLID)
	if err := c.send(permissiveLID, 0, b); err != nil {
		return err
	}
	_, _, err := c.recv(tid)
	return err
}

// Send sends the MAD m (its transaction ID set) from a client of this lab's ibsim
// attached at node ("" = ibsim's first node) to dlid on QP dqp (0 SMPs, 1 GSI; dlid
// 0xffff: a directed route), holding one of ibsim's 10 client slots only for the call.
// With reply it returns the MAD that answers m (by its transaction ID); without, nil
// once ibsim has handled m (a trap, which nothing answers).
func (l *Lab) Send(ctx context.Context, node string, dlid uint16, dqp uint32, m []byte, reply bool) ([]byte, error) {
	c, err := dialSim(ctx, l.SockName, node)
	if err != nil {
		return nil, err
	}
	defer c.close()
	if err := c.send(dlid, dqp, m); err != nil {
		return nil, err
	}
	if !reply {
		return nil, c.sync()
	}
	r, st, err := c.recv(binary.BigEndian.Uint64(m[offTID:]))
	switch {
	case err != nil:
		return nil, fmt.Errorf("no reply: %w", err)
	case st != 0:
		return nil, fmt.Errorf("ibsim dropped it (status %d)", st)
	}
	return r, nil
}

// close gives the slot back (ibsim never frees the slot of a client that died).
func (c *simClient) close() {
	c.ctl.SetDeadline(time.Now().Add(time.Second))
	c.call(simCtlDisconn, c.slot, nil)
	c.ctl.Close()
	c.data.Close()
}
