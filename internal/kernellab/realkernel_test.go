package kernellab_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/lab"
)

// One boot serves every test in this package: the binaries are built on the host
// first (the host root is shared read-only into the guest, so they run there at the
// same paths), then the guest runs every command of the plan and the tests read the
// results. TCG is slow: one boot, many checks.

const (
	dev  = "rxe0"
	port = "1"
)

var shared struct {
	once   sync.Once
	lab    *Lab
	skip   string // why every test skips (lab not installed)
	run    *Run
	bin    string // where the binaries were built (rundir/bin, /kl/bin in the guest)
	rundir string
	err    error
}

func repoRoot() string {
	wd, _ := os.Getwd()
	return filepath.Clean(filepath.Join(wd, "..", ".."))
}

func TestMain(m *testing.M) {
	if strings.HasPrefix(filepath.Base(os.Args[0]), "probe") {
		os.Exit(probeMain(os.Args[1:])) // this binary as the guest's probe (probe_test.go)
	}
	code := m.Run()
	if os.Getenv("IBKEY_KERNEL_LAB_KEEP") != "" {
		fmt.Fprintf(os.Stderr, "kernel lab: kept %s\n", shared.rundir)
		os.Exit(code)
	}
	if shared.rundir != "" {
		os.RemoveAll(shared.rundir)
	}
	os.Exit(code)
}

// boot returns the one boot of this test binary, booting on first use.
func boot(t *testing.T) *Run {
	t.Helper()
	shared.once.Do(func() {
		shared.lab, shared.err = Find(filepath.Join(repoRoot(), "scripts", "kernel-lab"))
		if shared.err != nil {
			return
		}
		shared.run, shared.err = bootOnce()
	})
	if shared.lab == nil {
		lab.SkipUnlessCI(t, shared.err, InstallHint) // Find's error
	}
	if shared.err != nil {
		t.Fatalf("kernel lab: %v", shared.err)
	}
	return shared.run
}

func build(dir string) error {
	root := repoRoot()
	for _, b := range []struct {
		out, pkg string
		tags     string
	}{
		{"ibkey", "./cmd/ibkey", ""},
		{"ibkey-static", "./cmd/ibkey", "ibkey_static"},
		{"probe", "./internal/kernellab", ""},
		{"probe-static", "./internal/kernellab", "ibkey_static"},
	} {
		// The probe is this package's test binary (TestMain runs it by its name).
		args := []string{"build", "-trimpath", "-o", filepath.Join(dir, b.out)}
		if strings.HasPrefix(b.out, "probe") {
			args[0] = "test"
			args = append(args, "-c")
		}
		if b.tags != "" {
			args = append(args, "-tags", b.tags)
		}
		cmd := exec.Command("go", append(args, b.pkg)...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go %s %s: %v\n%s", args[0], b.pkg, err, out)
		}
	}
	// The guest mounts a tmpfs on /tmp, so a checkout there is invisible to it: the
	// script goes into the run directory with the binaries.
	script, err := os.ReadFile(filepath.Join(root, "scripts", "save-sysfs"))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "save-sysfs"), script, 0o755); err != nil {
		return err
	}
	for _, c := range []string{"qkeytraffic", "pkeyindex"} {
		cmd := exec.Command("gcc", "-O2", "-Wall", "-o", filepath.Join(dir, c),
			filepath.Join(root, "internal", "kernellab", "testdata", c+".c"), "-libverbs")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("gcc %s.c (needs libibverbs-dev): %v\n%s", c, err, out)
		}
	}
	return nil
}

