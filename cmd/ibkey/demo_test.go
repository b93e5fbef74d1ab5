package main

import (
	"encoding/json"
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

// TestDemoMissingPort: a port asked for that some nodes of --lid do not have (--port 2
// on the demo's one-port CAs at LIDs 1 and 3, beside the switch at 2) is not read
// there: every command that reads several addresses shows what it read, names each
// address not read on stderr and in -o json's incomplete (unread-node), and exits 4
// (before: exit 3 after the output, the addresses missing from incomplete). When no
// port at all was read it is exit 3, with the ports there are.
func TestDemoMissingPort(t *testing.T) {
	for _, cmd := range [][]string{{"pkeys"}, {"devices"}} {
		r := runIbkey(t, false, nil, append(append([]string{"--demo"}, cmd...), "--lid", "1-3", "--port", "2", "-o", "json")...)
		var doc struct {
			Ports      []struct{ Address string }
			Incomplete []struct{ Kind, Message string }
		}
		if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != 4 {
			t.Fatalf("%s: exit %d (want 4), %v\n%s%s", cmd, r.code, err, r.stdout, r.stderr)
		}
		if len(doc.Ports) != 1 || doc.Ports[0].Address != "lid 2" || len(doc.Incomplete) != 2 {
			t.Errorf("%s: ports %+v, incomplete %+v: want lid 2's port, and lid 1 and lid 3 not read", cmd, doc.Ports, doc.Incomplete)
		}
		for i, lid := range []string{"lid 1", "lid 3"} {
			if i < len(doc.Incomplete) {
				in := doc.Incomplete[i]
				if in.Kind != "unread-node" || !strings.HasPrefix(in.Message, "not read: "+lid+" port 2: ") || !strings.HasSuffix(in.Message, "(ports: 1)") {
					t.Errorf("%s: incomplete[%d] = %+v, want %s port 2 not read, with the CA's ports", cmd, i, in, lid)
				}
			}
		}
		// Both on one line, the reason said once.
		if !strings.Contains(r.stderr, "warning: not read: lid 1 port 2, lid 3 port 2: the CA has no such port (ports: 1)\n") {
			t.Errorf("%s: stderr does not name lid 1 port 2 and lid 3 port 2 on one line:\n%s", cmd, r.stderr)
		}
	}
	r := runIbkey(t, false, nil, "--demo", "watch", "counters", "--once", "--lid", "1-3", "--port", "2", "-o", "json")
	if r.code != 4 || !strings.Contains(r.stdout, `"leaf01"`) || !strings.Contains(r.stderr, "warning: not read: lid 1 port 2, lid 3 port 2: ") {
		t.Errorf("watch counters: exit %d (want 4)\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, cmd := range []string{"pkeys", "devices"} {
		r := runIbkey(t, false, nil, "--demo", cmd, "--lid", "3,4", "--port", "2")
		if r.code != 3 || r.stdout != "" || !strings.Contains(r.stderr, "2 of 2 addresses failed") || !strings.Contains(r.stderr, "(ports: 1)") {
			t.Errorf("%s, none read: exit %d (want 3)\n%s%s", cmd, r.code, r.stdout, r.stderr)
		}
	}
}
