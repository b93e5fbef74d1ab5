package pkeys

import (
	"encoding/json"
	"testing"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/jsonschematest"
)

// TestJSONSchema: the JSON goldens and every mode of pkeys on the fixtures (--all,
// --find found, missing and over several ports) follow schemas/pkeys.schema.json and
// schemas/pkeys-find.schema.json.
func TestJSONSchema(t *testing.T) {
	jsonschematest.Goldens(t, "testdata")
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"--demo", "pkeys", "-o", "json"}, 0},
		{[]string{"--demo", "pkeys", "--all", "-o", "json"}, 0},
		{[]string{"--sysfs", cmdtest.MLX5, "pkeys", "--all", "-o", "json"}, 4}, // entry mlx5_1/1[3] not read
		{[]string{"--sysfs", "../../../../testdata/sysfs/simulator", "pkeys", "-o", "json"}, 0},
		{[]string{"--demo", "pkeys", "--find", "0x8001", "-o", "json"}, 0},
		{[]string{"--demo", "pkeys", "--lid", "3", "--find", "0x8001", "-o", "json"}, 0},
		{[]string{"--demo", "pkeys", "mlx5_0/1", "--find", "0x0009", "-o", "json"}, 1},
		{[]string{"--sysfs", "../../../../testdata/sysfs/cantalk", "pkeys", "--find", "0x0002", "-o", "json"}, 0},
	} {
		r := cmdtest.Run(t, root, false, nil, tc.args...)
		if r.Code != tc.code {
			t.Fatalf("%v: exit %d, want %d: %s", tc.args, r.Code, tc.code, r.Stderr)
		}
		jsonschematest.Validate(t, jsonschematest.SchemaFor(tc.args), []byte(r.Stdout))
	}
}

// TestFindJSONSource: pkeys --find -o json names where its ports were read, as pkeys
// -o json does: "demo" on the demo host (IBKEY_DEMO=1 in a script's environment
// gives the demo's answers), "via" over the fabric.
func TestFindJSONSource(t *testing.T) {
	for _, tc := range []struct {
		args []string
		demo bool
		via  bool
	}{
		{[]string{"--demo", "pkeys", "--find", "0x8001", "-o", "json"}, true, false},
		{[]string{"--demo", "pkeys", "--lid", "3", "--find", "0x8001", "-o", "json"}, false, true},
		{[]string{"--sysfs", cmdtest.MLX5, "pkeys", "mlx5_0", "--find", "0x8001", "-o", "json"}, false, false},
	} {
		var doc struct {
			Demo bool   `json:"demo"`
			Via  string `json:"via"`
		}
		r := cmdtest.Run(t, root, false, nil, tc.args...)
		if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
			t.Fatalf("%v: %v\n%s", tc.args, err, r.Stdout)
		}
		if doc.Demo != tc.demo || (doc.Via != "") != tc.via {
			t.Errorf("%v: demo %v via %q, want demo %v and via %v", tc.args, doc.Demo, doc.Via, tc.demo, tc.via)
		}
	}
}
