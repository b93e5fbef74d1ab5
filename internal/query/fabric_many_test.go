package query

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/ibverbs/mad"
)

// caNet answers SMPs for one-port CAs, each at its LIDs (LMC 1: a CA at 4 also holds
// LID 5); any other LID gets no reply, as a LID nobody holds (ibsim and smpquery:
// "_do_madrpc failed; dport (Lid 50)").
type caNet map[uint16]uint64 // base LID -> node GUID

func (n caNet) Do(_ context.Context, req mad.Request) (*mad.Packet, error) {
	base := req.Addr.LID &^ 1
	guid, ok := n[base]
	if req.Addr.Directed || !ok {
		return nil, &mad.TimeoutError{Addr: req.Addr, Attr: req.Attr, Attempts: 1, Timeout: time.Millisecond}
	}
	d := make([]byte, 64)
	be := binary.BigEndian
	switch req.Attr {
	case mad.AttrNodeInfo:
		d[1], d[2], d[3] = 1, byte(mad.NodeCA), 1
		be.PutUint64(d[12:], guid)
		be.PutUint64(d[20:], guid+1)
		be.PutUint16(d[28:], 32) // PartitionCap: one block
		d[36] = 1                // LocalPortNum
	case mad.AttrNodeDescription:
		copy(d, "ca-"+string(rune('A'+base/2)))
	case mad.AttrPortInfo:
		be.PutUint16(d[16:], base)
		d[32] = byte(mad.PortStateActive)
		d[34] = 1 // LMC
	case mad.AttrPKeyTable:
		be.PutUint16(d, 0xffff)
	default:
		return nil, &mad.StatusError{Status: 0x000c}
	}
	return &mad.Packet{Class: req.Class, Attr: req.Attr, Modifier: req.Modifier, Data: d}, nil
}

func (caNet) Close() error { return nil }

func lidSels(lids ...uint16) []FabricSelector {
	out := make([]FabricSelector, len(lids))
	for i, l := range lids {
		out[i] = FabricSelector{Addr: mad.LIDAddress(l)}
	}
	return out
}

// TestLoadManyPartial: of several addresses, those that did not answer come back as a
// *PartialError naming each (its selector, why), beside the ports of the others: not
// read is incomplete (exit 4, an *UnknownError), never an environment error, and
// NotRead lists them as it lists a host's unread devices.
func TestLoadManyPartial(t *testing.T) {
	f := &Fabric{T: caNet{2: 0x10, 6: 0x20}, Via: "fake"}
	sels := lidSels(2, 3, 4, 6, 9)
	views, err := f.LoadMany(context.Background(), sels, LoadOptions{Tables: true})
	var got []string
	for _, v := range views {
		got = append(got, v.Fabric.Address)
	}
	// lid 3 is the CA at 2's second LID (LMC 1): its port once, at the first address.
	if strings.Join(got, ",") != "lid 2,lid 6" {
		t.Errorf("views at %q, want lid 2,lid 6", got)
	}
	var pe *PartialError
	if !errors.As(err, &pe) {
		t.Fatalf("err %T %v, want a *PartialError", err, err)
	}
	var env *EnvError
	var unknown *UnknownError
	if errors.As(err, &env) || !errors.As(err, &unknown) {
		t.Errorf("%v: an *EnvError (exit 3) or no *UnknownError (exit 4)", err)
	}
	if len(pe.Unread) != 2 {
		t.Fatalf("unread %+v, want lid 4 and lid 9", pe.Unread)
	}
	for i, want := range []uint16{4, 9} {
		u := pe.Unread[i]
		var na *NoAnswerError
		if u.Address == nil || u.Address.Addr.LID != want || u.What != mad.LIDAddress(want).String() || u.Device != "" || u.Port != -1 || !errors.As(u.Err, &na) {
			t.Errorf("unread[%d] = %+v (address %v), want lid %d with its *NoAnswerError", i, u, u.Address, want)
		}
	}
	unread, fatal := NotRead(views, err)
	// The line names the address once: What names it, Err says the rest.
	if fatal != nil || len(unread) != 2 || unread[0].Address == nil || !strings.HasPrefix(unread[1].Message(), "not read: lid 9: no answer via fake") ||
		strings.Count(unread[1].Message(), "9") != 1 || strings.Count(pe.Error(), "lid 4") != 1 {
		t.Errorf("NotRead = %+v, %v; PartialError %v", unread, fatal, err)
	}
}

