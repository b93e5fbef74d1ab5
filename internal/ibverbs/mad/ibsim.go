package mad

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"syscall"
	"time"
)

// ibsim's socket protocol (ibsim 0.10, include/ibsim.h): unix datagram sockets
// in the abstract namespace. Control messages are struct sim_ctl in host byte
// order; MADs travel in struct sim_request with big-endian fields.
const (
	ibsimMagic      = 0xdeadbeef
	ibsimCtlSize    = 80 // u32 magic, clientid, type, len; 64 bytes data
	ibsimCtlConnect = 1
	ibsimCtlDisconn = 2
	ibsimCtlError   = 0
	ibsimReqSize    = 32 + Size // dlid, slid, dqp, sqp, status, pad, u64 length, mad
	ibsimMaxClients = 10
	ibsimNoReply    = 110 // status ibsim puts on a MAD it dropped (ETIMEDOUT)
)

// IbsimOptions configure DialIbsim.
type IbsimOptions struct {
	// SockName is ibsim's socket base name; empty means the environment
	// variable IBSIM_SOCKNAME, else "sim" (what libumad2sim does).
	SockName string
	// Node is the topology node name to attach at, e.g. "HcaA"; empty means
	// the first node of ibsim's topology file.
	Node string
	Options
}

// Ibsim is a Transport speaking ibsim's socket protocol directly: Go cannot
// use the LD_PRELOAD shim that C tools use, because it makes raw system calls.
type Ibsim struct {
	*engine
	// Node is the node ibsim attached this client to.
	Node string
	// Slot is the ibsim client slot (0-9) this transport holds until Close.
	Slot int
}

var _ Transport = (*Ibsim)(nil)

func abstractAddr(name string) *net.UnixAddr {
	// Go maps a leading '@' to the abstract namespace's leading NUL; ibsim's
	// names also carry a trailing NUL in the address.
	return &net.UnixAddr{Name: "@" + name + "\x00", Net: "unixgram"}
}

// DialIbsim attaches to a running ibsim as a client at opts.Node. The
// transport holds one of ibsim's 10 client slots until Close; ibsim does not
// free the slot of a client that exits without disconnecting.
func DialIbsim(ctx context.Context, opts IbsimOptions) (*Ibsim, error) {
	base := opts.SockName
	if base == "" {
		base = os.Getenv("IBSIM_SOCKNAME")
	}
	if base == "" {
		base = "sim"
	}
	if len(opts.Node) > 31 {
		return nil, fmt.Errorf("ibsim: node name %q longer than 31 bytes", opts.Node)
	}
	server := abstractAddr(base + ":ctl")

	// Client ID: any number unique among ibsim's clients; ibsim prints it as
	// a signed int, so keep it positive. Retry when the name is taken.
	var (
		id   uint32
		ctl  *net.UnixConn
		data *net.UnixConn
		err  error
	)
	for range 16 {
		id = uint32(rand.Int32N(1<<31-1)) + 1
		ctl, err = net.ListenUnixgram("unixgram", abstractAddr(fmt.Sprintf("%s:ctl%d", base, id)))
		if err != nil {
			if errors.Is(err, syscall.EADDRINUSE) {
				continue
			}
			return nil, fmt.Errorf("ibsim: bind control socket: %w", err)
		}
		// The data socket must exist before CONNECT: ibsim connects its
		// per-slot socket to BASE:inID while handling CONNECT.
		data, err = net.ListenUnixgram("unixgram", abstractAddr(fmt.Sprintf("%s:in%d", base, id)))
		if err != nil {
			ctl.Close()
			if errors.Is(err, syscall.EADDRINUSE) {
				continue
			}
			return nil, fmt.Errorf("ibsim: bind data socket: %w", err)
		}
		break
	}
	if data == nil {
		return nil, fmt.Errorf("ibsim: no free client socket name: %w", err)
	}
	c := &ibsimClient{base: base, server: server, ctl: ctl, data: data, slot: -1}

	var info [44]byte // struct sim_client_info: u32 id, qp, issm; char nodeid[32]
	binary.NativeEndian.PutUint32(info[0:], id)
	copy(info[12:43], opts.Node)
	reply, err := c.ctlCall(ctx, ibsimCtlConnect, 0, info[:])
	if err != nil {
		c.closeSockets()
		if errors.Is(err, errIbsimRefused) {
			where := "the default node"
			if opts.Node != "" {
				where = fmt.Sprintf("node %q", opts.Node)
			}
			return nil, fmt.Errorf("ibsim %q refused to attach a client at %s: the node does not exist or all %d client slots are taken (ibsim's Attached console command lists them)", base, where, ibsimMaxClients)
		}
		return nil, err
	}
	c.slot = int(binary.NativeEndian.Uint32(reply[0:]))
	node := string(bytes.TrimRight(reply[12:44], "\x00"))
	if c.slot < 0 || c.slot >= ibsimMaxClients {
		c.closeSockets()
		return nil, fmt.Errorf("ibsim: CONNECT assigned slot %d, want 0-%d", c.slot, ibsimMaxClients-1)
	}
	c.out = abstractAddr(fmt.Sprintf("%s:out%d", base, c.slot))
	return &Ibsim{engine: newEngine(c, opts.Options, rand.Uint32()), Node: node, Slot: c.slot}, nil
}

