package job

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"
	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/jsonschematest"
	"github.com/ibkey/ibkey/internal/job"
)

const (
	mlx5 = "../../../../testdata/sysfs/mlx5"
	// labFabric is a sweep of internal/lab/testdata/small.net saved with
	// 'ibkey fabric discover -o json' after OpenSM applied a partitions.conf with
	// storage (0x0001) and compute (0x0002), then one with storage removed and ai
	// (0x0003) added: HcaA 0xffff 0x8003; HcaB and HcaC 0xffff 0x0000 0x8002 0x8003;
	// HcaD 0xffff 0x8002 0x8003.
	labFabric = "testdata/lab-fabric.json"
)

type result struct {
	stdout, stderr string
	code           int
}

// run runs `ibkey job ARGS` in-process as main does, under ctx, with env as the
// whole environment (Getenv and Environ), from a read that has every host and port the
// answer asks about (jsonschematest.Complete; runPartial for one that does not).
func run(t testing.TB, ctx context.Context, env map[string]string, args ...string) result {
	t.Helper()
	return runRead(t, ctx, env, jsonschematest.Complete, args...)
}

// runPartial is run for a case that leaves a host or port the answer asks about
// unread (jsonschematest.Partial).
func runPartial(t testing.TB, ctx context.Context, env map[string]string, args ...string) result {
	t.Helper()
	return runRead(t, ctx, env, jsonschematest.Partial, args...)
}

func runRead(t testing.TB, ctx context.Context, env map[string]string, read jsonschematest.Read, args ...string) result {
	t.Helper()
	return runWith(t, ctx, env, read, jobCmd, args...)
}

// runWith is runRead building the command with cmd.
func runWith(t testing.TB, ctx context.Context, env map[string]string, read jsonschematest.Read, cmd func(*cmdutil.Factory) *cobra.Command, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	streams := &cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	f := cmdutil.NewFactory(streams, func(k string) string { return env[k] }, time.Now)
	var environ []string
	for k, v := range env {
		environ = append(environ, k+"="+v)
	}
	f.Environ = func() []string { return environ }
	args = append([]string{"job"}, args...)
	code := cmdutil.Execute(ctx, cmdtest.WithCommands(cmd)(f), args, streams)
	jsonschematest.Stdout(t, args, out.String())
	jsonschematest.Incomplete(t, args, out.String(), code, read)
	return result{out.String(), errOut.String(), code}
}

// jobCmd is `ibkey job` reading MCA parameter files with testMCAFS: the answers do
// not depend on this machine's /etc/openmpi.
func jobCmd(f *cmdutil.Factory) *cobra.Command { return jobCmdFS(testMCAFS{})(f) }

// jobCmdFS is `ibkey job` reading MCA parameter files and nccl.conf files with
// fsys; the password database's home directory is the environment's HOME, or
// /nonexistent without one.
func jobCmdFS(fsys job.MCAFS) func(*cmdutil.Factory) *cobra.Command {
	return func(f *cmdutil.Factory) *cobra.Command {
		return NewCmdJob(f, func(o *Options) error {
			o.MCAFS = fsys
			o.PasswdHome = func(int) (string, bool) {
				for _, kv := range o.Environ() {
					if v, ok := strings.CutPrefix(kv, "HOME="); ok {
						return v, true
					}
				}
				return "/nonexistent", true
			}
			return Run(o)
		})
	}
}

// testMCAFS reads files as the OS does, from the temporary directories a test
// names in HOME, OPAL_SYSCONFDIR, NCCL_CONF_FILE and UCX_CONFIG_DIR, but says that
// no /etc/openmpi and no /etc/ucx/ucx.conf exist and reads etc[f] for
// /etc/nccl.conf, /etc/mvapich2.conf and /etc/nvshmem.conf (none when not given);
// deny are files it
// cannot read (permission).
type testMCAFS struct {
	deny []string
	etc  map[string]string
}