// TestLoadManyNoneOrMissing: a single address fails with its own error, as before;
// several of which none answered, or a port asked for that a node that answered does
// not have, are an *EnvError (exit 3) naming each, never a *PartialError.
func TestLoadManyNoneOrMissing(t *testing.T) {
	f := &Fabric{T: caNet{2: 0x10}, Via: "fake"}
	ctx := context.Background()
	views, err := f.Load(ctx, lidSels(9)[0], LoadOptions{})
	var na *NoAnswerError
	if len(views) != 0 || !errors.As(err, &na) || na.Addr.LID != 9 {
		t.Errorf("one address: %d views, %v", len(views), err)
	}
	views, err = f.LoadMany(ctx, lidSels(8, 9), LoadOptions{})
	var pe *PartialError
	var env *EnvError
	if len(views) != 0 || errors.As(err, &pe) || !errors.As(err, &env) || !strings.HasPrefix(err.Error(), "2 of 2 addresses failed: no answer from lid 8") {
		t.Errorf("none answered: %d views, %T %v", len(views), err, err)
	}
	// Each address's *NoAnswerError is in it, for errors.As (an exporter or watch
	// telling no answer from another failure).
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &na) || na.Addr.LID != 8 || !errors.As(err, &joined) || len(joined.Unwrap()) != 2 {
		t.Fatalf("none answered: %v does not wrap each address's *NoAnswerError", err)
	}
	for i, e := range joined.Unwrap() {
		if !errors.As(e, &na) || na.Addr.LID != uint16(8+i) {
			t.Errorf("none answered: failure %d is %v, want lid %d's *NoAnswerError", i, e, 8+i)
		}
	}
	sels := lidSels(2, 9)
	sels[0].Port, sels[0].HasPort = 2, true
	sels[1].Port, sels[1].HasPort = 2, true
	_, err = f.LoadMany(ctx, sels, LoadOptions{})
	if errors.As(err, &pe) || !errors.As(err, &env) || !strings.Contains(err.Error(), "no port 2 on the CA at lid 2 (ports: 1)") {
		t.Errorf("missing port: %T %v", err, err)
	}
	var nf *NotFoundError
	if !errors.As(err, &nf) || !errors.As(err, &na) || na.Addr.LID != 9 {
		t.Errorf("missing port and no answer: %v does not wrap the *NotFoundError and the *NoAnswerError", err)
	}
}

// TestLoadManyNoneAnswered: several addresses of which none answered are named
// together, the transport, the attempts and the hint said once (each was said per
// address, a screen of one sentence for --lid 1-3); a few, then a count; a failure
// of another kind as before.
func TestLoadManyNoneAnswered(t *testing.T) {
	f := &Fabric{T: caNet{2: 0x10}, Via: "fake"}
	ctx := context.Background()
	_, err := f.LoadMany(ctx, lidSels(7, 8, 9), LoadOptions{})
	// Consecutive LIDs are one range, as --lid takes them.
	want := "3 of 3 addresses failed: no answer from lid 7-9 via fake: no reply after 1 attempt(s) of 1ms: " +
		"is the LID assigned and routed? before a subnet manager has run, only directed routes reach other nodes"
	if err.Error() != want {
		t.Errorf("got\n%v\nwant\n%s", err, want)
	}
	_, err = f.LoadMany(ctx, lidSels(10, 12, 14, 16, 18, 20, 22), LoadOptions{})
	if want := "7 of 7 addresses failed: no answer from lid 10, lid 12, lid 14, lid 16, lid 18, and 2 more via fake: "; !strings.HasPrefix(err.Error(), want) ||
		strings.Count(err.Error(), "via fake") != 1 {
		t.Errorf("got\n%v\nwant %q...", err, want)
	}
	// A missing port, then no answer: each reason, its addresses.
	sels := lidSels(2, 8, 9)
	for i := range sels {
		sels[i].Port, sels[i].HasPort = 2, true
	}
	_, err = f.LoadMany(ctx, sels, LoadOptions{})
	if want := "3 of 3 addresses failed: no port 2 on the CA at lid 2 (ports: 1); no answer from lid 8, lid 9 via fake: "; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("got\n%v\nwant %q...", err, want)
	}
}

