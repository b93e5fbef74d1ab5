package pkeys

import (
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
