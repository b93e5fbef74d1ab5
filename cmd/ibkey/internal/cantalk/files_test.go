package cantalk

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/jsonschematest"
	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/fakesysfs"
)

// can-talk on ports of a partitions.conf (--partitions: the sample configs) and of a
// committed sweep (--fabric-file: small.json is small.net after OpenSM applied
// cmd/ibkey/testdata/fabric/partitions.conf, small-changed.json the same with Switch1
// port 2's table changed; TestLabFabricFiles in cmd/ibkey/internal/fabric records and
// checks both). The files are cmdtest's fixtures.

// TestCanTalkPartitions runs `can-talk --partitions` on the sample configs and compares
// stdout and stderr with testdata/TestCanTalkPartitions/*.golden (go test -update
// rewrites them).
func TestCanTalkPartitions(t *testing.T) {
	cmdtest.Golden(t, root, []cmdtest.GoldenCase{
		{Name: "cantalk_guids_yes", Args: []string{"can-talk", "--partitions", clusterConf, "0x0002c90300001021", "0x0002c90300001022"}, Code: 0},
		{Name: "cantalk_guids_limited_no", Args: []string{"can-talk", "--partitions", clusterConf, "0x0002c90300001021,pkey=0x0010", "guid=0x0002c90300001022,pkey=0x0010"}, Code: 1},
		{Name: "cantalk_guids_only_default", Args: []string{"can-talk", "--partitions", clusterConf, "0x0002c90300001002", "0x0002c90300001011", "--sm-guid", headNode}, Code: 0},
		{Name: "cantalk_guid_not_in_file", Args: []string{"can-talk", "--partitions", clusterConf, "0x0002c90300009999", "0x0002c90300001011,pkey=0x0010"}, Code: 1},
		// Were it the SM's port, SELF=full would give it 0x8030, which 0x...1002 holds:
		// the list is what the ends as taken share, and says so.
		{Name: "cantalk_guid_maybe_sm_shares_more", Args: []string{"can-talk", "--partitions", clusterConf, "0x0002c90300009999", "0x0002c90300001002"}, Code: 0},
		// The same port as the SM's: SELF gives it 0x8030 too, which its GUID does not
		// ("not named" said "it gets only what ALL / ALL_CAS give"); and as another.
		{Name: "cantalk_guid_not_in_file_is_sm", Args: []string{"can-talk", "--partitions", clusterConf, "--sm-guid", "0x0002c90300009999", "0x0002c90300009999", "0x0002c90300001011,pkey=0x0010"}, Code: 1},
		{Name: "cantalk_guid_not_in_file_not_sm", Args: []string{"can-talk", "--partitions", clusterConf, "--sm-guid", "0x0002c90300001011", "0x0002c90300009999", "0x0002c90300001011,pkey=0x0010"}, Code: 1},
		{Name: "cantalk_guid_ud_json", Args: []string{"can-talk", "--partitions", clusterConf, "0x0002c90300001011,qp=ud,qkey=0x11", "0x0002c90300001022,qp=ud,qkey=0x11", "-o", "json"}, Code: 0},
		{Name: "cantalk_guid_vs_pkey", Args: []string{"can-talk", "--partitions", clusterConf, "0x0002c90300001002", "0x8030"}, Code: 0},
		{Name: "cantalk_guids_rejected", Args: []string{"can-talk", "--partitions", rejectedConf, "0x0002c90300001011", "0x0002c90300001022"}, Code: 0},
		{Name: "cantalk_guids_nodefault", Args: []string{"can-talk", "--partitions", mistakesConf, "0x0002c90300001021", "0x0002c90300001022"}, Code: 0},
	}, func(t *testing.T, c cmdtest.GoldenCase, r cmdtest.Result) {
		if strings.HasSuffix(c.Name, "json") && !json.Valid([]byte(r.Stdout)) {
			t.Errorf("not one JSON document:\n%s", r.Stdout)
		}
	})
}

