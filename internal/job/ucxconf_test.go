package job

import (
	"fmt"
	"strings"
	"testing"
)

// iniLines runs ucxINI over s: "section|name=value" for each handler call, and the
// first line in error.
func iniLines(s string) ([]string, int) {
	var out []string
	bad := ucxINI([]byte(s), func(section, name, value string, _ int) bool {
		out = append(out, section+"|"+name+"="+value)
		return true
	})
	return out, bad
}

// inih as UCX builds it (src/ucs/config/ini.c, ini.h).
func TestUCXINI(t *testing.T) {
	long := strings.Repeat("x", 250)
	for _, c := range []struct {
		in   string
		want []string
		bad  int
	}{
		{"A=1\n", []string{"|A=1"}, 0},
		{" \tA \t=\t 0x12 \t\r\n", []string{"|A=0x12"}, 0},
		{"A:1\n", []string{"|A=1"}, 0},
		{"A=b:c\nB:c=d\n", []string{"|A=b:c", "|B=c=d"}, 0},
		// Comments: ';' and '#' starting a line; ';' after white space inline; '#'
		// inline is kept, as are quotes.
		{"; A=1\n# A=2\n  ;A=3\nA=4 ; four\nB=5;x\nC=6 # six\nD=\"7\"\n", []string{"|A=4", "|B=5;x", "|C=6 # six", `|D="7"`}, 0},
		{"A= ;x\n", []string{"|A="}, 0},
		// Sections are passed on (the handler ignores them up to UCX 1.16).
		{"[ib]\nA=1\n[x ; y]\n", []string{"ib|A=1"}, 3},
		{"[no end\nA=1\n", []string{"|A=1"}, 1},
		// A line without '=' or ':' is an error; what follows is still read.
		{"garbage\nA=1\nmore\n", []string{"|A=1"}, 1},
		{"A ;=1\n", nil, 1},
		// Continuation: an indented line after a name=value line gives that name the
		// whole line (inline comment and all); a blank line or comment does not end
		// it, a section does.
		{"A=1\n  2 ; two\n", []string{"|A=1", "|A=2 ; two"}, 0},
		{"A=1\n\n# c\n\tB=3\n", []string{"|A=1", "|A=B=3"}, 0},
		{"A=1\n[s]\n  B=2\n", []string{"|A=1", "s|B=2"}, 0},
		{"  A=1\n", []string{"|A=1"}, 0},
		// A UTF-8 BOM on the first line is skipped; it counts as leading space.
		{"\xef\xbb\xbfA=1\n", []string{"|A=1"}, 0},
		{"A=1\n\xef\xbb\xbfB=2\n", []string{"|A=1", "|\xef\xbb\xbfB=2"}, 0},
		// fgets into 200 bytes: a longer line is read as several (the rest here is a
		// line without '=').
		{"A=" + long + "\n", []string{"|A=" + long[:197]}, 2},
		{"A=" + long[:197] + "B=2\n", []string{"|A=" + long[:197], "|B=2"}, 0},
		{"A=" + long[:197] + "  B=2\n", []string{"|A=" + long[:197], "|A=B=2"}, 0},
		// A NUL ends the line's text.
		{"A=1\x00B=2\nC=3", []string{"|A=1", "|C=3"}, 0},
		// Names are kept as written (case, inner spaces); an empty one is passed on.
		{"ucx_ib_pkey=1\nUCX IB=2\n=3\n", []string{"|ucx_ib_pkey=1", "|UCX IB=2", "|=3"}, 0},
	} {
		got, bad := iniLines(c.in)
		if fmt.Sprint(got) != fmt.Sprint(c.want) || bad != c.bad {
			t.Errorf("%q: %q, error line %d; want %q, %d", c.in, got, bad, c.want, c.bad)
		}
	}
	// The previous name is kept to 49 bytes for a continuation line.
	name := strings.Repeat("N", 60)
	got, _ := iniLines(name + "=1\n 2\n")
	if want := []string{"|" + name + "=1", "|" + name[:49] + "=2"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("long name: %q, want %q", got, want)
	}
}

