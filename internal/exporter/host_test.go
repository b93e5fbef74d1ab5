package exporter

import (
	"bytes"
	"cmp"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/ibkey/ibkey/internal/fakesysfs"
	"github.com/ibkey/ibkey/internal/ibverbs"
	"github.com/ibkey/ibkey/internal/query"
)

// writeHost writes a fixture tree and returns its directory.
func writeHost(t testing.TB, h fakesysfs.Host) string {
	t.Helper()
	dir := t.TempDir()
	if err := fakesysfs.Write(dir, h); err != nil {
		t.Fatal(err)
	}
	return dir
}

// fakeClock is a settable clock.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func newHostCollector(dir string, clock *fakeClock, violations query.CounterSource) *HostCollector {
	return NewHostCollector(HostOptions{Host: &query.Host{Sys: ibverbs.Open(dir)}, TableMaxAge: time.Minute,
		Violations: violations, Now: clock.now})
}

func counterPath(dir, dev string, port, name string) string {
	return filepath.Join(dir, "class", "infiniband", dev, "ports", port, "counters", name)
}

// rewrite replaces a read-only fixture file.
func rewrite(t testing.TB, path, value string) {
	t.Helper()
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(value+"\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func TestHostMetricsOnFixture(t *testing.T) {
	dir := writeHost(t, fakesysfs.MLX5())
	c := newHostCollector(dir, &fakeClock{time.Unix(1000, 0)}, nil)
	const want = `
# HELP ibkey_ipoib_interface_info An IPoIB interface (value 1) on this port: its P_Key (pkey file, always full), the table index the kernel uses and the membership it really runs with (full, limited; none: every entry read and none holds the key; unknown: the table, or entries that may hold the key, could not be read).
# TYPE ibkey_ipoib_interface_info gauge
ibkey_ipoib_interface_info{device="mlx5_0",index="",interface="ib0.8004",membership="none",parent="ib0",pkey="0x8004",port="1"} 1
ibkey_ipoib_interface_info{device="mlx5_0",index="0",interface="ib0",membership="full",parent="",pkey="0xffff",port="1"} 1
ibkey_ipoib_interface_info{device="mlx5_0",index="1",interface="ib0.8001",membership="full",parent="ib0",pkey="0x8001",port="1"} 1
ibkey_ipoib_interface_info{device="mlx5_0",index="2",interface="ib0.8002",membership="limited",parent="ib0",pkey="0x8002",port="1"} 1
ibkey_ipoib_interface_info{device="mlx5_1",index="",interface="ib1",membership="unknown",parent="",pkey="0xffff",port="1"} 1
# HELP ibkey_ipoib_key_present 1 when the interface's partition is in its port's P_Key table, 0 when every entry was read and none holds it (the interface cannot come up). Absent when not known: the table, or entries that may hold the key, could not be read.
# TYPE ibkey_ipoib_key_present gauge
ibkey_ipoib_key_present{device="mlx5_0",interface="ib0",pkey="0xffff",port="1"} 1
ibkey_ipoib_key_present{device="mlx5_0",interface="ib0.8001",pkey="0x8001",port="1"} 1
ibkey_ipoib_key_present{device="mlx5_0",interface="ib0.8002",pkey="0x8002",port="1"} 1
ibkey_ipoib_key_present{device="mlx5_0",interface="ib0.8004",pkey="0x8004",port="1"} 0
ibkey_ipoib_key_present{device="mlx5_1",interface="ib1",pkey="0xffff",port="1"} 1
# HELP ibkey_port_rcv_constraint_errors PortRcvConstraintErrors: received packets dropped by partition enforcement (8-bit, saturates at 255; a gauge).
# TYPE ibkey_port_rcv_constraint_errors gauge
ibkey_port_rcv_constraint_errors{device="mlx5_0",port="1",source="sysfs"} 17
ibkey_port_rcv_constraint_errors{device="mlx5_1",port="1",source="sysfs"} 255
ibkey_port_rcv_constraint_errors{device="mlx5_1",port="2",source="sysfs"} 0
# HELP ibkey_pkey_table_valid_entries Entries holding a valid P_Key (15-bit key not 0), of a table whose every entry was read: absent when ibkey_pkey_table_unreadable_entries is above 0 (the entries read are ibkey_pkey_entry_info).
# TYPE ibkey_pkey_table_valid_entries gauge
ibkey_pkey_table_valid_entries{device="mlx5_0",port="1"} 6
ibkey_pkey_table_valid_entries{device="mlx5_1",port="2"} 2
ibkey_pkey_table_valid_entries{device="mlx5_2",port="1"} 1
# HELP ibkey_pkey_table_unreadable_entries Entries that could not be read (0: the table was read whole). What they hold is not known, so ibkey_pkey_table_valid_entries is then absent.
# TYPE ibkey_pkey_table_unreadable_entries gauge
ibkey_pkey_table_unreadable_entries{device="mlx5_0",port="1"} 0
ibkey_pkey_table_unreadable_entries{device="mlx5_1",port="1"} 1
ibkey_pkey_table_unreadable_entries{device="mlx5_1",port="2"} 0
ibkey_pkey_table_unreadable_entries{device="mlx5_2",port="1"} 0
# HELP ibkey_pkey_table_unavailable The port has no P_Key table (value 1), with the reason: an iWARP device, for which the kernel writes no ports/N/pkeys/ (P_Keys do not apply). A table that exists and was not read is ibkey_pkey_table_unreadable, never this.
# TYPE ibkey_pkey_table_unavailable gauge
ibkey_pkey_table_unavailable{device="irdma0",port="1",reason="no P_Key table: the port has no pkeys/ directory (iWARP devices have none: P_Keys do not apply)"} 1
# HELP ibkey_port_state_id Port state from ports/N/state: 1 DOWN, 2 INIT, 3 ARMED, 4 ACTIVE, 5 ACTIVE_DEFER.
# TYPE ibkey_port_state_id gauge
ibkey_port_state_id{device="irdma0",port="1"} 4
ibkey_port_state_id{device="mlx5_0",port="1"} 4
ibkey_port_state_id{device="mlx5_1",port="1"} 4
ibkey_port_state_id{device="mlx5_1",port="2"} 1
ibkey_port_state_id{device="mlx5_2",port="1"} 4
`
	names := []string{"ibkey_ipoib_interface_info", "ibkey_ipoib_key_present", "ibkey_port_rcv_constraint_errors",
		"ibkey_pkey_table_valid_entries", "ibkey_pkey_table_unreadable_entries", "ibkey_pkey_table_unavailable", "ibkey_pkey_table_unreadable", "ibkey_port_state_id"}
	reg, err := NewRegistry(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), names...); err != nil {
		t.Error(err)
	}
	// Entries: the valid ones of mlx5_0/1 with their membership; 0x8000 (key 0) and
	// the holes are not entries.
	const entries = `
# HELP ibkey_pkey_entry_info One valid P_Key table entry (value 1): index, P_Key, 15-bit key and membership (full or limited).
# TYPE ibkey_pkey_entry_info gauge
ibkey_pkey_entry_info{device="mlx5_0",index="0",key="0x7fff",membership="full",pkey="0xffff",port="1"} 1
ibkey_pkey_entry_info{device="mlx5_0",index="1",key="0x0001",membership="full",pkey="0x8001",port="1"} 1
ibkey_pkey_entry_info{device="mlx5_0",index="2",key="0x0002",membership="limited",pkey="0x0002",port="1"} 1
ibkey_pkey_entry_info{device="mlx5_0",index="4",key="0x0005",membership="full",pkey="0x8005",port="1"} 1
ibkey_pkey_entry_info{device="mlx5_0",index="5",key="0x0005",membership="limited",pkey="0x0005",port="1"} 1
ibkey_pkey_entry_info{device="mlx5_0",index="8",key="0x0010",membership="full",pkey="0x8010",port="1"} 1
`
	got := filterDevice(t, reg, "ibkey_pkey_entry_info", "mlx5_0")
	if err := testutil.GatherAndCompare(got, strings.NewReader(entries), "ibkey_pkey_entry_info"); err != nil {
		t.Error(err)
	}
}

