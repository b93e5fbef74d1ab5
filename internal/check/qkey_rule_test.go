package check

import (
	"strings"
	"testing"
)

func TestQKeyRuleFor(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    QKeyDevice
		want QKeyRule
		says string
	}{
		{"rxe as the kernel writes it", QKeyDevice{Name: "rxe0", Virtual: true, Parent: "dummy0", NodeType: 1, LinkLayer: "Ethernet"}, QKeyRuleVerbatim, "rdma_rxe on dummy0"},
		{"rxe renamed", QKeyDevice{Name: "roce_sw", Virtual: true, Parent: "eth0", NodeType: 1, LinkLayer: "Ethernet"}, QKeyRuleVerbatim, "verbatim"},
		{"siw is an RNIC", QKeyDevice{Name: "siw0", Virtual: true, Parent: "eth0", NodeType: 4, LinkLayer: "Ethernet"}, QKeyRuleAssumedIBA, "not known"},
		{"mlx5 RoCE", QKeyDevice{Name: "mlx5_0", Driver: "mlx5_core", NodeType: 1, LinkLayer: "Ethernet"}, QKeyRuleIBA, "driver mlx5_core"},
		{"mlx5 IB", QKeyDevice{Name: "mlx5_1", Driver: "mlx5_core", NodeType: 1, LinkLayer: "InfiniBand"}, QKeyRuleIBA, "assumed"},
		{"a virtual IB device is not rxe", QKeyDevice{Name: "x", Virtual: true, Parent: "ib0", NodeType: 1, LinkLayer: "InfiniBand"}, QKeyRuleAssumedIBA, "not known"},
		{"no parent file", QKeyDevice{Name: "y", Virtual: true, NodeType: 1, LinkLayer: "Ethernet"}, QKeyRuleAssumedIBA, "not known"},
		{"nothing known", QKeyDevice{}, QKeyRuleAssumedIBA, "IBA rule is assumed"},
	} {
		got, why := QKeyRuleFor(tc.d)
		if got != tc.want || !strings.Contains(why, tc.says) {
			t.Errorf("%s: QKeyRuleFor = %v %q, want %v and a reason containing %q", tc.name, got, why, tc.want, tc.says)
		}
	}
}

// TestWireQKeyGenerated checks every combination of context and request Q_Keys from a
// set covering both halves of the space, under each rule, against the rule written out
// once more in the plainest form.
func TestWireQKeyGenerated(t *testing.T) {
	vals := []QKey{0, 0x11, 0x7fffffff, 0x80000000, 0x80000011, GSIQKey, 0xffffffff}
	ptrs := []*QKey{nil}
	for i := range vals {
		ptrs = append(ptrs, &vals[i])
	}
	for _, r := range []QKeyRule{QKeyRuleAssumedIBA, QKeyRuleIBA, QKeyRuleVerbatim} {
		for _, ctx := range ptrs {
			for _, wr := range ptrs {
				var want *QKey
				switch {
				case wr == nil:
					want = ctx
				case !wr.Controlled() || r == QKeyRuleVerbatim:
					want = wr
				default:
					want = ctx
				}
				got, how := r.WireQKey(ctx, wr)
				if (got == nil) != (want == nil) || got != nil && *got != *want {
					t.Fatalf("%v: WireQKey(%v, %v) = %v, want %v", r, fmtQ(ctx), fmtQ(wr), fmtQ(got), fmtQ(want))
				}
				if got != nil && how == "" {
					t.Fatalf("%v: WireQKey(%v, %v): no explanation", r, fmtQ(ctx), fmtQ(wr))
				}
				if got != nil && wr != nil && wr.Controlled() && r != QKeyRuleAssumedIBA && !strings.Contains(how, r.String()) {
					t.Fatalf("%v: WireQKey(%v, %v): %q does not name the rule", r, fmtQ(ctx), fmtQ(wr), how)
				}
			}
		}
	}
}

func fmtQ(q *QKey) string {
	if q == nil {
		return "nil"
	}
	return q.String()
}

// TestCanTalkVerbatimRule: the same endpoints give opposite verdicts under the two
// rules when a top-bit wr_qkey is sent (measured on rxe: 0x11/0x11 with wr_qkey
// 0x80000011 is dropped).
func TestCanTalkVerbatimRule(t *testing.T) {
	q11, w := QKey(0x11), QKey(0x80000011)
	mk := func(r QKeyRule) Verdict {
		a := QPEndpoint("rxe0/1", 0xffff, QPUD)
		a.QKey, a.WRQKey, a.QKeyRule = &q11, &w, r
		b := QPEndpoint("rxe0/1'", 0xffff, QPUD)
		b.QKey, b.QKeyRule = &q11, r
		return CanTalk(a, b)
	}
	iba, verb := mk(QKeyRuleIBA), mk(QKeyRuleVerbatim)
	if !iba.AToB.OK || iba.AToB.QKey != QKeyMatch {
		t.Errorf("IBA rule: A→B = %+v, want a match (the context Q_Key 0x11 is sent)", iba.AToB)
	}
	if verb.AToB.OK || verb.AToB.QKey != QKeyMismatch || *verb.AToB.WireQKey != w {
		t.Errorf("verbatim rule: A→B = %+v, want a mismatch with 0x80000011 on the wire", verb.AToB)
	}
	if !strings.Contains(strings.Join(verb.AToB.Reasons, "\n"), "verbatim rule") {
		t.Errorf("verbatim rule: reasons %q do not name the rule", verb.AToB.Reasons)
	}
}