// TestCanTalkFabricFile runs can-talk on the ports of a committed sweep and compares
// with testdata/TestCanTalkFabricFile/*.golden.
func TestCanTalkFabricFile(t *testing.T) {
	cmdtest.Golden(t, root, []cmdtest.GoldenCase{
		{Name: "cantalk_nodes", Args: []string{"can-talk", "--fabric-file", smallFabric, "node=HcaA", "node=HcaB"}, Code: 0},
		{Name: "cantalk_guids_json", Args: []string{"can-talk", "--fabric-file", smallFabric, "0x100007", "0x10000b,qp=ud,qkey=0x11", "-o", "json"}, Code: 4},
		{Name: "cantalk_lids_no", Args: []string{"can-talk", "--fabric-file", smallFabric, "lid=4,pkey=0x0002", "lid=6"}, Code: 1},
	}, nil)
}

func TestCanTalkFilesErrors(t *testing.T) {
	cmdtest.Errors(t, root, []cmdtest.ErrorCase{
		// --partitions
		{Args: []string{"can-talk", "0x0002c90300001021", "0x8001"}, Code: 2, Stderr: "resolving a GUID needs --partitions FILE"},
		{Args: []string{"can-talk", "--partitions", "/nonexistent.conf", "0x0002c90300001021", "0x8001"}, Code: 2, Stderr: "ibkey: partitions file: open /nonexistent.conf"},
		{Args: []string{"can-talk", "--partitions", clusterConf, "0x0002c90300001021,index=1", "0x8001"}, Code: 2, Stderr: "index= and port= need a port of a sweep"},
		// --fabric-file
		{Args: []string{"can-talk", "--fabric-file", smallFabric, "node=HcaD", "0x8001"}, Code: 2, Stderr: `endpoint "node=HcaD": HcaD has ports 1, 2: add ,port=P`},
		{Args: []string{"can-talk", "--fabric-file", smallFabric, "node=HcaZ", "0x8001"}, Code: 3, Stderr: `no node "HcaZ" in the sweep (nodes: HcaA, HcaB, HcaC, HcaD, Switch1, Switch2)`},
		{Args: []string{"can-talk", "--fabric-file", smallFabric, "lid=99", "0x8001"}, Code: 3, Stderr: "no LID 99 in the sweep (LIDs: 1-7)"},
		{Args: []string{"can-talk", "--fabric-file", smallFabric, "node=HcaA,port=3", "0x8001"}, Code: 3, Stderr: "no port 3 on HcaA (ports: 1, 2)"},
		{Args: []string{"can-talk", "--fabric-file", smallFabric, "node=Switch1,port=2", "node=HcaA"}, Code: 2, Stderr: `endpoint "node=Switch1,port=2": port 2 of switch Switch1 is an external port: no QP is there (a switch's QPs are on port 0: port=0); the port it faces is "HcaB"[1]`},
		{Args: []string{"can-talk", "--fabric-file", smallFabric, "0x100001,port=2", "node=HcaB"}, Code: 2, Stderr: `endpoint "0x0000000000100001,port=2": 0x0000000000100001 is the port GUID of "HcaA"[1], not of port 2: drop port=, or name port 2 by the node GUID (0x0000000000100000,port=2)`},
		{Args: []string{"can-talk", "--fabric-file", smallFabric, "0x100002", "0x8001"}, Code: 3, Stderr: "no node with node or port GUID 0x0000000000100002 in the sweep"},
	})
}