// filterDevice gathers g and keeps name's metrics of one device.
func filterDevice(t *testing.T, g prometheus.Gatherer, name, dev string) prometheus.Gatherer {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var keep []*dto.MetricFamily
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		f := &dto.MetricFamily{Name: mf.Name, Help: mf.Help, Type: mf.Type}
		for _, m := range mf.Metric {
			for _, l := range m.GetLabel() {
				if l.GetName() == "device" && l.GetValue() == dev {
					f.Metric = append(f.Metric, m)
				}
			}
		}
		keep = append(keep, f)
	}
	return prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) { return keep, nil })
}

// TestHostCountersUnreadableAndSaturated: a counter that cannot be read is a metric
// with the reason, never a 0 value; 255 is saturated; a pluggable violations source is
// used, with its name as the source label.
func TestHostCountersUnreadableAndSaturated(t *testing.T) {
	h := fakesysfs.MLX5()
	dir := writeHost(t, h)
	// mlx5_0/1's rcv counter fails to read (ELOOP), as some devices fail with EIO.
	p := counterPath(dir, "mlx5_0", "1", "port_rcv_constraint_errors")
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("port_rcv_constraint_errors", p); err != nil {
		t.Fatal(err)
	}
	src := &fakeSource{name: "verbs", values: map[string]uint64{query.PKeyViolations: 65535, query.QKeyViolations: 4}}
	c := newHostCollector(dir, &fakeClock{time.Unix(1000, 0)}, src)
	text := gatherText(t, c)
	for _, want := range []string{
		`ibkey_port_unreadable{counter="port_rcv_constraint_errors",device="mlx5_0",port="1",reason="read failed: `,
		`ibkey_port_unavailable{counter="port_rcv_constraint_errors",device="mlx5_2",port="1",reason="no PMA counters (counters/: does not exist)"} 1`,
		`ibkey_port_saturated{counter="port_rcv_constraint_errors",device="mlx5_1",port="1"} 1`,
		`ibkey_port_saturated{counter="port_xmit_constraint_errors",device="mlx5_1",port="1"} 0`,
		`ibkey_port_pkey_violations{device="mlx5_0",port="1",source="verbs"} 65535`,
		`ibkey_port_saturated{counter="pkey_violations",device="mlx5_0",port="1"} 1`,
		`ibkey_port_qkey_violations{device="mlx5_0",port="1",source="verbs"} 4`,
		`ibkey_port_saturated{counter="qkey_violations",device="mlx5_0",port="1"} 0`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %s", want)
		}
	}
	for _, never := range []string{
		`ibkey_port_rcv_constraint_errors{device="mlx5_0"`,
		`ibkey_port_rcv_constraint_errors{device="mlx5_2"`,
		`ibkey_port_saturated{counter="port_rcv_constraint_errors",device="mlx5_0"`,
		`_total`,
	} {
		if strings.Contains(text, never) {
			t.Errorf("unexpected %s in\n%s", never, text)
		}
	}
	if src.calls == 0 {
		t.Error("the violations source was never read")
	}
}

