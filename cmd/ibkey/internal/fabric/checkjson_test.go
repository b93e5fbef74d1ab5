package fabric

import (
	"encoding/json"
	"testing"
)

// TestCheckJSONFilePosition: a finding about a line of the --partitions file (a GUID
// the fabric does not have) says where as "at": "FILE:LINE:COLUMN", the documents'
// file positions, and the document follows schemas/fabric-check.schema.json (the
// runner validates it; it wrote a "pos" object the schema does not have).
func TestCheckJSONFilePosition(t *testing.T) {
	conf := writeTemp(t, "extra-guid.conf", "Default=0x7fff : ALL=full;\np=0x10 : 0x0002c90300000211=full;\n")
	r := runIbkey(t, false, nil, "fabric", "check", "--fabric-file", smallFabric, "--partitions", conf, "--ignore", "enforcement-off", "-o", "json")
	var doc struct {
		Findings []map[string]any `json:"findings"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatalf("%v\n%s", err, r.Stdout)
	}
	found := false
	for _, f := range doc.Findings {
		if f["rule"] == "guid-not-in-fabric" {
			found = true
			if f["at"] != conf+":2:10" || f["pos"] != nil {
				t.Errorf("finding %v: want \"at\": %q", f, conf+":2:10")
			}
		}
	}
	if !found {
		t.Fatalf("no guid-not-in-fabric finding (exit %d):\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
}
