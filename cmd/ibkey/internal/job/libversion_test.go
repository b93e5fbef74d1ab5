package job

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/jsonschematest"
)

// --lib-version: bad input exits 2 with one line naming the token and what is
// accepted.
func TestLibVersionBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--lib-version", "nccl"}, `invalid --lib-version "nccl" (accepted: LIB=VERSION, e.g. nccl=2.29.2, LIB one of nccl, ucx, nvshmem, gasnet, mvapich2, openmpi, perftest)`},
		{[]string{"--lib-version", "nccl=2.29.2,mpich=4.1"}, `invalid --lib-version "mpich=4.1": no library "mpich" (accepted: nccl, ucx, nvshmem, gasnet, mvapich2, openmpi, perftest)`},
		{[]string{"--lib-version", "ucx=1.13.1+deb12u1"}, `invalid --lib-version "ucx=1.13.1+deb12u1": "1.13.1+deb12u1" is not a release (accepted: numbers separated by '.' or '-'`},
		{[]string{"--lib-version", "nccl=v2.29.2"}, `"v2.29.2" is not a release`},
		{[]string{"--lib-version", "nccl=2.29.2", "--lib-version", "nccl=2.30.3"}, `invalid --lib-version "nccl=2.30.3": nccl is already 2.29.2 (one version per library)`},
		{[]string{"--want", "0xffff", "--emit", "env", "--lib-version", "gasnet="}, `invalid --lib-version "gasnet=": "" is not a release`},
	} {
		r := runJob(t, nil, tc.args...)
		if r.code != cmdutil.ExitUsage || !strings.Contains(r.stderr, tc.want) || strings.Count(r.stderr, "\n") != 1 || r.stdout != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line %q", tc.args, r.code, r.stdout, r.stderr, tc.want)
		}
	}
	// The same version twice (or in its tag form) is one.
	if r := runJob(t, nil, "--lib", "nccl", "--lib-version", "nccl=2.29.2,nccl=2.29.2-0", "NCCL_IB_PKEY=0"); r.code != 0 {
		t.Errorf("the same version twice: exit %d\n%s", r.code, r.stderr)
	}
}

// A Slurm Prolog runs as root for the job's user: NCCL before 2.30 reads
// ~/.nccl.conf in the password database's home, 2.30 and later in $HOME. Without
// a version, a gate whose answer hangs on that exports nothing (exit 4); with
// --lib-version nccl= it exports the one setting that version takes, and -o json
// names the version.
func TestLibVersionGate(t *testing.T) {
	home, pwhome := t.TempDir(), t.TempDir()
	if err := os.WriteFile(home+"/.nccl.conf", []byte("NCCL_IB_HCA=mlx5_0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pwhome+"/.nccl.conf", []byte("NCCL_IB_HCA=mlx5_2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := func(f *cmdutil.Factory) *cobra.Command {
		return NewCmdJob(f, func(o *Options) error {
			o.MCAFS = testMCAFS{}
			o.PasswdHome = func(int) (string, bool) { return pwhome, true }
			return Run(o)
		})
	}
	env := map[string]string{"HOME": home}
	gate := []string{"--sysfs", mlx5, "--lib", "nccl", "--want", "0xffff", "--emit", "env"}
	r := runWith(t, context.Background(), env, jsonschematest.Partial, cmd, gate...)
	if r.code != cmdutil.ExitIncomplete || r.stdout != "" || !strings.Contains(r.stderr, "NCCL_IB_HCA from NCCL's files: \"mlx5_2\" ("+pwhome+"/.nccl.conf:1) in NCCL before 2.30") {
		t.Errorf("no version: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, v := range []string{"2.29.2-1", "2.30.3"} {
		r := runWith(t, context.Background(), env, jsonschematest.Complete, cmd, append(gate, "--lib-version", "nccl="+v)...)
		if r.code != 0 || !strings.HasPrefix(r.stdout, "export NCCL_IB_PKEY=") {
			t.Errorf("nccl=%s: exit %d\n%s%s", v, r.code, r.stdout, r.stderr)
		}
		r = runWith(t, context.Background(), env, jsonschematest.Complete, cmd, "--sysfs", mlx5, "--lib", "nccl", "-o", "json", "--lib-version", "nccl="+v)
		if !strings.Contains(r.stdout, `"version": "`+v+`"`) || strings.Contains(r.stdout, "in NCCL before 2.30") {
			t.Errorf("nccl=%s, -o json: exit %d\n%s%s", v, r.code, r.stdout, r.stderr)
		}
	}
	// Which ports: mlx5_0's in 2.30 and later, mlx5_2's before.
	used := func(out, port string) string {
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) > 3 && f[2] == port {
				return f[3]
			}
		}
		return ""
	}
	r = runWith(t, context.Background(), env, jsonschematest.Complete, cmd, "--sysfs", mlx5, "--lib", "nccl", "-o", "plain", "--lib-version", "nccl=2.30.3")
	if used(r.stdout, "mlx5_0/1") != "yes" || used(r.stdout, "mlx5_2/1") != "no" {
		t.Errorf("nccl=2.30.3: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runWith(t, context.Background(), env, jsonschematest.Complete, cmd, "--sysfs", mlx5, "--lib", "nccl", "-o", "plain", "--lib-version", "nccl=2.29.2")
	if used(r.stdout, "mlx5_0/1") != "no" || used(r.stdout, "mlx5_2/1") != "yes" || !strings.Contains(r.stdout+r.stderr, "NCCL_IB_HCA from NCCL's files: \"mlx5_2\" ("+pwhome+"/.nccl.conf:1), as NCCL 2.29.2 (--lib-version) reads them (NCCL 2.23 to 2.29)") {
		t.Errorf("nccl=2.29.2: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// No version given: the JSON has none, and the answer is unchanged.
	r = runWith(t, context.Background(), env, jsonschematest.Partial, cmd, "--sysfs", mlx5, "--lib", "nccl", "-o", "json")
	if strings.Contains(r.stdout, `"version"`) {
		t.Errorf("no version: %s", r.stdout)
	}
}
