package devices

import (
	"testing"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/jsonschematest"
)

// TestJSONSchema: the JSON goldens and the demo host's devices follow
// schemas/devices.schema.json, and a host where something is missing says why for
// every null.
func TestJSONSchema(t *testing.T) {
	jsonschematest.Goldens(t, "testdata")
	for _, args := range [][]string{
		{"--demo", "devices", "-o", "json"},
		{"--sysfs", "../../../../testdata/sysfs/simulator", "devices", "-o", "json"},
		{"--sysfs", "../../../../testdata/sysfs/cantalk", "devices", "-o", "json"},
	} {
		r := cmdtest.Run(t, root, false, nil, args...)
		if r.Code != 0 {
			t.Fatalf("%v: exit %d: %s", args, r.Code, r.Stderr)
		}
		jsonschematest.Validate(t, "devices", []byte(r.Stdout))
	}
}