// TestCanTalkDownNotRead: a DOWN port whose P_Key table was not read cannot talk, and
// that is known: NOT ACTIVE (exit 1) with the table named as not read, as for a DOWN
// port whose table was read; never "no P_Key", and never "not known" beside the known
// answer (said until wave 10). A swept CA port that is DOWN is where a sweep reads no
// table (it exited 3 until wave 8); a local one whose pkeys/ cannot be read agrees (it
// exited 4).
func TestCanTalkDownNotRead(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sys")
	if err := fakesysfs.Write(dir, fakesysfs.MLX5()); err != nil {
		t.Fatal(err)
	}
	if err := fakesysfs.LoopPKeys(dir, "mlx5_1", 2); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		why  string
	}{
		{[]string{"can-talk", "--fabric-file", smallFabric, "node=HcaA,port=2", "0x8001"}, "node=HcaA,port=2: P_Key table not read in the sweep: not read: the port is DOWN"},
		{[]string{"can-talk", "--fabric-file", smallFabric, "node=HcaB", "node=HcaA,port=2"}, "node=HcaA,port=2: P_Key table not read in the sweep: not read: the port is DOWN"},
		{[]string{"--sysfs", dir, "can-talk", "mlx5_1/2", "mlx5_0/1"}, "mlx5_1/2: P_Key table not read: "},
	} {
		r := cmdtest.Run(t, root, false, nil, c.args...)
		if r.Code != 1 || !strings.HasPrefix(r.Stdout, "NO (NOT ACTIVE): ") || !strings.Contains(r.Stdout, " is DOWN: a port that is not ACTIVE") ||
			!strings.Contains(r.Stdout, c.why) || strings.Contains(r.Stdout, "no P_Key") || strings.Contains(r.Stdout, "not known") {
			t.Errorf("%s: exit %d\n%s--- stderr\n%s", strings.Join(c.args, " "), r.Code, r.Stdout, r.Stderr)
		}
	}
}

// TestCanTalkActiveTableNotRead: an ACTIVE port whose P_Key table was not read gives
// the UNKNOWN verdict, exit 4, in every format (as an entry not read does), and -o
// json a document whose incomplete names the table (unread-table); it was an error
// with no document until wave 9. Where a rule that was decided fails the answer is
// still known: against a DOWN port (NOT ACTIVE) or a RoCE port (other link layer).
func TestCanTalkActiveTableNotRead(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sys")
	if err := fakesysfs.Write(dir, fakesysfs.MLX5()); err != nil {
		t.Fatal(err)
	}
	if err := fakesysfs.LoopPKeys(dir, "mlx5_0", 1); err != nil {
		t.Fatal(err)
	}
	why := "mlx5_0/1: P_Key table not read: "
	for _, format := range []string{"plain", "table"} {
		r := cmdtest.Run(t, root, false, nil, "--sysfs", dir, "can-talk", "mlx5_0/1", "0x8001", "-o", format)
		if r.Code != 4 || !strings.HasPrefix(r.Stdout, "UNKNOWN: whether mlx5_0/1 and 0x8001 can talk depends on what was not read\n  "+why[:len(why)-1]) {
			t.Errorf("-o %s: exit %d\n%s--- stderr\n%s", format, r.Code, r.Stdout, r.Stderr)
		}
	}
	r := cmdtest.Run(t, root, false, nil, "--sysfs", dir, "can-talk", "mlx5_0/1", "0x8001", "-o", "json")
	var doc struct {
		Verdict    string
		Incomplete []struct{ Kind, Message string }
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatalf("exit %d: %v\n%s--- stderr\n%s", r.Code, err, r.Stdout, r.Stderr)
	}
	if r.Code != 4 || doc.Verdict != "unknown" || len(doc.Incomplete) != 1 || doc.Incomplete[0].Kind != "unread-table" || !strings.HasPrefix(doc.Incomplete[0].Message, why) {
		t.Errorf("-o json: exit %d, %+v", r.Code, doc)
	}
	r = cmdtest.Run(t, root, false, nil, "--sysfs", dir, "can-talk", "mlx5_0/1", "mlx5_1/2")
	if r.Code != 1 || !strings.HasPrefix(r.Stdout, "NO (NOT ACTIVE): ") {
		t.Errorf("against a DOWN port: exit %d\n%s", r.Code, r.Stdout)
	}
	r = cmdtest.Run(t, root, false, nil, "--sysfs", dir, "can-talk", "mlx5_0/1", "mlx5_2/1")
	if r.Code != 1 || !strings.HasPrefix(r.Stdout, "NO: ") || !strings.Contains(r.Stdout, "different link layers") {
		t.Errorf("against a RoCE port: exit %d\n%s", r.Code, r.Stdout)
	}
}

