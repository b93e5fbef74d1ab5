package cantalk

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/jsonschematest"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/query"
)

// TestVerdictToJSON: the can-talk document carries each part of the verdict under the
// vocabulary's names (is_port, not port), keys and Q_Keys as hex strings, indexes as
// numbers or null, and lists as [] rather than null.
func TestVerdictToJSON(t *testing.T) {
	table := func(ps ...check.PKey) []check.TableEntry {
		out := make([]check.TableEntry, len(ps))
		for i, p := range ps {
			out[i] = check.TableEntry{Index: i, PKey: p, Readable: true}
		}
		return out
	}
	qk := func(q check.QKey) *check.QKey { return &q }
	a := check.Endpoint{Label: "mlx5_0/1", Port: true, Entries: table(0xffff, 0x0001, 0x8001)}
	a.QPType, a.QKey = check.QPUD, qk(0x11)
	a.QKeyRule, a.QKeyRuleReason = check.QKeyRuleVerbatim, "rxe0 is a software RoCE device"
	b := check.QPEndpoint("B", 0x0001, check.QPUD)
	b.QKey, b.WRQKey = qk(0x22), qk(0x11)
	data, err := json.Marshal(verdictToJSON(check.CanTalk(a, b), []query.ResolvedEndpoint{{Endpoint: a}, {Endpoint: b}}))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	_, assumed := check.QKeyRuleFor(check.QKeyDevice{}) // B is a bare P_Key: nothing known of its device
	want := map[string]any{
		"can_talk": false,
		"one_way":  true,
		"verdict":  "one-way",
		"a": map[string]any{"label": "mlx5_0/1", "is_port": true, "qp_type": "ud", "qkey": "0x00000011", "wr_qkey": nil,
			"qkey_rule": "verbatim", "qkey_rule_reason": "rxe0 is a software RoCE device"},
		"b": map[string]any{"label": "B", "is_port": false, "qp_type": "ud", "qkey": "0x00000022", "wr_qkey": "0x00000011",
			"qkey_rule": "iba-assumed", "qkey_rule_reason": assumed},
		"shared_partitions_complete": true,
		"shared_partitions": []any{map[string]any{
			"key": "0x0001", "default": false, "works": true,
			"a": map[string]any{"pkey": "0x8001", "membership": "full", "index": 2.0, "both_memberships": true, "other_index": 1.0},
			"b": map[string]any{"pkey": "0x0001", "membership": "limited", "index": nil, "both_memberships": false, "other_index": nil},
		}},
	}
	for k, w := range want {
		if diff := cmp.Diff(w, got[k]); diff != "" {
			t.Errorf("JSON %q (-want +got)\n%s", k, diff)
		}
	}
	ab, _ := got["a_to_b"].(map[string]any)
	ba, _ := got["b_to_a"].(map[string]any)
	if ab["ok"] != false || ab["qkey_check"] != "mismatch" || ab["wire_qkey"] != "0x00000011" || ab["accepted_qkey"] != "0x00000022" {
		t.Errorf("a_to_b = %v", ab)
	}
	if ba["ok"] != true || ba["qkey_check"] != "match" || ba["from"] != "B" || ba["pkey_ok"] != true || ba["qp_type_ok"] != true {
		t.Errorf("b_to_a = %v", ba)
	}
	for _, k := range []string{"reasons", "warnings"} {
		if _, ok := got[k].([]any); !ok {
			t.Errorf("JSON %q is %T, want a list", k, got[k])
		}
	}
	// Empty lists are [] rather than null.
	empty, _ := json.Marshal(verdictToJSON(check.Verdict{}, nil))
	for _, k := range []string{`"reasons":[]`, `"warnings":[]`, `"shared_partitions":[]`} {
		if !strings.Contains(string(empty), k) {
			t.Errorf("zero verdict JSON %s lacks %s", empty, k)
		}
	}
}

// TestOneWayUnconfirmedIsNull: a ONE-WAY whose working direction the Subnet Manager
// does not confirm (--sa, unconfirmedOneWay) keeps its verdict, and one_way is null:
// that one direction works was not confirmed (it read true); the working direction's
// ok is null too, and a confirmed one-way keeps one_way true.
func TestOneWayUnconfirmedIsNull(t *testing.T) {
	qk := func(q check.QKey) *check.QKey { return &q }
	a := check.QPEndpoint("A", 0x8001, check.QPUD)
	a.QKey, a.WRQKey = qk(0x11), qk(0x12)
	b := check.QPEndpoint("B", 0x8001, check.QPUD)
	b.QKey = qk(0x11)
	v := check.CanTalk(a, b)
	if v.Kind != check.VerdictOneWay {
		t.Fatalf("kind %s, want one-way", v.Kind)
	}
	eps := []query.ResolvedEndpoint{{Endpoint: a}, {Endpoint: b}}
	if j := verdictToJSON(v, eps); j.OneWay == nil || !*j.OneWay {
		t.Errorf("confirmed one-way: one_way %v, want true", j.OneWay)
	}
	unconfirmedOneWay(&v)
	j := verdictToJSON(v, eps)
	if j.Verdict != "one-way" || j.OneWay != nil {
		t.Errorf("unconfirmed one-way: verdict %s, one_way %v; want one-way, null", j.Verdict, j.OneWay)
	}
	if j.BToA.OK != nil || !j.BToA.Unknown || j.AToB.OK == nil || *j.AToB.OK {
		t.Errorf("unconfirmed one-way: B → A ok %v unknown %v, A → B ok %v; want null, true, false", j.BToA.OK, j.BToA.Unknown, j.AToB.OK)
	}
	data, _ := json.Marshal(j)
	jsonschematest.Validate(t, "can-talk", data)
}
