package check

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// table builds a readable table with entries at indexes 0, 1, ...
func table(ps ...PKey) []TableEntry {
	t := make([]TableEntry, len(ps))
	for i, p := range ps {
		t[i] = TableEntry{Index: i, PKey: p, Readable: true}
	}
	return t
}

func port(label string, ps ...PKey) Endpoint {
	return Endpoint{Label: label, Port: true, Entries: table(ps...)}
}

// ibaRule gives e a device known to follow the IBA Q_Key send rule.
func ibaRule(e Endpoint) Endpoint {
	e.QKeyRule = QKeyRuleIBA
	return e
}

func ud(label string, p PKey, qkey, wr *QKey) Endpoint {
	e := QPEndpoint(label, p, QPUD)
	e.QKey, e.WRQKey = qkey, wr
	return e
}

// pkeyRule is the one-line P_Key rule of IBA vol. 1 §10.9.
func pkeyRule(a, b PKey) bool {
	return uint16(a.Partition()) == uint16(b.Partition()) && uint16(a.Partition()) != 0 && (a.IsFull() || b.IsFull())
}

// hasAll reports which wanted substrings are missing from the lines.
func missing(lines []string, want []string) []string {
	all := strings.Join(lines, "\n")
	var out []string
	for _, w := range want {
		if !strings.Contains(all, w) {
			out = append(out, w)
		}
	}
	return out
}

// TestCanTalkSeedExample is the full/limited example of RDMAmojo's "Partition Key
// (P_Key)" article (rdmamojo.com), as IBA vol. 1 §10.9 rules it.
func TestCanTalkSeedExample(t *testing.T) {
	qps := map[string]PKey{"QPA": 0x8001, "QPB": 0x0001, "QPC": 0x0001, "QPD": 0x8002}
	tests := []struct {
		a, b   string
		want   bool
		reason string
	}{
		{"QPA", "QPB", true, "they share partition 0x0001: QPA with 0x8001 (full) and QPB with 0x0001 (limited)"},
		{"QPA", "QPC", true, "they share partition 0x0001"},
		{"QPB", "QPC", false, "both ends are limited members of partition 0x0001: at least one must be a full member (0x8001)"},
		{"QPD", "QPA", false, "QPD is in partition 0x0002 (0x8002) and QPA in partition 0x0001 (0x8001): different partitions never talk"},
		{"QPD", "QPB", false, "different partitions never talk"},
		{"QPD", "QPC", false, "different partitions never talk"},
	}
	for _, tt := range tests {
		for _, pair := range [][2]string{{tt.a, tt.b}, {tt.b, tt.a}} {
			v := CanTalk(QPEndpoint(pair[0], qps[pair[0]], QPAny), QPEndpoint(pair[1], qps[pair[1]], QPAny))
			if v.CanTalk() != tt.want || v.AToB.OK != tt.want || v.BToA.OK != tt.want || v.OneWay() {
				t.Errorf("%s-%s: CanTalk=%v (a->b %v, b->a %v, one way %v), want %v", pair[0], pair[1], v.CanTalk(), v.AToB.OK, v.BToA.OK, v.OneWay(), tt.want)
			}
			if pair[0] == tt.a {
				if m := missing(v.Reasons, []string{tt.reason}); m != nil {
					t.Errorf("%s-%s: reasons %q lack %q", pair[0], pair[1], v.Reasons, m)
				}
			}
		}
	}
}

func TestCanTalkPKeyRules(t *testing.T) {
	tests := []struct {
		name    string
		a, b    PKey
		want    bool
		reasons []string
	}{
		{"key 0 limited", 0x0000, 0x0000, false, []string{"A uses P_Key 0x0000: key 0 is invalid", "B uses P_Key 0x0000: key 0 is invalid"}},
		{"key 0 full", 0x8000, 0x8000, false, []string{"A uses P_Key 0x8000: key 0 is invalid (0x0000 and 0x8000 mark an empty table entry) and matches nothing"}},
		{"key 0 vs full key 0", 0x8000, 0x0000, false, []string{"key 0 is invalid"}},
		{"key 0 vs default", 0x8000, 0xffff, false, []string{"A uses P_Key 0x8000"}},
		{"default full vs limited", 0xffff, 0x7fff, true, []string{"they share only the default partition 0x7fff: A with 0xffff (full) and B with 0x7fff (limited)"}},
		{"default full vs full", 0xffff, 0xffff, true, []string{"0xffff (full)"}},
		{"default limited vs limited", 0x7fff, 0x7fff, false, []string{"both ends are limited members of the default partition 0x7fff: at least one must be a full member (0xffff)"}},
		{"full full", 0x8005, 0x8005, true, []string{"partition 0x0005"}},
		{"limited vs full", 0x0005, 0x8005, true, []string{"A with 0x0005 (limited) and B with 0x8005 (full)"}},
		{"different keys both full", 0x8005, 0x8006, false, []string{"A is in partition 0x0005 (0x8005) and B in partition 0x0006 (0x8006)"}},
		{"key equal only in 16 bits? no: 0x0001 vs 0x8002", 0x0001, 0x8002, false, []string{"different partitions"}},
	}
	for _, tt := range tests {
		v := CanTalk(QPEndpoint("", tt.a, QPAny), QPEndpoint("", tt.b, QPAny))
		if v.CanTalk() != tt.want {
			t.Errorf("%s: %s vs %s CanTalk = %v, want %v (reasons %q)", tt.name, tt.a, tt.b, v.CanTalk(), tt.want, v.Reasons)
		}
		if v.CanTalk() != pkeyRule(tt.a, tt.b) {
			t.Errorf("%s: table disagrees with the one-line rule", tt.name)
		}
		if m := missing(v.Reasons, tt.reasons); m != nil {
			t.Errorf("%s: reasons %q lack %q", tt.name, v.Reasons, m)
		}
		if v.AToB.QKey != QKeyNotApplicable || v.BToA.QKey != QKeyNotApplicable {
			t.Errorf("%s: Q_Key checked without qp=ud or Q_Keys: %v/%v", tt.name, v.AToB.QKey, v.BToA.QKey)
		}
		if m := missing(v.Warnings, []string{"QP type not given: only the P_Key rule was checked"}); m != nil {
			t.Errorf("%s: warnings %q lack %q", tt.name, v.Warnings, m)
		}
	}
}

