package partitions

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
)

const (
	clusterConf  = "../../../../testdata/partitions/cluster.conf"
	mistakesConf = "../../../../testdata/partitions/mistakes.conf"
	rejectedConf = "../../../../testdata/partitions/rejected.conf"
	reconfAConf  = "../../../../testdata/partitions/reconf-a.conf"
	reconfBConf  = "../../../../testdata/partitions/reconf-b.conf"
	headNode     = "0x0002c90300001001"
	mgidConf     = "../../../../internal/partconf/testdata/lab/mgid.conf"
	routerConf   = "testdata/router.conf"
	selfConf     = "testdata/self.conf"
	// OpenSM's documented constructs (partconf's TestLabOpenSMLogs checks them against
	// OpenSM's log): a partition split over definitions of one name and key, a key
	// reused under another name, comments after mgid= values.
	splitConf        = "../../../../internal/partconf/testdata/lab/split.conf"
	reusedConf       = "../../../../internal/partconf/testdata/lab/reused.conf"
	mgidCommentsConf = "../../../../internal/partconf/testdata/lab/mgidcomments.conf"
	// uncertainConf: `;` right after an mgid= value makes OpenSM read bytes of its line
	// buffer no line wrote (partconf's lab_parse_test).
	uncertainConf = "testdata/uncertain.conf"
	caPort        = "0x0002c90300000301"
	routerPort    = "0x0002c90300000302"
)

