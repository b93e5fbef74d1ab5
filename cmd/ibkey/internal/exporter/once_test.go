package exporter

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/internal/fakesysfs"
	"github.com/ibkey/ibkey/internal/ibverbs"
	"github.com/ibkey/ibkey/internal/query"
)

// onceOptions are --once's options over a host and, when set, a fabric.
func onceOptions(stdout, stderr *bytes.Buffer, host func() *query.Host, fab func(context.Context) (*query.Fabric, error)) *Options {
	return &Options{Deps: Deps{Out: stdout, ErrOut: stderr, Ctx: context.Background(), Host: host, OpenFabric: fab},
		Listen: []string{"127.0.0.1:0"}, MaxConnections: 1, Once: true,
		Interval: time.Minute, TableInterval: time.Minute, SweepInterval: time.Minute}
}

// TestOnceHostNotRead: --once exits 4 when something was not read, as every host
// command does (query.NotRead: a device, port, table, entry or interface), and names it
// on stderr; the metrics are printed all the same. Before, only a device not read made
// it exit 4: a P_Key entry or a whole table not read exited 0. So do the counters its
// metrics name as not read (ibkey_port_unreadable): without --portinfo an InfiniBand
// port's violation counters, which sysfs does not have (watch counters exits 4 for
// them too); before, --once exited 0 beside those series.
func TestOnceHostNotRead(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(h *fakesysfs.Host)
		code int
		want string // on stderr
	}{
		{"read whole", func(h *fakesysfs.Host) { h.Devices[1].Ports[0].Unreadable = nil }, 4,
			"ibkey: pkey_violations, qkey_violations not read on 3 ports: not in sysfs: needs a verbs or MAD source"},
		{"an entry not read", nil, 4, "ibkey: not read: mlx5_1/1: 1 P_Key table entry could not be read (index 3)"},
		{"a table not read", func(h *fakesysfs.Host) {
			h.Devices[1].Ports[0].Unreadable, h.Devices[0].Ports[0].PKeys = nil, []string{}
		}, 4,
			"ibkey: not read: mlx5_0/1: P_Key table not read: pkeys/ is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := fakesysfs.MLX5()
			if tc.edit != nil {
				tc.edit(&h)
			}
			dir := t.TempDir()
			if err := fakesysfs.Write(dir, h); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			err := Run(onceOptions(&stdout, &stderr, func() *query.Host { return &query.Host{Sys: ibverbs.Open(dir)} }, nil))
			if code := cmdutil.ExitCode(err); code != tc.code || !strings.Contains(stderr.String(), tc.want) ||
				tc.name == "read whole" && strings.Contains(stderr.String(), "not read:") || !strings.Contains(stdout.String(), "\nibkey_host_up 1\n") {
				t.Errorf("exit %d (%v), want %d and %q on stderr\n%s", code, err, tc.code, tc.want, stderr.String())
			}
		})
	}
}