// TestCanTalkSwitchNotChecked: a shared partition that works between the end ports but
// whose switch port facing HcaA was not checked (its table lacks the key and its
// enforcement bits were not read; or its table was not read) is never listed as
// working: not among the "other shared partitions that work" nor as the partition
// they share, WORKS ? with "switch not read", JSON works null, and a reason names the
// switch port. The verdict rests on a partition the switches pass (yes, exit 0), or
// on none (unknown, exit 4). Both listings said "works" until wave 10.
func TestCanTalkSwitchNotChecked(t *testing.T) {
	b, err := os.ReadFile(smallFabric)
	if err != nil {
		t.Fatal(err)
	}
	facingA := check.PortID{Node: 0x200000, Port: 1} // Switch1's port cabled to HcaA
	for _, tc := range []struct {
		name   string
		change func(p *fabric.Port)
		code   int
		first  string         // the first reason
		works  map[string]any // shared_partitions' works by key
		reason string         // a reason that names the switch port
	}{
		{"0x7fff not checked", func(p *fabric.Port) { p.PKeys[0], p.Enforcement = 0, nil }, 0,
			"they share partition 0x0002: index 1 on node=HcaA (0x8002, full) and index 1 on node=HcaB (0x0002, limited)\n",
			map[string]any{"0x0002": true, "0x0003": false, "0x7fff": nil},
			`partition 0x7fff is not known to pass: "Switch1"[1], the switch port facing "HcaA"[1], lacks partition 0x7fff and its enforcement bits were not read`},
		{"0x0002 not checked", func(p *fabric.Port) { p.PKeys[1], p.Enforcement = 0, nil }, 0,
			"they share partition 0x7fff: index 0 on node=HcaA (0xffff, full) and index 0 on node=HcaB (0xffff, full)\n",
			map[string]any{"0x0002": nil, "0x0003": false, "0x7fff": true},
			`partition 0x0002 is not known to pass: "Switch1"[1], the switch port facing "HcaA"[1], lacks partition 0x0002`},
		{"table not read", func(p *fabric.Port) { p.PKeys, p.PKeysError, p.Enforcement = nil, "P_KeyTable: timeout", nil }, 4,
			"they share partition 0x0002: index 1 on node=HcaA (0x8002, full) and index 1 on node=HcaB (0x0002, limited)\n",
			map[string]any{"0x0002": nil, "0x0003": false, "0x7fff": nil},
			`the P_Key table of "Switch1"[1], the switch port facing "HcaA"[1], was not read: whether it passes partition 0x7fff is not known`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := fabric.DecodeFabric(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			tc.change(f.Port(facingA))
			var buf bytes.Buffer
			if err := fabric.EncodeFabric(&buf, f); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(t.TempDir(), "fabric.json")
			if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{"can-talk", "--fabric-file", file, "node=HcaA", "node=HcaB"}
			r := cmdtest.Run(t, root, false, nil, append(args, "-o", "plain")...)
			_, rest, _ := strings.Cut(r.Stdout, "\n")
			if r.Code != tc.code || !strings.HasPrefix(rest, "  "+tc.first) || !strings.Contains(r.Stdout, tc.reason) || strings.Contains(r.Stdout, "that work") {
				t.Errorf("exit %d, want %d, first reason %q and %q:\n%s", r.Code, tc.code, tc.first, tc.reason, r.Stdout)
			}
			for key, w := range tc.works {
				want := map[any]string{true: "yes", false: "no", nil: "?"}[w]
				if !regexp.MustCompile(`(?m)^` + key + `\s.*\s` + regexp.QuoteMeta(want) + `\s`).MatchString(r.Stdout) {
					t.Errorf("%s: WORKS not %s:\n%s", key, want, r.Stdout)
				}
			}
			if w := strings.Count(r.Stdout, "switch_not_read"); w != strings.Count(r.Stdout, " ?  ") {
				t.Errorf("%d rows say switch_not_read, want one per ? row:\n%s", w, r.Stdout)
			}
			r = cmdtest.Run(t, root, false, nil, append(args, "-o", "json")...)
			jsonschematest.Validate(t, "can-talk", []byte(r.Stdout))
			var doc struct {
				Shared []struct {
					Key   string
					Works any
				} `json:"shared_partitions"`
			}
			if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || r.Code != tc.code {
				t.Fatalf("-o json: exit %d, %v\n%s", r.Code, err, r.Stdout)
			}
			got := map[string]any{}
			for _, s := range doc.Shared {
				got[s.Key] = s.Works
			}
			if diff := cmp.Diff(tc.works, got); diff != "" {
				t.Errorf("-o json works (-want +got)\n%s", diff)
			}
		})
	}
}