// TestPartitions runs `ibkey partitions` on the sample configs and compares stdout and
// stderr with testdata/TestPartitions/*.golden (go test ./cmd/ibkey/internal/partitions
// -update rewrites them). can-talk --partitions has its own in cmd/ibkey.
func TestPartitions(t *testing.T) {
	cases := []struct {
		name string
		args []string
		Code int
	}{
		{"check_clean", []string{"partitions", "check", clusterConf}, 0},
		{"check_warnings", []string{"partitions", "check", mistakesConf}, 0},
		{"check_warnings_strict", []string{"partitions", "check", mistakesConf, "--strict", "--allow-both"}, 1},
		{"check_warnings_json", []string{"partitions", "check", mistakesConf, "-o", "json"}, 0},
		{"check_rejected", []string{"partitions", "check", rejectedConf}, 1},
		{"check_rejected_json", []string{"partitions", "check", rejectedConf, "-o", "json"}, 1},
		{"check_table_overflow", []string{"partitions", "check", clusterConf, "--table-size", "2"}, 0},
		{"show_table", []string{"partitions", "show", clusterConf, "--sm-guid", headNode, "-o", "table"}, 0},
		{"show_plain_extra_guid", []string{"partitions", "show", clusterConf, "0x0002c90300009999"}, 4}, // SELF without --sm-guid
		{"show_json", []string{"partitions", "show", clusterConf, "--sm-guid", headNode, "-o", "json"}, 0},
		{"show_mistakes_both", []string{"partitions", "show", mistakesConf, "--allow-both"}, 4}, // SELF (no Default line) without --sm-guid
		{"show_rejected", []string{"partitions", "show", rejectedConf}, 0},
		{"show_dropped", []string{"partitions", "show", clusterConf, "--table-size", "2"}, 0},
		{"show_previous", []string{"partitions", "show", reconfBConf, "--previous", reconfAConf, "--restarted"}, 0},
		{"show_previous_json", []string{"partitions", "show", reconfBConf, "--previous", reconfAConf, "--restarted", "-o", "json", "--indent"}, 0},
		{"show_previous_running", []string{"partitions", "show", reconfBConf, "--previous", reconfAConf}, 0},
		{"show_previous_chain", []string{"partitions", "show", reconfAConf, "--previous", reconfAConf, "--previous", reconfBConf}, 0},
		{"matrix_grid_table", []string{"partitions", "matrix", clusterConf, "--sm-guid", headNode, "-o", "table"}, 0},
		{"matrix_grid_plain", []string{"partitions", "matrix", mistakesConf}, 4},
		{"matrix_grid_json", []string{"partitions", "matrix", clusterConf, "-o", "json"}, 4},
		{"matrix_summary", []string{"partitions", "matrix", clusterConf, "--sm-guid", headNode, "--summary"}, 0},
		{"matrix_summary_nodefault", []string{"partitions", "matrix", mistakesConf, "--summary"}, 4},
		{"matrix_rejected", []string{"partitions", "matrix", rejectedConf}, 0},
		{"show_groups", []string{"partitions", "show", mgidConf}, 0},
		{"show_groups_json", []string{"partitions", "show", mgidConf, "-o", "json", "--indent"}, 0},
		{"show_router", []string{"partitions", "show", routerConf, "--router", routerPort}, 0},
		{"show_router_json", []string{"partitions", "show", routerConf, "--router", routerPort, "-o", "json", "--indent"}, 0},
		{"show_no_router", []string{"partitions", "show", routerConf}, 4},
		{"show_router_none", []string{"partitions", "show", routerConf, "--router", "none"}, 0},
		// No port GUID in the file: the tables section says so instead of an empty box.
		{"show_no_guids_table", []string{"partitions", "show", "testdata/noguids.conf", "-o", "table"}, 0},
		{"show_no_router_json", []string{"partitions", "show", routerConf, "-o", "json"}, 4},
		{"matrix_router", []string{"partitions", "matrix", routerConf, "--router", routerPort}, 0},
		{"check_split_strict", []string{"partitions", "check", splitConf, "--strict"}, 1},
		{"check_reused_strict", []string{"partitions", "check", reusedConf, "--strict"}, 1},
		{"check_mgid_comments", []string{"partitions", "check", mgidCommentsConf}, 0},
		{"check_uncertain", []string{"partitions", "check", uncertainConf}, 4},
		{"check_uncertain_json", []string{"partitions", "check", uncertainConf, "-o", "json"}, 4},
		{"show_uncertain", []string{"partitions", "show", uncertainConf}, 4},
		{"matrix_uncertain", []string{"partitions", "matrix", uncertainConf}, 4},
		{"matrix_uncertain_json", []string{"partitions", "matrix", "testdata/uncertain2.conf", "-o", "json"}, 4},
		// SELF (here the implicit Default line's) without --sm-guid: a pair whose answer
		// differs when one of them is OpenSM's port is not known (can-talk's rule).
		{"matrix_self", []string{"partitions", "matrix", selfConf}, 4},
		{"matrix_self_json", []string{"partitions", "matrix", selfConf, "-o", "json"}, 4},
		{"matrix_self_sm_guid", []string{"partitions", "matrix", selfConf, "--sm-guid", "0x0002c90300000001"}, 0},
		{"matrix_self_sm_elsewhere", []string{"partitions", "matrix", selfConf, "--sm-guid", "0x0002c90300000009"}, 0},
		{"matrix_self_summary", []string{"partitions", "matrix", selfConf, "--summary"}, 4},
		// ALL_CAS / ALL_ROUTERS without --router: a partition whose working depends on a
		// port's type is marked, and can_talk is null where the answer does.
		{"matrix_no_router", []string{"partitions", "matrix", routerConf}, 4},
		{"matrix_no_router_json", []string{"partitions", "matrix", routerConf, "-o", "json"}, 4},
		{"matrix_router_none", []string{"partitions", "matrix", routerConf, "--router", "none"}, 0},
		{"matrix_allow_both", []string{"partitions", "matrix", mistakesConf, "--allow-both", "--sm-guid", "0x0002c90300001011"}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runIbkey(t, false, nil, tc.args...)
			if r.Code != tc.Code {
				t.Fatalf("exit %d, want %d; stdout:\n%s\nstderr:\n%s", r.Code, tc.Code, r.Stdout, r.Stderr)
			}
			if strings.HasSuffix(tc.name, "json") && !json.Valid([]byte(r.Stdout)) {
				t.Errorf("not one JSON document:\n%s", r.Stdout)
			}
			golden.RequireEqual(t, "$ ibkey "+strings.Join(tc.args, " ")+"\n"+r.Stdout+"--- stderr\n"+r.Stderr)
		})
	}
}

func TestPartitionsErrors(t *testing.T) {
	cases := []struct {
		args   []string
		Code   int
		Stderr string
	}{
		{[]string{"partitions", "check", "/nonexistent.conf"}, 2, "ibkey: partitions file: open /nonexistent.conf: no such file or directory"},
		{[]string{"partitions", "check"}, 2, "ibkey: partitions check needs FILE (a partitions.conf, - for standard input), or --opensm-conf FILE naming OpenSM's"},
		{[]string{"partitions", "check", clusterConf, clusterConf}, 2, "accepts at most 1 arg(s), received 2"},
		{[]string{"partitions", "show"}, 2, "ibkey: partitions show needs FILE"},
		{[]string{"partitions", "matrix"}, 2, "ibkey: partitions matrix needs FILE"},
		{[]string{"partitions", "matrix", "--opensm-conf", "/nonexistent/opensm.conf"}, 2, "ibkey: --opensm-conf: open /nonexistent/opensm.conf: no such file or directory"},
		{[]string{"partitions", "show", clusterConf, "0xzz"}, 2, `invalid GUID "0xzz"`},
		{[]string{"partitions", "show", clusterConf, "--sm-guid", "0"}, 2, `invalid GUID "0": GUID 0 is not a port GUID`},
		{[]string{"partitions", "matrix", clusterConf, "--table-size", "0"}, 2, "invalid --table-size 0 (accepted: 1-65535"},
		{[]string{"partitions", "show", clusterConf, "--router", "0xzz"}, 2, `invalid GUID "0xzz"`},
		{[]string{"partitions", "show", clusterConf, "-o", "yaml"}, 2, `invalid output format "yaml" (accepted: table, plain, json)`},
	}
	for _, tc := range cases {
		r := runIbkey(t, false, nil, tc.args...)
		if r.Code != tc.Code || !strings.Contains(r.Stderr, tc.Stderr) {
			t.Errorf("ibkey %s: exit %d, stderr %q; want exit %d and %q", strings.Join(tc.args, " "), r.Code, r.Stderr, tc.Code, tc.Stderr)
		}
	}
}

