//go:build linux

package mad

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"golang.org/x/sys/unix"
)

// ibsim's socket protocol (ibsim 0.10, include/ibsim.h, ibsim/ibsim.c): unix
// datagram sockets in the abstract namespace. Control messages are struct
// sim_ctl in host byte order; MADs travel in struct sim_request with
// big-endian fields.
const (
	ibsimMagic      = 0xdeadbeef
	ibsimCtlSize    = 80 // u32 magic, clientid, type, len; 64 bytes data
	ibsimCtlConnect = 1
	ibsimCtlDisconn = 2
	ibsimCtlError   = 0
	ibsimReqSize    = 32 + Size // dlid, slid, dqp, sqp, status, pad, u64 length, mad
	ibsimMaxClients = 10
	ibsimNoReply    = 110 // status ibsim puts on a MAD it dropped (ETIMEDOUT)
	// ibsimCtlTimeout bounds each control exchange (ibsim answers in
	// microseconds when it runs).
	ibsimCtlTimeout = 2 * time.Second
)

var _ Exchanger = (*Ibsim)(nil)

// abstractAddr is ibsim's name for a socket: a leading NUL (x/sys/unix maps
// '@' to it) and a trailing NUL that is part of the address (ibsim's
// make_name counts it).
func abstractAddr(name string) *unix.SockaddrUnix {
	return &unix.SockaddrUnix{Name: "@" + name + "\x00"}
}

