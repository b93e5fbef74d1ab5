package cantalk

import (
	"encoding/json"
	"strings"
	"testing"
)

const rxe = "../../../../testdata/sysfs/rxe"

// TestCanTalkQKeyRule: the Q_Key send rule can-talk applied is in the reasons and in
// JSON (qkey_rule, qkey_rule_reason): rdma_rxe's verbatim rule for the rxe port (the
// tree the kernel wrote), the IBA rule for a device whose driver is known, and for
// bare keys no answer where the rule decides it.
func TestCanTalkQKeyRule(t *testing.T) {
	type side struct {
		Rule   string `json:"qkey_rule"`
		Reason string `json:"qkey_rule_reason"`
	}
	type doc struct {
		Reasons []string `json:"reasons"`
		A, B    side
		AToB    struct {
			OK       bool   `json:"ok"`
			WireQKey string `json:"wire_qkey"`
		} `json:"a_to_b"`
	}
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		rule     string
		reason   string // in qkey_rule_reason
		headline string // the reason naming the rule
		wire     string
	}{
		{"rxe top-bit wr_qkey goes out verbatim", []string{"--sysfs", rxe, "can-talk", "rxe0/1,qp=ud,qkey=0x11,wr_qkey=0x80000011", "rxe0/1,qp=ud,qkey=0x11", "-o", "json"}, 1,
			"verbatim", "rxe0 is a software RoCE device (rdma_rxe on dummy0)", "Q_Key send rule of A (rxe0/1) and B (rxe0/1) (verbatim): rxe0 is a software RoCE device", "0x80000011"},
		{"a known driver follows the IBA rule", []string{"--demo", "can-talk", "mlx5_0/1,qp=ud,qkey=0x11,wr_qkey=0x80000011", "mlx5_0/1,qp=ud,qkey=0x11", "-o", "json"}, 0,
			"iba", "mlx5_0 (driver mlx5_core) is assumed to follow the IBA rule", "Q_Key send rule of A (mlx5_0/1) and B (mlx5_0/1) (iba): mlx5_0 (driver mlx5_core)", "0x00000011"},
		// Bare keys name no device: the IBA rule delivers, rdma_rxe's verbatim one
		// drops, so the answer is not known (exit 4) and no Q_Key is on the wire.
		{"bare keys: the send rule decides, not known", []string{"can-talk", "0x8001,qp=ud,qkey=0x11,wr_qkey=0x80000011", "0x0001,qp=ud,qkey=0x11", "-o", "json"}, 4,
			"iba-assumed", "no device given: the IBA rule is assumed", "its device's Q_Key send rule is not known (no device given): under the IBA rule it sends its QP-context qkey 0x00000011, which 0x0001 accepts; a device that sends the wr_qkey verbatim (Linux's rdma_rxe) sends 0x80000011, which 0x0001 drops", ""},
	} {
		r := runIbkey(t, tc.args...)
		if r.Code != tc.code {
			t.Errorf("%s: exit %d, want %d\n%s%s", tc.name, r.Code, tc.code, r.Stdout, r.Stderr)
			continue
		}
		var v doc // a fresh one per case: a null member leaves the last case's value
		if err := json.Unmarshal([]byte(r.Stdout), &v); err != nil {
			t.Fatalf("%s: %v\n%s", tc.name, err, r.Stdout)
		}
		if v.A.Rule != tc.rule || v.B.Rule != tc.rule || !strings.Contains(v.A.Reason, tc.reason) {
			t.Errorf("%s: a %+v, b %+v; want %s (%s)", tc.name, v.A, v.B, tc.rule, tc.reason)
		}
		if !strings.Contains(strings.Join(v.Reasons, "\n"), tc.headline) || v.AToB.WireQKey != tc.wire {
			t.Errorf("%s: wire %s (want %s), reasons:\n%s", tc.name, v.AToB.WireQKey, tc.wire, strings.Join(v.Reasons, "\n"))
		}
	}
	// RC QPs check no Q_Key: no rule is named.
	r := runIbkey(t, "can-talk", "0x8001,qp=rc", "0x0001,qp=rc")
	if r.Code != 0 || strings.Contains(r.Stdout, "Q_Key send rule") {
		t.Errorf("RC: exit %d\n%s", r.Code, r.Stdout)
	}
}