// TestLoadManyMissingPort: a port asked for that some nodes do not have, beside ports
// read, is not read there: the ports read come back with a *PartialError naming each
// address whose node lacks the port (its *NotFoundError, with the node's ports), exit
// 4 and never an *EnvError (before: exit 3 after the output, and the addresses not in
// the JSON's incomplete). Only when no port at all was read is it exit 3.
func TestLoadManyMissingPort(t *testing.T) {
	f := &Fabric{T: caNet{2: 0x10, 4: 0x20, 6: 0x30}, Via: "fake"}
	sels := lidSels(2, 4, 6)
	sels[0].Port, sels[0].HasPort = 2, true // the CA at 2 has one port
	sels[2].Port, sels[2].HasPort = 2, true
	views, err := f.LoadMany(context.Background(), sels, LoadOptions{Tables: true})
	if len(views) != 1 || views[0].Fabric.Address != "lid 4" {
		t.Fatalf("views %v, want lid 4's port", views)
	}
	var (
		pe      *PartialError
		env     *EnvError
		unknown *UnknownError
	)
	if !errors.As(err, &pe) || errors.As(err, &env) || !errors.As(err, &unknown) {
		t.Fatalf("%T %v: want a *PartialError (exit 4), never an *EnvError (exit 3)", err, err)
	}
	if len(pe.Unread) != 2 {
		t.Fatalf("unread %+v, want lid 2 port 2 and lid 6 port 2", pe.Unread)
	}
	for i, want := range []string{"lid 2 port 2", "lid 6 port 2"} {
		u := pe.Unread[i]
		var nf *NotFoundError
		if u.What != want || u.Address == nil || u.Port != 2 || !errors.As(u.Err, &nf) || u.Err.Error() != "the CA has no such port (ports: 1)" {
			t.Errorf("unread[%d] = %+v, want %s with its *NotFoundError naming the ports there", i, u, want)
		}
	}
	unread, fatal := NotRead(views, err)
	if fatal != nil || len(unread) != 2 {
		t.Errorf("NotRead = %+v, %v", unread, fatal)
	}
}

// twoPortCA is a CA at LID 2 whose port 2 has LID 8: at 8 answers what other says
// (nil: nothing, as a LID not routed).
type twoPortCA struct{ other mad.Transport }

func (c twoPortCA) Do(ctx context.Context, req mad.Request) (*mad.Packet, error) {
	if !req.Addr.Directed && req.Addr.LID == 8 && c.other != nil {
		return c.other.Do(ctx, mad.Request{Addr: mad.LIDAddress(4), Class: req.Class, Method: req.Method, Attr: req.Attr, Modifier: req.Modifier})
	}
	if req.Addr.Directed || req.Addr.LID != 2 {
		return nil, &mad.TimeoutError{Addr: req.Addr, Attr: req.Attr, Attempts: 1, Timeout: time.Millisecond}
	}
	d := make([]byte, 64)
	be := binary.BigEndian
	switch req.Attr {
	case mad.AttrNodeInfo:
		d[1], d[2], d[3] = 1, byte(mad.NodeCA), 2
		be.PutUint64(d[12:], 0x10)
		be.PutUint16(d[28:], 32)
		d[36] = 1
	case mad.AttrPortInfo:
		be.PutUint16(d[16:], uint16(2+6*(req.Modifier-1))) // port 1: LID 2, port 2: LID 8
		d[32] = byte(mad.PortStateActive)
	case mad.AttrNodeDescription:
	default:
		return nil, &mad.StatusError{Status: 0x000c}
	}
	return &mad.Packet{Class: req.Class, Attr: req.Attr, Modifier: req.Modifier, Data: d}, nil
}

func (twoPortCA) Close() error { return nil }

// TestOtherPortOwnLID: a CA's other port is read through its own LID; when that LID
// does not answer, or answers as another port, the port's table is not read, and why
// names the LID once (before: "port 2's own LID 8 did not answer: mad: lid 8: ...").
func TestOtherPortOwnLID(t *testing.T) {
	sel := FabricSelector{Addr: mad.LIDAddress(2), Port: 2, HasPort: true}
	for _, tc := range []struct {
		t    mad.Transport
		want string
	}{
		{twoPortCA{}, "port 2's own LID 8: no answer via fake: no reply after 1 attempt(s) of 1ms: is the LID assigned and routed?"},
		{twoPortCA{caNet{4: 0x20}}, "port 2's own LID 8: it answers as port 1 of node 0x0000000000000020, not port 2 of 0x0000000000000010"},
	} {
		views, err := (&Fabric{T: tc.t, Via: "fake"}).Load(context.Background(), sel, LoadOptions{Tables: true})
		if err != nil || len(views) != 1 {
			t.Fatalf("%v, %v", views, err)
		}
		if v := views[0]; !strings.HasPrefix(v.TableMissing, tc.want) || strings.Count(v.TableMissing, "8") != 1 || v.TableNotRead() == "" {
			t.Errorf("table missing: %q\nwant %s...", v.TableMissing, tc.want)
		}
	}
}

