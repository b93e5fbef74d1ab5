package cantalk

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/jsonschematest"
	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fakesysfs"
)

// TestJSONIncomplete: a verdict that depends on an entry not read is "unknown", exits
// 4 and lists it in incomplete (kind unread-entries), for a port endpoint and for a
// key= endpoint whose entry may be the unread one, or whose full entry may be (only a
// limited one was read); a yes has none (the runner checks the rule of incomplete on
// every JSON run; a definite no beside an entry not read: TestPinnedEntryNotRead).
func TestJSONIncomplete(t *testing.T) {
	for _, tc := range []struct {
		a, b    string
		verdict string
		code    int
	}{
		{"mlx5_1/1", "0x8009", "unknown", 4},
		{"mlx5_1/1,pkey=0x8009", "0x8009", "unknown", 4},
		// Against 0x8001: a definite no (TestFindEntryNotKnown).
		{"mlx5_1/1,pkey=0x8009", "0x0009", "unknown", 4},
		{"mlx5_1/1", "0x8002", "yes", 0},
		// Only a limited entry was read for pkey=, and entry 3 was not: if it holds
		// 0x8003, ib_find_pkey picks it and the answer is yes (red-team finding 1).
		{"mlx5_1/1,pkey=0x0003", "0x0003", "unknown", 4},
		// Against a full member the answer is yes either way.
		{"mlx5_1/1,pkey=0x0003", "0x8003", "yes", 0},
		// index= of the entry not read: unknown, exit 4, never 3 (red-team finding 8;
		// it was an exit-3 error case).
		{"mlx5_1/1,index=3", "0x8001", "unknown", 4},
	} {
		r := cmdtest.Run(t, root, false, nil, "--sysfs", cmdtest.MLX5, "can-talk", tc.a, tc.b, "-o", "json")
		var doc struct {
			Verdict    string                  `json:"verdict"`
			Incomplete []struct{ Kind string } `json:"incomplete"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
			t.Fatalf("%s %s: %v\n%s", tc.a, tc.b, err, r.Stdout)
		}
		if r.Code != tc.code || doc.Verdict != tc.verdict {
			t.Errorf("%s %s: exit %d, verdict %q; want %d, %q\n%s", tc.a, tc.b, r.Code, doc.Verdict, tc.code, tc.verdict, r.Stdout)
		}
		for _, i := range doc.Incomplete {
			if i.Kind != "unread-entries" {
				t.Errorf("%s %s: incomplete kind %q, want unread-entries", tc.a, tc.b, i.Kind)
			}
		}
	}
}

// TestIncompleteKindFromCause: the kind of each incomplete item comes from the cause
// check's verdict carries, whatever its sentence says (a sentence about a switch
// port's table that mentions "P_Key table entries" stays unread-table).
func TestIncompleteKindFromCause(t *testing.T) {
	v := check.Verdict{Kind: check.VerdictUnknown, NotChecked: []check.NotChecked{
		{Cause: check.NotCheckedEntries, Sentence: "something not read"},
		{Cause: check.NotCheckedSwitchTable, Sentence: "the switch port's P_Key table entries were not read"},
		{Cause: check.NotCheckedSwitchEnforcement, Sentence: "enforcement bits not read"},
	}}
	got := verdictIncomplete(v)
	want := []string{"unread-entries", "unread-table", "unread-table"}
	if len(got) != len(want) {
		t.Fatalf("incomplete = %v, want kinds %v", got, want)
	}
	for i, w := range want {
		if got[i].Kind != w || got[i].Message != v.NotChecked[i].Sentence {
			t.Errorf("incomplete[%d] = %+v, want kind %s and message %q", i, got[i], w, v.NotChecked[i].Sentence)
		}
	}
}

// TestPartialSweepEndpointUnknown: a node not found in a partial sweep may be in the
// part not read: exit 4 (unknown), as the fabric commands exit on a partial sweep;
// in a complete sweep the same node is missing: exit 3 (issue 25 item 8).
func TestPartialSweepEndpointUnknown(t *testing.T) {
	b, err := os.ReadFile("../../testdata/fabric/small.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	complete := filepath.Join(t.TempDir(), "complete.json")
	if err := os.WriteFile(complete, b, 0o644); err != nil {
		t.Fatal(err)
	}
	doc["incomplete"] = "stopped at --timeout 1s"
	pb, _ := json.Marshal(doc)
	partial := filepath.Join(t.TempDir(), "partial.json")
	if err := os.WriteFile(partial, pb, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		file string
		code int
		msg  string
	}{
		{complete, cmdutil.ExitEnv, `no node "HcaZ" in the sweep`},
		{partial, cmdutil.ExitIncomplete, "the port may be in the part not read"},
	} {
		r := cmdtest.Run(t, root, false, nil, "can-talk", "--fabric-file", tc.file, "node=HcaZ", "node=HcaA")
		if r.Code != tc.code || !strings.Contains(r.Stderr, tc.msg) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d and %q", filepath.Base(tc.file), r.Code, r.Stderr, tc.code, tc.msg)
		}
	}
}

// TestPinnedEntryNotRead: a QP pinned to an entry that could not be read (index=), or
// whose pkey= entry may be among those not read, gets the verdict a port whose table
// was not read gets, in every format: UNKNOWN, exit 4 (never 3: red-team finding 8),
// naming the entry and why, a whole JSON document with not_checked and incomplete;
// and where a rule that was decided fails, the known answer: NOT ACTIVE against a
// DOWN port, NO against a RoCE port (exit 1). Until wave 10 both pinned cases had
// their own "cannot resolve" output, UNKNOWN whatever the other end.
func TestPinnedEntryNotRead(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sys")
	if err := fakesysfs.Write(dir, fakesysfs.MLX5()); err != nil { // mlx5_1/1's entry 3 is a loop
		t.Fatal(err)
	}
	if err := fakesysfs.LoopPKeys(dir, "mlx5_0", 1); err != nil {
		t.Fatal(err)
	}
	type doc struct {
		Verdict    string
		NotChecked []string `json:"not_checked"`
		A          *struct{ Label string }
		Shared     []any `json:"shared_partitions"`
		Unresolved any
		Incomplete []struct{ Kind, Message string }
	}
	run := func(a, b string) (cmdtest.Result, cmdtest.Result, doc) {
		// Every pair has an end with a table or entry not read: a partial read.
		r := cmdtest.RunPartial(t, root, false, nil, "--sysfs", dir, "can-talk", a, b, "-o", "plain")
		j := cmdtest.RunPartial(t, root, false, nil, "--sysfs", dir, "can-talk", a, b, "-o", "json")
		jsonschematest.Validate(t, "can-talk", []byte(j.Stdout))
		var d doc
		if err := json.Unmarshal([]byte(j.Stdout), &d); err != nil {
			t.Fatalf("%s %s: %v\n%s", a, b, err, j.Stdout)
		}
		return r, j, d
	}
	for _, b := range []struct{ spec, head string }{{"0x8001", "UNKNOWN: "}, {"mlx5_1/2", "NO (NOT ACTIVE): "}, {"mlx5_2/1", "NO: "}} {
		table, _, tdoc := run("mlx5_0/1", b.spec)
		for _, a := range []struct{ spec, named string }{
			{"mlx5_1/1,index=3", "mlx5_1/1: P_Key table entry 3 could not be read (read failed: "},
		} {
			r, j, d := run(a.spec, b.spec)
			name := a.spec + " " + b.spec
			if r.Code != table.Code || j.Code != table.Code || !strings.HasPrefix(r.Stdout, b.head) || !strings.HasPrefix(table.Stdout, b.head) {
				t.Errorf("%s: exit %d (json %d), want %d as for a table not read, and %q:\n%s--- table not read:\n%s", name, r.Code, j.Code, table.Code, b.head, r.Stdout, table.Stdout)
			}
			if !strings.Contains(r.Stdout, "\n  "+a.named) {
				t.Errorf("%s: the reasons do not name %q:\n%s", name, a.named, r.Stdout)
			}
			if d.A == nil || d.Shared == nil || d.Unresolved != nil || d.Verdict != tdoc.Verdict || (len(d.NotChecked) > 0) != (len(tdoc.NotChecked) > 0) {
				t.Errorf("%s: JSON %+v, want the verdict document a table not read gets (%+v)\n%s", name, d, tdoc, j.Stdout)
			}
			if table.Code != 4 {
				// A definite no (exit 1) read beside what was not: incomplete names
				// it still (until wave 11 it was absent on exit 1).
				if len(d.Incomplete) == 0 || d.Incomplete[0].Kind != "unread-entries" || !strings.HasPrefix(d.Incomplete[0].Message, a.named) {
					t.Errorf("%s: exit %d, incomplete %+v; want unread-entries naming %q first", name, j.Code, d.Incomplete, a.named)
				}
				continue
			}
			if len(d.Incomplete) != 1 || d.Incomplete[0].Kind != "unread-entries" || !strings.HasPrefix(d.Incomplete[0].Message, a.named) ||
				!strings.Contains(r.Stderr, "warning: not checked: "+a.named) {
				t.Errorf("%s: incomplete %+v, stderr %q; want one unread-entries naming %q, and stderr saying so", name, d.Incomplete, r.Stderr, a.named)
			}
		}
	}
}

// TestFindEntryNotKnown (wave 11): pkey=0x8009 on mlx5_1/1, where no entry read holds
// partition 9 and entry 3 was not read: the entry the kernel picks may be a full
// 0x8009, a limited 0x0009 or none (ib_find_pkey, query.FindPKey). Against an end with
// no entry of partition 9 every one of them gives the same answer, a definite one
// (until wave 11: unknown against 0x8001), the reasons say the entry is not known and
// why, and incomplete names it; against 0x8009 they differ: unknown, exit 4.
func TestFindEntryNotKnown(t *testing.T) {
	named := "mlx5_1/1: partition 0x0009 is not in the entries that were read, but 1 P_Key table entry could not be read (index 3): it may be in one of them"
	for _, tc := range []struct {
		b, head string
		code    int
	}{{"0x8001", "NO: ", 1}, {"mlx5_1/2", "NO (NOT ACTIVE): ", 1}, {"mlx5_2/1", "NO: ", 1}, {"0x8009", "UNKNOWN: ", 4}} {
		r := cmdtest.RunPartial(t, root, false, nil, "--sysfs", cmdtest.MLX5, "can-talk", "mlx5_1/1,pkey=0x8009", tc.b, "-o", "plain")
		j := cmdtest.RunPartial(t, root, false, nil, "--sysfs", cmdtest.MLX5, "can-talk", "mlx5_1/1,pkey=0x8009", tc.b, "-o", "json")
		jsonschematest.Validate(t, "can-talk", []byte(j.Stdout))
		var d struct {
			Incomplete []struct{ Kind, Message string }
		}
		if err := json.Unmarshal([]byte(j.Stdout), &d); err != nil {
			t.Fatal(err)
		}
		if r.Code != tc.code || j.Code != tc.code || !strings.HasPrefix(r.Stdout, tc.head) {
			t.Errorf("%s: exit %d (json %d), want %d and %q:\n%s", tc.b, r.Code, j.Code, tc.code, tc.head, r.Stdout)
		}
		if tc.code == 1 && !strings.Contains(r.Stdout, "the entry a QP there uses for partition 0x0009 is not known") {
			t.Errorf("%s: the reasons do not say the entry is not known:\n%s", tc.b, r.Stdout)
		}
		if tc.code == 4 && !strings.Contains(r.Stdout, "if none of the entries of mlx5_1/1 not read holds partition 0x0009") {
			t.Errorf("%s: the reasons do not name the entries the kernel may pick:\n%s", tc.b, r.Stdout)
		}
		found := false
		for _, i := range d.Incomplete {
			found = found || i.Kind == "unread-entries" && i.Message == named
		}
		if tc.code == 1 && !found {
			t.Errorf("%s: incomplete %+v, want unread-entries %q", tc.b, d.Incomplete, named)
		}
	}
}

// TestSharedPartitionsLowerBound (wave 11): a yes that the entry mlx5_1/1 did not
// read could not change exits 0 with no incomplete, yet that entry may hold one more
// partition both ends share: shared_partitions_complete is false and the text says
// the list holds only what the entries read hold. From complete reads it is true and
// the text says nothing more. A pkey= whose entry none of those read holds lists no
// shared partition (nothing read holds it), and is not complete either.
func TestSharedPartitionsLowerBound(t *testing.T) {
	const short = "(only those in the entries read: entries not read may hold more)"
	for _, tc := range []struct {
		a, b     string
		code     int
		complete bool
		shared   int
	}{
		{"mlx5_1/1", "mlx5_0/1", 0, false, 3},
		{"mlx5_0/1", "mlx5_1/2", 1, true, 2},
		{"mlx5_0/1", "mlx5_0/1,pkey=0x8001", 0, true, 1},
		{"mlx5_1/1,pkey=0x8002", "mlx5_0/1", 4, true, 1}, // the partition set is known; its entry is not
		{"mlx5_1/1,pkey=0x8009", "mlx5_0/1", 1, false, 0},
	} {
		run := cmdtest.Run // exit 0: the runner's rule is no incomplete
		if tc.code != 0 && strings.HasPrefix(tc.a, "mlx5_1/1") {
			run = cmdtest.RunPartial
		}
		j := run(t, root, false, nil, "--sysfs", cmdtest.MLX5, "can-talk", tc.a, tc.b, "-o", "json")
		r := run(t, root, false, nil, "--sysfs", cmdtest.MLX5, "can-talk", tc.a, tc.b)
		jsonschematest.Validate(t, "can-talk", []byte(j.Stdout))
		var d struct {
			Complete   *bool `json:"shared_partitions_complete"`
			Shared     []any `json:"shared_partitions"`
			Incomplete []any
		}
		if err := json.Unmarshal([]byte(j.Stdout), &d); err != nil {
			t.Fatal(err)
		}
		name := tc.a + " " + tc.b
		if j.Code != tc.code || d.Complete == nil || *d.Complete != tc.complete || len(d.Shared) != tc.shared {
			t.Errorf("%s: exit %d, shared_partitions_complete %v, %d shared; want %d, %v, %d\n%s", name, j.Code, d.Complete, len(d.Shared), tc.code, tc.complete, tc.shared, j.Stdout)
		}
		if tc.code == 0 && len(d.Incomplete) > 0 {
			t.Errorf("%s: a yes with incomplete %v", name, d.Incomplete)
		}
		if strings.Contains(r.Stdout, short) == tc.complete {
			t.Errorf("%s: the text says %q: %v, want %v:\n%s", name, short, !tc.complete, !tc.complete, r.Stdout)
		}
	}
}

// TestFindEntryIndexNotKnown (wave 11): pkey=0x8005 on mlx5_0/1, whose full 0x8005 is
// at index 4 and whose entry 3 was not read: the kernel picks a full 0x8005 either
// way, so the answer stands (yes against 0x0005, exit 0, no incomplete), but the
// index is not known: null in shared_partitions, and a reason says why.
func TestFindEntryIndexNotKnown(t *testing.T) {
	h := fakesysfs.MLX5()
	h.Devices[0].Ports[0].Unreadable = []int{3} // mlx5_0/1
	if h.Devices[0].Name != "mlx5_0" {
		t.Fatalf("fixture order: %s", h.Devices[0].Name)
	}
	dir := filepath.Join(t.TempDir(), "sys")
	if err := fakesysfs.Write(dir, h); err != nil {
		t.Fatal(err)
	}
	j := cmdtest.Run(t, root, false, nil, "--sysfs", dir, "can-talk", "mlx5_0/1,pkey=0x8005", "0x0005", "-o", "json")
	jsonschematest.Validate(t, "can-talk", []byte(j.Stdout))
	var d struct {
		Verdict string
		Reasons []string
		Shared  []struct{ A struct{ Index *int } } `json:"shared_partitions"`
	}
	if err := json.Unmarshal([]byte(j.Stdout), &d); err != nil {
		t.Fatal(err)
	}
	const why = "entry 4 holds it as a full member, but 1 entry before it could not be read (index 3)"
	if j.Code != 0 || d.Verdict != "yes" || len(d.Shared) != 1 || d.Shared[0].A.Index != nil || !strings.Contains(strings.Join(d.Reasons, "\n"), why) {
		t.Errorf("exit %d: want yes, exit 0, index null and a reason saying %q\n%s", j.Code, why, j.Stdout)
	}
}

// TestQPOnTableNotRead (wave 12): a QP on a port whose P_Key table was not read
// (DEV/PORT,pkey= or ,index=) is one P_Key, not the port: is_port false, the table
// named as not read (unread-table) and the answer said to depend on it. Until wave 12
// it was taken for the port (is_port true, "a partition they share may be there"):
// check.Endpoint's TableNotRead stood for a table or a pinned entry by Port.
func TestQPOnTableNotRead(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sys")
	if err := fakesysfs.Write(dir, fakesysfs.MLX5()); err != nil {
		t.Fatal(err)
	}
	if err := fakesysfs.LoopPKeys(dir, "mlx5_0", 1); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		a    string
		port bool
		tail string
	}{
		{"mlx5_0/1", true, ": a partition they share may be there"},
		{"mlx5_0/1,pkey=0x8001", false, ": the answer depends on it"},
		{"mlx5_0/1,index=2", false, ": the answer depends on it"},
	} {
		r := cmdtest.RunPartial(t, root, false, nil, "--sysfs", dir, "can-talk", tc.a, "0x0001", "-o", "json")
		jsonschematest.Validate(t, "can-talk", []byte(r.Stdout))
		var d struct {
			A struct {
				IsPort bool `json:"is_port"`
			}
			NotChecked []string `json:"not_checked"`
			Incomplete []struct{ Kind string }
		}
		if err := json.Unmarshal([]byte(r.Stdout), &d); err != nil {
			t.Fatal(err)
		}
		if r.Code != 4 || d.A.IsPort != tc.port || len(d.NotChecked) != 1 || !strings.HasPrefix(d.NotChecked[0], "mlx5_0/1: P_Key table not read: ") ||
			!strings.HasSuffix(d.NotChecked[0], tc.tail) || len(d.Incomplete) != 1 || d.Incomplete[0].Kind != "unread-table" {
			t.Errorf("%s: exit %d, is_port %v, not_checked %q, incomplete %+v; want 4, %v, the table not read%s, unread-table", tc.a, r.Code, d.A.IsPort, d.NotChecked, d.Incomplete, tc.port, tc.tail)
		}
	}
}

// TestRuleNotKnownIsNull: a definite no from another rule (QP types) beside an entry
// not read keeps the P_Key rule not known: pkey_ok null, never the true of the entry
// the reasons take (pkey=, findEntry) nor the false of an entry not read (index=).
func TestRuleNotKnownIsNull(t *testing.T) {
	for _, a := range []string{"mlx5_1/1,pkey=0x8009,qp=rc", "mlx5_1/1,index=3,qp=rc"} {
		r := cmdtest.RunPartial(t, root, false, nil, "--sysfs", cmdtest.MLX5, "can-talk", a, "0x8009,qp=ud", "-o", "json")
		var doc struct {
			Verdict string
			AToB    map[string]any `json:"a_to_b"`
			BToA    map[string]any `json:"b_to_a"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
			t.Fatalf("%s: %v\n%s", a, err, r.Stdout)
		}
		if r.Code != 1 || doc.Verdict != "no" {
			t.Errorf("%s: exit %d, verdict %q; want 1, no", a, r.Code, doc.Verdict)
		}
		for _, d := range []map[string]any{doc.AToB, doc.BToA} {
			if v, ok := d["pkey_ok"]; !ok || v != nil {
				t.Errorf("%s: pkey_ok %v (present %v), want null\n%s", a, v, ok, r.Stdout)
			}
			if d["qp_type_ok"] != false || d["ok"] != false {
				t.Errorf("%s: qp_type_ok %v, ok %v; want false, false", a, d["qp_type_ok"], d["ok"])
			}
		}
	}
}
