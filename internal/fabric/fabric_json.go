package fabric

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/jsondoc"
	"github.com/ibkey/ibkey/internal/textsafe"
)

// The fabric file: what `ibkey fabric discover -o json` writes and --fabric-file reads.
//
//	{"format": "ibkey-fabric", "version": 2, "source", "swept_at", "duration_ms",
//	 "local": {"node_guid", "port"}, "incomplete",
//	 "nodes": [{"node_guid", "type" (ca|switch|router), "node_desc", "system_image_guid",
//	   "vendor_id", "device_id", "num_ports", "partition_cap", "partition_enforcement_cap",
//	   "dr_path", "errors",
//	   "ports": [{"port", "port_guid", "lid", "lmc", "sm_lid", "gid_prefix"?, "state", "phys_state",
//	     "enforcement": {"inbound", "outbound", "filter_raw_inbound", "filter_raw_outbound"},
//	     "pkey_violations", "peer": {"node_guid", "port"} | null, "peer_error",
//	     "table_size", "pkeys": ["0xffff", ...], "pkeys_error", "error"}]}],
//	 "unreachable": [{"from": {"node_guid", "port"}, "dr_path", "error"}]}
//
// GUIDs and P_Keys are hex strings; the rest are numbers. A later version that is not
// readable by this one gets a new "version"; fields may be added within a version.
// Version 2 names a node's NodeDescription "node_desc", as every other ibkey JSON
// document does; version 1 called it "description" and is still read.
const (
	FabricFormat  = "ibkey-fabric"
	FabricVersion = 2
	// FabricVersionOldest is the oldest version DecodeFabric reads.
	FabricVersionOldest = 1
)

// MaxFabricFileSize bounds what DecodeFabric reads (a 10,000-node fabric with 64-entry
// tables is about 60 MB written compact, 130 MB indented as EncodeFabric writes it).
const MaxFabricFileSize = 512 << 20

type fabricFile struct {
	Format      string        `json:"format"`
	Version     int           `json:"version"`
	Source      string        `json:"source"`
	SweptAt     time.Time     `json:"swept_at,omitzero"`
	DurationMS  float64       `json:"duration_ms"`
	Local       check.PortID  `json:"local"`
	Incomplete  string        `json:"incomplete,omitempty"`
	Nodes       []*Node       `json:"nodes"`
	Unreachable []Unreachable `json:"unreachable"`
}

// PKeyTable is a port's P_Key table as read, entry i at index i. The fabric file writes
// it as hex strings, "0x%04x" (check.PKey's String), and null when it was not read.
type PKeyTable []check.PKey

// MarshalJSON writes the table as an array of "0x%04x" strings, in one buffer (a
// 5,000-node file holds about a million entries: one text per entry would be as many
// allocations).
func (t PKeyTable) MarshalJSON() ([]byte, error) {
	if t == nil {
		return []byte("null"), nil
	}
	const digits = "0123456789abcdef"
	b := make([]byte, 0, 2+len(t)*9)
	b = append(b, '[')
	for i, k := range t {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"', '0', 'x', digits[k>>12], digits[k>>8&0xf], digits[k>>4&0xf], digits[k&0xf], '"')
	}
	return append(b, ']'), nil
}

// UnmarshalJSON reads what MarshalJSON writes: null, or "0x" and four hex digits per entry.
func (t *PKeyTable) UnmarshalJSON(b []byte) error {
	var s *[]string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*t = nil
	if s == nil {
		return nil
	}
	*t = make(PKeyTable, len(*s))
	for i, k := range *s {
		v, err := strconv.ParseUint(strings.TrimPrefix(k, "0x"), 16, 16)
		if len(k) != 6 || k[:2] != "0x" || err != nil {
			return fmt.Errorf("pkeys[%d] = %q: want 0x and four hex digits", i, k)
		}
		(*t)[i] = check.PKey(v)
	}
	return nil
}

// EncodeFabric writes f as the fabric file, indented by two spaces as every ibkey JSON
// document is. It only reads f: the order written is the one its builder gave it
// (Normalize). The nodes are encoded one at a time (jsondoc): encoding/json holds a
// document whole, twice when indenting, which for a 5,004-node file was 200 MB.
func EncodeFabric(w io.Writer, f *Fabric) error {
	d := jsondoc.New(w)
	d.Field("format", FabricFormat)
	d.Field("version", FabricVersion)
	d.Field("source", f.Source)
	if !f.SweptAt.IsZero() {
		d.Field("swept_at", f.SweptAt)
	}
	d.Field("duration_ms", float64(f.Duration.Microseconds())/1000)
	d.Field("local", f.Local)
	if f.Incomplete != "" {
		d.Field("incomplete", f.Incomplete)
	}
	d.Array("nodes", len(f.Nodes), func(i int) any { return f.Nodes[i] })
	d.Array("unreachable", len(f.Unreachable), func(i int) any { return f.Unreachable[i] })
	if err := d.Close(); err != nil {
		return fmt.Errorf("fabric file: %w", err)
	}
	return nil
}