func TestPartitionsCompletion(t *testing.T) {
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"__complete", "partitions", "show", clusterConf, ""}, []string{"0x0002c90300001011\tin storage", "0x0002c90300001021\tin storage, compute"}},
		{[]string{"__complete", "partitions", ""}, []string{"check", "show", "matrix"}},
	}
	for _, tc := range cases {
		r := runIbkey(t, false, nil, tc.args...)
		for _, w := range tc.want {
			if !strings.Contains(r.Stdout, w) {
				t.Errorf("ibkey %s: want %q in\n%s", strings.Join(tc.args, " "), w, r.Stdout)
			}
		}
	}
}

// TestUncertainSaysSo: when OpenSM's outcome cannot be predicted every subcommand says
// so on stderr, after its output, and exits 4; none prints a verdict as if it knew.
func TestUncertainSaysSo(t *testing.T) {
	for _, sub := range []string{"check", "show", "matrix"} {
		r := runIbkey(t, false, nil, "partitions", sub, uncertainConf)
		if r.Code != 4 || !strings.Contains(r.Stderr, "cannot be predicted") || !strings.Contains(r.Stderr, "uninitialised memory") {
			t.Errorf("partitions %s: exit %d, stderr %q; want exit 4 saying the outcome cannot be predicted", sub, r.Code, r.Stderr)
		}
		if strings.Contains(r.Stdout, "no problems found") {
			t.Errorf("partitions %s: an all-clear for a file whose outcome is unknown:\n%s", sub, r.Stdout)
		}
	}
	// A predictable file exits 0 and says nothing of the kind (with --sm-guid: SELF
	// in it would otherwise leave the SM's port's table not known, exit 4).
	r := runIbkey(t, false, nil, "partitions", "show", clusterConf, "--sm-guid", "0x0002c90300000009")
	if r.Code != 0 || strings.Contains(r.Stderr, "cannot be predicted") {
		t.Errorf("cluster.conf: exit %d, stderr %q", r.Code, r.Stderr)
	}
}

// TestRouterPorts: ALL_ROUTERS names a --router port and ALL_CAS does not (OpenSM
// osm_prtn_config.c picks ports by node type); without --router the same GUID is a CA
// port.
func TestRouterPorts(t *testing.T) {
	type doc struct {
		Ports []struct {
			GUID    string `json:"port_guid"`
			Type    string `json:"type"`
			Entries []struct {
				PKey string `json:"pkey"`
			} `json:"entries"`
		} `json:"ports"`
	}
	keys := func(args ...string) map[string]string {
		r := runIbkey(t, false, nil, append([]string{"partitions", "show", routerConf, "-o", "json"}, args...)...)
		// Without --router the ports' types are unknown, and the file gives a
		// router port other entries: shown as CA ports, exit 4.
		if want := map[bool]int{true: 4, false: 0}[len(args) == 0]; r.Code != want {
			t.Fatalf("%v: exit %d, want %d: %s", args, r.Code, want, r.Stderr)
		}
		var d doc
		if err := json.Unmarshal([]byte(r.Stdout), &d); err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, p := range d.Ports {
			var ks []string
			for _, e := range p.Entries {
				ks = append(ks, e.PKey)
			}
			out[p.GUID] = p.Type + " " + strings.Join(ks, ",")
		}
		return out
	}
	got := keys("--router", routerPort)
	want := map[string]string{caPort: "ca 0xffff,0x8010,0x8030", routerPort: "router 0xffff,0x8020,0x0030"}
	for g, w := range want {
		if got[g] != w {
			t.Errorf("--router %s: port %s: %q, want %q", routerPort, g, got[g], w)
		}
	}
	for _, args := range [][]string{nil, {"--router", "none"}} {
		got = keys(args...)
		if w := "ca 0xffff,0x8010,0x0030"; got[routerPort] != w {
			t.Errorf("%v: port %s: %q, want %q", args, routerPort, got[routerPort], w)
		}
	}
	if r := runIbkey(t, false, nil, "partitions", "show", routerConf, "--router", routerPort+",none"); r.Code != 2 || !strings.Contains(r.Stderr, "--router none") {
		t.Errorf("--router GUID,none: exit %d, %s", r.Code, r.Stderr)
	}
	// --fabric-file: the router ports of a saved sweep.
	f := fabric.Fabric{Nodes: []*fabric.Node{
		{GUID: 0x0002c90300000300, Type: check.NodeCA, NumPorts: 1, Ports: []*fabric.Port{{Num: 1, GUID: 0x0002c90300000301}}},
		{GUID: 0x0002c90300000303, Type: check.NodeRouter, NumPorts: 1, Ports: []*fabric.Port{{Num: 1, GUID: 0x0002c90300000302}}},
	}}
	var b bytes.Buffer
	if err := fabric.EncodeFabric(&b, &f); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "fabric.json")
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	got = keys("--fabric-file", file)
	for g, w := range want {
		if got[g] != w {
			t.Errorf("--fabric-file: port %s: %q, want %q", g, got[g], w)
		}
	}
}

