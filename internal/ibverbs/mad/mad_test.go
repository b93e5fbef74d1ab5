package mad

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestParseDRPath(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []uint8
	}{
		{"0", []uint8{}},
		{"0,1", []uint8{1}},
		{" 0,1,3 ", []uint8{1, 3}},
		{"0,255", []uint8{255}},
		{"0" + strings.Repeat(",1", 63), bytes.Repeat([]byte{1}, 63)},
	} {
		a, err := ParseDRPath(tc.in)
		if err != nil {
			t.Errorf("ParseDRPath(%q): %v", tc.in, err)
			continue
		}
		if !a.Directed || !bytes.Equal(a.Path, tc.want) {
			t.Errorf("ParseDRPath(%q) = %+v, want path %v", tc.in, a, tc.want)
		}
		if got := a.String(); got != "DR path "+strings.TrimSpace(tc.in) {
			t.Errorf("String() = %q", got)
		}
	}
	for _, bad := range []string{"", "1", "1,2", "0,0", "0,256", "0,a", "0,", "0,-1", "0" + strings.Repeat(",1", 64)} {
		if _, err := ParseDRPath(bad); err == nil {
			t.Errorf("ParseDRPath(%q): no error", bad)
		}
	}
}

// TestLIDAddressString: a LID address prints as infiniband-diags says it (LIDs are
// parsed by check.ParseLID, through query.ParseLIDList's tests).
func TestLIDAddressString(t *testing.T) {
	if got := LIDAddress(7).String(); got != "lid 7" {
		t.Errorf("String() = %q", got)
	}
}

