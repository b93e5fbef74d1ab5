package cantalk

import (
	"testing"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/jsonschematest"
)

// TestJSONSchema: the JSON goldens follow schemas/can-talk.schema.json, and so does
// every pair of a generated set of endpoints on the demo host (ports, pinned
// indexes, keys, Q_Keys, endpoints the table lacks), whatever the verdict.
func TestJSONSchema(t *testing.T) {
	jsonschematest.Goldens(t, "testdata")
	eps := []string{"mlx5_0/1", "mlx5_1/1", "mlx5_1/2", "mlx5_2/1", "mlx5_0/1,index=2", "mlx5_0/1,index=5",
		"mlx5_0/1,pkey=0x0020", "0x8001", "0x0002", "pkey=0x8001,qp=ud,qkey=0x11", "pkey=0x0001,qp=ud,qkey=0x11,wr_qkey=0x80000000",
		"mlx5_1/1,qp=rc", "mlx5_1/1,qp=ud,qkey=0x12"}
	verdicts := map[int]int{}
	for _, a := range eps {
		for _, b := range eps {
			args := []string{"--demo", "can-talk", a, b, "-o", "json"}
			r := cmdtest.Run(t, root, false, nil, args...)
			verdicts[r.Code]++
			if r.Code > 1 && r.Code != 4 {
				t.Errorf("%v: exit %d: %s", args, r.Code, r.Stderr)
				continue
			}
			jsonschematest.Validate(t, "can-talk", []byte(r.Stdout))
		}
	}
	if verdicts[0] == 0 || verdicts[1] == 0 {
		t.Errorf("exit codes %v: the set should hold both yes and no", verdicts)
	}
}
