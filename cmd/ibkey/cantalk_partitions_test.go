package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"
)

// can-talk --partitions on the sample configs (the partitions commands' own tests moved
// to cmd/ibkey/internal/partitions with them; these move with can-talk).

const (
	clusterConf  = "../../testdata/partitions/cluster.conf"
	mistakesConf = "../../testdata/partitions/mistakes.conf"
	rejectedConf = "../../testdata/partitions/rejected.conf"
	reconfAConf  = "../../testdata/partitions/reconf-a.conf"
	reconfBConf  = "../../testdata/partitions/reconf-b.conf"
	headNode     = "0x0002c90300001001"
)

// TestPartitions runs `can-talk --partitions` on the sample configs and compares stdout
// and stderr with testdata/TestPartitions/*.golden (go test ./cmd/ibkey -update
// rewrites them).
func TestPartitions(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
	}{
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
		{[]string{"__complete", "--sysfs", "/nonexistent", "can-talk", "--partitions", clusterConf, ""}, []string{"0x0002c90300001002\tin mgmt"}},
		{[]string{"__complete", "--sysfs", "/nonexistent", "can-talk", "--partitions", clusterConf, "0x0002c90300001002,"}, []string{"0x0002c90300001002,qp=\n"}},
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
