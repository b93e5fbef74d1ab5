package cantalk

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
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
		{Args: []string{"can-talk", "--fabric-file", smallFabric, "0x100002", "0x8001"}, Code: 3, Stderr: "no node with node or port GUID 0x0000000000100002 in the sweep"},
	})
}

// TestCanTalkDownNotRead: a DOWN port whose P_Key table was not read cannot talk, and
// that is known: NOT ACTIVE (exit 1) with the table named as not read, as for a DOWN
// port whose table was read; never "no P_Key". A swept CA port that is DOWN is where a
// sweep reads no table (it exited 3 until wave 8); a local one whose pkeys/ cannot be
// read agrees (it exited 4).
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
			!strings.Contains(r.Stdout, c.why) || strings.Contains(r.Stdout, "no P_Key") {
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