func TestMarshal(t *testing.T) {
	t.Run("LID-routed SMP", func(t *testing.T) {
		r := Request{Addr: LIDAddress(3), Class: ClassSubnLID, Method: MethodGet, Attr: AttrPKeyTable, Modifier: PKeyTableModifier(1, 5)}
		b, err := r.Marshal(0x1122334455667788)
		if err != nil {
			t.Fatal(err)
		}
		want := []byte{1, 0x01, 1, 0x01, 0, 0, 0, 0, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x00, 0x16, 0, 0, 0x00, 0x05, 0x00, 0x01}
		if !bytes.Equal(b[:24], want) {
			t.Errorf("header % x\nwant   % x", b[:24], want)
		}
	})
	t.Run("directed-route SMP", func(t *testing.T) {
		r := Request{Addr: DirectedRoute(1, 7, 2), Class: ClassSubnLID, Method: MethodGet, Attr: AttrPortInfo, Modifier: 2}
		b, err := r.Marshal(9)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		be := binary.BigEndian
		if p.Class != ClassSubnDirected || b[offHopPointer] != 0 || b[offHopCount] != 3 || p.Status != 0 || be.Uint16(b[offStatus:])&drDirectionBit != 0 ||
			be.Uint16(b[offDrSLID:]) != 0xffff || be.Uint16(b[offDrDLID:]) != 0xffff || !bytes.Equal(b[offInitialPath:offInitialPath+5], []uint8{0, 1, 7, 2, 0}) {
			t.Errorf("decoded %+v from % x", p, b)
		}
		if be.Uint64(b[offTID:]) != 9 || p.Attr != AttrPortInfo || p.Modifier != 2 || p.Method != MethodGet {
			t.Errorf("decoded %+v", p)
		}
	})
	t.Run("PMA", func(t *testing.T) {
		r := Request{Addr: LIDAddress(4), Class: ClassPerf, Method: MethodGet, Attr: AttrPortCounters, Data: PortCountersRequestData(3)}
		b, err := r.Marshal(1)
		if err != nil {
			t.Fatal(err)
		}
		if b[offClass] != 0x04 || b[offClassVersion] != 1 || b[offData+1] != 3 || len(b) != Size {
			t.Errorf("PMA MAD % x", b[:72])
		}
		p, err := Decode(b)
		if err != nil || len(p.Data) != 192 {
			t.Errorf("Decode: %v, data %d bytes", err, len(p.Data))
		}
	})
	for name, r := range map[string]Request{
		"PMA directed":   {Addr: DirectedRoute(1), Class: ClassPerf, Method: MethodGet},
		"LID 0":          {Addr: LIDAddress(0), Class: ClassSubnLID, Method: MethodGet},
		"permissive LID": {Addr: LIDAddress(0xffff), Class: ClassSubnLID, Method: MethodGet},
		"port 0 in path": {Addr: DirectedRoute(1, 0), Class: ClassSubnLID, Method: MethodGet},
		"64 hops":        {Addr: DirectedRoute(bytes.Repeat([]byte{1}, 64)...), Class: ClassSubnLID, Method: MethodGet},
		"SMP data > 64":  {Addr: LIDAddress(1), Class: ClassSubnLID, Method: MethodGet, Data: make([]byte, 65)},
		"PMA data > 192": {Addr: LIDAddress(1), Class: ClassPerf, Method: MethodGet, Data: make([]byte, 193)},
		"GetResp":        {Addr: LIDAddress(1), Class: ClassSubnLID, Method: MethodGetResp},
		"unknown class":  {Addr: LIDAddress(1), Class: 0x02, Method: MethodGet},
		"SA directed":    {Addr: DirectedRoute(1), Class: ClassSubnAdm, Method: MethodGet},
		"SA data > 200":  {Addr: LIDAddress(1), Class: ClassSubnAdm, Method: MethodGet, Data: make([]byte, 201)},
		"SMP GetTable":   {Addr: LIDAddress(1), Class: ClassSubnLID, Method: MethodGetTable},
	} {
		if _, err := r.Marshal(1); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestDecodeRejects(t *testing.T) {
	good, _ := (&Request{Addr: DirectedRoute(1), Class: ClassSubnLID, Method: MethodGet, Attr: AttrNodeInfo}).Marshal(1)
	mod := func(f func(b []byte)) []byte {
		b := append([]byte(nil), good...)
		f(b)
		return b
	}
	for name, b := range map[string][]byte{
		"empty":         nil,
		"short":         good[:255],
		"long":          append(append([]byte(nil), good...), 0),
		"base version":  mod(func(b []byte) { b[0] = 2 }),
		"class version": mod(func(b []byte) { b[2] = 2 }),
		"PMA version":   mod(func(b []byte) { b[1], b[2] = 0x04, 2 }),
		"class":         mod(func(b []byte) { b[1] = 0x02 }),
		"SA version":    mod(func(b []byte) { b[1] = 0x03 }), // the SA's class version is 2
		"hop count":     mod(func(b []byte) { b[offHopCount] = 64 }),
	} {
		if _, err := Decode(b); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	p, err := Decode(mod(func(b []byte) { b[offStatus] = 0x80; b[offStatus+1] = 0x1c; b[offHopCount] = 63 }))
	if err != nil || p.Status != 0x1c {
		t.Errorf("D bit: %+v, %v", p, err)
	}
}

func TestStatusText(t *testing.T) {
	for s, want := range map[uint16]string{
		0:      "success",
		0x0001: "busy",
		0x000c: "method/attribute combination not supported",
		0x001c: "invalid attribute or modifier value",
		0x0008: "method not supported",
		0x0100: "class-specific 0x01",
		0x0014: "reserved invalid-field code 5",
		// Bits 5-7 are reserved (IBA table 127): not success.
		0x0020: "reserved bits 0x20",
		0x00e1: "busy, reserved bits 0xe0",
	} {
		if got := StatusText(s); got != want {
			t.Errorf("StatusText(%#04x) = %q, want %q", s, got, want)
		}
	}
}

func TestAttributeParsers(t *testing.T) {
	d := make([]byte, 64)
	d[2], d[3] = 2, 36
	binary.BigEndian.PutUint64(d[12:], 0x0002c90300000204)
	binary.BigEndian.PutUint16(d[28:], 128)
	d[36], d[37], d[38], d[39] = 7, 0x00, 0x02, 0xc9
	ni, err := ParseNodeInfo(d)
	if err != nil || ni.NodeType != NodeSwitch || ni.NumPorts != 36 || ni.NodeGUID != 0x0002c90300000204 || ni.PartitionCap != 128 || ni.LocalPortNum != 7 || ni.VendorID != 0x2c9 {
		t.Errorf("NodeInfo %+v, %v", ni, err)
	}

	pi := make([]byte, 64)
	binary.BigEndian.PutUint16(pi[16:], 0x1234)
	pi[32], pi[33], pi[34] = 0x34, 0x52, 0xc5
	pi[43] = 0x40 | 0x08 | 0x01
	binary.BigEndian.PutUint16(pi[44:], 1)
	binary.BigEndian.PutUint16(pi[46:], 0xfffe)
	binary.BigEndian.PutUint16(pi[48:], 3)
	p, err := ParsePortInfo(pi)
	if err != nil || p.LID != 0x1234 || p.PortState != PortStateActive || p.PhysState != 5 ||
		p.LMC != 5 || !p.PartitionEnforcementInbound || p.PartitionEnforcementOutbound ||
		p.FilterRawInbound || !p.FilterRawOutbound || p.MKeyViolations != 1 || p.PKeyViolations != 0xfffe || p.QKeyViolations != 3 {
		t.Errorf("PortInfo %+v, %v", p, err)
	}
	if p.PortState.String() != "Active" || p.PhysState.String() != "LinkUp" || PortState(9).String() != "?(9)" {
		t.Errorf("state names %s %s", p.PortState, p.PhysState)
	}

	var blk [PKeysPerBlock]uint16
	for i := range blk {
		blk[i] = uint16(0x8000 + i)
	}
	got, err := ParsePKeyBlock(encodePKeyBlock(blk))
	if err != nil || got != blk {
		t.Errorf("P_Key block round trip: %v, %v", got, err)
	}
	if m := PKeyTableModifier(3, 17); m != 0x00110003 {
		t.Errorf("modifier %#x", m)
	}

	desc, err := ParseNodeDescription(append([]byte("HcaA mlx5_0"), make([]byte, 53)...))
	if err != nil || desc != "HcaA mlx5_0" {
		t.Errorf("NodeDescription %q, %v", desc, err)
	}

	pc := make([]byte, 192)
	pc[1], pc[16], pc[17], pc[19] = 2, 11, 7, 0x34
	binary.BigEndian.PutUint32(pc[40:], 0xdeadbeef)
	c, err := ParsePortCounters(pc)
	if err != nil || c.PortSelect != 2 || c.PortXmitConstraintErrors != 11 || c.PortRcvConstraintErrors != 7 ||
		c.LocalLinkIntegrityErrors != 3 || c.ExcessiveBufferOverrunErrors != 4 || c.PortXmitWait != 0xdeadbeef {
		t.Errorf("PortCounters %+v, %v", c, err)
	}

	// Every parser rejects short data instead of panicking.
	for name, f := range map[string]func([]byte) error{
		"NodeInfo":        func(b []byte) error { _, err := ParseNodeInfo(b); return err },
		"NodeDescription": func(b []byte) error { _, err := ParseNodeDescription(b); return err },
		"PortInfo":        func(b []byte) error { _, err := ParsePortInfo(b); return err },
		"P_KeyTable":      func(b []byte) error { _, err := ParsePKeyBlock(b); return err },
		"SwitchInfo":      func(b []byte) error { _, err := ParseSwitchInfo(b); return err },
		"PortCounters":    func(b []byte) error { _, err := ParsePortCounters(b); return err },
	} {
		if err := f(make([]byte, 7)); err == nil {
			t.Errorf("%s of 7 bytes: no error", name)
		}
	}
}

// frame is one message the fake endpoint delivers.
type frame struct {
	mad     []byte
	dropped bool
}

// fakeEndpoint answers requests through a function, off the engine's loop.
type fakeEndpoint struct {
	answer   func(mad []byte) [][]byte // frames to deliver for one request
	drop     func(mad []byte) bool     // deliver this frame as a reported drop
	mu       sync.Mutex
	in       []frame
	ready    chan struct{} // a frame arrived or wake was called
	closed   chan struct{}
	once     sync.Once
	inFlight atomic.Int32
	maxSeen  atomic.Int32
	tids     sync.Map
	dupTID   atomic.Bool
	// inline: answers are queued by send itself (a fuzz input is then handled in
	// one deterministic order, without a goroutine per request).
	inline bool
}

func newFake(answer func([]byte) [][]byte) *fakeEndpoint {
	return &fakeEndpoint{answer: answer, ready: make(chan struct{}, 1), closed: make(chan struct{})}
}

// The fake's one-byte header says, in a reply, that the request was dropped.
func (f *fakeEndpoint) hdrLen() int { return 1 }
func (f *fakeEndpoint) encodeHdr(h []byte, _ *Request, _ Class, _ time.Duration) error {
	h[0] = 0
	return nil
}
func (f *fakeEndpoint) dropped(msg []byte) bool { return msg[0] == 1 }

func (f *fakeEndpoint) send(msgs [][]byte) (int, error) {
	for _, m := range msgs {
		m := append([]byte(nil), m...)
		m = m[1:]
		if _, dup := f.tids.LoadOrStore(binary.BigEndian.Uint64(m[offTID:]), true); dup {
			f.dupTID.Store(true)
		}
		deliver := func() {
			for _, r := range f.answer(m) {
				f.mu.Lock()
				f.in = append(f.in, frame{mad: r, dropped: f.drop != nil && f.drop(r)})
				f.mu.Unlock()
				f.wake()
			}
		}
		if f.inline {
			deliver()
		} else {
			go deliver()
		}
	}
	return len(msgs), nil
}

func (f *fakeEndpoint) recv(bufs [][]byte, lens []int) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for n < len(bufs) && len(f.in) > 0 {
		fr := f.in[0]
		f.in = f.in[1:]
		if len(fr.mad) >= len(bufs[n]) {
			continue // longer than any MAD: a datagram socket would truncate it
		}
		bufs[n][0] = 0
		if fr.dropped {
			bufs[n][0] = 1
		}
		lens[n] = 1 + copy(bufs[n][1:], fr.mad)
		n++
	}
	return n, nil
}

func (f *fakeEndpoint) wait(_ bool, timeout time.Duration) error {
	var tc <-chan time.Time
	if timeout >= 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		tc = t.C
	}
	select {
	case <-f.ready:
	case <-tc:
	case <-f.closed:
	}
	return nil
}

func (f *fakeEndpoint) wake() {
	select {
	case f.ready <- struct{}{}:
	default:
	}
}

func (f *fakeEndpoint) close() error { f.once.Do(func() { close(f.closed) }); return nil }
func (f *fakeEndpoint) name() string { return "fake" }

// reply turns a request MAD into a GetResp carrying data.
func reply(req []byte, data []byte) []byte {
	r := append([]byte(nil), req...)
	r[offMethod] = byte(MethodGetResp)
	if Class(r[offClass]) == ClassSubnDirected {
		r[offStatus] |= 0x80
	}
	copy(r[offData:], data)
	return r
}

func getNodeInfo(addr Address) Request {
	return Request{Addr: addr, Class: ClassSubnLID, Method: MethodGet, Attr: AttrNodeInfo}
}

func TestEngineTimeout(t *testing.T) {
	f := newFake(func([]byte) [][]byte { return nil }) // silence
	e := newEngine(f, umadWindow, Options{Timeout: 20 * time.Millisecond, Retries: 2}, 0)
	defer e.Close()
	start := time.Now()
	_, err := e.Do(context.Background(), getNodeInfo(LIDAddress(5)))
	var te *TimeoutError
	if !errors.As(err, &te) || !errors.Is(err, ErrTimeout) || te.Attempts != 3 || te.Dropped {
		t.Fatalf("err = %v, want a silent TimeoutError after 3 attempts", err)
	}
	if d := time.Since(start); d < 60*time.Millisecond || d > time.Second {
		t.Errorf("took %v for 3 x 20ms", d)
	}
	if !strings.Contains(err.Error(), "lid 5") || !strings.Contains(err.Error(), "within 20ms") {
		t.Errorf("message %q", err)
	}
}

func TestEngineDroppedThenAnswered(t *testing.T) {
	var n atomic.Int32
	f := newFake(func(m []byte) [][]byte {
		if n.Add(1) == 1 {
			return [][]byte{m} // echoed back as dropped, as ibsim does (status 110)
		}
		return [][]byte{reply(m, []byte{1, 1, 1, 2})}
	})
	f.drop = func(m []byte) bool { return Method(m[offMethod]) == MethodGet }
	e := newEngine(f, umadWindow, Options{Timeout: time.Second, Retries: 1}, 0)
	defer e.Close()
	start := time.Now()
	p, err := e.Do(context.Background(), getNodeInfo(DirectedRoute()))
	if err != nil || p.Data[3] != 2 {
		t.Fatalf("Do = %v, %v", p, err)
	}
	if time.Since(start) > 500*time.Millisecond {
		t.Error("a reported drop waited for the timeout")
	}
}

// TestEngineUmadTimedOutSend: the kernel hands a request that got no reply back
// with status ETIMEDOUT and only its 24-byte MAD header (user_mad.c send_handler:
// packet->length = IB_MGMT_MAD_HDR), the high 32 bits of the TID being the agent's
// (ib_umad_write). It is matched by the low 32 bits and sent again at once.
func TestEngineUmadTimedOutSend(t *testing.T) {
	var n atomic.Int32
	f := newFake(func(m []byte) [][]byte {
		if n.Add(1) == 1 {
			h := append([]byte(nil), m[:24]...)
			binary.BigEndian.PutUint32(h[offTID:], 0xdeadbeef)
			return [][]byte{h}
		}
		return [][]byte{reply(m, []byte{1, 1, 1, 2})}
	})
	f.drop = func(m []byte) bool { return len(m) == 24 }
	e := newEngine(f, umadWindow, Options{Timeout: time.Second, Retries: 1}, 0)
	defer e.Close()
	start := time.Now()
	p, err := e.Do(context.Background(), getNodeInfo(DirectedRoute()))
	if err != nil || p.Data[3] != 2 {
		t.Fatalf("Do = %v, %v", p, err)
	}
	if time.Since(start) > 500*time.Millisecond || n.Load() != 2 {
		t.Errorf("%d sends in %v: the timed-out send was not matched", n.Load(), time.Since(start))
	}
}

func TestEngineConcurrent(t *testing.T) {
	var f *fakeEndpoint
	f = newFake(func(m []byte) [][]byte {
		cur := f.inFlight.Add(1)
		for {
			old := f.maxSeen.Load()
			if cur <= old || f.maxSeen.CompareAndSwap(old, cur) {
				break
			}
		}
		time.Sleep(time.Millisecond * time.Duration(m[offAttrModifier+3]%3))
		f.inFlight.Add(-1)
		// Echo the modifier in the data so each caller can check its reply.
		return [][]byte{reply(m, m[offAttrModifier:offAttrModifier+4])}
	})
	e := newEngine(f, umadWindow, Options{Timeout: 5 * time.Second}, 0)
	defer e.Close()
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := getNodeInfo(LIDAddress(1))
			r.Modifier = uint32(i)
			p, err := e.Do(context.Background(), r)
			if err != nil {
				t.Error(err)
				return
			}
			if got := binary.BigEndian.Uint32(p.Data); got != uint32(i) {
				t.Errorf("request %d got the reply of %d", i, got)
			}
		}()
	}
	wg.Wait()
	if m := f.maxSeen.Load(); m > umadWindow {
		t.Errorf("%d requests in flight, window %d", m, umadWindow)
	}
	if f.dupTID.Load() {
		t.Error("a transaction ID was reused")
	}
}

