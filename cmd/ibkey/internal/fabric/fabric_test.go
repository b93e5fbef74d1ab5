package fabric

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/partconf"
)

// The fabric commands on committed sweeps (--fabric-file): small.json is small.net after
// OpenSM applied testdata/fabric/partitions.conf, small-changed.json the same with
// Switch1 port 2's table changed (TestLabFabricFiles records and checks both).
const (
	fabricTestdata = "../../testdata/fabric"
	smallFabric    = fabricTestdata + "/small.json"
	changedFabric  = fabricTestdata + "/small-changed.json"
	// enforcingFabric is small-changed.json with the enforcement bits OpenSM sets on a
	// real switch's ports facing CAs (ibsim reports them off).
	enforcingFabric = fabricTestdata + "/small-changed-enforcing.json"
	fabricConf      = fabricTestdata + "/partitions.conf"
	mlx5            = "../../../../testdata/sysfs/mlx5"
	nodeNameMap     = fabricTestdata + "/node-name-map"
)

func TestFabricGolden(t *testing.T) {
	cases := []struct {
		name string
		args []string
		Code int
	}{
		{"discover_plain", []string{"fabric", "discover", "--fabric-file", smallFabric}, 0},
		{"discover_table", []string{"fabric", "discover", "--fabric-file", smallFabric, "-o", "table"}, 0},
		{"discover_json", []string{"fabric", "discover", "--fabric-file", smallFabric, "-o", "json", "--indent"}, 0},
		{"discover_json_default", []string{"fabric", "discover", "--fabric-file", smallFabric, "-o", "json"}, 0},
		{"pkeys_plain", []string{"fabric", "pkeys", "--fabric-file", smallFabric}, 0},
		{"pkeys_json", []string{"fabric", "pkeys", "--fabric-file", changedFabric, "-o", "json"}, 0},
		{"pkeys_key_plain", []string{"fabric", "pkeys", "--fabric-file", smallFabric, "--key", "0x0002"}, 0},
		{"pkeys_key_json", []string{"fabric", "pkeys", "--fabric-file", smallFabric, "--key", "80:04", "-o", "json"}, 0},
		{"pkeys_key_none", []string{"fabric", "pkeys", "--fabric-file", smallFabric, "--key", "0x0009"}, 1},
		{"check_clean_plain", []string{"fabric", "check", "--fabric-file", smallFabric, "--partitions", fabricConf, "--ignore", "enforcement-off"}, 0},
		{"check_warnings_plain", []string{"fabric", "check", "--fabric-file", smallFabric}, 0},
		{"check_strict", []string{"fabric", "check", "--fabric-file", smallFabric, "--strict"}, 1},
		{"check_changed_plain", []string{"fabric", "check", "--fabric-file", changedFabric, "--partitions", fabricConf, "--ignore", "enforcement-off"}, 0},
		{"check_enforcing_partitions_plain", []string{"fabric", "check", "--fabric-file", enforcingFabric, "--partitions", fabricConf}, 1},
		{"check_changed_json", []string{"fabric", "check", "--fabric-file", changedFabric, "--ignore", "enforcement-off", "-o", "json"}, 0},
		{"check_enforcing_plain", []string{"fabric", "check", "--fabric-file", enforcingFabric}, 1},
		{"check_enforcing_json", []string{"fabric", "check", "--fabric-file", enforcingFabric, "-o", "json"}, 1},
		{"diff_plain", []string{"fabric", "diff", smallFabric, changedFabric}, 1},
		{"diff_json", []string{"fabric", "diff", smallFabric, changedFabric, "-o", "json"}, 1},
		{"diff_same", []string{"fabric", "diff", smallFabric, smallFabric}, 0},
		// --node-name-map: names from the map in every output but the fabric file.
		{"names_discover_plain", []string{"fabric", "discover", "--fabric-file", smallFabric, "--node-name-map", nodeNameMap}, 0},
		{"names_pkeys_json", []string{"fabric", "pkeys", "--fabric-file", smallFabric, "--node-name-map", nodeNameMap, "-o", "json"}, 0},
		{"names_pkeys_key_plain", []string{"fabric", "pkeys", "--fabric-file", smallFabric, "--key", "0x0002", "--node-name-map", nodeNameMap}, 0},
		{"names_check_changed_plain", []string{"fabric", "check", "--fabric-file", changedFabric, "--ignore", "enforcement-off", "--node-name-map", nodeNameMap}, 0},
		{"names_diff_json", []string{"fabric", "diff", smallFabric, changedFabric, "--node-name-map", nodeNameMap, "-o", "json"}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runIbkey(t, false, nil, tc.args...)
			if r.Code != tc.Code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", r.Code, tc.Code, r.Stderr)
			}
			golden.RequireEqual(t, "$ ibkey "+strings.Join(tc.args, " ")+"\n"+r.Stdout+"--- stderr\n"+r.Stderr)
		})
	}
}

