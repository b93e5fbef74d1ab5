package main

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"
)

// can-talk on committed sweeps (--fabric-file): small.json is small.net after OpenSM
// applied testdata/fabric/partitions.conf, small-changed.json the same with Switch1
// port 2's table changed (TestLabFabricFiles in cmd/ibkey/internal/fabric records and
// checks both; the fabric commands' own cases moved there).
const (
	smallFabric   = "testdata/fabric/small.json"
	changedFabric = "testdata/fabric/small-changed.json"
	fabricConf    = "testdata/fabric/partitions.conf"
)

func TestFabricGolden(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
	}{
		{"cantalk_nodes", []string{"can-talk", "--fabric-file", smallFabric, "node=HcaA", "node=HcaB"}, 0},
		{"cantalk_guids_json", []string{"can-talk", "--fabric-file", smallFabric, "0x100007", "0x10000b,qp=ud,qkey=0x11", "-o", "json"}, 0},
		{"cantalk_lids_no", []string{"can-talk", "--fabric-file", smallFabric, "lid=4,pkey=0x0002", "lid=6"}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runIbkey(t, false, nil, tc.args...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, tc.code, r.stderr)
			}
			golden.RequireEqual(t, "$ ibkey "+strings.Join(tc.args, " ")+"\n"+r.stdout+"--- stderr\n"+r.stderr)
		})
	}
}

func TestFabricErrors(t *testing.T) {
	cases := []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"can-talk", "--fabric-file", smallFabric, "node=HcaD", "0x8001"}, 2, `endpoint "node=HcaD": HcaD has ports 1, 2: add ,port=P`},
		{[]string{"can-talk", "--fabric-file", smallFabric, "node=HcaZ", "0x8001"}, 3, `no node "HcaZ" in the sweep (nodes: HcaA, HcaB, HcaC, HcaD, Switch1, Switch2)`},
		{[]string{"can-talk", "--fabric-file", smallFabric, "lid=99", "0x8001"}, 3, "no LID 99 in the sweep (LIDs: 1-7)"},
		{[]string{"can-talk", "--fabric-file", smallFabric, "node=HcaA,port=3", "0x8001"}, 3, "no port 3 on HcaA (ports: 1, 2)"},
		{[]string{"can-talk", "--fabric-file", smallFabric, "0x100002", "0x8001"}, 3, "no node with node or port GUID 0x0000000000100002 in the sweep"},
		{[]string{"can-talk", "--fabric-file", smallFabric, "node=HcaA,port=2", "0x8001"}, 3, `HcaA/2: P_Key table not read in the sweep: not read: the port is DOWN`},
	}
	for _, tc := range cases {
		r := runIbkey(t, false, nil, tc.args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.stderr) {
			t.Errorf("ibkey %s: exit %d, stderr %q; want exit %d and %q", strings.Join(tc.args, " "), r.code, r.stderr, tc.code, tc.stderr)
		}
	}
}
