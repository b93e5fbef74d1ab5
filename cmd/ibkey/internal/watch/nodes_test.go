package watch

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/jsonschematest"
	"github.com/ibkey/ibkey/internal/lab"
	"github.com/ibkey/ibkey/internal/query"
)

// TestCountersJSONNodes: a port read over the fabric carries its node's node_desc
// (as the model holds it: escaped where it entered, mad.ParseNodeDescription) and node_guid, by the address it was read
// through, also when it did not answer this time; a local port has neither.
func TestCountersJSONNodes(t *testing.T) {
	snap := &query.Snapshot{Time: time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC), Ports: []query.PortDelta{
		{Ref: query.PortRef{Device: "sw\x1b1", Port: 3}, Address: "lid 2", State: "ACTIVE"},
		{Ref: query.PortRef{Device: "HcaB", Port: 1}, Address: "DR path 0,1,3", Err: "no answer"},
		{Ref: query.PortRef{Device: "mlx5_0", Port: 1}, State: "ACTIVE"},
	}}
	nodes := map[string]fabricNode{"lid 2": {desc: `sw\x1b1`, guid: 0x200000}, "DR path 0,1,3": {desc: "HcaB", guid: 0x2c90300000204}}
	line, err := json.Marshal(countersToJSON(snap, false, "ibsim", nodes))
	if err != nil {
		t.Fatal(err)
	}
	jsonschematest.Validate(t, "watch-counters", line)
	var doc struct {
		Ports []map[string]any `json:"ports"`
	}
	if err := json.Unmarshal(line, &doc); err != nil {
		t.Fatal(err)
	}
	want := []struct{ desc, guid any }{{`sw\x1b1`, "0x0000000000200000"}, {"HcaB", "0x0002c90300000204"}, {nil, nil}}
	for i, w := range want {
		if p := doc.Ports[i]; p["node_desc"] != w.desc || p["node_guid"] != w.guid {
			t.Errorf("port %d: node_desc %v, node_guid %v; want %v, %v", i, p["node_desc"], p["node_guid"], w.desc, w.guid)
		}
	}
	// The schema: a fabric row (address) without its node is refused.
	bad := strings.Replace(string(line), `"node_desc":"HcaB",`, "", 1)
	if err := jsonschematest.Check("watch-counters", []byte(bad)); err == nil {
		t.Errorf("schema accepts a fabric port without node_desc: %s", bad)
	}
}

// TestLabCountersNodes: over the simulated fabric, every row of `watch counters --dr
// PATH` (a CA's port, a switch's every port) names the node smpquery nodeinfo reads
// at that route: its NodeDescription and NodeGUID.
func TestLabCountersNodes(t *testing.T) {
	l := cmdtest.StartLab(t, "small.net", root)
	seen := map[string]bool{}
	for _, tg := range l.Targets(t) {
		if seen[tg.Path] || (tg.Type != lab.Switch && tg.Node != "HcaB") {
			continue
		}
		seen[tg.Path] = true
		ni := lab.ParseFields(l.Diag(t, "smpquery", "-D", "nodeinfo", tg.Path))
		// No SM has run: PortCounters need a LID, so they are not read (exit 4).
		r := l.Run(t, "watch", "counters", "--dr", tg.Path, "--port", "all", "--once", "-o", "json")
		if r.Code != 4 || !strings.Contains(r.Stderr, "not read on") {
			t.Fatalf("--dr %s: exit %d, want 4 (PortCounters need a LID): %s", tg.Path, r.Code, r.Stderr)
		}
		samples := cmdtest.DecodeCounters(t, r.Stdout)
		var doc struct {
			Ports []struct {
				Device   string `json:"device"`
				Port     int    `json:"port"`
				NodeDesc string `json:"node_desc"`
				NodeGUID string `json:"node_guid"`
			} `json:"ports"`
		}
		if err := json.Unmarshal([]byte(strings.TrimSpace(r.Stdout)), &doc); err != nil || len(samples) != 1 || len(doc.Ports) == 0 {
			t.Fatalf("--dr %s: %v\n%s", tg.Path, err, r.Stdout)
		}
		t.Logf("--dr %s (%s): %d ports", tg.Path, tg.Node, len(doc.Ports))
		for _, p := range doc.Ports {
			if p.NodeDesc != tg.Node || p.NodeGUID != ni["Guid"] || p.Device != p.NodeDesc {
				t.Errorf("--dr %s port %d: device %q, node_desc %q, node_guid %q; want %s, smpquery nodeinfo Guid %s", tg.Path, p.Port, p.Device, p.NodeDesc, p.NodeGUID, tg.Node, ni["Guid"])
			}
		}
	}
	if len(seen) < 2 {
		t.Fatalf("only %d nodes compared", len(seen))
	}
}
