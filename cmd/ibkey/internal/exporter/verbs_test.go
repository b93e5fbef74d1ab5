package exporter

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/internal/fakesysfs"
	"github.com/ibkey/ibkey/internal/ibverbs"
	"github.com/ibkey/ibkey/internal/ibverbs/verbs"
	"github.com/ibkey/ibkey/internal/query"
)

// fakeVerbs is a libibverbs whose ports' bad_pkey_cntr is 10*port+1 and qkey_viol_cntr
// 10*port+2; a device not in it does not exist, one in noAccess cannot be opened. The
// fixture's mlx5_2 and irdma0 are on Ethernet (RoCE, iWARP).
type fakeVerbs struct{ devs, noAccess []string }

type fakeVerbsDev struct{ linkLayer uint8 }

func (f fakeVerbs) OpenDevice(name string) (query.VerbsDevice, error) {
	switch {
	case slices.Contains(f.noAccess, name):
		return nil, &verbs.CallError{Call: "ibv_open_device " + name, Errno: syscall.EACCES}
	case !slices.Contains(f.devs, name):
		return nil, fmt.Errorf("verbs: %s: %w", name, verbs.ErrNoDevice)
	}
	if name == "mlx5_2" || name == "irdma0" {
		return fakeVerbsDev{2}, nil
	}
	return fakeVerbsDev{1}, nil
}

func (fakeVerbs) Close() error { return nil }

func (d fakeVerbsDev) QueryPort(port int) (verbs.PortAttr, error) {
	return verbs.PortAttr{State: 4, GIDTblLen: 256, BadPKeyCntr: uint32(10*port + 1), QKeyViolCntr: uint32(10*port + 2), LinkLayer: d.linkLayer}, nil
}

func (fakeVerbsDev) QueryDevice() (verbs.DeviceAttr, error) {
	return verbs.DeviceAttr{}, &verbs.CallError{Call: "ibv_query_device", Errno: syscall.EOPNOTSUPP}
}

func (fakeVerbsDev) Close() error { return nil }

// TestHostVerbsViolations: in host mode the P_Key/Q_Key violation counters come from
// verbs, as 'ibkey watch counters' reads them (any user who may open the uverbs
// device, no root, no MADs); before, host mode left them unreadable without
// --portinfo, and --once exited 4 on every InfiniBand host. A device verbs cannot
// open is named with the reason (unreadable, exit 4), never 0; on the RoCE port of an
// mlx5 only the Q_Key violations are counted (the P_Key ones are unavailable), on the
// iWARP port neither (query.VerbsCounters).
func TestHostVerbsViolations(t *testing.T) {
	h := fakesysfs.MLX5()
	h.Devices[1].Ports[0].Unreadable = nil
	dir := t.TempDir()
	if err := fakesysfs.Write(dir, h); err != nil {
		t.Fatal(err)
	}
	host := func() *query.Host { return &query.Host{Sys: ibverbs.Open(dir)} }
	for _, tc := range []struct {
		name   string
		lib    fakeVerbs
		code   int
		stdout []string
		stderr string
	}{
		{"every device", fakeVerbs{devs: []string{"mlx5_0", "mlx5_1", "mlx5_2", "irdma0"}}, 0, []string{
			`ibkey_port_pkey_violations{device="mlx5_0",port="1",source="verbs"} 11`,
			`ibkey_port_qkey_violations{device="mlx5_1",port="2",source="verbs"} 22`,
			`ibkey_port_qkey_violations{device="mlx5_2",port="1",source="verbs"} 12`,
			`ibkey_port_unavailable{counter="pkey_violations",device="mlx5_2",port="1",reason="mlx5 does not count P_Key violations on RoCE: ibv_query_port reports 0 (mlx5_query_port_roce)"} 1`,
			`ibkey_port_unavailable{counter="qkey_violations",device="irdma0",port="1",reason="iWARP has no P_Keys or Q_Keys: ibv_query_port reports 0"} 1`,
		}, ""},
		{"a device it may not open", fakeVerbs{devs: []string{"mlx5_0", "mlx5_1", "mlx5_2", "irdma0"}, noAccess: []string{"mlx5_1"}}, 4, []string{
			`ibkey_port_pkey_violations{device="mlx5_0",port="1",source="verbs"} 11`,
			`ibkey_port_unreadable{counter="pkey_violations",device="mlx5_1",port="2",reason="verbs: ibv_open_device mlx5_1: permission denied",source="verbs"} 1`,
		}, "pkey_violations, qkey_violations not read on 2 ports: verbs: ibv_open_device mlx5_1: permission denied"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			o := onceOptions(&stdout, &stderr, host, nil)
			o.Verbs = func(*query.Host) *query.VerbsCounters {
				v := query.NewVerbsCounters(tc.lib, nil)
				v.Driver = func(dev string) (string, bool) { return "mlx5_core", dev == "irdma0" }
				return v
			}
			err := Run(o)
			code := cmdutil.ExitCode(err)
			ok := code == tc.code && strings.Contains(stderr.String(), tc.stderr) && (tc.stderr != "" || stderr.Len() == 0)
			for _, l := range tc.stdout {
				ok = ok && strings.Contains(stdout.String(), "\n"+l+"\n")
			}
			if !ok {
				t.Errorf("exit %d (%v), want %d\nstdout:\n%s\nstderr:\n%s", code, err, tc.code, stdout.String(), stderr.String())
			}
		})
	}
}
