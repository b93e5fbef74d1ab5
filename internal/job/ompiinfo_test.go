package job

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// needTool is the path of a real tool a test compares ibkey with, from Debian's
// package pkg; without it the test is skipped (failed under CI, which installs it).
func needTool(t *testing.T, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s not found (CI is set, so this fails instead of skipping); install with: apt-get install -y %s", name, pkg)
		}
		t.Skipf("%s not found; install with: apt-get install -y %s", name, pkg)
	}
	return p
}

// ompiInfo is the real Open MPI's reading of its MCA variables: the path of
// ompi_info (Debian's openmpi-bin), or the test is skipped (failed under CI).
func ompiInfo(t *testing.T) string { return needTool(t, "ompi_info", "openmpi-bin") }

// ompiVars runs ompi_info --parsable --all --level 9 with env added to a clean
// environment that reads no MCA parameter file, so that a parser is compared on the
// environment alone (TestMCAFilesAgainstOmpiInfo compares the files): no parameter
// files ("none"), and sysconfdir an empty directory (OPAL_SYSCONFDIR,
// opal/mca/installdirs/env), so no override file either. It returns each
// variable's value and type by full name.
func ompiVars(t *testing.T, bin string, env ...string) (value, typ map[string]string) {
	t.Helper()
	env = append([]string{"HOME=" + t.TempDir(), "OMPI_MCA_mca_base_param_files=none", "OPAL_SYSCONFDIR=" + t.TempDir()}, env...)
	value, typ, _, err := ompiRun(bin, env)
	if err != nil {
		t.Fatalf("ompi_info with %v: %v", env, err)
	}
	return value, typ
}

// ompiRun runs ompi_info --parsable --all --level 9 with env (and PATH) as its
// whole environment: each variable's value, type and source by full name.
func ompiRun(bin string, env []string) (value, typ, source map[string]string, err error) {
	cmd := exec.Command(bin, "--parsable", "--all", "--level", "9")
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"}, env...)
	out, err := cmd.Output()
	if err != nil {
		return nil, nil, nil, err
	}
	value, typ, source = map[string]string{}, map[string]string{}, map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		// mca:FRAMEWORK:COMPONENT:param:NAME:value:VALUE
		f := strings.SplitN(line, ":", 7)
		if len(f) < 7 || f[0] != "mca" || f[3] != "param" {
			continue
		}
		switch f[5] {
		case "value":
			value[f[4]] = f[6]
		case "type":
			typ[f[4]] = f[6]
		case "source":
			source[f[4]] = f[6]
		}
	}
	return value, typ, source, nil
}