// TestHostAbsentCountersUnavailable: a counter the port does not have by nature (a
// port without PortInfo, as a source says; an iWARP port's P_Key and Q_Key
// violations; a device without counters/) is ibkey_port_unavailable, never
// ibkey_port_unreadable, whichever source says so; a counter that exists and was not
// read (an InfiniBand port's violations without a source, a RoCE port's that only
// verbs read, a counters/ file that fails) stays unreadable.
func TestHostAbsentCountersUnavailable(t *testing.T) {
	dir := writeHost(t, fakesysfs.MLX5())
	p := counterPath(dir, "mlx5_0", "1", "port_xmit_constraint_errors")
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("port_xmit_constraint_errors", p); err != nil {
		t.Fatal(err)
	}
	roce := query.PortRef{Device: "mlx5_2", Port: 1}
	const why = "no PortInfo: the Ethernet link layer has no QP0 (no SMPs)"
	const iwarp = "iWARP has no P_Keys or Q_Keys: ibv_query_port reports 0"
	for _, tc := range []struct {
		name string
		src  query.CounterSource
		ib   string // mlx5_0/1's pkey_violations
		// dev's P_Key and Q_Key violations are unavailable for why; roce's are
		// unreadable for unread ("": unavailable too)
		dev, why, unread string
	}{
		// No source: the iWARP device has neither counter; the RoCE port's exist where
		// its driver counts them (verbs reads them), and the fixture does not say it.
		{"no source", nil, `ibkey_port_unreadable{counter="pkey_violations",device="mlx5_0",port="1",reason="` + ViolationsReason + `",source="none"} 1`,
			"irdma0", iwarp, why + "; verbs may read it on the host itself (ibv_query_port): the device's driver is not known"},
		{"PortInfo source", absentSource{roce: why}, `ibkey_port_unreadable{counter="pkey_violations",device="mlx5_0",port="1",reason="not read",source="` + query.SourcePortInfo + `"} 1`,
			"mlx5_2", why, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := gatherText(t, newHostCollector(dir, &fakeClock{time.Unix(1000, 0)}, tc.src))
			want := []string{
				tc.ib,
				`ibkey_port_unavailable{counter="pkey_violations",device="` + tc.dev + `",port="1",reason="` + tc.why + `"} 1`,
				`ibkey_port_unavailable{counter="qkey_violations",device="` + tc.dev + `",port="1",reason="` + tc.why + `"} 1`,
				`ibkey_port_unavailable{counter="port_xmit_constraint_errors",device="mlx5_2",port="1",reason="no PMA counters (counters/: does not exist)"} 1`,
				`ibkey_port_unreadable{counter="port_xmit_constraint_errors",device="mlx5_0",port="1",reason="read failed: `,
				"# HELP ibkey_port_unavailable The port has no such counter by nature",
			}
			never := []string{
				`ibkey_port_unreadable{counter="pkey_violations",device="` + tc.dev + `"`,
				`ibkey_port_unreadable{counter="qkey_violations",device="` + tc.dev + `"`,
				`ibkey_port_unreadable{counter="port_xmit_constraint_errors",device="mlx5_2"`,
				`ibkey_port_unavailable{counter="pkey_violations",device="mlx5_0"`,
				`ibkey_port_unavailable{counter="port_xmit_constraint_errors",device="mlx5_0"`,
				`ibkey_port_pkey_violations{device="mlx5_2"`,
				`ibkey_port_saturated{counter="pkey_violations",device="mlx5_2"`,
			}
			if tc.unread != "" {
				want = append(want, `ibkey_port_unreadable{counter="qkey_violations",device="mlx5_2",port="1",reason="`+tc.unread+`",source="none"} 1`)
				never = append(never, `ibkey_port_unavailable{counter="qkey_violations",device="mlx5_2"`)
			}
			for _, w := range want {
				if !strings.Contains(text, w) {
					t.Errorf("missing %s in\n%s", w, text)
				}
			}
			for _, n := range never {
				if strings.Contains(text, n) {
					t.Errorf("unexpected %s in\n%s", n, text)
				}
			}
		})
	}
}

