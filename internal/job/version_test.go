package job

import (
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
)

// ver is in with the job's version of library lib given (--lib-version).
func ver(in Inputs, lib, v string) Inputs {
	pv, ok := ParseVersion(v)
	if !ok {
		panic("bad version " + v)
	}
	vs := Versions{lib: pv}
	for k, w := range in.Versions {
		if k != lib {
			vs[k] = w
		}
	}
	in.Versions = vs
	return in
}

func TestParseVersion(t *testing.T) {
	for _, c := range []struct {
		in string
		ok bool
	}{
		{"2.29.2", true}, {"2.29.2-1", true}, {"4.5-0.17", true}, {"1.13.1", true}, {"2.30", true}, {"2023.9.0", true},
		{"2", false}, {"", false}, {"v2.29.2", false}, {"2.29.x", false}, {"2..29", false}, {"2.29.", false}, {".2.29", false},
		{"2.+29", false}, {"2.29 ", false}, {"1.13.1+deb12u1", false}, {"2.29-rc1", false}, {"2.1234567890", false},
	} {
		if _, ok := ParseVersion(c.in); ok != c.ok {
			t.Errorf("ParseVersion(%q) ok %v, want %v", c.in, ok, c.ok)
		}
	}
	v, _ := ParseVersion("2.29.2-1")
	for _, c := range []struct {
		r    string
		want int
	}{{"2.29.2", 1}, {"2.29.2.1", 0}, {"2.30", -1}, {"2.23", 1}, {"2.29.3", -1}} {
		if got := v.compare(c.r); got != c.want {
			t.Errorf("2.29.2-1 against %s: %d, want %d", c.r, got, c.want)
		}
	}
}

// Every library's releases parse (compare panics on a bad constant).
func TestReleasesParse(t *testing.T) {
	for _, l := range Libraries() {
		for _, r := range []string{l.releases.oldest, l.releases.below} {
			if _, ok := ParseVersion(r); r != "" && !ok {
				t.Errorf("%s: release %q does not parse", l.ID, r)
			}
		}
	}
}

func TestParseLibVersions(t *testing.T) {
	got, err := ParseLibVersions([]string{"nccl=2.29.2-1,ucx=1.13.1", "NVSHMEM=3.7.0", "nccl=2.29.2-1"})
	if err != nil || len(got) != 3 || got["nccl"].String() != "2.29.2-1" || got["nvshmem"].String() != "3.7.0" {
		t.Fatalf("%v %v", got, err)
	}
	for _, c := range []struct{ in, says string }{
		{"nccl", `invalid --lib-version "nccl" (accepted: LIB=VERSION`},
		{"mpich=4.1", `no library "mpich" (accepted: nccl, ucx`},
		{"nccl=2.x", `"2.x" is not a release`},
		{"nccl=", `"" is not a release`},
		{"nccl=2.29.2,nccl=2.30.3", `nccl is already 2.29.2 (one version per library)`},
	} {
		if _, err := ParseLibVersions([]string{c.in}); err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%q: %v, want %q", c.in, err, c.says)
		}
	}
}

