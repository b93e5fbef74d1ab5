package query

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/fsread"
	"github.com/ibkey/ibkey/internal/textsafe"
)

// MaxNodeNameMapSize bounds a node name map file: a line is at most 255 bytes, so
// 16 MiB holds more than 65,000 nodes.
const MaxNodeNameMapSize = 16 << 20

// nodeNameMapLine is the longest line infiniband-diags reads: it reads the map with
// fgets into a 256-byte buffer (rdma-core util/node_name_map.c, PARSE_NODE_MAP_BUFLEN),
// so a longer line is cut, and what follows is parsed as a line of its own.
const nodeNameMapLine = 255

// NodeNameMap is a node name map in the format of infiniband-diags' --node-name-map
// (ibnetdiscover(8), "NODE NAME MAP FILE FORMAT"): one node per line, its node GUID
// then its name, usually quoted; blank lines and lines starting with # are ignored:
//
//	# compute nodes
//	0x0002c90300001001 "node01 mlx5_0"
//
// It is read as rdma-core's util/node_name_map.c reads it: the GUID is a C integer
// (0x hexadecimal, a leading 0 octal, else decimal) followed by a space, a # or the
// end of the line; the name is what follows, up to the next " or # (leading " and #
// skipped, as strtok(3) does); a GUID with an empty name is ignored; when a GUID is
// named twice, the first name counts (checked against ibnetdiscover -l). Unlike
// infiniband-diags, which warns and goes on without a map when a line does not parse,
// ibkey reports the line (exit 2); and it drops a CR at the end of a line.
type NodeNameMap struct {
	File  string
	names map[check.GUID]string
}

// ParseNodeNameMap parses data, the map file named file. Errors name the file and
// the line.
func ParseNodeNameMap(file string, data []byte) (*NodeNameMap, error) {
	m := &NodeNameMap{File: file, names: map[check.GUID]string{}}
	for i, line := range bytes.Split(data, []byte("\n")) {
		bad := func(msg string) error {
			return &UsageError{Msg: fmt.Sprintf("%s:%d: %s (accepted: GUID \"name\" lines, # comments)", file, i+1, msg)}
		}
		if len(line) > nodeNameMapLine {
			return nil, bad(fmt.Sprintf("line of %d bytes, longer than the %d infiniband-diags reads", len(line), nodeNameMapLine))
		}
		s := strings.TrimLeft(string(line), " \t\r\v\f")
		if s == "" || s[0] == '#' {
			continue
		}
		end := strings.IndexAny(s, " \t\r\v\f#")
		if end < 0 {
			end = len(s)
		}
		guid, err := parseCGUID(s[:end])
		if err != nil {
			return nil, bad(fmt.Sprintf("%q is not a GUID", s[:end]))
		}
		name := strings.TrimLeft(s[end:], " \t\r\v\f")
		name = strings.TrimLeft(name, "\"#")
		if k := strings.IndexAny(name, "\"#"); k >= 0 {
			name = name[:k]
		}
		// An unquoted name keeps the spaces before a comment, as in infiniband-diags;
		// only a CR (a file written on Windows) is dropped.
		name = strings.TrimSuffix(name, "\r")
		if name == "" {
			continue
		}
		if _, dup := m.names[guid]; !dup {
			// The map's names enter the model terminal-safe, as NodeDescriptions do
			// (infiniband-diags' clean_nodedesc, rdma-core util/node_name_map.c, blanks
			// the same characters; an escape shows what was there).
			m.names[guid] = textsafe.String(name)
		}
	}
	return m, nil
}

// parseCGUID reads an unsigned 64-bit integer as strtoull(3) with base 0 does, the
// whole of s: 0x or 0X hexadecimal, a leading 0 octal, else decimal.
func parseCGUID(s string) (check.GUID, error) {
	base, digits := 10, s
	switch {
	case len(s) > 2 && (s[:2] == "0x" || s[:2] == "0X"):
		base, digits = 16, s[2:]
	case len(s) > 1 && s[0] == '0':
		base, digits = 8, s[1:]
	}
	if digits == "" || strings.ContainsAny(digits, "_+-") {
		return 0, strconv.ErrSyntax
	}
	v, err := strconv.ParseUint(digits, base, 64)
	return check.GUID(v), err
}

// ReadNodeNameMap reads the map file path (bounded, a regular file only). Every
// problem is bad input (*UsageError) naming the file; the command adds the flag.
func ReadNodeNameMap(path string) (*NodeNameMap, error) {
	data, err := fsread.ReadFile(path, MaxNodeNameMapSize, "a node name map")
	if err != nil {
		return nil, &UsageError{Msg: err.Error(), Err: err}
	}
	return ParseNodeNameMap(path, data)
}

// Name is the name of the node with GUID g: the map's, else desc (its
// NodeDescription), as infiniband-diags' remap_node_name does.
func (m *NodeNameMap) Name(g check.GUID, desc string) string {
	if m != nil {
		if name, ok := m.names[g]; ok {
			return name
		}
	}
	return desc
}

// Rename gives every node of f the map's name (check.Node.Description), so every
// label, finding and table of a command shows it. A nil map changes nothing.
func (m *NodeNameMap) Rename(f *fabric.Fabric) {
	if m == nil || f == nil {
		return
	}
	for _, n := range f.Nodes {
		n.Description = m.Name(n.GUID, n.Description)
	}
}
