package job

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/jsonschematest"
	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/ibverbs"
	"github.com/ibkey/ibkey/internal/query"
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

// formatOf is the format the factory decides for -o output on a pipe.
func formatOf(output string) func() (cmdutil.Format, error) {
	f := cmdutil.NewFactory(&cmdutil.IOStreams{}, func(string) string { return "" }, nil)
	f.Output = output
	return f.Format
}

type exitErr struct{ code int }

func (e *exitErr) Error() string { return "exit" }

type result struct {
	stdout, stderr string
	code           int
}

// runJob runs `ibkey job ARGS` in-process on the mlx5 fixture host with env as the
// environment; "-o FORMAT" is taken out of args as the root command would.
func runJob(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	output := ""
	rest := []string{} // never nil: cobra would read os.Args
	for i := 0; i < len(args); i++ {
		if args[i] == "-o" && i+1 < len(args) {
			output = args[i+1]
			i++
			continue
		}
		rest = append(rest, args[i])
	}
	var out, errOut bytes.Buffer
	deps := Deps{Out: &out, ErrOut: &errOut,
		Host:   func() *query.Host { return &query.Host{Sys: ibverbs.Open(mlx5)} },
		Getenv: func(k string) string { return env[k] },
		Format: formatOf(output),
		Exit:   func(c int) error { return &exitErr{c} },
	}
	c := NewCmdJob(deps, nil)
	c.SetArgs(rest)
	c.SetOut(&out)
	c.SetErr(&errOut)
	c.SilenceUsage, c.SilenceErrors = true, true
	err := c.Execute()
	code := 0
	var (
		ee    *exitErr
		usage *query.UsageError
		pe    *check.ParseError
		env3  *query.EnvError
		nf    *query.NotFoundError
	)
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.code
	case errors.As(err, &usage), errors.As(err, &pe):
		code = 2
		errOut.WriteString("ibkey: " + err.Error() + "\n")
	case errors.As(err, &env3), errors.As(err, &nf):
		code = 3
		errOut.WriteString("ibkey: " + err.Error() + "\n")
	default:
		t.Fatalf("untyped error: %v", err)
	}
	jsonschematest.Stdout(t, append([]string{"job"}, args...), out.String())
	jsonschematest.Incomplete(t, append([]string{"job"}, args...), out.String(), code)
	return result{out.String(), errOut.String(), code}
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

func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"NCCL_IB_PKEY"}, 2, `argument 1: invalid setting "NCCL_IB_PKEY": no '='`},
		{[]string{"1X=2"}, 2, "is not a variable name"},
		{[]string{"--want", "0x8000"}, 2, "key 0 is an empty entry"},
		{[]string{"--want", "zz"}, 2, "invalid P_Key"},
		{[]string{"--lib", "nccl,mpich"}, 2, `invalid --lib "mpich"`},
		{[]string{"--host", "node01"}, 2, "invalid --host"},
		{[]string{"--lid", "0"}, 2, "invalid --lid"},
		{[]string{"--env", "testdata/missing.env"}, 2, "--env"},
		{[]string{"--fabric-file", labFabric, "--node", "Nope"}, 3, `no node "Nope" in the sweep`},
		{[]string{"--lid", "3"}, 3, "no fabric access"},
		{[]string{"-o", "yaml"}, 2, "invalid output format"},
	} {
		r := runJob(t, nil, tc.args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tc.args, r.code, r.stderr, tc.code, tc.want)
		}
	}
}

// Building the command touches nothing: no host, no environment.
func TestBuildTouchesNothing(t *testing.T) {
	c := NewCmdJob(Deps{
		Host:   func() *query.Host { t.Fatal("host read while building"); return nil },
		Getenv: func(string) string { t.Fatal("environment read while building"); return "" },
	}, nil)
	if c.Name() != "job" || c.Flags().Lookup("want") == nil {
		t.Fatal("no job command with --want")
	}
	var got *Options
	c = NewCmdJob(Deps{}, func(o *Options) error { got = o; return nil })
	c.SetArgs([]string{"--want", "0x2", "A=1"})
	if err := c.Execute(); err != nil || got == nil || got.Want != "0x2" || len(got.Assign) != 1 {
		t.Fatalf("runF got %+v, err %v", got, err)
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
			r := runJob(t, nil, append(args, "-o", "json")...)
			var doc struct {
				Libraries []struct {
					Library string `json:"library"`
					Verdict string `json:"verdict"`
				} `json:"libraries"`
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