// plan is every command the tests need, in the order they run in the guest. Order
// matters for counters: the Q_Key table runs after the first verbs/devinfo reads.
func plan(bin string) []Command {
	ibkey := bin + "/ibkey"
	probe := bin + "/probe"
	traffic := bin + "/qkeytraffic " + dev + " " + port
	cmds := []Command{
		{Name: "raw", Script: rawScript},
		{Name: "save_sysfs", Script: bin + "/save-sysfs /kl/work/sysfs-rxe"},
		{Name: "rdma_link", Script: "rdma -j link show"},
		{Name: "rdma_dev", Script: "rdma -j dev show"},
		{Name: "devinfo_root", Script: "ibv_devinfo -v -d " + dev},
		{Name: "devinfo_nobody", Script: "ibv_devinfo -v -d " + dev, Nobody: true},
		{Name: "probe_verbs_root", Script: probe + " verbs " + dev + " " + port},
		{Name: "probe_verbs_nobody", Script: probe + " verbs " + dev + " " + port, Nobody: true},
		{Name: "probe_static", Script: bin + "/probe-static verbs " + dev + " " + port},
		{Name: "ibkey_devices", Script: ibkey + " devices -o json"},
		{Name: "ibkey_devices_plain", Script: ibkey + " devices -o plain"},
		{Name: "ibkey_pkeys", Script: ibkey + " pkeys -o json"},
		{Name: "ibkey_pkeys_nobody", Script: ibkey + " pkeys -o json", Nobody: true},
		{Name: "ibkey_watch", Script: ibkey + " watch counters --once -o json"},
		{Name: "ibkey_watch_ca", Script: ibkey + " watch counters --once --ca " + dev + " -o json"},
		{Name: "ibkey_watch_ca_plain", Script: ibkey + " watch counters --once --ca " + dev + " -o plain"},
		{Name: "ibkey_watch_static", Script: bin + "/ibkey-static watch counters --once -o json", Nobody: true},
		{Name: "ibkey_cantalk", Script: ibkey + " can-talk " + dev + "/" + port + " " + dev + "/" + port + " -o json"},
		{Name: "ibkey_cantalk_qkey", Script: ibkey + " can-talk " + dev + "/" + port + ",qp=ud,qkey=0x11,wr_qkey=0x80000011 " + dev + "/" + port + ",qp=ud,qkey=0x11 -o json"},
		{Name: "ibkey_cantalk_qkey_plain", Script: ibkey + " can-talk " + dev + "/" + port + ",qp=ud,qkey=0x11,wr_qkey=0x80000011 " + dev + "/" + port + ",qp=ud,qkey=0x11", Nobody: true},
		{Name: "ibkey_cantalk_bare", Script: ibkey + " can-talk 0xffff,qp=ud,qkey=0x11,wr_qkey=0x80000011 0xffff,qp=ud,qkey=0x11 -o json"},
		{Name: "ibkey_decode_qkey", Script: ibkey + " decode qkey 0x80010000 0x80000011 -o json", Nobody: true},
		// The verbs counters as uid 65534 just before and just after the Q_Key table.
		{Name: "ibkey_watch_nobody", Script: ibkey + " watch counters --once -o json", Nobody: true},
		// The Q_Key oracle: every case in one process.
		{Name: "qkey_table", Script: traffic + " " + qkeySpecs(), Timeout: 240 * time.Second},
		{Name: "devinfo_after_table", Script: "ibv_devinfo -v -d " + dev},
		{Name: "ibkey_watch_nobody_after_table", Script: ibkey + " watch counters --once -o json", Nobody: true},
		{Name: "ibkey_watch_plain_nobody", Script: ibkey + " watch counters --once -o plain", Nobody: true},
		// The exporter's host mode reads the same counters through verbs.
		{Name: "ibkey_exporter_once_nobody", Script: ibkey + " exporter --once", Nobody: true},
		{Name: "probe_verbs_after_table", Script: probe + " verbs " + dev + " " + port, Nobody: true},
		// Privilege of controlled Q_Keys.
		{Name: "priv_nobody_create_controlled", Script: traffic + " --create 80000011", Nobody: true},
		{Name: "priv_nobody_create_gsi", Script: traffic + " --create 80010000", Nobody: true},
		{Name: "priv_nobody_create_plain", Script: traffic + " --create 11", Nobody: true},
		{Name: "priv_root_create_controlled", Script: traffic + " --create 80000011"},
		{Name: "priv_nobody_send", Script: traffic + " nb_gsi,11,gsi,a,80010000 nb_top,11,11,a,80000011 nb_plain,11,22,a,22", Nobody: true, Timeout: 120 * time.Second},
		{Name: "rdma_system", Script: "rdma system show; rdma system set privileged-qkey on"},
		// watch counters with the verbs source, around traffic that causes 3 Q_Key
		// violations (and one that passes), as nobody and as root.
		{Name: "watch_traffic_nobody", Script: probe + " watch " + dev + " " + port + " -- " + traffic + " w1,11,22,a,33 w2,11,11,a,80000011 w3,11,gsi,a,11 w4,11,11,a,11", Nobody: true, Timeout: 120 * time.Second},
		{Name: "watch_traffic_root", Script: probe + " watch " + dev + " " + port + " -- " + traffic + " w5,44,55,b,44 w6,44,44,a,44", Timeout: 120 * time.Second},
		// ibkey watch counters itself, as uid 65534, sampling while the same traffic as
		// watch_traffic_nobody runs: the deltas add up to the drops.
		{Name: "ibkey_watch_stream_nobody", Script: watchStreamScript(ibkey, traffic+" i1,11,22,a,33 i2,11,11,a,80000011 i3,11,gsi,a,11 i4,11,11,a,11"), Nobody: true, Timeout: 150 * time.Second},
		{Name: "ibkey_watch_after", Script: ibkey + " watch counters --once -o json"},
		{Name: "devinfo_final", Script: "ibv_devinfo -v -d " + dev},
		// umad: ibkey's transport and the raw ABI, as root and as nobody.
		{Name: "umad_root", Script: probe + " umad " + dev + " " + port, Timeout: 120 * time.Second},
		{Name: "umad_nobody", Script: probe + " umad " + dev + " " + port, Nobody: true},
	}
	// perftest against ibkey job (perftest_kernel_test.go): it adds an address to
	// dummy0 for rdma_cm and removes it.
	cmds = append(cmds,
		Command{Name: "pkeyindex", Script: bin + "/pkeyindex " + dev + " " + port + " " + pkeyIndexes},
		Command{Name: "perftest_pkey", Script: perftestScript(ibkey), Timeout: 240 * time.Second})
	// max_pkeys read against ibv_devinfo (maxpkeys_kernel_test.go); it gives
	// uverbs0's mode back.
	cmds = append(cmds, maxPKeysPlan(bin)...)
	cmds = append(cmds, ucxPlan(ibkey)...)    // the real UCX against ibkey job (ucx_kernel_test.go)
	cmds = append(cmds, renamePlan(ibkey)...) // a name ibkey refuses (rename_kernel_test.go)
	// A pod's view (pod_kernel_test.go), last: the exclusive mode stays set.
	return append(cmds, podPlan(ibkey)...)
}

