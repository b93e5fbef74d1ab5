package job_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fakesysfs"
	"github.com/ibkey/ibkey/internal/ibverbs"
	"github.com/ibkey/ibkey/internal/job"
	"github.com/ibkey/ibkey/internal/query"
)

// fixtureHost writes a one-HCA host whose mlx5_0/1 holds table and loads its ports.
func fixtureHost(t *testing.T, name string, guid uint64, table []string, unreadable ...int) []*job.Port {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	p := fakesysfs.Port{Num: 1, State: "4: ACTIVE", PhysState: "5: LinkUp", LID: "0x5", SMLID: "0x1",
		LMC: "0", Rate: "100 Gb/sec (4X EDR)", LinkLayer: "InfiniBand", GIDs: []string{fakesysfs.GID0(guid)},
		PKeys: fakesysfs.Table(16, table...), Unreadable: unreadable}
	h := fakesysfs.Host{Devices: []fakesysfs.Device{{Name: "mlx5_0", PCI: "0000:03:00.0", NodeType: "1: CA",
		NodeGUID: fakesysfs.GUID(guid), Ports: []fakesysfs.Port{p}}}}
	if err := fakesysfs.Write(dir, h); err != nil {
		t.Fatal(err)
	}
	ports, unread, closed, err := job.HostPorts(&query.Host{Sys: ibverbs.Open(dir)}, name)
	if err != nil || unread != nil || closed != nil {
		t.Fatal(err, unread, closed)
	}
	return ports
}

func inputs(kv ...string) job.Inputs {
	e := job.Env{}
	for _, s := range kv {
		k, v, _ := strings.Cut(s, "=")
		e[k] = v
	}
	return job.Inputs{Env: e}
}

func lib(t *testing.T, id string) *job.Library {
	l, ok := job.LookupLibrary(id)
	if !ok {
		t.Fatalf("no library %s", id)
	}
	return l
}

func text(r *job.Result) string {
	return strings.Join(append(append(append(append([]string{r.Setting}, r.Findings...), r.Fixes...), r.Notes...), r.Unchecked...), "\n")
}

// Two hosts where OpenSM put the same partitions at different indexes (it keeps a
// key's index across reconfigurations and appends new keys after the highest used
// index, so hosts joined at different times differ).
func TestHostsWhereTheIndexDiffers(t *testing.T) {
	a := fixtureHost(t, "hostA", 0x0002c90300000100, []string{"0xffff", "0x8001", "0x8002"})
	b := fixtureHost(t, "hostB", 0x0002c90300000200, []string{"0xffff", "0x0000", "0x8002", "0x8001"})
	ports := append(append([]*job.Port{}, a...), b...)

	r := job.Resolve([]*job.Library{lib(t, "nccl")}, inputs("NCCL_IB_PKEY=1"), ports)[0]
	if r.Verdict != job.DoesNotWork {
		t.Fatalf("NCCL_IB_PKEY=1: %s, want does-not-work\n%s", r.Verdict, text(r))
	}
	for _, want := range []string{
		"hostB:mlx5_0/1: NCCL_IB_PKEY index 1 holds 0x0000, an empty entry",
		"for partition 0x0001: no single value works; per port: hostA:mlx5_0/1: NCCL_IB_PKEY=1, hostB:mlx5_0/1: NCCL_IB_PKEY=3",
		"for partition 0x0002: NCCL_IB_PKEY=2 everywhere",
	} {
		if !strings.Contains(text(r), want) {
			t.Errorf("missing %q in:\n%s", want, text(r))
		}
	}

	r = job.Resolve([]*job.Library{lib(t, "nccl")}, inputs("NCCL_IB_PKEY=2"), ports)[0]
	if r.Verdict != job.Works {
		t.Errorf("NCCL_IB_PKEY=2 (0x8002 on both): %s\n%s", r.Verdict, text(r))
	}
	// A value-based library finds the key wherever it sits.
	r = job.Resolve([]*job.Library{lib(t, "ucx")}, inputs("UCX_IB_PKEY=0x1"), ports)[0]
	if r.Verdict != job.Works {
		t.Errorf("UCX_IB_PKEY=0x1: %s\n%s", r.Verdict, text(r))
	}

	// The inverse.
	for _, w := range job.WantPartition([]*job.Library{lib(t, "nccl"), lib(t, "ucx"), lib(t, "gasnet")}, inputs(), 0x0001, ports) {
		want := map[string]string{
			"nccl":   "no single value works; per port: hostA:mlx5_0/1: NCCL_IB_PKEY=1, hostB:mlx5_0/1: NCCL_IB_PKEY=3",
			"ucx":    "UCX_IB_PKEY=0x0001 everywhere",
			"gasnet": "",
		}[w.Library.ID]
		if w.Library.ID == "gasnet" {
			// GASNet refuses key 1 (get_pkey: the key must be 2..0x7fff).
			if w.Verdict != job.DoesNotWork {
				t.Errorf("gasnet, partition 0x0001: %s, want does-not-work", w.Verdict)
			}
			continue
		}
		if w.Verdict != job.Works || w.Summary() != want {
			t.Errorf("%s: %s %q, want works %q", w.Library.ID, w.Verdict, w.Summary(), want)
		}
	}
}

