package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"
)

const (
	clusterConf  = "../../testdata/partitions/cluster.conf"
	mistakesConf = "../../testdata/partitions/mistakes.conf"
	rejectedConf = "../../testdata/partitions/rejected.conf"
	reconfAConf  = "../../testdata/partitions/reconf-a.conf"
	reconfBConf  = "../../testdata/partitions/reconf-b.conf"
	headNode     = "0x0002c90300001001"
)

// TestPartitions runs `ibkey partitions` and `can-talk --partitions` on the sample
// configs and compares stdout and stderr with testdata/TestPartitions/*.golden
// (go test ./cmd/ibkey -update rewrites them).
func TestPartitions(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
	}{
		{"check_clean", []string{"partitions", "check", clusterConf}, 0},
		{"check_warnings", []string{"partitions", "check", mistakesConf}, 0},
		{"check_warnings_strict", []string{"partitions", "check", mistakesConf, "--strict", "--allow-both"}, 1},
		{"check_warnings_json", []string{"partitions", "check", mistakesConf, "-o", "json"}, 0},
		{"check_rejected", []string{"partitions", "check", rejectedConf}, 1},
		{"check_rejected_json", []string{"partitions", "check", rejectedConf, "-o", "json"}, 1},
		{"check_table_overflow", []string{"partitions", "check", clusterConf, "--table-size", "2"}, 0},
		{"show_table", []string{"partitions", "show", clusterConf, "--sm-guid", headNode, "-o", "table"}, 0},
		{"show_plain_extra_guid", []string{"partitions", "show", clusterConf, "0x0002c90300009999"}, 0},
		{"show_json", []string{"partitions", "show", clusterConf, "--sm-guid", headNode, "-o", "json"}, 0},
		{"show_mistakes_both", []string{"partitions", "show", mistakesConf, "--allow-both"}, 0},
		{"show_rejected", []string{"partitions", "show", rejectedConf}, 0},
		{"show_dropped", []string{"partitions", "show", clusterConf, "--table-size", "2"}, 0},
		{"show_previous", []string{"partitions", "show", reconfBConf, "--previous", reconfAConf}, 0},
		{"show_previous_json", []string{"partitions", "show", reconfBConf, "--previous", reconfAConf, "-o", "json"}, 0},
		{"matrix_grid_table", []string{"partitions", "matrix", clusterConf, "--sm-guid", headNode, "-o", "table"}, 0},
		{"matrix_grid_plain", []string{"partitions", "matrix", mistakesConf}, 0},
		{"matrix_grid_json", []string{"partitions", "matrix", clusterConf, "-o", "json"}, 0},
		{"matrix_summary", []string{"partitions", "matrix", clusterConf, "--sm-guid", headNode, "--summary"}, 0},
		{"matrix_summary_nodefault", []string{"partitions", "matrix", mistakesConf, "--summary"}, 0},
		{"matrix_rejected", []string{"partitions", "matrix", rejectedConf}, 0},
		{"cantalk_guids_yes", []string{"can-talk", "--partitions", clusterConf, "0x0002c90300001021", "0x0002c90300001022"}, 0},
		{"cantalk_guids_limited_no", []string{"can-talk", "--partitions", clusterConf, "0x0002c90300001021,pkey=0x0010", "guid=0x0002c90300001022,pkey=0x0010"}, 1},
		{"cantalk_guids_only_default", []string{"can-talk", "--partitions", clusterConf, "0x0002c90300001002", "0x0002c90300001011", "--sm-guid", headNode}, 0},
		{"cantalk_guid_not_in_file", []string{"can-talk", "--partitions", clusterConf, "0x0002c90300009999", "0x0002c90300001011,pkey=0x0010"}, 1},
		{"cantalk_guid_ud_json", []string{"can-talk", "--partitions", clusterConf, "0x0002c90300001011,qp=ud,qkey=0x11", "0x0002c90300001022,qp=ud,qkey=0x11", "-o", "json"}, 0},
		{"cantalk_guid_vs_pkey", []string{"can-talk", "--partitions", clusterConf, "0x0002c90300001002", "0x8030"}, 0},
		{"cantalk_guids_rejected", []string{"can-talk", "--partitions", rejectedConf, "0x0002c90300001011", "0x0002c90300001022"}, 0},
		{"cantalk_guids_nodefault", []string{"can-talk", "--partitions", mistakesConf, "0x0002c90300001021", "0x0002c90300001022"}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runIbkey(t, false, nil, tc.args...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d; stdout:\n%s\nstderr:\n%s", r.code, tc.code, r.stdout, r.stderr)
			}
			if strings.HasSuffix(tc.name, "json") && !json.Valid([]byte(r.stdout)) {
				t.Errorf("not one JSON document:\n%s", r.stdout)
			}
			golden.RequireEqual(t, "$ ibkey "+strings.Join(tc.args, " ")+"\n"+r.stdout+"--- stderr\n"+r.stderr)
		})
	}
}

func TestPartitionsErrors(t *testing.T) {
	cases := []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"partitions", "check", "/nonexistent.conf"}, 2, "ibkey: partitions file: open /nonexistent.conf: no such file or directory"},
		{[]string{"partitions", "check"}, 2, "accepts 1 arg(s), received 0"},
		{[]string{"partitions", "show", clusterConf, "0xzz"}, 2, `invalid GUID "0xzz"`},
		{[]string{"partitions", "show", clusterConf, "--sm-guid", "0"}, 2, `invalid GUID "0": GUID 0 is not a port GUID`},
		{[]string{"partitions", "matrix", clusterConf, "--table-size", "0"}, 2, "invalid --table-size 0 (accepted: 1-65535"},
		{[]string{"can-talk", "0x0002c90300001021", "0x8001"}, 2, "resolving a GUID needs --partitions FILE"},
		{[]string{"can-talk", "--partitions", "/nonexistent.conf", "0x0002c90300001021", "0x8001"}, 2, "ibkey: partitions file: open /nonexistent.conf"},
		{[]string{"can-talk", "--partitions", clusterConf, "0x0002c90300001021,index=1", "0x8001"}, 2, "index= and port= need a port of a sweep"},
	}
	for _, tc := range cases {
		r := runIbkey(t, false, nil, tc.args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.stderr) {
			t.Errorf("ibkey %s: exit %d, stderr %q; want exit %d and %q", strings.Join(tc.args, " "), r.code, r.stderr, tc.code, tc.stderr)
		}
	}
}

func TestPartitionsCompletion(t *testing.T) {
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"__complete", "partitions", "show", clusterConf, ""}, []string{"0x0002c90300001011\tin storage", "0x0002c90300001021\tin storage, compute"}},
		{[]string{"__complete", "--sysfs", "/nonexistent", "can-talk", "--partitions", clusterConf, ""}, []string{"0x0002c90300001002\tin mgmt"}},
		{[]string{"__complete", "--sysfs", "/nonexistent", "can-talk", "--partitions", clusterConf, "0x0002c90300001002,"}, []string{"0x0002c90300001002,qp=ud"}},
		{[]string{"__complete", "partitions", ""}, []string{"check", "show", "matrix"}},
	}
	for _, tc := range cases {
		r := runIbkey(t, false, nil, tc.args...)
		for _, w := range tc.want {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("ibkey %s: want %q in\n%s", strings.Join(tc.args, " "), w, r.stdout)
			}
		}
	}
}