// TestFlagsParse: the constructors bind flags and arguments into the options without
// running anything (runF).
func TestFlagsParse(t *testing.T) {
	f := &cmdutil.Factory{IOStreams: &cmdutil.IOStreams{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}, Getenv: func(string) string { return "" }, Output: "json"}
	var show *ShowOptions
	c := NewCmdShow(f, func(o *ShowOptions) error { show = o; return nil })
	c.SetArgs([]string{"a.conf", "0x1", "0x2", "--allow-both", "--sm-guid", "0x3", "--table-size", "64", "--router", "0x4,0x5", "--previous", "b.conf", "--previous", "c,d.conf", "--restarted"})
	if err := c.Execute(); err != nil {
		t.Fatal(err)
	}
	if show.File != "a.conf" || strings.Join(show.GUIDs, " ") != "0x1 0x2" || !show.OpenSM.AllowBoth || show.OpenSM.SMGUID != "0x3" ||
		show.OpenSM.TableSize != 64 || strings.Join(show.Types.Routers, " ") != "0x4 0x5" || strings.Join(show.Previous, " ") != "b.conf c,d.conf" || !show.Restarted || show.Format != cmdutil.FormatJSON {
		t.Errorf("show options: %+v", show)
	}
	var check *CheckOptions
	c = NewCmdCheck(f, func(o *CheckOptions) error { check = o; return nil })
	c.SetArgs([]string{"a.conf", "--strict"})
	if err := c.Execute(); err != nil {
		t.Fatal(err)
	}
	if check.File != "a.conf" || !check.Strict || check.OpenSM.TableSize != 128 || check.ColorOut {
		t.Errorf("check options: %+v", check)
	}
	var matrix *MatrixOptions
	c = NewCmdMatrix(f, func(o *MatrixOptions) error { matrix = o; return nil })
	c.SetArgs([]string{"a.conf", "--summary"})
	if err := c.Execute(); err != nil {
		t.Fatal(err)
	}
	if matrix.File != "a.conf" || !matrix.Summary {
		t.Errorf("matrix options: %+v", matrix)
	}
}

// TestRejectedHeadlineColour: on a terminal the rejection headline is red and bold
// (lipgloss, no hand-written escape codes); NO_COLOR, --no-color and plain output
// have no escape sequence at all.
func TestRejectedHeadlineColour(t *testing.T) {
	r := runIbkey(t, true, nil, "partitions", "check", rejectedConf)
	first, _, _ := strings.Cut(r.Stdout, "\n")
	if r.Code != 1 || !strings.HasPrefix(first, "\x1b[1;31m") || !strings.Contains(r.Stdout, "[file-rejected]\x1b[m\n") {
		t.Errorf("terminal: exit %d, first line %q; want it styled", r.Code, first)
	}
	if strings.Count(r.Stdout, "\x1b[") != 2 {
		t.Errorf("terminal: only the headline is styled, got:\n%q", r.Stdout)
	}
	for _, tc := range []struct {
		tty  bool
		env  map[string]string
		args []string
	}{
		{true, map[string]string{"NO_COLOR": "1"}, nil},
		{true, nil, []string{"--no-color"}},
		{true, nil, []string{"-o", "plain"}},
		{false, nil, nil},
	} {
		r := runIbkey(t, tc.tty, tc.env, append([]string{"partitions", "check", rejectedConf}, tc.args...)...)
		if strings.Contains(r.Stdout, "\x1b") {
			t.Errorf("tty %v env %v %v: escape sequences in\n%q", tc.tty, tc.env, tc.args, r.Stdout)
		}
	}
}