// absentSource is a PortInfo source as query.LocalPortInfo is: the ports named have no
// PortInfo (Absent, with the reason); the others' counters are not read.
type absentSource map[query.PortRef]string

func (absentSource) Name() string { return query.SourcePortInfo }
func (s absentSource) Read(ref query.PortRef, _ []string, out []query.Reading) {
	why, absent := s[ref]
	for i := range out {
		out[i] = query.Reading{Unavailable: cmp.Or(why, "not read"), Absent: absent}
	}
}

type fakeSource struct {
	name   string
	values map[string]uint64
	calls  int
}

func (f *fakeSource) Name() string { return f.name }
func (f *fakeSource) Read(_ query.PortRef, names []string, out []query.Reading) {
	f.calls++
	for i, n := range names {
		v, ok := f.values[n]
		if !ok {
			out[i] = query.Reading{Unavailable: "not from " + f.name}
			continue
		}
		out[i] = query.Reading{Value: v}
	}
}

// TestHostTablesCachedCountersLive: counters and state are read every scrape, tables
// and interfaces only once they are older than TableMaxAge.
func TestHostTablesCachedCountersLive(t *testing.T) {
	dir := writeHost(t, fakesysfs.MLX5())
	clock := &fakeClock{time.Unix(1000, 0)}
	c := newHostCollector(dir, clock, nil)
	first := gatherText(t, c)
	if !strings.Contains(first, `ibkey_pkey_entry_info{device="mlx5_0",index="1",key="0x0001",membership="full",pkey="0x8001",port="1"} 1`) {
		t.Fatalf("no 0x8001 entry:\n%s", first)
	}
	rewrite(t, filepath.Join(dir, "class/infiniband/mlx5_0/ports/1/pkeys/1"), "0x0001")
	rewrite(t, counterPath(dir, "mlx5_0", "1", "port_rcv_constraint_errors"), "42")
	rewrite(t, filepath.Join(dir, "class/infiniband/mlx5_1/ports/2/state"), "4: ACTIVE")
	clock.t = clock.t.Add(30 * time.Second)
	second := gatherText(t, c)
	for _, want := range []string{
		`ibkey_port_rcv_constraint_errors{device="mlx5_0",port="1",source="sysfs"} 42`,
		`ibkey_port_state_id{device="mlx5_1",port="2"} 4`,
		// The table shown was read while the port was DOWN: not trusted, whatever
		// its state now (ibkey_port_state_id).
		`ibkey_pkey_table_trusted{device="mlx5_1",port="2"} 0`,
		`membership="full",pkey="0x8001",port="1"} 1`, // the table is 30 s old: not read again
		`ibkey_host_tables_age_seconds 30`,
	} {
		if !strings.Contains(second, want) {
			t.Errorf("after 30s: missing %s", want)
		}
	}
	clock.t = clock.t.Add(time.Minute)
	third := gatherText(t, c)
	for _, want := range []string{
		`ibkey_pkey_entry_info{device="mlx5_0",index="1",key="0x0001",membership="limited",pkey="0x0001",port="1"} 1`,
		`ibkey_ipoib_interface_info{device="mlx5_0",index="1",interface="ib0.8001",membership="limited",parent="ib0",pkey="0x8001",port="1"} 1`,
		`ibkey_host_tables_age_seconds 0`,
		`ibkey_pkey_table_trusted{device="mlx5_1",port="2"} 1`, // read again, ACTIVE
	} {
		if !strings.Contains(third, want) {
			t.Errorf("after 90s: missing %s", want)
		}
	}
}