// A version ibkey does not model: the library's answer is not checked, and says
// why; one in range is named (Result.Version).
func TestVersionNotModelled(t *testing.T) {
	p := port("h", "mlx5_0", 1, 0xffff, 0x8002)
	for _, c := range []struct {
		lib  *Library
		in   Inputs
		v    string
		says string // "" modelled
	}{
		{&NCCL, env("NCCL_IB_PKEY=1"), "1.5", "NCCL 1.5 (--lib-version) is older than any release ibkey models (NCCL 2.8.3"},
		{&NCCL, env("NCCL_IB_PKEY=1"), "2.7.8-1", "older than any release"},
		{&NCCL, env("NCCL_IB_PKEY=1"), "3.0.1", "NCCL 3.0.1 (--lib-version) is not a release ibkey models"},
		{&NCCL, env("NCCL_IB_PKEY=1"), "2.8.3-1", ""},
		{&UCX, env(), "1.7.0", "UCX 1.7.0 (--lib-version) is older"},
		{&UCX, env(), "2.0", "not a release ibkey models"},
		{&NVSHMEM, env(), "0.9", "older"},
		{&OpenMPI, env("OMPI_MCA_btl_openib_allow_ib=1"), "3.1.6", "Open MPI 3.1.6 (--lib-version) is older"},
		{&OpenMPI, env("OMPI_MCA_btl_openib_allow_ib=1"), "4.1.4", ""},
		{&MVAPICH2, env(), "3.0", "MVAPICH 3 reads MVP_ settings"},
		{&MVAPICH2, env(), "2.2", "older"},
		{&MVAPICH2, env(), "2.3.7", ""},
		{&GASNet, env(), "2023.9.0", ""},
	} {
		r := Resolve([]*Library{c.lib}, ver(c.in, c.lib.ID, c.v), []*Port{p})[0]
		if r.Version != c.v {
			t.Errorf("%s %s: Version %q", c.lib.ID, c.v, r.Version)
		}
		all := strings.Join(r.Unchecked, "\n")
		if c.says == "" {
			if r.Verdict != Works || all != "" {
				t.Errorf("%s %s: %s %q", c.lib.ID, c.v, r.Verdict, r.Unchecked)
			}
			continue
		}
		if r.Verdict != Incomplete || !strings.Contains(all, c.says) {
			t.Errorf("%s %s: %s %q, want not checked saying %q", c.lib.ID, c.v, r.Verdict, r.Unchecked, c.says)
		}
		for _, pr := range r.Ports {
			if pr.Used && pr.Outcome != NotChecked {
				t.Errorf("%s %s: %s is %s", c.lib.ID, c.v, pr.Port.Label(), pr.Outcome)
			}
		}
	}
}

// NCCL's files, read three ways (ncclReadings): a version decides which.
func TestNCCLFilesVersion(t *testing.T) {
	ports := []*Port{port("h", "mlx5_0", 1, 0xffff, 0x8002, 0, 0, 0, 0, 0, 0x8002)}
	home := mapFS{files: map[string]string{"/home/u/.nccl.conf": "NCCL_IB_PKEY=7\n"}}
	in := Inputs{Env: Env{}, NCCL: ReadNCCLFiles(Env{"HOME": "/home/u"}, home, "/root", true)}
	for _, c := range []struct {
		v       string
		verdict Verdict
		says    string
	}{
		// $HOME's file in 2.30 and later, the password database's home (/root)
		// before: no file.
		{"", Incomplete, "NCCL_IB_PKEY from NCCL's files: unset in NCCL before 2.30"},
		{"2.30.3-1", Works, "NCCL_IB_PKEY=7 (/home/u/.nccl.conf:1): index 7"},
		{"2.29.2-1", Works, "NCCL_IB_PKEY from NCCL's files: unset, as NCCL 2.29.2-1 (--lib-version) reads them (NCCL 2.23 to 2.29)"},
		{"2.29.2-1", Works, "NCCL_IB_PKEY unset: index 0"},
		{"2.18.3", Works, "as NCCL 2.18.3 (--lib-version) reads them (NCCL before 2.23)"},
		{"2.7.8", Incomplete, "older than any release"},
	} {
		i := in
		if c.v != "" {
			i = ver(in, "nccl", c.v)
		}
		r := Resolve([]*Library{&NCCL}, i, ports)[0]
		all := strings.Join(append(append([]string{r.Setting}, r.Notes...), r.Unchecked...), "\n")
		if r.Verdict != c.verdict || !strings.Contains(all, c.says) {
			t.Errorf("%q: %s\n%s\nwant %s saying %q", c.v, r.Verdict, all, c.verdict, c.says)
		}
		if c.verdict != Incomplete && len(r.Unchecked) > 0 {
			t.Errorf("%q: unchecked %q", c.v, r.Unchecked)
		}
	}
	// The gate: the export beats the files' NCCL_IB_PKEY, and the version decides
	// their NCCL_IB_HCA.
	hca := mapFS{files: map[string]string{"/home/u/.nccl.conf": "NCCL_IB_HCA=mlx5_9\n"}}
	in = Inputs{Env: Env{}, NCCL: ReadNCCLFiles(Env{"HOME": "/home/u"}, hca, "/root", true)}
	for v, want := range map[string]Verdict{"": DoesNotWork, "2.30.3": DoesNotWork, "2.29.2": Works} {
		i := in
		if v != "" {
			i = ver(in, "nccl", v)
		}
		// Without a version, the reading the finding comes from is said not checked.
		if w := WantPartition([]*Library{&NCCL}, i, 0x8002, ports)[0]; w.Verdict != want || (len(w.Unchecked) > 0) != (v == "") {
			t.Errorf("gate, NCCL %q: %s %s %q %q, want %s", v, w.Verdict, w.Setting, w.Findings, w.Unchecked, want)
		}
	}
	// The password database not looked up: an assumption for NCCL before 2.30
	// only.
	in = Inputs{Env: Env{}, NCCL: ReadNCCLFiles(Env{"HOME": "/home/u"}, home, "", false)}
	for v, want := range map[string]bool{"": true, "2.29.2": true, "2.30.3": false} {
		i := in
		if v != "" {
			i = ver(in, "nccl", v)
		}
		r := Resolve([]*Library{&NCCL}, i, ports)[0]
		if got := strings.Contains(strings.Join(r.Assumptions, "\n"), "password database"); got != want {
			t.Errorf("NCCL %q: password database assumption %v, want %v: %q", v, got, want, r.Assumptions)
		}
	}
}