func TestEngineBadReplies(t *testing.T) {
	for name, mutate := range map[string]func(m []byte) [][]byte{
		"wrong attribute": func(m []byte) [][]byte {
			r := reply(m, nil)
			r[offAttrID+1] = 0x15
			return [][]byte{r}
		},
		"still a Get": func(m []byte) [][]byte { return [][]byte{append([]byte(nil), m...)} },
		"bad status": func(m []byte) [][]byte {
			r := reply(m, nil)
			r[offStatus+1] = 0x1c
			return [][]byte{r}
		},
		"bad version": func(m []byte) [][]byte {
			r := reply(m, nil)
			r[offBaseVersion] = 9
			return [][]byte{r}
		},
		"class version": func(m []byte) [][]byte {
			r := reply(m, nil)
			r[offClassVersion] = 2
			return [][]byte{r}
		},
		"hop count": func(m []byte) [][]byte {
			r := reply(m, nil)
			r[offHopCount] = 2 // the route has 1 hop
			return [][]byte{r}
		},
		"hop pointer": func(m []byte) [][]byte {
			r := reply(m, nil)
			r[offHopPointer] = 1 // still one hop out: not home
			return [][]byte{r}
		},
	} {
		// Every reply goes through one check, whether it answers Do or a batch
		// (the sweep's path).
		for _, batch := range []bool{false, true} {
			// Garbage, unknown TIDs and short frames first: ignored, not fatal.
			f := newFake(func(m []byte) [][]byte {
				junk := reply(m, nil)
				junk[offTID+7] ^= 0xff
				return append([][]byte{{1, 2, 3}, junk}, mutate(m)...)
			})
			e := newEngine(f, umadWindow, Options{Timeout: time.Second}, 0)
			var err error
			if batch {
				calls := []Call{{Req: getNodeInfo(DirectedRoute(1))}, {Req: getNodeInfo(DirectedRoute(1))}}
				if xerr := e.Exchange(context.Background(), calls); xerr != nil {
					t.Fatalf("%s: Exchange: %v", name, xerr)
				}
				if calls[0].Err == nil || calls[1].Err == nil {
					t.Errorf("%s: batch: errors %v and %v, want both", name, calls[0].Err, calls[1].Err)
				}
				err = calls[1].Err
			} else {
				_, err = e.Do(context.Background(), getNodeInfo(DirectedRoute(1)))
			}
			if err == nil || errors.Is(err, ErrTimeout) {
				t.Errorf("%s (batch %v): err = %v, want a reply error", name, batch, err)
			}
			if name == "bad status" {
				var se *StatusError
				if !errors.As(err, &se) || se.Status != 0x1c {
					t.Errorf("bad status (batch %v): err = %v", batch, err)
				}
			}
			e.Close()
		}
	}
}

