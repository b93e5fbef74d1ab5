package fabric

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/check"
)

var oddText = []string{"", "HcaA", "mlx5_0 \"quoted\"", "a<b>&c", "tab\there\nnewline", "\x01ctl\x7f", "bad\xffutf8",
	"日本語 \u2028", "LinkUp", "ACTIVE", "not read: timeout"}

func randFabric(r *rand.Rand) *Fabric {
	text := func() string { return oddText[r.IntN(len(oddText))] }
	guid := func() check.GUID { return check.GUID(r.Uint64() >> r.IntN(64)) }
	f := &Fabric{Source: text(), Duration: time.Duration(r.Int64N(int64(10 * time.Second))), Local: check.PortID{Node: guid(), Port: r.IntN(3)}}
	switch r.IntN(3) {
	case 0:
		f.SweptAt = time.Date(2026, 11, 22, 18, 0, 0, r.IntN(1e9), time.UTC)
	case 1:
		f.SweptAt = time.Date(2026, 11, 22, 18, 0, 0, 0, time.FixedZone("x", 3600))
	}
	if r.IntN(3) == 0 {
		f.Incomplete = text()
	}
	if r.IntN(5) == 0 {
		f.Duration = time.Duration(r.IntN(3)) // 0, 1 and 2 ns: duration_ms 0 and tiny floats
	}
	for range r.IntN(5) {
		n := &Node{GUID: guid(), Type: check.NodeType(text()), Description: text(), SystemImageGUID: guid(),
			VendorID: r.Uint32(), DeviceID: uint16(r.Uint32()), NumPorts: r.IntN(300) - 10, PartitionCap: r.IntN(70000),
			Path: text()}
		if r.IntN(2) == 0 {
			n.PartitionEnforcementCap = r.IntN(70000)
		}
		if r.IntN(3) == 0 {
			n.Errors = []string{}
			for range r.IntN(3) {
				n.Errors = append(n.Errors, text())
			}
		}
		if r.IntN(6) > 0 {
			n.Ports = []*Port{}
		}
		for i := range r.IntN(4) {
			p := &Port{Num: i, GUID: guid(), LID: uint16(r.Uint32()), LMC: uint8(r.Uint32()), SMLID: uint16(r.Uint32()),
				State: text(), PhysState: text(), PKeyViolations: uint16(r.Uint32()), TableSize: r.IntN(70000) - 5}
			if r.IntN(2) == 0 {
				p.Enforcement = &check.Enforcement{Inbound: r.IntN(2) == 0, Outbound: r.IntN(2) == 0, FilterRawInbound: r.IntN(2) == 0, FilterRawOutbound: r.IntN(2) == 0}
			}
			if r.IntN(2) == 0 {
				p.Peer = &check.PortID{Node: guid(), Port: r.IntN(255)}
			}
			if r.IntN(3) == 0 {
				p.PeerError = text()
			}
			if r.IntN(3) > 0 {
				p.PKeys = []check.PKey{}
				for range r.IntN(5) {
					p.PKeys = append(p.PKeys, check.PKey(r.Uint32()))
				}
			}
			if r.IntN(3) == 0 {
				p.PKeysError = text()
			}
			if r.IntN(3) == 0 {
				p.Error = text()
			}
			n.Ports = append(n.Ports, p)
		}
		f.Nodes = append(f.Nodes, n)
	}
	for range r.IntN(3) {
		f.Unreachable = append(f.Unreachable, Unreachable{check.PortID{Node: guid(), Port: r.IntN(40)}, text(), text()})
	}
	return f
}

// TestEncodeFabricRoundTrip: the streamed fabric file is one JSON document that
// encoding/json reads back into the same values, on random fabrics (odd strings,
// absent and empty tables, errors, zero and non-UTC times) and on a fat tree.
func TestEncodeFabricRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 5004))
	fabrics := []*Fabric{testFabric(), {}}
	for range 500 {
		fabrics = append(fabrics, randFabric(r))
	}
	for i, f := range fabrics {
		var b bytes.Buffer
		if err := EncodeFabric(&b, f); err != nil {
			t.Fatal(err)
		}
		var got fabricFile
		dec := json.NewDecoder(&b)
		if err := dec.Decode(&got); err != nil {
			t.Fatalf("fabric %d: %v\n%s", i, err, b.Bytes())
		}
		if dec.More() {
			t.Fatalf("fabric %d: more than one document", i)
		}
		want := fabricFile{Format: FabricFormat, Version: FabricVersion, Source: f.Source, SweptAt: f.SweptAt,
			DurationMS: float64(f.Duration.Microseconds()) / 1000, Local: f.Local, Incomplete: f.Incomplete,
			Nodes: f.Nodes, Unreachable: f.Unreachable}
		if want.Nodes == nil {
			want.Nodes = []*Node{}
		}
		if want.Unreachable == nil {
			want.Unreachable = []Unreachable{}
		}
		// Compared as encoding/json reads them: invalid UTF-8 comes back as U+FFFD.
		gb, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		wb, err := json.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		var norm fabricFile
		if err := json.Unmarshal(wb, &norm); err != nil {
			t.Fatal(err)
		}
		if wb, err = json.Marshal(norm); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(gb, wb) {
			t.Fatalf("fabric %d: read back\n%s\nwant\n%s", i, gb, wb)
		}
	}
}

