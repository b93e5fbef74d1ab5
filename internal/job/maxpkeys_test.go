package job_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/ibkey/ibkey/internal/fakesysfs"
	"github.com/ibkey/ibkey/internal/ibverbs"
	"github.com/ibkey/ibkey/internal/ibverbs/verbs"
	"github.com/ibkey/ibkey/internal/job"
	"github.com/ibkey/ibkey/internal/query"
)

// fakeLib is a libibverbs whose devices answer ibv_query_device with max_pkeys; a
// device not in it cannot be opened (EACCES, as a uverbs device without access).
type fakeLib map[string]uint16

type fakeDev uint16

func (f fakeLib) OpenDevice(name string) (query.VerbsDevice, error) {
	m, ok := f[name]
	if !ok {
		return nil, &verbs.CallError{Call: "ibv_open_device " + name, Errno: syscall.EACCES}
	}
	return fakeDev(m), nil
}

func (fakeLib) Close() error { return nil }

func (fakeDev) QueryPort(int) (verbs.PortAttr, error) {
	return verbs.PortAttr{}, fmt.Errorf("not in this fake")
}

func (d fakeDev) QueryDevice() (verbs.DeviceAttr, error) {
	return verbs.DeviceAttr{MaxPKeys: uint16(d), PhysPortCnt: 1}, nil
}

func (fakeDev) Close() error { return nil }

// perftestOn is perftest's pick on port label of ports, with command line line.
func perftestOn(t *testing.T, ports []*job.Port, line, label string) job.Pick {
	t.Helper()
	a := job.ParsePerftestArgs(line)
	for _, pr := range job.Resolve([]*job.Library{&job.Perftest}, job.Inputs{Env: job.Env{}, Perftest: &a}, ports)[0].Ports {
		if pr.Port.Label() == label && pr.Used {
			return pr.Pick
		}
	}
	t.Fatalf("%s: perftest does not use %s", line, label)
	return job.Pick{}
}