var errIbsimRefused = errors.New("ibsim answered with an error")

// ibsimClient is the endpoint: one control and one data socket.
type ibsimClient struct {
	base   string
	server *net.UnixAddr
	out    *net.UnixAddr
	ctl    *net.UnixConn
	data   *net.UnixConn
	slot   int
}

func (c *ibsimClient) name() string { return fmt.Sprintf("ibsim %q", c.base) }

// ctlCall sends one control message and returns the reply's data.
func (c *ibsimClient) ctlCall(ctx context.Context, typ uint32, slot int, data []byte) ([]byte, error) {
	var m [ibsimCtlSize]byte
	ne := binary.NativeEndian
	ne.PutUint32(m[0:], ibsimMagic)
	ne.PutUint32(m[4:], uint32(slot))
	ne.PutUint32(m[8:], typ)
	ne.PutUint32(m[12:], uint32(len(data)))
	copy(m[16:], data)
	if _, err := c.ctl.WriteToUnix(m[:], c.server); err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT) {
			return nil, fmt.Errorf("ibsim: no simulator listening on socket %q (is ibsim running, with the same IBSIM_SOCKNAME?): %w", c.base, err)
		}
		return nil, fmt.Errorf("ibsim: control message: %w", err)
	}
	deadline := time.Now().Add(2 * time.Second)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	c.ctl.SetReadDeadline(deadline)
	var r [ibsimCtlSize + 1]byte
	for {
		n, _, err := c.ctl.ReadFromUnix(r[:])
		if err != nil {
			return nil, fmt.Errorf("ibsim %q: no answer to control message %d: %w", c.base, typ, err)
		}
		if n != ibsimCtlSize || ne.Uint32(r[0:]) != ibsimMagic {
			continue // not a control reply; ignore
		}
		if ne.Uint32(r[8:]) == ibsimCtlError {
			return nil, errIbsimRefused
		}
		return append([]byte(nil), r[16:ibsimCtlSize]...), nil
	}
}

func (c *ibsimClient) send(mad []byte, req *Request, class Class, _ time.Duration) error {
	var b [ibsimReqSize]byte
	be := binary.BigEndian
	dlid, slid := req.Addr.LID, uint16(0) // slid 0: ibsim fills in ours
	if class == ClassSubnDirected {
		dlid, slid = permissiveLID, permissiveLID
	}
	qp := uint32(0)
	if class == ClassPerf {
		qp = 1
	}
	be.PutUint16(b[0:], dlid) // u32 field, LID in its first two bytes
	be.PutUint16(b[4:], slid)
	be.PutUint32(b[8:], qp)  // dqp
	be.PutUint32(b[12:], qp) // sqp
	be.PutUint32(b[16:], 0)  // status
	be.PutUint64(b[24:], Size)
	copy(b[32:], mad)
	_, err := c.data.WriteToUnix(b[:], c.out)
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT) {
		return fmt.Errorf("ibsim is not running any more (or dropped client slot %d): %w", c.slot, err)
	}
	return err
}

func (c *ibsimClient) recv() (frame, error) {
	var b [ibsimReqSize + 1]byte
	for {
		n, _, err := c.data.ReadFromUnix(b[:])
		if err != nil {
			return frame{}, err
		}
		if n != ibsimReqSize {
			continue // not a sim_request; ignore
		}
		status := binary.BigEndian.Uint32(b[16:])
		return frame{mad: append([]byte(nil), b[32:ibsimReqSize]...), dropped: status != 0}, nil
	}
}

func (c *ibsimClient) close() error {
	// Always give the slot back: ibsim has 10 and never reclaims them.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err := c.ctlCall(ctx, ibsimCtlDisconn, c.slot, nil)
	c.closeSockets()
	if err != nil {
		return fmt.Errorf("ibsim: disconnect slot %d: %w", c.slot, err)
	}
	return nil
}

func (c *ibsimClient) closeSockets() {
	c.ctl.Close()
	c.data.Close()
}