// TestHopsOfTakenEntry (wave 12): mlx5_1/1,pkey=0x8009, whose entries read hold no
// entry of partition 0x0009 and whose entry 3 was not read, against HcaB holding
// 0x8009 behind a switch port that lacks 0x0009 and enforces. The verdict takes the
// entry not read (a full 0x8009) and compares the others ib_find_pkey may pick: NO
// either way (the switch drops 0x0009; with no entry no QP exists). The hop is a
// fact about the switch port, checked for the partition a QP there would use, and
// stays in hops and the reasons though shared_partitions, what the entries read
// share, is empty. What rested on the taken entry and read as what was read ("they
// share partition 0x0009: mlx5_1/1 with 0x8009 (full)") now comes after the reason
// that says the entry is not known and which one the reasons take.
func TestHopsOfTakenEntry(t *testing.T) {
	b, err := os.ReadFile(smallFabric)
	if err != nil {
		t.Fatal(err)
	}
	f, err := fabric.DecodeFabric(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	hcaB := f.Port(check.PortID{Node: 0x100003, Port: 1})
	facingB := f.Port(check.PortID{Node: 0x200000, Port: 2})
	if hcaB == nil || facingB == nil || facingB.Enforcement == nil {
		t.Fatal("fixture: HcaB[1] and Switch1[2] expected")
	}
	hcaB.PKeys[3] = 0x8009
	facingB.Enforcement.Inbound, facingB.Enforcement.Outbound = true, true
	var buf bytes.Buffer
	if err := fabric.EncodeFabric(&buf, f); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "fabric.json")
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--sysfs", cmdtest.MLX5, "can-talk", "--fabric-file", file, "mlx5_1/1,pkey=0x8009", "node=HcaB", "-o", "json"}
	r := cmdtest.RunPartial(t, root, false, nil, args...)
	jsonschematest.Validate(t, "can-talk", []byte(r.Stdout))
	var d struct {
		Verdict string
		Reasons []string
		Shared  []any `json:"shared_partitions"`
		Hops    []struct {
			Key     string
			FromEnd string `json:"from_end"`
		} `json:"hops"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &d); err != nil {
		t.Fatal(err)
	}
	const drops = `"Switch1"[2], the switch port facing "HcaB"[1], lacks partition 0x0009 and enforces partitions`
	if r.Code != 1 || d.Verdict != "no" || len(d.Shared) != 0 || len(d.Hops) != 1 || d.Hops[0].Key != "0x0009" || d.Hops[0].FromEnd != "drops" ||
		!slices.ContainsFunc(d.Reasons, func(s string) bool { return strings.HasPrefix(s, drops) }) {
		t.Fatalf("exit %d: want NO, no shared partition, the hop dropping 0x0009 and its reason\n%s", r.Code, r.Stdout)
	}
	const first = "mlx5_1/1: the entry a QP there uses for partition 0x0009 is not known"
	const takes = "the reasons below take an entry of mlx5_1/1 that could not be read (index 3) holding 0x8009"
	if !strings.HasPrefix(d.Reasons[0], first) || !strings.Contains(d.Reasons[0], takes) {
		t.Errorf("first reason %q, want %q ... %q", d.Reasons[0], first, takes)
	}
}

// TestSharedWorksNotKnown: without --sm-guid, a file without a Default line makes
// both ends limited members of 0x7fff unless one is the SM's port (SELF=full): works
// is null, not the false of the ends as taken, and a note says on what; with
// --sm-guid naming neither it is false.
func TestSharedWorksNotKnown(t *testing.T) {
	works := func(args ...string) any {
		t.Helper()
		r := cmdtest.Run(t, root, false, nil, append([]string{"can-talk", "--partitions", mistakesConf, "0x0002c90300001021", "0x0002c90300001022", "-o", "json"}, args...)...)
		jsonschematest.Validate(t, "can-talk", []byte(r.Stdout))
		var doc struct {
			Shared []struct {
				Key   string
				Works any
			} `json:"shared_partitions"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
			t.Fatal(err)
		}
		for _, s := range doc.Shared {
			if s.Key == "0x7fff" {
				if len(args) == 0 && !strings.Contains(r.Stderr, "whether partition 0x7fff works for them is not known") {
					t.Errorf("no note on 0x7fff:\n%s", r.Stderr)
				}
				return s.Works
			}
		}
		t.Fatalf("0x7fff not shared:\n%s", r.Stdout)
		return nil
	}
	if w := works(); w != nil {
		t.Errorf("SM's port not given: works %v, want null", w)
	}
	if w := works("--sm-guid", "0x0002c90300009999"); w != false {
		t.Errorf("SM's port another: works %v, want false", w)
	}
}

