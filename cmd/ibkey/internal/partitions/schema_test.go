package partitions

import (
	"testing"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/jsonschematest"
)

// schemaFor names the schema of `ibkey partitions SUB ... -o json`.
func schemaFor(args []string) string {
	for i, a := range args {
		if a == "partitions" && i+1 < len(args) {
			switch sub := args[i+1]; sub {
			case "check", "show", "matrix":
				return "partitions-" + sub
			}
		}
	}
	return ""
}

// TestJSONSchemas: every JSON golden of the partitions commands follows the committed
// schemas (schemas/partitions-*.schema.json), and so do both modes of matrix.
func TestJSONSchemas(t *testing.T) {
	jsonschematest.Goldens(t, "testdata")
	for _, args := range [][]string{
		{"partitions", "matrix", clusterConf, "--summary", "-o", "json"},
		{"partitions", "matrix", clusterConf, "-o", "json"},
	} {
		r := runIbkey(t, false, nil, args...)
		if r.Code != 0 {
			t.Fatalf("%v: exit %d: %s", args, r.Code, r.Stderr)
		}
		jsonschematest.Validate(t, schemaFor(args), []byte(r.Stdout))
	}
}
