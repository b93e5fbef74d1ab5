package mad

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// MaxSimNodeLen is the longest node name ibsim's CONNECT carries: struct
// sim_client_info's nodeid is 32 bytes, NUL-terminated (include/ibsim.h).
const MaxSimNodeLen = 31

// MaxIbsimSockNameLen is the longest socket base name (IBSIM_SOCKNAME) a client can
// use: its sockets are abstract Unix sockets named BASE:ctlID and BASE:inID (ibsim's
// make_name), which with their leading and trailing NUL and a 10-digit ID must fit
// sun_path's 108 bytes (unix(7)); a longer name fails bind(2) with EINVAL.
const MaxIbsimSockNameLen = 108 - 2 - len(":ctl2147483647")

// IbsimOptions configure DialIbsim.
type IbsimOptions struct {
	// SockName is ibsim's socket base name (its IBSIM_SOCKNAME; "sim" when that
	// is unset, as libumad2sim does); the caller decides it.
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

// Transport sends MADs and waits for their replies. Implementations are safe
// for concurrent use: each request gets its own transaction ID, and at most
// the transport's window of requests are in flight at once.
type Transport interface {
	// Do sends req and returns the matching reply. It retries after a
	// per-attempt timeout and returns an error wrapping ErrTimeout when no
	// attempt was answered, a *StatusError when the reply's status is not
	// success, or ctx's error.
	Do(ctx context.Context, req Request) (*Packet, error)
	// Close releases the transport; in-flight and later calls fail with
	// ErrClosed.
	Close() error
}

// Exchanger is a Transport that also sends a batch of requests at once. The
// transports of this package are Exchangers; use the Exchange function, which
// also serves a Transport that is not.
type Exchanger interface {
	Transport
	// Exchange sends every call's request, keeping at most window in
	// flight, and returns when each call has its reply or its error in
	// Call.Err. It returns ctx's error when ctx ended first (the calls not
	// answered by then carry it too), or ErrClosed.
	Exchange(ctx context.Context, calls []Call) error
}

// Call is one request of a batch and, after Exchange, its outcome. The reply
// lives in the Call itself.
type Call struct {
	Req Request
	// Err is nil when the reply arrived and answers Req with status success;
	// otherwise an error as Transport.Do returns it.
	Err error

	b        *batch
	attempts int
	class    Class
	dropped  bool
	reply    [Size]byte // last: the garbage collector scans a call only up to b
}

// Data is the reply's attribute data area (64 bytes for SMPs, 192 for the
// PMA); valid when Err is nil.
func (c *Call) Data() []byte { return dataArea(c.class, c.reply[:]) }

// Exchange runs calls through t: in one batch when t is an Exchanger,
// otherwise one Do after another.
func Exchange(ctx context.Context, t Transport, calls []Call) error {
	if x, ok := t.(Exchanger); ok {
		return x.Exchange(ctx, calls)
	}
	for i := range calls {
		c := &calls[i]
		if c.Err = ctx.Err(); c.Err != nil {
			continue
		}
		p, err := t.Do(ctx, c.Req)
		if c.Err = err; err == nil {
			c.class = p.Class
			copy(c.Data(), p.Data)
		}
	}
	return ctx.Err()
}

// Options tune a transport. Zero values take the defaults.
type Options struct {
	// Timeout is how long one attempt waits for its reply, sending included
	// (default 1s, the libibmad default).
	Timeout time.Duration
	// Retries is how many times an unanswered request is sent again
	// (default 3; a negative value means none).
	Retries int
}

// How many requests a transport keeps in flight at once.
//
// ibsimWindow: ibsim answers one request per pass of its loop (sim_run and
// sim_read_pkt, ibsim/ibsim.c), so what is in flight waits in the two sockets'
// queues. The client's data socket and ibsim's slot socket are connected to each
// other, and the kernel holds a unix datagram to the receiver's
// net.unix.max_dgram_qlen (10) only when the receiver is not connected back to the
// sender (unix_dgram_sendmsg, net/unix/af_unix.c: unix_peer(other) != sk). What
// bounds this pair is each sender's send buffer (net.core.wmem_default, 212,992
// bytes: 167 datagrams of a MAD, charged 1,280 bytes each, on Linux 6.18). ibsim
// writes a reply without waiting and drops one that does not fit ("write failed",
// sim_read_pkt), so the window stays well below that. 64 rather than 8: with more
// queued, ibsim and this transport each wake up once for several MADs instead of
// about one in four, which is most of a sweep's CPU (scripts/bench-sweep).
//
// umadWindow stays 8, as before: a real fabric's SMPs travel on VL15, which has
// no flow control, and nothing here measured more on one (OpenSM keeps at most
// max_wire_smps, default 4, on the wire; ibnetdiscover 2, libibnetdisc's
// DEFAULT_MAX_SMP_ON_WIRE).
const (
	ibsimWindow = 64
	umadWindow  = 8
)

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = time.Second
	}
	if o.Retries == 0 {
		o.Retries = 3
	} else if o.Retries < 0 {
		o.Retries = 0
	}
	return o
}

