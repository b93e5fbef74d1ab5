package partitions

import (
	"testing"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/jsonschematest"
)

// TestJSONSchemas: every JSON golden of the partitions commands follows the committed
// schemas (schemas/partitions-*.schema.json), and so do both modes of matrix.
func TestJSONSchemas(t *testing.T) {
	jsonschematest.Goldens(t, "testdata")
	for _, args := range [][]string{
		{"partitions", "matrix", clusterConf, "--sm-guid", headNode, "--summary", "-o", "json"},
		{"partitions", "matrix", clusterConf, "--sm-guid", headNode, "-o", "json"},
	} {
		r := runIbkey(t, false, nil, args...)
		if r.Code != 0 {
			t.Fatalf("%v: exit %d: %s", args, r.Code, r.Stderr)
		}
		jsonschematest.Validate(t, jsonschematest.SchemaFor(args), []byte(r.Stdout))
	}
}
