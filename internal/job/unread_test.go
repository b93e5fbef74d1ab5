package job

import (
	"strings"
	"testing"
)

// perftest -R: rdma_cm takes the P_Key from the route, not --pkey_index: no index
// setting is suggested as if it decided the partition.
func TestWantPerftestRDMACM(t *testing.T) {
	a := ParsePerftestArgs("ib_send_bw -d mlx5_0 -R")
	w := WantPartition([]*Library{&Perftest}, Inputs{Env: Env{}, Perftest: &a}, 0x8002, []*Port{port("", "mlx5_0", 1, 0xffff, 0x8002)})[0]
	if w.Verdict != Incomplete || w.Ports[0].Setting != "" || len(w.Unchecked) != 1 || !strings.Contains(w.Unchecked[0], "perftest -R") {
		t.Errorf("perftest -R: %s %q %q", w.Verdict, w.Summary(), w.Unchecked)
	}
}
