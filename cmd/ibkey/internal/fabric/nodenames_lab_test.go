package fabric

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
)

// listLine is a node line of ibnetdiscover -l (infiniband-diags ibnetdiscover.c,
// list_node): TYPE : GUID ports N devid D vendid V "NAME".
var listLine = regexp.MustCompile(`^(?:Switch|Ca|Router)\s*: 0x([0-9a-f]{16}) ports \d+ devid 0x[0-9a-f]+ vendid 0x[0-9a-f]+ "(.*)"$`)

// TestLabNodeNameMap: the same node name map gives the same names in ibkey as in
// ibnetdiscover --node-name-map (infiniband-diags), line forms included: quoted,
// unquoted with a comment, # right after the GUID, decimal and octal GUIDs, an empty
// name (ignored) and a GUID named twice (the first counts).
func TestLabNodeNameMap(t *testing.T) {
	l := startFabricLab(t, "small.net")
	f, _ := l.discoverFile(t)
	if len(f.Nodes) < 6 {
		t.Fatalf("%d nodes, want at least 6", len(f.Nodes))
	}
	g := func(i int) uint64 { return uint64(f.Nodes[i].GUID) }
	lines := []string{
		"# node name map for small.net",
		fmt.Sprintf("0x%016x \"quoted name\" # and a comment", g(0)),
		fmt.Sprintf("  0x%x unquoted name # comment", g(1)),
		fmt.Sprintf("0x%x#after the GUID", g(2)),
		fmt.Sprintf("%d \"decimal GUID\"", g(3)),
		fmt.Sprintf("0%o \"octal GUID\"", g(4)),
		fmt.Sprintf("0x%x \"\"", g(5)),
		fmt.Sprintf("0x%x \"second name\"", g(0)),
		"0xdeadbeef \"not in the fabric\"",
	}
	file := filepath.Join(t.TempDir(), "node-name-map")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// ibnetdiscover -l lists every node under its remapped name (list_node calls
	// remap_node_name; the topology output does not remap CA header lines).
	listed := map[check.GUID]string{}
	for _, line := range strings.Split(l.tool(t, "ibnetdiscover", "-l", "--node-name-map", file), "\n") {
		if m := listLine.FindStringSubmatch(line); m != nil {
			g, _ := strconv.ParseUint(m[1], 16, 64)
			listed[check.GUID(g)] = m[2]
		}
	}
	if len(listed) != len(f.Nodes) {
		t.Fatalf("ibnetdiscover -l listed %d nodes, want %d", len(listed), len(f.Nodes))
	}
	r := l.run(t, "fabric", "pkeys", "--node-name-map", file, "-o", "json")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	var doc struct {
		Ports []struct {
			NodeDesc string     `json:"node_desc"`
			NodeGUID check.GUID `json:"node_guid"`
		} `json:"ports"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatal(err)
	}
	named := map[check.GUID]string{}
	for _, p := range doc.Ports {
		named[p.NodeGUID] = p.NodeDesc
	}
	renamed := 0
	for guid, want := range listed {
		got, ok := named[guid]
		if !ok {
			t.Errorf("node %s not in fabric pkeys", guid)
			continue
		}
		if got != want {
			t.Errorf("node %s: ibkey %q, ibnetdiscover %q", guid, got, want)
		}
		if strings.Contains(want, "name") || strings.Contains(want, "GUID") {
			renamed++
		}
	}
	if renamed != 5 {
		t.Errorf("%d nodes renamed by ibnetdiscover, want 5: was the map used?\n%v", renamed, listed)
	}
	t.Logf("%d nodes, %d renamed, the same names as ibnetdiscover -l", len(listed), renamed)
}
