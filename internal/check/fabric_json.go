package check

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"
)

// The fabric file: what `ibkey fabric discover -o json` writes and --fabric-file reads.
//
//	{"format": "ibkey-fabric", "version": 1, "source", "swept_at", "duration_ms",
//	 "local": {"node_guid", "port"}, "incomplete",
//	 "nodes": [{"node_guid", "type" (ca|switch|router), "description", "system_image_guid",
//	   "vendor_id", "device_id", "num_ports", "partition_cap", "partition_enforcement_cap",
//	   "dr_path", "errors",
//	   "ports": [{"port", "port_guid", "lid", "lmc", "sm_lid", "state", "phys_state",
//	     "enforcement": {"inbound", "outbound", "filter_raw_inbound", "filter_raw_outbound"},
//	     "pkey_violations", "peer": {"node_guid", "port"} | null, "peer_error",
//	     "table_size", "pkeys": ["0xffff", ...], "pkeys_error", "error"}]}],
//	 "unreachable": [{"from": {"node_guid", "port"}, "dr_path", "error"}]}
//
// GUIDs and P_Keys are hex strings; the rest are numbers. A later version that is not
// readable by this one gets a new "version"; fields may be added within a version.
const (
	FabricFormat  = "ibkey-fabric"
	FabricVersion = 1
)

// MaxFabricFileSize bounds what DecodeFabric reads (a 10,000-node fabric with 64-entry
// tables is about 60 MB).
const MaxFabricFileSize = 512 << 20

type fabricFile struct {
	Format      string        `json:"format"`
	Version     int           `json:"version"`
	Source      string        `json:"source"`
	SweptAt     time.Time     `json:"swept_at,omitzero"`
	DurationMS  float64       `json:"duration_ms"`
	Local       PortID        `json:"local"`
	Incomplete  string        `json:"incomplete,omitempty"`
	Nodes       []*Node       `json:"nodes"`
	Unreachable []Unreachable `json:"unreachable"`
}

type portAlias Port

type portFile struct {
	*portAlias
	PKeys *[]string `json:"pkeys"`
}

// MarshalJSON writes the P_Key table as hex strings ("pkeys": null when not read).
func (p *Port) MarshalJSON() ([]byte, error) {
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

// UnmarshalJSON reads what MarshalJSON writes.
func (p *Port) UnmarshalJSON(b []byte) error {
	w := portFile{portAlias: (*portAlias)(p)}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	p.PKeys = nil
	if w.PKeys != nil {
		p.PKeys = make([]PKey, len(*w.PKeys))
		for i, s := range *w.PKeys {
			if len(s) != 6 || s[:2] != "0x" || !allHex(s[2:]) {
				return fmt.Errorf("port %d: pkeys[%d] = %q: want 0x and four hex digits", p.Num, i, s)
			}
			v, _ := strconv.ParseUint(s[2:], 16, 16)
			p.PKeys[i] = PKey(v)
		}
	}
	return nil
}

// EncodeFabric writes f as the fabric file, indented.
func EncodeFabric(w io.Writer, f *Fabric) error {
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
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(ff)
}

// FabricFileError is a fabric file that cannot be used, with what is wrong.
type FabricFileError struct {
	Problem string
}

func (e *FabricFileError) Error() string { return "fabric file: " + e.Problem }

// DecodeFabric reads a fabric file written by EncodeFabric and checks that it is
// consistent: a known format and version, unique node GUIDs, port numbers in range,
// each peer an existing port that names this one back, tables as long as their size.
func DecodeFabric(r io.Reader) (*Fabric, error) {
	bad := func(format string, a ...any) (*Fabric, error) {
		return nil, &FabricFileError{Problem: fmt.Sprintf(format, a...)}
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
	if head.Version != FabricVersion {
		return bad("version %d, this ibkey reads version %d", head.Version, FabricVersion)
	}
	var ff fabricFile
	if err := json.Unmarshal(raw, &ff); err != nil {
		return bad("%v", err)
	}
	if ff.DurationMS < 0 || ff.DurationMS > float64(1<<53) {
		return bad("duration_ms %v out of range", ff.DurationMS)
	}
	f := &Fabric{Source: ff.Source, SweptAt: ff.SweptAt, Duration: time.Duration(ff.DurationMS * float64(time.Millisecond)),
		Local: ff.Local, Incomplete: ff.Incomplete, Unreachable: ff.Unreachable}
	seen := map[GUID]bool{}
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
		case NodeCA, NodeSwitch, NodeRouter:
		default:
			return bad("node %s: type %q, want ca, switch or router", n.GUID, n.Type)
		}
		if n.NumPorts < 0 || n.NumPorts > 254 {
			return bad("node %s: num_ports %d out of range 0-254", n.GUID, n.NumPorts)
		}
		ports := map[int]bool{}
		for j, p := range n.Ports {
			if p == nil {
				return bad("node %s: ports[%d] is null", n.GUID, j)
			}
			lo := 1
			if n.Type == NodeSwitch {
				lo = 0
			}
			if p.Num < lo || p.Num > n.NumPorts {
				return bad("node %s: port %d out of range %d-%d", n.GUID, p.Num, lo, n.NumPorts)
			}
			if ports[p.Num] {
				return bad("node %s: port %d listed twice", n.GUID, p.Num)
			}
			ports[p.Num] = true
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
			if peer.Peer == nil || *peer.Peer != (PortID{n.GUID, p.Num}) {
				return bad("node %s port %d: peer %s port %d does not name it back", n.GUID, p.Num, p.Peer.Node, p.Peer.Port)
			}
			if *p.Peer == (PortID{n.GUID, p.Num}) {
				return bad("node %s port %d is its own peer", n.GUID, p.Num)
			}
		}
	}
	if f.Local != (PortID{}) && f.Node(f.Local.Node) == nil {
		return bad("local node %s is not in the file", f.Local.Node)
	}
	return f, nil
}
