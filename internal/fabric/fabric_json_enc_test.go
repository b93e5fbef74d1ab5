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

// refEncodeFabric is how the fabric file was written before EncodeFabricWith streamed
// it: encoding/json over fabricFile, ports through refPortJSON. The streamed writer must
// write the same bytes.
func refEncodeFabric(f *Fabric, indent bool) ([]byte, error) {
	f.Normalize()
	ff := fabricFile{
		Format: FabricFormat, Version: FabricVersion, Source: f.Source, SweptAt: f.SweptAt,
		DurationMS: float64(f.Duration.Microseconds()) / 1000, Local: f.Local, Incomplete: f.Incomplete,
		Nodes: f.Nodes, Unreachable: f.Unreachable,
	}
	if ff.Nodes == nil {
		ff.Nodes = []*Node{}
	}
	if ff.Unreachable == nil {
		ff.Unreachable = []Unreachable{}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	if indent {
		enc.SetIndent("", "  ")
	}
	err := enc.Encode(ff)
	return b.Bytes(), err
}

// refPortJSON is the port by its struct tags through encoding/json, the table as hex
// strings after the other fields (Port's json:"-" PKeys replaced by a "pkeys" field).
func refPortJSON(p *Port) ([]byte, error) {
	w := portFile{portAlias: (*portAlias)(p)}
	if p.PKeys != nil {
		s := make([]string, len(p.PKeys))
		for i, k := range p.PKeys {
			s[i] = k.String()
		}
		w.PKeys = &s
	}
	return json.Marshal(w)
}

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

// TestEncodeFabricMatchesEncodingJSON: the streamed fabric file, compact and indented,
// is byte for byte what encoding/json writes from the struct tags, on random fabrics
// (odd strings, absent and empty tables, errors, zero and non-UTC times) and on the
// 5,004-node benchmark fabric.
func TestEncodeFabricMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 5004))
	fabrics := []*Fabric{testFabric(), {}, fatTreeFabric(4, 2, 3)}
	for range 500 {
		fabrics = append(fabrics, randFabric(r))
	}
	for i, f := range fabrics {
		for _, indent := range []bool{false, true} {
			want, err := refEncodeFabric(f, indent)
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := EncodeFabricWith(&got, f, FabricEncoding{Indent: indent}); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Fatalf("fabric %d indent %v:\n got %s\nwant %s", i, indent, got.Bytes(), want)
			}
		}
		for _, n := range f.Nodes {
			for _, p := range n.Ports {
				want, err := refPortJSON(p)
				if err != nil {
					t.Fatal(err)
				}
				got, err := json.Marshal(p)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("port:\n got %s\nwant %s", got, want)
				}
			}
		}
	}
	var def bytes.Buffer
	if err := EncodeFabric(&def, testFabric()); err != nil {
		t.Fatal(err)
	}
	if want, _ := refEncodeFabric(testFabric(), true); !bytes.Equal(def.Bytes(), want) {
		t.Errorf("EncodeFabric is not the indented file")
	}
}

// TestFabricWritersCoverEveryField: every json-tagged field of the fabric file's types
// is written by the streamed encoder (a field added to a struct without a line in
// writeNode or writePort fails here, not silently in a user's file).
func TestFabricWritersCoverEveryField(t *testing.T) {
	f := fatTreeFabric(2, 1, 1)
	f.Incomplete = "stopped"
	f.Unreachable = []Unreachable{{check.PortID{Node: 1, Port: 2}, "0,1", "timeout"}}
	n := f.Nodes[0]
	n.Errors = []string{"SwitchInfo: timeout"}
	n.PartitionEnforcementCap = 64
	p := n.Ports[1]
	p.Enforcement, p.PeerError, p.PKeysError, p.Error = &check.Enforcement{}, "x", "y", "z"
	p.GIDPrefix = 0xfe80000000000000
	var b bytes.Buffer
	if err := EncodeFabricWith(&b, f, FabricEncoding{}); err != nil {
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
	if !strings.Contains(out, `"pkeys":[`) {
		t.Errorf("pkeys not written")
	}
}
