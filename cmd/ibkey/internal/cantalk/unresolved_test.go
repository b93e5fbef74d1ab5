package cantalk

import (
	"encoding/json"
	"os"
	"path/filepath"
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

// TestCannotResolveUnderAssumption (wave 12): a GUID of a partitions file whose
// predicted table lacks pkey='s partition was a definite no (exit 1), predicted
// without the assumptions that were not checked: which port OpenSM runs on (SELF) and
// which ports are router ports (ALL_ROUTERS). Where one of them gives the port the key
// and the answer then differs, it is unknown (exit 4, incomplete not-checked); where
// it is given (--sm-guid, --router) or changes nothing, the no stays the unresolved
// document of TestCannotResolveIsDefinite.
func TestCannotResolveUnderAssumption(t *testing.T) {
	const a, b, c = "0x0002c90300000201", "0x0002c90300000204", "0x0002c90300000205"
	dir := t.TempDir()
	write := func(name, text string) string {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	self := write("self.conf", "Default=0x7fff : ALL=full ;\nP1=0x8001 : SELF=full, "+b+"=limited ;\n")
	router := write("router.conf", "Default=0x7fff : ALL=full ;\nP1=0x8001 : ALL_ROUTERS=full, "+b+"=limited ;\n")
	for _, tc := range []struct {
		args    []string
		code    int
		verdict string
		ifs     string // in not_checked, for an unknown
	}{
		{[]string{"--partitions", self, a + ",pkey=0x8001", b}, 4, "unknown", "if " + a + " is the port OpenSM runs on"},
		{[]string{"--partitions", router, a + ",pkey=0x8001", b}, 4, "unknown", "if " + a + " is a router port"},
		{[]string{"--partitions", self, "--sm-guid", a, a + ",pkey=0x8001", b}, 0, "yes", ""},
		{[]string{"--partitions", router, "--router", a, a + ",pkey=0x8001", b}, 0, "yes", ""},
		// Given, or the same no either way (c has no entry of partition 0x0001).
		{[]string{"--partitions", self, "--sm-guid", b, a + ",pkey=0x8001", b}, 1, "no", ""},
		{[]string{"--partitions", router, "--router", "none", a + ",pkey=0x8001", b}, 1, "no", ""},
		{[]string{"--partitions", self, a + ",pkey=0x8001", c}, 1, "no", ""},
		// As router ports, a and c are full members of 0x0001 (ALL_ROUTERS=full).
		{[]string{"--partitions", router, a + ",pkey=0x8001", c}, 4, "unknown", "if " + a + " is a router port and " + c + " is a router port"},
	} {
		args := append([]string{"can-talk", "-o", "json"}, tc.args...)
		run := cmdtest.Run
		if tc.code == 4 {
			run = cmdtest.RunPartial
		}
		j := run(t, root, false, nil, args...)
		var d struct {
			Verdict    string
			NotChecked []string `json:"not_checked"`
			Unresolved *struct{ Endpoint string }
			Incomplete []struct{ Kind string }
		}
		if err := json.Unmarshal([]byte(j.Stdout), &d); err != nil {
			t.Fatalf("%v: %v\n%s", tc.args, err, j.Stdout)
		}
		name := strings.Join(tc.args, " ")
		if j.Code != tc.code || d.Verdict != tc.verdict {
			t.Errorf("%s: exit %d, verdict %q; want %d, %q\n%s", name, j.Code, d.Verdict, tc.code, tc.verdict, j.Stdout)
		}
		r := run(t, root, false, nil, append([]string{"can-talk"}, tc.args...)...)
		switch tc.code {
		case 4:
			if head := "UNKNOWN: whether " + a + " and " + strings.Fields(tc.args[len(tc.args)-1])[0] + " can talk depends on what was not given (--sm-guid, --router)\n"; !strings.HasPrefix(r.Stdout, head) {
				t.Errorf("%s: text %q, want %q", name, r.Stdout, head)
			}
			if len(d.NotChecked) != 1 || !strings.Contains(d.NotChecked[0], tc.ifs) || !strings.HasSuffix(d.NotChecked[0], "the answer is yes") && !strings.Contains(d.NotChecked[0], "the answer is yes (") || len(d.Incomplete) != 1 || d.Incomplete[0].Kind != "not-checked" {
				t.Errorf("%s: not_checked %q, incomplete %+v; want one naming %q", name, d.NotChecked, d.Incomplete, tc.ifs)
			}
		case 1:
			if d.Unresolved == nil || d.Unresolved.Endpoint != "a" {
				t.Errorf("%s: unresolved %+v, want endpoint a", name, d.Unresolved)
			}
		}
	}
}