// DialIbsim attaches to a running ibsim as a client at opts.Node. The
// transport holds one of ibsim's 10 client slots until Close; ibsim does not
// free the slot of a client that exits without disconnecting. ctx bounds the
// attach (each control exchange also gives up after 2s).
//
// Before it asks for a slot, DialIbsim checks that ibsim answers at all: a
// CONNECT left in the queue of a stopped ibsim is handled when it resumes and
// takes a slot no one frees (pinDataSocket keeps ibsim itself alive through it).
func DialIbsim(ctx context.Context, opts IbsimOptions) (*Ibsim, error) {
	base := opts.SockName
	if len(opts.Node) > MaxSimNodeLen {
		return nil, fmt.Errorf("ibsim: node name %q longer than %d bytes", opts.Node, MaxSimNodeLen)
	}
	c := &ibsimClient{base: base, server: abstractAddr(base + ":ctl"), ctl: -1, data: -1, ev: -1, slot: -1}

	// Client ID: any number unique among ibsim's clients; ibsim prints it as
	// a signed int, so keep it positive. Retry when the name is taken.
	var id uint32
	var err error
	for range 16 {
		id = uint32(rand.Int32N(1<<31-1)) + 1
		if err = c.bind(id); err == nil {
			break
		}
		c.closeSockets()
		if !errors.Is(err, unix.EADDRINUSE) {
			return nil, err
		}
	}
	if err != nil {
		return nil, fmt.Errorf("ibsim: no free client socket name: %w", err)
	}

	// Is ibsim there and running? (probe: silent, as a CONNECT is.)
	if err := c.probe(ctx); err != nil {
		c.closeSockets()
		return nil, err
	}

	var info [44]byte // struct sim_client_info: u32 id, qp, issm; char nodeid[32]
	binary.NativeEndian.PutUint32(info[0:], id)
	copy(info[12:43], opts.Node)
	reply, err := c.ctlCall(ctx, ibsimCtlConnect, 0, info[:])
	if err != nil {
		c.closeSockets()
		if errors.Is(err, errIbsimNoAnswer) {
			// The CONNECT is in ibsim's queue and cannot be withdrawn: when ibsim
			// resumes it attaches a client with our id to a slot that no one frees
			// (ibsim/ibsim.c sim_ctl_new_client assigns it; only a DISCONNECT naming
			// the slot, which only its answer tells, or the console frees it).
			return nil, fmt.Errorf("%w; when ibsim resumes it will attach client pid %d to a slot no one frees: its console command Attached lists it, X SLOT frees it", err, id)
		}
		if errors.Is(err, errIbsimRefused) && opts.Node != "" {
			if err := noSimNode(ctx, opts); err != nil {
				return nil, err
			}
		}
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
	// Connect the data socket to our slot's socket: sends need no address
	// and only ibsim's replies are received.
	if err := unix.Connect(c.data, abstractAddr(fmt.Sprintf("%s:out%d", base, c.slot))); err != nil {
		c.close()
		return nil, fmt.Errorf("ibsim: connect to client slot %d: %w", c.slot, err)
	}
	if err := ctx.Err(); err != nil {
		// Cancelled while attaching: the slot was assigned; give it back now.
		c.close()
		return nil, fmt.Errorf("ibsim: attaching: %w", context.Cause(ctx))
	}
	return &Ibsim{engine: newEngine(c, ibsimWindow, opts.Options, rand.Uint32()), Node: node, Slot: c.slot}, nil
}

// noSimNode is a *NoSimNodeError when ibsim, having refused to attach at opts.Node,
// attaches a client at its default node (given back at once); nil when it refuses
// that too (its slots are taken, or it is gone).
func noSimNode(ctx context.Context, opts IbsimOptions) error {
	def := opts
	def.Node = ""
	t, err := DialIbsim(ctx, def)
	if err != nil {
		return nil
	}
	node := t.Node
	if err := t.Close(); err != nil {
		return nil
	}
	return &NoSimNodeError{SockName: opts.SockName, Node: opts.Node, Default: node}
}

var (
	errIbsimRefused  = errors.New("ibsim answered with an error")
	errIbsimNoAnswer = errors.New("no answer")
)

// ibsimClient is the endpoint: one control and one data socket, non-blocking,
// and an eventfd that wakes the engine's loop.
type ibsimClient struct {
	base   string
	server *unix.SockaddrUnix
	ctl    int
	data   int
	ev     int
	slot   int
}

func (c *ibsimClient) name() string { return fmt.Sprintf("ibsim %q", c.base) }

func dgramSocket() (int, error) {
	return unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
}

// bind creates and binds the client's sockets BASE:ctlID and BASE:inID. The
// data socket must exist before CONNECT: ibsim connects its per-slot socket
// to BASE:inID while handling CONNECT.
func (c *ibsimClient) bind(id uint32) error {
	var err error
	if c.ev, err = unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC); err != nil {
		return fmt.Errorf("ibsim: eventfd: %w", err)
	}
	if c.ctl, err = dgramSocket(); err != nil {
		return fmt.Errorf("ibsim: control socket: %w", err)
	}
	if err := unix.Bind(c.ctl, abstractAddr(fmt.Sprintf("%s:ctl%d", c.base, id))); err != nil {
		return fmt.Errorf("ibsim: bind control socket: %w", err)
	}
	if c.data, err = dgramSocket(); err != nil {
		return fmt.Errorf("ibsim: data socket: %w", err)
	}
	if err := unix.Bind(c.data, abstractAddr(fmt.Sprintf("%s:in%d", c.base, id))); err != nil {
		return fmt.Errorf("ibsim: bind data socket: %w", err)
	}
	return nil
}

