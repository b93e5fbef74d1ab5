package job

import (
	"io/fs"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
)

// mapMCA is a host's files in memory: name to content; deny are files that cannot
// be read (permission); dirs the directories that exist.
type mapMCA struct {
	files map[string]string
	deny  []string
	dirs  []string
}

func (m mapMCA) ReadFile(name string) ([]byte, error) {
	if slices.Contains(m.deny, name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
	}
	s, ok := m.files[name]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return []byte(s), nil
}

func (m mapMCA) IsDir(name string) bool { return slices.Contains(m.dirs, name) }

// The keyval lexer's lines (keyval_lex.l): what ibkey reads, and the lines it
// does not interpret, which make what the file says not read.
func TestParseMCALine(t *testing.T) {
	for _, c := range []struct{ line, name, value string }{
		{"btl = self", "btl", "self"},
		{" \t\fbtl\v=\t ^openib \t", "btl", "^openib"},
		{`btl_openib_pkey = "0x8002"`, "btl_openib_pkey", `"0x8002"`},
		{"pml = ob1 # not a comment", "pml", "ob1 # not a comment"},
		{"pml =", "pml", ""},
		{"x.y-z=1", "x.y-z", "1"},
		{"# btl = tcp", "", ""},
		{"  // btl = tcp", "", ""},
		{" \t", "", ""},
	} {
		n, v, ok := parseMCALine(c.line)
		if !ok || n != c.name || v != c.value {
			t.Errorf("%q: %q = %q (%v), want %q = %q", c.line, n, v, ok, c.name, c.value)
		}
	}
	for _, line := range []string{"btl", "btl tcp", "/* btl = tcp */", "--mca btl tcp", "-x FOO=1", "a:b = 1", "= 1"} {
		if n, v, ok := parseMCALine(line); ok {
			t.Errorf("%q read as %q = %q, want not interpreted", line, n, v)
		}
	}
}