// TestSharedAssumedIncomplete: shared_partitions_complete is false when SELF not
// given would give both ends a partition more (it read true: the list is what the
// ends as taken share), and true with --sm-guid naming another port.
func TestSharedAssumedIncomplete(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		complete bool
	}{{nil, false}, {[]string{"--sm-guid", "0x0002c90300001011"}, true}} {
		r := cmdtest.Run(t, root, false, nil, append([]string{"can-talk", "--partitions", clusterConf, "0x0002c90300009999", "0x0002c90300001002", "-o", "json"}, tc.args...)...)
		var doc struct {
			Complete bool `json:"shared_partitions_complete"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Complete != tc.complete {
			t.Errorf("%v: shared_partitions_complete %v, want %v\n%s", tc.args, doc.Complete, tc.complete, r.Stdout)
		}
	}
}

// TestSharedCompleteBesideKeyZero: beside an end that holds no valid key (a QP on
// key 0 matches nothing, check.Keyless), the entries the other end did not read
// cannot hold a shared partition: the list is complete and no note says it may be
// short. Beside a valid key it may be short, and says so.
func TestSharedCompleteBesideKeyZero(t *testing.T) {
	for _, tc := range []struct {
		key      string
		code     int
		complete bool
	}{{"0x0000", 1, true}, {"0x8000", 1, true}, {"0x8001", 0, false}} {
		r := runIbkey(t, "--sysfs", cmdtest.MLX5, "can-talk", tc.key, "mlx5_1/1")
		if r.Code != tc.code || strings.Contains(r.Stdout, "entries not read may hold more") == tc.complete {
			t.Errorf("%s: exit %d (want %d)\n%s", tc.key, r.Code, tc.code, r.Stdout)
		}
		// An entry of mlx5_1/1 is not read: a no names it in incomplete (RunPartial);
		// the yes does not depend on it.
		run := cmdtest.Run
		if tc.code == 1 {
			run = cmdtest.RunPartial
		}
		r = run(t, root, false, nil, "--sysfs", cmdtest.MLX5, "can-talk", tc.key, "mlx5_1/1", "-o", "json")
		var doc struct {
			Complete bool `json:"shared_partitions_complete"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Complete != tc.complete {
			t.Errorf("%s: shared_partitions_complete %v, want %v", tc.key, doc.Complete, tc.complete)
		}
	}
}