// DecodeFabric reads a fabric file written by EncodeFabric and checks that it is
// consistent: a known format and version, unique node GUIDs, port numbers in range,
// each peer an existing port that names this one back, tables as long as their size.
// Its errors say what is wrong, not which file: the caller names it
// (query.ReadFabricFile).
func DecodeFabric(r io.Reader) (*Fabric, error) {
	bad := func(format string, a ...any) (*Fabric, error) {
		return nil, fmt.Errorf(format, a...)
	}
	data, err := io.ReadAll(io.LimitReader(r, MaxFabricFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFabricFileSize {
		return bad("larger than %d bytes", MaxFabricFileSize)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return bad("not JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return bad("more than one JSON document")
	}
	var head struct {
		Format  string `json:"format"`
		Version int    `json:"version"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return bad("not a fabric file: %v", err)
	}
	if head.Format != FabricFormat {
		return bad("format %q, want %q (a file written by `ibkey fabric discover -o json`)", head.Format, FabricFormat)
	}
	if head.Version < FabricVersionOldest || head.Version > FabricVersion {
		return bad("version %d, this ibkey reads versions %d to %d", head.Version, FabricVersionOldest, FabricVersion)
	}
	var ff fabricFile
	if err := json.Unmarshal(raw, &ff); err != nil {
		return bad("%v", err)
	}
	// After the format and the types: another document's keys are not this one's,
	// and a value of the wrong type is said by its field's own type.
	var keys fileKeys
	if err := json.Unmarshal(raw, &keys); err != nil {
		return bad("%v", err)
	}
	if err := keys.require(); err != nil {
		return nil, err
	}
	if head.Version == 1 {
		// Version 1 named the NodeDescription "description".
		var v1 struct {
			Nodes []*struct {
				Description string `json:"description"`
			} `json:"nodes"`
		}
		if err := json.Unmarshal(raw, &v1); err != nil {
			return bad("%v", err)
		}
		for i, n := range v1.Nodes {
			if n != nil && i < len(ff.Nodes) && ff.Nodes[i] != nil {
				ff.Nodes[i].Description = n.Description
			}
		}
	}
	if ff.DurationMS < 0 || ff.DurationMS > float64(1<<53) {
		return bad("duration_ms %v out of range", ff.DurationMS)
	}
	f := &Fabric{Source: ff.Source, SweptAt: ff.SweptAt, Duration: time.Duration(ff.DurationMS * float64(time.Millisecond)),
		Local: ff.Local, Incomplete: ff.Incomplete, Unreachable: ff.Unreachable}
	seen := map[check.GUID]bool{}
	for i, n := range ff.Nodes {
		if n == nil {
			return bad("nodes[%d] is null", i)
		}
		if n.GUID == 0 {
			return bad("nodes[%d]: node_guid 0", i)
		}
		if seen[n.GUID] {
			return bad("node %s listed twice", n.GUID)
		}
		seen[n.GUID] = true
		switch n.Type {
		case check.NodeCA, check.NodeSwitch, check.NodeRouter:
		default:
			return bad("node %s: type %q, want ca, switch or router", n.GUID, n.Type)
		}
		if n.NumPorts < 0 || n.NumPorts > 254 {
			return bad("node %s: num_ports %d out of range 0-254", n.GUID, n.NumPorts)
		}
		n.Description = capNodeDescription(n.Description)
		ports := map[int]bool{}
		for j, p := range n.Ports {
			if p == nil {
				return bad("node %s: ports[%d] is null", n.GUID, j)
			}
			lo := 1
			if n.Type == check.NodeSwitch {
				lo = 0
			}
			if p.Num < lo || p.Num > n.NumPorts {
				return bad("node %s: port %d out of range %d-%d", n.GUID, p.Num, lo, n.NumPorts)
			}
			if ports[p.Num] {
				return bad("node %s: port %d listed twice", n.GUID, p.Num)
			}
			ports[p.Num] = true
			if p.LMC > 7 {
				// PortInfo LMC is 3 bits (IBA 14.2.5.6): 2^LMC LIDs from the base LID.
				return bad("node %s port %d: lmc %d out of range 0-7", n.GUID, p.Num, p.LMC)
			}
			if p.TableSize < 0 || p.TableSize > 0xffff {
				return bad("node %s port %d: table_size %d out of range 0-65535", n.GUID, p.Num, p.TableSize)
			}
			if p.PKeys != nil && len(p.PKeys) != p.TableSize {
				return bad("node %s port %d: %d pkeys for table_size %d", n.GUID, p.Num, len(p.PKeys), p.TableSize)
			}
		}
	}
	f.Nodes = ff.Nodes
	f.Normalize()
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p.Peer == nil {
				continue
			}
			if p.Num == 0 || p.Peer.Port == 0 {
				return bad("node %s port %d: a switch's port 0 has no cable", n.GUID, p.Num)
			}
			peer := f.Port(*p.Peer)
			if peer == nil {
				return bad("node %s port %d: peer %s port %d is not in the file", n.GUID, p.Num, p.Peer.Node, p.Peer.Port)
			}
			if peer.Peer == nil || *peer.Peer != (check.PortID{Node: n.GUID, Port: p.Num}) {
				return bad("node %s port %d: peer %s port %d does not name it back", n.GUID, p.Num, p.Peer.Node, p.Peer.Port)
			}
			if *p.Peer == (check.PortID{Node: n.GUID, Port: p.Num}) {
				return bad("node %s port %d is its own peer", n.GUID, p.Num)
			}
		}
	}
	if f.Local != (check.PortID{}) && f.Node(f.Local.Node) == nil {
		return bad("local node %s is not in the file", f.Local.Node)
	}
	if len(f.Nodes) == 0 {
		// A sweep always holds the node it started from: an empty file was not written
		// by one, and checking it would find "no problems" in nothing.
		return bad("no nodes (a sweep holds at least the node it started from)")
	}
	return f, nil
}

// present records that a key was in the file, whatever its value (null included).
type present bool

func (p *present) UnmarshalJSON([]byte) error { *p = true; return nil }

// fileKeys are the keys every fabric file ibkey writes has and whose absence would
// read as a value: a port without "peer" as a port without a cable (its switch port
// never judged), without "state" as no state, without "lid" or "sm_lid" as 0 (another
// subnet), without "pkeys" as a table not read, a node without "partition_cap" as a
// table of length 0. A file made by hand or by another tool must say each, null where
// it was not read; read as 0 or none, it would make fabric check say "no problems"
// about what the file never held.
type fileKeys struct {
	Nodes []struct {
		GUID         check.GUID `json:"node_guid"`
		Type         present    `json:"type"`
		NumPorts     present    `json:"num_ports"`
		PartitionCap present    `json:"partition_cap"`
		Ports        *[]struct {
			Num       present `json:"port"`
			GUID      present `json:"port_guid"`
			LID       present `json:"lid"`
			SMLID     present `json:"sm_lid"`
			State     present `json:"state"`
			Peer      present `json:"peer"`
			TableSize present `json:"table_size"`
			PKeys     present `json:"pkeys"`
		} `json:"ports"`
	} `json:"nodes"`
}

// require refuses a file that lacks one of the keys (fileKeys), naming it.
func (keys *fileKeys) require() error {
	type key struct {
		name string
		ok   present
	}
	missing := func(ks ...key) []string {
		var out []string
		for _, k := range ks {
			if !k.ok {
				out = append(out, k.name)
			}
		}
		return out
	}
	lacks := func(where string, missing []string) error {
		return fmt.Errorf("%s lacks %s (every fabric file ibkey writes has it, null where it was not read: without it the file would read as a 0 or a none it never said)",
			where, strings.Join(missing, ", "))
	}
	for i, n := range keys.Nodes {
		node := func() string { return fmt.Sprintf("nodes[%d] (node %s)", i, n.GUID) }
		if m := missing(key{`"type"`, n.Type}, key{`"num_ports"`, n.NumPorts}, key{`"partition_cap"`, n.PartitionCap}, key{`"ports"`, n.Ports != nil}); m != nil {
			return lacks(node(), m)
		}
		for j, p := range *n.Ports {
			if m := missing(key{`"port"`, p.Num}, key{`"port_guid"`, p.GUID}, key{`"lid"`, p.LID}, key{`"sm_lid"`, p.SMLID},
				key{`"state"`, p.State}, key{`"peer"`, p.Peer}, key{`"table_size"`, p.TableSize}, key{`"pkeys"`, p.PKeys}); m != nil {
				return lacks(fmt.Sprintf("%s ports[%d]", node(), j), m)
			}
		}
	}
	return nil
}

// MaxNodeDescription is the size of a NodeDescription (IBA 14.2.5.2: 64 bytes).
const MaxNodeDescription = 64

// capNodeDescription is a node_desc as long as a NodeDescription can be: a longer one
// was not read from a node (a file edited or made by hand; a 1 MB one would be carried
// into every line that names the node), so it is cut to 61 bytes and "…". The file
// holds descriptions as textsafe wrote them, a control byte as an escape (\x1b,
// \u202e): the length is that of the text they stand for (textsafe.Unescape), so a
// description read from a node is never cut.
func capNodeDescription(s string) string {
	if len(s) <= MaxNodeDescription {
		return s
	}
	raw := textsafe.Unescape(s)
	if len(raw) <= MaxNodeDescription {
		return s
	}
	const mark = "…"
	keep := 0
	for keep < len(raw) {
		_, w := utf8.DecodeRuneInString(raw[keep:])
		if keep+w > MaxNodeDescription-len(mark) {
			break
		}
		keep += w
	}
	return textsafe.String(raw[:keep]) + mark
}