// TestEngineReplyHops: a directed-route reply is taken when its hop count is the
// route's and its hop pointer is back at 0, or, from the local node (no hops), at 1,
// where a device's SMA may leave it (the kernel hands that reply up unchanged).
func TestEngineReplyHops(t *testing.T) {
	for _, c := range []struct {
		path   []uint8
		hc, hp byte
		ok     bool
	}{
		{nil, 0, 0, true},
		{nil, 0, 1, true},
		{nil, 0, 2, false},
		{nil, 1, 0, false},
		{[]uint8{1, 3}, 2, 0, true},
		{[]uint8{1, 3}, 2, 1, false},
		{[]uint8{1, 3}, 2, 3, false},
		{[]uint8{1, 3}, 1, 0, false},
		{[]uint8{1, 3}, 3, 0, false},
	} {
		f := newFake(func(m []byte) [][]byte {
			r := reply(m, []byte{1, 1, 1, 2})
			r[offHopCount], r[offHopPointer] = c.hc, c.hp
			return [][]byte{r}
		})
		e := newEngine(f, umadWindow, Options{Timeout: time.Second}, 0)
		calls := []Call{{Req: getNodeInfo(DirectedRoute(c.path...))}}
		if err := e.Exchange(context.Background(), calls); err != nil {
			t.Fatal(err)
		}
		if err := calls[0].Err; (err == nil) != c.ok || errors.Is(err, ErrTimeout) {
			t.Errorf("route %v, reply hop count %d pointer %d: err = %v, want ok %v", c.path, c.hc, c.hp, err, c.ok)
		}
		e.Close()
	}
}