// TestCanTalkPeerNotRead: a CA port whose link is up (ACTIVE) and whose far end the
// fabric file does not name (peer null, on it and on the switch port that faced it)
// faces a switch port that was not read: it may enforce partitions and lack the key.
// A yes becomes UNKNOWN (exit 4; JSON verdict unknown, incomplete unread-table naming
// the port, a hop whose switch_port is null), and a no stays a no (exit 1). Generated
// over every CA port with a link of small.json, against every other one, as the port
// and as a QP on it using each of its keys (pkey=). Until wave 29 the yes stood: the
// switch-port check found "nothing to check" there.
func TestCanTalkPeerNotRead(t *testing.T) {
	b, err := os.ReadFile(smallFabric)
	if err != nil {
		t.Fatal(err)
	}
	decode := func() *fabric.Fabric {
		f, err := fabric.DecodeFabric(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	type end struct {
		id    check.PortID
		specs []string // the port, then a QP on it using each valid key
	}
	var ends []end
	orig := decode()
	for _, n := range orig.Nodes {
		for _, p := range n.Ports {
			if n.Type == check.NodeSwitch || p.State == check.StateDown || p.Peer == nil {
				continue
			}
			e := end{id: check.PortID{Node: n.GUID, Port: p.Num}, specs: []string{fmt.Sprintf("node=%s,port=%d", n.Description, p.Num)}}
			for _, k := range p.PKeys {
				if k.Valid() {
					e.specs = append(e.specs, fmt.Sprintf("%s,pkey=%s", e.specs[0], k))
				}
			}
			ends = append(ends, e)
		}
	}
	var yes, no int
	for _, x := range ends {
		f := decode()
		p := f.Port(x.id)
		p.Peer, f.Port(*p.Peer).Peer = nil, nil // the file names both ends of a link or neither
		var buf bytes.Buffer
		if err := fabric.EncodeFabric(&buf, f); err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(t.TempDir(), "fabric.json")
		if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		label := f.Label(x.id)
		for _, y := range ends {
			if y.id == x.id {
				continue
			}
			for _, spec := range x.specs {
				args := []string{"can-talk", spec, y.specs[0], "-o", "plain"}
				before := cmdtest.Run(t, root, false, nil, append([]string{"--fabric-file", smallFabric}, args...)...)
				switch before.Code {
				case 0:
					yes++
					r := cmdtest.Run(t, root, false, nil, "--fabric-file", file, "can-talk", spec, y.specs[0], "-o", "json")
					type hop struct {
						End    check.PortID
						Switch *check.PortID `json:"switch_port"`
					}
					type item struct{ Kind, Message string }
					var doc struct {
						Verdict    string
						Incomplete []item
						Hops       []hop
					}
					if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
						t.Fatalf("%s: exit %d: %v\n%s", args, r.Code, err, r.Stderr)
					}
					named := slices.ContainsFunc(doc.Incomplete, func(i item) bool {
						return i.Kind == "unread-table" && strings.Contains(i.Message, label+" was not read")
					})
					unread := slices.ContainsFunc(doc.Hops, func(h hop) bool { return h.End == x.id && h.Switch == nil })
					if r.Code != 4 || doc.Verdict != "unknown" || !named || !unread {
						t.Errorf("%s, %s's far end not read: exit %d, %+v; want unknown, exit 4, naming it", args, label, r.Code, doc)
					}
				case 1:
					no++
					r := cmdtest.Run(t, root, false, nil, append([]string{"--fabric-file", file}, args...)...)
					if r.Code != 1 {
						t.Errorf("%s, %s's far end not read: exit %d, was a no\n%s", args, label, r.Code, r.Stdout)
					}
				}
			}
		}
	}
	if yes == 0 || no == 0 {
		t.Errorf("generated %d yes and %d no questions: small.json no longer gives both", yes, no)
	}
}