// Limited members on every host cannot talk, even in the same partition.
func TestHostsAllLimited(t *testing.T) {
	a := fixtureHost(t, "hostA", 0x0002c90300000100, []string{"0xffff", "0x0001"})
	b := fixtureHost(t, "hostB", 0x0002c90300000200, []string{"0xffff", "0x0001"})
	ports := append(a, b...)
	r := job.Resolve([]*job.Library{lib(t, "nccl")}, inputs("NCCL_IB_PKEY=1"), ports)[0]
	if r.Verdict != job.DoesNotWork || !strings.Contains(text(r), "limited members of partition 0x0001 cannot talk to each other") {
		t.Errorf("%s\n%s", r.Verdict, text(r))
	}
	if !strings.Contains(text(r), "for partition 0x7fff: NCCL_IB_PKEY=0 everywhere") {
		t.Errorf("no fix to the default partition:\n%s", text(r))
	}
	w := job.WantPartition([]*job.Library{lib(t, "ucx")}, inputs(), 0x0001, ports)[0]
	if w.Verdict != job.DoesNotWork {
		t.Errorf("want 0x0001 with limited members only: %s", w.Verdict)
	}
	// One limited host with full peers works.
	c := fixtureHost(t, "hostC", 0x0002c90300000300, []string{"0xffff", "0x8001"})
	r = job.Resolve([]*job.Library{lib(t, "nccl")}, inputs("NCCL_IB_PKEY=1"), append(a, c...))[0]
	if r.Verdict != job.Works {
		t.Errorf("limited + full: %s\n%s", r.Verdict, text(r))
	}
}

// An entry that could not be read is never an answer: not checked.
func TestHostsUnreadable(t *testing.T) {
	a := fixtureHost(t, "hostA", 0x0002c90300000100, []string{"0xffff", "0x8001"})
	b := fixtureHost(t, "hostB", 0x0002c90300000200, []string{"0xffff", "0x8001"}, 1)
	r := job.Resolve([]*job.Library{lib(t, "nccl")}, inputs("NCCL_IB_PKEY=1"), append(a, b...))[0]
	if r.Verdict != job.Incomplete || !strings.Contains(text(r), "hostB:mlx5_0/1: entry 1 of hostB:mlx5_0/1 could not be read") {
		t.Errorf("%s\n%s", r.Verdict, text(r))
	}
	r = job.Resolve([]*job.Library{lib(t, "nccl")}, inputs("NCCL_IB_PKEY=0"), append(a, b...))[0]
	if r.Verdict != job.Works {
		t.Errorf("index 0 was read on both: %s\n%s", r.Verdict, text(r))
	}
}

// The committed mlx5 fixture: NCCL uses every ACTIVE port (IB and RoCE); index 3 is a
// hole on mlx5_0/1 and unreadable on mlx5_1/1: the hole decides (a definite no).
func TestMLX5Fixture(t *testing.T) {
	ports, unread, closed, err := job.HostPorts(&query.Host{Sys: ibverbs.Open("../../testdata/sysfs/mlx5")}, "")
	if err != nil || unread != nil || closed != nil {
		t.Fatal(err, unread, closed)
	}
	r := job.Resolve([]*job.Library{lib(t, "nccl")}, inputs("NCCL_IB_PKEY=3"), ports)[0]
	if r.Verdict != job.DoesNotWork {
		t.Fatalf("%s\n%s", r.Verdict, text(r))
	}
	for _, want := range []string{"mlx5_0/1: NCCL_IB_PKEY index 3 holds 0x0000", "mlx5_1/1: entry 3 of mlx5_1/1 could not be read", "mlx5_2/1: index 3 is outside the 1-entry table"} {
		if !strings.Contains(text(r), want) {
			t.Errorf("missing %q in:\n%s", want, text(r))
		}
	}
	used := map[string]bool{}
	for _, pr := range r.Ports {
		used[pr.Port.Label()] = pr.Used
	}
	if !used["mlx5_0/1"] || !used["mlx5_2/1"] || used["mlx5_1/2"] {
		t.Errorf("NCCL uses the ACTIVE ports (link layer InfiniBand or Ethernet): %v", used)
	}
	// UCX on mlx5_1/1: only limited entries, and entry 3 unreadable: it might hold a
	// full entry UCX would prefer, so the answer is open.
	r = job.Resolve([]*job.Library{lib(t, "ucx")}, inputs("UCX_NET_DEVICES=mlx5_1:1"), ports)[0]
	if r.Verdict != job.Incomplete || !strings.Contains(text(r), "entry 3 of mlx5_1/1 could not be read") {
		t.Errorf("%s\n%s", r.Verdict, text(r))
	}
	// On mlx5_0/1 UCX takes index 0, 0xffff (the first full entry).
	r = job.Resolve([]*job.Library{lib(t, "ucx")}, inputs("UCX_NET_DEVICES=mlx5_0:1"), ports)[0]
	for _, pr := range r.Ports {
		if pr.Used && (pr.Port.Label() != "mlx5_0/1" || pr.Pick.PKey != check.PKey(0xffff) || pr.Pick.Index != 0) {
			t.Errorf("UCX on %s: %+v", pr.Port.Label(), pr.Pick)
		}
	}
}