// Which files are read: the default ones ($HOME, sysconfdir from OPAL_SYSCONFDIR
// or /etc/openmpi when it exists), the env list, its synonym, "none".
func TestReadMCAFiles(t *testing.T) {
	fsys := mapMCA{files: map[string]string{
		"/h/.openmpi/mca-params.conf":                   "btl_openib_pkey = 2\n",
		"/etc/openmpi/openmpi-mca-params.conf":          "btl = ^uct,openib,ofi\nbtl_openib_pkey = 3\n",
		"/s/openmpi-mca-params.conf":                    "btl_openib_pkey = 4\n",
		"/s/openmpi-mca-params-override.conf":           "pml = ob1\n",
		"/l/a.conf":                                     "btl_openib_pkey = 5\n",
		"/l/b.conf":                                     "btl_openib_pkey = 6\nbtl_openib_pkey = 7\n",
		"/etc/openmpi/openmpi-mca-params-override.conf": "",
	}, dirs: []string{"/etc/openmpi"}}
	for _, c := range []struct {
		env                   []string
		read, notLocated      string
		pkey, pkeyFrom, later string
	}{
		{[]string{"HOME=/h"}, "/etc/openmpi/openmpi-mca-params.conf /h/.openmpi/mca-params.conf /etc/openmpi/openmpi-mca-params-override.conf", "", "2", "/h/.openmpi/mca-params.conf", ""},
		{nil, "/etc/openmpi/openmpi-mca-params.conf /etc/openmpi/openmpi-mca-params-override.conf", "$HOME/.openmpi/mca-params.conf (HOME is not set)", "3", "/etc/openmpi/openmpi-mca-params.conf", ""},
		{[]string{"HOME=/h", "OPAL_SYSCONFDIR=/s"}, "/s/openmpi-mca-params.conf /h/.openmpi/mca-params.conf /s/openmpi-mca-params-override.conf", "", "2", "/h/.openmpi/mca-params.conf", ""},
		// An empty OPAL_SYSCONFDIR is unset.
		{[]string{"HOME=/h", "OPAL_SYSCONFDIR="}, "/etc/openmpi/openmpi-mca-params.conf /h/.openmpi/mca-params.conf /etc/openmpi/openmpi-mca-params-override.conf", "", "2", "/h/.openmpi/mca-params.conf", ""},
		{[]string{"OPAL_SYSCONFDIR=/x"}, "", "$HOME/.openmpi/mca-params.conf (HOME is not set)", "", "", ""},
		// The leftmost file wins; within a file, the last line.
		{[]string{"HOME=/h", "OMPI_MCA_mca_base_param_files=/l/b.conf,/l/a.conf"}, "/l/a.conf /l/b.conf /etc/openmpi/openmpi-mca-params-override.conf", "", "7", "/l/b.conf", ""},
		{[]string{"HOME=/h", "OMPI_MCA_opal_mca_base_param_files=/l/a.conf", "OMPI_MCA_mca_base_param_files=/l/b.conf"}, "/l/a.conf /etc/openmpi/openmpi-mca-params-override.conf", "", "5", "/l/a.conf", ""},
		{[]string{"HOME=/h", "OMPI_MCA_mca_base_param_files=none"}, "", "", "", "", ""},
		// The synonym's files come after the default ones.
		{[]string{"HOME=/h", "OMPI_MCA_mca_param_files=/l/a.conf"}, "/etc/openmpi/openmpi-mca-params.conf /h/.openmpi/mca-params.conf /l/a.conf /etc/openmpi/openmpi-mca-params-override.conf", "", "2", "/h/.openmpi/mca-params.conf", "5"},
		{[]string{"HOME=/h", "OMPI_MCA_mca_param_files=none"}, "", "", "", "", ""},
		// A list is a string variable: a leading "~/" is $HOME/ (var_set_string),
		// dropped without HOME; one after a comma stays.
		{[]string{"HOME=/l", "OMPI_MCA_mca_base_param_files=~/b.conf"}, "/l/b.conf /etc/openmpi/openmpi-mca-params-override.conf", "", "7", "/l/b.conf", ""},
		{[]string{"HOME=/l", "OMPI_MCA_mca_base_param_files=/h/.openmpi/mca-params.conf,~/a.conf"}, "/h/.openmpi/mca-params.conf /etc/openmpi/openmpi-mca-params-override.conf", "", "2", "/h/.openmpi/mca-params.conf", ""},
		{[]string{"OMPI_MCA_mca_base_param_files=~//l/a.conf"}, "/l/a.conf /etc/openmpi/openmpi-mca-params-override.conf", "", "5", "/l/a.conf", ""},
		{[]string{"HOME=/l", "OMPI_MCA_mca_param_files=~/a.conf"}, "/etc/openmpi/openmpi-mca-params.conf /l/a.conf /etc/openmpi/openmpi-mca-params-override.conf", "", "3", "/etc/openmpi/openmpi-mca-params.conf", "5"},
	} {
		all := env(c.env...).Env
		m := ReadMCAFiles(all, fsys)
		if got := strings.Join(m.Read, " "); got != c.read {
			t.Errorf("%v: read %q, want %q", c.env, got, c.read)
		}
		if got := strings.Join(m.NotLocated, " "); c.notLocated != "" && !strings.Contains(got, c.notLocated) {
			t.Errorf("%v: not located %q, want %q", c.env, got, c.notLocated)
		}
		v, ok := mcaFind(m.Values, "opal_btl_openib_pkey", "btl_openib_pkey")
		if ok != (c.pkey != "") || v.Value != c.pkey || v.File != c.pkeyFrom {
			t.Errorf("%v: btl_openib_pkey %+v, want %s from %s", c.env, v, c.pkey, c.pkeyFrom)
		}
		if v, _ := mcaFind(m.Later, "opal_btl_openib_pkey", "btl_openib_pkey"); v.Value != c.later {
			t.Errorf("%v: the synonym's files give %q, want %q", c.env, v.Value, c.later)
		}
	}
}