// NCCL_IB_PKEY_VALUE is read from 2.31; the env plugin arrived in 2.28.7.
func TestNCCLVersionSplits(t *testing.T) {
	p := port("h", "mlx5_0", 1, 0xffff, 0x8002)
	for _, c := range []struct {
		v       string
		verdict Verdict
		says    string
	}{
		{"", Incomplete, "is a P_Key value newer NCCL reads (2.31)"},
		{"2.31.2", Incomplete, "is a P_Key value newer NCCL reads (2.31)"},
		{"2.30.7", Works, "NCCL_IB_PKEY_VALUE=0x8002 is not read by NCCL 2.30.7 (--lib-version)"},
	} {
		in := env("NCCL_IB_PKEY_VALUE=0x8002")
		if c.v != "" {
			in = ver(in, "nccl", c.v)
		}
		r := Resolve([]*Library{&NCCL}, in, []*Port{p})[0]
		all := strings.Join(append(r.Notes, r.Unchecked...), "\n")
		if r.Verdict != c.verdict || !strings.Contains(all, c.says) {
			t.Errorf("%q: %s %q, want %s saying %q", c.v, r.Verdict, all, c.verdict, c.says)
		}
	}
	for v, plugin := range map[string]bool{"": true, "2.28.7-1": true, "2.28.3-1": false} {
		in := env()
		if v != "" {
			in = ver(in, "nccl", v)
		}
		r := Resolve([]*Library{&NCCL}, in, []*Port{p})[0]
		if got := strings.Contains(strings.Join(r.Assumptions, "\n"), "env plugin"); got != plugin {
			t.Errorf("%q: env plugin assumed %v, want %v", v, got, plugin)
		}
	}
}