// In a pod, sysfs (the kernel's shared RDMA namespace mode) lists every device of the
// node, but libibverbs lists only those whose uverbs device exists in /dev/infiniband
// (rdma-core libibverbs/init.c, try_access_device), which the device plugin chose:
// the other devices' ports are not the job's, and are named as left out. The kernel
// lab shows the rule (TestPodViewOnKernel: ibv_devices lists nothing without the
// uverbs device).
func TestHostPortsLeavesOutUnopenable(t *testing.T) {
	dir := t.TempDir()
	sys := filepath.Join(dir, "sys")
	h := fakesysfs.MLX5() // mlx5_0 (IB), mlx5_1 (IB), mlx5_2 (RoCE), irdma0 (iWARP: no uverbs entry here)
	if err := fakesysfs.Write(sys, h); err != nil {
		t.Fatal(err)
	}
	devs := filepath.Join(dir, "dev")
	for i, d := range []string{"mlx5_0", "mlx5_1", "mlx5_2"} {
		uv := filepath.Join(sys, "class/infiniband_verbs", "uverbs"+strconv.Itoa(i))
		if err := os.MkdirAll(uv, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(uv, "ibdev"), []byte(d+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(devs, 0o755); err != nil {
		t.Fatal(err)
	}
	mount := func(names ...string) {
		t.Helper()
		ents, _ := os.ReadDir(devs)
		for _, e := range ents {
			os.Remove(filepath.Join(devs, e.Name()))
		}
		for _, n := range names {
			if err := os.WriteFile(filepath.Join(devs, n), nil, 0o666); err != nil {
				t.Fatal(err)
			}
		}
	}
	host := &query.Host{Sys: ibverbs.Open(sys), CharDevs: devs}
	// The device plugin mounted mlx5_1's uverbs1 only.
	mount("uverbs1", "umad1", "rdma_cm")
	ports, _, closed, err := job.HostPorts(host, "")
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, p := range ports {
		labels = append(labels, p.Label())
	}
	if got := strings.Join(labels, " "); got != "mlx5_1/1 mlx5_1/2" {
		t.Errorf("ports %q, want mlx5_1's only", got)
	}
	if len(closed) != 3 || closed[0] != (job.LeftOut{Device: "irdma0", Why: "libibverbs does not list it here: no uverbs device names it in " + sys + "/class/infiniband_verbs"}) ||
		closed[1].Device != "mlx5_0" || !strings.HasPrefix(closed[1].Why, "libibverbs does not list it here: "+devs+"/uverbs0: does not exist") ||
		closed[2].Device != "mlx5_2" {
		t.Errorf("closed %q", closed)
	}
	// None mounted: nothing here a library can use, said as such (exit 3).
	mount()
	_, _, _, err = job.HostPorts(host, "")
	var env *query.EnvError
	if !errors.As(err, &env) || !strings.Contains(err.Error(), "no RDMA device here can be opened by a library: irdma0: ") || !strings.Contains(err.Error(), "; mlx5_1: ") {
		t.Errorf("no uverbs device: %v", err)
	}
	// An entry whose ibdev cannot be read (here a directory): which device it is, is
	// not known, and libibverbs finds it over netlink all the same. The devices no
	// readable entry names are not checked, never left out; the others are judged.
	ibdev1 := filepath.Join(sys, "class/infiniband_verbs/uverbs1/ibdev")
	if err := os.Remove(ibdev1); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(ibdev1, 0o755); err != nil {
		t.Fatal(err)
	}
	mount("uverbs0")
	ports, unread, closed, err := job.HostPorts(host, "")
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, p := range ports {
		kept = append(kept, p.Label())
	}
	if got := strings.Join(kept, " "); got != "irdma0/1 mlx5_0/1 mlx5_1/1 mlx5_1/2" {
		t.Errorf("unreadable ibdev: ports %q, want all but mlx5_2's (irdma0 may be uverbs1's too)", got)
	}
	if len(unread) != 2 || unread[0].Device != "irdma0" || unread[1].Device != "mlx5_1" || unread[1].Port != -1 ||
		!strings.HasPrefix(unread[1].Why, "whether libibverbs lists it here was not checked: "+ibdev1+": ") {
		t.Errorf("unreadable ibdev: unread %+v", unread)
	}
	if len(closed) != 1 || closed[0].Device != "mlx5_2" {
		t.Errorf("unreadable ibdev: closed %q, want mlx5_2 (its uverbs2 not mounted)", closed)
	}
	// A library that could choose the device not checked is not checked (exit 4);
	// one kept off it by its settings is judged on the others.
	for _, c := range []struct {
		env  job.Env
		want string
	}{{job.Env{}, "UCX"}, {job.Env{"UCX_NET_DEVICES": "mlx5_0:1"}, ""}} {
		ws := job.Resolve([]*job.Library{&job.UCX}, job.Inputs{Env: c.env, Unread: unread}, ports)
		if got := strings.Join(job.Choosers(ws, unread[1]), ","); got != c.want {
			t.Errorf("unreadable ibdev, %v: %q could choose mlx5_1, want %q", c.env, got, c.want)
		}
	}
	// The class itself unreadable for another reason than its absence (a file here:
	// ENOTDIR): no device is left out, each is not checked.
	verbs := filepath.Join(sys, "class/infiniband_verbs")
	if err := os.RemoveAll(verbs); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(verbs, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ports, unread, closed, err = job.HostPorts(host, "")
	if err != nil || len(closed) != 0 || len(unread) != 4 || len(ports) != 5 {
		t.Errorf("unreadable class: %d ports, unread %+v, closed %q, %v", len(ports), unread, closed, err)
	}
	// Without the uverbs class (ib_uverbs not loaded), libibverbs lists nothing.
	if err := os.RemoveAll(filepath.Join(sys, "class/infiniband_verbs")); err != nil {
		t.Fatal(err)
	}
	mount("uverbs0")
	if _, _, _, err = job.HostPorts(host, ""); !errors.As(err, &env) || !strings.Contains(err.Error(), "ib_uverbs not loaded") {
		t.Errorf("no uverbs class: %v", err)
	}
	// Another machine's tree (CharDevs ""): what a library could open is not known,
	// and every port is the job's, as before.
	ports, _, closed, err = job.HostPorts(&query.Host{Sys: ibverbs.Open(sys)}, "")
	if err != nil || len(ports) == 0 || closed != nil {
		t.Errorf("saved tree: %d ports, closed %q, %v", len(ports), closed, err)
	}
}

// An index beyond a RoCE port's table reaches ibv_modify_qp, and the driver decides:
// the kernel lab's rdma_rxe takes any index and sends 0xffff (testdata/sysfs/rxe is
// that device's tree), mlx5 checks the device's max_pkeys, which sysfs does not show
// (the mlx5 fixture's RoCE port): not checked. On InfiniBand it fails.
func TestIndexBeyondRoCETable(t *testing.T) {
	pick := func(tree, label string) job.Pick {
		t.Helper()
		ports, _, _, err := job.HostPorts(&query.Host{Sys: ibverbs.Open(tree)}, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, pr := range job.Resolve([]*job.Library{&job.NCCL}, job.Inputs{Env: job.Env{"NCCL_IB_PKEY": "200"}}, ports)[0].Ports {
			if pr.Port.Label() == label {
				return pr.Pick
			}
		}
		t.Fatalf("%s: no port %s", tree, label)
		return job.Pick{}
	}
	if p := pick("../../testdata/sysfs/rxe", "rxe0/1"); p.Outcome != job.Uses || p.PKey != check.PKey(0xffff) || p.Index != 200 || len(p.Notes) == 0 || !strings.Contains(p.Notes[0], "rdma_rxe takes any index") {
		t.Errorf("rxe0/1: %+v", p)
	}
	sys := filepath.Join(t.TempDir(), "sys")
	if err := fakesysfs.Write(sys, fakesysfs.MLX5()); err != nil {
		t.Fatal(err)
	}
	if p := pick(sys, "mlx5_2/1"); p.Outcome != job.NotChecked || !strings.Contains(p.Problem, "on RoCE the driver decides") {
		t.Errorf("mlx5_2/1 (RoCE): %+v", p)
	}
	if p := pick(sys, "mlx5_0/1"); p.Outcome != job.Fails {
		t.Errorf("mlx5_0/1 (InfiniBand: 128 entries): %+v", p)
	}
}
