package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"
)

const cantalkFixture = "../../testdata/sysfs/cantalk"

// TestCanTalk runs `ibkey can-talk` through the command and compares stdout and stderr
// with testdata/TestCanTalk/*.golden (go test ./cmd/ibkey -update rewrites them).
func TestCanTalk(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
	}{
		// Ports (fixtures testdata/sysfs/mlx5 and testdata/sysfs/cantalk).
		{"ports_only_default", []string{"--sysfs", cantalkFixture, "can-talk", "hca0/1", "hca1/1"}, 0},
		{"ports_one_side_limited", []string{"--sysfs", mlx5, "can-talk", "mlx5_0/1", "mlx5_1/1"}, 0},
		{"ports_one_side_limited_json", []string{"--sysfs", mlx5, "can-talk", "mlx5_0/1", "mlx5_1/1", "-o", "json"}, 0},
		{"ports_share_none", []string{"--sysfs", cantalkFixture, "can-talk", "hca1/1", "hca2/1"}, 1},
		{"ports_all_limited_table", []string{"--sysfs", cantalkFixture, "can-talk", "hca3/1", "hca4/1", "-o", "table"}, 1},
		{"ports_all_limited_json", []string{"--sysfs", cantalkFixture, "can-talk", "hca3/1", "hca4/1", "-o", "json"}, 1},
		{"port_holes_every_valid_entry", []string{"--sysfs", mlx5, "can-talk", "mlx5_0/1", "0x0010"}, 0},
		{"port_index_on_hole", []string{"--sysfs", mlx5, "can-talk", "mlx5_0/1,index=3", "0x8001"}, 1},
		{"port_index_out_of_range", []string{"--sysfs", mlx5, "can-talk", "mlx5_0/1,index=300", "0x8001"}, 1},
		{"port_key_both_full_and_limited", []string{"--sysfs", mlx5, "can-talk", "mlx5_0/1", "0x0005"}, 0},
		{"port_key_both_pinned_limited", []string{"--sysfs", mlx5, "can-talk", "mlx5_0/1,index=5", "0x0005"}, 1},
		{"port_pkey_option_picks_full", []string{"--sysfs", mlx5, "can-talk", "mlx5_0/1,pkey=0x0005", "0x0005"}, 0},
		{"port_pkey_not_in_table", []string{"--sysfs", mlx5, "can-talk", "mlx5_0/1,pkey=0x0009", "0x8009"}, 1},
		{"port_pkey_not_in_table_json", []string{"--sysfs", mlx5, "can-talk", "0x8009", "mlx5_0/1,pkey=0x0009", "-o", "json"}, 1},
		{"port_down_warns", []string{"--sysfs", mlx5, "can-talk", "mlx5_0/1", "mlx5_1/2"}, 0},
		{"port_roce_warns", []string{"--sysfs", mlx5, "can-talk", "mlx5_2/1", "0xffff"}, 0},
		{"ports_infiniband_vs_roce_no", []string{"--sysfs", mlx5, "can-talk", "mlx5_0/1", "mlx5_2/1"}, 1},
		{"demo_ports_table", []string{"--demo", "can-talk", "mlx5_0/1", "mlx5_1/1", "-o", "table"}, 0},
		// Seed 000's four QPs: A 0x8001, B 0x0001, C 0x0001, D 0x8002.
		{"seed_a_b", []string{"can-talk", "0x8001", "0x0001"}, 0},
		{"seed_b_c", []string{"can-talk", "0x0001", "0x0001"}, 1},
		{"seed_d_a", []string{"can-talk", "0x8002", "0x8001"}, 1},
		{"seed_a_b_json", []string{"can-talk", "0x8001", "0x0001", "-o", "json"}, 0},
		// Q_Keys.
		{"qkey_mismatch", []string{"can-talk", "pkey=0x8001,qp=ud,qkey=0x11", "pkey=0x0001,qp=ud,qkey=0x12"}, 1},
		{"qkey_mismatch_json", []string{"can-talk", "pkey=0x8001,qp=ud,qkey=0x11", "pkey=0x0001,qp=ud,qkey=0x12", "-o", "json"}, 1},
		{"wr_qkey_top_bit_uses_context", []string{"can-talk", "pkey=0x8001,qp=ud,qkey=0x11,wr_qkey=0x80000000", "pkey=0x0001,qp=ud,qkey=0x11"}, 0},
		{"wr_qkey_one_way", []string{"can-talk", "pkey=0x8001,qp=ud,qkey=0x11,wr_qkey=0x12", "pkey=0x0001,qp=ud,qkey=0x11"}, 1},
		{"wr_qkey_one_way_json", []string{"can-talk", "pkey=0x8001,qp=ud,qkey=0x11,wr_qkey=0x12", "pkey=0x0001,qp=ud,qkey=0x11", "-o", "json"}, 1},
		{"qkey_not_checked", []string{"can-talk", "0x8001,qp=ud", "0x0001,qp=ud,qkey=0x11"}, 0},
		{"rc_qkey_ignored", []string{"can-talk", "0x8001,qp=rc,qkey=0x11", "0x0001,qp=rc,qkey=0x12"}, 0},
		{"ud_vs_rc", []string{"can-talk", "0x8001,qp=ud", "0x0001,qp=rc"}, 1},
		{"port_ud_qkeys", []string{"--sysfs", mlx5, "can-talk", "mlx5_0/1,pkey=0x8001,qp=ud,qkey=0x11", "mlx5_1/1,index=1,qp=ud,qkey=0x11"}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runIbkey(t, false, nil, tc.args...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d; stdout:\n%s\nstderr:\n%s", r.code, tc.code, r.stdout, r.stderr)
			}
			if strings.Contains(strings.Join(tc.args, " "), "-o json") {
				var doc map[string]any
				if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
					t.Fatalf("not one JSON document: %v\n%s", err, r.stdout)
				}
				if doc["can_talk"] != (tc.code == 0) {
					t.Errorf("can_talk = %v with exit %d", doc["can_talk"], tc.code)
				}
				if _, ok := doc["reasons"].([]any); !ok {
					t.Errorf("no reasons array: %v", doc["reasons"])
				}
			}
			golden.RequireEqual(t, "$ ibkey "+strings.Join(tc.args, " ")+"\n"+r.stdout+"--- stderr\n"+r.stderr)
		})
	}
}