// UCX's splits: 0xfffe (1.8.0), the files (1.11, 1.12.0), section filters
// (1.17.0), RoCE ports (1.12.0), UCX_NET_DEVICES (1.21, ranges 1.22).
func TestUCXVersionSplits(t *testing.T) {
	tbl := []int{0xffff, 0x8002, 0x0003}
	home := func(s string) map[string]string { return map[string]string{"/home/u/ucx.conf": s} }
	etc := func(s string) map[string]string { return map[string]string{"/etc/ucx/ucx.conf": s} }
	v := func(in Inputs, s string) Inputs { return ver(in, "ucx", s) }
	runPicks(t, &UCX, []pickCase{
		{"0xfffe, 1.8.0", v(env("UCX_IB_PKEY=0xfffe"), "1.8.0"), tbl, Uses, 0, 0xffff, "which UCX 1.8.0 (--lib-version) takes as auto"},
		{"0xfffe, 1.7.0", v(env("UCX_IB_PKEY=0xfffe"), "1.7.0"), tbl, NotChecked, -1, 0, "UCX 1.7.0 (--lib-version) is older than any release ibkey models"},
		// $HOME's file: read from 1.12.0 only.
		{"home, no version", ucxConf(home("UCX_IB_PKEY=0x0002\n")), tbl, NotChecked, -1, 0, "UCX before 1.12.0"},
		{"home, 1.12.0", v(ucxConf(home("UCX_IB_PKEY=0x0002\n")), "1.12.0"), tbl, Uses, 1, 0x8002, "ucx.conf files read as UCX 1.12.0 (--lib-version) reads them"},
		{"home, 1.11.0", v(ucxConf(home("UCX_IB_PKEY=0x0002\n")), "1.11.0"), tbl, Uses, 0, 0xffff, ""},
		{"home, 1.10.0", v(ucxConf(home("UCX_IB_PKEY=0x0002\n")), "1.10.0"), tbl, Uses, 0, 0xffff, "UCX 1.10.0 (--lib-version) reads no ucx.conf"},
		// 1.11 keeps a name's first line, 1.12 and later the last.
		{"etc twice, 1.11.1", v(ucxConf(etc("UCX_IB_PKEY=0x0002\nUCX_IB_PKEY=0x7fff\n")), "1.11.1"), tbl, Uses, 1, 0x8002, "UCX 1.11 (it reads only /etc/ucx/ucx.conf, a name's first line)"},
		{"etc twice, 1.13.1", v(ucxConf(etc("UCX_IB_PKEY=0x0002\nUCX_IB_PKEY=0x7fff\n")), "1.13.1"), tbl, Uses, 0, 0xffff, ""},
		// A section filter: 1.17.0 and later only.
		{"filtered, no version", ucxConf(home("[Grace]\nCPU model=Grace\nUCX_IB_PKEY=0x0002\n")), tbl, NotChecked, -1, 0, `follows "CPU model=Grace"`},
		{"filtered, 1.16.0", v(ucxConf(home("[Grace]\nCPU model=Grace\nUCX_IB_PKEY=0x0002\n")), "1.16.0"), tbl, Uses, 1, 0x8002, ""},
		{"filtered, 1.17.0", v(ucxConf(home("[Grace]\nCPU model=Grace\nUCX_IB_PKEY=0x0002\n")), "1.17.0"), tbl, NotChecked, -1, 0, `follows "CPU model=Grace"`},
		// A file not read matters only to a UCX that reads files.
		{"unread, 1.10.0", v(Inputs{Env: Env{"UCX_IB_PKEY": "0x7fff"}, UCX: ReadUCXFiles(Env{"HOME": "/home/u"}, mapMCA{deny: []string{"/home/u/ucx.conf"}})}, "1.10.0"), tbl, Uses, 0, 0xffff, "reads no ucx.conf"},
		{"unread, 1.13.1", v(Inputs{Env: Env{"UCX_IB_PKEY": "0x7fff"}, UCX: ReadUCXFiles(Env{"HOME": "/home/u"}, mapMCA{deny: []string{"/home/u/ucx.conf"}})}, "1.13.1"), tbl, NotChecked, -1, 0, "could not be read"},
	})

	if r := Resolve([]*Library{&UCX}, env("UCX_IB_PKEY=0xfffe"), []*Port{port("h", "mlx5_0", 1, tbl...)})[0]; r.Verdict != Incomplete || !strings.Contains(strings.Join(r.Unchecked, "\n"), "and older UCX refuses; ibkey does not know the job's UCX version") {
		t.Errorf("0xfffe, no version: %s %q", r.Verdict, r.Unchecked)
	}

	// RoCE: index 0 from 1.12.0; before, looked up as on InfiniBand.
	roce := port("h", "mlx5_0", 1, 0xffff)
	roce.LinkLayer = "Ethernet"
	for _, c := range []struct {
		v       string
		outcome Outcome
		says    string
	}{
		{"", NotChecked, "ibkey does not know the job's UCX version"},
		{"1.12.0", Uses, "RoCE port: UCX 1.12.0 (--lib-version) uses index 0"},
		{"1.11.0", Fails, "unable to find specified pkey 0x2"},
	} {
		in := env("UCX_IB_PKEY=0x0002")
		if c.v != "" {
			in = v(in, c.v)
		}
		pk, _ := pickOn(t, &UCX, in, roce)
		if pk.Outcome != c.outcome || !strings.Contains(pk.Problem+strings.Join(pk.Notes, "\n"), c.says) {
			t.Errorf("RoCE, UCX %q: %s %q %q, want %s saying %q", c.v, pk.Outcome, pk.Problem, pk.Notes, c.outcome, c.says)
		}
		if c.v == "" {
			continue
		}
		// The gate takes the same lookup.
		w := WantPartition([]*Library{&UCX}, in, 0xffff, []*Port{roce})[0]
		if got := w.Ports[0].Outcome; got != c.outcome && !(c.outcome == Fails && got == Uses) {
			t.Errorf("RoCE gate, UCX %q: %s", c.v, got)
		}
	}

	// UCX_NET_DEVICES: an allow list from 1.21, exact dev:port names before.
	a, b := port("h", "mlx5_0", 1, 0xffff), port("h", "mlx5_1", 1, 0xffff)
	for _, c := range []struct {
		devs, v   string
		usedA     bool
		usedB     bool
		verdict   Verdict
		says      string
		unchecked bool // something is said not checked
	}{
		{"mlx5_0", "", true, false, Incomplete, "UCX before 1.21 matches only exact dev:port names", true},
		{"mlx5_0", "1.21.0", true, false, Works, "", false},
		{"mlx5_0", "1.20.0", false, false, DoesNotWork, "UCX 1.20.0 (--lib-version) matches only exact dev:port names", false},
		{"^mlx5_0:1", "1.21.0", false, true, Works, "", false},
		{"^mlx5_0:1", "1.13.1", false, false, DoesNotWork, "has no '^'", false},
		{"all,mlx5_0:1", "", true, true, Incomplete, "UCX 1.21 and later refuse it", true},
		{"all,mlx5_0:1", "1.21.0", true, true, DoesNotWork, "UCX 1.21.0 (--lib-version) refuses it", false},
		{"all,mlx5_0:1", "1.20.0", true, true, Works, "uses every device", false},
		{"mlx5_[0-1]:1", "", false, false, DoesNotWork, "uses ranges", true},
		{"mlx5_[0-1]:1", "1.22.0", false, false, DoesNotWork, "uses ranges", true},
		{"mlx5_[0-1]:1", "1.21.0", false, false, DoesNotWork, "not selected by UCX_NET_DEVICES", false},
	} {
		in := env("UCX_NET_DEVICES=" + c.devs)
		if c.v != "" {
			in = v(in, c.v)
		}
		r := Resolve([]*Library{&UCX}, in, []*Port{a, b})[0]
		all := strings.Join(append(append(append([]string{r.Setting}, r.Notes...), r.Unchecked...), r.Findings...), "\n")
		if r.Ports[0].Used != c.usedA || r.Ports[1].Used != c.usedB || r.Verdict != c.verdict || !strings.Contains(all, c.says) || (len(r.Unchecked) > 0) != c.unchecked {
			t.Errorf("UCX_NET_DEVICES=%s, UCX %q: used %v %v, %s\n%s\nwant %v %v %s saying %q", c.devs, c.v, r.Ports[0].Used, r.Ports[1].Used, r.Verdict, all, c.usedA, c.usedB, c.verdict, c.says)
		}
	}
}