func TestHostNoDevices(t *testing.T) {
	c := newHostCollector(t.TempDir(), &fakeClock{time.Unix(0, 0)}, nil)
	text := gatherText(t, c)
	if !strings.Contains(text, "ibkey_host_up 0") || !strings.Contains(text, `ibkey_host_read_error{reason="no RDMA devices: `) {
		t.Errorf("want host_up 0 with the reason:\n%s", text)
	}
}

// TestHostDanglingDevice (issue 24 item 6): one dangling class/infiniband entry does
// not silence the host: the readable device is exported, ibkey_host_up stays 1, and
// the dangling one is ibkey_device_unreadable with the reason, never absent.
func TestHostDanglingDevice(t *testing.T) {
	c := newHostCollector(writeHost(t, fakesysfs.Dangling()), &fakeClock{time.Unix(0, 0)}, nil)
	text := gatherText(t, c)
	for _, want := range []string{
		"ibkey_host_up 1",
		`ibkey_device_info{device="mlx4_0",`,
		`ibkey_pkey_entry_info{device="mlx4_0",index="1",key="0x0001",membership="full",pkey="0x8001",port="1"} 1`,
		`ibkey_device_unreadable{device="scif0",port="",reason="`,
		"which does not exist (a dangling link)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in:\n%s", want, text)
		}
	}
	if strings.Contains(text, "ibkey_host_read_error{") {
		t.Errorf("a partial read is not a host read error:\n%s", text)
	}
}

// TestHostIPoIBUnreadable: an IPoIB interface that cannot be read (a dangling
// class/net link) is ibkey_ipoib_interface_unreadable{interface,reason}, named by its
// interface: not an ibkey_device_unreadable with empty device and port labels, and no
// device or port guessed for it.
func TestHostIPoIBUnreadable(t *testing.T) {
	dir := writeHost(t, fakesysfs.MLX5())
	if err := os.RemoveAll(filepath.Join(dir, "devices/pci0000:00/0000:03:00.0/net/ib0.8002")); err != nil {
		t.Fatal(err)
	}
	text := gatherText(t, newHostCollector(dir, &fakeClock{time.Unix(0, 0)}, nil))
	if !strings.Contains(text, `ibkey_ipoib_interface_unreadable{interface="ib0.8002",reason="`) {
		t.Errorf("no ibkey_ipoib_interface_unreadable for ib0.8002 in:\n%s", text)
	}
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "ibkey_device_unreadable{") || strings.Contains(l, `interface="ib0.8002"`) && !strings.HasPrefix(l, "ibkey_ipoib_interface_unreadable{") {
			t.Errorf("the unread interface is also: %s", l)
		}
	}
	if !strings.Contains(text, `ibkey_ipoib_interface_info{device="mlx5_0",index="1",interface="ib0.8001"`) {
		t.Errorf("the other interfaces are not exported:\n%s", text)
	}
}

