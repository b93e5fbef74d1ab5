package job

import (
	"bytes"
	"cmp"
	"encoding/hex"
	"flag"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"
)

// mapFS is a host's files by path; deny are files it cannot read (permission).
type mapFS struct {
	files map[string]string
	deny  []string
}

func (m mapFS) ReadFile(name string) ([]byte, error) {
	if slices.Contains(m.deny, name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
	}
	if s, ok := m.files[name]; ok {
		return []byte(s), nil
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

func (mapFS) IsDir(string) bool { return false }

func TestNCCLConfLines(t *testing.T) {
	long := strings.Repeat("x", 4100)
	for _, c := range []struct {
		name, in     string
		fgets, lines string // "NAME=VALUE@LINE ..." as each reading gives them
	}{
		{"plain", "NCCL_IB_PKEY=1\n", "NCCL_IB_PKEY=1@1", "NCCL_IB_PKEY=1@1"},
		{"no final newline", "A=1\nB=2", "A=1@1 B=2@2", "A=1@1 B=2@2"},
		{"CR dropped from 2.30 only", "A=1\r\n", "A=1@1", "A=1\r@1"},
		{"a lone CR mid-line stays", "A=1\r2\n", "A=1\r2@1", "A=1\r2@1"},
		{"spaces and quotes stay", "A = \"1\" \n", "A = \"1\" @1", "A = \"1\" @1"},
		{"export is part of the name", "export A=1\n", "export A=1@1", "export A=1@1"},
		{"first '=' splits", "A==1=2\n", "A==1=2@1", "A==1=2@1"},
		{"no '='", "A\n\n#A=1\n", "", ""},
		{"empty name", "=1\n", "", ""},
		{"NUL ends the line", "A=1\x00B=2\n", "A=1@1", "A=1@1"},
		{"NUL before CR", "A=1\r\x00\n", "A=1@1", "A=1\r@1"},
		// fgets reads 4,095 bytes at a time: the rest of a long line is a line of
		// its own, which sets what it names.
		{"long line", long + "B=2\n", "xxxxx", "long"},
	} {
		t.Run(c.name, func(t *testing.T) {
			show := func(fgets bool) string {
				var out []string
				for _, l := range ncclConfLines([]byte(c.in), fgets) {
					if len(l.name) > 20 {
						out = append(out, "long")
						continue
					}
					out = append(out, fmt.Sprintf("%s=%s@%d", l.name, l.value, l.line))
				}
				return strings.Join(out, " ")
			}
			if c.name == "long line" {
				// The first 4,095 bytes hold no '='; "xxxxxB=2" follows.
				if got := show(true); got != "xxxxxB=2@1" {
					t.Errorf("fgets: %q", got)
				}
				if got := show(false); got != c.lines {
					t.Errorf("getline: %q", got)
				}
				return
			}
			if got := show(true); got != c.fgets {
				t.Errorf("fgets (2.30): %q, want %q", got, c.fgets)
			}
			if got := show(false); got != c.lines {
				t.Errorf("getline (before 2.30): %q, want %q", got, c.lines)
			}
		})
	}
	// A value is cut to 1,023 bytes.
	ls := ncclConfLines([]byte("A="+strings.Repeat("v", 2000)), false)
	if len(ls) != 1 || len(ls[0].value) != 1023 {
		t.Errorf("long value: %d settings, %d bytes", len(ls), len(ls[0].value))
	}
}

func TestReadNCCLFiles(t *testing.T) {
	home := "/home/u"
	t.Run("environment, then the first file", func(t *testing.T) {
		fsys := mapFS{files: map[string]string{
			home + "/.nccl.conf": "NCCL_IB_PKEY=2\nNCCL_IB_PKEY=5\nNCCL_IB_GID_INDEX=3\n",
			"/etc/nccl.conf":     "NCCL_IB_PKEY=4\nNCCL_IB_HCA=mlx5_1\n",
		}}
		all := Env{"HOME": home, "NCCL_IB_GID_INDEX": ""}
		n := ReadNCCLFiles(all, fsys, home, true)
		want := map[string]fileSet{
			"NCCL_IB_PKEY": {"2", home + "/.nccl.conf:1"},
			"NCCL_IB_HCA":  {"mlx5_1", "/etc/nccl.conf:2"},
		}
		if fmt.Sprint(n.Values) != fmt.Sprint(want) || len(n.unchecked(all)) > 0 || n.Assumption != "" {
			t.Errorf("%+v", n)
		}
		if !slices.Equal(n.Read, []string{home + "/.nccl.conf", "/etc/nccl.conf"}) {
			t.Errorf("read %q", n.Read)
		}
	})
	t.Run("NCCL_CONF_FILE replaces the user's file from 2.23", func(t *testing.T) {
		fsys := mapFS{files: map[string]string{home + "/.nccl.conf": "NCCL_IB_PKEY=2\n", "/job.conf": "NCCL_IB_PKEY=3\n"}}
		all := Env{"HOME": home, "NCCL_CONF_FILE": "/job.conf"}
		n := ReadNCCLFiles(all, fsys, home, true)
		if u := n.unchecked(all); n.Values["NCCL_IB_PKEY"].Value != "3" || len(u) != 1 || u[0] != `NCCL_IB_PKEY from NCCL's files: "2" (/home/u/.nccl.conf:1) in NCCL before 2.23, "3" (/job.conf:1) in NCCL 2.30 and later` {
			t.Errorf("%+v %q", n, u)
		}
		// The environment's NCCL_IB_PKEY (a gate's export) makes the files' moot.
		if u := n.unchecked(Env{"NCCL_IB_PKEY": "1"}); len(u) != 0 {
			t.Errorf("%q", u)
		}
		// The same index either way: nothing to say.
		fsys.files["/job.conf"] = "NCCL_IB_PKEY=0x2 ignored\n"
		if n := ReadNCCLFiles(all, fsys, home, true); len(n.unchecked(all)) != 0 {
			t.Errorf("%+v", n)
		}
		// An empty NCCL_CONF_FILE is none.
		all = Env{"HOME": home, "NCCL_CONF_FILE": ""}
		if n := ReadNCCLFiles(all, fsys, home, true); n.Values["NCCL_IB_PKEY"].Value != "2" || len(n.unchecked(all)) != 0 {
			t.Errorf("%+v", n)
		}
	})
	t.Run("HOME against the password database", func(t *testing.T) {
		fsys := mapFS{files: map[string]string{home + "/.nccl.conf": "NCCL_IB_HCA=mlx5_0\n", "/other/.nccl.conf": "NCCL_IB_HCA=mlx5_1\n"}}
		all := Env{"HOME": "/other"}
		n := ReadNCCLFiles(all, fsys, home, true)
		// Both older readings alike: said once.
		if u := n.unchecked(all); n.Values["NCCL_IB_HCA"].Value != "mlx5_1" || len(u) != 1 || u[0] != `NCCL_IB_HCA from NCCL's files: "mlx5_0" (/home/u/.nccl.conf:1) in NCCL before 2.30, "mlx5_1" (/other/.nccl.conf:1) in NCCL 2.30 and later` {
			t.Errorf("%+v %q", n, u)
		}
		// HOME unset: 2.30 reads no user file.
		n = ReadNCCLFiles(Env{}, fsys, home, true)
		if u := n.unchecked(Env{}); len(n.Values) != 0 || len(u) != 1 || !strings.HasSuffix(u[0], ", unset in NCCL 2.30 and later") {
			t.Errorf("%+v %q", n, u)
		}
		// Not looked up: $HOME's for every version, said.
		n = ReadNCCLFiles(all, fsys, "", false)
		if n.Values["NCCL_IB_HCA"].Value != "mlx5_1" || len(n.unchecked(all)) != 0 || !strings.Contains(n.Assumption, "it read $HOME's") {
			t.Errorf("%+v", n)
		}
		n = ReadNCCLFiles(Env{}, fsys, "", false)
		if len(n.Values) != 0 || len(n.unchecked(Env{})) != 0 || !strings.Contains(n.Assumption, "that file was not read") {
			t.Errorf("%+v", n)
		}
	})
	t.Run("a CR kept before 2.30", func(t *testing.T) {
		fsys := mapFS{files: map[string]string{"/etc/nccl.conf": "NCCL_IB_PKEY=1\r\nNCCL_IB_HCA=mlx5_0\r\n"}}
		n := ReadNCCLFiles(Env{}, fsys, home, true)
		// The index is 1 either way; the device name is not the same.
		if u := n.unchecked(Env{}); len(u) != 1 || u[0] != `NCCL_IB_HCA from NCCL's files: "mlx5_0\r" (/etc/nccl.conf:2) in NCCL before 2.30, "mlx5_0" (/etc/nccl.conf:2) in NCCL 2.30 and later` {
			t.Errorf("%q", u)
		}
	})
	t.Run("look-alikes", func(t *testing.T) {
		fsys := mapFS{files: map[string]string{"/etc/nccl.conf": "NCCL_IB_PKEY = 1\nexport NCCL_IB_HCA=mlx5_0\nnccl_ib_gid_index=3\nNCCL_IB_PKEYS=2\nNCCL_DEBUG=INFO\n"}}
		n := ReadNCCLFiles(Env{}, fsys, home, true)
		want := []string{
			`/etc/nccl.conf:1: "NCCL_IB_PKEY " is not NCCL_IB_PKEY: NCCL takes everything before the '=' as the name (NAME=VALUE, nothing around the '=')`,
			`/etc/nccl.conf:2: "export NCCL_IB_HCA" is not NCCL_IB_HCA: NCCL takes everything before the '=' as the name (NAME=VALUE, nothing around the '=')`,
			`/etc/nccl.conf:3: "nccl_ib_gid_index" is not NCCL_IB_GID_INDEX: NCCL takes everything before the '=' as the name (NAME=VALUE, nothing around the '=')`,
		}
		if len(n.Values) != 0 || !slices.Equal(n.LookAlikes, want) {
			t.Errorf("%v\n%q", n.Values, n.LookAlikes)
		}
	})
	t.Run("unread", func(t *testing.T) {
		fsys := mapFS{files: map[string]string{"/etc/nccl.conf": "NCCL_IB_PKEY=1\n"}, deny: []string{home + "/.nccl.conf"}}
		all := Env{"HOME": home, "NCCL_IB_HCA": "mlx5_0"}
		n := ReadNCCLFiles(all, fsys, home, true)
		if u := n.unchecked(all); len(u) != 1 || u[0] != "open /home/u/.nccl.conf: permission denied: NCCL reads it, so NCCL_IB_PKEY, NCCL_IB_GID_INDEX, NCCL_IB_PKEY_VALUE, NCCL_IB_DISABLE, NCCL_NET are not known" {
			t.Errorf("%q", u)
		}
		// The environment sets all of them: the file cannot change anything.
		all = Env{"HOME": home}
		for _, v := range ncclNames() {
			all[v] = "0"
		}
		if u := ReadNCCLFiles(all, fsys, home, true).unchecked(all); len(u) != 0 {
			t.Errorf("%q", u)
		}
	})
}

// TestNCCLFilesChangeTheVerdict: a file's NCCL_IB_PKEY is NCCL's index, and an
// unreadable file leaves the answer not checked.
func TestNCCLFilesChangeTheVerdict(t *testing.T) {
	ports := []*Port{port("h", "mlx5_0", 1, 0xffff, 0x8002)}
	fsys := mapFS{files: map[string]string{"/etc/nccl.conf": "NCCL_IB_PKEY=7\n"}}
	in := Inputs{Env: Env{}, NCCL: ReadNCCLFiles(Env{}, fsys, "/root", true)}
	r := Resolve([]*Library{&NCCL}, in, ports)[0]
	if r.Verdict != DoesNotWork || !strings.Contains(r.Setting, "NCCL_IB_PKEY=7 (/etc/nccl.conf:1): index 7") {
		t.Errorf("%s: %s", r.Verdict, r.Setting)
	}
	if !NCCL.Mentioned(in) {
		t.Error("a file's NCCL_IB_PKEY does not mention NCCL")
	}
	in.Env["NCCL_IB_PKEY"] = "1"
	if r := Resolve([]*Library{&NCCL}, in, ports)[0]; r.Verdict != Works || r.Setting != "NCCL_IB_PKEY=1: index 1" {
		t.Errorf("the environment does not win: %s: %s", r.Verdict, r.Setting)
	}
	// A gate's export beats the files' NCCL_IB_PKEY, however versions read it; not
	// what they may say of NCCL_IB_HCA.
	home := mapFS{files: map[string]string{"/home/u/.nccl.conf": "NCCL_IB_PKEY=7\n"}}
	in = Inputs{Env: Env{"HOME": "/home/u"}, NCCL: ReadNCCLFiles(Env{"HOME": "/home/u"}, home, "/root", true)}
	if r := Resolve([]*Library{&NCCL}, in, ports)[0]; len(r.Unchecked) != 1 || !strings.Contains(r.Unchecked[0], "unset in NCCL before 2.30") {
		t.Errorf("%s: %q", r.Verdict, r.Unchecked)
	}
	if w := WantPartition([]*Library{&NCCL}, in, 0x8002, ports)[0]; w.Verdict != Works || w.Setting != "NCCL_IB_PKEY=1 everywhere" {
		t.Errorf("gate: %s: %s %q", w.Verdict, w.Setting, w.Unchecked)
	}
	fsys.deny = []string{"/etc/nccl.conf"}
	in = Inputs{Env: Env{}, NCCL: ReadNCCLFiles(Env{}, fsys, "/root", true)}
	if r := Resolve([]*Library{&NCCL}, in, ports)[0]; r.Verdict != Incomplete || len(r.Unchecked) != 1 {
		t.Errorf("%s: %q", r.Verdict, r.Unchecked)
	}
	if w := WantPartition([]*Library{&NCCL}, in, 0x8002, ports)[0]; w.Verdict != Incomplete || len(w.Unchecked) != 1 || !strings.Contains(w.Unchecked[0], "so NCCL_IB_HCA, NCCL_IB_GID_INDEX, NCCL_IB_PKEY_VALUE, NCCL_IB_DISABLE, NCCL_NET are not known") {
		t.Errorf("gate, a file unread: %s: %q", w.Verdict, w.Unchecked)
	}
}

// The files setEnvFile and initEnvFunc read are NCCL's, taken from its sources at
// three versions, one per reading (ncclReadings), and compiled with nclFilesHarness.
var ncclFilesVersions = []struct{ tag, init string }{
	{"HEAD", "initEnvFunc"},      // 2.30 and later
	{"v2.29.2-1", "initEnvFunc"}, // 2.23 to 2.29
	{"v2.18.3-1", "initEnv"},     // before 2.23
}

// ncclFilesHarness runs NCCL's initEnvFunc in an environment the test gives
// (getpwuid answers TEST_PWHOME; /etc/nccl.conf is TEST_ETC) and prints each
// variable NCCL reads: "-" unset, else its value in hex.
const ncclFilesHarness = `
int main(void) {
	INIT();
	const char *vars[] = {NAMES};
	for (int i = 0; i < (int)(sizeof vars / sizeof vars[0]); i++) {
		const char *v = getenv(vars[i]);
		putchar(' ');
		if (!v) { putchar('-'); continue; }
		putchar('x');
		for (; *v; v++) printf("%02x", (unsigned char)*v);
	}
	putchar('\n');
	return 0;
}
`

// ncclFilesProgram builds one version's program from NCCL's source.
func ncclFilesProgram(git, tag, init, etc string) (string, error) {
	var b strings.Builder
	b.WriteString("#include <algorithm>\n#include <mutex>\n#include <cstdio>\n#include <cstdlib>\n#include <cstring>\n#include <pwd.h>\n#include <unistd.h>\n")
	b.WriteString("static struct passwd testPw;\nstatic struct passwd *testGetpwuid(uid_t) { testPw.pw_dir = getenv(\"TEST_PWHOME\"); return &testPw; }\n#define getpwuid testGetpwuid\n")
	b.WriteString("#define ncclOsSetEnv(n, v) setenv(n, v, 0)\n")
	src, err := exec.Command("git", "--git-dir="+git, "show", tag+":src/misc/param.cc").Output()
	if err != nil {
		return "", fmt.Errorf("src/misc/param.cc at %s from %s: %v", tag, git, err)
	}
	if tag == "HEAD" {
		// ncclOsSetEnv is taken too, from the Linux build (src/os/linux.cc).
		os, err := exec.Command("git", "--git-dir="+git, "show", tag+":src/os/linux.cc").Output()
		if err != nil {
			return "", err
		}
		def, err := cDefinition(string(os), "ncclOsSetEnv")
		if err != nil {
			return "", err
		}
		b.WriteString("#undef ncclOsSetEnv\n" + def + "\n")
	}
	for _, name := range []string{"userHomeDir", "setEnvFile", init} {
		def, err := cDefinition(string(src), name)
		if err != nil {
			return "", fmt.Errorf("%s: %v", tag, err)
		}
		b.WriteString(strings.ReplaceAll(def, `"/etc/nccl.conf"`, fmt.Sprintf("%q", etc)) + "\n")
	}
	b.WriteString("#define INIT " + init + "\n#define NAMES \"" + strings.Join(ncclNames(), "\", \"") + "\"\n")
	return b.String() + ncclFilesHarness, nil
}

// ncclFilesCase is one generated host: the environment and the files.
type ncclFilesCase struct {
	env   Env
	files map[string]string // by role: home, pwhome, conf, etc
}

// ncclFilesCases are generated hosts: HOME set, empty or unset and the password
// database's home the same or another; NCCL_CONF_FILE set, empty, or naming no file;
// files with NCCL's variables and look-alikes (spaces, quotes, export, '#', lower
// case), CRLF, values cut at 1,023 bytes, NULs, lines across fgets' 4,095 bytes, and
// the environment setting some variables (empty too).
func ncclFilesCases() []ncclFilesCase {
	rng := rand.New(rand.NewPCG(5, 2026))
	pick := func(s ...string) string { return s[rng.IntN(len(s))] }
	line := func() string {
		name := pick("NCCL_IB_PKEY", "NCCL_IB_HCA", "NCCL_IB_GID_INDEX", "NCCL_IB_PKEY_VALUE", "NCCL_IB_PKEY", "NCCL_IB_HCA", "NCCL_IB_DISABLE", "NCCL_NET",
			"NCCL_IB_PKEY ", " NCCL_IB_PKEY", "#NCCL_IB_PKEY", "export NCCL_IB_PKEY", "nccl_ib_pkey", "", "NCCL_DEBUG")
		value := pick("1", "2", " 3", "0x4", "010", "", "\"5\"", "mlx5_0", "mlx5_1:1", "^mlx5_0", "6 # seven", "=8", "IB", "Socket", strings.Repeat("m", 1030))
		sep := pick("=", "=", "=", " = ", "")
		end := pick("\n", "\n", "\r\n", "\n\n", "\x00x\n")
		l := name + sep + value + end
		if rng.IntN(12) == 0 {
			// Across fgets' 4,095-byte reads: what follows is a line of its own.
			l = strings.Repeat("y", 4095-rng.IntN(3)) + l
		}
		return l
	}
	file := func() string {
		var b strings.Builder
		for range rng.IntN(5) {
			b.WriteString(line())
		}
		return b.String()
	}
	var out []ncclFilesCase
	for range 400 {
		c := ncclFilesCase{env: Env{}, files: map[string]string{}}
		for _, role := range []string{"home", "pwhome", "conf", "etc"} {
			if rng.IntN(3) > 0 {
				c.files[role] = file()
			}
		}
		switch rng.IntN(6) {
		case 0: // unset
		case 1:
			c.env["HOME"] = ""
		default:
			c.env["HOME"] = "HOME"
		}
		switch rng.IntN(4) {
		case 0:
			c.env["NCCL_CONF_FILE"] = "CONF"
		case 1:
			c.env["NCCL_CONF_FILE"] = ""
		case 2:
			c.env["NCCL_CONF_FILE"] = "NOFILE"
		}
		if rng.IntN(3) == 0 {
			c.files["pwhome"] = c.files["home"] // the same directory's file
		}
		for _, v := range ncclNames() {
			if rng.IntN(6) == 0 {
				c.env[v] = pick("", "9", "mlx5_9")
			}
		}
		out = append(out, c)
	}
	return out
}

// ibkeyNCCLFiles is what ibkey's readings give for c in dir (the layout
// TestNCCLFilesAgainstNCCL writes): for each reading and variable "-" unset, "?"
// not known, else "x" and the value in hex.
func ibkeyNCCLFiles(c ncclFilesCase, env Env, dir string) string {
	readings := ReadNCCLFiles(env, ncclFilesFS(c, dir), filepath.Join(dir, "pwhome"), true).readings
	var b strings.Builder
	for _, vars := range readings {
		for _, name := range ncclNames() {
			b.WriteByte(' ')
			switch v := vars[name]; {
			case v.unknown != "":
				b.WriteByte('?')
			case v.set:
				b.WriteString("x" + hex.EncodeToString([]byte(v.Value)))
			default:
				b.WriteByte('-')
			}
		}
	}
	return b.String()
}

// ncclFilesFS is c's files in dir (the layout TestNCCLFilesAgainstNCCL writes).
func ncclFilesFS(c ncclFilesCase, dir string) mapFS {
	fsys := mapFS{files: map[string]string{}}
	for role, s := range c.files {
		switch role {
		case "etc":
			fsys.files["/etc/nccl.conf"] = s
		case "conf":
			fsys.files[filepath.Join(dir, "conf")] = s
		default:
			fsys.files[filepath.Join(dir, role, ".nccl.conf")] = s
		}
	}
	return fsys
}

// ncclTagVersion is NCCL's release at tag, as makefiles/version.mk gives it
// (2.30.7-1).
func ncclTagVersion(git, tag string) (Version, error) {
	mk, err := exec.Command("git", "--git-dir="+git, "show", tag+":makefiles/version.mk").Output()
	if err != nil {
		return Version{}, fmt.Errorf("makefiles/version.mk at %s: %v", tag, err)
	}
	var n []string
	for _, key := range []string{"NCCL_MAJOR", "NCCL_MINOR", "NCCL_PATCH", "PKG_REVISION"} {
		for _, l := range strings.Split(string(mk), "\n") {
			if k, v, ok := strings.Cut(l, ":="); ok && strings.TrimSpace(k) == key {
				n = append(n, strings.TrimSpace(v))
			}
		}
	}
	v, ok := ParseVersion(strings.Join(n[:min(3, len(n))], ".") + "-" + strings.Join(n[min(3, len(n)):], ""))
	if !ok {
		return Version{}, fmt.Errorf("makefiles/version.mk at %s: no version in %q", tag, n)
	}
	return v, nil
}

// ncclDecided checks what ibkey decides with --lib-version nccl=v on case c (env,
// files in dir) against what that version of NCCL read (theirs, one field per
// ncclNames, as ncclFilesHarness prints it): the version's reading is the one
// ibkey takes (reading), each variable NCCL's, and nothing is left not checked
// unless the reading itself is not known (ibkey's "?": NCCL before 2.23 writing a
// long name past its buffer).
func ncclDecided(c ncclFilesCase, env Env, dir string, v Version, reading int, theirs, ours []string) error {
	in := Inputs{Env: Env{}, NCCL: ReadNCCLFiles(env, ncclFilesFS(c, dir), filepath.Join(dir, "pwhome"), true), Versions: Versions{"nccl": v}}
	for _, name := range ncclNames() {
		if x, ok := env[name]; ok {
			in.Env[name] = x
		}
	}
	f, got := ncclFiles(in, in.version(&NCCL))
	if got != reading {
		return fmt.Errorf("NCCL %s: reading %d, want %d", v, got, reading)
	}
	if slices.Contains(ours, "?") {
		return nil
	}
	s := NCCL.setup(in)
	if u := f.unchecked(in.Env); len(u) > 0 || slices.ContainsFunc(s.Unchecked, func(u string) bool { return strings.Contains(u, "NCCL's files") }) {
		return fmt.Errorf("NCCL %s: not decided: %q %q", v, u, s.Unchecked)
	}
	decided := f.env(in.Env)
	for j, name := range ncclNames() {
		want := "-"
		if x, ok := decided[name]; ok {
			want = "x" + hex.EncodeToString([]byte(x))
		}
		if theirs[j] != want {
			return fmt.Errorf("NCCL %s: %s is %s, ibkey decides %s", v, name, theirs[j], want)
		}
	}
	return nil
}

// TestNCCLFilesAgainstNCCL reads generated hosts' nccl.conf files with NCCL's own
// setEnvFile and initEnvFunc (its sources at three versions, compiled with the
// system's C++ compiler) and with ibkey's readings, and compares every variable NCCL
// reads; then, given each version's release (--lib-version, from its
// makefiles/version.mk), that ibkey decides that reading alone and agrees
// (ncclDecided). Without the source or a compiler the committed table
// (testdata/TestNCCLFilesAgainstNCCL.golden) is compared; `-update` needs both.
func TestNCCLFilesAgainstNCCL(t *testing.T) {
	dir := t.TempDir()
	etc := filepath.Join(dir, "etc-nccl.conf")
	git := cmp.Or(os.Getenv("IBKEY_NCCL_GIT"), "/work/.mirror/NVIDIA+nccl/repo")
	update := flag.Lookup("update") != nil && flag.Lookup("update").Value.String() == "true"
	cxx, err := exec.LookPath("c++")
	var progs []string
	var versions []Version // each program's NCCL release (--lib-version)
	for _, v := range ncclFilesVersions {
		if err != nil {
			break
		}
		var rel Version
		if rel, err = ncclTagVersion(git, v.tag); err != nil {
			break
		}
		versions = append(versions, rel)
		var src string
		if src, err = ncclFilesProgram(git, v.tag, v.init, etc); err == nil {
			bin := filepath.Join(dir, "nccl-"+v.tag)
			cmd := exec.Command(cxx, "-x", "c++", "-O0", "-w", "-o", bin, "-")
			cmd.Stdin = strings.NewReader(src)
			if out, cerr := cmd.CombinedOutput(); cerr != nil {
				t.Fatalf("c++ (%s): %v\n%s", v.tag, cerr, out)
			}
			progs = append(progs, bin)
		}
	}
	switch {
	case err != nil && update:
		t.Fatalf("-update needs a C++ compiler and NCCL's source: %v", err)
	case err != nil:
		t.Logf("only the committed table is compared: %v", err)
	}
	var got bytes.Buffer
	bad := 0
	for i, c := range ncclFilesCases() {
		// The case's files, written where its environment points.
		for _, role := range []string{"home", "pwhome"} {
			_ = os.RemoveAll(filepath.Join(dir, role))
			_ = os.MkdirAll(filepath.Join(dir, role), 0o755)
		}
		for _, f := range []string{"conf", "etc-nccl.conf"} {
			_ = os.Remove(filepath.Join(dir, f))
		}
		for role, s := range c.files {
			path := map[string]string{"home": "home/.nccl.conf", "pwhome": "pwhome/.nccl.conf", "conf": "conf", "etc": "etc-nccl.conf"}[role]
			if err := os.WriteFile(filepath.Join(dir, path), []byte(s), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		env := Env{}
		for k, v := range c.env {
			switch v {
			case "HOME":
				v = filepath.Join(dir, "home")
			case "CONF":
				v = filepath.Join(dir, "conf")
			case "NOFILE":
				v = filepath.Join(dir, "nofile")
			}
			env[k] = v
		}
		fmt.Fprintf(&got, "%d%s\n", i, ibkeyNCCLFiles(c, env, dir))
		if len(progs) == 0 {
			continue
		}
		var nccl []string
		for _, bin := range progs {
			cmd := exec.Command(bin)
			cmd.Env = []string{"TEST_PWHOME=" + filepath.Join(dir, "pwhome")}
			for k, v := range env {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			out, err := cmd.Output()
			if err != nil {
				// NCCL before 2.23 writes a long name past its buffer (ibkey: "?").
				t.Logf("case %d, %s: %v", i, bin, err)
				out = []byte(strings.Repeat(" crashed", len(ncclNames())))
			}
			nccl = append(nccl, strings.Fields(string(out))...)
		}
		ibkey := strings.Fields(lastLine(got.String()))[1:]
		// With --lib-version nccl= each program's release, ibkey decides one
		// reading, NCCL's.
		n := len(ncclNames())
		for k, v := range versions {
			if err := ncclDecided(c, env, dir, v, k, nccl[k*n:][:n], ibkey[k*n:][:n]); err != nil {
				t.Errorf("case %d (env %q): %v", i, env, err)
				if bad++; bad == 10 {
					t.FailNow()
				}
			}
		}
		for k := range ibkey {
			// Where ibkey says a version's reading is not known (NCCL before 2.23
			// writes a long name past its buffer), anything NCCL does there, a
			// crash or a lost variable, is what ibkey did not claim.
			n := len(ncclNames())
			version := ibkey[k/n*n:][:n]
			if ibkey[k] != nccl[k] && !slices.Contains(version, "?") {
				files := map[string]string{}
				for role, f := range c.files {
					files[role] = f[:min(len(f), 300)]
				}
				t.Errorf("case %d (env %q, files cut to 300 bytes %q):\nNCCL  %s\nibkey %s\n(per version: %s, %s, %s; each %s)",
					i, env, files, nccl, ibkey, ncclReadings[0].versions, ncclReadings[1].versions, ncclReadings[2].versions, ncclNames())
				if bad++; bad == 10 {
					t.FailNow()
				}
				break
			}
		}
	}
	golden.RequireEqual(t, got.String())
}

// lastLine is the last line of s, without its newline.
func lastLine(s string) string {
	s = strings.TrimSuffix(s, "\n")
	return s[strings.LastIndexByte(s, '\n')+1:]
}

// TestNCCLNetwork: NCCL_IB_DISABLE and NCCL_NET decide whether NCCL's own IB
// transport, and so NCCL_IB_PKEY, is used (src/plugin/net.cc ncclNetInit,
// src/transport/net_ib/init.cc).
func TestNCCLNetwork(t *testing.T) {
	p := port("h", "mlx5_0", 1, 0xffff)
	for _, c := range []struct {
		env     []string
		verdict Verdict
		says    string
	}{
		{[]string{"NCCL_IB_PKEY=3", "NCCL_IB_DISABLE=1"}, NotApplicable, "NCCL_IB_DISABLE=1: NCCL's IB transport does not initialize"},
		{[]string{"NCCL_IB_PKEY=3", "NCCL_IB_DISABLE=0x10"}, NotApplicable, "NCCL_IB_DISABLE=0x10"},
		{[]string{"NCCL_IB_PKEY=3", "NCCL_IB_DISABLE=0"}, DoesNotWork, "index 3"},
		{[]string{"NCCL_IB_PKEY=3", "NCCL_IB_DISABLE="}, DoesNotWork, "index 3"},
		{[]string{"NCCL_IB_PKEY=3", "NCCL_IB_DISABLE=no"}, DoesNotWork, "index 3"},                   // strtoll: 0
		{[]string{"NCCL_IB_PKEY=3", "NCCL_IB_DISABLE=99999999999999999999"}, DoesNotWork, "index 3"}, // overflow: the default
		{[]string{"NCCL_IB_PKEY=3", "NCCL_NET=socket"}, NotApplicable, "NCCL_NET=socket: NCCL uses sockets"},
		{[]string{"NCCL_IB_PKEY=3", "NCCL_NET=ib"}, DoesNotWork, "index 3"},
		{[]string{"NCCL_IB_PKEY=3", "NCCL_NET="}, DoesNotWork, "NCCL_NET is set but empty"},
		{[]string{"NCCL_NET=IB", "NCCL_IB_DISABLE=1"}, DoesNotWork, "NCCL fails"},
		{[]string{"NCCL_IB_PKEY=3", "NCCL_NET=IBext_v8"}, Incomplete, "names a network plugin"},
	} {
		r := Resolve([]*Library{&NCCL}, env(c.env...), []*Port{p})[0]
		text := r.Setting + " " + r.Inactive + " " + strings.Join(r.Findings, " ") + " " + strings.Join(r.Unchecked, " ")
		if r.Verdict != c.verdict || !strings.Contains(text, c.says) {
			t.Errorf("%v: %s: %s", c.env, r.Verdict, text)
		}
		if c.verdict == Incomplete && len(r.Findings) > 0 {
			t.Errorf("%v: a plugin's choice is not NCCL's: %q", c.env, r.Findings)
		}
	}
	// A refusal no NCCL_IB_PKEY lifts: the gate exports nothing.
	w := WantPartition([]*Library{&NCCL}, env("NCCL_NET="), 0xffff, []*Port{p})[0]
	if w.Verdict != DoesNotWork {
		t.Errorf("gate with NCCL_NET empty: %s %s", w.Verdict, w.Setting)
	}
}

// A file's NCCL_NET=Socket that NCCL before 2.30 reads with its CR (a network no
// plugin is called) decides nothing: no port, and no "not applicable".
func TestNCCLNetworkFromFilesSplit(t *testing.T) {
	p := port("h", "mlx5_0", 1, 0xffff)
	fsys := mapFS{files: map[string]string{"/etc/nccl.conf": "NCCL_NET=Socket\r\nNCCL_IB_PKEY=3\n"}}
	in := Inputs{Env: Env{}, NCCL: ReadNCCLFiles(Env{}, fsys, "/root", true)}
	r := Resolve([]*Library{&NCCL}, in, []*Port{p})[0]
	if r.Verdict != Incomplete || len(r.Findings) > 0 || !strings.Contains(strings.Join(r.Unchecked, " "), `NCCL_NET from NCCL's files: "Socket\r"`) {
		t.Errorf("%s: %q %q", r.Verdict, r.Findings, r.Unchecked)
	}
	// Without the CR every version reads it alike: not applicable.
	fsys.files["/etc/nccl.conf"] = "NCCL_NET=Socket\nNCCL_IB_PKEY=3\n"
	in.NCCL = ReadNCCLFiles(Env{}, fsys, "/root", true)
	if r := Resolve([]*Library{&NCCL}, in, []*Port{p})[0]; r.Verdict != NotApplicable {
		t.Errorf("%s: %q", r.Verdict, r.Unchecked)
	}
}