// NVSHMEM_IB_PKEY_INDEX is read from 3.7.0; before, index 0 whatever it says.
func TestNVSHMEMVersion(t *testing.T) {
	tbl := []int{0xffff, 0x8002}
	v := func(in Inputs, s string) Inputs { return ver(in, "nvshmem", s) }
	runPicks(t, &NVSHMEM, []pickCase{
		{"no version", env("NVSHMEM_IB_PKEY_INDEX=1"), tbl, Uses, 1, 0x8002, "NVSHMEM 3.7.0 and later; earlier versions ignore it"},
		{"3.7.0", v(env("NVSHMEM_IB_PKEY_INDEX=1"), "3.7.0"), tbl, Uses, 1, 0x8002, "NVSHMEM 3.7.0 (--lib-version) reads it"},
		{"3.4.5", v(env("NVSHMEM_IB_PKEY_INDEX=1"), "3.4.5"), tbl, Uses, 0, 0xffff, "NVSHMEM_IB_PKEY_INDEX=1: not read: NVSHMEM 3.4.5 (--lib-version) does not read"},
	})
	p := port("h", "mlx5_0", 1, tbl...)
	for _, c := range []struct {
		v           string
		assumed     bool
		key         uint16
		verdict     Verdict
		same, notes string
	}{
		{"", true, 0x8002, Works, "NVSHMEM_IB_PKEY_INDEX=1", "needs NVSHMEM 3.7.0"},
		{"3.7.0", false, 0x8002, Works, "NVSHMEM_IB_PKEY_INDEX=1", ""},
		{"3.4.5", false, 0x8002, DoesNotWork, "", ""},
		{"3.4.5", false, 0xffff, Works, "NVSHMEM_IB_PKEY_INDEX=0", ""},
	} {
		in := env("NVSHMEM_IB_PKEY_INDEX=1")
		if c.v != "" {
			in = v(in, c.v)
		}
		r := Resolve([]*Library{&NVSHMEM}, in, []*Port{p})[0]
		if got := strings.Contains(strings.Join(r.Assumptions, "\n"), "NVSHMEM_IB_PKEY_INDEX is honoured"); got != c.assumed {
			t.Errorf("NVSHMEM %q: assumption %v, want %v", c.v, got, c.assumed)
		}
		w := WantPartition([]*Library{&NVSHMEM}, in, check.PKey(c.key), []*Port{p})[0]
		notes := strings.Join(append(w.Notes, w.Findings...), "\n")
		if w.Verdict != c.verdict || w.Same != c.same || (c.notes != "") != strings.Contains(notes, "needs NVSHMEM 3.7.0") {
			t.Errorf("gate %#04x, NVSHMEM %q: %s %q %q", c.key, c.v, w.Verdict, w.Same, notes)
		}
		if c.verdict == DoesNotWork && !strings.Contains(notes, "index 0 of h:mlx5_0/1 holds 0xffff, not partition 0x0002") {
			t.Errorf("gate, NVSHMEM %q: %q", c.v, notes)
		}
	}
}