// TestHostPortWentAway: a port whose state cannot be read has its counters reported
// unreadable with the reason, and the tables are read again next scrape.
func TestHostPortWentAway(t *testing.T) {
	dir := writeHost(t, fakesysfs.MLX5())
	c := newHostCollector(dir, &fakeClock{time.Unix(0, 0)}, nil)
	gatherText(t, c)
	if err := os.Remove(filepath.Join(dir, "class/infiniband/mlx5_1/ports/2/state")); err != nil {
		t.Fatal(err)
	}
	text := gatherText(t, c)
	for _, want := range []string{
		`ibkey_port_state_unreadable{device="mlx5_1",port="2",reason="state: does not exist"} 1`,
		`ibkey_port_unreadable{counter="port_rcv_constraint_errors",device="mlx5_1",port="2",reason="state: does not exist",source="sysfs"} 1`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %s in\n%s", want, text)
		}
	}
}

func TestHostLint(t *testing.T) {
	dir := writeHost(t, fakesysfs.MLX5())
	c := newHostCollector(dir, &fakeClock{time.Unix(0, 0)}, nil)
	reg, err := NewRegistry(c)
	if err != nil {
		t.Fatal(err)
	}
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
}

// TestPromtoolCheckMetrics runs `promtool check metrics` on the host and the fabric
// output.
func TestPromtoolCheckMetrics(t *testing.T) {
	promtool := requireTool(t, "promtool")
	dir := writeHost(t, fakesysfs.MLX5())
	host := gatherText(t, newHostCollector(dir, &fakeClock{time.Unix(0, 0)}, nil))
	fab := gatherText(t, savedFabricCollector(t, "small.json", true))
	for name, text := range map[string]string{"host": host, "fabric": fab} {
		cmd := exec.Command(promtool, "check", "metrics")
		cmd.Stdin = strings.NewReader(text)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("promtool check metrics (%s): %v\n%s", name, err, out)
		}
	}
}

func gatherText(t testing.TB, c prometheus.Collector) string {
	t.Helper()
	reg, err := NewRegistry(c)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteText(&b, reg); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// requireTool finds a Prometheus tool; outside CI a missing one skips the test with
// the install line, under CI=true it fails.
func requireTool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	msg := name + " not found; install with: apt-get install -y prometheus"
	if os.Getenv("CI") != "" {
		t.Fatalf("%s (CI is set, so this fails instead of skipping)", msg)
	}
	t.Skip(msg)
	return ""
}

// sample is one collected series.
type sample struct {
	name   string
	labels map[string]string
	value  float64
}

func collect(t testing.TB, c prometheus.Collector) []sample {
	t.Helper()
	reg, err := NewRegistry(c)
	if err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []sample
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			s := sample{name: mf.GetName(), labels: map[string]string{}}
			for _, l := range m.GetLabel() {
				s.labels[l.GetName()] = l.GetValue()
			}
			switch {
			case m.Gauge != nil:
				s.value = m.GetGauge().GetValue()
			case m.Counter != nil:
				s.value = m.GetCounter().GetValue()
			}
			out = append(out, s)
		}
	}
	return out
}

// find returns the series of name whose labels include kv (pairs; a key ending in ^
// matches a value prefix).
func find(samples []sample, name string, kv ...string) []sample {
	var out []sample
next:
	for _, s := range samples {
		if s.name != name {
			continue
		}
		for i := 0; i+1 < len(kv); i += 2 {
			k, v := kv[i], kv[i+1]
			if p, ok := strings.CutSuffix(k, "^"); ok {
				if !strings.HasPrefix(s.labels[p], v) {
					continue next
				}
				continue
			}
			if got, ok := s.labels[k]; !ok || got != v {
				continue next
			}
		}
		out = append(out, s)
	}
	return out
}

// expect checks that exactly one series of name matches kv, with value want.
func expect(t testing.TB, samples []sample, want float64, name string, kv ...string) {
	t.Helper()
	got := find(samples, name, kv...)
	switch {
	case len(got) == 0:
		t.Errorf("no %s%v", name, kv)
	case len(got) > 1:
		t.Errorf("%d series %s%v, want 1", len(got), name, kv)
	case got[0].value != want:
		t.Errorf("%s%v = %v, want %v", name, kv, got[0].value, want)
	}
}

func sortedLines(s string) string {
	l := strings.Split(s, "\n")
	sort.Strings(l)
	return strings.Join(l, "\n")
}