// TestEngineReplyClassVersion: the PMA and the SA replies are checked for their class
// versions (1 and 2) on the batch path too.
func TestEngineReplyClassVersion(t *testing.T) {
	for _, c := range []struct {
		req     Request
		version byte
		ok      bool
	}{
		{Request{Addr: LIDAddress(1), Class: ClassPerf, Method: MethodGet, Attr: AttrPortCounters, Data: PortCountersRequestData(1)}, 1, true},
		{Request{Addr: LIDAddress(1), Class: ClassPerf, Method: MethodGet, Attr: AttrPortCounters, Data: PortCountersRequestData(1)}, 2, false},
		{Request{Addr: LIDAddress(1), Class: ClassSubnAdm, Method: MethodGet, Attr: AttrPathRecord}, 2, true},
		{Request{Addr: LIDAddress(1), Class: ClassSubnAdm, Method: MethodGet, Attr: AttrPathRecord}, 1, false},
		{getNodeInfo(LIDAddress(1)), 1, true},
		{getNodeInfo(LIDAddress(1)), 0, false},
	} {
		f := newFake(func(m []byte) [][]byte {
			r := reply(m, nil)
			r[offClassVersion] = c.version
			return [][]byte{r}
		})
		e := newEngine(f, umadWindow, Options{Timeout: time.Second}, 0)
		calls := []Call{{Req: c.req}}
		if err := e.Exchange(context.Background(), calls); err != nil {
			t.Fatal(err)
		}
		if err := calls[0].Err; (err == nil) != c.ok || errors.Is(err, ErrTimeout) {
			t.Errorf("%s reply with class version %d: err = %v, want ok %v", c.req.Class, c.version, err, c.ok)
		}
		e.Close()
	}
}