func (m testMCAFS) ReadFile(name string) ([]byte, error) {
	if slices.Contains(m.deny, name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
	}
	if name == "/etc/ucx/ucx.conf" {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	if name == "/etc/nccl.conf" || name == "/etc/mvapich2.conf" || name == "/etc/nvshmem.conf" {
		if m.etc[name] == "" {
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
		}
		name = m.etc[name]
	}
	return os.ReadFile(name)
}

func (testMCAFS) IsDir(string) bool { return false }

// runJob runs `ibkey job ARGS` on the mlx5 fixture host with env as the environment.
func runJob(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	return run(t, context.Background(), env, append([]string{"--sysfs", mlx5}, args...)...)
}

// runJobRead is runJob for a case that says what it leaves unread
// (jsonschematest.Partial: the fixture's mlx5_1/1 entry 3 is a loop).
func runJobRead(t *testing.T, read jsonschematest.Read, env map[string]string, args ...string) result {
	t.Helper()
	return runRead(t, context.Background(), env, read, append([]string{"--sysfs", mlx5}, args...)...)
}

func TestGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		code int
	}{
		// One host: index 3 is a hole on mlx5_0/1, unreadable on mlx5_1/1, outside
		// the RoCE port's one-entry table.
		{"local_nccl_hole_plain", nil, []string{"NCCL_IB_PKEY=3"}, 1},
		// From the environment; UCX auto on mlx5_1/1 (limited entries, entry 3
		// unreadable) cannot be decided: exit 4.
		{"local_env_ucx_incomplete", map[string]string{"UCX_IB_PKEY": "auto"}, nil, 4},
		{"local_env_json", map[string]string{"NCCL_IB_PKEY": "1", "NCCL_IB_HCA": "=mlx5_0:1"}, []string{"-o", "json"}, 0},
		// Across hosts of the lab sweep after OpenSM reconfigured a partition.
		{"lab_nccl_index_differs_plain", nil, []string{"--fabric-file", labFabric, "--node", "HcaA,HcaB,HcaC", "NCCL_IB_PKEY=1", "UCX_IB_PKEY=0x0003"}, 1},
		{"lab_nccl_same_index_table", nil, []string{"--fabric-file", labFabric, "--node", "HcaB,HcaC", "NCCL_IB_PKEY=2", "-o", "table"}, 0},
		{"lab_envfile_plain", nil, []string{"--fabric-file", labFabric, "--lid", "4,5,6", "--env", "testdata/job.env"}, 1},
		{"lab_want_json", nil, []string{"--fabric-file", labFabric, "--node", "HcaA,HcaB,HcaC", "--want", "0x0003", "--lib", "nccl,ucx", "-o", "json"}, 0},
		{"lab_want_plain", nil, []string{"--fabric-file", labFabric, "--node", "HcaA,HcaB,HcaD", "--want", "0x8002", "--lib", "nccl,ucx,gasnet,mvapich2"}, 1},
		{"perftest_plain", nil, []string{"--perftest", "ib_send_bw -d mlx5_0 -i 1 --pkey_index=200"}, 0},
		// A library that aborts on the host: a row, a problem, an abort in JSON.
		{"local_mvapich2_abort_table", nil, []string{"MV2_IBA_HCA=mlx5_9", "-o", "table"}, 1},
		{"local_mvapich2_abort_json", nil, []string{"MV2_DEFAULT_PORT=3", "MV2_IBA_HCA=mlx5_0", "-o", "json"}, 1},
		{"perftest_abort_plain", nil, []string{"--want", "0xffff", "--perftest", "ib_send_bw -d mlx5_7"}, 1},
		// UCX's worker fails on mlx5_0/1's lookup: the host's other ports are not
		// used (mlx5_1/1, not-checked alone, and the RoCE port mlx5_2/1).
		{"local_ucx_worker_abort_json", nil, []string{"UCX_IB_PKEY=0x1234", "-o", "json"}, 1},
		// The same key from $HOME/ucx.conf: UCX 1.12.0 and later take it, older UCX
		// reads no ucx.conf (auto), so where the two differ it is not checked.
		{"local_ucxconf_plain", map[string]string{"HOME": "testdata/ucxhome", "UCX_NET_DEVICES": "mlx5_0:1"}, nil, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runJob(t, tc.env, tc.args...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, tc.code, r.stdout, r.stderr)
			}
			golden.RequireEqual(t, "$ ibkey job "+strings.Join(tc.args, " ")+"\n"+r.stdout+"--- stderr\n"+r.stderr)
		})
	}
}

// A port whose P_Key table was not read (testdata/sysfs/odd: mlx4_0/2 has no pkeys/)
// is not checked, in --want as when resolving: exit 4, never "does not work".
func TestWantTableNotRead(t *testing.T) {
	for _, args := range [][]string{{"--lib", "nccl"}, {"--lib", "nccl", "--want", "0x7fff"}, {"--lib", "ucx", "--want", "0x7fff", "-o", "json"}} {
		r := run(t, context.Background(), nil, append([]string{"--sysfs", "../../../../testdata/sysfs/odd"}, args...)...)
		if r.code != cmdutil.ExitIncomplete || strings.Contains(r.stdout, "DOES NOT WORK") || strings.Contains(r.stdout, "fails") || !strings.Contains(r.stdout, "not-checked") {
			t.Errorf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
}

// A device that could not be read (testdata/sysfs/dangling: scif0 is a dangling link)
// may be one a library uses: --emit env exports nothing and exits 4, as the report
// does, instead of exporting as if every device had been read.
func TestEmitUnreadDevice(t *testing.T) {
	for _, args := range [][]string{{"--want", "0xffff"}, {"--want", "0xffff", "--emit", "env"}} {
		r := run(t, context.Background(), nil, append([]string{"--sysfs", "../../../../testdata/sysfs/dangling", "-o", "plain"}, args...)...)
		if r.code != cmdutil.ExitIncomplete || !strings.Contains(r.stderr, "not read: device scif0") || strings.Contains(r.stdout, "export ") {
			t.Errorf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
}

func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"NCCL_IB_PKEY"}, 2, `argument 1: invalid setting "NCCL_IB_PKEY": no '='`},
		{[]string{"1X=2"}, 2, "is not a variable name"},
		{[]string{"--want", "0x8000"}, 2, "key 0 is an empty table entry, not a partition"},
		{[]string{"--want", "zz"}, 2, "invalid P_Key"},
		{[]string{"--lib", "nccl,mpich"}, 2, `invalid --lib "mpich"`},
		{[]string{"--host", "node01"}, 2, "invalid --host"},
		{[]string{"--lid", "0"}, 2, "invalid --lid"},
		{[]string{"--env", "testdata/missing.env"}, 2, "--env"},
		{[]string{"--fabric-file", labFabric, "--node", "Nope"}, 3, `no node "Nope" in the sweep`},
		{[]string{"--lid", "3"}, 3, "umad: open ../../../../testdata/sysfs/mlx5/class/infiniband_mad: no such file or directory (is ib_umad loaded?); without InfiniBand hardware, query a simulated fabric with --ibsim"},
		{[]string{"-o", "yaml"}, 2, "invalid output format"},
	} {
		r := runJob(t, nil, tc.args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tc.args, r.code, r.stderr, tc.code, tc.want)
		}
	}
}