// TestHostIPoIBOnPartialTable: not read is unknown, never absent (issue 28). On
// mlx5_1/1 entry 3 cannot be read: ib1's key is found only as a limited entry (a full
// one may be entry 3) and ib1.8009's in no entry read. Both have membership "unknown";
// ib1's key is present (1), ib1.8009 has no key_present series at all; only ib0.8004,
// whose table was read whole, is 0.
func TestHostIPoIBOnPartialTable(t *testing.T) {
	h := fakesysfs.MLX5()
	h.Net = append(h.Net, fakesysfs.NetIf{Name: "ib1.8009", Device: "mlx5_1", Type: "32", Parent: "ib1", DevPort: "0", OperState: "up",
		Address: fakesysfs.IPoIBAddress(0x1053, 0x0002c90300a1b3d1), PKey: "0x8009"})
	got := collect(t, newHostCollector(writeHost(t, h), &fakeClock{time.Unix(0, 0)}, nil))
	expect(t, got, 1, "ibkey_ipoib_interface_info", "interface", "ib1", "membership", "unknown", "index", "")
	expect(t, got, 1, "ibkey_ipoib_interface_info", "interface", "ib1.8009", "membership", "unknown", "index", "")
	expect(t, got, 1, "ibkey_ipoib_key_present", "interface", "ib1")
	if n := len(find(got, "ibkey_ipoib_key_present", "interface", "ib1.8009")); n != 0 {
		t.Errorf("ib1.8009: %d key_present series for a key that may sit in the unread entry", n)
	}
	expect(t, got, 0, "ibkey_ipoib_key_present", "interface", "ib0.8004")
	expect(t, got, 1, "ibkey_ipoib_interface_info", "interface", "ib0.8004", "membership", "none")
}

// TestHostTableNotRead: a port whose P_Key table exists and was not read (its pkeys/
// cannot be read, or is missing or empty on a port that has a table) is
// ibkey_pkey_table_unreadable with the reason (query.NotRead: a table, not a port), never
// ibkey_device_unreadable (the port itself was read) and never the absent table of an
// iWARP port; nothing of it reads as "no keys": no size, valid or entry series, and
// its IPoIB interfaces have membership unknown and no key_present. An iWARP port's
// absent table stays ibkey_pkey_table_unavailable and is not "not read".
func TestHostTableNotRead(t *testing.T) {
	for _, tc := range []struct {
		name      string
		dev, port string
		edit      func(h *fakesysfs.Host)
		loop      bool
		why       string // the reason's prefix
	}{
		{name: "pkeys/ cannot be read", dev: "mlx5_0", port: "1", loop: true, why: "P_Key table not read: "},
		{name: "pkeys/ missing on an IB port", dev: "mlx5_0", port: "1",
			edit: func(h *fakesysfs.Host) { h.Devices[0].Ports[0].PKeys = nil },
			why:  "P_Key table not read: pkeys/ does not exist, and the kernel writes it for every InfiniBand port"},
		{name: "pkeys/ empty", dev: "mlx5_0", port: "1",
			edit: func(h *fakesysfs.Host) { h.Devices[0].Ports[0].PKeys = []string{} },
			why:  "P_Key table not read: pkeys/ is empty"},
		{name: "pkeys/ missing on a RoCE port", dev: "mlx5_2", port: "1",
			edit: func(h *fakesysfs.Host) { h.Devices[2].Ports[0].PKeys = nil },
			why:  "P_Key table not read: pkeys/ does not exist, and the kernel writes it for every Ethernet port"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := fakesysfs.MLX5()
			if tc.edit != nil {
				tc.edit(&h)
			}
			dir := writeHost(t, h)
			if tc.loop {
				if err := fakesysfs.LoopPKeys(dir, tc.dev, 1); err != nil {
					t.Fatal(err)
				}
			}
			got := collect(t, newHostCollector(dir, &fakeClock{time.Unix(0, 0)}, nil))
			port := []string{"device", tc.dev, "port", tc.port}
			expect(t, got, 1, "ibkey_host_up")
			expect(t, got, 1, "ibkey_pkey_table_unreadable", append(port, "reason^", tc.why)...)
			for _, name := range []string{"ibkey_pkey_table_unavailable", "ibkey_pkey_table_size", "ibkey_pkey_table_valid_entries",
				"ibkey_pkey_table_unreadable_entries", "ibkey_pkey_table_trusted", "ibkey_pkey_entry_info", "ibkey_ipoib_key_present"} {
				if n := len(find(got, name, port...)); n != 0 {
					t.Errorf("%s: %d series for a table not read", name, n)
				}
			}
			for _, s := range find(got, "ibkey_ipoib_interface_info", port...) {
				if s.labels["membership"] != "unknown" || s.labels["index"] != "" {
					t.Errorf("%s on a table not read: %v", s.labels["interface"], s.labels)
				}
			}
			if n := len(find(got, "ibkey_device_unreadable")); n != 0 {
				t.Errorf("a table not read is reported as a device or port not read (%d series)", n)
			}
			// The iWARP port's table is absent, a fact, and the only one.
			expect(t, got, 1, "ibkey_pkey_table_unavailable", "device", "irdma0", "port", "1", "reason^", "no P_Key table: ")
			if n := len(find(got, "ibkey_pkey_table_unreadable")); n != 1 {
				t.Errorf("%d table_unreadable series, want 1 (%s/%s)", n, tc.dev, tc.port)
			}
		})
	}
}

