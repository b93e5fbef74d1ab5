package job

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/jsonschematest"
	"github.com/ibkey/ibkey/internal/demo"
	"github.com/ibkey/ibkey/internal/fakesysfs"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
)

// gateHost is a saved host for the gate: mlx5_0/1 ACTIVE with table 0xffff 0x8001
// (then empty entries), the IPoIB parent ib0 and the child ib0.8042 whose key is not
// in the table yet (so it is down).
func gateHost(guid uint64, table ...string) fakesysfs.Host {
	p := fakesysfs.Port{Num: 1, State: "4: ACTIVE", PhysState: "5: LinkUp", LID: "0x5", SMLID: "0x1",
		LMC: "0", SMSL: "0", CapMask: "0x2651e848", Rate: "100 Gb/sec (4X EDR)", LinkLayer: "InfiniBand",
		GIDs: []string{fakesysfs.GID0(guid + 1)}, PKeys: fakesysfs.Table(16, table...)}
	return fakesysfs.Host{
		Devices: []fakesysfs.Device{{Name: "mlx5_0", PCI: "0000:03:00.0", NodeType: "1: CA",
			NodeGUID: fakesysfs.GUID(guid), SysImageGUID: fakesysfs.GUID(guid), NodeDesc: "node01 mlx5_0",
			Ports: []fakesysfs.Port{p}}},
		Net: []fakesysfs.NetIf{
			{Name: "ib0", Device: "mlx5_0", Type: "32", Address: fakesysfs.IPoIBAddress(0x1049, guid+1), PKey: "0xffff", DevPort: "0", OperState: "up"},
			{Name: "ib0.8042", Device: "mlx5_0", Type: "32", Address: fakesysfs.IPoIBAddress(0x104b, guid+1), PKey: "0x8042", Parent: "ib0", DevPort: "0", OperState: "up"},
		},
	}
}

func writeHost(t *testing.T, h fakesysfs.Host) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "sys")
	if err := fakesysfs.Write(dir, h); err != nil {
		t.Fatal(err)
	}
	return dir
}

// setPKey writes entry i of DEV/1's table in a saved tree, as the kernel would show
// the SM's change.
func setPKey(t *testing.T, root, dev string, i int, v string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(root, "class/infiniband", dev, "ports/1/pkeys", strconv.Itoa(i)), []byte(v+"\n"), 0o644); err != nil {
		t.Error(err)
	}
}

// runOn runs `ibkey job ARGS` in-process with dir as the local host (--sysfs), env as
// the environment, under ctx.
func runOn(t *testing.T, ctx context.Context, dir string, env map[string]string, args ...string) result {
	t.Helper()
	return run(t, ctx, env, append([]string{"--sysfs", dir}, args...)...)
}

