package main

import (
	"strings"
	"testing"
)

// TestDemoCoversEveryCommand (issue 25 item 10): with --demo, the commands that read a
// fabric run on the embedded demo fabric (internal/demo) instead of refusing ("the
// demo host has no fabric to query"), and say it is the demo fabric.
func TestDemoCoversEveryCommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		out  string // in stdout
	}{
		{[]string{"fabric", "discover"}, 0, `"storage01"[1]`},
		{[]string{"fabric", "pkeys"}, 0, "0xffff,0x8001,0x8010"},
		{[]string{"fabric", "pkeys", "--key", "0x0010"}, 0, "storage01"},
		{[]string{"fabric", "check"}, 1, "[hca-key-not-on-switch]"},
		{[]string{"can-talk", "node=storage01", "node=node02"}, 0, "YES"},
		{[]string{"can-talk", "lid=9", "node=gpu01"}, 1, "both ends are limited members of the default partition"},
		{[]string{"can-talk", "lid=6,pkey=0x8010", "node=sm01"}, 1, `"leaf02"[2], the switch port facing "storage01"[1], lacks partition 0x0010 and enforces partitions`},
		{[]string{"can-talk", "mlx5_0/1", "node=gpu01"}, 0, "index 3 on mlx5_0/1 (0x8003, full)"},
		{[]string{"pkeys", "--lid", "8"}, 0, "gpu01/1"},
		{[]string{"pkeys", "--guid", "0x0002c90300a00041"}, 0, "storage01/1"},
		{[]string{"job", "--node", "node02,node03"}, 0, "node03/1"},
		{[]string{"watch", "counters", "--lid", "3", "--once"}, 0, "demo-node HCA-1/1"},
		{[]string{"exporter", "--lid", "4", "--once"}, 0, `node_name="node02"`},
	} {
		r := runIbkey(t, false, nil, append([]string{"--demo"}, tc.args...)...)
		if r.code != tc.code || !strings.Contains(r.stdout, tc.out) {
			t.Errorf("ibkey --demo %s: exit %d, want %d with %q\n%s%s", strings.Join(tc.args, " "), r.code, tc.code, tc.out, r.stdout, r.stderr)
		}
		if strings.Contains(r.stderr, "no fabric to query") {
			t.Errorf("ibkey --demo %s refused: %s", strings.Join(tc.args, " "), r.stderr)
		}
	}
	// The sweep names its source: nobody mistakes it for their fabric.
	r := runIbkey(t, false, nil, "--demo", "fabric", "pkeys")
	if !strings.Contains(r.stderr, "swept via the demo fabric (embedded sample data, not a real fabric) at mlx5_0/1") {
		t.Errorf("fabric pkeys: the source is not named:\n%s", r.stderr)
	}
	// --ca chooses the demo host's other cabled port; one not cabled says which are.
	if r := runIbkey(t, false, nil, "--demo", "pkeys", "--lid", "3", "--ca", "mlx5_1"); r.code != 0 || !strings.Contains(r.stderr, "at mlx5_1/1") {
		t.Errorf("--ca mlx5_1: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runIbkey(t, false, nil, "--demo", "pkeys", "--lid", "3", "--ca", "mlx5_2"); r.code != 3 || !strings.Contains(r.stderr, "mlx5_0/1, mlx5_1/1") {
		t.Errorf("--ca mlx5_2 (RoCE): exit %d\n%s", r.code, r.stderr)
	}
}