// ctlCall sends one control message and returns the reply's data. Both the
// send (ibsim's queue may be full when it is stopped) and the wait for the
// reply end at the earlier of ctx's deadline and ibsimCtlTimeout, and within
// 100ms of ctx being cancelled.
func (c *ibsimClient) ctlCall(ctx context.Context, typ uint32, slot int, data []byte) ([]byte, error) {
	var m [ibsimCtlSize]byte
	ne := binary.NativeEndian
	ne.PutUint32(m[0:], ibsimMagic)
	ne.PutUint32(m[4:], uint32(slot))
	ne.PutUint32(m[8:], typ)
	ne.PutUint32(m[12:], uint32(len(data)))
	copy(m[16:], data)
	deadline := ctlDeadline(ctx)
	what := map[uint32]string{ibsimCtlConnect: "CONNECT", ibsimCtlDisconn: "DISCONNECT"}[typ]
	if full, err := c.sendCtl(ctx, m[:], nil, deadline); full {
		return nil, fmt.Errorf("ibsim %q: cannot send %s: its control queue is full (is ibsim stopped?): %w", c.base, what, err)
	} else if err != nil {
		return nil, c.ctlError(err)
	}
	// Once a CONNECT is sent, its answer is awaited even when ctx is cancelled (a
	// signal): ibsim assigns the slot anyway, and a client that left without reading
	// the answer holds a slot no one frees. The wait is still bounded by deadline.
	waitCtx := ctx
	var pinErr error
	if typ == ibsimCtlConnect {
		waitCtx = context.WithoutCancel(ctx)
		// Not pinned: the answer is still awaited; only a client gone before it
		// comes leaves ibsim exposed, and the error then says so.
		pinErr = c.pinDataSocket(waitCtx, deadline)
	}
	var r [ibsimCtlSize + 1]byte
	for {
		n, _, err := unix.Recvfrom(c.ctl, r[:], unix.MSG_DONTWAIT)
		if errors.Is(err, unix.EAGAIN) {
			if err := waitFD(waitCtx, c.ctl, unix.POLLIN, deadline); err != nil {
				if pinErr != nil {
					return nil, fmt.Errorf("ibsim %q: %w to %s (is ibsim stopped?): %w; %w (ibsim may exit when it handles the CONNECT)", c.base, errIbsimNoAnswer, what, err, pinErr)
				}
				return nil, fmt.Errorf("ibsim %q: %w to %s (is ibsim stopped?): %w", c.base, errIbsimNoAnswer, what, err)
			}
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("ibsim %q: no answer to %s: %w", c.base, what, err)
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

// probe checks that ibsim is there and reads its control socket, without a word on
// its stderr: it sends a 1-byte datagram, which ibsim's sim_ctl reads and discards
// because it is not a struct sim_ctl (ibsim/ibsim.c: no reply, no warning), and waits
// until it has been read. A unix datagram stays charged to the sender's socket until
// the receiver reads it (SIOCOUTQ, unix(7)), so the sender sees when that happens. Any
// control type ibsim knows would either warn ("sim_ctl: bad ctl pkt type 0" for the
// error type, which the probe used to send) or act on a client slot. A stopped ibsim
// never reads it: the probe gives up at the earlier of ctx's deadline and
// ibsimCtlTimeout, before a CONNECT that ibsim would handle once resumed, giving a
// slot to a client that has left.
func (c *ibsimClient) probe(ctx context.Context) error {
	deadline := ctlDeadline(ctx)
	if full, err := c.sendCtl(ctx, []byte{0}, nil, deadline); full {
		return fmt.Errorf("ibsim %q: cannot reach it: its control queue is full (is ibsim stopped?): %w", c.base, err)
	} else if err != nil {
		return c.ctlError(err)
	}
	for pause := 50 * time.Microsecond; ; pause = min(2*pause, 5*time.Millisecond) {
		queued, err := unix.IoctlGetInt(c.ctl, unix.SIOCOUTQ)
		if err != nil {
			return fmt.Errorf("ibsim %q: SIOCOUTQ: %w", c.base, err)
		}
		if queued == 0 {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("ibsim %q: it did not read its control socket (is ibsim stopped?): attaching: %w", c.base, context.Cause(ctx))
		}
		if !time.Now().Before(deadline) {
			return fmt.Errorf("ibsim %q: %w: it did not read its control socket (is ibsim stopped?)", c.base, errIbsimNoAnswer)
		}
		// Not time.Sleep: with nothing else to run, the runtime waits for a timer in
		// epoll_pwait, whose timeout is in whole milliseconds (runtime/netpoll_epoll.go
		// rounds a shorter delay up to 1 ms), so every attach took a millisecond more
		// than ibsim needs to read the probe (tens of microseconds). nanosleep(2) waits
		// for the pause asked for.
		ts := unix.NsecToTimespec(pause.Nanoseconds())
		unix.Nanosleep(&ts, nil)
	}
}

// pinDataSocket keeps the client's data socket BASE:inID alive until ibsim has
// handled the CONNECT just sent, even if this process is gone by then: it sends
// ibsim's control socket a 1-byte datagram carrying the data socket's descriptor
// (SCM_RIGHTS, unix(7)). A descriptor in flight holds its socket, and with it the
// socket's abstract name, until the receiver reads the datagram. ibsim reads its
// control messages in order, one per loop (ibsim/ibsim.c sim_run): first the CONNECT,
// whose handler connects the slot's socket to BASE:inID and calls IBPANIC ("can't
// connect to in socket") if no socket has that name (sim_ctl_new_client), then this
// datagram, which sim_ctl discards unread because it is not a struct sim_ctl (and
// with it the descriptor). So a CONNECT left behind by a client that gave up on a
// stopped ibsim, or was killed, no longer ends ibsim. The CONNECT's own datagram
// cannot carry the descriptor: a descriptor ibsim does not take is released when its
// recvfrom returns, before the connect.
func (c *ibsimClient) pinDataSocket(ctx context.Context, deadline time.Time) error {
	full, err := c.sendCtl(ctx, []byte{0}, unix.UnixRights(c.data), deadline)
	if full {
		return fmt.Errorf("the CONNECT's socket could not be pinned: ibsim's control queue is full: %w", err)
	} else if err != nil {
		return fmt.Errorf("the CONNECT's socket could not be pinned: %w", err)
	}
	return nil
}

// ctlDeadline is when a control exchange gives up: ibsimCtlTimeout from now, or
// ctx's deadline when that comes first.
func ctlDeadline(ctx context.Context) time.Time {
	deadline := time.Now().Add(ibsimCtlTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	return deadline
}

// sendCtl sends one datagram (with the ancillary data oob, when not nil) to ibsim's
// control socket, waiting while its queue is full (ibsim stopped) until deadline or
// ctx's end. full says that the wait gave up; err is then the wait's error.
func (c *ibsimClient) sendCtl(ctx context.Context, b, oob []byte, deadline time.Time) (full bool, err error) {
	for {
		err := unix.Sendmsg(c.ctl, b, oob, c.server, unix.MSG_DONTWAIT)
		if !errors.Is(err, unix.EAGAIN) {
			return false, err
		}
		if err := waitFD(ctx, c.ctl, unix.POLLOUT, deadline); err != nil {
			return true, err
		}
	}
}

// ctlError explains a control message ibsim's socket refused.
func (c *ibsimClient) ctlError(err error) error {
	if errors.Is(err, unix.ECONNREFUSED) || errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("ibsim: no simulator listening on socket %q (is ibsim running, with the same IBSIM_SOCKNAME?): %w", c.base, err)
	}
	return fmt.Errorf("ibsim: control message: %w", err)
}

// errDeadline: a wait for a socket passed its deadline.
var errDeadline = errors.New("timed out")

// waitFD waits until fd is ready for events, the deadline passes or ctx ends.
func waitFD(ctx context.Context, fd int, events int16, deadline time.Time) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return errDeadline
		}
		ms := int(min(left, 100*time.Millisecond)/time.Millisecond) + 1
		fds := [1]unix.PollFd{{Fd: int32(fd), Events: events}}
		n, err := unix.Poll(fds[:], ms)
		if err != nil && !errors.Is(err, unix.EINTR) {
			return err
		}
		if n > 0 {
			return nil
		}
	}
}

