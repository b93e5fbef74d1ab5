package cantalk

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/jsonschematest"
)

// TestCannotResolveIsDefinite (wave 12): an end whose port's table lacks what it asks
// for is a definite no (exit 1, the "unresolved" document) even when entries of
// either end were not read (mlx5_1/1's entry 3): index= names one entry, read, or
// beyond the table; pkey= fails only when every entry was read or the key is 0
// (cannotResolve says why). Nothing the document says rests on what was not read, so
// it has no incomplete: the runner (cmdtest.Run, a complete read) fails on one.
// pkey=0x0000 beside an entry not read was an unknown (exit 4) until wave 12.
func TestCannotResolveIsDefinite(t *testing.T) {
	for _, tc := range []struct{ a, b, problem string }{
		{"mlx5_1/1,pkey=0x0000", "0x8001", "no valid P_Key table entry for partition 0x0000"},
		{"mlx5_1/1,pkey=0x8000", "mlx5_0/1", "no valid P_Key table entry for partition 0x0000"},
		{"mlx5_1/1,index=200", "0x8001", "no P_Key table entry at index 200"},
		{"mlx5_1/1,index=0,pkey=0x0002", "0x8002", "index 0 holds 0x7fff, not partition 0x0002"},
		{"mlx5_0/1,pkey=0x0009", "mlx5_1/1", "no valid P_Key table entry for partition 0x0009"},
		{"mlx5_0/1,index=300", "mlx5_1/1", "no P_Key table entry at index 300"},
	} {
		name := tc.a + " " + tc.b
		j := cmdtest.Run(t, root, false, nil, "--sysfs", cmdtest.MLX5, "can-talk", tc.a, tc.b, "-o", "json")
		r := cmdtest.Run(t, root, false, nil, "--sysfs", cmdtest.MLX5, "can-talk", tc.a, tc.b)
		jsonschematest.Validate(t, "can-talk", []byte(j.Stdout))
		var d struct {
			Verdict    string
			Unresolved *struct{ Endpoint, Problem string }
		}
		if err := json.Unmarshal([]byte(j.Stdout), &d); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, j.Stdout)
		}
		if j.Code != 1 || r.Code != 1 || d.Verdict != "no" || d.Unresolved == nil || d.Unresolved.Endpoint != "a" || !strings.Contains(d.Unresolved.Problem, tc.problem) {
			t.Errorf("%s: exit %d (text %d), %+v; want exit 1, no, unresolved a with %q\n%s", name, j.Code, r.Code, d, tc.problem, j.Stdout)
		}
		if !strings.HasPrefix(r.Stdout, "NO: ") {
			t.Errorf("%s: text %q, want NO", name, r.Stdout)
		}
	}
}