func TestFabricErrors(t *testing.T) {
	bad := writeTemp(t, "bad.json", `{"format":"ibkey-fabric","version":3}`)
	empty := writeTemp(t, "empty.json", `{"format":"ibkey-fabric","version":2}`)
	cases := []struct {
		args   []string
		Code   int
		Stderr string
	}{
		{[]string{"fabric", "pkeys", "--fabric-file", "nonexistent.json"}, 2, "ibkey: --fabric-file: open nonexistent.json: no such file or directory"},
		{[]string{"fabric", "check", "--fabric-file", fabricConf}, 2, "ibkey: --fabric-file ../../testdata/fabric/partitions.conf: not JSON"},
		{[]string{"fabric", "discover", "--fabric-file", bad}, 2, "version 3, this ibkey reads versions 1 to 2"},
		{[]string{"fabric", "diff", smallFabric, bad}, 2, "version 3, this ibkey reads versions 1 to 2"},
		// diff's files are arguments: the errors name the command, not --fabric-file.
		{[]string{"fabric", "diff", "nonexistent.json"}, 2, "ibkey: fabric diff: open nonexistent.json: no such file or directory"},
		{[]string{"fabric", "diff", smallFabric, fabricConf}, 2, "ibkey: fabric diff ../../testdata/fabric/partitions.conf: not JSON"},
		{[]string{"fabric", "diff", "--timeout", "-1s", smallFabric, smallFabric}, 2, "ibkey: invalid --timeout -1s"},
		{[]string{"fabric", "check", "--fabric-file", empty}, 2, "no nodes"},
		{[]string{"fabric", "diff"}, 2, "accepts between 1 and 2 arg(s)"},
		{[]string{"fabric", "pkeys", "--fabric-file", smallFabric, "--key", "0x8000"}, 2, "key 0 is an empty table entry, not a partition"},
		{[]string{"fabric", "pkeys", "--fabric-file", smallFabric, "--key", "zz"}, 2, `invalid P_Key "zz"`},
		{[]string{"fabric", "check", "--fabric-file", smallFabric, "--ignore", "nope"}, 2, `invalid --ignore "nope" (accepted: hca-key-not-on-switch`},
		{[]string{"fabric", "check", "--fabric-file", smallFabric, "--partitions", "nonexistent.conf"}, 2, "partitions file: open nonexistent.conf"},
		{[]string{"fabric", "discover", "--timeout", "0s"}, 2, "invalid --timeout 0s"},
		{[]string{"--sysfs", mlx5, "fabric", "discover"}, 3, "is ib_umad loaded?"},
		// A mistyped subcommand, alone or before the flags of the one meant.
		{[]string{"fabric", "chek"}, 2, `ibkey: unknown command "chek" for "ibkey fabric"; did you mean "check"? (commands: check, diff, discover, pkeys)`},
		{[]string{"fabric", "discovr", "--ibsim", "--no-tables"}, 2, `unknown command "discovr" for "ibkey fabric"; did you mean "discover"?`},
		{[]string{"fabric", "pkey", "--fabric-file", smallFabric, "--key", "1"}, 2, `unknown command "pkey" for "ibkey fabric"; did you mean "pkeys"?`},
	}
	for _, tc := range cases {
		r := runIbkey(t, false, nil, tc.args...)
		if r.Code != tc.Code || !strings.Contains(r.Stderr, tc.Stderr) {
			t.Errorf("ibkey %s: exit %d, stderr %q; want exit %d and %q", strings.Join(tc.args, " "), r.Code, r.Stderr, tc.Code, tc.Stderr)
		}
		if tc.Code == 2 && strings.Count(strings.TrimSpace(r.Stderr), "\n") > 0 {
			t.Errorf("ibkey %s: a usage error on several lines: %q", strings.Join(tc.args, " "), r.Stderr)
		}
	}
}