// TestCanTalkPKeyProperty: for two QPs the verdict is symmetric and equals the one-line
// rule. All 65536 values against fixed partners, a strided grid and a random sample
// (with -short: every 7th value and fewer samples).
func TestCanTalkPKeyProperty(t *testing.T) {
	check := func(a, b PKey) {
		t.Helper()
		ab := CanTalk(QPEndpoint("a", a, QPAny), QPEndpoint("b", b, QPAny))
		ba := CanTalk(QPEndpoint("b", b, QPAny), QPEndpoint("a", a, QPAny))
		want := pkeyRule(a, b)
		if ab.CanTalk() != want || ba.CanTalk() != want || ab.OneWay() || ba.OneWay() || ab.AToB.OK != ab.BToA.OK {
			t.Fatalf("%s vs %s: CanTalk %v / reversed %v, want %v", a, b, ab.CanTalk(), ba.CanTalk(), want)
		}
		if len(ab.Reasons) == 0 {
			t.Fatalf("%s vs %s: no reasons", a, b)
		}
	}
	partners := []PKey{0x0000, 0x8000, 0x0001, 0x8001, 0x7fff, 0xffff, 0x1234}
	step := 1
	if testing.Short() {
		step = 7
	}
	for v := 0; v <= 0xffff; v += step {
		for _, p := range partners {
			check(PKey(v), p)
		}
	}
	for a := 0; a <= 0xffff; a += 251 * step {
		for b := 3; b <= 0xffff; b += 257 {
			check(PKey(a), PKey(b))
			check(PKey(a), PKey(a)^0x8000) // same key, other membership
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 / step {
		a := PKey(r.UintN(0x10000))
		b := a ^ PKey(r.UintN(2))<<15 // half the pairs share the key
		if r.UintN(2) == 0 {
			b = PKey(r.UintN(0x10000))
		}
		check(a, b)
	}
}

func TestCanTalkQKey(t *testing.T) {
	type want struct {
		canTalk, oneWay bool
		ab, ba          QKeyCheck
		wireAB          *QKey
	}
	tests := []struct {
		name     string
		a, b     Endpoint
		want     want
		reasons  []string
		warnings []string
	}{
		{"matching qkeys", ud("A", 0x8001, qk(0x11), nil), ud("B", 0x8001, qk(0x11), nil),
			want{true, false, QKeyMatch, QKeyMatch, qk(0x11)},
			[]string{"A → B: A sends Q_Key 0x00000011 (its QP-context qkey; no wr_qkey given) and B accepts 0x00000011"}, nil},
		{"mismatching qkeys", ud("A", 0x8001, qk(0x11), nil), ud("B", 0x8001, qk(0x22), nil),
			want{false, false, QKeyMismatch, QKeyMismatch, qk(0x11)},
			[]string{"A → B: A sends Q_Key 0x00000011", "but B accepts only its own qkey 0x00000022", "B → A: B sends Q_Key 0x00000022"}, nil},
		{"wr_qkey with top bit: sender uses its own context qkey", ibaRule(ud("A", 0x8001, qk(0x11), qk(0x80000000))), ud("B", 0x8001, qk(0x11), nil),
			want{true, false, QKeyMatch, QKeyMatch, qk(0x11)},
			[]string{"A sends Q_Key 0x00000011 (its QP-context qkey, because wr_qkey 0x80000000 has the top bit set (IBA rule))"}, nil},
		// The sender's device is not known: the IBA rule delivers, a device that sends
		// the wr_qkey verbatim (rdma_rxe) does not. Never a yes (facts/keys.md).
		{"wr_qkey with top bit, send rule not known: not checked", ud("A", 0x8001, qk(0x11), qk(0x80000000)), ud("B", 0x8001, qk(0x11), nil),
			want{false, false, QKeyNotChecked, QKeyMatch, nil},
			[]string{"A → B: Q_Key not known: A's wr_qkey 0x80000000 has the top bit set and its device's Q_Key send rule is not known (no device given): under the IBA rule it sends its QP-context qkey 0x00000011, which B accepts; a device that sends the wr_qkey verbatim (Linux's rdma_rxe) sends 0x80000000, which B drops (it holds 0x00000011)"}, nil},
		{"wr_qkey with top bit, send rule not known, both rules deliver: checked", ud("A", 0x8001, qk(0x80000011), qk(0x80000011)), ud("B", 0x8001, qk(0x80000011), nil),
			want{true, false, QKeyMatch, QKeyMatch, qk(0x80000011)}, nil, nil},
		{"RC with a top-bit wr_qkey, send rule not known: Q_Keys do not apply",
			Endpoint{Label: "A", Entries: table(0x8001), QPType: QPRC, QKey: qk(0x11), WRQKey: qk(0x80000000)}, Endpoint{Label: "B", Entries: table(0x8001), QPType: QPRC, QKey: qk(0x11)},
			want{true, false, QKeyNotApplicable, QKeyNotApplicable, nil}, nil, nil},
		{"wr_qkey with top bit and other bits: still the context qkey", ud("A", 0x8001, qk(0x22), qk(0x80000011)), ud("B", 0x8001, qk(0x11), nil),
			want{false, false, QKeyMismatch, QKeyMismatch, qk(0x22)}, []string{"A sends Q_Key 0x00000022"}, nil},
		{"wr_qkey without top bit overrides the context qkey", ud("A", 0x8001, qk(0x11), qk(0x22)), ud("B", 0x8001, qk(0x11), nil),
			want{false, true, QKeyMismatch, QKeyMatch, qk(0x22)},
			[]string{"A sends Q_Key 0x00000022 (its wr_qkey, not its QP-context qkey 0x00000011) but B accepts only its own qkey 0x00000011", "one way only: B → A works, A → B is dropped"}, nil},
		{"asymmetric: one way", ud("A", 0x8001, qk(0x11), qk(0x22)), ud("B", 0x8001, qk(0x22), nil),
			want{false, true, QKeyMatch, QKeyMismatch, qk(0x22)},
			[]string{"one way only: A → B works, B → A is dropped"}, nil},
		{"no qkeys given: not checked", ud("A", 0x8001, nil, nil), ud("B", 0x8001, nil, nil),
			want{false, false, QKeyNotChecked, QKeyNotChecked, nil},
			[]string{"A → B: Q_Key not checked: give qkey= (or wr_qkey=) for A, the Q_Key it sends and qkey= for B, the only Q_Key it accepts"}, nil},
		{"receiver qkey missing", ud("A", 0x8001, nil, qk(0x11)), ud("B", 0x8001, nil, nil),
			want{false, false, QKeyNotChecked, QKeyNotChecked, qk(0x11)},
			[]string{"A → B: Q_Key not checked: give qkey= for B"}, nil},
		{"wr_qkey top bit without context qkey", ud("A", 0x8001, nil, qk(0x80000000)), ud("B", 0x8001, qk(0x11), nil),
			want{false, false, QKeyNotChecked, QKeyNotChecked, nil},
			[]string{"give qkey= for A (its wr_qkey has the top bit set, so it sends its QP-context Q_Key)"}, nil},
		{"P_Key fails even with matching qkeys", ud("A", 0x0001, qk(0x11), nil), ud("B", 0x0001, qk(0x11), nil),
			want{false, false, QKeyMatch, QKeyMatch, qk(0x11)}, []string{"both ends are limited members"}, nil},
		{"RC with qkey: ignored",
			Endpoint{Label: "A", Entries: table(0x8001), QPType: QPRC, QKey: qk(0x11)},
			Endpoint{Label: "B", Entries: table(0x8001), QPType: QPRC, QKey: qk(0x22)},
			want{true, false, QKeyNotApplicable, QKeyNotApplicable, nil}, nil,
			[]string{"A's Q_Key is ignored: A is RC, and only UD QPs check Q_Keys", "B's Q_Key is ignored"}},
		{"UC and unknown type with qkey: ignored",
			Endpoint{Label: "A", Entries: table(0x8001), QPType: QPUC},
			Endpoint{Label: "B", Entries: table(0x8001), WRQKey: qk(0x22)},
			want{true, false, QKeyNotApplicable, QKeyNotApplicable, nil}, nil,
			[]string{"B's Q_Key is ignored: B is UC"}},
		{"UD vs RC", ud("A", 0x8001, qk(0x11), nil), Endpoint{Label: "B", Entries: table(0x8001), QPType: QPRC},
			want{false, false, QKeyNotApplicable, QKeyNotApplicable, nil},
			[]string{"A is a UD QP and B an RC QP: QP types must match (UD talks only to UD)"}, nil},
		{"RC vs UC", Endpoint{Label: "A", Entries: table(0x8001), QPType: QPRC}, Endpoint{Label: "B", Entries: table(0x8001), QPType: QPUC},
			want{false, false, QKeyNotApplicable, QKeyNotApplicable, nil},
			[]string{"A is an RC QP and B a UC QP: QP types must match (RC talks only to RC)"}, nil},
		{"type not given, qkeys given: checked as UD",
			Endpoint{Label: "A", Entries: table(0x8001), QKey: qk(0x11)}, Endpoint{Label: "B", Entries: table(0x8001), QKey: qk(0x11)},
			want{true, false, QKeyMatch, QKeyMatch, qk(0x11)}, nil,
			[]string{"QP type not given: Q_Keys were checked as for UD QPs"}},
		{"one side UD, other unknown", ud("A", 0x8001, qk(0x11), nil), Endpoint{Label: "B", Entries: table(0x8001), QKey: qk(0x12)},
			want{false, false, QKeyMismatch, QKeyMismatch, qk(0x11)}, nil, nil},
		{"controlled qkey in a QP context: warning, not a verdict", ud("A", 0x8001, qk(0x80010000), nil), ud("B", 0x8001, qk(0x80010000), nil),
			want{true, false, QKeyMatch, QKeyMatch, qk(0x80010000)}, nil,
			[]string{"A's qkey 0x80010000 is controlled (top bit set): an unprivileged process cannot set it in a QP context (Linux since 2023, unless `rdma system set privileged-qkey on`)", "B's qkey 0x80010000 is controlled"}},
	}
	for _, tt := range tests {
		v := CanTalk(tt.a, tt.b)
		got := want{v.CanTalk(), v.OneWay(), v.AToB.QKey, v.BToA.QKey, v.AToB.WireQKey}
		// UD with a Q_Key not given: the P_Keys allow it, so the answer depends on
		// the Q_Keys (red-team finding 6), never a yes.
		// A wr_qkey whose fate depends on a send rule not known: the same, for that.
		if v.AToB.QKey == QKeyNotChecked && QKeyRuleDecides(tt.a.QKeyRule, tt.a.QKey, tt.a.WRQKey, tt.b.QKey) {
			if v.Kind != VerdictUnknown || len(v.NotChecked) != 1 || v.NotChecked[0].Cause != NotCheckedQKeySendRule {
				t.Errorf("%s: %s %+v, want unknown depending on the send rule", tt.name, v.Kind, v.NotChecked)
			}
		} else if v.AToB.QKey == QKeyNotChecked && (v.Kind != VerdictUnknown || len(v.NotChecked) != 1 || v.NotChecked[0].Cause != NotCheckedQKeys ||
			!strings.HasPrefix(v.NotChecked[0].Sentence, "the P_Keys allow it; the Q_Keys were not given")) {
			t.Errorf("%s: %s %+v, want unknown depending on the Q_Keys", tt.name, v.Kind, v.NotChecked)
		}
		if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(want{})); diff != "" {
			t.Errorf("%s: (-want +got)\n%s\nreasons %q", tt.name, diff, v.Reasons)
		}
		if m := missing(v.Reasons, tt.reasons); m != nil {
			t.Errorf("%s: reasons %q lack %q", tt.name, v.Reasons, m)
		}
		if m := missing(v.Warnings, tt.warnings); m != nil {
			t.Errorf("%s: warnings %q lack %q", tt.name, v.Warnings, m)
		}
		// Reasons of a direction include its own Q_Key sentence, never the other one's.
		for _, d := range []Direction{v.AToB, v.BToA} {
			for _, r := range d.Reasons {
				if strings.Contains(r, " → ") && !strings.HasPrefix(r, d.From+" → "+d.To) {
					t.Errorf("%s: direction %s→%s carries %q", tt.name, d.From, d.To, r)
				}
			}
		}
		if v.CanTalk() != (v.AToB.OK && v.BToA.OK) {
			t.Errorf("%s: CanTalk %v but directions %v/%v", tt.name, v.CanTalk(), v.AToB.OK, v.BToA.OK)
		}
	}
}

func TestCanTalkPorts(t *testing.T) {
	tests := []struct {
		name     string
		a, b     Endpoint
		want     bool
		shared   []SharedPartition
		reasons  []string
		absent   []string // must not appear in reasons
		warnings []string
	}{
		{
			name: "share only the default partition",
			a:    port("mlx5_0/1", 0xffff, 0x8001, 0, 0),
			b:    port("mlx5_1/1", 0x7fff, 0x8002),
			want: true,
			shared: []SharedPartition{{Key: 0x7fff, Works: true,
				A: PartitionSide{PKey: 0xffff, Index: 0, OtherIndex: NoIndex},
				B: PartitionSide{PKey: 0x7fff, Index: 0, OtherIndex: NoIndex}}},
			reasons: []string{"they share only the default partition 0x7fff: index 0 on mlx5_0/1 (0xffff, full) and index 0 on mlx5_1/1 (0x7fff, limited)"},
		},
		{
			name:    "only default works, an application partition is limited on both",
			a:       port("A", 0xffff, 0x0001),
			b:       port("B", 0x7fff, 0x0001),
			want:    true,
			reasons: []string{"only the default partition 0x7fff works for them", "partition 0x0001 does not work for them: both ends are limited members of it"},
		},
		{
			name:    "one side limited",
			a:       port("A", 0x7fff, 0x0001, 0x0002),
			b:       port("B", 0x7fff, 0x8002),
			want:    true,
			reasons: []string{"they share partition 0x0002: index 2 on A (0x0002, limited) and index 1 on B (0x8002, full)", "the default partition 0x7fff does not work for them"},
		},
		{
			name:    "both limited everywhere",
			a:       port("A", 0x7fff, 0x0001),
			b:       port("B", 0x7fff, 0x0001),
			want:    false,
			reasons: []string{"both ends are only limited members of partitions 0x0001, 0x7fff: for each, at least one end must be a full member"},
		},
		{
			name:    "share none",
			a:       port("A", 0x8001, 0x8003),
			b:       port("B", 0x8002),
			want:    false,
			reasons: []string{"A and B share no partition (A: 0x0001, 0x0003; B: 0x0002)"},
		},
		{
			name: "tables with holes and unreadable entries",
			a: Endpoint{Label: "A", Port: true, Entries: []TableEntry{
				{Index: 0, PKey: 0xffff, Readable: false},
				{Index: 1, PKey: 0x0000, Readable: true},
				{Index: 2, PKey: 0x8000, Readable: true},
				{Index: 5, PKey: 0x8007, Readable: true},
			}},
			b: Endpoint{Label: "B", Port: true, Entries: []TableEntry{
				{Index: 3, PKey: 0x0007, Readable: true},
				{Index: 9, PKey: 0x7fff, Readable: true},
			}},
			want: true,
			shared: []SharedPartition{{Key: 0x0007, Works: true,
				A: PartitionSide{PKey: 0x8007, Index: 5, OtherIndex: NoIndex},
				B: PartitionSide{PKey: 0x0007, Index: 3, OtherIndex: NoIndex}}},
			reasons:  []string{"index 5 on A (0x8007, full) and index 3 on B (0x0007, limited)"},
			absent:   []string{"0x7fff", "0x0000"},
			warnings: []string{"A: 1 P_Key table entry could not be read"},
		},
		{
			name: "no valid entry at all",
			a: Endpoint{Label: "A", Port: true, Entries: []TableEntry{
				{Index: 0, PKey: 0x8000, Readable: true}, {Index: 1, Readable: false}}},
			b:       port("B", 0xffff),
			want:    false,
			reasons: []string{"A has no valid P_Key entry (1 invalid, 1 unreadable)"},
		},
		{
			name:    "no table",
			a:       Endpoint{Label: "A", Port: true},
			b:       port("B", 0xffff),
			want:    false,
			reasons: []string{"A has no P_Key (no table entries)"},
		},
		{
			name: "key as both full and limited, other side limited: must use the full index",
			a:    port("A", 0x7fff, 0x0001, 0x8001),
			b:    port("B", 0x0001),
			want: true,
			shared: []SharedPartition{{Key: 0x0001, Works: true,
				A: PartitionSide{PKey: 0x8001, Index: 2, Both: true, OtherIndex: 1},
				B: PartitionSide{PKey: 0x0001, Index: 0, OtherIndex: NoIndex}}},
			reasons: []string{"A has partition 0x0001 as both full (index 2) and limited (index 1): a QP on A must use index 2 (full) to reach B's limited member"},
		},
		{
			name:    "key as both, other side full",
			a:       port("A", 0x8001),
			b:       port("B", 0x0001, 0x7fff, 0x8001),
			want:    true,
			reasons: []string{"B has partition 0x0001 as both full (index 2) and limited (index 0): either works with A's full member; index 2 (full) is what ib_find_pkey picks"},
		},
		{
			name:    "several working partitions: application partition first",
			a:       port("A", 0xffff, 0x8001, 0x8002, 0x8003),
			b:       port("B", 0xffff, 0x0003, 0x0002),
			want:    true,
			reasons: []string{"they share partition 0x0002: index 2 on A (0x8002, full) and index 2 on B (0x0002, limited); other shared partitions that work: 0x0003, 0x7fff"},
		},
		{
			name:    "port against a QP",
			a:       port("mlx5_0/1", 0xffff, 0x8001),
			b:       QPEndpoint("QP", 0x0001, QPAny),
			want:    true,
			reasons: []string{"they share partition 0x0001: index 1 on mlx5_0/1 (0x8001, full) and QP with 0x0001 (limited)"},
		},
	}
	for _, tt := range tests {
		v := CanTalk(tt.a, tt.b)
		if v.CanTalk() != tt.want {
			t.Errorf("%s: CanTalk = %v, want %v; reasons %q", tt.name, v.CanTalk(), tt.want, v.Reasons)
		}
		if tt.shared != nil {
			if diff := cmp.Diff(tt.shared, v.Shared); diff != "" {
				t.Errorf("%s: shared partitions (-want +got)\n%s", tt.name, diff)
			}
		}
		if m := missing(v.Reasons, tt.reasons); m != nil {
			t.Errorf("%s: reasons %q lack %q", tt.name, v.Reasons, m)
		}
		for _, s := range tt.absent {
			if strings.Contains(strings.Join(v.Reasons, "\n"), s) {
				t.Errorf("%s: reasons %q mention %q", tt.name, v.Reasons, s)
			}
		}
		if m := missing(v.Warnings, tt.warnings); m != nil {
			t.Errorf("%s: warnings %q lack %q", tt.name, v.Warnings, m)
		}
		// Swapping the ends swaps the verdict, never changes it.
		if r := CanTalk(tt.b, tt.a); r.CanTalk() != v.CanTalk() || len(r.Shared) != len(v.Shared) {
			t.Errorf("%s: swapped ends give CanTalk %v with %d shared, want %v with %d", tt.name, r.CanTalk(), len(r.Shared), v.CanTalk(), len(v.Shared))
		}
	}
}

// TestCanTalkPortsBruteForce: for random small tables the port verdict equals "some pair
// of valid entries satisfies the one-line rule", and every pair's key is listed.
func TestCanTalkPortsBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	keys := []PKey{0x0000, 0x8000, 0x0001, 0x8001, 0x0002, 0x8002, 0x7fff, 0xffff}
	randTable := func() []TableEntry {
		n := r.IntN(5)
		t := make([]TableEntry, n)
		for i := range t {
			t[i] = TableEntry{Index: r.IntN(8), PKey: keys[r.IntN(len(keys))], Readable: r.IntN(6) != 0}
		}
		return t
	}
	for range 20000 {
		ta, tb := randTable(), randTable()
		want, sharedKeys := false, map[uint16]bool{}
		for _, x := range ta {
			for _, y := range tb {
				if !x.Readable || !y.Readable || !x.PKey.Valid() || uint16(x.PKey.Partition()) != uint16(y.PKey.Partition()) {
					continue
				}
				sharedKeys[uint16(x.PKey.Partition())] = true
				want = want || pkeyRule(x.PKey, y.PKey)
			}
		}
		v := CanTalk(Endpoint{Port: true, Entries: ta}, Endpoint{Port: true, Entries: tb})
		if v.CanTalk() != want || len(v.Shared) != len(sharedKeys) {
			t.Fatalf("tables %v / %v: CanTalk %v with %d shared, want %v with %d", ta, tb, v.CanTalk(), len(v.Shared), want, len(sharedKeys))
		}
		for _, sp := range v.Shared {
			ia, pa, _ := FindPKeyIndex(ta, PKey(sp.Key))
			ib, pb, _ := FindPKeyIndex(tb, PKey(sp.Key))
			if sp.A.Index != ia || sp.A.PKey != pa || sp.B.Index != ib || sp.B.PKey != pb {
				t.Fatalf("tables %v / %v: shared %+v disagrees with FindPKeyIndex (%d %s, %d %s)", ta, tb, sp, ia, pa, ib, pb)
			}
		}
	}
}