func TestEngineCancelAndClose(t *testing.T) {
	f := newFake(func([]byte) [][]byte { return nil })
	e := newEngine(f, umadWindow, Options{Timeout: time.Hour}, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := e.Do(ctx, getNodeInfo(LIDAddress(1))); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("canceled: err = %v", err)
	}
	done := make(chan error)
	go func() {
		_, err := e.Do(context.Background(), getNodeInfo(LIDAddress(1)))
		done <- err
	}()
	time.Sleep(10 * time.Millisecond)
	e.Close()
	select {
	case err := <-done:
		if !errors.Is(err, ErrClosed) {
			t.Errorf("in flight at Close: err = %v, want ErrClosed", err)
		}
	case <-time.After(time.Second):
		t.Fatal("Do did not return after Close")
	}
	if _, err := e.Do(context.Background(), getNodeInfo(LIDAddress(1))); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: err = %v", err)
	}
	if err := e.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestGetPKeyTableBlocks(t *testing.T) {
	var calls atomic.Int32
	f := newFake(func(m []byte) [][]byte {
		calls.Add(1)
		mod := binary.BigEndian.Uint32(m[offAttrModifier:])
		var blk [PKeysPerBlock]uint16
		for i := range blk {
			blk[i] = uint16(mod&0xffff)<<8 | uint16(i) | uint16(mod>>16)<<15
		}
		return [][]byte{reply(m, encodePKeyBlock(blk))}
	})
	e := newEngine(f, umadWindow, Options{Timeout: time.Second}, 0)
	defer e.Close()
	tbl, err := GetPKeyTable(context.Background(), e, DirectedRoute(), 1, 70)
	if err != nil {
		t.Fatal(err)
	}
	if len(tbl) != 70 || calls.Load() != 3 {
		t.Fatalf("%d entries from %d reads, want 70 from 3", len(tbl), calls.Load())
	}
	for i, v := range tbl {
		if want := uint16(i/32)<<8 | uint16(i%32) | 0x8000; v != want {
			t.Fatalf("entry %d = %#04x, want %#04x (block %d, port 1)", i, v, want, i/32)
		}
	}
	if tbl, err := GetPKeyTable(context.Background(), e, DirectedRoute(), 1, 0); err != nil || len(tbl) != 0 {
		t.Errorf("length 0: %v, %v", tbl, err)
	}
	if _, err := GetPKeyTable(context.Background(), e, DirectedRoute(), 1, -1); err == nil {
		t.Error("length -1: no error")
	}
}

