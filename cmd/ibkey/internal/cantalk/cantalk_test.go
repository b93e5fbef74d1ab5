package cantalk

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
)

const cantalkFixture = "../../../../testdata/sysfs/cantalk"

// root is `ibkey` with can-talk only.
var root = cmdtest.WithCommands(func(f *cmdutil.Factory) *cobra.Command { return NewCmdCanTalk(f, nil) })

func runIbkey(t *testing.T, args ...string) cmdtest.Result {
	t.Helper()
	return cmdtest.Run(t, root, false, nil, args...)
}

// TestCanTalk runs `ibkey can-talk` through the command and compares stdout and stderr
// with testdata/TestCanTalk/*.golden (go test -update rewrites them).
func TestCanTalk(t *testing.T) {
	cases := []cmdtest.GoldenCase{
		// Ports (fixtures testdata/sysfs/mlx5 and testdata/sysfs/cantalk).
		{Name: "ports_only_default", Args: []string{"--sysfs", cantalkFixture, "can-talk", "hca0/1", "hca1/1"}, Code: 0},
		{Name: "ports_one_side_limited", Args: []string{"--sysfs", cmdtest.MLX5, "can-talk", "mlx5_0/1", "mlx5_1/1"}, Code: 0},
		{Name: "ports_one_side_limited_json", Args: []string{"--sysfs", cmdtest.MLX5, "can-talk", "mlx5_0/1", "mlx5_1/1", "-o", "json"}, Code: 0},
		{Name: "ports_share_none", Args: []string{"--sysfs", cantalkFixture, "can-talk", "hca1/1", "hca2/1"}, Code: 1},
		{Name: "ports_all_limited_table", Args: []string{"--sysfs", cantalkFixture, "can-talk", "hca3/1", "hca4/1", "-o", "table"}, Code: 1},
		{Name: "ports_all_limited_json", Args: []string{"--sysfs", cantalkFixture, "can-talk", "hca3/1", "hca4/1", "-o", "json"}, Code: 1},
		{Name: "port_holes_every_valid_entry", Args: []string{"--sysfs", cmdtest.MLX5, "can-talk", "mlx5_0/1", "0x0010"}, Code: 0},
		{Name: "port_index_on_hole", Args: []string{"--sysfs", cmdtest.MLX5, "can-talk", "mlx5_0/1,index=3", "0x8001"}, Code: 1},
		{Name: "port_index_out_of_range", Args: []string{"--sysfs", cmdtest.MLX5, "can-talk", "mlx5_0/1,index=300", "0x8001"}, Code: 1},
		{Name: "port_key_both_full_and_limited", Args: []string{"--sysfs", cmdtest.MLX5, "can-talk", "mlx5_0/1", "0x0005"}, Code: 0},
		{Name: "port_key_both_pinned_limited", Args: []string{"--sysfs", cmdtest.MLX5, "can-talk", "mlx5_0/1,index=5", "0x0005"}, Code: 1},
		{Name: "port_pkey_option_picks_full", Args: []string{"--sysfs", cmdtest.MLX5, "can-talk", "mlx5_0/1,pkey=0x0005", "0x0005"}, Code: 0},
		{Name: "port_pkey_not_in_table", Args: []string{"--sysfs", cmdtest.MLX5, "can-talk", "mlx5_0/1,pkey=0x0009", "0x8009"}, Code: 1},
		{Name: "port_pkey_not_in_table_json", Args: []string{"--sysfs", cmdtest.MLX5, "can-talk", "0x8009", "mlx5_0/1,pkey=0x0009", "-o", "json"}, Code: 1},
		{Name: "port_down_is_no", Args: []string{"--sysfs", cmdtest.MLX5, "can-talk", "mlx5_0/1", "mlx5_1/2"}, Code: 1}, // a DOWN port cannot talk now (issue 11 item 11),
		{Name: "port_roce_warns", Args: []string{"--sysfs", cmdtest.MLX5, "can-talk", "mlx5_2/1", "0xffff"}, Code: 0},
		{Name: "ports_infiniband_vs_roce_no", Args: []string{"--sysfs", cmdtest.MLX5, "can-talk", "mlx5_0/1", "mlx5_2/1"}, Code: 1},
		{Name: "demo_ports_table", Args: []string{"--demo", "can-talk", "mlx5_0/1", "mlx5_1/1", "-o", "table"}, Code: 0},
		// storage01's switch port lacks 0x0010 and enforces: 0x0010 is not a partition
		// "that works" and its WORKS is no (it said yes beside the sentence that the
		// switch drops it).
		{Name: "demo_switch_drops_plain", Args: []string{"--demo", "can-talk", "mlx5_0/1", "lid=6", "-o", "plain"}, Code: 0},
		{Name: "demo_switch_drops_json", Args: []string{"--demo", "can-talk", "mlx5_0/1", "lid=6", "-o", "json"}, Code: 0},
		// Seed 000's four QPs: A 0x8001, B 0x0001, C 0x0001, D 0x8002.
		{Name: "seed_a_b", Args: []string{"can-talk", "0x8001", "0x0001"}, Code: 0},
		{Name: "seed_b_c", Args: []string{"can-talk", "0x0001", "0x0001"}, Code: 1},
		{Name: "seed_d_a", Args: []string{"can-talk", "0x8002", "0x8001"}, Code: 1},
		{Name: "seed_a_b_json", Args: []string{"can-talk", "0x8001", "0x0001", "-o", "json"}, Code: 0},
		// Q_Keys.
		{Name: "qkey_mismatch", Args: []string{"can-talk", "pkey=0x8001,qp=ud,qkey=0x11", "pkey=0x0001,qp=ud,qkey=0x12"}, Code: 1},
		{Name: "qkey_mismatch_json", Args: []string{"can-talk", "pkey=0x8001,qp=ud,qkey=0x11", "pkey=0x0001,qp=ud,qkey=0x12", "-o", "json"}, Code: 1},
		// A device whose driver is known (the demo's mlx5_core) follows the IBA rule:
		// the context's Q_Key goes out. Bare keys name no device: the answer depends
		// on the send rule (rdma_rxe sends the wr_qkey verbatim).
		{Name: "wr_qkey_top_bit_uses_context", Args: []string{"--demo", "can-talk", "mlx5_0/1,pkey=0x8001,qp=ud,qkey=0x11,wr_qkey=0x80000000", "mlx5_1/1,pkey=0x0001,qp=ud,qkey=0x11"}, Code: 0},
		{Name: "wr_qkey_top_bit_rule_not_known", Args: []string{"can-talk", "pkey=0x8001,qp=ud,qkey=0x11,wr_qkey=0x80000000", "pkey=0x0001,qp=ud,qkey=0x11"}, Code: 4},
		{Name: "wr_qkey_one_way", Args: []string{"can-talk", "pkey=0x8001,qp=ud,qkey=0x11,wr_qkey=0x12", "pkey=0x0001,qp=ud,qkey=0x11"}, Code: 1},
		{Name: "wr_qkey_one_way_json", Args: []string{"can-talk", "pkey=0x8001,qp=ud,qkey=0x11,wr_qkey=0x12", "pkey=0x0001,qp=ud,qkey=0x11", "-o", "json"}, Code: 1},
		{Name: "qkey_not_checked", Args: []string{"can-talk", "0x8001,qp=ud", "0x0001,qp=ud,qkey=0x11"}, Code: 4},
		{Name: "rc_qkey_ignored", Args: []string{"can-talk", "0x8001,qp=rc,qkey=0x11", "0x0001,qp=rc,qkey=0x12"}, Code: 0},
		{Name: "ud_vs_rc", Args: []string{"can-talk", "0x8001,qp=ud", "0x0001,qp=rc"}, Code: 1},
		{Name: "ipoib_children", Args: []string{"--sysfs", cmdtest.MLX5, "can-talk", "ib0.8001,qp=ud,qkey=0x11", "mlx5_1/1,qp=ud,qkey=0x11"}, Code: 0},
		{Name: "ipoib_child_key_missing", Args: []string{"--sysfs", cmdtest.MLX5, "can-talk", "ib0.8004", "0x8004"}, Code: 1},
		{Name: "port_ud_qkeys", Args: []string{"--sysfs", cmdtest.MLX5, "can-talk", "mlx5_0/1,pkey=0x8001,qp=ud,qkey=0x11", "mlx5_1/1,index=1,qp=ud,qkey=0x11"}, Code: 0},
	}
	cmdtest.Golden(t, root, cases, func(t *testing.T, tc cmdtest.GoldenCase, r cmdtest.Result) {
		if strings.Contains(strings.Join(tc.Args, " "), "-o json") {
			var doc map[string]any
			if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
				t.Fatalf("not one JSON document: %v\n%s", err, r.Stdout)
			}
			// can_talk: true on exit 0, false on 1, null (not known) on 4.
			if want := map[int]any{0: true, 1: false, 4: nil}[tc.Code]; doc["can_talk"] != want {
				t.Errorf("can_talk = %v with exit %d", doc["can_talk"], tc.Code)
			}
			if _, ok := doc["reasons"].([]any); !ok {
				t.Errorf("no reasons array: %v", doc["reasons"])
			}
		}
	})
}