// TestCanTalkSeedExample checks every pair of seed 000's QPs both ways: the verdict line
// and the exit code.
func TestCanTalkSeedExample(t *testing.T) {
	qps := map[string]string{"A": "0x8001", "B": "0x0001", "C": "0x0001", "D": "0x8002"}
	yes := map[string]bool{"AB": true, "AC": true}
	for _, pair := range []string{"AB", "AC", "AD", "BC", "BD", "CD"} {
		for _, p := range []string{pair, string([]byte{pair[1], pair[0]})} {
			a, b := qps[p[:1]], qps[p[1:]]
			r := runIbkey(t, false, nil, "can-talk", a, b)
			want, code := "NO: ", exitNo
			if yes[pair] {
				want, code = "YES: ", exitOK
			}
			if r.code != code || !strings.HasPrefix(r.stdout, want) {
				t.Errorf("QP%s QP%s (can-talk %s %s): exit %d, stdout %q; want exit %d and %q", p[:1], p[1:], a, b, r.code, r.stdout, code, want)
			}
		}
	}
}

// TestCanTalkErrors: bad input exits 2 with one line naming the token, missing devices
// and ports exit 3 listing what exists.
func TestCanTalkErrors(t *testing.T) {
	cases := []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"can-talk", "mlx5_0", "0x8001"}, 2, `ibkey: invalid endpoint "mlx5_0": not a P_Key or GUID (hex); a port is written DEV/PORT, e.g. mlx5_0/1 (accepted: PKEY`},
		{[]string{"can-talk", "0x8001", "0x8001,foo=1"}, 2, `ibkey: endpoint "0x8001,foo=1": invalid endpoint option "foo=1": unknown option "foo"`},
		{[]string{"can-talk", "pkey=0xzz,qp=ud", "0x8001"}, 2, `ibkey: endpoint "pkey=0xzz,qp=ud": invalid P_Key "0xzz": "z" is not a hex digit`},
		{[]string{"can-talk", "0x8001,qp=xx", "0x8001"}, 2, `QP type "xx" is not rc, uc or ud`},
		{[]string{"can-talk", "0x10000", "0x8001"}, 2, `endpoint "0x10000" is a port GUID (0x0000000000010000) (if you meant a P_Key: a P_Key is at most 0xffff)`},
		{[]string{"can-talk", "0x8001,pkey=0x10000", "0x8001"}, 2, `P_Key given twice`},
		{[]string{"can-talk", "mlx5_0/1,pkey=0x10000", "0x8001"}, 2, `invalid P_Key "0x10000": larger than 0xffff`},
		{[]string{"can-talk", "0x8001", "qp=ud"}, 2, `invalid endpoint "qp=ud": an options-only endpoint needs pkey=`},
		{[]string{"can-talk", "0x8001"}, 2, "accepts 2 arg(s), received 1"},
		{[]string{"can-talk", "0x8001", "0x8001", "0x8001"}, 2, "accepts 2 arg(s), received 3"},
		{[]string{"--sysfs", mlx5, "can-talk", "lid=3", "0x8001"}, 3, `is ib_umad loaded?); without InfiniBand hardware, query a simulated fabric with --ibsim`},
		{[]string{"can-talk", "lid=3", "0x8001", "--fabric-file", "nonexistent.json"}, 2, `ibkey: --fabric-file: open nonexistent.json: no such file or directory`},
		{[]string{"can-talk", "node=HcaB", "0x8001", "--fabric-file", "testdata/fabric/partitions.conf"}, 2, `ibkey: --fabric-file testdata/fabric/partitions.conf: not JSON`},
		{[]string{"can-talk", "0x8001", "0x0002c90300000204"}, 2, `ibkey: endpoint "0x0002c90300000204" is a port GUID (0x0002c90300000204): resolving a GUID needs --partitions FILE`},
		{[]string{"can-talk", "guid=0002:c903:0000:0204", "0x8001"}, 2, `endpoint "guid=0002:c903:0000:0204" is a port GUID`},
		// Bad input is found before the host is read.
		{[]string{"--sysfs", "/nonexistent", "can-talk", "mlx5_0/1", "lid=3"}, 3, `no local port to send MADs from: no RDMA devices`},
		{[]string{"--sysfs", mlx5, "can-talk", "mlx5_9/1", "0x8001"}, 3, "ibkey: no device mlx5_9 (devices: irdma0, mlx5_0, mlx5_1, mlx5_2)"},
		{[]string{"--sysfs", mlx5, "can-talk", "0x8001", "mlx5_0/2"}, 3, "ibkey: no port 2 on mlx5_0 (ports: 1)"},
		{[]string{"--sysfs", mlx5, "can-talk", "0x8001", "irdma0/1"}, 3, "ibkey: irdma0/1: no P_Key table: the port has no pkeys/ directory (iWARP devices have none: P_Keys do not apply)"},
		{[]string{"--sysfs", mlx5, "can-talk", "mlx5_1/1,index=3", "0x8001"}, 3, "ibkey: mlx5_1/1: P_Key table entry 3 could not be read"},
		{[]string{"--sysfs", "/nonexistent", "can-talk", "mlx5_0/1", "0x8001"}, 3, "no RDMA devices"},
	}
	for _, tc := range cases {
		r := runIbkey(t, false, nil, tc.args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.stderr) {
			t.Errorf("ibkey %s: exit %d, stderr %q; want exit %d and %q", strings.Join(tc.args, " "), r.code, r.stderr, tc.code, tc.stderr)
		}
		if r.stdout != "" {
			t.Errorf("ibkey %s: stdout %q on error", strings.Join(tc.args, " "), r.stdout)
		}
		if strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
			t.Errorf("ibkey %s: error spans several lines: %q", strings.Join(tc.args, " "), r.stderr)
		}
	}
	// Two P_Key values need no host at all.
	if r := runIbkey(t, false, nil, "--sysfs", "/nonexistent", "can-talk", "0x8001", "0x0001"); r.code != 0 {
		t.Errorf("values without a host: %+v", r)
	}
}