// encodePKeyBlock is the inverse of ParsePKeyBlock, for fake replies (the
// package itself never encodes a P_KeyTable: that would be a Set).
func encodePKeyBlock(blk [PKeysPerBlock]uint16) []byte {
	d := make([]byte, 2*PKeysPerBlock)
	for i, v := range blk {
		binary.BigEndian.PutUint16(d[2*i:], v)
	}
	return d
}

// TestMarshalRefusesAllButGet: the codec is the guard that keeps ibkey
// read-only. Every method byte but Get (Set, Send, Trap, TrapRepress, the
// responses and the 254 values nobody defined) is refused, for every class and
// both kinds of address, with ErrMethodRefused and no bytes; the SA class also
// takes GetTable, the SA's other read.
func TestMarshalRefusesAllButGet(t *testing.T) {
	addrs := []Address{LIDAddress(1), DirectedRoute(), DirectedRoute(1, 2)}
	for _, class := range []Class{ClassSubnLID, ClassSubnDirected, ClassPerf, ClassSubnAdm} {
		for _, a := range addrs {
			if (class == ClassPerf || class == ClassSubnAdm) && a.Directed {
				continue
			}
			for m := range 256 {
				r := Request{Addr: a, Class: class, Method: Method(m), Attr: AttrPKeyTable, Data: make([]byte, 64)}
				b, err := r.Marshal(7)
				// The SA's SubnAdmGetTable (IBA 15.2.4) reads too; nothing else is sent.
				if Method(m) == MethodGet || class == ClassSubnAdm && Method(m) == MethodGetTable {
					if err != nil || len(b) != Size {
						t.Errorf("%s %s Get: %v", class, a, err)
					}
					continue
				}
				if err == nil || b != nil {
					t.Errorf("%s %s %s: encoded %d bytes, want a refusal", class, a, Method(m), len(b))
				} else if !errors.Is(err, ErrMethodRefused) {
					t.Errorf("%s %s %s: %v, want ErrMethodRefused", class, a, Method(m), err)
				}
			}
		}
	}
}

// Marshal is MarshalTo into a new buffer.
func (r *Request) Marshal(tid uint64) ([]byte, error) {
	b := make([]byte, Size)
	if err := r.MarshalTo(b, tid); err != nil {
		return nil, err
	}
	return b, nil
}