// TestCanTalkMembershipExample checks every pair of four QPs both ways (A full and B, C
// limited members of partition 0x0001, D of 0x0002; the membership rule of IBA vol. 1 §10.9:
// two limited members cannot talk): the verdict line and the exit code.
func TestCanTalkMembershipExample(t *testing.T) {
	qps := map[string]string{"A": "0x8001", "B": "0x0001", "C": "0x0001", "D": "0x8002"}
	yes := map[string]bool{"AB": true, "AC": true}
	for _, pair := range []string{"AB", "AC", "AD", "BC", "BD", "CD"} {
		for _, p := range []string{pair, string([]byte{pair[1], pair[0]})} {
			a, b := qps[p[:1]], qps[p[1:]]
			r := runIbkey(t, "can-talk", a, b)
			want, code := "NO: ", cmdutil.ExitNo
			if yes[pair] {
				want, code = "YES: ", cmdutil.ExitOK
			}
			if r.Code != code || !strings.HasPrefix(r.Stdout, want) {
				t.Errorf("QP%s QP%s (can-talk %s %s): exit %d, stdout %q; want exit %d and %q", p[:1], p[1:], a, b, r.Code, r.Stdout, code, want)
			}
		}
	}
}

// TestCanTalkErrors: bad input exits 2 with one line naming the token, missing devices
// and ports exit 3 listing what exists.
func TestCanTalkErrors(t *testing.T) {
	cmdtest.Errors(t, root, []cmdtest.ErrorCase{
		{Args: []string{"can-talk", "mlx5_0", "0x8001"}, Code: 2, Stderr: `ibkey: invalid endpoint "mlx5_0": not a P_Key or GUID (hex); a port is written DEV/PORT, e.g. mlx5_0/1 (accepted: PKEY`},
		{Args: []string{"can-talk", "0x8001", "0x8001,foo=1"}, Code: 2, Stderr: `ibkey: endpoint "0x8001,foo=1": invalid endpoint option "foo=1": unknown option "foo"`},
		{Args: []string{"can-talk", "pkey=0xzz,qp=ud", "0x8001"}, Code: 2, Stderr: `ibkey: endpoint "pkey=0xzz,qp=ud": invalid P_Key "0xzz": "z" is not a hex digit`},
		{Args: []string{"can-talk", "0x8001,qp=xx", "0x8001"}, Code: 2, Stderr: `QP type "xx" is not rc, uc or ud`},
		{Args: []string{"can-talk", "0x10000", "0x8001"}, Code: 2, Stderr: `endpoint "0x10000" is a port GUID (0x0000000000010000) (if you meant a P_Key: a P_Key is at most 0xffff)`},
		{Args: []string{"can-talk", "0x8001,pkey=0x10000", "0x8001"}, Code: 2, Stderr: `P_Key given twice`},
		{Args: []string{"can-talk", "mlx5_0/1,pkey=0x10000", "0x8001"}, Code: 2, Stderr: `invalid P_Key "0x10000": larger than 0xffff`},
		{Args: []string{"can-talk", "0x8001", "qp=ud"}, Code: 2, Stderr: `invalid endpoint "qp=ud": an options-only endpoint needs pkey=`},
		{Args: []string{"can-talk", "0x8001"}, Code: 2, Stderr: "accepts 2 arg(s), received 1"},
		{Args: []string{"can-talk", "0x8001", "0x8001", "0x8001"}, Code: 2, Stderr: "accepts 2 arg(s), received 3"},
		{Args: []string{"--sysfs", cmdtest.MLX5, "can-talk", "lid=3", "0x8001"}, Code: 3, Stderr: `is ib_umad loaded?); without InfiniBand hardware, query a simulated fabric with --ibsim`},
		{Args: []string{"can-talk", "lid=3", "0x8001", "--fabric-file", "nonexistent.json"}, Code: 2, Stderr: `ibkey: --fabric-file: open nonexistent.json: no such file or directory`},
		{Args: []string{"can-talk", "node=HcaB", "0x8001", "--fabric-file", "../../testdata/fabric/partitions.conf"}, Code: 2, Stderr: `ibkey: --fabric-file ../../testdata/fabric/partitions.conf: not JSON`},
		{Args: []string{"can-talk", "0x8001", "0x0002c90300000204"}, Code: 2, Stderr: `ibkey: endpoint "0x0002c90300000204" is a port GUID (0x0002c90300000204): resolving a GUID needs --partitions FILE`},
		{Args: []string{"can-talk", "guid=0002:c903:0000:0204", "0x8001"}, Code: 2, Stderr: `endpoint "guid=0002:c903:0000:0204" is a port GUID`},
		// Bad input is found before the host is read.
		{Args: []string{"--sysfs", "/nonexistent", "can-talk", "mlx5_0/1", "lid=3"}, Code: 3, Stderr: `no local port to send MADs from: no RDMA devices`},
		{Args: []string{"--sysfs", cmdtest.MLX5, "can-talk", "mlx5_9/1", "0x8001"}, Code: 3, Stderr: "ibkey: no device mlx5_9 (devices: irdma0, mlx5_0, mlx5_1, mlx5_2)"},
		{Args: []string{"--sysfs", cmdtest.MLX5, "can-talk", "0x8001", "mlx5_0/2"}, Code: 3, Stderr: "ibkey: no port 2 on mlx5_0 (ports: 1)"},
		{Args: []string{"--sysfs", cmdtest.Dangling, "can-talk", "scif0/1", "0x8001"}, Code: 4, Stderr: "ibkey: not read: device scif0: "}, // exists, not read
		{Args: []string{"--sysfs", cmdtest.MLX5, "can-talk", "0x8001", "irdma0/1"}, Code: 3, Stderr: "ibkey: irdma0/1: no P_Key table: the port has no pkeys/ directory (iWARP devices have none: P_Keys do not apply)"},
		{Args: []string{"--sysfs", "/nonexistent", "can-talk", "mlx5_0/1", "0x8001"}, Code: 3, Stderr: "no RDMA devices"},
		{Args: []string{"--sysfs", cmdtest.MLX5, "can-talk", "ib7", "0x8001"}, Code: 3, Stderr: "ibkey: no device or IPoIB interface ib7 (devices: irdma0, mlx5_0, mlx5_1, mlx5_2; IPoIB interfaces: ib0, ib0.8001, ib0.8002, ib0.8004, ib1)"},
		{Args: []string{"--sysfs", cmdtest.MLX5, "can-talk", "ib0.8001,pkey=0x8002", "0x8001"}, Code: 2, Stderr: `ibkey: endpoint "ib0.8001,pkey=0x8002": ib0.8001 uses P_Key 0x8001 on mlx5_0/1: pkey=0x8002 does not apply (for another entry write mlx5_0/1,pkey=0x8002)`},
	})
	// Two P_Key values need no host at all.
	if r := runIbkey(t, "--sysfs", "/nonexistent", "can-talk", "0x8001", "0x0001"); r.Code != 0 {
		t.Errorf("values without a host: %+v", r)
	}
}

