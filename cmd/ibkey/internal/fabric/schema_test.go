package fabric

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/jsonschematest"
)

// TestJSONSchemas: every JSON golden of the fabric commands, and the saved sweeps the
// tests read back, follow the committed schemas (schemas/fabric-*.schema.json).
func TestJSONSchemas(t *testing.T) {
	jsonschematest.Goldens(t, "testdata")
	for _, file := range []string{"small.json", "small-changed.json"} {
		r := runIbkey(t, false, nil, "fabric", "discover", "--fabric-file", fabricTestdata+"/"+file, "-o", "json")
		if r.Code != 0 {
			t.Fatalf("%s: exit %d: %s", file, r.Code, r.Stderr)
		}
		jsonschematest.Validate(t, "fabric-file", []byte(r.Stdout))
	}
}

// TestPKeysJSONUnreadTable: a table the sweep did not read is null in `fabric pkeys -o
// json` (valid_pkeys and entries), never 0 and [], and the exit is 4.
func TestPKeysJSONUnreadTable(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(fabricTestdata, "small.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	node := doc["nodes"].([]any)[0].(map[string]any)
	port := node["ports"].([]any)[0].(map[string]any)
	port["pkeys"] = nil
	port["pkeys_error"] = "P_KeyTable: timeout"
	file := filepath.Join(t.TempDir(), "unread.json")
	b, _ = json.Marshal(doc)
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r := runIbkey(t, false, nil, "fabric", "pkeys", "--fabric-file", file, "-o", "json") // validated by the runner
	if r.Code != 4 {
		t.Fatalf("exit %d, want 4:\n%s", r.Code, r.Stderr)
	}
	var out struct {
		Ports []struct {
			NodeGUID string          `json:"node_guid"`
			Port     int             `json:"port"`
			Valid    *int            `json:"valid_pkeys"`
			Entries  json.RawMessage `json:"entries"`
			Error    string          `json:"pkeys_error"`
		} `json:"ports"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range out.Ports {
		if p.NodeGUID == node["node_guid"] && float64(p.Port) == port["port"] {
			found = true
			if p.Valid != nil || string(p.Entries) != "null" || p.Error == "" {
				t.Errorf("unread table: valid_pkeys %v, entries %s, pkeys_error %q; want null, null and the reason", p.Valid, p.Entries, p.Error)
			}
		} else if p.Valid == nil && p.Error == "" {
			t.Errorf("%s[%d]: valid_pkeys null for a table that was read", p.NodeGUID, p.Port)
		}
	}
	if !found {
		t.Fatalf("port not listed:\n%s", r.Stdout)
	}
}
