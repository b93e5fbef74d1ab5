package job

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/fakesysfs"
)

// partialFabric is labFabric as a sweep that missed a link: the node behind
// Switch1[5] did not answer. edit, when given, changes the document further.
func partialFabric(t *testing.T, edit ...func(doc map[string]any)) string {
	t.Helper()
	b, err := os.ReadFile(labFabric)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	doc["unreachable"] = []any{map[string]any{"from": map[string]any{"node_guid": "0x0000000000200000", "port": 5}, "dr_path": "0,1,5", "error": "timed out"}}
	for _, e := range edit {
		e(doc)
	}
	if b, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "partial.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A sweep that missed a link is judged on what it read: a host not in it is not
// read (exit 4, not "not found"), a host found may have another adapter behind the
// link not read (exit 4 for an answer that would be a yes), and a definite no
// stands (exit 1). The complete sweep answers as before.
func TestPartialFabricFile(t *testing.T) {
	partial := partialFabric(t)
	for _, c := range []struct {
		file string
		args []string
		code int
		// stderr must hold each; stdout must hold out.
		stderr []string
		out    string
	}{
		{labFabric, []string{"--node", "HcaB,HcaC", "NCCL_IB_PKEY=2"}, 0, nil, "NCCL: works: NCCL_IB_PKEY=2"},
		{partial, []string{"--node", "HcaB,HcaC", "NCCL_IB_PKEY=2"}, 4, []string{"not read: another adapter of HcaB may be in what the sweep did not read: the sweep did not read every link: 1 link with no answer from the far end", "(NCCL could use it)"}, "NCCL: works: NCCL_IB_PKEY=2"},
		{partial, []string{"--node", "HcaB,HcaE", "NCCL_IB_PKEY=2"}, 4, []string{`not read: node "HcaE": not in the sweep, and the sweep did not read every link`}, "HcaE: no port was read: NCCL may use what could not be read"},
		{partial, []string{"--node", "HcaB,HcaE", "NCCL_IB_PKEY=1"}, 1, []string{`not read: node "HcaE"`}, "HcaB/1: NCCL_IB_PKEY index 1 holds 0x0000, an empty entry"},
		{partial, []string{"--lid", "4,99", "NCCL_IB_PKEY=2"}, 4, []string{"not read: lid 99: not in the sweep"}, "lid 99: not read: NCCL may use its ports"},
		{partial, []string{"NCCL_IB_PKEY=0"}, 4, []string{"not read: CA ports not in the sweep: the sweep did not read every link"}, "NCCL: NOT CHECKED"},
		{partial, []string{"--node", "HcaE", "NCCL_IB_PKEY=2"}, 4, []string{`no port of the job was read: node "HcaE": not in the sweep`}, ""},
		{labFabric, []string{"--node", "HcaB,HcaE", "NCCL_IB_PKEY=2"}, 3, []string{`no node "HcaE" in the sweep`}, ""},
	} {
		args := append([]string{"--fabric-file", c.file, "-o", "plain"}, c.args...)
		r := run(t, t.Context(), nil, args...)
		if r.code != c.code || !strings.Contains(r.stdout, c.out) {
			t.Errorf("%s: exit %d, want %d and %q\n%s%s", strings.Join(args, " "), r.code, c.code, c.out, r.stdout, r.stderr)
			continue
		}
		for _, s := range c.stderr {
			if !strings.Contains(r.stderr, s) {
				t.Errorf("%s: %q not on stderr:\n%s", strings.Join(args, " "), s, r.stderr)
			}
		}
	}
}

// A sweep that missed a link, hosts named as rdma-ndd writes them ("HcaB mlx5_0"):
// another adapter of HcaB may be behind the link, and it is none of the host's
// adapters read, so settings that name only those leave it out (a definite yes),
// while a prefix (NCCL_IB_HCA=mlx5_0 takes mlx5_0x) or no filter may use it (4).
func TestPartialFabricNamedAdapters(t *testing.T) {
	path := partialFabric(t, func(doc map[string]any) {
		for _, n := range doc["nodes"].([]any) {
			if n := n.(map[string]any); n["description"] == "HcaB" || n["description"] == "HcaC" {
				n["description"] = n["description"].(string) + " mlx5_0"
			}
		}
	})
	for _, c := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"NCCL_IB_PKEY=2", "NCCL_IB_HCA==mlx5_0"}, 0, "it does not change the answer: with these settings no library checked would use it"},
		{[]string{"NCCL_IB_PKEY=2", "NCCL_IB_HCA=mlx5_0"}, 4, "(NCCL could use it)"},
		{[]string{"NCCL_IB_PKEY=2"}, 4, "(NCCL could use it)"},
	} {
		args := append([]string{"--fabric-file", path, "--node", "HcaB,HcaC", "-o", "plain"}, c.args...)
		r := run(t, t.Context(), nil, args...)
		if r.code != c.code || !strings.Contains(r.stdout, "NCCL: works: NCCL_IB_PKEY=2") || !strings.Contains(r.stderr, "not read: another adapter of HcaB") || !strings.Contains(r.stderr, c.stderr) {
			t.Errorf("%s: exit %d, want %d\n%s%s", strings.Join(c.args, " "), r.code, c.code, r.stdout, r.stderr)
		}
	}
}