func (c *ibsimClient) hdrLen() int { return ibsimReqSize - Size }

func (c *ibsimClient) encodeHdr(b []byte, req *Request, class Class, _ time.Duration) error {
	be := binary.BigEndian
	dlid, slid := req.Addr.LID, uint16(0) // slid 0: ibsim fills in ours
	if class == ClassSubnDirected {
		dlid, slid = permissiveLID, permissiveLID
	}
	qp := uint32(0)
	if class == ClassPerf || class == ClassSubnAdm {
		qp = 1 // GSI (ibsim hands QP1 requests to the SM's client, sim_mad.c find_client)
	}
	clear(b)
	be.PutUint16(b[0:], dlid) // u32 field, LID in its first two bytes
	be.PutUint16(b[4:], slid)
	be.PutUint32(b[8:], qp)  // dqp
	be.PutUint32(b[12:], qp) // sqp; status (16) stays 0
	be.PutUint64(b[24:], Size)
	return nil
}

func (c *ibsimClient) send(msgs [][]byte) (int, error) {
	n, err := writeEach(c.data, msgs)
	if errors.Is(err, unix.ECONNREFUSED) || errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTCONN) {
		return n, taggedError{fmt.Errorf("ibsim is not running any more (or dropped client slot %d): %w", c.slot, err), ErrTransportDown}
	}
	return n, err
}