// watchStreamScript runs `ibkey watch counters -o json` in the background, waits for
// its first sample, runs traffic, waits for two more samples (one wholly after the
// traffic), stops the watch with SIGTERM and prints the samples on stdout (traffic's
// output and the watch's stderr and exit status on stderr).
func watchStreamScript(ibkey, traffic string) string {
	// The output file exists before the watch starts: the background job's redirect
	// may open it after the first "lines" runs (a race that skipped the first wait).
	return `f=/kl/work/watch-stream.$$
: > $f.json
` + ibkey + ` watch counters ` + dev + `/` + port + ` -o json --interval 500ms >> $f.json 2> $f.err &
pid=$!
lines() { n=$(wc -l < $f.json 2>/dev/null); echo "${n:-0}"; }
i=0; while [ "$(lines)" -lt 1 ] && [ $i -lt 300 ]; do sleep 0.2; i=$((i+1)); done
` + traffic + ` > $f.traffic 2>&1; echo "traffic exit $?" >&2
n=$(lines); i=0; while [ "$(lines)" -lt $((n+2)) ] && [ $i -lt 300 ]; do sleep 0.2; i=$((i+1)); done
kill -TERM $pid; wait $pid; echo "watch exit $?" >&2
cat $f.traffic $f.err >&2
cat $f.json`
}