func TestCanTalkCompletion(t *testing.T) {
	cases := []struct {
		args    []string
		want    []string
		notWant []string
	}{
		{[]string{"__complete", "--sysfs", mlx5, "can-talk", ""},
			[]string{"mlx5_0/1\tInfiniBand ACTIVE\n", "mlx5_1/2\tInfiniBand DOWN\n", "mlx5_2/1\tEthernet ACTIVE\n", "0x8001\tfull member of 0x0001\n", "0x0002\tlimited member of 0x0002\n"},
			[]string{"irdma0/1", "0x0000", "0x8000\t"}},
		{[]string{"__complete", "--demo", "can-talk", "mlx5_0/1", ""},
			[]string{"mlx5_1/1\tInfiniBand ACTIVE\n", "0x8003\tfull member of 0x0003\n", "0x7fff\tlimited member of 0x7fff\n"}, nil},
		{[]string{"__complete", "can-talk", "mlx5_0/1,"},
			[]string{"mlx5_0/1,index=\n", "mlx5_0/1,qp=ud\n", "mlx5_0/1,qkey=\n"}, nil},
		{[]string{"__complete", "can-talk", "0x8001,qp=ud,"},
			[]string{"0x8001,qp=ud,wr_qkey=\n"}, nil},
		{[]string{"__complete", "--demo", "can-talk", "mlx5_0/1", "mlx5_1/1", ""}, nil, []string{"mlx5", "0x"}},
	}
	for _, tc := range cases {
		r := runIbkey(t, false, nil, tc.args...)
		for _, w := range tc.want {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("ibkey %s: want %q in\n%s", strings.Join(tc.args, " "), w, r.stdout)
			}
		}
		for _, w := range tc.notWant {
			if strings.Contains(r.stdout, w) {
				t.Errorf("ibkey %s: do not want %q in\n%s", strings.Join(tc.args, " "), w, r.stdout)
			}
		}
		if !strings.Contains(r.stdout, ":4\n") && !strings.Contains(r.stdout, ":6\n") {
			t.Errorf("ibkey %s: no (or a file-completing) directive in %q", strings.Join(tc.args, " "), r.stdout)
		}
	}
}