// TestShowJSONIncomplete: show -o json says in the document what its exit 4 rests on
// (kind not-checked): SELF without --sm-guid, an outcome OpenSM makes unpredictable;
// with --sm-guid on a predictable file there is none and the exit is 0.
func TestShowJSONIncomplete(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{clusterConf}, 4, "for the port OpenSM runs on"},
		{[]string{uncertainConf, "--sm-guid", "0x0002c90300000211"}, 4, "cannot be predicted"},
		{[]string{clusterConf, "--sm-guid", "0x0002c90300000009"}, 0, ""},
	} {
		r := runIbkey(t, false, nil, append([]string{"partitions", "show", "-o", "json"}, c.args...)...)
		var d struct {
			Incomplete []struct{ Kind, Message string }
		}
		if err := json.Unmarshal([]byte(r.Stdout), &d); err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		got := ""
		for _, in := range d.Incomplete {
			got += in.Kind + ": " + in.Message + "\n"
		}
		if r.Code != c.code || (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%v: exit %d, incomplete %q; want exit %d and %q", c.args, r.Code, got, c.code, c.want)
		}
	}
}

// TestPartitionsOpenSMConfFile: without FILE, --opensm-conf's partition_config_file is
// read (and said), an empty one is OpenSM's own default partition, and one that is not
// here is bad usage naming it. (TestLabPartitionsOpenSMConf checks the tables against
// OpenSM.)
func TestPartitionsOpenSMConfFile(t *testing.T) {
	dir := t.TempDir()
	conf := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	parts := conf("partitions.conf", "Default=0x7fff, ipoib : ALL=full ;\na=0x0001 : 0x2=both ;\n")
	named := conf("named.conf", "partition_config_file "+parts+"\n")
	empty := conf("empty.conf", "partition_config_file\n")
	missing := conf("missing.conf", "partition_config_file "+filepath.Join(dir, "gone.conf")+"\n")
	relative := conf("relative.conf", "partition_config_file partitions.conf\n")
	self := conf("self.conf", "Default=0x7fff : ALL=full, SELF=full ;\nm=0x0006 : SELF=full, 0x3=full ;\n")
	guid := conf("guid.conf", "guid 0x5\n")
	badGUID := conf("badguid.conf", "guid 0x5\nguid zz\n")
	for _, tc := range []struct {
		args           []string
		code           int
		stdout, stderr string
	}{
		{[]string{"check", "--opensm-conf", named}, 0, parts + ":2:", "note: reading " + parts + ", the partition_config_file of " + named},
		{[]string{"matrix", "--opensm-conf", named, "-o", "plain"}, 0, "0x0000000000000002", "note: reading " + parts},
		{[]string{"show", "--opensm-conf", named, "-o", "plain"}, 0, "0x0000000000000002", "note: reading " + parts},
		{[]string{"check", "--opensm-conf", empty}, 0, "(no file): no problems found", "note: " + empty + " sets partition_config_file empty: OpenSM reads no partitions.conf and programs its own Default=0x7fff, ipoib : ALL=full"},
		{[]string{"check", "--opensm-conf", missing}, 2, "", "ibkey: " + missing + " names partition_config_file " + filepath.Join(dir, "gone.conf") + ", which is not here: give FILE"},
		// OpenSM reads a relative path from its own working directory (no chdir).
		{[]string{"check", "--opensm-conf", relative}, 2, "", "ibkey: " + relative + " names partition_config_file partitions.conf, relative to OpenSM's working directory, which ibkey cannot see: give FILE"},
		// FILE given: the conf's partition_config_file is not read.
		{[]string{"check", parts, "--opensm-conf", missing}, 0, "both-without-W", ""},
		// guid is SELF's port, shown with SELF's entries.
		{[]string{"show", self, "--opensm-conf", guid, "-o", "plain"}, 0, "0x0000000000000005", ""},
		{[]string{"show", self, "--opensm-conf", guid, "--sm-guid", "0x6", "-o", "plain"}, 0, "0x0000000000000005",
			"warning: --sm-guid 0x6 is replaced by guid 0x0000000000000005 of " + guid + ", the port OpenSM binds to"},
		{[]string{"show", self, "--opensm-conf", badGUID, "-o", "plain"}, 0, "0x0000000000000005",
			`badguid.conf:2: guid "zz" is not a number OpenSM reads: it logs a parsing error and keeps the port it had (0x0000000000000005)`},
	} {
		r := runIbkey(t, false, nil, append([]string{"partitions"}, tc.args...)...)
		if r.Code != tc.code || !strings.Contains(r.Stdout, tc.stdout) || !strings.Contains(r.Stderr, tc.stderr) {
			t.Errorf("ibkey partitions %s: exit %d (want %d)\n%s--- stderr\n%s", strings.Join(tc.args, " "), r.Code, tc.code, r.Stdout, r.Stderr)
		}
	}
}

