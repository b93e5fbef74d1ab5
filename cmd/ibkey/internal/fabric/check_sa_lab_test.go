package fabric

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/lab"
)

// fabric check --sa in the lab: the partitions lab net, OpenSM running saCheckConf as a
// daemon. The SM's view (P_KeyTableRecord), the tables read by SMP and the model of
// the file agree, and the IPoIB groups are as the file says; then a table set behind
// the SM's back, a file that says other group values, and an asker outside a group's
// partition.

const saCheckConf = `Default=0x7fff, ipoib : ALL=full;
p1=0x8001, ipoib, mtu=4, rate=7, Q_Key=0x00001111 : 0x0002c90300000211=full, 0x0002c90300000221, 0x0002c90300000231;
p2=0x0002 : 0x0002c90300000221=full, 0x0002c90300000231;
`

type saCheckDoc struct {
	Findings []struct {
		Rule    string `json:"rule"`
		Message string `json:"message"`
		Action  string `json:"action"`
	} `json:"findings"`
	Incomplete []struct {
		Kind    string `json:"kind"`
		Message string `json:"message"`
	} `json:"incomplete"`
}

func (d saCheckDoc) ruleCount() map[string]int {
	out := map[string]int{}
	for _, f := range d.Findings {
		out[f.Rule]++
	}
	return out
}