func (c *ibsimClient) recv(bufs [][]byte, lens []int) (int, error) {
	n, err := readEach(c.data, bufs, lens)
	if errors.Is(err, unix.ECONNREFUSED) {
		return n, nil // a reply write of ours was refused earlier; nothing to read
	}
	return n, err
}

// writeEach writes msgs to the non-blocking fd, one message per write(2) (a
// datagram; a umad request, Documentation/infiniband/user_mad.rst), until the
// queue is full: the count written, and the error of the first message that
// failed otherwise.
func writeEach(fd int, msgs [][]byte) (int, error) {
	for i := 0; i < len(msgs); {
		n, err := unix.Write(fd, msgs[i])
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EAGAIN):
			return i, nil
		case err != nil:
			return i, err
		case n != len(msgs[i]):
			return i, fmt.Errorf("short write %d of %d bytes", n, len(msgs[i]))
		}
		i++
	}
	return len(msgs), nil
}

// readEach reads what is waiting on the non-blocking fd, one message per
// read(2), until none is left or bufs are full; lens[i] is the length of
// bufs[i].
func readEach(fd int, bufs [][]byte, lens []int) (int, error) {
	n := 0
	for n < len(bufs) {
		k, err := unix.Read(fd, bufs[n])
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EAGAIN):
			return n, nil
		case err != nil:
			return n, err
		}
		lens[n] = k
		n++
	}
	return n, nil
}

func (c *ibsimClient) dropped(msg []byte) bool { return binary.BigEndian.Uint32(msg[16:]) != 0 }

func (c *ibsimClient) wait(writable bool, timeout time.Duration) error {
	return pollWait(c.data, c.ev, writable, timeout)
}

func (c *ibsimClient) wake() { wakeFD(c.ev) }

func (c *ibsimClient) close() error {
	// Always give the slot back: ibsim has 10 and never reclaims them. With
	// ibsim stopped the DISCONNECT waits in its queue and frees the slot
	// when it resumes (its answer then goes nowhere, which ibsim only warns
	// about). Half a second: a signal must end the command within a second.
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_, err := c.ctlCall(ctx, ibsimCtlDisconn, c.slot, nil)
	c.closeSockets()
	if err != nil {
		return fmt.Errorf("ibsim: disconnect slot %d: %w", c.slot, err)
	}
	return nil
}

func (c *ibsimClient) closeSockets() {
	for _, fd := range []*int{&c.ctl, &c.data, &c.ev} {
		if *fd >= 0 {
			unix.Close(*fd)
			*fd = -1
		}
	}
}

// pollWait blocks until fd is readable (or writable), the eventfd ev is
// signalled, or timeout passes. It drains ev.
func pollWait(fd, ev int, writable bool, timeout time.Duration) error {
	events := int16(unix.POLLIN)
	if writable {
		events |= unix.POLLOUT
	}
	ms := int((timeout + time.Millisecond - 1) / time.Millisecond)
	fds := [2]unix.PollFd{{Fd: int32(fd), Events: events}, {Fd: int32(ev), Events: unix.POLLIN}}
	_, err := unix.Poll(fds[:], ms)
	if err != nil && !errors.Is(err, unix.EINTR) {
		return err
	}
	if fds[1].Revents&unix.POLLIN != 0 {
		var b [8]byte
		unix.Read(ev, b[:])
	}
	return nil
}

func wakeFD(ev int) {
	var one = [8]byte{1} // host byte order u64 1 on little-endian; any nonzero value wakes
	unix.Write(ev, one[:])
}