// TestFabricFileTableSizes: with --fabric-file, a port the sweep holds has its node's
// PartitionCap as its table length (OpenSM fills it up to NodeInfo PartitionCap,
// osm_pkey_mgr.c pkey_mgr_get_physp_max_pkeys), not --table-size's default: show
// drops what does not fit there and says the port's length, matrix and can-talk do
// not count a dropped key. A port the sweep does not hold keeps --table-size.
func TestFabricFileTableSizes(t *testing.T) {
	const small, big, other = "0x0002c90300000401", "0x0002c90300000411", "0x0002c90300000421"
	conf := filepath.Join(t.TempDir(), "p.conf")
	// Each port gets 0xffff, 0x8001 and 0x8002: three entries.
	text := "Default=0x7fff : ALL=full ;\na=0x0001 : ALL=full ;\nb=0x0002 : " + small + "=full, " + big + "=full, " + other + "=full ;\n"
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cap := range []int{2, 3} {
		f := fabric.Fabric{Nodes: []*fabric.Node{
			{GUID: 0x0002c90300000400, Type: check.NodeCA, NumPorts: 1, PartitionCap: cap, Ports: []*fabric.Port{{Num: 1, GUID: 0x0002c90300000401}}},
			{GUID: 0x0002c90300000410, Type: check.NodeCA, NumPorts: 1, PartitionCap: 128, Ports: []*fabric.Port{{Num: 1, GUID: 0x0002c90300000411}}},
		}}
		var b bytes.Buffer
		if err := fabric.EncodeFabric(&b, &f); err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(t.TempDir(), "fabric.json")
		if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		r := runIbkey(t, false, nil, "partitions", "show", conf, "--sm-guid", big, "--fabric-file", file, "--table-size", "64", "-o", "json")
		if r.Code != 0 {
			t.Fatalf("cap %d: show: exit %d: %s", cap, r.Code, r.Stderr)
		}
		var doc struct {
			Ports []struct {
				GUID      string `json:"port_guid"`
				TableSize int    `json:"table_size"`
				Entries   []struct {
					PKey string `json:"pkey"`
				} `json:"entries"`
				Dropped []struct {
					PKey string `json:"pkey"`
				} `json:"dropped"`
			} `json:"ports"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{small: fmt.Sprintf("%d: 3-%d", cap, 3-cap), big: "128: 3-0", other: "64: 3-0"}
		for _, p := range doc.Ports {
			if got := fmt.Sprintf("%d: %d-%d", p.TableSize, len(p.Entries)+len(p.Dropped), len(p.Dropped)); got != want[p.GUID] {
				t.Errorf("cap %d: port %s: table size: entries-dropped %q, want %q", cap, p.GUID, got, want[p.GUID])
			}
			delete(want, p.GUID)
		}
		if len(want) > 0 {
			t.Errorf("cap %d: ports not shown: %v", cap, want)
		}
		// The matrix: small and big talk in 0x0002 only when small's table holds it.
		r = runIbkey(t, false, nil, "partitions", "matrix", conf, "--sm-guid", big, "--fabric-file", file, "-o", "json")
		var m struct {
			Pairs []struct {
				A, B       string
				Partitions []string `json:"partitions"`
			} `json:"pairs"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &m); err != nil || r.Code != 0 {
			t.Fatalf("cap %d: matrix: exit %d, %v: %s", cap, r.Code, err, r.Stderr)
		}
		for _, pr := range m.Pairs {
			if pr.A == small && pr.B == big {
				if got, in := strings.Join(pr.Partitions, ","), cap == 3; strings.Contains(got, "0x0002") != in {
					t.Errorf("cap %d: matrix: %s and %s talk in %s", cap, small, big, got)
				}
			}
		}
	}
}