// ompiEchoing are the variables of type typ, named with prefix, whose shown value is what the
// environment set (setting each to a then b), so that ompi_info shows how Open MPI
// parsed a value and not what a component made of it afterwards (btl_openib_pkey is
// masked, for one).
func ompiEchoing(t *testing.T, bin, typ, prefix string, a, b [2]string) []string {
	t.Helper()
	_, types := ompiVars(t, bin)
	var names []string
	for n, ty := range types {
		// Debian's ompi_info (4.1.4) crashes when CUDA support is asked for
		// (opal_cuda_support, mpi_cuda_support) on a host without CUDA.
		if ty == typ && strings.HasPrefix(n, prefix) && !strings.Contains(n, "cuda") {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	set := func(v string) []string {
		var env []string
		for _, n := range names {
			env = append(env, "OMPI_MCA_"+n+"="+v)
		}
		return env
	}
	va, _ := ompiVars(t, bin, set(a[0])...)
	vb, _ := ompiVars(t, bin, set(b[0])...)
	return slices.DeleteFunc(names, func(n string) bool { return va[n] != a[1] || vb[n] != b[1] })
}

// compareBatches sets the inputs, len(names) at a time, one to each variable, and
// compares ompi_info's value with want's (refused: the default the variable had).
func compareBatches(t *testing.T, bin string, names, inputs []string, want func(in, def string) string) {
	t.Helper()
	if len(names) < 5 {
		t.Fatalf("only %d variables show what was set: %v", len(names), names)
	}
	def, _ := ompiVars(t, bin)
	for start := 0; start < len(inputs); start += len(names) {
		batch := inputs[start:min(start+len(names), len(inputs))]
		var env []string
		for i, in := range batch {
			env = append(env, "OMPI_MCA_"+names[i]+"="+in)
		}
		got, _ := ompiVars(t, bin, env...)
		for i, in := range batch {
			if w := want(in, def[names[i]]); got[names[i]] != w {
				t.Errorf("%s=%q: Open MPI shows %q, ibkey reads %q", names[i], in, got[names[i]], w)
			}
		}
	}
}

// TestOMPIUintAgainstOmpiInfo compares ompiUint with the real Open MPI (4.1) on
// generated values: every unsigned int MCA variable that shows what was set takes
// one value per run.
func TestOMPIUintAgainstOmpiInfo(t *testing.T) {
	bin := ompiInfo(t)
	names := ompiEchoing(t, bin, "unsigned_int", "", [2]string{"100000", "100000"}, [2]string{"0x10", "16"})
	var inputs []string
	for _, s := range libcInputs() {
		if !strings.ContainsAny(s, "\n") { // ompi_info shows a value on one line
			inputs = append(inputs, s)
		}
	}
	for _, n := range []string{"0", "1", "3", "4", "0x3", "1023", "4194303", "4194304", "4095", "4096", "5000000"} {
		for _, suf := range []string{"k", "K", "m", "M", "g", "G", "kb", "t", " k", "k7"} {
			inputs = append(inputs, n+suf)
		}
	}
	compareBatches(t, bin, names, inputs, func(in, def string) string {
		u, ok := ompiUint(in)
		if !ok {
			return def
		}
		return strconv.FormatUint(uint64(u), 10)
	})
}

// TestOMPIBoolAgainstOmpiInfo compares ompiAllowIB's bool parser with the real Open
// MPI on generated values, over every bool MCA variable that shows what was set.
func TestOMPIBoolAgainstOmpiInfo(t *testing.T) {
	bin := ompiInfo(t)
	// Only the BTLs' bools: all of them true at once stops ompi_info (orte's
	// orte_map_stddiag_to_stderr and _stdout are mutually exclusive).
	names := ompiEchoing(t, bin, "bool", "btl_", [2]string{"1", "true"}, [2]string{"0", "false"})
	inputs := []string{"", " ", "1", "0", "2", "-1", " 1", "1 ", "\t1", "01", "0x1", "1x", "+1", "-0", "99999999999999999999", "-99999999999999999999",
		"t", "f", "y", "n", "T", "Y", "true", "false", "TRUE", "True", "yes", "no", "YES", "enabled", "disabled", "Enabled", "on", "off", " true", "true ", "yes!", "tru", "junk"}
	for _, s := range libcInputs() {
		if !strings.ContainsAny(s, "\n") && len(inputs) < 400 {
			inputs = append(inputs, s)
		}
	}
	compareBatches(t, bin, names, inputs, func(in, def string) string {
		allow, why, _ := ompiAllowIB(Inputs{Env: Env{"OMPI_MCA_btl_openib_allow_ib": in}})
		if strings.Contains(why, "refused") {
			return def
		}
		return strconv.FormatBool(allow)
	})
}

// TestOpenMPIPKeyAgainstOmpiInfo compares the Open MPI rule's key (btl_openib_pkey,
// its synonym ib_pkey_val and their long names, which wins, the mask, a refused
// value) with the key the real Open MPI shows, which it masks as the rule does
// (btl_openib_mca.c).
func TestOpenMPIPKeyAgainstOmpiInfo(t *testing.T) {
	bin := ompiInfo(t)
	names := []string{"OMPI_MCA_btl_openib_pkey", "OMPI_MCA_btl_openib_ib_pkey_val", "OMPI_MCA_opal_btl_openib_pkey", "OMPI_MCA_ompi_btl_openib_ib_pkey_val"}
	values := []string{"", "3", "0x8001", "0xffff", "-1", "4g", "junk", "5k", "0x7fff", "65536"}
	seen := map[string]bool{}
	var cases []Env
	for i := range 300 {
		env := Env{}
		for j, n := range names {
			if k := (i*7 + j*13 + i*i*j) % (len(values) + 2); k < len(values) {
				env[n] = values[k]
			}
		}
		if key := fmt.Sprint(slices.Sorted(maps.Keys(env)), env); !seen[key] {
			seen[key] = true
			cases = append(cases, env)
		}
	}
	for _, env := range cases {
		var list []string
		for _, n := range env.Names() {
			list = append(list, n+"="+env[n])
		}
		got, _ := ompiVars(t, bin, list...)
		var s setup
		OpenMPI.configure(Inputs{Env: env}, &s)
		if got["btl_openib_pkey"] != strconv.Itoa(s.value) {
			t.Errorf("%v: Open MPI's btl_openib_pkey is %s, ibkey reads key %d", list, got["btl_openib_pkey"], s.value)
		}
	}
}

// TestUCXPKeyAgainstUcxInfo compares ucxParsePKey with the real UCX's parser
// (Debian's ucx-utils, UCX 1.13.1): ucx_info -c shows UCX_IB_PKEY as each IB
// transport parsed it (auto, or 0x and the 32-bit value), or an error. The range
// check (above 0x7fff) is uct_ib_iface_init_pkey's, on a device, so not seen here.
func TestUCXPKeyAgainstUcxInfo(t *testing.T) {
	bin := needTool(t, "ucx_info", "ucx-utils")
	inputs := []string{"auto", "AUTO", "Auto", "", "0x", "0X5", "x5", "8001", " 0x1", "0x 1", "0x-1", "0x0x5", "0xfffe", "0x1fffe", "0x10000fffe", "autox"}
	for i, s := range libcInputs() {
		if !strings.Contains(s, "\n") && i%4 == 0 {
			inputs = append(inputs, s, "0x"+strings.TrimLeft(s, " \t"))
		}
	}
	for _, in := range inputs {
		cmd := exec.Command(bin, "-c")
		cmd.Env = []string{"HOME=" + t.TempDir(), "UCX_IB_PKEY=" + in}
		out, _ := cmd.CombinedOutput()
		got := "error"
		for _, line := range strings.Split(string(out), "\n") {
			if v, ok := strings.CutPrefix(line, "UCX_RC_VERBS_PKEY="); ok {
				got = v
			}
		}
		key, reject, _ := ucxParsePKey(in, true)
		want := fmt.Sprintf("0x%x", key)
		switch {
		// ucs_config_sprintf_hex shows "auto" when the low 16 bits are 0xfffe, but
		// uct_ib_iface_init_pkey compares all 32 (0x1fffe is out of range there).
		case key == ucxAuto || key&0xffff == 0xfffe:
			want = "auto"
		case reject != "" && key <= 0x7fff:
			want = "error"
		}
		if got != want {
			t.Errorf("UCX_IB_PKEY=%q: UCX shows %s, ibkey reads %s", in, got, want)
		}
	}
}