func TestCanTalkCompletion(t *testing.T) {
	cases := []struct {
		args    []string
		want    []string
		notWant []string
	}{
		{[]string{"__complete", "--sysfs", cmdtest.MLX5, "can-talk", ""},
			[]string{"mlx5_0/1\tInfiniBand ACTIVE\n", "mlx5_1/2\tInfiniBand DOWN\n", "mlx5_2/1\tEthernet ACTIVE\n", "0x8001\tfull member of 0x0001\n", "0x0002\tlimited member of 0x0002\n"},
			[]string{"irdma0/1", "0x0000", "0x8000\t"}},
		{[]string{"__complete", "--demo", "can-talk", "mlx5_0/1", ""},
			[]string{"mlx5_1/1\tInfiniBand ACTIVE\n", "0x8003\tfull member of 0x0003\n", "0x7fff\tlimited member of 0x7fff\n"}, nil},
		{[]string{"__complete", "can-talk", "mlx5_0/1,"},
			[]string{"mlx5_0/1,index=\n", "mlx5_0/1,qp=\n", "mlx5_0/1,qkey=\n", ":6\n"}, []string{"port="}},
		{[]string{"__complete", "can-talk", "0x8001,qp=ud,"},
			[]string{"0x8001,qp=ud,wr_qkey=\n"}, nil},
		// Values after KEY=: the whole word, the port's keys and indexes (issue 12).
		{[]string{"__complete", "--demo", "can-talk", "mlx5_0/1,pkey="},
			[]string{"mlx5_0/1,pkey=0x8001\tfull member of 0x0001\n", "mlx5_0/1,pkey=0x0002\tlimited member of 0x0002\n"}, []string{"\\,", "pkey=pkey="}},
		{[]string{"__complete", "--demo", "can-talk", "0x8001", "mlx5_0/1,qp=ud,index="},
			[]string{"mlx5_0/1,qp=ud,index=1\t0x8001 full member of 0x0001\n"}, []string{"index=5\t"}},
		{[]string{"__complete", "--sysfs", cmdtest.MLX5, "can-talk", "mlx5_0/1,index="},
			[]string{"mlx5_0/1,index=1\t"}, []string{"mlx5_0/1,index=3\t"}},
		{[]string{"__complete", "can-talk", "0x8001,qp="}, []string{"0x8001,qp=rc\n", "0x8001,qp=ud\n"}, nil},
		{[]string{"__complete", "can-talk", "--fabric-file", smallFabric, "lid="},
			[]string{"lid=1\tHcaA port 1\n", "lid=2\tSwitch1 port 0\n"}, []string{"lid=0"}},
		{[]string{"__complete", "can-talk", "--fabric-file", smallFabric, "node=Hca"},
			[]string{"node=HcaA\t", "node=HcaD\t"}, nil},
		{[]string{"__complete", "can-talk", "--fabric-file", smallFabric, "node=HcaB,"},
			[]string{"node=HcaB,port=\n"}, nil},
		{[]string{"__complete", "--demo", "can-talk", "lid="}, []string{"lid=3\tlocal mlx5_0/1\n"}, nil},
		// Ports of a partitions.conf.
		{[]string{"__complete", "--sysfs", "/nonexistent", "can-talk", "--partitions", clusterConf, ""}, []string{"0x0002c90300001002\tin mgmt"}, nil},
		{[]string{"__complete", "--sysfs", "/nonexistent", "can-talk", "--partitions", clusterConf, "0x0002c90300001002,"}, []string{"0x0002c90300001002,qp=\n"}, nil},
		{[]string{"__complete", "can-talk", "--sim-node", ""}, nil, []string{"\n:0\n"}},
		{[]string{"__complete", "can-talk", "--mad-timeout", ""}, []string{"500ms\n", "1s\n"}, nil},
		{[]string{"__complete", "--demo", "can-talk", "mlx5_0/1", "mlx5_1/1", ""}, nil, []string{"mlx5", "0x"}},
	}
	for _, tc := range cases {
		r := runIbkey(t, tc.args...)
		for _, w := range tc.want {
			if !strings.Contains(r.Stdout, w) {
				t.Errorf("ibkey %s: want %q in\n%s", strings.Join(tc.args, " "), w, r.Stdout)
			}
		}
		for _, w := range tc.notWant {
			if strings.Contains(r.Stdout, w) {
				t.Errorf("ibkey %s: do not want %q in\n%s", strings.Join(tc.args, " "), w, r.Stdout)
			}
		}
		if !strings.Contains(r.Stdout, ":4\n") && !strings.Contains(r.Stdout, ":6\n") && !strings.Contains(r.Stdout, ":36\n") {
			t.Errorf("ibkey %s: no (or a file-completing) directive in %q", strings.Join(tc.args, " "), r.Stdout)
		}
	}
}