// Building the command touches nothing: no host (the factory reads IBKEY_SYSFS for
// it), no environment.
func TestBuildTouchesNothing(t *testing.T) {
	f := cmdutil.NewFactory(&cmdutil.IOStreams{}, func(string) string { t.Fatal("environment or host read while building"); return "" }, nil)
	f.Environ = func() []string { t.Fatal("environment read while building"); return nil }
	c := NewCmdJob(f, nil)
	if c.Name() != "job" || c.Flags().Lookup("want") == nil {
		t.Fatal("no job command with --want")
	}
	r, got := cmdtest.Options(t, NewCmdJob, "job", "--want", "0x2", "A=1")
	if r.Code != 0 || got == nil || got.Want != "0x2" || len(got.Assign) != 1 {
		t.Fatalf("runF got %+v, exit %d %s", got, r.Code, r.Stderr)
	}
	// -L is --lid, as on the other commands that read LIDs (pkeys, fabric).
	r, got = cmdtest.Options(t, NewCmdJob, "job", "-L", "3,5")
	if r.Code != 0 || got == nil || got.LIDs != "3,5" {
		t.Fatalf("-L: runF got %+v, exit %d %s", got, r.Code, r.Stderr)
	}
}

// TestWantExitCode: --want answers "can each library be put in this partition": for
// every partition 0x0001-0x0030 and 0x7fff on the fixture host, and each library alone
// and all together, the exit code is 1 when a library has no setting that works
// (does-not-work, "DOES NOT WORK" in the text), else 4 when one could not be checked,
// else 0.
func TestWantExitCode(t *testing.T) {
	libs := []string{"nccl", "ucx", "nvshmem", "gasnet", "mvapich2", "openmpi", ""}
	seen := map[int]int{}
	for k := 1; k <= 0x31; k++ {
		key := k
		if k == 0x31 {
			key = 0x7fff
		}
		for _, lib := range libs {
			args := []string{"--want", fmt.Sprintf("0x%04x", key)}
			if lib != "" {
				args = append(args, "--lib", lib)
			}
			// Whether an answer reaches the fixture's entry not read depends on the
			// library's rules: the exit-1 half of incomplete's rule is checked here,
			// against what each library says it did not check.
			r := runJobRead(t, jsonschematest.Unsaid, nil, append(args, "-o", "json")...)
			var doc struct {
				Libraries []struct {
					Library   string   `json:"library"`
					Name      string   `json:"name"`
					Verdict   string   `json:"verdict"`
					Unchecked []string `json:"unchecked"`
				} `json:"libraries"`
				Incomplete []cmdutil.Incomplete `json:"incomplete"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
				t.Fatalf("%v: %v\n%s", args, err, r.stdout)
			}
			want := 0
			for _, l := range doc.Libraries {
				switch {
				case l.Verdict == "does-not-work":
					want = 1
				case l.Verdict == "not-checked" && want == 0:
					want = 4
				}
			}
			if r.code != want {
				t.Errorf("%v: exit %d, want %d (verdicts %+v)", args, r.code, want, doc.Libraries)
			}
			var unchecked []string
			for _, l := range doc.Libraries {
				for _, u := range l.Unchecked {
					unchecked = append(unchecked, l.Name+": "+u)
				}
			}
			var said []string
			for _, i := range doc.Incomplete {
				said = append(said, i.Message)
			}
			if r.code != 0 && !slices.Equal(said, unchecked) {
				t.Errorf("%v: exit %d, incomplete %q; want every library's unchecked %q", args, r.code, said, unchecked)
			}
			text := runJob(t, nil, args...)
			if text.code != r.code || strings.Contains(text.stdout, "DOES NOT WORK") != (want == 1) {
				t.Errorf("%v: text exit %d (json %d), DOES NOT WORK shown %v\n%s", args, text.code, r.code, strings.Contains(text.stdout, "DOES NOT WORK"), text.stdout)
			}
			seen[r.code]++
		}
	}
	if seen[0] == 0 || seen[1] == 0 {
		t.Errorf("exit codes seen %v: the cases must include works and does-not-work", seen)
	}
	t.Logf("exit codes over the cases: %v", seen)
}

// TestGASNetDecodeSwitch: GASNET_DISABLE_ENVDECODE is read from the process
// environment (GASNet's %0XY decoding is then off: "%033" stays text, which
// gasneti_parse_int refuses), but alone it does not make GASNet a library the job
// uses (Library.Modifiers): every library's defaults are shown.
func TestGASNetDecodeSwitch(t *testing.T) {
	alone := runJob(t, map[string]string{"GASNET_DISABLE_ENVDECODE": "1"})
	none := runJob(t, nil)
	if alone.code != none.code || alone.stdout != none.stdout || !strings.Contains(alone.stdout, "nccl ") {
		t.Errorf("GASNET_DISABLE_ENVDECODE alone: exit %d, want every library's defaults as with no settings (exit %d):\n%s%s", alone.code, none.code, alone.stdout, alone.stderr)
	}
	on := runJob(t, map[string]string{"GASNET_IBV_PKEY": "%033"})
	off := runJob(t, map[string]string{"GASNET_IBV_PKEY": "%033", "GASNET_DISABLE_ENVDECODE": "1"})
	if !strings.Contains(on.stdout+on.stderr, "requested pkey 0x0003") {
		t.Errorf("%%033 decoded should be key 3:\n%s%s", on.stdout, on.stderr)
	}
	if !strings.Contains(off.stdout+off.stderr, `"Invalid GASNET_IBV_PKEY '%033'"`) || strings.Contains(off.stdout, "nccl ") {
		t.Errorf("%%033 with decoding off should be refused by GASNet alone:\n%s%s", off.stdout, off.stderr)
	}
}

// An unread device matters only when a library checked could choose it with the
// job's settings (job.Choosers runs each library's own device selection on it):
// for every library, a setting that leaves scif0 out exports (exit 0) and says why
// the device does not matter; one that lets the library choose it exports nothing
// and exits 4, as does an abort that may be about the device not read.
func TestEmitUnreadDeviceFilters(t *testing.T) {
	for _, c := range []struct {
		lib           string
		out, in       []string
		outExp, inExp string
	}{
		{"nccl", []string{"NCCL_IB_HCA=mlx4"}, []string{"NCCL_IB_HCA=^mlx4"}, "NCCL_IB_PKEY=0", ""},
		{"nccl", []string{"NCCL_IB_HCA==mlx4_0:1"}, []string{"NCCL_IB_HCA=scif0:7"}, "NCCL_IB_PKEY=0", ""},
		{"ucx", []string{"UCX_NET_DEVICES=mlx4_0:1"}, []string{"UCX_NET_DEVICES=^mlx4_0:1"}, "UCX_IB_PKEY=0x7fff", ""},
		{"nvshmem", []string{"NVSHMEM_HCA_LIST=mlx4_0"}, []string{"NVSHMEM_HCA_LIST=^mlx4_0"}, "NVSHMEM_IB_PKEY_INDEX=0", ""},
		{"gasnet", []string{"GASNET_IBV_PORTS=mlx4_0"}, []string{"GASNET_IBV_PORTS=mlx4_0+scif0"}, "GASNET_IBV_PKEY=0x7fff", ""},
		{"mvapich2", []string{"MV2_IBA_HCA=mlx4_0"}, []string{"MV2_IBA_HCA=scif0"}, "MV2_DEFAULT_PKEY=0x7fff", ""},
		{"mvapich2", []string{"MV2_IBA_HCA=mlx4_0"}, []string{"MV2_IBA_HCA=mlx4_0:scif0"}, "MV2_DEFAULT_PKEY=0x7fff", ""},
		{"openmpi", []string{"OMPI_MCA_btl_openib_if_exclude=scif0", "OMPI_MCA_btl_openib_allow_ib=1"}, []string{"OMPI_MCA_btl_openib_if_include=scif0:1,mlx4_0", "OMPI_MCA_btl_openib_allow_ib=1"}, "OMPI_MCA_btl_openib_pkey=0x7fff", ""},
		{"perftest", []string{"--perftest", "ib_send_bw -d mlx4_0"}, []string{"--perftest", "ib_send_bw -d scif0"}, "", ""},
	} {
		base := []string{"--sysfs", "../../../../testdata/sysfs/dangling", "--want", "0xffff", "--lib", c.lib}
		emit := []string{"--emit", "env"}
		if c.lib == "perftest" {
			emit = nil // perftest takes its index on its command line: the report
		}
		r := run(t, context.Background(), nil, slices.Concat(base, emit, c.out)...)
		if r.code != 0 || !strings.Contains(r.stderr, "not read: device scif0") || !strings.Contains(r.stderr, "it does not change the answer") || !strings.Contains(r.stdout, c.outExp) {
			t.Errorf("%v: exit %d\n%s%s", c.out, r.code, r.stdout, r.stderr)
		}
		r = run(t, context.Background(), nil, slices.Concat(base, emit, c.in)...)
		if r.code != cmdutil.ExitIncomplete || !strings.Contains(r.stderr, "not read: device scif0") || strings.Contains(r.stdout, "export ") {
			t.Errorf("%v: exit %d\n%s%s", c.in, r.code, r.stdout, r.stderr)
		}
	}
}

// A library that aborts on a host for a reason no Subnet Manager change removes
// (MV2_IBA_HCA names a device the host lacks) ends the wait at once with exit 1 and
// nothing on stdout, instead of waiting for the timeout.
func TestGateAbortsAtOnce(t *testing.T) {
	start := time.Now()
	r := runJob(t, nil, "--want", "0xffff", "--wait", "20s", "--emit", "env", "MV2_IBA_HCA=mlx5_9")
	if r.code != cmdutil.ExitNo || r.stdout != "" || !strings.Contains(r.stderr, "The HCA (mlx5_9) the user requested for is not available") || !strings.Contains(r.stderr, "nothing exported") {
		t.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if time.Since(start) > 15*time.Second {
		t.Errorf("the gate waited for its timeout (%s)", time.Since(start))
	}
}

// A variable set to the empty string in the environment is read as the same
// KEY= argument is, for every setting of every library: each library's rule decides
// what an empty value means (GASNet refuses an empty GASNET_IBV_PKEY; UCX_NET_DEVICES=
// selects no device), never the environment path by dropping it as unset.
func TestEmptyEnvironmentVariableIsSet(t *testing.T) {
	for _, l := range job.Libraries() {
		for _, name := range slices.Concat(l.Vars, l.Modifiers) {
			if strings.HasPrefix(name, "-") {
				continue // perftest's options
			}
			t.Run(l.ID+"/"+name, func(t *testing.T) {
				env := runJob(t, map[string]string{name: ""}, "--lib", l.ID, "-o", "json")
				arg := runJob(t, nil, "--lib", l.ID, "-o", "json", name+"=")
				if l.ID == job.OpenMPI.ID {
					// Open MPI's MCA parameter files are looked for with the environment
					// only (here none can be located): its note says so, and only it differs.
					env.stdout = sameNote(t, env.stdout, `"Open MPI: applies to the openib BTL`, "the environment and not located, so not read: $HOME/.openmpi/mca-params.conf")
					arg.stdout = sameNote(t, arg.stdout, `"Open MPI: applies to the openib BTL`, "only the settings given are read")
				}
				if l.ID == job.UCX.ID {
					// So are UCX's ucx.conf files (here none exists).
					env.stdout = sameNote(t, env.stdout, `"UCX: ucx.conf files`, "not present (UCX skips them too): /etc/ucx/ucx.conf, ./ucx.conf")
					arg.stdout = sameNote(t, arg.stdout, `"UCX: only the settings given are read`, "are read only with settings from the environment")
				}
				// NCCL's, MVAPICH2's and NVSHMEM's configuration files likewise (none here): the
				// note that they were not read is the only difference.
				switch l.ID {
				case job.NCCL.ID:
					arg.stdout = withoutLine(t, arg.stdout, `"NCCL: only the settings given are read; NCCL_CONF_FILE, ~/.nccl.conf and /etc/nccl.conf`)
				case job.MVAPICH2.ID:
					arg.stdout = withoutLine(t, arg.stdout, `"MVAPICH2: only the settings given are read; ~/.mvapich2.conf`)
				case job.NVSHMEM.ID:
					arg.stdout = withoutLine(t, arg.stdout, `"NVSHMEM: only the settings given are read; /etc/nvshmem.conf, ~/.nvshmem.conf and NVSHMEM_CONF_FILE`)
				}
				if env.code != arg.code || env.stdout != arg.stdout {
					t.Errorf("%s= in the environment: exit %d\n%s\nas an argument: exit %d\n%s", name, env.code, env.stdout, arg.code, arg.stdout)
				}
				if !strings.Contains(env.stderr, "the environment ("+name+")") {
					t.Errorf("stderr does not name %s as read from the environment:\n%s", name, env.stderr)
				}
			})
		}
	}
}