// The files, in UCX's order, each later one (and line) winning; UCX 1.11's reading
// (the configuration directory's file, first line winning); missing and unread.
func TestReadUCXFiles(t *testing.T) {
	fsys := mapMCA{files: map[string]string{
		"/etc/ucx/ucx.conf": "UCX_IB_PKEY=0x1\nUCX_IB_PKEY=0x2\nUCX_TLS=rc\n",
		"/home/u/ucx.conf":  "UCX_IB_PKEY=0x3\nUCX_NET_DEVICES=mlx5_0:1\n",
		"/cfg/ucx.conf":     "UCX_IB_PKEY=0x4\n",
		"./ucx.conf":        "UCX_NET_DEVICES=mlx5_1:1\nbad line\n",
	}}
	u := ReadUCXFiles(Env{"HOME": "/home/u", "UCX_CONFIG_DIR": "/cfg"}, fsys)
	if want := "[/etc/ucx/ucx.conf /home/u/ucx.conf /cfg/ucx.conf ./ucx.conf]"; fmt.Sprint(u.Read) != want {
		t.Errorf("read %v, want %s", u.Read, want)
	}
	for name, want := range map[string]string{"UCX_IB_PKEY": "0x4", "UCX_NET_DEVICES": "mlx5_1:1", "UCX_TLS": "rc"} {
		if u.Values[name].Value != want {
			t.Errorf("%s=%q, want %q", name, u.Values[name].Value, want)
		}
	}
	if v := u.Early["UCX_IB_PKEY"]; v.Value != "0x1" || v.Line != 1 || len(u.Early) != 2 {
		t.Errorf("UCX 1.11: %v", u.Early)
	}
	if fmt.Sprint(u.Errors) != "[./ucx.conf line 2]" {
		t.Errorf("errors %v", u.Errors)
	}
	// HOME unset: not read; set empty: "/ucx.conf", as getenv gives "".
	u = ReadUCXFiles(Env{"UCX_CONFIG_DIR": ""}, mapMCA{deny: []string{"/ucx.conf"}})
	if fmt.Sprint(u.Missing) != "[/etc/ucx/ucx.conf ./ucx.conf]" || len(u.Unread) != 1 || !strings.Contains(u.Unread[0], "/ucx.conf") {
		t.Errorf("missing %v, unread %v", u.Missing, u.Unread)
	}
	// UCX 1.17.0's section filters: a line after one may be left out.
	u = ReadUCXFiles(Env{}, mapMCA{files: map[string]string{"./ucx.conf": "UCX_TLS=rc\n[Grace]\nUCX_RC_PKEY=0x5\nCPU model=Grace\nUCX_IB_PKEY=0x6\n[all]\nUCX_TLS=ud\n"}})
	if _, ok := u.Filtered["UCX_IB_PKEY"]; !ok || len(u.Filtered) != 2 || u.Values["UCX_IB_PKEY"].Value != "0x6" {
		t.Errorf("filtered %v", u.Filtered)
	}
}

// ucxConf is the inputs of a job whose environment is kv and whose host's files are
// files (path to content).
func ucxConf(files map[string]string, kv ...string) Inputs {
	in := env(kv...)
	all := Env{"HOME": "/home/u"}
	for k, v := range in.Env {
		all[k] = v
	}
	in.UCX = ReadUCXFiles(all, mapMCA{files: files})
	return in
}

