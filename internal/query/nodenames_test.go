package query

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
)

// TestParseNodeNameMap: lines read as rdma-core's util/node_name_map.c reads them.
func TestParseNodeNameMap(t *testing.T) {
	for _, c := range []struct {
		line string
		guid check.GUID
		name string // "" : no entry
	}{
		{`0x0002c90300001001 "node01 mlx5_0"`, 0x0002c90300001001, "node01 mlx5_0"},
		{`  0x1	"tab and indent"`, 1, "tab and indent"},
		{`0X1F "upper-case 0X"`, 0x1f, "upper-case 0X"},
		{`0x2 "name" # a comment`, 2, "name"},
		{`0x3 unquoted name`, 3, "unquoted name"},
		{`0x4 unquoted # comment`, 4, "unquoted "},  // the space before # is kept
		{`0x5 "a#b"`, 5, "a"},                       // strtok stops at #
		{`0x6#after the GUID`, 6, "after the GUID"}, // strtok skips the leading #
		{`0x7 ""`, 0, ""},                           // empty: no entry
		{`0x8`, 0, ""},                              // no name: no entry
		{`17 "decimal"`, 17, "decimal"},
		{`017 "octal"`, 15, "octal"},
		{`0 "zero"`, 0, "zero"},
		{`0x9 "quoted"   `, 9, "quoted"},
		{"0xa \"crlf\"\r", 10, "crlf"},
		{`# 0xb "comment"`, 0, ""},
		{`   # indented comment`, 0, ""},
		{``, 0, ""},
	} {
		m, err := ParseNodeNameMap("map", []byte(c.line+"\n"))
		if err != nil {
			t.Errorf("%q: %v", c.line, err)
			continue
		}
		if c.name == "" {
			if len(m.names) != 0 {
				t.Errorf("%q: %d entries, want none", c.line, len(m.names))
			}
			continue
		}
		if got := m.Name(c.guid, "desc"); got != c.name || len(m.names) != 1 {
			t.Errorf("%q: %s is %q (%d entries), want %q", c.line, c.guid, got, len(m.names), c.name)
		}
	}
}

func TestParseNodeNameMapErrors(t *testing.T) {
	for _, c := range []struct{ data, want string }{
		{"0x1 \"ok\"\nnode01 0x2\n", `map:2: "node01" is not a GUID`},
		{"0x12g \"x\"\n", `map:1: "0x12g" is not a GUID`},
		{"0x \"x\"\n", `map:1: "0x" is not a GUID`},
		{"08 \"not octal\"\n", `map:1: "08" is not a GUID`},
		{"0x10000000000000000 \"too big\"\n", `"0x10000000000000000" is not a GUID`},
		{"-1 \"negative\"\n", `"-1" is not a GUID`},
		{"0x1 \"" + strings.Repeat("n", 300) + "\"\n", "map:1: line of 306 bytes, longer than the 255 infiniband-diags reads"},
	} {
		_, err := ParseNodeNameMap("map", []byte(c.data))
		var ue *UsageError
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.As(err, &ue) {
			t.Errorf("%q: %v, want %q, a usage error (exit 2)", c.data, err, c.want)
		}
	}
}

// TestNodeNameMapRename: mapped nodes take the map's name, others keep their
// NodeDescription; the first of two names counts; a nil map changes nothing.
func TestNodeNameMapRename(t *testing.T) {
	m, err := ParseNodeNameMap("map", []byte("0xa \"first\"\n0xa \"second\"\n0xc \"not in the fabric\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	f := &fabric.Fabric{Nodes: []*fabric.Node{{GUID: 0xa, Description: "HcaA"}, {GUID: 0xb, Description: "HcaB"}}}
	var none *NodeNameMap
	none.Rename(f)
	m.Rename(f)
	if f.Nodes[0].Description != "first" || f.Nodes[1].Description != "HcaB" {
		t.Errorf("renamed to %q, %q; want first, HcaB", f.Nodes[0].Description, f.Nodes[1].Description)
	}
}

// TestReadNodeNameMap: the file is read through fsread (a FIFO or a directory is
// refused, exit 2; cmdutil.ReadNodeNameMap adds the flag's name).
func TestReadNodeNameMap(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "map")
	if err := os.WriteFile(file, []byte("0x1 \"one\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := ReadNodeNameMap(file)
	if err != nil || m.Name(1, "") != "one" {
		t.Fatalf("%v, %v", m, err)
	}
	for _, bad := range []string{dir, filepath.Join(dir, "missing")} {
		var ue *UsageError
		if _, err := ReadNodeNameMap(bad); err == nil || !errors.As(err, &ue) || !strings.Contains(err.Error(), bad) {
			t.Errorf("%s: %v, want a usage error naming the file", bad, err)
		}
	}
}

// FuzzParseNodeNameMap: any input parses or fails with a line number; never panics;
// a name is never empty and holds no " or # and no line break.
func FuzzParseNodeNameMap(f *testing.F) {
	for _, s := range []string{"0x1 \"a\"\n", "# c\n\n0x2 b # c\n", "017 x\n0x3#y\n", "0x \"\"\n", "\xff\xfe 1"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseNodeNameMap("map", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "map:") {
				t.Fatalf("error without the line: %v", err)
			}
			return
		}
		for g, name := range m.names {
			if name == "" || strings.ContainsAny(name, "\"#\n") {
				t.Fatalf("%s: name %q", g, name)
			}
		}
	})
}