// TestPreviousTypeAndSelf: with --previous, the indexes shown depend on what the
// configurations applied before gave a port, so a port type (ALL_CAS) or SELF that
// only an earlier file has still decides them: without --router or --sm-guid, show
// names the port and exits 4 (as it does when FILE has them); with them, 0. A file
// before that OpenSM reads unpredictably is exit 4 too.
func TestPreviousTypeAndSelf(t *testing.T) {
	const a, b = "0x0002c90300000001", "0x0002c90300000002"
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	cur := write("cur.conf", "Default=0x7fff, ipoib : ALL=full;\nb=0x20 : "+a+"=full, "+b+"=full;\n")
	for _, tc := range []struct {
		name, prev string
		given      []string // the flag that says what the earlier file depends on
		port       string   // the port whose table it decides
	}{
		{"ALL_CAS", "Default=0x7fff, ipoib : ALL=full;\na=0x10 : ALL_CAS=full;\nb=0x20 : " + a + "=full, " + b + "=full;\n", []string{"--router", b}, b},
		{"SELF", "Default=0x7fff, ipoib : ALL=full;\ns=0x10 : SELF=full;\nb=0x20 : " + a + "=full, " + b + "=full;\n", []string{"--sm-guid", a}, a},
	} {
		prev := write(tc.name+".conf", tc.prev)
		for _, restarted := range []bool{false, true} {
			args := []string{"partitions", "show", cur, "--previous", prev, "-o", "json"}
			if restarted {
				args = append(args, "--restarted")
			}
			r := runIbkey(t, false, nil, args...)
			if r.Code != 4 || !strings.Contains(r.Stderr, tc.port) {
				t.Errorf("%s, restarted %v: exit %d, want 4 naming %s: %s", tc.name, restarted, r.Code, tc.port, r.Stderr)
			}
			var doc struct {
				Incomplete []struct{ Message string } `json:"incomplete"`
			}
			if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || len(doc.Incomplete) == 0 {
				t.Errorf("%s, restarted %v: incomplete %v (%v)", tc.name, restarted, doc.Incomplete, err)
			}
			if r := runIbkey(t, false, nil, append(args, tc.given...)...); r.Code != 0 {
				t.Errorf("%s, restarted %v, %v: exit %d, want 0: %s", tc.name, restarted, tc.given, r.Code, r.Stderr)
			}
		}
	}
	// A file before whose reading OpenSM makes unpredictable (partconf's lab case
	// "semicolon right after mgid") leaves tables FILE's keys keep their indexes in.
	prev := write("uncertain.conf", "Default=0x7fff : ALL=full;\np=0x10 : "+a+"=full, mgid=ff12::5;\n")
	if r := runIbkey(t, false, nil, "partitions", "show", cur, "--previous", prev, "--sm-guid", a, "--router", "none"); r.Code != 4 || !strings.Contains(r.Stderr, "uncertain.conf: what OpenSM 3.3.23 does with this file cannot be predicted") {
		t.Errorf("an unpredictable file before: exit %d, want 4 naming it: %s", r.Code, r.Stderr)
	}
}

// TestShowNotInFileNote: a port the file does not name by GUID gets what the keywords
// that apply to its type give it, and, as the SM's port, what SELF gives it: the
// note on its first row says which (it said "only what ALL/ALL_CAS give it" above a
// SELF entry, and for a switch's port 0).
func TestShowNotInFileNote(t *testing.T) {
	const sm, sw = "0x0002c90300000501", "0x0002c90300000511"
	conf := filepath.Join(t.TempDir(), "p.conf")
	if err := os.WriteFile(conf, []byte("Default=0x7fff, ipoib : ALL=full;\nm=0x10 : SELF=full, ALL_SWITCHES=full;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := fabric.Fabric{Nodes: []*fabric.Node{
		{GUID: 0x0002c90300000500, Type: check.NodeCA, NumPorts: 1, PartitionCap: 128, Ports: []*fabric.Port{{Num: 1, GUID: 0x0002c90300000501}}},
		{GUID: 0x0002c90300000511, Type: check.NodeSwitch, NumPorts: 8, PartitionCap: 32, Ports: []*fabric.Port{{Num: 0, GUID: 0x0002c90300000511}}},
	}}
	var b bytes.Buffer
	if err := fabric.EncodeFabric(&b, &f); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "fabric.json")
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runIbkey(t, false, nil, "partitions", "show", conf, sw, "--sm-guid", sm, "--fabric-file", file, "-o", "plain")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	for guid, want := range map[string]string{sm: "only_what_ALL/ALL_CAS_and_SELF_give_it", sw: "only_what_ALL/ALL_SWITCHES_give_it"} {
		found := false
		for _, line := range strings.Split(r.Stdout, "\n") {
			if strings.HasPrefix(line, guid+" ") && strings.Contains(line, " 0 ") {
				found = strings.Contains(line, want)
				if !found {
					t.Errorf("%s: first row %q does not say %s", guid, line, want)
				}
				break
			}
		}
		if !found {
			t.Logf("output:\n%s", r.Stdout)
		}
	}
}