// Open MPI with MCA parameter files: the setting names its file and line, the
// override file beats the environment, a synonym in a file beats its primary from
// the environment, and the library is one the job uses when a file sets its key.
func TestOpenMPIFromMCAFiles(t *testing.T) {
	host := []*Port{port("", "mlx5_0", 1, 0xffff, 0x8002, 0x8003)}
	files := func(home, override string) *MCAFiles {
		return ReadMCAFiles(Env{"HOME": "/h", "OPAL_SYSCONFDIR": "/s"}, mapMCA{files: map[string]string{
			"/h/.openmpi/mca-params.conf":         home,
			"/s/openmpi-mca-params-override.conf": override,
		}})
	}
	for _, c := range []struct {
		name     string
		env      []string
		home     string
		override string
		index    int
		setting  string
	}{
		{"from the home file", nil, "btl_openib_allow_ib = 1\nbtl_openib_pkey = 0x8002\n", "", 1, "btl_openib_pkey=0x8002 (/h/.openmpi/mca-params.conf line 2)"},
		{"the environment beats a file", []string{"OMPI_MCA_btl_openib_pkey=3"}, "btl_openib_allow_ib = 1\nbtl_openib_pkey = 0x8002\n", "", 2, "OMPI_MCA_btl_openib_pkey=3: "},
		{"a synonym in a file beats the environment", []string{"OMPI_MCA_btl_openib_pkey=3"}, "btl_openib_allow_ib = 1\nbtl_openib_ib_pkey_val = 2\n", "", 1, "btl_openib_ib_pkey_val=2 (/h/.openmpi/mca-params.conf line 2)"},
		{"the override file beats the environment", []string{"OMPI_MCA_btl_openib_pkey=3", "OMPI_MCA_btl_openib_allow_ib=1"}, "", "opal_btl_openib_pkey = 2\n", 1, "opal_btl_openib_pkey=2 (/s/openmpi-mca-params-override.conf line 1)"},
	} {
		in := env(c.env...)
		in.MCA = files(c.home, c.override)
		if !OpenMPI.Mentioned(in) {
			t.Errorf("%s: Open MPI not mentioned", c.name)
		}
		r := Resolve([]*Library{&OpenMPI}, in, host)[0]
		if r.Verdict != Works || len(r.Ports) != 1 || r.Ports[0].Index != c.index || !strings.HasPrefix(r.Setting, c.setting) {
			t.Errorf("%s: %s, %q, %+v; want index %d, %q", c.name, r.Verdict, r.Setting, r.Ports, c.index, c.setting)
		}
		if !strings.Contains(strings.Join(r.Assumptions, " "), "MCA parameter files read on this host: /h/.openmpi/mca-params.conf") {
			t.Errorf("%s: assumptions %q", c.name, r.Assumptions)
		}
	}
	// Debian's file does not open openib: not applicable, from that line.
	in := env("OMPI_MCA_btl_openib_allow_ib=1")
	in.MCA = ReadMCAFiles(Env{}, mapMCA{files: map[string]string{"/etc/openmpi/openmpi-mca-params.conf": "btl = ^uct,openib,ofi\npml = ^ucx\n"}, dirs: []string{"/etc/openmpi"}})
	if r := Resolve([]*Library{&OpenMPI}, in, host)[0]; r.Verdict != NotApplicable || !strings.Contains(r.Inactive, "btl=^uct,openib,ofi (/etc/openmpi/openmpi-mca-params.conf line 1)") || len(r.Unchecked) > 0 {
		t.Errorf("Debian's file: %s %q, not checked %q", r.Verdict, r.Inactive, r.Unchecked)
	}
	if OpenMPI.Mentioned(in) {
		t.Error("btl and pml in Debian's file make Open MPI mentioned")
	}
}

