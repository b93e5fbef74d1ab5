package mad

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Transport sends MADs and waits for their replies. Implementations are safe
// for concurrent use: each Do gets its own transaction ID, and at most
// Options.Window requests are in flight at once.
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

// Options tune a transport. Zero values take the defaults.
type Options struct {
	// Timeout is how long one attempt waits for its reply (default 1s, the
	// libibmad default).
	Timeout time.Duration
	// Retries is how many times an unanswered request is sent again
	// (default 3; a negative value means none).
	Retries int
	// Window bounds the requests in flight at once (default 16).
	Window int
}

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = time.Second
	}
	if o.Retries == 0 {
		o.Retries = 3
	} else if o.Retries < 0 {
		o.Retries = 0
	}
	if o.Window <= 0 {
		o.Window = 16
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
)

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

// frame is one MAD read from a transport's endpoint.
type frame struct {
	mad     []byte
	dropped bool // the endpoint reported a send timeout / drop for this TID
}

// endpoint is the wire part of a transport: ibsim's socket or a umad fd.
type endpoint interface {
	// send writes one 256-byte MAD for req.
	send(mad []byte, req *Request, class Class, timeout time.Duration) error
	// recv blocks for the next MAD; it fails once the endpoint is closed.
	recv() (frame, error)
	close() error
	name() string
}

// engine matches replies to requests by transaction ID; the endpoint moves
// bytes.
type engine struct {
	ep      endpoint
	opts    Options
	window  chan struct{}
	tid     atomic.Uint32
	mu      sync.Mutex
	pending map[uint32]chan frame
	done    chan struct{} // closed by Close
	dead    chan struct{} // closed when the reader stops
	readErr error         // why the reader stopped; set before dead closes
	once    sync.Once
}

func newEngine(ep endpoint, opts Options, firstTID uint32) *engine {
	opts = opts.withDefaults()
	e := &engine{
		ep:      ep,
		opts:    opts,
		window:  make(chan struct{}, opts.Window),
		pending: make(map[uint32]chan frame),
		done:    make(chan struct{}),
		dead:    make(chan struct{}),
	}
	e.tid.Store(firstTID)
	go e.read()
	return e
}

func (e *engine) read() {
	defer close(e.dead)
	for {
		f, err := e.ep.recv()
		if err != nil {
			e.readErr = err
			return
		}
		if len(f.mad) < offTID+8 {
			continue
		}
		// Match on the low 32 bits: the kernel's MAD layer owns the high
		// 32 bits of the TID (it puts the agent's ID there).
		tid := uint32(f.mad[offTID+4])<<24 | uint32(f.mad[offTID+5])<<16 | uint32(f.mad[offTID+6])<<8 | uint32(f.mad[offTID+7])
		e.mu.Lock()
		ch := e.pending[tid]
		delete(e.pending, tid)
		e.mu.Unlock()
		if ch != nil {
			ch <- f // buffered, one frame per registration
		}
	}
}

func (e *engine) nextTID() uint32 {
	for {
		if t := e.tid.Add(1); t != 0 {
			return t
		}
	}
}

// Do implements Transport.
func (e *engine) Do(ctx context.Context, req Request) (*Packet, error) {
	class, err := req.wireClass()
	if err != nil {
		return nil, err
	}
	if err := req.Addr.validate(); err != nil {
		return nil, err
	}
	select {
	case e.window <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-e.done:
		return nil, ErrClosed
	}
	defer func() { <-e.window }()

	attempts := e.opts.Retries + 1
	dropped := false
	for a := 0; a < attempts; a++ {
		p, f, err := e.attempt(ctx, &req, class)
		if err != nil {
			return nil, err
		}
		if p == nil { // no reply in time
			dropped = dropped || f.dropped
			continue
		}
		if err := checkReply(&req, class, p); err != nil {
			return nil, err
		}
		return p, nil
	}
	return nil, &TimeoutError{Addr: req.Addr, Attr: req.Attr, Attempts: attempts, Timeout: e.opts.Timeout, Dropped: dropped}
}

// attempt sends req once. A nil packet and nil error mean no reply.
func (e *engine) attempt(ctx context.Context, req *Request, class Class) (*Packet, frame, error) {
	tid := e.nextTID()
	b, err := req.Marshal(uint64(tid))
	if err != nil {
		return nil, frame{}, err
	}
	ch := make(chan frame, 1)
	e.mu.Lock()
	e.pending[tid] = ch
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		delete(e.pending, tid)
		e.mu.Unlock()
	}()
	if err := e.ep.send(b, req, class, e.opts.Timeout); err != nil {
		select {
		case <-e.done:
			return nil, frame{}, ErrClosed
		default:
		}
		return nil, frame{}, fmt.Errorf("mad: %s: send to %s: %w", req.Addr, e.ep.name(), err)
	}
	t := time.NewTimer(e.opts.Timeout)
	defer t.Stop()
	select {
	case f := <-ch:
		if f.dropped {
			return nil, f, nil
		}
		p, err := Decode(f.mad)
		if err != nil {
			return nil, f, fmt.Errorf("mad: %s: bad reply: %w", req.Addr, err)
		}
		return p, f, nil
	case <-t.C:
		return nil, frame{}, nil
	case <-ctx.Done():
		return nil, frame{}, ctx.Err()
	case <-e.done:
		return nil, frame{}, ErrClosed
	case <-e.dead:
		return nil, frame{}, fmt.Errorf("mad: %s: receive from %s: %w", req.Addr, e.ep.name(), e.readErr)
	}
}

// checkReply verifies that p answers req.
func checkReply(req *Request, class Class, p *Packet) error {
	if p.Class != class || p.Method != MethodGetResp || p.Attr != req.Attr {
		return fmt.Errorf("mad: %s: reply %s %s attribute 0x%04x does not answer %s %s attribute 0x%04x",
			req.Addr, p.Class, p.Method, uint16(p.Attr), class, req.Method, uint16(req.Attr))
	}
	if p.Status != 0 {
		return &StatusError{Addr: req.Addr, Attr: req.Attr, Status: p.Status}
	}
	return nil
}

// Close implements Transport.
func (e *engine) Close() error {
	var err error
	e.once.Do(func() {
		close(e.done)
		err = e.ep.close()
		<-e.dead
	})
	return err
}