// A value from a ucx.conf is the environment's when the environment does not set
// it, and is parsed the same way; where UCX before 1.11 (no file) or 1.11 (only
// /etc/ucx/ucx.conf) would do otherwise, the pick is not checked.
func TestUCXConfPKey(t *testing.T) {
	tbl := []int{0xffff, 0x8002, 0x0003}
	home := func(s string) map[string]string { return map[string]string{"/home/u/ucx.conf": s} }
	runPicks(t, &UCX, []pickCase{
		{"no file", ucxConf(nil), tbl, Uses, 0, 0xffff, ""},
		// Every version agrees: 0x7fff is what auto takes here.
		{"home 0x7fff", ucxConf(home("UCX_IB_PKEY=0x7fff\n")), tbl, Uses, 0, 0xffff, "is from /home/u/ucx.conf line 1"},
		{"home 0x0002", ucxConf(home("UCX_IB_PKEY=0x0002\n")), tbl, NotChecked, -1, 0, "UCX before 1.12.0 (1.11 reads only /etc/ucx/ucx.conf, older UCX no ucx.conf): index 0, 0xffff"},
		// The environment beats every file.
		{"env beats", ucxConf(home("UCX_IB_PKEY=0x0002\n"), "UCX_IB_PKEY=auto"), tbl, Uses, 0, 0xffff, ""},
		// The configuration directory's file: UCX 1.11 reads it too.
		{"etc", ucxConf(map[string]string{"/etc/ucx/ucx.conf": "UCX_IB_PKEY=0x0002\n"}), tbl, NotChecked, -1, 0, "UCX 1.11.0 and later: index 1, 0x8002; UCX before 1.11.0"},
		// UCX 1.11 keeps a name's first line, 1.12 and later the last.
		{"etc twice", ucxConf(map[string]string{"/etc/ucx/ucx.conf": "UCX_IB_PKEY=0x0002\nUCX_IB_PKEY=0x7fff\n"}), tbl, NotChecked, -1, 0, "UCX 1.11 (it reads only /etc/ucx/ucx.conf, a name's first line): index 1, 0x8002"},
		// A later file beats an earlier one.
		{"cwd beats home", ucxConf(map[string]string{"/home/u/ucx.conf": "UCX_IB_PKEY=0x0002\n", "./ucx.conf": "UCX_IB_PKEY=0x7fff\n"}), tbl, Uses, 0, 0xffff, "./ucx.conf line 1"},
		// A value UCX refuses: 1.12 and later refuse it, older UCX does not read it.
		{"refused", ucxConf(home("UCX_IB_PKEY=8002\n")), tbl, NotChecked, -1, 0, "UCX 1.12.0 and later: UCX rejects UCX_IB_PKEY=8002"},
		// Commented out, or a continuation of another name.
		{"comment", ucxConf(home("# UCX_IB_PKEY=0x0002\nUCX_LOG_LEVEL=info\n  UCX_IB_PKEY=0x0002\n")), tbl, Uses, 0, 0xffff, ""},
		// Not read: not checked, whatever the environment sets but UCX_TLS.
		{"unread", Inputs{Env: Env{"UCX_IB_PKEY": "0x7fff"}, UCX: ReadUCXFiles(Env{"HOME": "/home/u"}, mapMCA{deny: []string{"/home/u/ucx.conf"}})}, tbl, NotChecked, -1, 0, "could not be read (open /home/u/ucx.conf: permission denied)"},
		// A section filter (UCX 1.17.0) may leave the line out.
		{"filtered", ucxConf(home("[Grace]\nCPU model=Grace\nUCX_IB_PKEY=0x7fff\n")), tbl, NotChecked, -1, 0, `follows "CPU model=Grace" in section [Grace]`},
	})
}