// countLocal counts the local port's PortInfo Gets (a directed route of no hops) and
// answers them with *pi, the rest through Transport.
type countLocal struct {
	mad.Transport
	pi    *mad.PortInfo
	reads *atomic.Int32
}

func (c countLocal) Do(ctx context.Context, req mad.Request) (*mad.Packet, error) {
	if req.Addr.Directed && len(req.Addr.Path) == 0 && req.Attr == mad.AttrPortInfo {
		c.reads.Add(1)
		return localPort{c.Transport, *c.pi}.Do(ctx, req)
	}
	return c.Transport.Do(ctx, req)
}

// TestLoadManyLocalOnce: the hint of the LIDs of one read that got no answer comes
// from one read of the local port's PortInfo, whatever number of LIDs failed (it was
// read once per LID); the next read reads it again, so that a subnet manager that
// came or went during a watch is seen.
func TestLoadManyLocalOnce(t *testing.T) {
	pi := mad.PortInfo{PortState: mad.PortStateInit}
	var reads atomic.Int32
	f := &Fabric{T: countLocal{caNet{2: 0x10}, &pi, &reads}, Via: "fake"}
	ctx := context.Background()
	_, err := f.LoadMany(ctx, lidSels(2, 7, 8, 9, 10, 11), LoadOptions{Tables: true})
	var pe *PartialError
	if !errors.As(err, &pe) || len(pe.Unread) != 5 || !strings.Contains(pe.Unread[0].Err.Error(), "(INIT, LID 0, SM LID 0)") {
		t.Fatalf("%v, want 5 unread with the local port's state", err)
	}
	if n := reads.Load(); n != 1 {
		t.Errorf("local PortInfo read %d times for 5 silent LIDs, want 1", n)
	}
	pi = mad.PortInfo{PortState: mad.PortStateActive, LID: 1, MasterSMLID: 1}
	_, err = f.LoadMany(ctx, lidSels(7, 8, 9), LoadOptions{})
	if n := reads.Load(); n != 2 || !strings.Contains(err.Error(), "a subnet manager has run (SM LID 1)") {
		t.Errorf("second read: local PortInfo read %d times in all (want 2): %v", n, err)
	}
}

// TestPartialLines: of a read that read some addresses, those not read for the same
// reason are one line, the reason said once (each was a line repeating the transport
// and hint), a run of consecutive LIDs with the same port choice a range as --lid
// takes it; a part of the host is a line of its own, as before; past MaxListed lines,
// a count of the parts not named.
func TestPartialLines(t *testing.T) {
	noAnswer := errors.New("no answer via fake: dropped or no route (1 attempt(s)): HINT")
	noPort := errors.New("the CA has no such port (ports: 1)")
	at := func(lid uint16, port int, err error) Unread {
		s := FabricSelector{Addr: mad.LIDAddress(lid)}
		if port > 0 {
			s.Port, s.HasPort = port, true
		}
		return Unread{What: s.String(), Port: -1, Address: &s, Err: err}
	}
	var un []Unread
	for _, l := range []uint16{1, 3, 4, 5, 6, 8, 20, 21} {
		un = append(un, at(l, 2, noPort))
	}
	for l := uint16(10); l <= 40; l++ {
		un = append(un, at(l, 0, noAnswer))
	}
	un = append(un, at(41, 2, noAnswer), at(42, 2, noAnswer), at(43, 0, noAnswer), Unread{What: "device mlx5_1", Port: -1, Err: noPort})
	got := strings.Join((&PartialError{Unread: un}).Lines(), "\n")
	want := "lid 1 port 2, lid 3-6 port 2, lid 8 port 2, lid 20 port 2, lid 21 port 2: the CA has no such port (ports: 1)\n" +
		"lid 10-40, lid 41 port 2, lid 42 port 2, lid 43: " + noAnswer.Error() + "\n" +
		"device mlx5_1: the CA has no such port (ports: 1)"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// Seven reasons: five lines, then the addresses of the other two counted.
	un = nil
	for i := range 7 {
		for l := range uint16(3) {
			un = append(un, at(uint16(10*i)+l, 0, fmt.Errorf("reason %d", i)))
		}
	}
	lines := (&PartialError{Unread: un}).Lines()
	if len(lines) != MaxListed+1 || lines[0] != "lid 0-2: reason 0" || lines[MaxListed] != "and 6 more (every one is in -o json's incomplete)" {
		t.Errorf("seven reasons: %q", lines)
	}
}