func TestFindPKeyIndex(t *testing.T) {
	tests := []struct {
		name    string
		entries []TableEntry
		key     PKey
		index   int
		entry   PKey
		ok      bool
	}{
		{"full preferred over earlier limited", table(0xffff, 0x0001, 0x8001), 0x0001, 2, 0x8001, true},
		{"asking with the full bit finds a limited entry", table(0xffff, 0x0001), 0x8001, 1, 0x0001, true},
		{"first limited when no full", table(0x0005, 0xffff, 0x0005), 0x8005, 0, 0x0005, true},
		{"lowest index among equal full entries, any order",
			[]TableEntry{{Index: 7, PKey: 0x8003, Readable: true}, {Index: 4, PKey: 0x8003, Readable: true}, {Index: 1, PKey: 0x0003, Readable: true}}, 0x0003, 4, 0x8003, true},
		{"unreadable entries skipped",
			[]TableEntry{{Index: 0, PKey: 0x8003, Readable: false}, {Index: 1, PKey: 0x0003, Readable: true}}, 0x8003, 1, 0x0003, true},
		{"not present", table(0xffff, 0x8001), 0x0002, NoIndex, 0, false},
		{"key 0 never matches, even invalid entries", table(0x0000, 0x8000, 0xffff), 0x8000, NoIndex, 0, false},
		{"key 0 asked as 0x0000", table(0x0000), 0x0000, NoIndex, 0, false},
		{"default partition", table(0x8001, 0x7fff, 0xffff), 0x7fff, 2, 0xffff, true},
		{"empty table", nil, 0xffff, NoIndex, 0, false},
	}
	for _, tt := range tests {
		index, entry, ok := FindPKeyIndex(tt.entries, tt.key)
		if index != tt.index || entry != tt.entry || ok != tt.ok {
			t.Errorf("%s: FindPKeyIndex(%s) = %d, %s, %v; want %d, %s, %v", tt.name, tt.key, index, entry, ok, tt.index, tt.entry, tt.ok)
		}
	}
}