// Ports: a UCX_NET_DEVICES from a file selects them for UCX 1.11 and later; a
// port only one reading selects is not checked. UCX_TLS=tcp in a file: UCX 1.12
// and later open no RDMA port, older UCX does: not checked.
func TestUCXConfPorts(t *testing.T) {
	a, b := port("h", "mlx5_0", 1, 0xffff), port("h", "mlx5_1", 1, 0xffff)
	in := ucxConf(map[string]string{"/home/u/ucx.conf": "UCX_NET_DEVICES=mlx5_0:1\n"})
	r := Resolve([]*Library{&UCX}, in, []*Port{a, b})[0]
	if !r.Ports[0].Used || r.Ports[0].Outcome != Uses || !r.Ports[1].Used || r.Ports[1].Outcome != NotChecked || !strings.Contains(r.Ports[1].Problem, "UCX 1.12.0 and later: does not use it") {
		t.Errorf("UCX_NET_DEVICES from a file: %+v", r.Ports)
	}
	in = ucxConf(map[string]string{"/home/u/ucx.conf": "UCX_TLS=tcp\n"})
	r = Resolve([]*Library{&UCX}, in, []*Port{a})[0]
	if r.Verdict != Incomplete || !strings.Contains(strings.Join(r.Unchecked, "\n"), "UCX opens no InfiniBand or RoCE transport") {
		t.Errorf("UCX_TLS=tcp from a file: %s %q", r.Verdict, r.Unchecked)
	}
	// Set in the environment, UCX_TLS=tcp stands whatever a file says.
	in = ucxConf(map[string]string{"/home/u/ucx.conf": "UCX_TLS=rc\n"}, "UCX_TLS=tcp")
	if r := Resolve([]*Library{&UCX}, in, []*Port{a})[0]; r.Inactive == "" {
		t.Errorf("UCX_TLS=tcp from the environment: %s %q", r.Verdict, r.Unchecked)
	}
	// Without --lib, a UCX variable in a file makes UCX a library the job uses.
	// A P_Key set in a file makes UCX one the job uses; the file's other settings
	// are the install's, as in Open MPI's and NCCL's files.
	if !UCX.Mentioned(ucxConf(map[string]string{"./ucx.conf": "UCX_IB_PKEY=0x8001\n"})) || UCX.Mentioned(ucxConf(map[string]string{"./ucx.conf": "UCX_NET_DEVICES=mlx5_0:1\n"})) ||
		UCX.Mentioned(ucxConf(map[string]string{"./ucx.conf": "UCX_LOG_LEVEL=info\n"})) {
		t.Error("Mentioned does not follow ucx.conf")
	}
}

// --want: an exported UCX_IB_PKEY beats every ucx.conf in every version, so a
// file's UCX_IB_PKEY (even one UCX refuses) leaves the wanted setting checked; a
// file's UCX_TLS=tcp, which no export of UCX_IB_PKEY changes, does not.
func TestUCXConfWant(t *testing.T) {
	p := port("h", "mlx5_0", 1, 0xffff)
	for _, c := range []struct {
		file string
		want Verdict
	}{
		{"UCX_IB_PKEY=8001\n", Works},
		{"UCX_IB_PKEY=0x1234\n", Works},
		{"UCX_TLS=tcp\n", Incomplete},
	} {
		in := ucxConf(map[string]string{"/home/u/ucx.conf": c.file})
		if w := WantPartition([]*Library{&UCX}, in, 0xffff, []*Port{p})[0]; w.Verdict != c.want {
			t.Errorf("%q: --want %s %q, want %s", c.file, w.Verdict, w.Unchecked, c.want)
		}
		if r := Resolve([]*Library{&UCX}, in, []*Port{p})[0]; r.Verdict != Incomplete {
			t.Errorf("%q: resolved %s, want not checked", c.file, r.Verdict)
		}
	}
}

// The environment's UCX_TLS without an InfiniBand transport decides, whatever a
// section filter may leave out of a file.
func TestUCXConfTLSFromEnvironment(t *testing.T) {
	in := ucxConf(map[string]string{"/home/u/ucx.conf": "[Grace]\nCPU model=Grace\nUCX_IB_PKEY=0x7fff\n"}, "UCX_TLS=tcp")
	if r := Resolve([]*Library{&UCX}, in, []*Port{port("h", "mlx5_0", 1, 0xffff)})[0]; r.Verdict != NotApplicable {
		t.Errorf("%s %q", r.Verdict, r.Unchecked)
	}
}