// A --host tree of which nothing could be read (its one device a dangling link) is a
// host not read: the other hosts are judged, a definite no stands (exit 1), and a yes
// is not checked (exit 4). Before, the whole read failed (exit 4 for both).
func TestHostTreeNotRead(t *testing.T) {
	good := writeHost(t, gateHost(0x100000, "0xffff", "0x8001"))
	bad := writeHost(t, fakesysfs.Host{Dangling: []string{"mlx5_0"}})
	for _, c := range []struct {
		setting string
		code    int
		out     string
	}{
		{"NCCL_IB_PKEY=1", 4, "b: no port was read: NCCL may use what could not be read (--host b)"},
		{"NCCL_IB_PKEY=2", 1, "a:mlx5_0/1: NCCL_IB_PKEY index 2 holds 0x0000, an empty entry"},
	} {
		r := run(t, t.Context(), nil, "--host", "a="+good, "--host", "b="+bad, "-o", "plain", c.setting)
		if r.code != c.code || !strings.Contains(r.stdout, c.out) {
			t.Errorf("%s: exit %d, want %d and %q\n%s%s", c.setting, r.code, c.code, c.out, r.stdout, r.stderr)
		}
	}
}

// A definite no (exit 1) found while a host of the job was not read says so in -o
// json's incomplete, as a yes turned into exit 4 does; from a complete read it has
// none. Until wave 11 incomplete was on exit 4 only, so a script reading the JSON of
// an exit 1 could not tell that a host was not read.
func TestDefiniteNoWithHostNotReadJSON(t *testing.T) {
	partial := partialFabric(t)
	good := writeHost(t, gateHost(0x100000, "0xffff", "0x8001"))
	bad := writeHost(t, fakesysfs.Host{Dangling: []string{"mlx5_0"}})
	type doc struct {
		Incomplete []struct{ Kind, Message string }
	}
	for _, c := range []struct {
		args    []string
		partial bool
		named   string // in an incomplete message; "" for none
	}{
		{[]string{"--fabric-file", partial, "--node", "HcaB,HcaE", "NCCL_IB_PKEY=1"}, true, `node "HcaE"`},
		{[]string{"--host", "a=" + good, "--host", "b=" + bad, "NCCL_IB_PKEY=2"}, true, "b: no port was read"},
		{[]string{"--fabric-file", labFabric, "--node", "HcaB", "NCCL_IB_PKEY=1"}, false, ""},
	} {
		args := append(c.args, "-o", "json")
		run := run
		if c.partial {
			run = runPartial
		}
		r := run(t, t.Context(), nil, args...)
		var d doc
		if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, r.stdout)
		}
		var msgs []string
		for _, i := range d.Incomplete {
			msgs = append(msgs, i.Kind+": "+i.Message)
		}
		all := strings.Join(msgs, "\n")
		if r.code != 1 || (c.named == "") != (len(msgs) == 0) || !strings.Contains(all, c.named) {
			t.Errorf("%s: exit %d, incomplete %q; want exit 1 and %q\n%s", strings.Join(args, " "), r.code, msgs, c.named, r.stderr)
		}
	}
}

// TestUnreadKinds: -o json's incomplete names what was not read with the kind the
// other commands give the same fact (cmdutil.HostNotRead, the fabric commands): a
// --lid that did not answer is unread-node (as in pkeys, devices, can-talk), a host
// a sweep that missed links may hide is partial-sweep (as in fabric), a host's
// device is unread-device. Until wave 12 every one was unread-device.
func TestUnreadKinds(t *testing.T) {
	bad := writeHost(t, fakesysfs.Host{Dangling: []string{"mlx5_0"}})
	good := writeHost(t, gateHost(0x100000, "0xffff", "0x8001"))
	for _, c := range []struct {
		env  map[string]string
		args []string
		kind string // of the incomplete naming named
		name string
	}{
		{map[string]string{"IBKEY_DEMO": "1"}, []string{"--lid", "4,9,99"}, "unread-node", "not read: lid 99: no answer"},
		{nil, []string{"--fabric-file", partialFabric(t), "--node", "HcaB,HcaE"}, "partial-sweep", `not read: node "HcaE": not in the sweep`},
		{nil, []string{"--fabric-file", partialFabric(t), "--node", "HcaB"}, "partial-sweep", "not read: another adapter of HcaB may be"},
		{nil, []string{"--host", "a=" + good, "--host", "b=" + bad}, "unread-device", "not read: --host b: "},
	} {
		args := append(c.args, "-o", "json", "NCCL_IB_PKEY=0")
		r := runPartial(t, t.Context(), c.env, args...)
		var d struct {
			Incomplete []struct{ Kind, Message string }
		}
		if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, r.stdout)
		}
		found := false
		for _, i := range d.Incomplete {
			if strings.HasPrefix(i.Message, "not read: ") {
				found = found || strings.HasPrefix(i.Message, c.name)
				if i.Kind != c.kind {
					t.Errorf("%s: incomplete %q is %s, want %s", strings.Join(args, " "), i.Message, i.Kind, c.kind)
				}
			}
		}
		if r.code != 4 || !found {
			t.Errorf("%s: exit %d, incomplete %+v; want exit 4 and %s %q", strings.Join(args, " "), r.code, d.Incomplete, c.kind, c.name)
		}
	}
}