// TestFabricWritersCoverEveryField: every json-tagged field of the fabric file's types
// is written by the streamed encoder (a field added to a struct without a line in
// writeNode or writePort fails here, not silently in a user's file).
func TestFabricWritersCoverEveryField(t *testing.T) {
	f := testFabric()
	f.Incomplete = "stopped"
	f.Unreachable = []Unreachable{{check.PortID{Node: 1, Port: 2}, "0,1", "timeout"}}
	n := f.Nodes[0]
	n.Errors = []string{"SwitchInfo: timeout"}
	n.PartitionEnforcementCap = 64
	p := n.Ports[1]
	p.Enforcement, p.PeerError, p.PKeysError, p.Error = &check.Enforcement{}, "x", "y", "z"
	p.GIDPrefix = 0xfe80000000000000
	var b bytes.Buffer
	if err := EncodeFabric(&b, f); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, v := range []any{fabricFile{}, Node{}, Port{}, check.PortID{}, check.Enforcement{}, Unreachable{}} {
		rt := reflect.TypeOf(v)
		for i := range rt.NumField() {
			tag, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
			if tag == "" || tag == "-" {
				continue
			}
			if !strings.Contains(out, `"`+tag+`":`) {
				t.Errorf("%s.%s (%q) is not written", rt.Name(), rt.Field(i).Name, tag)
			}
		}
	}
	if !strings.Contains(out, `"pkeys": [`) {
		t.Errorf("pkeys not written")
	}
}

// TestCapNodeDescription: a node_desc longer than a NodeDescription is cut to 64 bytes
// when a file is read; one a node could have sent, escapes counted as the bytes they
// stand for, is kept whole.
func TestCapNodeDescription(t *testing.T) {
	long := strings.Repeat("x", 1<<20)
	for _, tc := range []struct{ in, want string }{
		{"HcaA", "HcaA"},
		{strings.Repeat("a", 64), strings.Repeat("a", 64)},
		{strings.Repeat("a", 65), strings.Repeat("a", 61) + "…"},
		{long, strings.Repeat("x", 61) + "…"},
		// 64 bytes sent by a node, 16 of them control bytes escaped by textsafe.
		{strings.Repeat(`\x1b`, 16) + strings.Repeat("b", 48), strings.Repeat(`\x1b`, 16) + strings.Repeat("b", 48)},
		{strings.Repeat(`\u202e`, 21) + "z", strings.Repeat(`\u202e`, 21) + "z"},
		{strings.Repeat(`\u202e`, 22), strings.Repeat(`\u202e`, 20) + "…"},
		{strings.Repeat("日", 22), strings.Repeat("日", 20) + "…"},
		{`\q` + strings.Repeat("c", 62), `\q` + strings.Repeat("c", 62)},
		// Backslashes, written \\ (issue 28): 64 bytes sent by a node are kept whole.
		{strings.Repeat(`\\`, 32) + strings.Repeat("d", 32), strings.Repeat(`\\`, 32) + strings.Repeat("d", 32)},
		{strings.Repeat(`\\`, 33) + strings.Repeat("d", 32), strings.Repeat(`\\`, 33) + strings.Repeat("d", 28) + "…"},
	} {
		got := capNodeDescription(tc.in)
		if got != tc.want {
			t.Errorf("capNodeDescription(%.40q...) = %q, want %q", tc.in, got, tc.want)
		}
	}
	f := testFabric()
	f.Nodes[0].Description = long
	var b bytes.Buffer
	if err := EncodeFabric(&b, f); err != nil {
		t.Fatal(err)
	}
	g, err := DecodeFabric(&b)
	if err != nil {
		t.Fatal(err)
	}
	if d := g.Node(f.Nodes[0].GUID).Description; d != strings.Repeat("x", 61)+"…" {
		t.Errorf("a 1 MB node_desc is read as %d bytes", len(d))
	}
}