// --want: exporting OMPI_MCA_btl_openib_pkey does not help when a file sets the
// synonym or the override file sets the key to another partition.
func TestOpenMPIWantBeatenByMCAFiles(t *testing.T) {
	host := []*Port{port("", "mlx5_0", 1, 0xffff, 0x8002, 0x8003)}
	for _, c := range []struct {
		home, override string
		finding        string
	}{
		{"btl_openib_ib_pkey_val = 3\n", "", "Open MPI takes btl_openib_ib_pkey_val=3 (/h/.openmpi/mca-params.conf line 1) instead"},
		{"", "btl_openib_pkey = 3\n", "Open MPI takes btl_openib_pkey=3 (/s/openmpi-mca-params-override.conf line 1) instead"},
		{"", "btl_openib_pkey = 2\n", ""}, // the override file already says partition 0x0002
		{"btl_openib_pkey = 3\n", "", ""}, // the environment beats it
	} {
		in := env("OMPI_MCA_btl_openib_allow_ib=1")
		in.MCA = ReadMCAFiles(Env{"HOME": "/h", "OPAL_SYSCONFDIR": "/s"}, mapMCA{files: map[string]string{
			"/h/.openmpi/mca-params.conf":         c.home,
			"/s/openmpi-mca-params-override.conf": c.override,
		}})
		w := WantPartition([]*Library{&OpenMPI}, in, check.PKey(0x8002), host)[0]
		got := strings.Join(w.Findings, "; ")
		if c.finding == "" && (w.Verdict != Works || got != "") || c.finding != "" && (w.Verdict != DoesNotWork || !strings.Contains(got, c.finding)) {
			t.Errorf("%q %q: %s %q, want %q", c.home, c.override, w.Verdict, got, c.finding)
		}
	}
}

// A file that cannot be read, or a line ibkey does not interpret: Open MPI's
// answer is not checked, unless the environment fixes what makes it not used.
func TestOpenMPIUnreadMCAFile(t *testing.T) {
	host := []*Port{port("", "mlx5_0", 1, 0xffff, 0x8002)}
	read := func(kv []string, fsys mapMCA) *Result {
		in := env(kv...)
		in.MCA = ReadMCAFiles(Env{"HOME": "/h", "OPAL_SYSCONFDIR": "/s"}, fsys)
		return Resolve([]*Library{&OpenMPI}, in, host)[0]
	}
	deny := mapMCA{deny: []string{"/h/.openmpi/mca-params.conf"}}
	r := read([]string{"OMPI_MCA_btl_openib_allow_ib=1", "OMPI_MCA_btl_openib_pkey=2"}, deny)
	if r.Verdict != Incomplete || !strings.Contains(strings.Join(r.Unchecked, " "), "/h/.openmpi/mca-params.conf") {
		t.Errorf("unreadable home file: %s %q", r.Verdict, r.Unchecked)
	}
	// Unset allow_ib: the file may set it; inactive is not said.
	if r := read(nil, deny); r.Verdict != Incomplete || r.Inactive != "" {
		t.Errorf("unreadable home file, allow_ib unset: %s %q", r.Verdict, r.Inactive)
	}
	// pml ucx and a btl list from the environment: no file but the override one can
	// change them.
	if r := read([]string{"OMPI_MCA_pml=ucx", "OMPI_MCA_btl=self,vader"}, deny); r.Verdict != NotApplicable || !strings.Contains(strings.Join(r.Notes, " "), "cannot change that") {
		t.Errorf("unreadable home file, pml ucx, btl self,vader: %s %q", r.Verdict, r.Notes)
	}
	// pml ucx alone: the file may set a btl list MPI_Init refuses when it opens the
	// BTLs, before the PML (a real Open MPI 4.1.4: TestComponentListsAgainstMPIInit),
	// and the job then does not start.
	if r := read([]string{"OMPI_MCA_pml=ucx"}, deny); r.Verdict != Incomplete || !strings.Contains(strings.Join(r.Unchecked, " "), "/h/.openmpi/mca-params.conf") {
		t.Errorf("unreadable home file, pml ucx alone: %s %q", r.Verdict, r.Unchecked)
	}
	// A list the environment gives and Open MPI refuses: refused, whatever the file says.
	if r := read([]string{"OMPI_MCA_btl=self, vader"}, deny); r.Verdict != DoesNotWork {
		t.Errorf("unreadable home file, a refused btl list: %s", r.Verdict)
	}
	if r := read([]string{"OMPI_MCA_pml=ucx"}, mapMCA{deny: []string{"/s/openmpi-mca-params-override.conf"}}); r.Verdict != Incomplete {
		t.Errorf("unreadable override file, pml ucx: %s", r.Verdict)
	}
	in := env("OMPI_MCA_btl_openib_allow_ib=1")
	in.MCA = ReadMCAFiles(Env{"OMPI_MCA_mca_base_param_file_prefix": "ompi-sets"}, mapMCA{})
	if r := Resolve([]*Library{&OpenMPI}, in, host)[0]; r.Verdict != Incomplete || !strings.Contains(strings.Join(r.Unchecked, " "), "aggregate parameter files") {
		t.Errorf("an aggregate parameter set: %s %q", r.Verdict, r.Unchecked)
	}
	odd := mapMCA{files: map[string]string{"/h/.openmpi/mca-params.conf": "/* btl_openib_pkey = 3 */\n"}}
	if r := read([]string{"OMPI_MCA_btl_openib_allow_ib=1"}, odd); r.Verdict != Incomplete || !strings.Contains(strings.Join(r.Unchecked, " "), "line 1") {
		t.Errorf("a line not interpreted: %s %q", r.Verdict, r.Unchecked)
	}
}