// The saved host gains the key while the gate waits: it answers once the table holds
// it, with the index the table shows and the IPoIB child of the partition.
func TestWaitSysfsGainsKey(t *testing.T) {
	dir := writeHost(t, gateHost(0x0002c90300000100, "0xffff", "0x8001"))
	go func() {
		time.Sleep(700 * time.Millisecond)
		setPKey(t, dir, "mlx5_0", 2, "0x8042")
	}()
	start := time.Now()
	r := runOn(t, context.Background(), dir, nil, "--want", "0x0042", "--wait", "20s", "--emit", "env", "OMPI_MCA_btl_openib_allow_ib=1")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	want := `export NCCL_IB_PKEY=2
export UCX_IB_PKEY=0x0042
export NVSHMEM_IB_PKEY_INDEX=2
export GASNET_IBV_PKEY=0x0042
export MV2_DEFAULT_PKEY=0x0042
export OMPI_MCA_btl_openib_pkey=0x0042
export IBKEY_IPOIB_INTERFACE=ib0.8042
`
	if r.stdout != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", r.stdout, want)
	}
	for _, s := range []string{"waiting up to 20s for partition 0x0042 on 1 port", "mlx5_0/1: no entry for partition 0x0042", "partition 0x0042 ready after", " pkey entries from sysfs)"} {
		if !strings.Contains(r.stderr, s) {
			t.Errorf("stderr lacks %q:\n%s", s, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "MADs") { // no transport: nothing sent
		t.Errorf("stderr counts MADs of a wait on sysfs:\n%s", r.stderr)
	}
	t.Logf("answered %v after the start (key written at 0.7s)\n%s", time.Since(start).Round(time.Millisecond), r.stderr)
}

// A partition that never arrives: exit 1 at the timeout, nothing on stdout, the host
// and port named.
func TestWaitTimeout(t *testing.T) {
	dir := writeHost(t, gateHost(0x0002c90300000100, "0xffff", "0x8001"))
	r := runOn(t, context.Background(), dir, nil, "--want", "0x0042", "--wait", "1200ms", "--emit", "env")
	if r.code != 1 || r.stdout != "" {
		t.Fatalf("exit %d, stdout %q\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	for _, s := range []string{"timed out after", "this host: mlx5_0/1: no entry for partition 0x0042", "nothing exported", "not ready: this host"} {
		if !strings.Contains(r.stderr, s) {
			t.Errorf("stderr lacks %q:\n%s", s, r.stderr)
		}
	}
	// Without --emit: the last read's answer is not printed either (a timeout is
	// the answer), exit 1.
	r = runOn(t, context.Background(), dir, nil, "--want", "0x0042", "--wait", "600ms")
	if r.code != 1 || r.stdout != "" {
		t.Errorf("without --emit: exit %d, stdout %q", r.code, r.stdout)
	}
}

// A signal (the command's context ending) stops the wait: the error names the signal
// and what was pending, the exit is 128+N, nothing is exported.
func TestWaitSignal(t *testing.T) {
	dir := writeHost(t, gateHost(0x0002c90300000100, "0xffff"))
	cause := errors.New("interrupt signal received")
	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(700*time.Millisecond, func() { cancel(cause) })
	start := time.Now()
	r := runOn(t, ctx, dir, nil, "--want", "0x0042", "--wait", "30s", "--emit", "env")
	if r.code != cmdutil.ExitSignal+2 || !strings.Contains(r.stderr, "ibkey: stopped by a signal (interrupt signal received): stopped waiting for partition 0x0042") || !strings.Contains(r.stderr, "mlx5_0/1: no entry") {
		t.Fatalf("exit %d, stderr %q; want exit 130 naming the cause and the pending port", r.code, r.stderr)
	}
	if r.stdout != "" || time.Since(start) > 5*time.Second {
		t.Errorf("stdout %q after %v", r.stdout, time.Since(start))
	}
}

// Two hosts with the key at different indexes: NCCL and NVSHMEM take an index as
// given on every host, so one environment for the job has no right value: exit 1,
// nothing exported; with --lib ucx (a value) it works. With --wait the index that
// differs is what the gate names at its timeout.
func TestEmitIndexDiffers(t *testing.T) {
	a := writeHost(t, gateHost(0x0002c90300000100, "0xffff", "0x8042"))
	b := writeHost(t, gateHost(0x0002c90300000200, "0xffff", "0x8001", "0x8042"))
	hosts := []string{"--host", "node01=" + a, "--host", "node02=" + b}
	r := runOn(t, context.Background(), a, nil, append(hosts, "--want", "0x0042", "--emit", "env")...)
	if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "NCCL needs one value on every host of the job and there is none") {
		t.Errorf("exit %d stdout %q\n%s", r.code, r.stdout, r.stderr)
	}
	r = runOn(t, context.Background(), a, nil, append(hosts, "--want", "0x0042", "--emit", "env", "--lib", "ucx")...)
	if r.code != 0 || r.stdout != "export UCX_IB_PKEY=0x0042\nexport IBKEY_IPOIB_INTERFACE=ib0.8042\n" {
		t.Errorf("--lib ucx: exit %d stdout %q\n%s", r.code, r.stdout, r.stderr)
	}
	r = runOn(t, context.Background(), a, nil, append(hosts, "--want", "0x0042", "--emit", "env", "--wait", "700ms", "--lib", "nccl")...)
	if r.code != 1 || !strings.Contains(r.stderr, "node02: node02:mlx5_0/1: holds partition 0x0042 at index 2, the job's other hosts at index 1 (node01:mlx5_0/1): NCCL takes one index for every host") {
		t.Errorf("--wait: exit %d\n%s", r.code, r.stderr)
	}
	// Without --emit the per-port answer is a valid one: each host its own index.
	r = runOn(t, context.Background(), a, nil, append(hosts, "--want", "0x0042", "--wait", "5s", "--lib", "nccl")...)
	if r.code != 0 || !strings.Contains(r.stdout, "works with a value per port") {
		t.Errorf("--want --wait without --emit: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// Limited members on two hosts never talk: the gate waits for one to become full.
func TestWaitLimitedOnBothHosts(t *testing.T) {
	a := writeHost(t, gateHost(0x0002c90300000100, "0xffff", "0x0042"))
	b := writeHost(t, gateHost(0x0002c90300000200, "0xffff", "0x0042"))
	go func() {
		time.Sleep(600 * time.Millisecond)
		setPKey(t, b, "mlx5_0", 1, "0x8042")
	}()
	r := runOn(t, context.Background(), a, nil, "--host", "node01="+a, "--host", "node02="+b, "--want", "0x0042", "--wait", "20s", "--lib", "ucx", "--emit", "env")
	if r.code != 0 || !strings.Contains(r.stderr, "only as a limited member") || r.stdout == "" {
		t.Errorf("exit %d\nstdout %q\n%s", r.code, r.stdout, r.stderr)
	}
}

// A host without an IPoIB interface of the partition: the settings are exported with
// a warning that rdma_cm users cannot use it there.
func TestEmitNoIPoIB(t *testing.T) {
	h := gateHost(0x0002c90300000100, "0xffff", "0x8042")
	h.Net = h.Net[:1]
	dir := writeHost(t, h)
	r := runOn(t, context.Background(), dir, nil, "--want", "0x0042", "--emit", "env", "--lib", "nccl")
	if r.code != 0 || r.stdout != "export NCCL_IB_PKEY=1\n" || !strings.Contains(r.stderr, "this host has no IPoIB interface of partition 0x0042: rdma_cm users") {
		t.Errorf("exit %d stdout %q\n%s", r.code, r.stdout, r.stderr)
	}
}

// Issue 25 item 6: a variable that looks like a setting but is read by no library,
// and where the settings came from.
func TestLookAlikesAndSources(t *testing.T) {
	dir := writeHost(t, gateHost(0x0002c90300000100, "0xffff", "0x8042"))
	r := runOn(t, context.Background(), dir, map[string]string{"NCCL_IB_PKEYS": "1", "HOME": "/root", "UCX_RC_PKEY": "0x2"})
	if !strings.Contains(r.stderr, "warning: NCCL_IB_PKEYS=1 is read by no library ibkey knows: did you mean NCCL_IB_PKEY?") {
		t.Errorf("no look-alike warning:\n%s", r.stderr)
	}
	if strings.Contains(r.stderr, "UCX_RC_PKEY=0x2 is read by no library") || strings.Contains(r.stderr, "HOME") {
		t.Errorf("a real per-transport setting or an unrelated variable was warned about:\n%s", r.stderr)
	}
	r = runOn(t, context.Background(), dir, nil, "gasnet_ibv_pkey=0x2")
	if !strings.Contains(r.stderr, "did you mean GASNET_IBV_PKEY?") || !strings.Contains(r.stderr, "note: settings from the arguments") {
		t.Errorf("arguments:\n%s", r.stderr)
	}
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--perftest", "ib_send_bw -d mlx5_0"}, nil, "note: settings from --perftest\n"},
		{[]string{"--perftest", "ib_send_bw -d mlx5_0"}, map[string]string{"NCCL_IB_PKEY": "1"}, "note: settings from the environment (NCCL_IB_PKEY) and --perftest\n"},
		{nil, nil, "note: settings from the environment: none set, every library's defaults\n"},
	} {
		r = runOn(t, context.Background(), dir, tc.env, tc.args...)
		if !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v %v: stderr lacks %q:\n%s", tc.args, tc.env, tc.want, r.stderr)
		}
		if strings.Contains(r.stderr, "without -d") {
			t.Errorf("%v: -d was given, yet:\n%s", tc.args, r.stderr)
		}
	}
}

// Issue 25 item 6: a value a library rejects is never shown as "partition 0x0000" (or
// as any partition): the setting says it is rejected.
func TestRejectedValuesNamedAsRejected(t *testing.T) {
	dir := writeHost(t, gateHost(0x0002c90300000100, "0xffff", "0x8042"))
	for _, kv := range []string{"UCX_IB_PKEY=8001", "UCX_IB_PKEY=0x8001", "UCX_IB_PKEY=0x", "GASNET_IBV_PKEY=0x8000", "GASNET_IBV_PKEY=1", "GASNET_IBV_PKEY=x"} {
		r := runOn(t, context.Background(), dir, nil, kv)
		if r.code != 1 {
			t.Errorf("%s: exit %d, want 1\n%s", kv, r.code, r.stdout)
		}
		for _, line := range strings.Split(r.stdout, "\n") {
			if strings.Contains(line, ": DOES NOT WORK: ") && (strings.Contains(line, "partition 0x") || !strings.Contains(line, "rejects") && !strings.Contains(line, "Invalid")) {
				t.Errorf("%s: %s", kv, line)
			}
		}
	}
}

func TestFlagCombinations(t *testing.T) {
	dir := writeHost(t, gateHost(0x0002c90300000100, "0xffff"))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--wait", "5s"}, "--wait needs --want"},
		{[]string{"--emit", "env"}, "--emit env needs --want"},
		{[]string{"--want", "0x2", "--emit", "json"}, `invalid --emit "json" (accepted: env)`},
		{[]string{"--want", "0x2", "--wait", "-1s"}, "invalid --wait"},
		{[]string{"--want", "0x2", "--wait", "48h"}, "invalid --wait"},
		{[]string{"--want", "0x2", "--wait", "5s", "--fabric-file", labFabric}, "--wait re-reads the job's ports"},
		{[]string{"--node", "n[3-1]", "--fabric-file", labFabric}, `--node: invalid hostlist "n[3-1]"`},
		{[]string{"--lid", "5-3", "--fabric-file", labFabric}, "invalid --lid"},
	} {
		r := runOn(t, context.Background(), dir, nil, tc.args...)
		if r.code != cmdutil.ExitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, %q; want exit 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	// -o json is the root's flag: the format comes from the factory.
	o := &Options{Want: "0x2", Emit: "env"}
	if err := o.checkFlags(cmdutil.FormatJSON); err == nil || !strings.Contains(err.Error(), "choose one") {
		t.Errorf("--emit env -o json: %v", err)
	}
}

// --node takes Slurm's hostlist syntax and maps hosts to the sweep's nodes by node
// description.
func TestNodeHostlistInFabricFile(t *testing.T) {
	r := runJob(t, nil, "--fabric-file", labFabric, "--node", "HcaB,HcaC HcaB", "NCCL_IB_PKEY=2")
	if r.code != 0 || strings.Count(r.stdout, "nccl  ") != 2 {
		t.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// `job --help` fits 80 columns (issue 25 item 7).
func TestHelpFits80(t *testing.T) {
	// The command as root.go builds it: the root's flags and the MAD flags.
	f := cmdutil.NewFactory(&cmdutil.IOStreams{}, func(string) string { return "" }, nil)
	root := &cobra.Command{Use: "ibkey"}
	cmdutil.AddRootFlags(root, f)
	root.AddCommand(NewCmdJob(f, nil))
	var b bytes.Buffer
	root.SetOut(&b)
	root.SetArgs([]string{"job", "--help"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "--mad-timeout") || !strings.Contains(b.String(), "--sysfs") {
		t.Fatalf("not the whole help:\n%s", b.String())
	}
	for _, line := range strings.Split(b.String(), "\n") {
		if len([]rune(line)) > 80 {
			t.Errorf("%d columns: %s", len([]rune(line)), line)
		}
	}
}

// unreadPKey makes entry i of DEV/1's table unreadable in a saved tree (a symlink
// loop, as the mlx5 fixture's mlx5_1/1 entry 3), or readable again holding v.
func unreadPKey(t *testing.T, root, dev string, i int) {
	t.Helper()
	f := filepath.Join(root, "class/infiniband", dev, "ports/1/pkeys", strconv.Itoa(i))
	if err := os.Remove(f); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Base(f), f); err != nil {
		t.Fatal(err)
	}
}

// Only a limited entry read and an entry not read beside it: the index to set is not
// known (a full entry may be the one not read), so the gate waits; once the entry
// reads as the full member, it is the index exported.
func TestWaitLimitedBesideUnread(t *testing.T) {
	dir := writeHost(t, gateHost(0x0002c90300000100, "0xffff", "0x0042", "0x8042"))
	unreadPKey(t, dir, "mlx5_0", 2)
	r := runOn(t, context.Background(), dir, nil, "--want", "0x0042", "--lib", "nccl")
	if r.code != 4 || !strings.Contains(r.stdout, "the index to set is not known: index 1 holds 0x0042 (limited), and 1 entry could not be read (index 2)") {
		t.Errorf("--want: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	go func() {
		time.Sleep(700 * time.Millisecond)
		if err := os.Remove(filepath.Join(dir, "class/infiniband/mlx5_0/ports/1/pkeys/2")); err != nil {
			t.Error(err)
		}
		setPKey(t, dir, "mlx5_0", 2, "0x8042")
	}()
	r = runOn(t, context.Background(), dir, nil, "--want", "0x0042", "--wait", "20s", "--lib", "nccl", "--emit", "env")
	if r.code != 0 || r.stdout != "export NCCL_IB_PKEY=2\nexport IBKEY_IPOIB_INTERFACE=ib0.8042\n" || !strings.Contains(r.stderr, "not read: the index to set is not known") {
		t.Errorf("--wait: exit %d\nstdout %q\n%s", r.code, r.stdout, r.stderr)
	}
}

// The key at index 1 on one host and at 2 on the other, whose entry 1 was not read:
// one index for every host may exist, so "none" is not a "no": --emit env exits 4
// and the gate waits for the entry, not for another index.
func TestEmitIndexMayBeCommon(t *testing.T) {
	a := writeHost(t, gateHost(0x0002c90300000100, "0xffff", "0x8042"))
	b := writeHost(t, gateHost(0x0002c90300000200, "0xffff", "0x8001", "0x8042"))
	unreadPKey(t, b, "mlx5_0", 1)
	hosts := []string{"--host", "node01=" + a, "--host", "node02=" + b, "--want", "0x0042", "--lib", "nccl", "--emit", "env"}
	r := runOn(t, context.Background(), a, nil, hosts...)
	if r.code != 4 || r.stdout != "" || !strings.Contains(r.stderr, "not checked: NCCL: one value for every host of the job is not known") ||
		!strings.Contains(r.stderr, "index 1 may hold partition 0x0042 on every port") || !strings.Contains(r.stderr, "is not known\n") {
		t.Errorf("exit %d stdout %q\n%s", r.code, r.stdout, r.stderr)
	}
	r = runOn(t, context.Background(), a, nil, append(hosts, "--wait", "700ms")...)
	if r.code != 4 || !strings.Contains(r.stderr, "not read: index 1 may hold") {
		t.Errorf("--wait: exit %d\n%s", r.code, r.stderr)
	}
}

// The key arrives, but a setting ibkey does not interpret (a per-transport UCX
// override) is left: the gate stops waiting without calling the partition ready, and
// the answer is not checked (exit 4).
func TestWaitReadyButNotChecked(t *testing.T) {
	dir := writeHost(t, gateHost(0x0002c90300000100, "0xffff", "0x8001"))
	go func() {
		time.Sleep(700 * time.Millisecond)
		setPKey(t, dir, "mlx5_0", 2, "0x8042")
	}()
	r := runOn(t, context.Background(), dir, nil, "--want", "0x0042", "--wait", "20s", "--lib", "ucx", "UCX_RC_IB_PKEY=0x5")
	if r.code != 4 || strings.Contains(r.stderr, "ready after") || !strings.Contains(r.stderr, "nothing left to wait for after") {
		t.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// A device of the host that could not be read, which a library could use: the gate
// waits for it (exit 4 at the timeout, nothing exported) rather than call the
// partition ready; a device the settings leave out does not hold it.
func TestWaitUnreadDevice(t *testing.T) {
	const dangling = "../../../../testdata/sysfs/dangling"
	r := runOn(t, context.Background(), dangling, nil, "--want", "0xffff", "--wait", "700ms", "--lib", "nccl", "--emit", "env")
	if r.code != 4 || r.stdout != "" || !strings.Contains(r.stderr, "timed out after") || !strings.Contains(r.stderr, "this host: scif0: not read: device scif0") {
		t.Errorf("exit %d stdout %q\n%s", r.code, r.stdout, r.stderr)
	}
	r = runOn(t, context.Background(), dangling, nil, "--want", "0xffff", "--wait", "20s", "--lib", "nccl", "--emit", "env", "NCCL_IB_HCA=mlx4_0")
	if r.code != 0 || r.stdout != "export NCCL_IB_PKEY=0\nexport IBKEY_IPOIB_INTERFACE=ib0\n" {
		t.Errorf("NCCL_IB_HCA=mlx4_0: exit %d stdout %q\n%s", r.code, r.stdout, r.stderr)
	}
}

// A port whose link_layer or lid file is missing (not read): the libraries that
// select ports by it are not checked there (exit 4), never "uses none of its ports"
// or GASNet's "no ACTIVE port with a LID" (exit 1).
func TestPortFileMissing(t *testing.T) {
	for _, c := range []struct {
		file       string
		args       []string
		want, fail string
	}{
		{"link_layer", []string{"--lib", "ucx", "UCX_IB_PKEY=0x42"}, "the link layer of mlx5_0/1 was not read", "uses none of its ports"},
		{"lid", []string{"--lib", "gasnet", "GASNET_IBV_PKEY=0x42"}, "the LID of mlx5_0/1 was not read", "no ACTIVE port with a LID"},
	} {
		h := gateHost(0x0002c90300000100, "0xffff", "0x8042")
		if c.file == "lid" {
			h.Devices[0].Ports[0].LID = ""
		} else {
			h.Devices[0].Ports[0].LinkLayer = ""
		}
		r := runOn(t, context.Background(), writeHost(t, h), nil, c.args...)
		if r.code != 4 || !strings.Contains(r.stdout, c.want) || strings.Contains(r.stdout, c.fail) {
			t.Errorf("no %s: exit %d\n%s%s", c.file, r.code, r.stdout, r.stderr)
		}
	}
}

// slowTransport answers from the demo fabric, the first fast requests at once and
// every later one only after delay (or ctx's end): a fabric that stops answering
// while the gate re-reads it.
type slowTransport struct {
	mad.Transport
	fast  int64
	delay time.Duration
	n     *atomic.Int64
}

func (s slowTransport) Do(ctx context.Context, req mad.Request) (*mad.Packet, error) {
	if s.n.Add(1) > s.fast {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(s.delay):
		}
	}
	return s.Transport.Do(ctx, req)
}

// --wait bounds the whole gate, its reads included: a re-read still under way at
// the deadline is stopped there, and the wait ends timed out on the last read that
// finished (a Slurm Prolog killed at PrologEpilogTimeout drains its node:
// prep_script_slurmd.c, run_command's max_wait). Before, a read begun before the
// deadline ran to its end, and the wait started only after the first read.
func TestWaitBoundsSlowRead(t *testing.T) {
	cmd := func(f *cmdutil.Factory) *cobra.Command {
		return NewCmdJob(f, func(o *Options) error {
			o.MCAFS = testMCAFS{}
			o.PasswdHome = func(int) (string, bool) { return "/nonexistent", true }
			o.MAD.DialIbsim = func(context.Context, mad.IbsimOptions) (mad.Transport, string, error) {
				d, err := demo.OpenTransport("mlx5_0", 1, time.Now)
				// The first read of one port takes a few MADs; every MAD after the
				// first 20 takes a minute: a wait that does not stop the read under
				// way at its deadline takes that long (the bound is what is tested,
				// with a margin no loaded machine reaches, not a speed).
				return slowTransport{Transport: d, fast: 20, delay: time.Minute, n: new(atomic.Int64)}, "HcaA", err
			}
			return Run(o)
		})
	}
	start := time.Now()
	r := runWith(t, context.Background(), nil, jsonschematest.Complete, cmd, "--ibsim=sim", "--lid", "4", "--lib", "ucx", "--want", "0x0042", "--wait", "1500ms")
	took := time.Since(start)
	if r.code != 1 || r.stdout != "" || !regexp.MustCompile(`timed out after [0-9.]+s waiting for partition 0x0042`).MatchString(r.stderr) ||
		!strings.Contains(r.stderr, "no entry for partition 0x0042") || !strings.Contains(r.stderr, "the read under way at the deadline was stopped") {
		t.Errorf("exit %d stdout %q\n%s", r.code, r.stdout, r.stderr)
	}
	if took > 30*time.Second {
		t.Errorf("--wait 1500ms took %v", took.Round(time.Millisecond))
	}
}