func TestLabFabricCheckSA(t *testing.T) {
	lab.Require(t)
	if testing.Short() {
		t.Skip("lab: -short")
	}
	l := lab.StartPartconf(t)
	l.StartOpenSMDaemon(t, saCheckConf)
	conf := filepath.Join(t.TempDir(), "partitions.conf")
	if err := os.WriteFile(conf, []byte(saCheckConf), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(node, file string, extra ...string) (saCheckDoc, cmdtest.Result) {
		t.Helper()
		args := append([]string{"fabric", "check", "--ibsim=" + l.SockName, "--sim-node", node, "--sa", "--partitions", file,
			"--ignore", "enforcement-off", "-o", "json"}, extra...)
		r := runIbkey(t, false, nil, args...)
		var d saCheckDoc
		if err := json.Unmarshal([]byte(r.Stdout), &d); err != nil {
			t.Fatalf("ibkey %s: exit %d: %v\n%s%s", strings.Join(args, " "), r.Code, err, r.Stdout, r.Stderr)
		}
		return d, r
	}
	// All agree, asked from HcaB (in every ipoib partition).
	if d, r := run("HcaB", conf); r.Code != 0 || len(d.Findings) != 0 || len(d.Incomplete) != 0 {
		t.Fatalf("clean fabric: exit %d, %v %v\n%s", r.Code, d.ruleCount(), d.Incomplete, r.Stderr)
	}
	// Asked from HcaA, which is not in p1: its group is not visible, so not checked.
	if d, r := run("HcaA", conf); r.Code != 4 || len(d.Incomplete) == 0 || !strings.Contains(d.Incomplete[0].Message, "the SA answers only for groups of partitions") {
		t.Errorf("from outside p1: exit %d, %+v", r.Code, d.Incomplete)
	}
	// A file with other values for p1's group: the group is not as it says.
	other := filepath.Join(t.TempDir(), "other.conf")
	if err := os.WriteFile(other, []byte(strings.Replace(saCheckConf, "mtu=4, rate=7, Q_Key=0x00001111", "mtu=5, rate=7, Q_Key=0x00002222", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if d, r := run("HcaB", other); r.Code != 1 || d.ruleCount()[RuleIPoIBGroupDiffers] != 1 || !strings.Contains(d.Findings[0].Message+d.Findings[len(d.Findings)-1].Message, "Q_Key 0x00001111, the file 0x00002222") {
		t.Errorf("other group values: exit %d, %v %+v", r.Code, d.ruleCount(), d.Findings)
	}
	// A key set in HcaC's table behind the SM's back (ibsim takes any client's Set):
	// the SM's view differs from the table the port holds.
	var blk [mad.PKeysPerBlock]uint16
	blk[0], blk[1], blk[2], blk[3] = 0xffff, 0x0001, 0x0002, 0x8009
	if err := l.SetPKeyBlock(context.Background(), "HcaA", mad.LIDAddress(4), 1, 0, blk); err != nil {
		t.Fatal(err)
	}
	d, r := run("HcaB", conf)
	if r.Code != 1 || d.ruleCount()[RuleSATableDiffers] != 1 {
		t.Errorf("a table set behind the SM's back: exit %d, %v %+v", r.Code, d.ruleCount(), d.Findings)
	}
	for _, f := range d.Findings {
		if f.Rule == RuleSATableDiffers && !strings.Contains(f.Message, "index 3: the SM 0x0000, the port 0x8009") {
			t.Errorf("%s", f.Message)
		}
	}
	// Without the SM_Key the SA refuses P_KeyTableRecords: a usable error.
	r = runIbkey(t, false, nil, "fabric", "check", "--ibsim="+l.SockName, "--sim-node", "HcaB", "--sa", "--sm-key", "0")
	if r.Code != 3 || !strings.Contains(r.Stderr, "give its sa_key with --sm-key") {
		t.Errorf("--sm-key 0: exit %d\n%s", r.Code, r.Stderr)
	}
}

// TestLabFabricCheckSALimited (wave 19): OpenSM answers a P_KeyTableRecord only for a
// port that shares a partition with the asker, one of the two a full member
// (osm_sa_pkey_record.c, osm_pkey.c osm_physp_share_pkey). Under a file where every
// port but the SM's is a limited member of the default partition, the ports fabric
// check --sa lists as not checked are those saquery PKTR from the same node gets no
// record for (the switch's ports included: OpenSM gives an external port its peer's
// keys, port 0 the default partition's), and the reason says a full member is needed
// (it said "ports that share a partition", which HcaD and the switch port facing it,
// both limited members of the default partition and p3, do).
func TestLabFabricCheckSALimited(t *testing.T) {
	lab.Require(t)
	if testing.Short() {
		t.Skip("lab: -short")
	}
	l := lab.StartPartconf(t)
	l.StartOpenSMDaemon(t, "Default=0x7fff : ALL=limited, SELF=full;\np1=0x8001 : 0x0002c90300000211=full, 0x0002c90300000221;\np3=0x0003 : 0x0002c90300000221=full, 0x0002c90300000231;\n")
	// Sw1 is LID 2 (ports 0-4), HcaA..HcaD are LIDs 1, 3, 4, 5.
	ports := []string{"2/0/0", "2/1/0", "2/2/0", "2/3/0", "2/4/0", "1", "3", "4", "5"}
	for _, node := range []string{"HcaA", "HcaB", "HcaD"} {
		none := 0
		for _, p := range ports {
			out, err := l.ToolAt(node, "saquery", "--smkey", "1", "PKTR", p)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out, "PKeyTableRecord dump") {
				none++
			}
		}
		args := []string{"fabric", "check", "--ibsim=" + l.SockName, "--sim-node", node, "--sa", "--ignore", "enforcement-off", "-o", "json"}
		r := runIbkey(t, false, nil, args...)
		var d saCheckDoc
		if err := json.Unmarshal([]byte(r.Stdout), &d); err != nil {
			t.Fatalf("ibkey %s: exit %d: %v\n%s%s", strings.Join(args, " "), r.Code, err, r.Stdout, r.Stderr)
		}
		got := 0
		for _, in := range d.Incomplete {
			if in.Kind != "not-checked" || !strings.Contains(in.Message, "SA P_KeyTableRecord") {
				continue
			}
			if !strings.Contains(in.Message, "one of the two a full member") {
				t.Errorf("from %s: %s", node, in.Message)
			}
			if n, _, ok := strings.Cut(in.Message, " × "); ok {
				got, _ = strconv.Atoi(n)
			} else {
				got = 1
			}
		}
		if got != none || (none == 0) != (r.Code == 0) {
			t.Errorf("from %s: ibkey lists %d tables not checked (exit %d), saquery gets no record for %d\n%s", node, got, r.Code, none, r.Stderr)
		}
		if node != "HcaA" && none == 0 {
			t.Errorf("from %s: saquery got every record: the test needs a refusal", node)
		}
	}
}

// TestLabFabricCheckSAPartialSweep: --sa over a partial sweep still names what the SA
// did not answer. Asked from HcaA (not in p1), p1's IPoIB group is not checked; the
// sweep (a saved one that stopped early) is partial too. Before, the JSON's incomplete
// and stderr named only the sweep's gaps: the SA's went unnamed whenever the sweep
// was partial.
func TestLabFabricCheckSAPartialSweep(t *testing.T) {
	lab.Require(t)
	if testing.Short() {
		t.Skip("lab: -short")
	}
	l := lab.StartPartconf(t)
	l.StartOpenSMDaemon(t, saCheckConf)
	dir := t.TempDir()
	conf := filepath.Join(dir, "partitions.conf")
	if err := os.WriteFile(conf, []byte(saCheckConf), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runIbkey(t, false, nil, "fabric", "discover", "--ibsim="+l.SockName, "--sim-node", "HcaA", "-o", "json")
	if r.Code != 0 {
		t.Fatalf("discover: exit %d\n%s", r.Code, r.Stderr)
	}
	fab, err := fabric.DecodeFabric(strings.NewReader(r.Stdout))
	if err != nil {
		t.Fatal(err)
	}
	fab.Incomplete = "stopped for the test"
	file := filepath.Join(dir, "partial.json")
	var buf strings.Builder
	if err := fabric.EncodeFabric(&buf, fab); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(buf.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runIbkey(t, false, nil, "fabric", "check", "--fabric-file", file, "--ibsim="+l.SockName, "--sim-node", "HcaA", "--sa",
		"--partitions", conf, "--ignore", "enforcement-off,sweep-incomplete", "-o", "json")
	var d saCheckDoc
	if err := json.Unmarshal([]byte(r.Stdout), &d); err != nil {
		t.Fatalf("exit %d: %v\n%s%s", r.Code, err, r.Stdout, r.Stderr)
	}
	var kinds []string
	sa := false
	for _, in := range d.Incomplete {
		kinds = append(kinds, in.Kind)
		sa = sa || strings.Contains(in.Message, "SA MCMemberRecord")
	}
	if r.Code != 4 || !slices.Contains(kinds, "partial-sweep") || !sa || !strings.Contains(r.Stderr, "SA MCMemberRecord") {
		t.Errorf("exit %d, incomplete %+v, want 4 naming the partial sweep and the SA group not checked\n%s", r.Code, d.Incomplete, r.Stderr)
	}
}