// Errors a transport returns; match with errors.Is.
var (
	// ErrTimeout: no reply after all attempts (the MAD was dropped, or
	// nothing routes to the destination).
	ErrTimeout = errors.New("no reply")
	// ErrClosed: the transport was closed.
	ErrClosed = errors.New("mad transport closed")
	// ErrTransportDown: the transport can no longer send or receive (ibsim gone or
	// the client's slot dropped, a umad device removed or reset): every later MAD fails
	// too, and only opening a new transport helps.
	ErrTransportDown = errors.New("mad transport down")
)

// NoSimNodeError is a node to attach at (IbsimOptions.Node) that the simulator does
// not have. ibsim refuses a CONNECT alike when the node is unknown and when its
// client slots are all taken (ibsim/ibsim.c sim_ctl_new_client: SIM_CTL_ERROR for
// both, after "can't open new connection" or "attempt to attach to unknown host"),
// so DialIbsim tells them apart by attaching at the default node: when that is
// accepted, a slot was free, and the node is what was refused.
type NoSimNodeError struct {
	SockName string
	Node     string // as asked for
	Default  string // the node ibsim attaches a client to when none is named
}

func (e *NoSimNodeError) Error() string {
	return fmt.Sprintf("ibsim %q has no node %q (its default node is %q)", e.SockName, e.Node, e.Default)
}

// taggedError keeps the text of the error it wraps and also matches tag
// (ErrTransportDown, ErrNoUmadDevice) with errors.Is.
type taggedError struct {
	error
	tag error
}

func (e taggedError) Unwrap() []error { return []error{e.error, e.tag} }

// TimeoutError says which request went unanswered.
type TimeoutError struct {
	Addr     Address
	Attr     AttrID
	Attempts int
	Timeout  time.Duration
	// Dropped is set when the other side reported the drop (ibsim status
	// 110, umad ETIMEDOUT) rather than staying silent.
	Dropped bool
}

func (e *TimeoutError) Error() string {
	how := fmt.Sprintf("within %v", e.Timeout)
	if e.Dropped {
		how = "(dropped or no route)"
	}
	return fmt.Sprintf("mad: %s: attribute 0x%04x: no reply after %d attempt(s) %s", e.Addr, uint16(e.Attr), e.Attempts, how)
}

// Is makes errors.Is(err, ErrTimeout) true.
func (e *TimeoutError) Is(target error) bool { return target == ErrTimeout }

// Stats count what a transport did since it was opened.
type Stats struct {
	Sent     uint64 // MADs written, retries included
	Retries  uint64 // attempts after the first
	Timeouts uint64 // requests that got no reply at all
}