// Open MPI's openib BTL: 4.x; removed in 5.0.0.
func TestOpenMPIVersion(t *testing.T) {
	p := port("h", "mlx5_0", 1, 0xffff, 0x8002)
	for _, c := range []struct {
		env     []string
		v       string
		verdict Verdict
		says    string
	}{
		{[]string{"OMPI_MCA_btl_openib_allow_ib=1"}, "", Works, ""},
		{[]string{"OMPI_MCA_btl_openib_allow_ib=1"}, "4.1.4", Works, ""},
		{[]string{"OMPI_MCA_btl_openib_allow_ib=1"}, "5.0.0", NotApplicable, "Open MPI 5.0.0 (--lib-version) has no openib BTL (removed in 5.0.0)"},
		{[]string{"OMPI_MCA_btl_openib_allow_ib=1", "OMPI_MCA_btl=openib,self"}, "5.0.3", DoesNotWork, "Open MPI 5.0.3 (--lib-version) has no openib BTL"},
		{[]string{"OMPI_MCA_btl_openib_allow_ib=1", "OMPI_MCA_btl=^openib"}, "5.0.3", NotApplicable, "has no openib BTL"},
		{[]string{"OMPI_MCA_btl_openib_allow_ib=1", "OMPI_MCA_btl=openib,self"}, "4.1.4", Works, ""},
	} {
		in := env(c.env...)
		if c.v != "" {
			in = ver(in, "openmpi", c.v)
		}
		r := Resolve([]*Library{&OpenMPI}, in, []*Port{p})[0]
		all := strings.Join(append(append([]string{r.Setting, r.Inactive}, r.Findings...), r.Unchecked...), "\n")
		if r.Verdict != c.verdict || !strings.Contains(all, c.says) {
			t.Errorf("%q, Open MPI %q: %s\n%s\nwant %s saying %q", c.env, c.v, r.Verdict, all, c.verdict, c.says)
		}
		// The assumption of 4.x goes with a version given.
		assumed := strings.Join(r.Assumptions, "\n")
		if strings.Contains(assumed, "Open MPI 4.x") != (c.v == "") || c.v == "4.1.4" && !strings.Contains(assumed, "the openib BTL of Open MPI 4.1.4 (--lib-version)") {
			t.Errorf("%q, Open MPI %q: assumptions %q", c.env, c.v, r.Assumptions)
		}
	}
}

// perftest's option tables are not ordered by release: a version given does not
// decide them, and says so.
func TestPerftestVersionDoesNotDecide(t *testing.T) {
	a := ParsePerftestArgs("ib_send_bw --use_cuda_dmabuf --pkey_index=1")
	if len(a.Unsure) == 0 {
		t.Fatal("no option the two tables read differently")
	}
	in := ver(Inputs{Perftest: &a}, "perftest", "4.5-0.17")
	r := Resolve([]*Library{&Perftest}, in, []*Port{port("h", "mlx5_0", 1, 0xffff, 0x8002)})[0]
	if r.Verdict != Incomplete || !strings.Contains(strings.Join(r.Unchecked, "\n"), "perftest 4.5-0.17 (--lib-version) does not decide it") {
		t.Errorf("%s %q", r.Verdict, r.Unchecked)
	}
}
