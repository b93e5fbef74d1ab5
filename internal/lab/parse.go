package lab

import (
	"bufio"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// PKeyTable is what `smpquery pkeys` prints.
type PKeyTable struct {
	// Entries are the printed entries in index order. smpquery prints whole
	// rows of 8, so there may be more than Capacity.
	Entries []uint16
	// Capacity is the "N pkeys capacity for this port" line.
	Capacity int
}

var (
	pkeyRowRE = regexp.MustCompile(`^\s*(\d+):((?:\s+0x[0-9a-fA-F]{4})+)\s*$`)
	pkeyCapRE = regexp.MustCompile(`^\s*(\d+) pkeys capacity for this port\s*$`)
)

// ParsePKeys parses `smpquery pkeys` output: rows `   0: 0xffff 0x8001 ...`
// (8 per row, starting at the printed index) and a capacity line.
func ParsePKeys(out string) (PKeyTable, error) {
	var t PKeyTable
	haveCap := false
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if m := pkeyRowRE.FindStringSubmatch(line); m != nil {
			idx, _ := strconv.Atoi(m[1])
			if idx != len(t.Entries) {
				return t, fmt.Errorf("smpquery pkeys: row starts at index %d, want %d: %q", idx, len(t.Entries), line)
			}
			for _, f := range strings.Fields(m[2]) {
				v, err := strconv.ParseUint(f, 0, 16)
				if err != nil {
					return t, fmt.Errorf("smpquery pkeys: %q: %v", line, err)
				}
				t.Entries = append(t.Entries, uint16(v))
			}
			continue
		}
		if m := pkeyCapRE.FindStringSubmatch(line); m != nil {
			t.Capacity, _ = strconv.Atoi(m[1])
			haveCap = true
			continue
		}
		if strings.TrimSpace(line) != "" && !strings.HasPrefix(strings.TrimSpace(line), "#") {
			return t, fmt.Errorf("smpquery pkeys: unexpected line %q", line)
		}
	}
	if !haveCap {
		return t, fmt.Errorf("smpquery pkeys: no capacity line in %q", out)
	}
	if len(t.Entries) < t.Capacity {
		return t, fmt.Errorf("smpquery pkeys: %d entries printed for capacity %d", len(t.Entries), t.Capacity)
	}
	return t, nil
}

// Fields is the `Name:.....value` output of smpquery nodeinfo / portinfo /
// switchinfo and perfquery, by name.
type Fields map[string]string

// ParseFields parses `Name:.....value` lines; lines starting with # and
// lines without a colon are skipped. A name printed twice keeps its first
// value.
func ParseFields(out string) Fields {
	f := Fields{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, val, ok := strings.Cut(line, ":")
		if !ok || strings.ContainsAny(name, " \t") {
			continue
		}
		if _, dup := f[name]; !dup {
			f[name] = strings.TrimSpace(strings.TrimLeft(val, "."))
		}
	}
	return f
}

// Uint returns field name as a number (decimal or 0x hex).
func (f Fields) Uint(name string) (uint64, error) {
	v, ok := f[name]
	if !ok {
		return 0, fmt.Errorf("no field %q", name)
	}
	n, err := strconv.ParseUint(v, 0, 64)
	if err != nil {
		return 0, fmt.Errorf("field %s: %q is not a number", name, v)
	}
	return n, nil
}

// NetNode is one node as ibnetdiscover prints it.
type NetNode struct {
	Type     string // Switch, Ca or Rt
	NumPorts int
	Desc     string
}

// Net is what ibnetdiscover printed: nodes by node GUID, links, and the port GUIDs it
// prints for CA ports.
type Net struct {
	Nodes map[uint64]NetNode
	// Links are "0x%016x[port]-0x%016x[port]", the smaller end first.
	Links map[string]bool
	// PortGUIDs are the CA port GUIDs, by "0x%016x[port]" (node GUID, port).
	PortGUIDs map[string]uint64
}

var (
	netHeaderRE = regexp.MustCompile(`^(Switch|Ca|Rt)\s+(\d+)\s+"[SHR]-([0-9a-f]{16})"\s+#\s+"([^"]*)"`)
	netLinkRE   = regexp.MustCompile(`^\[(\d+)\](?:\(([0-9a-f]+)\))?\s+"[SHR]-([0-9a-f]{16})"\[(\d+)\](?:\(([0-9a-f]+)\))?`)
)

// NetEnd names one end of a link as Net does.
func NetEnd(guid uint64, port int) string { return fmt.Sprintf("0x%016x[%d]", guid, port) }

// NetLink names a link as Net does, whichever end comes first.
func NetLink(a uint64, ap int, b uint64, bp int) string {
	x, y := NetEnd(a, ap), NetEnd(b, bp)
	if y < x {
		x, y = y, x
	}
	return x + "-" + y
}

// ParseIbnetdiscover parses ibnetdiscover's topology output.
func ParseIbnetdiscover(out string) (Net, error) {
	n := Net{Nodes: map[uint64]NetNode{}, Links: map[string]bool{}, PortGUIDs: map[string]uint64{}}
	var cur uint64
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if m := netHeaderRE.FindStringSubmatch(line); m != nil {
			cur, _ = strconv.ParseUint(m[3], 16, 64)
			ports, _ := strconv.Atoi(m[2])
			n.Nodes[cur] = NetNode{Type: m[1], NumPorts: ports, Desc: m[4]}
			continue
		}
		if m := netLinkRE.FindStringSubmatch(line); m != nil {
			if cur == 0 {
				return n, fmt.Errorf("ibnetdiscover: link before a node: %q", line)
			}
			p, _ := strconv.Atoi(m[1])
			rg, _ := strconv.ParseUint(m[3], 16, 64)
			rp, _ := strconv.Atoi(m[4])
			n.Links[NetLink(cur, p, rg, rp)] = true
			if m[2] != "" {
				pg, _ := strconv.ParseUint(m[2], 16, 64)
				n.PortGUIDs[NetEnd(cur, p)] = pg
			}
		}
	}
	if len(n.Nodes) == 0 {
		return n, fmt.Errorf("ibnetdiscover printed no nodes:\n%s", out)
	}
	return n, nil
}
