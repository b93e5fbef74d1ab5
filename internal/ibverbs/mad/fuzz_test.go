package mad

import (
	"context"
	"encoding/binary"
	"testing"
	"time"
)

// Seed corpora live in testdata/fuzz/<FuzzName>/: replies shaped like ibsim's
// (every attribute, directed and LID-routed, PMA) and broken ones.

// FuzzDecode feeds arbitrary bytes to Decode and every attribute parser:
// errors are fine, panics are not.
func FuzzDecode(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Decode(b)
		if err != nil {
			return
		}
		if p.Class == ClassSubnDirected && b[offHopCount] > MaxHops {
			t.Fatalf("hop count %d decoded", b[offHopCount])
		}
		parseAll(p.Data)
		parseAll(b)
		if p.Cut && (p.Class != ClassSubnAdm || b[offRMPPFlags]&rmppFlagActive == 0) {
			t.Fatal("a reply without RMPP taken as cut")
		}
	})
}

func parseAll(d []byte) {
	ParseNodeInfo(d)
	ParseNodeDescription(d)
	ParsePortInfo(d)
	ParsePKeyBlock(d)
	ParseSwitchInfo(d)
	ParsePortCounters(d)
	ParsePKeyTableRecord(d)
	ParseMCMemberRecord(d)
}

// FuzzParseDRPath: a path that parses prints back to itself and encodes.
func FuzzParseDRPath(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseDRPath(s)
		if err != nil {
			return
		}
		b, err := ParseDRPath(a.String()[len("DR path "):])
		if err != nil || b.String() != a.String() {
			t.Fatalf("%q -> %q -> %v, %v", s, a, b, err)
		}
		r := Request{Addr: a, Class: ClassSubnLID, Method: MethodGet, Attr: AttrNodeInfo}
		m, err := r.Marshal(1)
		if err != nil {
			t.Fatalf("%q: Marshal: %v", s, err)
		}
		if _, err := Decode(m); err != nil {
			t.Fatalf("%q: Decode(Marshal): %v", s, err)
		}
	})
}

// FuzzReply delivers an arbitrary frame as the reply to a Get (with the
// request's transaction ID patched in when it is long enough): the transport
// returns a reply or an error, never panics or hangs.
//
// Each request is answered at once by the fuzzed frame and then by a report that
// the request was dropped (what ibsim's status 110 or umad's ETIMEDOUT says), so a
// frame the transport ignores ends its call at once (no retries: a timeout error)
// instead of after a timer: every input runs in microseconds, in one order, and its
// coverage does not depend on timing (it used to wait 5 ms per ignored frame, and
// coverage that changed with timing kept the fuzzer minimizing: under 200 inputs in
// 90 s).
func FuzzReply(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte, directed bool) {
		markers := map[*byte]bool{}
		fe := newFake(func(m []byte) [][]byte {
			r := append([]byte(nil), b...)
			if len(r) >= offTID+8 {
				copy(r[offTID:], m[offTID:offTID+8])
			}
			drop := append([]byte(nil), m...)
			markers[&drop[0]] = true
			return [][]byte{r, drop}
		})
		fe.inline = true
		fe.drop = func(r []byte) bool { return len(r) > 0 && markers[&r[0]] }
		e := newEngine(fe, umadWindow, Options{Timeout: time.Minute, Retries: -1}, 0)
		defer e.Close()
		addr := LIDAddress(1)
		if directed {
			addr = DirectedRoute(1, 2)
		}
		for _, r := range []Request{
			{Addr: addr, Class: ClassSubnLID, Method: MethodGet, Attr: AttrPKeyTable},
			{Addr: LIDAddress(1), Class: ClassPerf, Method: MethodGet, Attr: AttrPortCounters, Data: PortCountersRequestData(1)},
		} {
			p, err := e.Do(context.Background(), r)
			if err == nil {
				if p.Method != MethodGetResp || p.Status != 0 || p.Attr != r.Attr {
					t.Fatalf("accepted %+v for %+v", p, r)
				}
				if b[offClassVersion] != classVersion(p.Class) {
					t.Fatalf("accepted class version %d for %s", b[offClassVersion], p.Class)
				}
				if p.Class == ClassSubnDirected && (b[offHopCount] != 2 || b[offHopPointer] != 0) {
					t.Fatalf("accepted hop count %d, hop pointer %d for a route of 2 hops", b[offHopCount], b[offHopPointer])
				}
				parseAll(p.Data)
			}
		}
		if len(b) >= 24 {
			GetPKeyTable(context.Background(), e, addr, uint8(b[20]), int(binary.BigEndian.Uint16(b[22:])%200))
		}
	})
}