// TestNoTablesIsNotAnAllClear: a sweep saved with --no-tables holds no P_Key table, so
// check and pkeys cannot answer from it: they say so and exit 4, never "no problems"
// with exit 0 or "no port holds it" with exit 1. discover, which needs no table, is
// complete.
func TestNoTablesIsNotAnAllClear(t *testing.T) {
	f, err := cmdutil.ReadFabricFile(smallFabric)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			p.PKeys, p.PKeysError = nil, ""
		}
	}
	var b strings.Builder
	if err := fabric.EncodeFabric(&b, f); err != nil {
		t.Fatal(err)
	}
	file := writeTemp(t, "no-tables.json", b.String())
	for _, tc := range []struct {
		args   []string
		Code   int
		Stderr string
	}{
		{[]string{"fabric", "check", "--fabric-file", file}, 4, "16 P_Key tables not in the sweep (made with --no-tables)"},
		{[]string{"fabric", "pkeys", "--fabric-file", file, "--key", "0x0002"}, 4, "16 P_Key tables not in the sweep"},
		{[]string{"fabric", "pkeys", "--fabric-file", file}, 4, "16 P_Key tables not in the sweep"},
		{[]string{"fabric", "discover", "--fabric-file", file}, 0, ""},
	} {
		r := runIbkey(t, false, nil, tc.args...)
		if r.Code != tc.Code || !strings.Contains(r.Stderr, tc.Stderr) || strings.Contains(r.Stdout, "no problems found (") {
			t.Errorf("ibkey %s: exit %d, stderr %q; want exit %d and %q\n%s", strings.Join(tc.args, " "), r.Code, r.Stderr, tc.Code, tc.Stderr, r.Stdout)
		}
	}
}

// TestCheckUncertainPartitions: when what OpenSM does with the --partitions file cannot
// be predicted, fabric check does not assert its comparison: stderr says so, exit 4;
// an error the file does not decide (hca-key-not-on-switch) is definite: exit 1, and
// stderr still says the comparison is no verdict (it exited 4 before).
func TestCheckUncertainPartitions(t *testing.T) {
	// `;` right after an mgid= value: OpenSM reads bytes of its line buffer no line wrote.
	conf := writeTemp(t, "uncertain.conf", "Default=0x7fff : ALL=full;\np=0x10 : 0x0002c90300000211=full, mgid=ff12::5;\n")
	r := runIbkey(t, false, nil, "fabric", "check", "--fabric-file", smallFabric, "--partitions", conf, "--ignore", "enforcement-off")
	if r.Code != 4 || !strings.Contains(r.Stderr, "cannot be predicted") || !strings.Contains(r.Stdout, "[partitions-extra-key]") {
		t.Errorf("exit %d, stderr %q; want exit 4 saying OpenSM's outcome cannot be predicted", r.Code, r.Stderr)
	}
	r = runIbkey(t, false, nil, "fabric", "check", "--fabric-file", enforcingFabric, "--partitions", conf, "--ignore", "enforcement-off")
	if r.Code != 1 || !strings.Contains(r.Stderr, "cannot be predicted") || !strings.Contains(r.Stdout, "[hca-key-not-on-switch]") {
		t.Errorf("a definite error: exit %d, stderr %q; want exit 1, stderr saying OpenSM's outcome cannot be predicted\n%s", r.Code, r.Stderr, r.Stdout)
	}
	r = runIbkey(t, false, nil, "fabric", "check", "--fabric-file", smallFabric, "--partitions", fabricConf, "--ignore", "enforcement-off")
	if r.Code != 0 || strings.Contains(r.Stderr, "cannot be predicted") {
		t.Errorf("a predictable file: exit %d, stderr %q", r.Code, r.Stderr)
	}
}