// Open MPI opens a relative parameter file name as it is, so in each MPI process's
// working directory (mca_base_var.c read_files; a real ompi_info 4.1.4 reads
// OMPI_MCA_mca_base_param_files=rel.conf only when started where rel.conf is): the
// note says ibkey looked in its own, read or not.
func TestOmpiFilesNoteRelative(t *testing.T) {
	for _, m := range []*MCAFiles{{fileReads: fileReads{Read: []string{"rel.conf", "/etc/openmpi/openmpi-mca-params.conf"}}}, {fileReads: fileReads{Missing: []string{"sub/rel.conf"}}}} {
		name := slices.Concat(m.Read, m.Missing)[0]
		if got := ompiFilesNote(m); !strings.Contains(got, name+" looked up in ibkey's working directory: Open MPI opens a relative name in each process's") {
			t.Errorf("%+v: %s", m, got)
		}
	}
	if got := ompiFilesNote(&MCAFiles{fileReads: fileReads{Read: []string{"/etc/openmpi/openmpi-mca-params.conf"}}}); strings.Contains(got, "working directory") {
		t.Errorf("an absolute name: %s", got)
	}
}

// An empty mca_base_param_files (or its synonym, by either name) is NULL to Open
// MPI, which mca_base_var_cache_files strdups: every process dies with SIGSEGV as it
// starts. The real ompi_info 4.1.4 crashes exactly where ibkey says Open MPI does not
// start; "none" and "," start.
func TestEmptyParamFilesAgainstOmpiInfo(t *testing.T) {
	bin := ompiInfo(t)
	host := []*Port{port("", "mlx5_0", 1, 0xffff)}
	for _, kv := range [][]string{
		{"OMPI_MCA_mca_base_param_files="},
		{"OMPI_MCA_opal_mca_base_param_files="},
		{"OMPI_MCA_mca_param_files="},
		{"OMPI_MCA_opal_mca_param_files="},
		{"OMPI_MCA_mca_base_param_files=none", "OMPI_MCA_mca_param_files="},
		{"OMPI_MCA_mca_base_param_files=none"},
		{"OMPI_MCA_mca_base_param_files=,"},
		{"OMPI_MCA_mca_param_files=none"},
	} {
		in := env(append([]string{"OMPI_MCA_btl_openib_allow_ib=1"}, kv...)...)
		in.MCA = ReadMCAFiles(in.Env, mapMCA{})
		r := Resolve([]*Library{&OpenMPI}, in, host)[0]
		says := r.Verdict == DoesNotWork && strings.Contains(strings.Join(r.Findings, " "), "crashes")
		cmd := exec.Command(bin, "--version")
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "OPAL_SYSCONFDIR=" + t.TempDir()}, kv...)
		err := cmd.Run()
		crashed := err != nil && cmd.ProcessState != nil && !cmd.ProcessState.Exited()
		if crashed != says {
			t.Errorf("%q: ompi_info crashed: %v (%v); ibkey says %s, Open MPI does not start: %v", kv, crashed, err, r.Verdict, says)
		}
	}
}