func TestSpecEndpoint(t *testing.T) {
	tbl := table(0xffff, 0x0001, 0x8001, 0x0000, 0x0002)
	parse := func(s string) EndpointSpec {
		t.Helper()
		spec, err := ParseEndpoint(s)
		if err != nil {
			t.Fatal(err)
		}
		return spec
	}
	tests := []struct {
		spec    string
		want    Endpoint
		problem string // a *ResolveError containing this
	}{
		{"0x8001,qp=ud,qkey=0x11", Endpoint{Label: "0x8001,qp=ud,qkey=0x00000011", Entries: []TableEntry{{NoIndex, 0x8001, true}}, QPType: QPUD, QKey: qk(0x11)}, ""},
		{"pkey=0x0001,index=4", Endpoint{Label: "pkey=0x0001,index=4", Entries: []TableEntry{{4, 0x0001, true}}}, ""},
		{"mlx5_0/1", Endpoint{Label: "mlx5_0/1", Port: true, Entries: tbl}, ""},
		{"mlx5_0/1,index=1", Endpoint{Label: "mlx5_0/1,index=1", Entries: []TableEntry{{1, 0x0001, true}}}, ""},
		{"mlx5_0/1,pkey=0x0001", Endpoint{Label: "mlx5_0/1,pkey=0x0001", Entries: []TableEntry{{2, 0x8001, true}},
			Notes: []string{"mlx5_0/1,pkey=0x0001: asked for 0x0001; a QP there uses the entry at index 2, 0x8001 (full member)"}}, ""},
		{"mlx5_0/1,pkey=0x8002", Endpoint{Label: "mlx5_0/1,pkey=0x8002", Entries: []TableEntry{{4, 0x0002, true}},
			Notes: []string{"mlx5_0/1,pkey=0x8002: asked for 0x8002; a QP there uses the entry at index 4, 0x0002 (limited member)"}}, ""},
		{"lid=3,port=1,index=9", Endpoint{}, "no P_Key table entry at index 9 (indexes 0-4)"},
		{"mlx5_0/1,pkey=0x8009", Endpoint{}, "no valid P_Key table entry for partition 0x0009"},
		{"mlx5_0/1,pkey=0x8000", Endpoint{}, "no valid P_Key table entry for partition 0x0000"},
		{"mlx5_0/1,pkey=0x0002,index=1", Endpoint{}, "index 1 holds 0x0001, not partition 0x0002"},
	}
	for _, tt := range tests {
		got, err := parse(tt.spec).Endpoint("", tbl)
		if tt.problem != "" {
			var re *ResolveError
			if !errors.As(err, &re) || !strings.Contains(err.Error(), tt.problem) {
				t.Errorf("%s: error %v, want a *ResolveError with %q", tt.spec, err, tt.problem)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.spec, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: (-want +got)\n%s", tt.spec, diff)
		}
	}
}

// fullTables are two 128-entry tables, all valid: the default partition plus 127 keys on
// each side, 64 of them shared (A full, B limited).
func fullTables() (Endpoint, Endpoint) {
	a := make([]PKey, 128)
	b := make([]PKey, 128)
	a[0], b[0] = 0xffff, 0x7fff
	for i := 1; i < 128; i++ {
		a[i] = 0x8000 | PKey(i) // keys 0x0001-0x007f, full
		b[i] = PKey(i + 63)     // keys 0x0040-0x00be, limited
	}
	// Shuffle-ish order so sorting has work to do.
	for i := 1; i < 128; i += 2 {
		j := 128 - i
		a[i], a[j] = a[j], a[i]
	}
	ea, eb := port("mlx5_0/1", a...), port("mlx5_1/1", b...)
	ea.QPType, ea.QKey = QPUD, qk(0x11)
	eb.QPType, eb.QKey = QPUD, qk(0x11)
	return ea, eb
}

func TestFullTables(t *testing.T) {
	a, b := fullTables()
	v := CanTalk(a, b)
	if !v.CanTalk() || len(v.Shared) != 65 { // 0x0040-0x007f and 0x7fff
		t.Fatalf("CanTalk %v with %d shared partitions, want true with 65; reasons %q", v.CanTalk(), len(v.Shared), v.Reasons)
	}
	if m := missing(v.Reasons, []string{"they share partition 0x0040", "and 56 more"}); m != nil {
		t.Errorf("reasons %q lack %q", v.Reasons, m)
	}
}

func BenchmarkCanTalkFullTables(b *testing.B) {
	ea, eb := fullTables()
	b.ReportAllocs()
	for b.Loop() {
		v := CanTalk(ea, eb)
		if !v.CanTalk() {
			b.Fatal("want true")
		}
	}
}

func BenchmarkCanTalkQPs(b *testing.B) {
	ea, eb := QPEndpoint("a", 0x8001, QPAny), QPEndpoint("b", 0x0001, QPAny)
	b.ReportAllocs()
	for b.Loop() {
		CanTalk(ea, eb)
	}
}

// TestCanTalkLabelIsPKey: an endpoint named by its P_Key (as `ibkey can-talk 0x8001
// 0x0001` names them) is not described as "0x8001 with 0x8001".
func TestCanTalkLabelIsPKey(t *testing.T) {
	v := CanTalk(QPEndpoint("0x8001", 0x8001, QPAny), QPEndpoint("0x0001", 0x0001, QPAny))
	want := "they share partition 0x0001: 0x8001 (full) and 0x0001 (limited)"
	if len(v.Reasons) != 1 || v.Reasons[0] != want {
		t.Errorf("reasons %q, want [%q]", v.Reasons, want)
	}
}

func TestCanTalkLinkLayers(t *testing.T) {
	ib := Endpoint{Label: "mlx5_0/1", Port: true, LinkLayer: "InfiniBand",
		Entries: []TableEntry{{Index: 0, PKey: 0xffff, Readable: true}}}
	roce := Endpoint{Label: "mlx5_2/1", Port: true, LinkLayer: "Ethernet",
		Entries: []TableEntry{{Index: 0, PKey: 0xffff, Readable: true}}}
	v := CanTalk(ib, roce)
	if v.CanTalk() || v.AToB.OK || v.BToA.OK || v.AToB.LinkOK != RuleFails || v.OneWay() {
		t.Fatalf("InfiniBand and Ethernet ports cannot talk, whatever their tables: %+v", v)
	}
	if !strings.Contains(strings.Join(v.Reasons, "\n"), "different link layers") {
		t.Errorf("reasons %q", v.Reasons)
	}
	// Unknown link layer (a bare P_Key) does not decide anything.
	if v := CanTalk(ib, QPEndpoint("0x8001", 0xffff, QPAny)); !v.CanTalk() {
		t.Errorf("a QP with an unknown link layer: %+v", v)
	}
	// A link layer not read is not "the same" (red-team finding 2): unknown, against
	// a known one or another not read; a definite no stays no.
	lost := ib
	lost.LinkLayer, lost.LinkLayerMissing = "", "link_layer: file does not exist"
	for _, o := range []Endpoint{roce, ib, {Label: "x/1", Port: true, LinkLayerMissing: "link_layer: permission denied", Entries: ib.Entries}} {
		v := CanTalk(lost, o)
		if v.Kind != VerdictUnknown || len(v.NotChecked) != 1 || v.NotChecked[0].Cause != NotCheckedLinkLayer ||
			!strings.Contains(v.NotChecked[0].Sentence, "link layer of mlx5_0/1 not read") {
			t.Errorf("link layer not read vs %s: %s %+v", o.Label, v.Kind, v.NotChecked)
		}
	}
	if v := CanTalk(lost, QPEndpoint("0x8001", 0xffff, QPAny)); !v.CanTalk() {
		t.Errorf("link layer not read vs a bare P_Key: %s", v.Kind)
	}
	if v := CanTalk(lost, QPEndpoint("0x8002", 0x8002, QPAny)); v.Kind != VerdictNo {
		t.Errorf("link layer not read, no shared partition: %s, want no", v.Kind)
	}
	roce2 := roce
	roce2.Label = "mlx5_3/1"
	if v := CanTalk(roce, roce2); !v.CanTalk() {
		t.Errorf("two RoCE ports with 0xffff: %+v", v)
	}
}

// TestZeroVerdictIsUnknown: a verdict nobody decided says "unknown" (exit 4), never a
// confident yes; every kind keeps its name and exit code.
func TestZeroVerdictIsUnknown(t *testing.T) {
	var v Verdict
	if v.Kind != VerdictUnknown || v.CanTalk() || v.Kind.ExitCode() != 4 || v.Kind.String() != "unknown" {
		t.Errorf("zero verdict: %s, can talk %v, exit %d", v.Kind, v.CanTalk(), v.Kind.ExitCode())
	}
	for k, want := range map[VerdictKind]struct {
		name string
		exit int
	}{
		VerdictYes: {"yes", 0}, VerdictNo: {"no", 1}, VerdictOneWay: {"one-way", 1}, VerdictNotActive: {"not-active", 1},
		VerdictDifferentSubnets: {"different-subnets", 4}, VerdictUnknown: {"unknown", 4},
	} {
		if k.String() != want.name || k.ExitCode() != want.exit {
			t.Errorf("%d: %s exit %d, want %s exit %d", k, k, k.ExitCode(), want.name, want.exit)
		}
	}
}

// TestCanTalkNoEntry: an end no QP can use (NoEntry) is a no whatever the other end
// did not read: its reason is the sentence, and nothing is left not checked.
func TestCanTalkNoEntry(t *testing.T) {
	a := Endpoint{Label: "G", NoEntry: "G gets no entry for partition 0x0001 from p.conf (it gets 0xffff), so no QP there can use it"}
	unread := port("mlx5_1/1", 0xffff)
	unread.Entries = append(unread.Entries, TableEntry{Index: 1})
	notRead := Endpoint{Label: "mlx5_0/1", Port: true, TableNotRead: "P_Key table not read: permission denied"}
	for _, b := range []Endpoint{unread, notRead, QPEndpoint("B", 0x8001, QPAny)} {
		v := CanTalk(a, b)
		if v.Kind != VerdictNo || len(v.NotChecked) != 0 || !slices.Contains(v.Reasons, a.NoEntry) || v.AToB.Unknown || v.BToA.Unknown {
			t.Errorf("against %s: %s, not checked %+v, reasons %q; want a no naming the missing entry", b.Label, v.Kind, v.NotChecked, v.Reasons)
		}
	}
}

// TestRulesNotKnown: a rule whose input was not read is RuleNotKnown, never passes or
// fails, even when another rule decides a definite no: the P_Key rule beside an entry
// not read, the link layer of a port not read.
func TestRulesNotKnown(t *testing.T) {
	pinned := Endpoint{Label: "mlx5_1/1,index=3", Entries: []TableEntry{{Index: 3}}, QPType: QPRC, EntryNotRead: "entry 3 could not be read"}
	v := CanTalk(pinned, QPEndpoint("0x8009", 0x8009, QPUD))
	if v.Kind != VerdictNo || v.AToB.PKeyOK != RuleNotKnown || v.BToA.PKeyOK != RuleNotKnown {
		t.Errorf("QP types differ, entry not read: kind %s, pkey %d/%d; want no, not known", v.Kind, v.AToB.PKeyOK, v.BToA.PKeyOK)
	}
	port := func(ll, missing string) Endpoint {
		return Endpoint{Label: "p", Port: true, LinkLayer: ll, LinkLayerMissing: missing, Entries: []TableEntry{{Index: 0, PKey: 0xffff, Readable: true}}}
	}
	if v := CanTalk(port("", "link_layer: no such file"), port("InfiniBand", "")); v.AToB.LinkOK != RuleNotKnown || v.Kind != VerdictUnknown {
		t.Errorf("link layer not read: link %d, kind %s; want not known, unknown", v.AToB.LinkOK, v.Kind)
	}
	if v := CanTalk(port("InfiniBand", ""), QPEndpoint("0x8001", 0xffff, QPAny)); v.AToB.LinkOK != RulePasses {
		t.Errorf("a bare P_Key has no link layer to differ: link %d, want passes", v.AToB.LinkOK)
	}
}

// TestCanTalkKeyZeroMatchesNothing: an end that holds no valid P_Key, with nothing of
// it unread (a QP using key 0, a port whose entries are all empty), matches nothing
// (IBA §10.9: key 0 is the invalid P_Key), so what the other end did not read cannot
// make them share a partition: a definite no, never an unknown.
func TestCanTalkKeyZeroMatchesNothing(t *testing.T) {
	unread := port("mlx5_1/1", 0x8002)
	unread.Entries = append(unread.Entries, TableEntry{Index: 1})
	notRead := Endpoint{Label: "mlx5_0/1", Port: true, TableNotRead: "P_Key table not read: permission denied"}
	pinned := Endpoint{Label: "mlx5_1/1,index=3", Entries: []TableEntry{{Index: 3}}, EntryNotRead: "entry 3 could not be read"}
	for _, a := range []Endpoint{QPEndpoint("0x0000", 0x0000, QPAny), QPEndpoint("0x8000", 0x8000, QPAny), port("empty", 0x0000, 0x8000), port("none")} {
		for _, b := range []Endpoint{unread, notRead, pinned} {
			for _, v := range []Verdict{CanTalk(a, b), CanTalk(b, a)} {
				if v.Kind != VerdictNo || len(v.NotChecked) != 0 || v.AToB.Unknown || v.BToA.Unknown || v.AToB.PKeyOK != RuleFails {
					t.Errorf("%s with %s: %s, not checked %+v, reasons %q; want a definite no", a.Label, b.Label, v.Kind, v.NotChecked, v.Reasons)
				}
			}
		}
	}
	// An end with an entry not read may hold any key: then it is not known.
	if v := CanTalk(unread, port("b", 0x0001)); v.Kind != VerdictUnknown {
		t.Errorf("port with an entry not read and a limited member: %s, want unknown", v.Kind)
	}
}

// TestSMLIDsDiffer: two ACTIVE ports with the same GID prefix and different master SM
// LIDs may be on two subnets (two SMs, both on OpenSM's default prefix): a yes from
// their tables is not known (NotCheckedSubnet), a no stays a no with the warning; the
// same SM LID, or one not known, changes nothing. Every pair of tables below is tried
// with each pair of SM LIDs.
func TestSMLIDsDiffer(t *testing.T) {
	tables := [][]PKey{{0xffff}, {0x7fff}, {0x8001}, {0x0001}}
	for _, ta := range tables {
		for _, tb := range tables {
			for _, lids := range [][2]uint16{{1, 1}, {1, 7}, {0, 7}, {3, 0}} {
				a, b := port("a", ta...), port("b", tb...)
				base := CanTalk(a, b) // no subnet known
				a.State, b.State = StateActive, StateActive
				a.Subnet = &SubnetID{SMLID: lids[0], GIDPrefix: 0xfe80000000000000}
				b.Subnet = &SubnetID{SMLID: lids[1], GIDPrefix: 0xfe80000000000000}
				v := CanTalk(a, b)
				differ := lids[0] != 0 && lids[1] != 0 && lids[0] != lids[1]
				name := fmt.Sprintf("%v/%v SM LIDs %v", ta, tb, lids)
				warned := slices.ContainsFunc(v.Warnings, func(w string) bool { return strings.Contains(w, "if two Subnet Managers manage them") })
				switch {
				case !differ:
					if v.Kind != base.Kind || warned {
						t.Errorf("%s: %s (warned %v), want %s as without subnets", name, v.Kind, warned, base.Kind)
					}
				case base.Kind == VerdictYes:
					if v.Kind != VerdictUnknown || len(v.NotChecked) != 1 || v.NotChecked[0].Cause != NotCheckedSubnet || v.Kind.ExitCode() != 4 {
						t.Errorf("%s: %s %+v, want unknown (NotCheckedSubnet): the tables' yes holds only on one subnet", name, v.Kind, v.NotChecked)
					}
				default:
					if v.Kind != base.Kind || !warned {
						t.Errorf("%s: %s (warned %v), want %s with the warning", name, v.Kind, warned, base.Kind)
					}
				}
			}
		}
	}
}