// withoutLine removes the one line of stdout that holds s.
func withoutLine(t *testing.T, stdout, s string) string {
	t.Helper()
	lines := strings.Split(stdout, "\n")
	i := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, s) })
	if i < 0 {
		t.Fatalf("no line holds %q:\n%s", s, stdout)
	}
	return strings.Join(slices.Delete(lines, i, i+1), "\n")
}

// sameNote replaces the assumption note starting with prefix (what MCA parameter
// or ucx.conf files were read) in a JSON answer, which must say want, by a
// placeholder.
func sameNote(t *testing.T, stdout, prefix, want string) string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(stdout, "\n") {
		if strings.Contains(line, prefix) {
			if !strings.Contains(line, want) {
				t.Errorf("the note %s does not say %q:\n%s", prefix, want, line)
			}
			line = "FILES NOTE"
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// mcaHome is a $HOME and an OPAL_SYSCONFDIR (empty) for Open MPI's MCA parameter
// files, with ~/.openmpi/mca-params.conf holding lines; env adds them.
func mcaHome(t *testing.T, lines string, env map[string]string) (file string, out map[string]string) {
	t.Helper()
	home := t.TempDir()
	file = home + "/.openmpi/mca-params.conf"
	if err := os.MkdirAll(home+"/.openmpi", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	out = map[string]string{"HOME": home, "OPAL_SYSCONFDIR": t.TempDir()}
	for k, v := range env {
		out[k] = v
	}
	return file, out
}

// With settings from the environment, UCX's ucx.conf files are read: a
// UCX_IB_PKEY set there and not in the environment changes the answer (not
// checked: UCX before 1.11 reads no ucx.conf), the report names the file; the
// environment beats it; a key that resolves the same with and without the file is
// checked; a file that cannot be read is not checked (exit 4); with arguments
// no file is read.
func TestUCXConfFiles(t *testing.T) {
	home := t.TempDir()
	file := home + "/ucx.conf"
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	devs := map[string]string{"UCX_NET_DEVICES": "mlx5_0:1"}
	with := map[string]string{"HOME": home, "UCX_NET_DEVICES": "mlx5_0:1"}
	if r := runJob(t, devs, "--lib", "ucx"); r.code != 0 {
		t.Fatalf("without a file: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	write("UCX_IB_PKEY=0x1234\n")
	r := runJob(t, with, "--lib", "ucx")
	if r.code != cmdutil.ExitIncomplete || !strings.Contains(r.stderr, "UCX's configuration files ("+file+")") || !strings.Contains(r.stdout, "UCX before 1.12.0") {
		t.Errorf("UCX_IB_PKEY in $HOME/ucx.conf: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runJob(t, map[string]string{"HOME": home, "UCX_NET_DEVICES": "mlx5_0:1", "UCX_IB_PKEY": "auto"}, "--lib", "ucx"); r.code != 0 {
		t.Errorf("the environment beats the file: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runJob(t, nil, "--lib", "ucx", "UCX_NET_DEVICES=mlx5_0:1"); r.code != 0 || !strings.Contains(r.stderr, "read only with settings from the environment") {
		t.Errorf("arguments read no file: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// 0x7fff resolves to index 0, 0xffff, as auto does: every version agrees.
	write("UCX_IB_PKEY=0x7fff\n")
	if r := runJob(t, with, "--lib", "ucx"); r.code != 0 || !strings.Contains(r.stdout, "UCX_IB_PKEY=0x7fff is from "+file+" line 1") {
		t.Errorf("a key every version resolves alike: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Commented out (';' and '#'), or a continuation line of another name: unset.
	write("; UCX_IB_PKEY=0x1234\n# UCX_IB_PKEY=0x1234\nUCX_LOG_LEVEL=warn\n  UCX_IB_PKEY=0x1234\n")
	if r := runJob(t, with, "--lib", "ucx"); r.code != 0 {
		t.Errorf("no UCX_IB_PKEY line: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runWith(t, context.Background(), with, jsonschematest.Partial, jobCmdFS(testMCAFS{deny: []string{file}}), "--sysfs", mlx5, "--lib", "ucx")
	if r.code != cmdutil.ExitIncomplete || !strings.Contains(r.stderr, file) {
		t.Errorf("unreadable $HOME/ucx.conf: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// The environment's UCX_TLS without an InfiniBand transport: no file changes it.
	tcp := map[string]string{"HOME": home, "UCX_TLS": "tcp"}
	r = runWith(t, context.Background(), tcp, jsonschematest.Complete, jobCmdFS(testMCAFS{deny: []string{file}}), "--sysfs", mlx5, "--lib", "ucx")
	if r.code != 0 || !strings.Contains(r.stdout, "which cannot change that") {
		t.Errorf("unreadable file under UCX_TLS=tcp: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// With settings from the environment, Open MPI's MCA parameter files are read: the
// setting names the file and line, the note what was read; with arguments they are
// not read, and the note says so.
func TestOpenMPIMCAFiles(t *testing.T) {
	file, env := mcaHome(t, "btl_openib_allow_ib = 1\nbtl_openib_pkey = 0xffff\n", nil)
	r := runJob(t, env, "--lib", "openmpi", "-o", "json")
	if r.code != 0 || !strings.Contains(r.stdout, "btl_openib_pkey=0xffff ("+file+" line 2)") || !strings.Contains(r.stdout, "MCA parameter files read on this host: "+file) {
		t.Errorf("from the home file: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Without --lib, a key set in a file makes Open MPI one the job uses.
	if r := runJob(t, env, "-o", "json"); !strings.Contains(r.stdout, `"library": "openmpi"`) || strings.Contains(r.stdout, `"library": "nccl"`) {
		t.Errorf("libraries: exit %d\n%s", r.code, r.stdout)
	}
	r = runJob(t, nil, "--lib", "openmpi", "-o", "json", "OMPI_MCA_btl_openib_allow_ib=1")
	if !strings.Contains(r.stdout, "read only with settings from the environment") {
		t.Errorf("from arguments: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// A file that cannot be read: not checked (exit 4), naming it.
	r = runWith(t, context.Background(), env, jsonschematest.Complete, jobCmdFS(testMCAFS{deny: []string{file}}), "--sysfs", mlx5, "--lib", "openmpi", "OMPI_MCA_btl_openib_allow_ib=1")
	if r.code != 0 {
		t.Errorf("arguments read no file, yet: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runWith(t, context.Background(), env, jsonschematest.Partial, jobCmdFS(testMCAFS{deny: []string{file}}), "--sysfs", mlx5, "--lib", "openmpi")
	if r.code != cmdutil.ExitIncomplete || !strings.Contains(r.stderr, file) {
		t.Errorf("unreadable home file: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// --want --emit env: the export is refused when an MCA parameter file sets the
// synonym, which would beat it, and given otherwise.
func TestOpenMPIMCAFilesEmit(t *testing.T) {
	file, env := mcaHome(t, "btl_openib_ib_pkey_val = 3\n", map[string]string{"OMPI_MCA_btl_openib_allow_ib": "1"})
	r := runJob(t, env, "--lib", "openmpi", "--want", "0xffff", "--emit", "env")
	if r.code != cmdutil.ExitNo || r.stdout != "" || !strings.Contains(r.stderr, "Open MPI takes btl_openib_ib_pkey_val=3 ("+file+" line 1) instead") {
		t.Errorf("synonym in the home file: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	_, env = mcaHome(t, "# btl_openib_ib_pkey_val = 3\n", map[string]string{"OMPI_MCA_btl_openib_allow_ib": "1"})
	r = runJob(t, env, "--lib", "openmpi", "--want", "0xffff", "--emit", "env")
	if r.code != 0 || !strings.Contains(r.stdout, "export OMPI_MCA_btl_openib_pkey=") {
		t.Errorf("a comment: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// With settings from the environment, NCCL's configuration files are read: the
// setting names the file and line, the note what was read, and the environment
// wins; with arguments they are not read, and the note says so.
func TestNCCLConfFiles(t *testing.T) {
	home := t.TempDir()
	file := home + "/.nccl.conf"
	if err := os.WriteFile(file, []byte("# the site's\nNCCL_IB_PKEY=2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	etc := filepath.Join(t.TempDir(), "nccl.conf")
	if err := os.WriteFile(etc, []byte("NCCL_IB_PKEY=1\nNCCL_IB_HCA=mlx5_0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": home}
	cmd := jobCmdFS(testMCAFS{etc: map[string]string{"/etc/nccl.conf": etc}})
	r := runWith(t, context.Background(), env, jsonschematest.Complete, cmd, "--sysfs", mlx5, "--lib", "nccl")
	if r.code != 0 || !strings.Contains(r.stdout, "NCCL_IB_PKEY=2 ("+file+":2): index 2, NCCL_IB_HCA=mlx5_0 (/etc/nccl.conf:2)") ||
		!strings.Contains(r.stderr, "NCCL's configuration files ("+file+", /etc/nccl.conf)") {
		t.Errorf("from the files: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Without --lib, a P_Key set in a file makes NCCL a library the job uses.
	if r := runWith(t, context.Background(), env, jsonschematest.Complete, cmd, "--sysfs", mlx5, "-o", "json"); !strings.Contains(r.stdout, `"library": "nccl"`) || strings.Contains(r.stdout, `"library": "ucx"`) {
		t.Errorf("libraries: exit %d\n%s", r.code, r.stdout)
	}
	// The environment wins, even empty; the gate's export too.
	r = runWith(t, context.Background(), map[string]string{"HOME": home, "NCCL_IB_PKEY": ""}, jsonschematest.Complete, cmd, "--sysfs", mlx5, "--lib", "nccl")
	if r.code != 0 || !strings.Contains(r.stdout, "NCCL_IB_PKEY empty: NCCL keeps the default, index 0, NCCL_IB_HCA=mlx5_0 (/etc/nccl.conf:2)") {
		t.Errorf("the environment: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runWith(t, context.Background(), env, jsonschematest.Complete, cmd, "--sysfs", mlx5, "--lib", "nccl", "--want", "0x8001", "--emit", "env")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "export NCCL_IB_PKEY=1\n") {
		t.Errorf("gate: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Arguments: no file is read.
	r = runWith(t, context.Background(), env, jsonschematest.Complete, cmd, "--sysfs", mlx5, "--lib", "nccl", "NCCL_IB_HCA=mlx5_0")
	if r.code != 0 || !strings.Contains(r.stdout, "NCCL_IB_PKEY unset: index 0, NCCL_IB_HCA=mlx5_0\n") || !strings.Contains(r.stderr, "only the settings given are read") {
		t.Errorf("arguments: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// A file that cannot be read: not checked (exit 4), naming it.
	r = runWith(t, context.Background(), env, jsonschematest.Partial, jobCmdFS(testMCAFS{etc: map[string]string{"/etc/nccl.conf": etc}, deny: []string{file}}), "--sysfs", mlx5, "--lib", "nccl")
	if r.code != cmdutil.ExitIncomplete || !strings.Contains(r.stdout, "open "+file+": permission denied: NCCL reads it, so NCCL_IB_PKEY, NCCL_IB_HCA, NCCL_IB_GID_INDEX, NCCL_IB_PKEY_VALUE, NCCL_IB_DISABLE, NCCL_NET are not known") {
		t.Errorf("unreadable home file: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// With settings from the environment, NVSHMEM's configuration files are read and
// beat the environment, and a gate's export: the file's index decides, named by
// file and line; a file that cannot be read leaves NVSHMEM not checked.
func TestNVSHMEMConfFiles(t *testing.T) {
	home := t.TempDir()
	file := home + "/.nvshmem.conf"
	if err := os.WriteFile(file, []byte("# the user's\nNVSHMEM_IB_PKEY_INDEX = 4 # 0x8005\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": home, "NVSHMEM_IB_PKEY_INDEX": "1", "NVSHMEM_HCA_LIST": "mlx5_0"}
	cmd := jobCmdFS(testMCAFS{})
	r := runWith(t, context.Background(), env, jsonschematest.Complete, cmd, "--sysfs", mlx5, "--lib", "nvshmem", "--lib-version", "nvshmem=3.7.0")
	if r.code != 0 || !strings.Contains(r.stdout, "NVSHMEM_IB_PKEY_INDEX=4 ("+file+":2, which beats the environment's \"1\"): index 4") ||
		!strings.Contains(r.stderr, "NVSHMEM's configuration files ("+file+")") {
		t.Errorf("from the files: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// The gate: exporting index 1 (0x8001) changes nothing; the file's index 4 does
	// not hold it, and nothing is exported.
	r = runWith(t, context.Background(), env, jsonschematest.Complete, cmd, "--sysfs", mlx5, "--lib", "nvshmem", "--lib-version", "nvshmem=3.7.0", "--want", "0x8001", "--emit", "env")
	if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, file+":2") {
		t.Errorf("gate beaten by the file: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runWith(t, context.Background(), env, jsonschematest.Complete, cmd, "--sysfs", mlx5, "--lib", "nvshmem", "--lib-version", "nvshmem=3.7.0", "--want", "0x8005", "--emit", "env")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "export NVSHMEM_IB_PKEY_INDEX=4\n") {
		t.Errorf("gate agreeing with the file: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Arguments: no file is read, and the export decides.
	r = runWith(t, context.Background(), env, jsonschematest.Complete, cmd, "--sysfs", mlx5, "--lib", "nvshmem", "--lib-version", "nvshmem=3.7.0", "--want", "0x8001", "--emit", "env", "NVSHMEM_HCA_LIST=mlx5_0")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "export NVSHMEM_IB_PKEY_INDEX=1\n") {
		t.Errorf("arguments: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// A file that cannot be read: not checked (exit 4), naming it.
	r = runWith(t, context.Background(), env, jsonschematest.Partial, jobCmdFS(testMCAFS{deny: []string{file}}), "--sysfs", mlx5, "--lib", "nvshmem", "--lib-version", "nvshmem=3.7.0")
	if r.code != cmdutil.ExitIncomplete || !strings.Contains(r.stdout, "open "+file+": permission denied") {
		t.Errorf("unreadable home file: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// With settings from the environment, MVAPICH2's configuration files are read: the
// setting names the file and line; a line MVAPICH2 cannot read stops the job (exit 1)
// and its gate exports nothing.
func TestMV2ConfFiles(t *testing.T) {
	home := t.TempDir()
	file := home + "/.mvapich2.conf"
	if err := os.WriteFile(file, []byte("# the user's\nMV2_DEFAULT_PKEY = 0x8001\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": home}
	r := runWith(t, context.Background(), env, jsonschematest.Complete, jobCmd, "--sysfs", mlx5, "--lib", "mvapich2")
	if !strings.Contains(r.stdout, "MV2_DEFAULT_PKEY=0x8001 ("+file+":2)") || !strings.Contains(r.stderr, "MVAPICH2's configuration files ("+file+")") {
		t.Errorf("from the file: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if err := os.WriteFile(file, []byte("MV2_DEFAULT_PKEY 0x8001\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runWith(t, context.Background(), env, jsonschematest.Complete, jobCmd, "--sysfs", mlx5, "--lib", "mvapich2")
	if r.code != 1 || !strings.Contains(r.stdout, "MVAPICH2 does not start: "+file+" line 1: Line not of form `PARAMETER = VALUE'") {
		t.Errorf("a bad line: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runWith(t, context.Background(), env, jsonschematest.Complete, jobCmd, "--sysfs", mlx5, "--lib", "mvapich2", "--want", "0x8001", "--emit", "env")
	if r.code != 1 || r.stdout != "" {
		t.Errorf("gate with a bad line: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// In a Slurm Prolog (root, for SLURM_JOB_UID), the password database's home that
// NCCL before 2.30 reads is the job user's, not root's: no version split where the
// job's HOME is that home.
func TestPasswdHomeOfTheJobUser(t *testing.T) {
	home := t.TempDir()
	if err := os.WriteFile(home+"/.nccl.conf", []byte("NCCL_IB_HCA=mlx5_0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var asked []int
	cmd := func(f *cmdutil.Factory) *cobra.Command {
		return NewCmdJob(f, func(o *Options) error {
			o.MCAFS = testMCAFS{}
			o.PasswdHome = func(uid int) (string, bool) {
				asked = append(asked, uid)
				if uid == 1234 {
					return home, true
				}
				return "/root", true
			}
			return Run(o)
		})
	}
	r := runWith(t, context.Background(), map[string]string{"HOME": home, "SLURM_JOB_UID": "1234"}, jsonschematest.Complete, cmd, "--sysfs", mlx5, "--lib", "nccl")
	if r.code != 0 || strings.Contains(r.stdout, "not checked") || !slices.Equal(asked, []int{1234}) {
		t.Errorf("exit %d, uids asked %v\n%s%s", r.code, asked, r.stdout, r.stderr)
	}
	asked = nil
	r = runWith(t, context.Background(), map[string]string{"HOME": home}, jsonschematest.Partial, cmd, "--sysfs", mlx5, "--lib", "nccl")
	if r.code != 4 || !strings.Contains(r.stdout, `NCCL_IB_HCA from NCCL's files: unset in NCCL before 2.30`) || !slices.Equal(asked, []int{-1}) {
		t.Errorf("exit %d, uids asked %v\n%s%s", r.code, asked, r.stdout, r.stderr)
	}
}