// endpoint is the wire part of a transport: ibsim's socket or a umad fd.
// Only the engine's loop goroutine calls send and recv; every call is
// non-blocking, the loop waits in wait.
type endpoint interface {
	// hdrLen is the transport header in front of the MAD in every message.
	hdrLen() int
	// encodeHdr writes the header for sending req into h (hdrLen bytes).
	encodeHdr(h []byte, req *Request, class Class, timeout time.Duration) error
	// send writes msgs in order and returns how many went; fewer than
	// len(msgs) with a nil error means the queue is full. An error is about
	// msgs[n], the first not sent.
	send(msgs [][]byte) (int, error)
	// recv reads up to len(bufs) messages, lens[i] their lengths, and
	// returns how many (0 when none is waiting).
	recv(bufs [][]byte, lens []int) (int, error)
	// dropped reports whether a received message's transport header says
	// the request was dropped (ibsim status 110, umad ETIMEDOUT).
	dropped(msg []byte) bool
	// wait blocks until the endpoint is readable (or writable, when
	// writable is set), wake is called, or timeout passes.
	wait(writable bool, timeout time.Duration) error
	// wake makes a concurrent wait return, or the next one.
	wake()
	// close releases the endpoint once the loop has stopped.
	close() error
	name() string
}

// batch is one Exchange: its calls and how many are not finished.
type batch struct {
	calls     []Call
	next      int // the next call to start
	remaining int
	done      chan struct{}
	cancel    error // set (under engine.mu) when the caller gives up
}

// slot is one request in flight: its message buffer and attempt deadline.
type slot struct {
	msg      []byte // transport header + MAD
	call     *Call
	tid      uint32
	deadline time.Duration // since engine.epoch
	unsent   bool          // waiting for room in the send queue
}

func (s *slot) release() { s.call, s.unsent = nil, false }

// engine runs one loop goroutine per transport: it fills the window from the
// submitted batches in submission order, sends what waits to be sent, reads
// what has arrived and matches it to a slot by transaction ID, and expires
// attempts.
type engine struct {
	ep    endpoint
	opts  Options
	epoch time.Time

	mu     sync.Mutex
	queue  []*batch
	closed bool
	failed error // the loop stopped on an endpoint error

	sent, retries, timeouts atomic.Uint64

	dead chan struct{} // closed when the loop has stopped
	// kick wakes the loop when it waits with nothing in flight: it parks on this
	// channel then, not in the endpoint's wait, so that no thread sits in a
	// blocking system call while the caller works between batches. One that does
	// makes the Go runtime's sysmon take its P back (retake in runtime/proc.go)
	// and keep polling every 20µs; measured with scripts/bench-sweep, that cost a
	// quarter of a sweep's CPU.
	kick chan struct{}

	// Loop-owned.
	active []*batch
	slots  []slot
	seq    uint32
}

// newEngine starts the loop of a transport that keeps at most window requests in
// flight.
func newEngine(ep endpoint, window int, opts Options, firstTID uint32) *engine {
	opts = opts.withDefaults()
	e := &engine{ep: ep, opts: opts, epoch: time.Now(), dead: make(chan struct{}), kick: make(chan struct{}, 1), seq: firstTID}
	e.slots = make([]slot, window)
	for i := range e.slots {
		e.slots[i].msg = make([]byte, ep.hdrLen()+Size)
	}
	go e.loop()
	return e
}

func (e *engine) now() time.Duration { return time.Since(e.epoch) }

// wake makes the loop look at the queue, whether it waits on kick or in the
// endpoint's wait.
func (e *engine) wake() {
	select {
	case e.kick <- struct{}{}:
	default:
	}
	e.ep.wake()
}

// Stats returns the transport's counters.
func (e *engine) Stats() Stats {
	return Stats{Sent: e.sent.Load(), Retries: e.retries.Load(), Timeouts: e.timeouts.Load()}
}