// TestCheckOpenSMConf: --opensm-conf replaces hand-given assumptions with what OpenSM
// reads (osm_subnet.c): part_enforce off is no finding, partition_config_file is the
// default --partitions, values OpenSM reads differently are warned about, and the
// file is read bounded (a device is refused, exit 2).
func TestCheckOpenSMConf(t *testing.T) {
	abs, err := filepath.Abs(fabricConf)
	if err != nil {
		t.Fatal(err)
	}
	off := writeTemp(t, "off.conf", "# opensm.conf\npart_enforce off\npartition_config_file "+abs+"\n")
	r := runIbkey(t, false, nil, "fabric", "check", "--fabric-file", smallFabric, "--opensm-conf", off)
	if r.Code != 0 || strings.Contains(r.Stdout, fabric.RuleEnforcementOff) || !strings.Contains(r.Stderr, "comparing with "+abs) {
		t.Errorf("part_enforce off: exit %d\n%s--- stderr\n%s", r.Code, r.Stdout, r.Stderr)
	}
	r = runIbkey(t, false, nil, "fabric", "check", "--fabric-file", smallFabric, "--partitions", fabricConf)
	if !strings.Contains(r.Stdout, fabric.RuleEnforcementOff) {
		t.Errorf("without --opensm-conf the audit assumes enforcement on and reports it off:\n%s", r.Stdout)
	}
	// part_enforce in: OpenSM sets inbound enforcement alone on the switch ports
	// facing CAs (osm_pkey_mgr.c); outbound off is what it was told.
	in := writeTemp(t, "in.conf", "part_enforce in\npartition_config_file "+abs+"\n")
	r = runIbkey(t, false, nil, "fabric", "check", "--fabric-file", smallFabric, "--opensm-conf", in)
	if !strings.Contains(r.Stdout, "partition enforcement is off (inbound) on") || strings.Contains(r.Stdout, "outbound) on") {
		t.Errorf("part_enforce in: exit %d\n%s", r.Code, r.Stdout)
	}
	odd := writeTemp(t, "odd.conf", "allow_both_pkeys yes\npartition_config_file /nonexistent/partitions.conf\n")
	r = runIbkey(t, false, nil, "fabric", "check", "--fabric-file", smallFabric, "--opensm-conf", odd, "--ignore", "enforcement-off")
	// The file the conf names is not here: not compared is not checked (exit 4, and
	// the summary is no all-clear), never exit 0.
	if r.Code != 4 || !strings.Contains(r.Stderr, "anything but TRUE as FALSE") || !strings.Contains(r.Stderr, "not compared with a partitions.conf") ||
		!strings.Contains(r.Stdout, "the audit is incomplete") {
		t.Errorf("odd opensm.conf: exit %d\n%s--- stderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	r = runIbkey(t, false, nil, "fabric", "check", "--fabric-file", smallFabric, "--opensm-conf", odd, "--ignore", "enforcement-off", "-o", "json")
	if r.Code != 4 || !strings.Contains(r.Stdout, `"kind": "not-checked"`) || !strings.Contains(r.Stdout, "/nonexistent/partitions.conf, which is not here") {
		t.Errorf("odd opensm.conf, JSON: exit %d\n%s", r.Code, r.Stdout)
	}
	// A file given beside it is compared: nothing is missing.
	r = runIbkey(t, false, nil, "fabric", "check", "--fabric-file", smallFabric, "--opensm-conf", odd, "--partitions", fabricConf, "--ignore", "enforcement-off")
	if r.Code != 0 || strings.Contains(r.Stderr, "not compared") {
		t.Errorf("odd opensm.conf with --partitions: exit %d, stderr:\n%s", r.Code, r.Stderr)
	}
	// "(null)" is no value: OpenSM's default file (opts_parse_charp).
	null := writeTemp(t, "null.conf", "partition_config_file (null)\n")
	r = runIbkey(t, false, nil, "fabric", "check", "--fabric-file", smallFabric, "--opensm-conf", null, "--ignore", "enforcement-off")
	if _, err := os.Stat("/etc/opensm/partitions.conf"); err == nil {
		if !strings.Contains(r.Stderr, "comparing with /etc/opensm/partitions.conf") {
			t.Errorf("(null): exit %d, stderr:\n%s", r.Code, r.Stderr)
		}
	} else if r.Code != 4 || !strings.Contains(r.Stderr, "names /etc/opensm/partitions.conf, which is not here") {
		t.Errorf("(null): exit %d, stderr:\n%s", r.Code, r.Stderr)
	}
	// Empty: no file OpenSM finds; its own default partition is compared.
	empty := writeTemp(t, "empty.conf", "partition_config_file\n")
	r = runIbkey(t, false, nil, "fabric", "check", "--fabric-file", smallFabric, "--opensm-conf", empty, "--ignore", "enforcement-off")
	if r.Code != 1 || !strings.Contains(r.Stderr, "partition_config_file empty, so OpenSM reads no partitions.conf") || !strings.Contains(r.Stdout, "against OpenSM's own Default=0x7fff") {
		t.Errorf("empty: exit %d\n%s--- stderr\n%s", r.Code, r.Stdout, r.Stderr)
	}
	// A relative partition_config_file is OpenSM's working directory's: not taken.
	rel := writeTemp(t, "rel.conf", "partition_config_file "+filepath.Base(fabricConf)+"\n")
	r = runIbkey(t, false, nil, "fabric", "check", "--fabric-file", smallFabric, "--opensm-conf", rel, "--ignore", "enforcement-off")
	if r.Code != 4 || !strings.Contains(r.Stderr, "relative to OpenSM's working directory, which ibkey cannot see (give --partitions)") {
		t.Errorf("relative partition_config_file: exit %d, stderr:\n%s", r.Code, r.Stderr)
	}
	// guid: the port the conf's OpenSM binds to, against the master's (SM LID 1:
	// port 0x100001 in the sweep).
	for guid, named := range map[string]bool{"0x100001": false, "0x100002": true, "0": false} {
		conf := writeTemp(t, "guid.conf", "partition_config_file "+abs+"\nguid "+guid+"\n")
		r = runIbkey(t, false, nil, "fabric", "check", "--fabric-file", smallFabric, "--opensm-conf", conf, "--ignore", "enforcement-off")
		if got := strings.Contains(r.Stderr, "but the master SM the ports name runs on port 0x0000000000100001"); got != named {
			t.Errorf("guid %s: note %v, want %v\n%s", guid, got, named, r.Stderr)
		}
	}
	r = runIbkey(t, false, nil, "fabric", "check", "--fabric-file", smallFabric, "--opensm-conf", "/dev/zero")
	if r.Code != 2 || !strings.Contains(r.Stderr, "--opensm-conf") {
		t.Errorf("--opensm-conf /dev/zero: exit %d, stderr %q; want exit 2 naming the flag", r.Code, r.Stderr)
	}
}

// TestCheckNamesGUIDsNotInFabric: a port GUID the file names that the fabric does not
// have is a warning at its line (OpenSM skips it silently).
func TestCheckNamesGUIDsNotInFabric(t *testing.T) {
	data, err := os.ReadFile(fabricConf)
	if err != nil {
		t.Fatal(err)
	}
	conf := writeTemp(t, "extra.conf", string(data)+"extra=0x0077 : 0x0002c903deadbeef=full;\n")
	r := runIbkey(t, false, nil, "fabric", "check", "--fabric-file", smallFabric, "--partitions", conf, "--ignore", "enforcement-off")
	if !strings.Contains(r.Stdout, "0x0002c903deadbeef") || !strings.Contains(r.Stdout, "["+partconf.RuleGUIDNotInFabric+"]") || !strings.Contains(r.Stdout, "extra.conf:") {
		t.Errorf("exit %d\n%s--- stderr\n%s", r.Code, r.Stdout, r.Stderr)
	}
}

// TestCheckPartialWithErrors: a partial sweep (one P_Key table not read) whose audit
// still finds errors in what was read exits 1, the errors being definite, and stderr
// still names the gap (and so does -o json's incomplete); the same gap without an error in what was read exits 4, and
// --strict makes its warnings count (exit 1).
func TestCheckPartialWithErrors(t *testing.T) {
	partial := func(name, from string) string {
		f, err := cmdutil.ReadFabricFile(from)
		if err != nil {
			t.Fatal(err)
		}
		broken := false
		for _, n := range f.Nodes {
			if n.Description == "HcaD" {
				for _, p := range n.Ports {
					p.PKeys, p.PKeysError = nil, "timed out"
					broken = true
					break
				}
			}
		}
		if !broken {
			t.Fatalf("%s has no node HcaD", from)
		}
		var b strings.Builder
		if err := fabric.EncodeFabric(&b, f); err != nil {
			t.Fatal(err)
		}
		return writeTemp(t, name, b.String())
	}
	withErrors := partial("changed-partial.json", enforcingFabric)
	clean := partial("small-partial.json", smallFabric)
	for _, tc := range []struct {
		args   []string
		Code   int
		Stdout string
	}{
		{[]string{"fabric", "check", "--fabric-file", withErrors}, 1, "1 error, "},
		{[]string{"fabric", "check", "--fabric-file", withErrors, "-o", "json"}, 1, `"errors": 1`},
		{[]string{"fabric", "check", "--fabric-file", clean}, 4, "0 errors, "},
		{[]string{"fabric", "check", "--fabric-file", clean, "--strict"}, 1, "0 errors, "},
	} {
		// Every case is a partial read: its JSON names the gap, on exit 1 too.
		r := runPartial(t, tc.args...)
		if r.Code != tc.Code || !strings.Contains(r.Stdout, tc.Stdout) || !strings.Contains(r.Stderr, "ibkey: partial sweep: ") || !strings.Contains(r.Stderr, "not checked") {
			t.Errorf("ibkey %s: exit %d, stderr %q; want exit %d, stdout with %q and the partial sweep named on stderr\n%s", strings.Join(tc.args, " "), r.Code, r.Stderr, tc.Code, tc.Stdout, r.Stdout)
		}
	}
}