// rawScript prints the files ibkey reads, NAME=VALUE, for comparison.
const rawScript = `d=/sys/class/infiniband/` + dev + `
echo "link=$(readlink $d)"
for f in node_type node_guid sys_image_guid node_desc fw_ver parent; do echo "$f=$(cat $d/$f)"; done
for f in state phys_state lid sm_lid lid_mask_count sm_sl cap_mask rate link_layer gids/0 pkeys/0; do echo "ports/1/$f=$(cat $d/ports/1/$f)"; done
echo "pkeys=$(ls $d/ports/1/pkeys | tr '\n' ' ')"
echo "counters_dir=$(test -d $d/ports/1/counters && echo yes || echo no)"
echo "hw_counters=$(ls $d/ports/1/hw_counters | tr '\n' ' ')"
echo "umad=$(cat /sys/class/infiniband_mad/umad0/ibdev)/$(cat /sys/class/infiniband_mad/umad0/port)"
echo "dev_modes=$(stat -c '%n:%a' /dev/infiniband/* | tr '\n' ' ')"
echo "kernel=$(uname -r)"
`

func bootOnce() (*Run, error) {
	dir, err := os.MkdirTemp("", "ibkey-kernellab-run-")
	if err != nil {
		return nil, err
	}
	shared.rundir = dir
	// The binaries go into the shared directory: the guest mounts its own /tmp.
	shared.bin = filepath.Join(dir, "bin")
	if err := os.MkdirAll(shared.bin, 0o755); err != nil {
		return nil, err
	}
	if err := build(shared.bin); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Second)
	defer cancel()
	run, err := shared.lab.Boot(ctx, dir, plan(GuestDir+"/bin"))
	if run != nil {
		shared.run = run
	}
	return run, err
}

// result returns a command's result, failing when it did not run at all.
func result(t *testing.T, name string) *Result {
	t.Helper()
	run := boot(t)
	r := run.Result(name)
	if !r.Ran() {
		t.Fatalf("%s did not run in the guest; guest log tail:\n%s", name, tail(run.Log, 15))
	}
	return r
}

// mustSucceed returns a command's stdout, failing when it exited non-zero.
func mustSucceed(t *testing.T, name string) string {
	t.Helper()
	r := result(t, name)
	if r.Exit != 0 {
		t.Fatalf("%s exited %d in the guest\nstdout: %s\nstderr: %s", name, r.Exit, r.Stdout, r.Stderr)
	}
	return r.Stdout
}

// jobJSON is the part of `ibkey job -o json` the lab's library tests read.
type jobJSON struct {
	Libraries []struct {
		Library   string   `json:"library"`
		Verdict   string   `json:"verdict"`
		Findings  []string `json:"findings"`
		Unchecked []string `json:"unchecked"`
		Notes     []string `json:"notes"`
		Ports     []struct {
			Device  string `json:"device"`
			Port    int    `json:"port"`
			Used    bool   `json:"used"`
			Why     string `json:"why"`
			Outcome string `json:"outcome"`
			Index   *int   `json:"index"`
			PKey    string `json:"pkey"`
			Problem string `json:"problem"`
		} `json:"ports"`
	} `json:"libraries"`
}

// workFiles reads the files a plan's cases left in dir of the guest's work
// directory; what names them in a failure.
func workFiles(t *testing.T, run *Run, dir, what string) func(name string) string {
	d := filepath.Join(run.Dir, "work", dir)
	return func(name string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(d, name))
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return string(b)
	}
}

func decodeJSON(t *testing.T, name, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("%s: not JSON (%v): %q", name, err, s)
	}
}

// rawValues parses the raw script's NAME=VALUE lines.
func rawValues(t *testing.T) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, l := range strings.Split(mustSucceed(t, "raw"), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			m[k] = v
		}
	}
	return m
}

// TestBoot reports the boot and the setup; every other test reads from this boot.
func TestBoot(t *testing.T) {
	run := boot(t)
	t.Logf("one boot: %v, %d commands", run.Elapsed.Round(100*time.Millisecond), len(plan("")))
	if strings.Contains(run.Setup.Stdout, "setup step failed") {
		t.Fatalf("rxe setup failed:\n%s\n%s", run.Setup.Stdout, run.Setup.Stderr)
	}
	raw := rawValues(t)
	if raw["ports/1/link_layer"] != "Ethernet" || raw["umad"] != dev+"/1" {
		t.Fatalf("the guest has no working rxe port: %v", raw)
	}
}