// Do implements Transport.
func (e *engine) Do(ctx context.Context, req Request) (*Packet, error) {
	calls := []Call{{Req: req}}
	c := &calls[0]
	if err := e.Exchange(ctx, calls); err != nil && c.Err == nil {
		return nil, err
	}
	if c.Err != nil {
		return nil, c.Err
	}
	// checkReply took the reply; Decode's header checks are the same (checkHeader).
	return Decode(c.reply[:])
}

// Exchange implements Exchanger.
func (e *engine) Exchange(ctx context.Context, calls []Call) error {
	if len(calls) == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		for i := range calls {
			calls[i].Err = err
		}
		return err
	}
	b := &batch{calls: calls, remaining: len(calls), done: make(chan struct{})}
	for i := range calls {
		calls[i].Err, calls[i].attempts, calls[i].dropped, calls[i].b = nil, 0, false, b
	}
	e.mu.Lock()
	if e.closed || e.failed != nil {
		err := e.failed
		if e.closed {
			err = ErrClosed
		}
		e.mu.Unlock()
		for i := range calls {
			calls[i].Err = err
		}
		return err
	}
	e.queue = append(e.queue, b)
	e.mu.Unlock()
	e.wake()
	select {
	case <-b.done:
		return nil
	case <-ctx.Done():
		e.mu.Lock()
		b.cancel = ctx.Err()
		e.mu.Unlock()
		e.wake()
		<-b.done // the loop lets go of the calls promptly
		return ctx.Err()
	}
}

// Close implements Transport: it stops the loop, fails what is in flight with
// ErrClosed, then closes the endpoint (ibsim: gives the client slot back).
func (e *engine) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		<-e.dead
		return nil
	}
	e.closed = true
	e.mu.Unlock()
	e.wake()
	<-e.dead
	return e.ep.close()
}

// finish ends one call.
func (e *engine) finish(c *Call, err error) {
	c.Err = err
	b := c.b
	b.remaining--
	if b.remaining == 0 {
		close(b.done)
	}
}

func (e *engine) loop() {
	defer close(e.dead)
	hl := e.ep.hdrLen()
	rbufs := make([][]byte, len(e.slots))
	lens := make([]int, len(e.slots))
	for i := range rbufs {
		rbufs[i] = make([]byte, hl+Size+1)
	}
	var msgs [][]byte
	var unsent []*slot
	readable, writable := true, true
	for {
		// Intake: new batches, cancellations, Close. Whoever queues, cancels or
		// closes wakes the endpoint afterwards, so a wait below returns at once.
		e.mu.Lock()
		e.active = append(e.active, e.queue...)
		clear(e.queue)
		e.queue = e.queue[:0]
		closed := e.closed
		var cancelled []*batch
		for _, b := range e.active {
			if b.cancel != nil {
				cancelled = append(cancelled, b)
			}
		}
		e.mu.Unlock()
		if closed {
			e.abort(ErrClosed)
			return
		}
		for _, b := range cancelled {
			e.dropBatch(b, b.cancel)
		}
		e.prune()
		now := e.now()

		// Expired attempts: send again or give up. The deadline was set
		// before the send, so a full send queue counts against it too.
		for i := range e.slots {
			if s := &e.slots[i]; s.call != nil && s.deadline <= now {
				e.retry(s, now)
			}
		}

		// Fill the window from the batches, in submission order.
	fill:
		for i := range e.slots {
			s := &e.slots[i]
			for s.call == nil {
				c := e.nextCall()
				if c == nil {
					break fill
				}
				if err := e.start(s, c, now); err != nil {
					e.finish(c, err)
				}
			}
		}

		// Send what is waiting, in one batch.
		progress := false
		msgs, unsent = msgs[:0], unsent[:0]
		for i := range e.slots {
			if s := &e.slots[i]; s.unsent {
				msgs, unsent = append(msgs, s.msg), append(unsent, s)
			}
		}
		if len(msgs) > 0 && writable {
			n, err := e.ep.send(msgs)
			e.sent.Add(uint64(n))
			for _, s := range unsent[:n] {
				s.unsent = false
			}
			if err != nil {
				s := unsent[n]
				c := s.call
				s.release()
				e.finish(c, fmt.Errorf("mad: %s: send to %s: %w", c.Req.Addr, e.ep.name(), err))
				n++
			} else if n < len(msgs) {
				writable = false
			}
			progress = n > 0
		}

		// Read what has arrived, in one batch.
		if readable {
			n, err := e.ep.recv(rbufs, lens)
			if err != nil {
				e.fail(err)
				return
			}
			readable = n == len(rbufs)
			for i := range n {
				e.match(rbufs[i][:lens[i]], hl, now)
			}
			progress = progress || n > 0
		}
		if progress {
			continue
		}

		// Nothing to do until a reply, room to send, a deadline or a wake.
		timeout, waitSend := time.Duration(-1), false
		for i := range e.slots {
			if s := &e.slots[i]; s.call != nil {
				if d := s.deadline - now; timeout < 0 || d < timeout {
					timeout = max(d, 0)
				}
				waitSend = waitSend || s.unsent
			}
		}
		if timeout < 0 {
			<-e.kick // nothing in flight
			writable = true
			continue
		}
		if err := e.ep.wait(waitSend, timeout); err != nil {
			e.fail(err)
			return
		}
		readable, writable = true, true
	}
}