// TestPartitionsQoS: OpenSM with QoS (-Q, qos TRUE in opensm.conf) keeps a partition's
// sl= (partition_create, osm_prtn_config.c; TestLabGroupValues in the lab), so check
// does not warn of it and show gives the IPoIB broadcast group that SL. The file's
// qos replaces --qos, as its allow_both_pkeys replaces --allow-both.
func TestPartitionsQoS(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	parts := write("p.conf", "Default=0x7fff, ipoib : ALL=full ;\na=0x0010, ipoib, sl=3 : ALL=full ;\n")
	on, off := write("on.conf", "qos TRUE\n"), write("off.conf", "qos FALSE\n")
	for _, tc := range []struct {
		flags []string
		qos   bool
	}{
		{nil, false},
		{[]string{"--qos"}, true},
		{[]string{"--opensm-conf", on}, true},
		{[]string{"--opensm-conf", off, "--qos"}, false},
	} {
		r := runIbkey(t, false, nil, append([]string{"partitions", "check", parts}, tc.flags...)...)
		if r.Code != 0 || strings.Contains(r.Stdout, "[sl-without-qos]") == tc.qos {
			t.Errorf("check %v: exit %d\n%s", tc.flags, r.Code, r.Stdout)
		}
		r = runIbkey(t, false, nil, append([]string{"partitions", "show", parts, "-o", "plain"}, tc.flags...)...)
		if head, _, _ := strings.Cut(r.Stdout, "\n"); strings.Contains(head, "OpenSM with -Q, without -W") != tc.qos || strings.Contains(head, "without -W and") {
			t.Errorf("show %v: header %q", tc.flags, head)
		}
		r = runIbkey(t, false, nil, append([]string{"partitions", "show", parts, "-o", "json"}, tc.flags...)...)
		type part struct {
			Key    string `json:"key"`
			Groups []struct {
				SL *int `json:"sl"`
			} `json:"groups"`
		}
		var doc struct {
			QoS        *bool  `json:"qos"`
			Partitions []part `json:"partitions"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || r.Code != 0 {
			t.Fatalf("show %v: exit %d, %v\n%s%s", tc.flags, r.Code, err, r.Stdout, r.Stderr)
		}
		want := 0
		if tc.qos {
			want = 3
		}
		i := slices.IndexFunc(doc.Partitions, func(p part) bool { return p.Key == "0x0010" })
		if doc.QoS == nil || *doc.QoS != tc.qos || i < 0 || len(doc.Partitions[i].Groups) != 1 || doc.Partitions[i].Groups[0].SL == nil || *doc.Partitions[i].Groups[0].SL != want {
			t.Errorf("show %v: qos %v, want %v; partition 0x0010's broadcast group SL, want %d:\n%s", tc.flags, doc.QoS, tc.qos, want, r.Stdout)
		}
	}
}

// TestShowGroupSLWithQoS: without QoS OpenSM sets a definition's sl= to 0, and with it
// the SL of the groups that inherit it; with qos TRUE in its opensm.conf it keeps it
// (osm_prtn_config.c partition_create: only !opt.qos overrides the SL). An mgid= line's
// own sl= is kept either way. show --opensm-conf says what OpenSM with that file does.
func TestShowGroupSLWithQoS(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "p.conf")
	text := "Default=0x7fff, ipoib, sl=3 : ALL=full;\np=0x10, sl=5 :\nmgid=ff12:1234::1\nmgid=ff12:1234::2, sl=7\n, ALL=full;\n"
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, qos := range []string{"", "qos TRUE\n", "qos FALSE\n"} {
		osm := filepath.Join(dir, "opensm.conf")
		if err := os.WriteFile(osm, []byte(qos), 0o644); err != nil {
			t.Fatal(err)
		}
		r := runIbkey(t, false, nil, "partitions", "show", conf, "--opensm-conf", osm, "--sm-guid", "0x1", "-o", "json")
		if r.Code != 0 {
			t.Fatalf("%q: exit %d: %s", qos, r.Code, r.Stderr)
		}
		var doc struct {
			Partitions []struct {
				Groups []struct {
					MGID string `json:"mgid"`
					SL   int    `json:"sl"`
				} `json:"groups"`
			} `json:"partitions"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		for _, p := range doc.Partitions {
			for _, g := range p.Groups {
				got[g.MGID] = g.SL
			}
		}
		want := map[string]int{"ff12:401b:ffff::ffff:ffff": 0, "ff12:1234::1": 0, "ff12:1234::2": 7}
		if qos == "qos TRUE\n" {
			want["ff12:401b:ffff::ffff:ffff"], want["ff12:1234::1"] = 3, 5
		}
		if !maps.Equal(got, want) {
			t.Errorf("%q: group SLs %v, want %v", qos, got, want)
		}
	}
}