// TestHostValidEntriesOnlyWhenReadWhole: no value is served that was not read (rule 1).
// ibkey_pkey_table_valid_entries is the count of a table read whole, and equals its
// entry_info series; with any entry not read it is absent (it was a lower bound, and 0
// when no entry was read), and unreadable_entries says how many. Tables and unread
// entries are generated, every entry unread among them.
func TestHostValidEntriesOnlyWhenReadWhole(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 11))
	for i := range 40 {
		size := 1 + rng.IntN(40)
		values := make([]string, size)
		var unread []int
		for j := range values {
			values[j] = fmt.Sprintf("%#04x", []uint16{0, 0x8000, 0xffff, 0x8001, 0x0002, uint16(rng.Uint32())}[rng.IntN(6)])
			if i%4 == 1 || i%4 == 2 && rng.IntN(3) == 0 {
				unread = append(unread, j) // every entry, or about a third
			}
		}
		h := fakesysfs.MLX5()
		p := &h.Devices[0].Ports[0]
		p.PKeys, p.Unreadable = values, unread
		got := collect(t, newHostCollector(writeHost(t, h), &fakeClock{time.Unix(0, 0)}, nil))
		port := []string{"device", "mlx5_0", "port", "1"}
		expect(t, got, float64(len(unread)), "ibkey_pkey_table_unreadable_entries", port...)
		expect(t, got, float64(size), "ibkey_pkey_table_size", port...)
		entries := len(find(got, "ibkey_pkey_entry_info", port...))
		valid := find(got, "ibkey_pkey_table_valid_entries", port...)
		switch {
		case len(unread) > 0 && len(valid) > 0:
			t.Errorf("table %d (%v, entries %v not read): valid_entries %v served, a count of what was not read", i, values, unread, valid[0].value)
		case len(unread) == 0 && (len(valid) != 1 || valid[0].value != float64(entries)):
			t.Errorf("table %d (%v) read whole: valid_entries %v, want one series of %d (its entry_info series)", i, values, valid, entries)
		}
	}
}

// TestHostFallbackSourceNamed: with a preferred source and a fallback (verbs first,
// then --portinfo's SMPs: query.Preferred), a counter the fallback read carries the
// fallback's name in its source label (query.Reading.Source), as watch counters shows
// it, never the preferred source's, which did not read it.
func TestHostFallbackSourceNamed(t *testing.T) {
	dir := writeHost(t, fakesysfs.MLX5())
	for _, tc := range []struct{ first, then string }{{"verbs", query.SourcePortInfo}, {"first", "then"}} {
		src := query.Preferred{
			First: &fakeSource{name: tc.first, values: map[string]uint64{query.PKeyViolations: 3}},
			Then:  &fakeSource{name: tc.then, values: map[string]uint64{query.QKeyViolations: 5}},
		}
		text := gatherText(t, newHostCollector(dir, &fakeClock{time.Unix(1000, 0)}, src))
		for _, want := range []string{
			`ibkey_port_pkey_violations{device="mlx5_0",port="1",source="` + tc.first + `"} 3`,
			`ibkey_port_qkey_violations{device="mlx5_0",port="1",source="` + tc.then + `"} 5`,
		} {
			if !strings.Contains(text, want) {
				t.Errorf("missing %s in\n%s", want, text)
			}
		}
		if never := `ibkey_port_qkey_violations{device="mlx5_0",port="1",source="` + tc.first + `"}`; strings.Contains(text, never) {
			t.Errorf("unexpected %s: the fallback read it", never)
		}
	}
}
