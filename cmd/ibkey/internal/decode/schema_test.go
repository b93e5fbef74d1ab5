package decode

import (
	"fmt"
	"testing"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/jsonschematest"
)

// TestJSONSchema: the JSON goldens follow schemas/decode-{pkey,qkey}.schema.json, and
// so do generated values: P_Keys across the 16 bits (both memberships, key 0, the
// default key) and Q_Keys at the edges of every range and both well-known values.
func TestJSONSchema(t *testing.T) {
	jsonschematest.Goldens(t, "testdata")
	pkeys := []string{"decode", "pkey", "0x0000", "0x8000", "0x7fff", "0xffff"}
	for v := 1; v < 0x10000; v += 0x0101 {
		pkeys = append(pkeys, fmt.Sprintf("0x%04x", v))
	}
	qkeys := []string{"decode", "qkey", "0x80010000", "0x00000b1b"}
	for _, v := range []uint32{0, 1, 0x7fffffff, 0x80000000, 0x8000ffff, 0x80010001, 0x8fffffff, 0x90000000, 0xffffffff} {
		qkeys = append(qkeys, fmt.Sprintf("0x%08x", v))
	}
	for _, args := range [][]string{pkeys, qkeys} {
		args = append(args, "-o", "json")
		r := cmdtest.Run(t, root, false, nil, args...)
		if r.Code != 0 {
			t.Fatalf("%v: exit %d: %s", args[:2], r.Code, r.Stderr)
		}
		jsonschematest.Validate(t, jsonschematest.SchemaFor(args), []byte(r.Stdout))
	}
}