// nextCall returns the next call not started yet, in submission order.
func (e *engine) nextCall() *Call {
	for _, b := range e.active {
		if b.next < len(b.calls) && b.cancel == nil {
			c := &b.calls[b.next]
			b.next++
			return c
		}
	}
	return nil
}

// prune forgets the batches whose calls have all finished.
func (e *engine) prune() {
	n := 0
	for _, b := range e.active {
		if b.remaining > 0 {
			e.active[n] = b
			n++
		}
	}
	clear(e.active[n:])
	e.active = e.active[:n]
}

// start encodes c's first attempt into s.
func (e *engine) start(s *slot, c *Call, now time.Duration) error {
	class, err := c.Req.wireClass()
	if err != nil {
		return err
	}
	c.class = class
	e.seq++
	hl := e.ep.hdrLen()
	if err := c.Req.MarshalTo(s.msg[hl:], uint64(e.seq)); err != nil {
		return err
	}
	if err := e.ep.encodeHdr(s.msg[:hl], &c.Req, class, e.opts.Timeout); err != nil {
		return err
	}
	s.call, s.tid, s.deadline, s.unsent = c, e.seq, now+e.opts.Timeout, true
	c.attempts = 1
	return nil
}

// retry sends s's call again with a new transaction ID, or ends it.
func (e *engine) retry(s *slot, now time.Duration) {
	c := s.call
	if c.attempts > e.opts.Retries {
		s.release()
		e.timeouts.Add(1)
		e.finish(c, &TimeoutError{Addr: c.Req.Addr, Attr: c.Req.Attr, Attempts: c.attempts, Timeout: e.opts.Timeout, Dropped: c.dropped})
		return
	}
	c.attempts++
	e.retries.Add(1)
	e.seq++
	s.tid = e.seq
	binary.BigEndian.PutUint64(s.msg[e.ep.hdrLen()+offTID:], uint64(s.tid))
	s.deadline = now + e.opts.Timeout
	s.unsent = true
}