// TestMaxPKeysNotRead: a tree that is not this machine's /sys (the kernel lab's
// rxe0, saved) has no max_pkeys to read, so perftest's index beyond the table is
// not checked there, naming what was not read; InfiniBand's rule (max_pkeys is the
// table's size) and rdma_cm's 0xffff on RoCE need no max_pkeys.
func TestMaxPKeysNotRead(t *testing.T) {
	ports, _, _, err := job.HostPorts(&query.Host{Sys: ibverbs.Open("../../testdata/sysfs/rxe")}, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ports {
		if p.MaxPKeysRead || !strings.Contains(p.MaxPKeysMissing, "max_pkeys not read: ibv_query_device asks the running kernel") {
			t.Errorf("%s: max_pkeys read %v (%d), missing %q", p.Label(), p.MaxPKeysRead, p.MaxPKeys, p.MaxPKeysMissing)
		}
	}
	for _, line := range []string{"ib_send_bw --pkey_index=1", "ib_send_bw --pkey_index=64"} {
		if pk := perftestOn(t, ports, line, "rxe0/1"); pk.Outcome != job.NotChecked || !strings.Contains(pk.Problem, "max_pkeys not read: ibv_query_device asks the running kernel") {
			t.Errorf("%s: %s %q, want not checked: max_pkeys not read", line, pk.Outcome, pk.Problem)
		}
	}
	if pk := perftestOn(t, ports, "ib_send_bw -R --pkey_index=5", "rxe0/1"); pk.Outcome != job.Uses || pk.Index != 0 || pk.PKey != 0xffff {
		t.Errorf("-R on rxe0/1: %s index %d %s %q, want rdma_cm's 0xffff at index 0", pk.Outcome, pk.Index, pk.PKey, pk.Problem)
	}
}

// TestMaxPKeysRead: on this machine (CharDevs set) max_pkeys is read per device
// through libibverbs and decides perftest's pick; a device that cannot be opened and
// the static build leave it not checked with the reason.
func TestMaxPKeysRead(t *testing.T) {
	dir := t.TempDir()
	sys := filepath.Join(dir, "sys")
	h := fakesysfs.MLX5() // mlx5_0 (IB, 128 entries), mlx5_1 (IB), mlx5_2 (RoCE), irdma0 (iWARP)
	h.Devices[2].Driver = "mlx5_core"
	if err := fakesysfs.Write(sys, h); err != nil {
		t.Fatal(err)
	}
	devs := filepath.Join(dir, "dev")
	if err := os.MkdirAll(devs, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, d := range []string{"mlx5_0", "mlx5_1", "mlx5_2"} {
		uv := filepath.Join(sys, "class/infiniband_verbs", "uverbs"+strconv.Itoa(i))
		if err := os.MkdirAll(uv, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(uv, "ibdev"), []byte(d+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(devs, "uverbs"+strconv.Itoa(i)), nil, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	lib := fakeLib{"mlx5_0": 64, "mlx5_2": 128} // mlx5_1 cannot be opened
	host := &query.Host{Sys: ibverbs.Open(sys), CharDevs: devs, Verbs: func() (query.VerbsLib, error) { return lib, nil }}
	ports, _, _, err := job.HostPorts(host, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		line, port string
		outcome    job.Outcome
		index      int
		text       string
	}{
		// mlx5_0's table has 128 entries and max_pkeys reads 64: 100 is changed to 0.
		{"ib_send_bw -d mlx5_0 --pkey_index=100", "mlx5_0/1", job.Uses, 0, "above mlx5_0's max_pkeys-1 (63)"},
		// mlx5_1 not opened: InfiniBand's rule, the table's size.
		{"ib_send_bw -d mlx5_1 --pkey_index=200", "mlx5_1/1", job.Uses, 0, "beyond the table"},
		// RoCE on mlx5: below max_pkeys the QP is made, the key sent is not known; at
		// or above it, EINVAL.
		{"ib_send_bw -d mlx5_2 --pkey_index=5", "mlx5_2/1", job.NotChecked, 5, "below the device's max_pkeys (128)"},
		{"ib_send_bw -d mlx5_2 --pkey_index=128", "mlx5_2/1", job.Uses, 0, "above mlx5_core's max_pkeys-1 (127)"},
		{"ib_send_bw -d mlx5_2 --pkey_index=-1", "mlx5_2/1", job.Fails, 65535, "EINVAL"},
		{"ib_send_bw -d mlx5_2 -R", "mlx5_2/1", job.Uses, 0, "rdma_cm uses P_Key 0xffff"},
	} {
		pk := perftestOn(t, ports, c.line, c.port)
		if pk.Outcome != c.outcome || pk.Index != c.index || !strings.Contains(pk.Problem+strings.Join(pk.Notes, "; "), c.text) {
			t.Errorf("%s: %s index %d %q %q, want %s index %d (%s)", c.line, pk.Outcome, pk.Index, pk.Problem, pk.Notes, c.outcome, c.index, c.text)
		}
	}
	for _, p := range ports {
		if p.Device == "mlx5_1" && (p.MaxPKeysRead || p.MaxPKeysMissing != "max_pkeys not read: verbs: ibv_open_device mlx5_1: permission denied") {
			t.Errorf("mlx5_1: read %v, missing %q", p.MaxPKeysRead, p.MaxPKeysMissing)
		}
	}
	// The static build: nothing read, and the RoCE answers that need it not checked.
	host = &query.Host{Sys: ibverbs.Open(sys), CharDevs: devs}
	host.Verbs = func() (query.VerbsLib, error) {
		return nil, &verbs.UnavailableError{Reason: "this ibkey is the static flavour"}
	}
	if !verbs.Available { // go test -tags ibkey_static: the real loader says so
		host.Verbs = query.OpenVerbs
	}
	if ports, _, _, err = job.HostPorts(host, ""); err != nil {
		t.Fatal(err)
	}
	if pk := perftestOn(t, ports, "ib_send_bw -d mlx5_2 --pkey_index=-1", "mlx5_2/1"); pk.Outcome != job.NotChecked || !strings.Contains(pk.Problem, "max_pkeys not read: verbs unavailable: this ibkey is the static flavour") {
		t.Errorf("static: %s %q, want not checked naming the static flavour", pk.Outcome, pk.Problem)
	}
}
