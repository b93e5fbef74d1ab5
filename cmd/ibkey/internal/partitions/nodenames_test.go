package partitions

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
)

// TestPartitionsNodeNames: with --fabric-file, show and matrix name each port's node
// (its NodeDescription, or the --node-name-map name), in a NODE column and in JSON;
// a port the sweep does not hold has none ("-"); --node-name-map alone is refused.
func TestPartitionsNodeNames(t *testing.T) {
	dir := t.TempDir()
	// Two of cluster.conf's ports in a saved sweep: nodes 0x...1010 and 0x...1020.
	f := fabric.Fabric{Nodes: []*fabric.Node{
		{GUID: 0x0002c90300001010, Type: check.NodeCA, Description: "c01 mlx5_0", NumPorts: 2,
			Ports: []*fabric.Port{{Num: 1, GUID: 0x0002c90300001011}, {Num: 2, GUID: 0x0002c90300001012}}},
		{GUID: 0x0002c90300001020, Type: check.NodeCA, Description: "c02 mlx5_0", NumPorts: 1,
			Ports: []*fabric.Port{{Num: 1, GUID: 0x0002c90300001021}}},
	}}
	var b bytes.Buffer
	if err := fabric.EncodeFabric(&b, &f); err != nil {
		t.Fatal(err)
	}
	fabric := filepath.Join(dir, "fabric.json")
	names := filepath.Join(dir, "node-name-map")
	if err := os.WriteFile(fabric, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(names, []byte("# map\n0x0002c90300001020 \"compute-02\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"0x0002c90300001011": "c01 mlx5_0", "0x0002c90300001012": "c01 mlx5_0", "0x0002c90300001021": "compute-02"}

	r := runIbkey(t, false, nil, "partitions", "show", clusterConf, "--sm-guid", headNode, "--fabric-file", fabric, "--node-name-map", names, "-o", "json")
	if r.Code != 0 {
		t.Fatalf("show: exit %d: %s", r.Code, r.Stderr)
	}
	var doc struct {
		Ports []struct {
			PortGUID string  `json:"port_guid"`
			NodeDesc *string `json:"node_desc"`
		} `json:"ports"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatal(err)
	}
	for _, p := range doc.Ports {
		got := ""
		if p.NodeDesc != nil {
			got = *p.NodeDesc
		}
		if got != want[p.PortGUID] {
			t.Errorf("show -o json: %s: node_desc %q, want %q", p.PortGUID, got, want[p.PortGUID])
		}
	}

	r = runIbkey(t, false, nil, "partitions", "show", clusterConf, "--fabric-file", fabric, "--node-name-map", names)
	for _, row := range []string{"0x0002c90300001021  compute-02  0 ", "0x0002c90300001011  c01_mlx5_0  0 ", "0x0002c90300001002  -           0 "} {
		if !strings.Contains(r.Stdout, row) {
			t.Errorf("show: no row %q:\n%s", row, r.Stdout)
		}
	}
	if bad := checkPlain(r.Stdout); len(bad) > 0 {
		t.Errorf("show: plain contract: %v", bad)
	}

	for _, args := range [][]string{{"--summary"}, {}} {
		args = append([]string{"partitions", "matrix", clusterConf, "--sm-guid", headNode, "--fabric-file", fabric, "--node-name-map", names}, args...)
		r = runIbkey(t, false, nil, args...)
		if r.Code != 0 || !strings.Contains(r.Stdout, "compute-02") || !strings.Contains(r.Stdout, " NODE ") {
			t.Errorf("%v: exit %d, no NODE column with compute-02:\n%s%s", args, r.Code, r.Stdout, r.Stderr)
		}
		if bad := checkPlain(r.Stdout); len(bad) > 0 {
			t.Errorf("%v: plain contract: %v", args, bad)
		}
		r = runIbkey(t, false, nil, append(args, "-o", "json")...)
		var m struct {
			NodeDescs map[string]string `json:"node_descs"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &m); err != nil || len(m.NodeDescs) != len(want) {
			t.Errorf("%v -o json: node_descs %v (%v), want %v", args, m.NodeDescs, err, want)
		}
		for g, name := range want {
			if m.NodeDescs[g] != name {
				t.Errorf("%v -o json: %s is %q, want %q", args, g, m.NodeDescs[g], name)
			}
		}
	}

	r = runIbkey(t, false, nil, "partitions", "show", clusterConf, "--node-name-map", names)
	if r.Code != 2 || !strings.Contains(r.Stderr, "--node-name-map needs --fabric-file") {
		t.Errorf("--node-name-map alone: exit %d, %s", r.Code, r.Stderr)
	}
}