// match hands a received message to the slot whose transaction ID it
// carries; a message that answers none is ignored.
func (e *engine) match(msg []byte, hl int, now time.Duration) {
	if len(msg) < hl+offTID+8 || len(msg) > hl+Size {
		return // not a MAD message
	}
	// A reply shorter than a whole MAD (a short GMP from umad) is padded to one.
	m := msg[hl : hl+Size]
	clear(m[len(msg)-hl:])
	// Match on the low 32 bits: the kernel's MAD layer owns the high 32 bits
	// of the TID (it puts the agent's ID there).
	tid := binary.BigEndian.Uint32(m[offTID+4:])
	for i := range e.slots {
		s := &e.slots[i]
		if s.call == nil || s.tid != tid {
			continue // a late reply to an attempt given up, or not ours
		}
		c := s.call
		if e.ep.dropped(msg) {
			c.dropped = true // send again now, or give up
			e.retry(s, now)
			return
		}
		s.release()
		copy(c.reply[:], m)
		e.finish(c, checkReply(&c.Req, c.class, c.reply[:]))
		return
	}
}

// checkReply verifies that the MAD b answers req, sent as class: every reply of
// every transport, Do and Exchange alike, goes through it once, before its call
// takes it.
func checkReply(req *Request, class Class, b []byte) error {
	if err := checkHeader(b); err != nil {
		return fmt.Errorf("mad: %s: bad reply: %w", req.Addr, err)
	}
	rc, rm := Class(b[offClass]), Method(b[offMethod])
	attr := AttrID(binary.BigEndian.Uint16(b[offAttrID:]))
	// The response method is the request's with the R bit (IBA 13.4.5):
	// GetResp answers Get, GetTableResp GetTable.
	if rc != class || rm != req.Method|0x80 || attr != req.Attr {
		return fmt.Errorf("mad: %s: reply %s %s attribute 0x%04x does not answer %s %s attribute 0x%04x",
			req.Addr, rc, rm, uint16(attr), class, req.Method, uint16(req.Attr))
	}
	if class == ClassSubnDirected {
		// A directed-route reply keeps the request's hop count (IBA 14.2.2) and
		// comes home with its hop pointer back at 0: the requester's SMI hands a
		// returning SMP up only then (C14-13:4; Linux drivers/infiniband/core/smi.c
		// __smi_handle_dr_smp_recv); ibsim's replies carry 0 too. The reply of the
		// local node (no hops) skips the return step: the kernel hands up what the
		// device's SMA answered (drivers/infiniband/core/mad.c
		// handle_outgoing_dr_smp), which may keep the pointer at hop count + 1.
		hc, hp := int(b[offHopCount]), int(b[offHopPointer])
		if hc != len(req.Addr.Path) || hp != 0 && (hc != 0 || hp != 1) {
			return fmt.Errorf("mad: %s: bad reply: hop count %d and hop pointer %d do not return along this route (want %d and 0)",
				req.Addr, hc, hp, len(req.Addr.Path))
		}
	}
	if status := replyStatus(b); status != 0 {
		return &StatusError{Addr: req.Addr, Attr: req.Attr, Status: status, Class: class}
	}
	return nil
}

// dropBatch ends every unfinished call of b with err.
func (e *engine) dropBatch(b *batch, err error) {
	for i := range e.slots {
		s := &e.slots[i]
		if s.call != nil && s.call.b == b {
			c := s.call
			s.release()
			e.finish(c, err)
		}
	}
	for b.next < len(b.calls) {
		c := &b.calls[b.next]
		b.next++
		e.finish(c, err)
	}
}

// abort ends every call, queued or in flight, with err.
func (e *engine) abort(err error) {
	e.mu.Lock()
	e.active = append(e.active, e.queue...)
	e.queue = nil
	e.mu.Unlock()
	for _, b := range e.active {
		if b.remaining > 0 {
			e.dropBatch(b, err)
		}
	}
	e.active = nil
}

// fail stops the loop on an endpoint error: every call, now and later,
// fails with it.
func (e *engine) fail(err error) {
	err = taggedError{fmt.Errorf("mad: receive from %s: %w", e.ep.name(), err), ErrTransportDown}
	e.mu.Lock()
	e.failed = err
	e.mu.Unlock()
	e.abort(err)
}