// TestFlagParsing: the endpoints and flags reach the options; nothing runs or is read.
func TestFlagParsing(t *testing.T) {
	r, got := cmdtest.Options(t, NewCmdCanTalk, "--sysfs", "/nonexistent", "can-talk", "node=HcaB", "0x8001", "--partitions", "p.conf", "--allow-both", "--table-size", "64", "--ca", "mlx5_0")
	if r.Code != 0 || got == nil || got.A != "node=HcaB" || got.B != "0x8001" || got.Partitions != "p.conf" ||
		!got.OpenSM.AllowBoth || got.OpenSM.TableSize != 64 || !got.MAD.Explicit() || got.Sweep.MAD != got.MAD {
		t.Fatalf("%+v, options %+v", r, got)
	}
}

// The JSON says when an endpoint was read from the demo host or its fabric
// ("demo": true), as pkeys -o json does; a file's GUIDs read nothing of it.
func TestJSONSaysDemo(t *testing.T) {
	for _, c := range []struct {
		args []string
		demo bool
	}{
		{[]string{"--demo", "can-talk", "mlx5_0/1", "mlx5_1/1", "-o", "json"}, true},
		{[]string{"--demo", "can-talk", "lid=3", "lid=4", "-o", "json"}, true},
		{[]string{"can-talk", "--partitions", "../../../../testdata/partitions/cluster.conf", "--sm-guid", "0x0002c90300001001", "0x0002c90300001002", "0x0002c90300001011", "-o", "json"}, false},
	} {
		r := runIbkey(t, c.args...)
		var doc struct {
			Demo bool `json:"demo"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || doc.Demo != c.demo {
			t.Errorf("%v: demo %v (%v), want %v\n%s", c.args, doc.Demo, err, c.demo, r.Stdout)
		}
	}
}

// TestCanTalkOpenSMConf: --opensm-conf without --partitions resolves GUIDs from its
// partition_config_file (said on stderr), and its guid is the port SELF names: the
// head node then shares the mgmt partition with the login node.
func TestCanTalkOpenSMConf(t *testing.T) {
	file, err := filepath.Abs(clusterConf)
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(t.TempDir(), "opensm.conf")
	if err := os.WriteFile(conf, []byte("partition_config_file "+file+"\nguid 0x0002c90300001001\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runIbkey(t, "can-talk", "--opensm-conf", conf, "0x0002c90300001001", "0x0002c90300001002", "-o", "plain")
	if r.Code != 0 || !strings.Contains(r.Stdout, "0x0030") || !strings.Contains(r.Stderr, "note: reading "+file+", the partition_config_file of "+conf) {
		t.Errorf("can-talk --opensm-conf: exit %d\n%s--- stderr\n%s", r.Code, r.Stdout, r.Stderr)
	}
}
