package exporter

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/demo"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/fabric/fabrictest"
	"github.com/ibkey/ibkey/internal/fakesysfs"
	"github.com/ibkey/ibkey/internal/ibverbs"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/lab"
	"github.com/ibkey/ibkey/internal/partconf"
	"github.com/ibkey/ibkey/internal/query"
)

// savedFabricCollector serves a saved sweep (testdata, written by `ibkey fabric
// discover -o json` on the lab's small.net) without counters.
func savedFabricCollector(t testing.TB, file string, partitions bool) *FabricCollector {
	t.Helper()
	f := loadFabric(t, file)
	opts := FabricOptions{NoCounters: true, Now: func() time.Time { return f.SweptAt.Add(90 * time.Second) }}
	if partitions {
		conf, err := os.ReadFile("testdata/partitions.conf")
		if err != nil {
			t.Fatal(err)
		}
		opts.Partitions = partconf.Parse("partitions.conf", conf)
	}
	c := NewFabricCollector(opts)
	snap := c.fromFabric(context.Background(), f, nil, nil)
	snap.at, snap.duration = f.SweptAt, f.Duration
	serve(c, snap)
	return c
}

// loadFabric reads a saved sweep of testdata.
func loadFabric(t testing.TB, file string) *fabric.Fabric {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	f, err := fabric.DecodeFabric(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// serve serves snap as a sweep that reached the fabric does.
func serve(c *FabricCollector, snap *fabricSnapshot) {
	if err := c.store(snap); err != nil {
		panic(err)
	}
	c.reached = true
}

func TestFabricMetricsFromSavedSweep(t *testing.T) {
	c := savedFabricCollector(t, "small.json", true)
	got := collect(t, c)
	hcaA := []string{"node_guid", "0x0000000000100000", "node_name", "HcaA", "port", "1", "lid", "1"}
	sw1 := []string{"node_guid", "0x0000000000200000", "node_name", "Switch1", "lid", "2"}
	with := func(base []string, kv ...string) []string { return append(append([]string{}, base...), kv...) }
	expect(t, got, 1, "ibkey_fabric_up")
	expect(t, got, 90, "ibkey_fabric_sweep_age_seconds")
	expect(t, got, 4, "ibkey_fabric_nodes", "type", "ca")
	expect(t, got, 2, "ibkey_fabric_nodes", "type", "switch")
	expect(t, got, 1, "ibkey_fabric_pkey_entry_info", with(hcaA, "index", "1", "pkey", "0x8002", "key", "0x0002", "membership", "full")...)
	expect(t, got, 1, "ibkey_fabric_pkey_entry_info", with(hcaA, "index", "2", "pkey", "0x0003", "key", "0x0003", "membership", "limited")...)
	if n := len(find(got, "ibkey_fabric_pkey_entry_info", hcaA...)); n != 4 {
		t.Errorf("HcaA[1]: %d entries, want 4", n)
	}
	expect(t, got, 4, "ibkey_fabric_pkey_table_valid_entries", hcaA...)
	expect(t, got, 64, "ibkey_fabric_pkey_table_size", hcaA...)
	// A switch's external port carries the switch's LID (port 0's).
	expect(t, got, 4, "ibkey_fabric_pkey_table_valid_entries", with(sw1, "port", "1")...)
	expect(t, got, 1, "ibkey_fabric_port_state_id", "node_name", "HcaA", "port", "2", "lid", "0")
	expect(t, got, 1, "ibkey_fabric_pkey_table_unread", "node_name", "HcaA", "port", "2", "reason^", "not read: the port is DOWN")
	if n := len(find(got, "ibkey_fabric_pkey_table_valid_entries", "node_name", "HcaA", "port", "2")); n != 0 {
		t.Error("an unread table has a valid count")
	}
	expect(t, got, 0, "ibkey_fabric_port_pkey_violations", hcaA...)
	expect(t, got, 1, "ibkey_fabric_port_unreadable", with(hcaA, "counter", "qkey_violations", "reason", noQKey)...)
	expect(t, got, 1, "ibkey_fabric_port_unreadable", with(hcaA, "counter", "port_rcv_constraint_errors", "reason", "not read (--no-counters)")...)
	if n := len(find(got, "ibkey_fabric_port_rcv_constraint_errors")); n != 0 {
		t.Errorf("%d constraint error values without counters read", n)
	}
	expect(t, got, 5, "ibkey_fabric_findings", "rule", "enforcement-off", "severity", "warning")
	expect(t, got, 0, "ibkey_fabric_findings", "rule", "hca-key-not-on-switch", "severity", "error")
	expect(t, got, 0, "ibkey_fabric_findings", "rule", "partitions-missing-key", "severity", "error")
	expect(t, got, 1, "ibkey_fabric_port_findings", with(sw1, "port", "1", "rule", "enforcement-off", "severity", "warning")...)
	expect(t, got, 1, "ibkey_fabric_port_findings", with(hcaA, "rule", "enforcement-off", "severity", "warning")...)
	expect(t, got, 0, "ibkey_fabric_sweeps_total", "result", "complete")
	// Switch1 port 4 has no cable: not exported.
	if n := len(find(got, "ibkey_fabric_port_info", "node_name", "Switch1", "port", "4")); n != 0 {
		t.Error("an uncabled switch port is exported")
	}
	reg, err := NewRegistry(c) // the sweep's families with the collector's series
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

func TestFabricNothingServedBeforeFirstSweep(t *testing.T) {
	c := NewFabricCollector(FabricOptions{Interval: time.Minute})
	text := gatherText(t, c)
	if !strings.Contains(text, "ibkey_fabric_up 0") || strings.Contains(text, "ibkey_fabric_sweep_age_seconds") {
		t.Errorf("before any sweep:\n%s", text)
	}
}

// TestFabricCardinality is the series budget: a 2,008-node two-level fat tree (80
// leaves x 24 CAs, 8 spines) with 4 partitions on every CA port, every port read.
func TestFabricCardinality(t *testing.T) {
	f := fatTreeFabric(80, 8, 24, 4)
	c := NewFabricCollector(FabricOptions{NoCounters: true})
	serve(c, c.fromFabric(context.Background(), f, nil, nil))
	got := collect(t, c) // through NewRegistry: the sweep's families with the collector's series
	n, ports := len(got), len(find(got, mFPortInfo.Name))
	t.Logf("fabric of %d nodes, %d exported ports: %d series (%.1f per port)", len(f.Nodes), ports, n, float64(n)/float64(ports))
	// Budget: 20 series per exported port.
	if budget := 20 * ports; n > budget {
		t.Errorf("%d series for %d ports, budget %d", n, ports, budget)
	}
}

// fatTreeFabric builds the sweep of lab.FatTree(leaves, spines, hcas) as OpenSM
// programs it: keys partitions (0xffff and keys-1 full keys) on every CA port and its
// switch port, the default key on links between switches.
func fatTreeFabric(leaves, spines, hcas, keys int) *fabric.Fabric {
	f := &fabric.Fabric{Source: "synthetic", SweptAt: time.Unix(1e9, 0)}
	table := func(n int) []check.PKey {
		t := make([]check.PKey, 64)
		t[0] = 0xffff
		for i := 1; i < n; i++ {
			t[i] = check.PKey(0x8000 | i + 1)
		}
		return t
	}
	lid := uint16(1)
	guid := check.GUID(0x100000)
	var cas []*fabric.Node
	for i := 0; i < leaves*hcas; i++ {
		n := &fabric.Node{GUID: guid, Type: check.NodeCA, Description: fmt.Sprintf("Hca%d", i+1), NumPorts: 1, PartitionCap: 64,
			Ports: []*fabric.Port{{Num: 1, GUID: guid + 1, LID: lid, State: check.StateActive, TableSize: 64, PKeys: table(keys)}}}
		guid += 2
		lid++
		cas = append(cas, n)
		f.Nodes = append(f.Nodes, n)
	}
	sw := func(name string, ports int) *fabric.Node {
		n := &fabric.Node{GUID: guid, Type: check.NodeSwitch, Description: name, NumPorts: ports, PartitionCap: 8, PartitionEnforcementCap: 64}
		n.Ports = append(n.Ports, &fabric.Port{Num: 0, GUID: guid, LID: lid, State: check.StateActive, TableSize: 8, PKeys: table(1)[:8]})
		for p := 1; p <= ports; p++ {
			n.Ports = append(n.Ports, &fabric.Port{Num: p, State: check.StateActive, TableSize: 64})
		}
		guid++
		lid++
		f.Nodes = append(f.Nodes, n)
		return n
	}
	link := func(a *fabric.Node, ap int, b *fabric.Node, bp int) {
		a.Ports[portIndex(a, ap)].Peer = &check.PortID{Node: b.GUID, Port: bp}
		b.Ports[portIndex(b, bp)].Peer = &check.PortID{Node: a.GUID, Port: ap}
	}
	var spineNodes []*fabric.Node
	for s := 0; s < spines; s++ {
		spineNodes = append(spineNodes, sw(fmt.Sprintf("Spine%d", s+1), leaves))
	}
	for l := 0; l < leaves; l++ {
		leaf := sw(fmt.Sprintf("Leaf%d", l+1), hcas+spines)
		for h := 0; h < hcas; h++ {
			ca := cas[l*hcas+h]
			link(ca, 1, leaf, h+1)
			leaf.Ports[h+1].PKeys = ca.Ports[0].PKeys
			leaf.Ports[h+1].Enforcement = &check.Enforcement{Inbound: true, Outbound: true}
		}
		for s := 0; s < spines; s++ {
			link(leaf, hcas+s+1, spineNodes[s], l+1)
			leaf.Ports[hcas+s+1].PKeys = table(1)
			spineNodes[s].Ports[l+1].PKeys = table(1)
		}
	}
	f.Normalize()
	return f
}

func portIndex(n *fabric.Node, num int) int {
	for i, p := range n.Ports {
		if p.Num == num {
			return i
		}
	}
	panic("no port")
}

// labMAD: short timeouts, ibsim's best window (query's BenchmarkLabSweep).
var labMAD = mad.Options{Timeout: 300 * time.Millisecond, Retries: 2}

func startSmallLab(t testing.TB) *lab.Lab {
	t.Helper()
	l := lab.Start(t, "../lab/testdata/small.net", nil)
	conf, err := os.ReadFile("testdata/partitions.conf")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.RunOpenSM(string(conf), false); err != nil {
		t.Fatal(err)
	}
	return l
}

// TestFabricLab sweeps the simulated fabric after OpenSM programmed it: tables agree
// with `smpquery pkeys`, PortCounters set on ibsim's console show up (and saturate),
// and the partitions.conf comparison finds nothing against the file OpenSM used and a
// missing key against one that adds a partition.
func TestFabricLab(t *testing.T) {
	l := startSmallLab(t)
	tr := l.Dial(t, "HcaA", labMAD)
	conf, err := os.ReadFile("testdata/partitions.conf")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c := NewFabricCollector(FabricOptions{Fabric: &query.Fabric{T: tr, Via: "ibsim"}, Interval: time.Minute,
		Partitions: partconf.Parse("partitions.conf", conf)})
	if err := c.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if late := c.snap.Load().lateCounters; late != 0 {
		t.Errorf("%d PortCounters read after the sweep: every exported port's should have been read while it ran", late)
	}
	got := collect(t, c)
	hcaB := []string{"node_guid", "0x0000000000100003", "node_name", "HcaB", "port", "1"}
	with := func(base []string, kv ...string) []string { return append(append([]string{}, base...), kv...) }
	info := find(got, "ibkey_fabric_port_info", hcaB...)
	if len(info) != 1 {
		t.Fatalf("HcaB[1]: %d port_info series", len(info))
	}
	lidB := info[0].labels["lid"]
	// The oracle: smpquery's table of HcaB.
	table, err := lab.ParsePKeys(l.MustTool("smpquery", "pkeys", lidB))
	if err != nil {
		t.Fatal(err)
	}
	valid := 0
	for i, k := range table.Entries[:table.Capacity] {
		pk := check.PKey(k)
		if !pk.Valid() {
			continue
		}
		valid++
		expect(t, got, 1, "ibkey_fabric_pkey_entry_info", with(hcaB, "lid", lidB, "index", fmt.Sprint(i), "pkey", pk.String(), "key", pk.Partition().String(), "membership", pk.Membership().String())...)
	}
	if n := len(find(got, "ibkey_fabric_pkey_entry_info", hcaB...)); n != valid || valid == 0 {
		t.Errorf("HcaB[1]: %d entries, smpquery pkeys %s shows %d valid", n, lidB, valid)
	}
	expect(t, got, float64(valid), "ibkey_fabric_pkey_table_valid_entries", hcaB...)
	expect(t, got, float64(table.Capacity), "ibkey_fabric_pkey_table_size", hcaB...)
	expect(t, got, 0, "ibkey_fabric_port_rcv_constraint_errors", hcaB...)
	// HcaB's port 2 is DOWN (not cabled): its PortCounters cannot be reached over the
	// fabric, as ibsim's perfquery at HcaB's LID for port 2 shows (a CA's PMA answers
	// only for the port a MAD arrives on): not available, not unreadable.
	if out, err := l.Tool("perfquery", lidB, "2"); err == nil {
		t.Errorf("perfquery %s 2 read a DOWN CA port's PortCounters: %s", lidB, out)
	}
	hcaB2 := []string{"node_name", "HcaB", "port", "2", "lid", "0"}
	expect(t, got, 1, "ibkey_fabric_port_unavailable", with(hcaB2, "counter", query.XmitConstraintErrors, "reason^", "port DOWN (HcaB/2 is DOWN")...)
	if u := find(got, "ibkey_fabric_port_unreadable", hcaB2...); len(u) != 0 {
		t.Errorf("HcaB[2] (DOWN) unreadable: %v", u)
	}
	// Q_KeyViolations from the sweep's own PortInfo replies, as smpquery reads it;
	// every port whose PortInfo was read has the value, none says it is missing.
	pi := lab.ParseFields(l.MustTool("smpquery", "portinfo", lidB, "1"))
	qkey, err := pi.Uint("QkeyViolations")
	if err != nil {
		t.Fatalf("smpquery portinfo %s 1: %v", lidB, err)
	}
	expect(t, got, float64(qkey), "ibkey_fabric_port_qkey_violations", hcaB...)
	if n, ports := len(find(got, "ibkey_fabric_port_qkey_violations")), len(find(got, "ibkey_fabric_port_state_id")); n != ports || n == 0 {
		t.Errorf("%d Q_KeyViolations values for %d ports with PortInfo read", n, ports)
	}
	if n := len(find(got, "ibkey_fabric_port_unreadable", "counter", "qkey_violations")); n != 0 {
		t.Errorf("%d ports say Q_KeyViolations was not read", n)
	}
	expect(t, got, 0, "ibkey_fabric_findings", "rule", "partitions-missing-key")
	expect(t, got, 0, "ibkey_fabric_findings", "rule", "partitions-extra-key")
	expect(t, got, 1, "ibkey_fabric_sweeps_total", "result", "complete")
	expect(t, got, 4, "ibkey_fabric_nodes", "type", "ca")

	l.MustConsole(`PerformanceSet "HcaB"[1] PortCounters.PortRcvConstraintErrors=7`)
	l.MustConsole(`PerformanceSet "HcaC"[1] PortCounters.PortXmitConstraintErrors=300`) // ibsim clamps to 255
	perf := lab.ParseFields(l.MustTool("perfquery", lidB, "1"))
	if perf["PortRcvConstraintErrors"] != "7" {
		t.Fatalf("perfquery %s 1: PortRcvConstraintErrors %q, want 7", lidB, perf["PortRcvConstraintErrors"])
	}
	if err := c.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	got = collect(t, c)
	hcaC := []string{"node_guid", "0x0000000000100006", "node_name", "HcaC", "port", "1"}
	expect(t, got, 7, "ibkey_fabric_port_rcv_constraint_errors", hcaB...)
	expect(t, got, 0, "ibkey_fabric_port_saturated", with(hcaB, "counter", "port_rcv_constraint_errors")...)
	expect(t, got, 255, "ibkey_fabric_port_xmit_constraint_errors", hcaC...)
	expect(t, got, 1, "ibkey_fabric_port_saturated", with(hcaC, "counter", "port_xmit_constraint_errors")...)
	expect(t, got, 2, "ibkey_fabric_sweeps_total", "result", "complete")

	// A file with one more partition for HcaB: its table lacks the key.
	more := string(conf) + "extra=0x0007 : 0x0000000000100004=full ;\n"
	c2 := NewFabricCollector(FabricOptions{Fabric: &query.Fabric{T: tr, Via: "ibsim"}, Interval: time.Minute, NoCounters: true,
		Partitions: partconf.Parse("more.conf", []byte(more))})
	if err := c2.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	got = collect(t, c2)
	expect(t, got, 1, "ibkey_fabric_findings", "rule", "partitions-missing-key", "severity", "error")
	expect(t, got, 1, "ibkey_fabric_port_findings", with(hcaB, "rule", "partitions-missing-key", "severity", "error")...)
}

// TestFabricLabOpenSMConf: the exporter audits a sweep as `ibkey fabric check
// --opensm-conf` does (partconf.AuditFabric, one code path). OpenSM 3.3.23 programs
// small.net with part_enforce off and allow_both_pkeys TRUE from its opensm.conf
// (opensm -F) and an indx0 partition: it leaves the switch ports facing CAs alone (so
// Switch1[2] lacks HcaB's 0x0002, smpquery), gives HcaB both entries of storage and
// puts storage at index 0. With the opensm.conf every finding is 0 on that fabric;
// assuming OpenSM's defaults, as the exporter did before --opensm-conf while fabric
// check took the file, the same fabric had 19 findings (enforcement-off,
// hca-key-not-on-switch, partitions-missing-key, default-not-at-index-0).
func TestFabricLabOpenSMConf(t *testing.T) {
	l := lab.Start(t, "../lab/testdata/small.net", nil)
	const parts = "Default=0x7fff, ipoib : ALL=full ;\nstorage=0x0002, indx0 : 0x0000000000100001=full, 0x0000000000100004=both ;\n"
	const osmText = "# opensm.conf\npart_enforce off\nallow_both_pkeys TRUE\n"
	osmPath := filepath.Join(t.TempDir(), "opensm.conf")
	if err := os.WriteFile(osmPath, []byte(osmText), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := l.RunOpenSMArgs(parts, "-F", osmPath); err != nil {
		t.Fatal(err)
	}
	tr := l.Dial(t, "HcaA", labMAD)
	ctx := context.Background()
	sweep := func(osm *partconf.OpenSMConf) []sample {
		c := NewFabricCollector(FabricOptions{Fabric: &query.Fabric{T: tr, Via: "ibsim"}, Interval: time.Minute, NoCounters: true,
			OpenSM: osm, Partitions: partconf.Parse("partitions.conf", []byte(parts))})
		if err := c.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		return collect(t, c)
	}
	got := sweep(partconf.ParseOpenSMConf("opensm.conf", []byte(osmText)))
	lidOf := func(node, port string) string {
		info := find(got, "ibkey_fabric_port_info", "node_name", node, "port", port)
		if len(info) != 1 {
			t.Fatalf("%s[%s]: %d port_info series", node, port, len(info))
		}
		return info[0].labels["lid"]
	}
	// The oracle: what OpenSM programmed, as smpquery reads it.
	sw, err := lab.ParsePKeys(l.MustTool("smpquery", "pkeys", lidOf("Switch1", "2"), "2"))
	if err != nil {
		t.Fatal(err)
	}
	hcaB, err := lab.ParsePKeys(l.MustTool("smpquery", "pkeys", lidOf("HcaB", "1")))
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(sw.Entries, func(k uint16) bool { return k&0x7fff == 2 }) || hcaB.Entries[0]&0x7fff != 2 ||
		!slices.Contains(hcaB.Entries, 0x8002) || !slices.Contains(hcaB.Entries, 0x0002) {
		t.Fatalf("OpenSM -F %q programmed Switch1[2] %v, HcaB[1] %v: revisit this test", osmText, sw.Entries[:4], hcaB.Entries[:4])
	}
	fs := find(got, "ibkey_fabric_findings")
	for _, f := range fs {
		if f.value != 0 {
			t.Errorf("with the opensm.conf: %v findings of %s (%s), want none on the fabric OpenSM just programmed", f.value, f.labels["rule"], f.labels["severity"])
		}
	}
	if len(fs) < 15 {
		t.Errorf("%d rules exported at 0, want every rule of the audit and the comparison", len(fs))
	}
	defaults := sweep(nil)
	for _, rule := range []string{fabric.RuleEnforcementOff, fabric.RuleHCAKeyNotOnSwitch, partconf.RuleMissingKey} {
		if n := find(defaults, "ibkey_fabric_findings", "rule", rule, "severity", "warning"); len(n) != 1 || n[0].value == 0 {
			t.Errorf("OpenSM's defaults assumed: no %s warning; this test no longer shows what --opensm-conf changes", rule)
		}
	}
}

// TestFabricLIDMode reads a node by LID: every port, its table and all four counters
// (Q_KeyViolations too, from PortInfo); no audit.
func TestFabricLIDMode(t *testing.T) {
	l := startSmallLab(t)
	tr := l.Dial(t, "HcaA", labMAD)
	fab := &query.Fabric{T: tr, Via: "ibsim"}
	ctx := context.Background()
	views, err := fab.Load(ctx, query.FabricSelector{Addr: mad.DirectedRoute()}, query.LoadOptions{})
	if err != nil || len(views) != 1 || !views[0].Port.LID.OK() {
		t.Fatalf("local port: %v", err)
	}
	lid := views[0].Port.LID.Value
	c := NewFabricCollector(FabricOptions{Fabric: fab, Interval: time.Minute,
		Selectors: []query.FabricSelector{{Addr: mad.LIDAddress(lid), AllPorts: true}}})
	if err := c.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	got := collect(t, c)
	hcaA := []string{"node_guid", "0x0000000000100000", "node_name", "HcaA", "port", "1", "lid", fmt.Sprint(lid)}
	expect(t, got, 1, "ibkey_fabric_pkey_entry_info", append(hcaA, "index", "0", "pkey", "0xffff", "membership", "full")...)
	expect(t, got, 0, "ibkey_fabric_port_qkey_violations", hcaA...)
	expect(t, got, 0, "ibkey_fabric_port_pkey_violations", hcaA...)
	expect(t, got, 0, "ibkey_fabric_port_rcv_constraint_errors", hcaA...)
	if n := len(find(got, "ibkey_fabric_findings")); n != 0 {
		t.Error("--lid mode has no audit, but findings were exported")
	}
}

// TestFabricReopensTransport: a transport that stopped working is closed and opened
// again (issue 28): after ibsim drops the exporter's client slot (its console's X) and
// after ibsim is killed and a new one started under the same name. While it cannot
// sweep, ibkey_fabric_up is 0 with the reason, and the previous sweep stays served;
// the next sweep after the reopen is served with ibkey_fabric_up 1, and no client slot
// is left behind.
func TestFabricReopensTransport(t *testing.T) {
	sock := fmt.Sprintf("ibkeyreopen%d", os.Getpid())
	l := lab.Start(t, "../lab/testdata/small.net", &lab.Options{SockName: sock})
	ctx := context.Background()
	dial := func(ctx context.Context) (*query.Fabric, error) {
		tr, err := mad.DialIbsim(ctx, mad.IbsimOptions{SockName: sock, Node: "HcaA", Options: labMAD})
		if err != nil {
			return nil, err
		}
		return &query.Fabric{T: tr, Via: "ibsim " + sock}, nil
	}
	fab, err := dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := NewFabricCollector(FabricOptions{Fabric: fab, Reopen: dial, Interval: time.Minute, Timeout: 30 * time.Second})
	defer c.Close()
	up := func(want float64, reason string) {
		t.Helper()
		got := collect(t, c)
		expect(t, got, want, "ibkey_fabric_up")
		fails := find(got, "ibkey_fabric_last_sweep_failure")
		switch {
		case reason == "" && len(fails) != 0:
			t.Errorf("a failure reason after a complete sweep: %v", fails[0].labels)
		case reason != "" && (len(fails) != 1 || !strings.Contains(fails[0].labels["reason"], reason)):
			t.Errorf("failure reason %v, want one with %q", fails, reason)
		}
		if reason != "" && len(find(got, "ibkey_fabric_port_info")) == 0 {
			t.Error("the previous complete sweep is no longer served")
		}
	}
	if err := c.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	up(1, "")

	// The slot dropped: ibsim answers nothing more on it, and says nothing.
	l.MustConsole(fmt.Sprintf("X %d", fab.T.(*mad.Ibsim).Slot))
	if err := c.Sweep(ctx); err == nil {
		t.Fatal("a sweep through a dropped slot succeeded")
	}
	up(0, "reopening")
	if err := c.Sweep(ctx); err != nil {
		t.Fatalf("after the reopen: %v", err)
	}
	up(1, "")

	// ibsim killed: the sends fail at once; the reopen fails until a new ibsim runs.
	l.Kill()
	if err := c.Sweep(ctx); err == nil {
		t.Fatal("a sweep with ibsim killed succeeded")
	}
	up(0, "went down")
	if err := c.Sweep(ctx); err == nil || !strings.Contains(err.Error(), "opening the MAD transport again") {
		t.Fatalf("reopening with no ibsim: %v", err)
	}
	up(0, "no simulator listening")
	l2 := lab.Start(t, "../lab/testdata/small.net", &lab.Options{SockName: sock})
	if err := c.Sweep(ctx); err != nil {
		t.Fatalf("after ibsim's restart: %v", err)
	}
	up(1, "")
	expect(t, collect(t, c), 3, "ibkey_fabric_sweeps_total", "result", "complete")
	if err := c.Close(); err != nil {
		t.Error(err)
	}
	if clients, err := l2.Attached(); err != nil || len(clients) != 0 {
		t.Errorf("ibsim clients left after Close: %v %v", clients, err)
	}
}

// TestFabricLIDModeReadsAsSweep: --lid reads a port's counters as a sweep does (the
// PortInfo replies its reads got, PortCounters where a sweep sends them), through every
// kind of selector: a switch port by directed route (its LID from port 0's PortInfo,
// read for the purpose), a switch by LID, a dual-homed CA by directed route (its other
// port reached through its own LID), a CA by LID. Each port's counter series are the
// sweep's.
func TestFabricLIDModeReadsAsSweep(t *testing.T) {
	l := startSmallLab(t)
	tr := l.Dial(t, "HcaA", labMAD)
	fab := &query.Fabric{T: tr, Via: "ibsim"}
	ctx := context.Background()
	sweep := NewFabricCollector(FabricOptions{Fabric: fab, Interval: time.Minute})
	if err := sweep.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	swept := collect(t, sweep)
	lidOf := func(node string) uint16 {
		port := "1"
		if strings.HasPrefix(node, "Switch") {
			port = "0"
		}
		info := find(swept, "ibkey_fabric_port_info", "node_name", node, "port", port)
		if len(info) != 1 {
			t.Fatalf("%s: %d port_info series", node, len(info))
		}
		lid, err := strconv.Atoi(info[0].labels["lid"])
		if err != nil || lid == 0 {
			t.Fatalf("%s: lid %q", node, info[0].labels["lid"])
		}
		return uint16(lid)
	}
	// HcaA's port 1 leads to Switch1 (port 1); Switch1's port 3 to HcaD.
	sels := []query.FabricSelector{
		{Addr: mad.DirectedRoute(1), Port: 3, HasPort: true},
		{Addr: mad.LIDAddress(lidOf("Switch2")), AllPorts: true},
		{Addr: mad.DirectedRoute(1, 3), AllPorts: true},
		{Addr: mad.LIDAddress(lidOf("HcaC"))},
	}
	c := NewFabricCollector(FabricOptions{Fabric: fab, Interval: time.Minute, Selectors: sels})
	if err := c.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	got := collect(t, c)
	ports := find(got, "ibkey_fabric_port_info")
	if len(ports) != 1+9+2+1 {
		t.Errorf("%d ports read, want 13 (Switch1 port 3, Switch2's 9, HcaD's 2, HcaC's 1)", len(ports))
	}
	compared := 0
	for _, p := range ports {
		id := []string{"node_guid", p.labels["node_guid"], "port", p.labels["port"]}
		if len(find(swept, "ibkey_fabric_port_info", id...)) == 0 {
			continue // a switch port without a cable: not a swept port
		}
		compared++
		for _, fc := range fabricCounters {
			a, b := find(got, fc.metric.Name, id...), find(swept, fc.metric.Name, id...)
			if len(a) != 1 || len(b) != 1 || a[0].value != b[0].value {
				t.Errorf("%s %s port %s: --lid %v, sweep %v", fc.metric.Name, p.labels["node_name"], p.labels["port"], a, b)
			}
		}
		if u := find(got, "ibkey_fabric_port_unreadable", id...); len(u) != 0 {
			t.Errorf("%s port %s: unreadable %v", p.labels["node_name"], p.labels["port"], u)
		}
	}
	if compared != 1+5+2+1 {
		t.Errorf("%d ports compared with the sweep, want 9", compared)
	}
	// --no-counters skips PortCounters only: the PortInfo counters are still those
	// of the replies read (as a sweep's).
	c = NewFabricCollector(FabricOptions{Fabric: fab, Interval: time.Minute, Selectors: sels[3:], NoCounters: true})
	if err := c.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	got = collect(t, c)
	hcaC := []string{"node_name", "HcaC", "port", "1"}
	expect(t, got, 0, "ibkey_fabric_port_qkey_violations", hcaC...)
	expect(t, got, 0, "ibkey_fabric_port_pkey_violations", hcaC...)
	expect(t, got, 1, "ibkey_fabric_port_unreadable", append(hcaC, "counter", query.RcvConstraintErrors, "reason", "not read (--no-counters)")...)
}

// TestFabricNotRead: what a served sweep did not read is exported by the rule every
// command uses (fabric.NotRead), each kind at 0 when nothing of it is missing: a
// link whose far end did not answer and a P_Key table whose read failed count, a DOWN
// port's table does not.
func TestFabricNotRead(t *testing.T) {
	f := loadFabric(t, "small.json")
	c := NewFabricCollector(FabricOptions{NoCounters: true, Now: func() time.Time { return f.SweptAt }})
	serve(c, c.fromFabric(context.Background(), f, nil, nil))
	got := collect(t, c)
	for _, what := range notReadKinds {
		expect(t, got, 0, "ibkey_fabric_not_read", "what", what)
	}
	hcaA := f.Node(0x100000)
	if hcaA == nil || len(hcaA.Ports) == 0 || hcaA.Ports[0].PKeys == nil {
		t.Fatalf("small.json: no HcaA[1] with a table: %+v", hcaA)
	}
	hcaA.Ports[0].PKeys, hcaA.Ports[0].PKeysError = nil, "timed out"
	f.Unreachable = append(f.Unreachable, fabric.Unreachable{From: check.PortID{Node: 0x200000, Port: 4}, Path: "0,4", Error: "timed out"})
	serve(c, c.fromFabric(context.Background(), f, nil, nil))
	got = collect(t, c)
	want := map[string]float64{fabric.NotReadLink: 1, fabric.NotReadTable: 1}
	for _, what := range notReadKinds {
		expect(t, got, want[what], "ibkey_fabric_not_read", "what", what)
	}
	if n := len(f.NotRead(true)); n != 2 {
		t.Errorf("fabric.NotRead lists %d items, want the 2 exported", n)
	}
}

// TestFabricSweepWithGapsNotComplete: a sweep that finished is served, but counted
// complete only when fabric.NotRead lists nothing; one with gaps is result="gaps",
// logged once with what was not read, and is no failure.
func TestFabricSweepWithGapsNotComplete(t *testing.T) {
	f := loadFabric(t, "small.json")
	var logged []string
	c := NewFabricCollector(FabricOptions{NoCounters: true, Now: func() time.Time { return f.SweptAt },
		Logf: func(format string, args ...any) { logged = append(logged, fmt.Sprintf(format, args...)) }})
	if err := c.finish(c.fromFabric(context.Background(), f, nil, nil), nil); err != nil {
		t.Fatal(err)
	}
	f.Unreachable = append(f.Unreachable, fabric.Unreachable{From: check.PortID{Node: 0x200000, Port: 4}, Path: "0,4", Error: "timed out"})
	for range 2 {
		snap := c.fromFabric(context.Background(), f, nil, nil)
		if err := c.finish(snap, nil); err != nil {
			t.Fatal(err)
		}
	}
	got := collect(t, c)
	expect(t, got, 1, "ibkey_fabric_sweeps_total", "result", "complete")
	expect(t, got, 2, "ibkey_fabric_sweeps_total", "result", "gaps")
	expect(t, got, 0, "ibkey_fabric_sweeps_total", "result", "partial")
	if n := len(find(got, "ibkey_fabric_last_sweep_failure")); n != 0 {
		t.Errorf("a sweep with gaps is a failure: %d ibkey_fabric_last_sweep_failure", n)
	}
	if len(logged) != 1 || !strings.Contains(logged[0], "1 link with no answer from the far end") {
		t.Errorf("logged %q, want what was not read, once", logged)
	}
}

// TestFabricOpenSMNotMaster: an opensm.conf whose guid is not the port of the master
// SM the swept ports name is logged as fabric check notes it, once while it holds,
// and again when it holds after it did not.
func TestFabricOpenSMNotMaster(t *testing.T) {
	f := loadFabric(t, "small.json")
	_, master := partconf.FabricPorts(f)
	if master == 0 {
		t.Fatal("small.json names no master SM port")
	}
	var logged []string
	osm := &partconf.OpenSMConf{File: "/etc/opensm/opensm.conf", GUID: master + 1}
	c := NewFabricCollector(FabricOptions{NoCounters: true, OpenSM: osm,
		Logf: func(format string, args ...any) { logged = append(logged, fmt.Sprintf(format, args...)) }})
	for _, guid := range []check.GUID{master + 1, master + 1, master, master + 1, 0} {
		osm.GUID = guid
		c.fromFabric(context.Background(), f, nil, nil)
	}
	osm.GUID = master + 1
	want := osm.NotMaster(f)
	if len(logged) != 2 || logged[0] != want || logged[1] != want || !strings.Contains(want, "/etc/opensm/opensm.conf binds OpenSM to port") {
		t.Errorf("logged %q, want %q twice", logged, want)
	}
}

// TestFabricTableNotReadIsNoSize: a fabric port whose P_Key table was not read is
// ibkey_fabric_pkey_table_unread with the reason and never a count that reads as "no
// keys": no valid-entry series, and a table size only when the size itself was read
// (NodeInfo PartitionCap, SwitchInfo PartitionEnforcementCap), never a 0 for a size not
// read (SwitchInfo or the port's PortInfo failed; --lid keeps no size for a table it did
// not read). A table that does not exist (a node that reports a length of 0, read by
// --lid) is what a sweep makes of it, an empty table: size 0, valid 0, not "not read".
func TestFabricTableNotReadIsNoSize(t *testing.T) {
	f := loadFabric(t, "small.json")
	port := func(node check.GUID, num int) *fabric.Port {
		p := f.Node(node).Port(num)
		if p == nil || p.PKeys == nil {
			t.Fatalf("small.json: no port %d of %s with a table", num, node)
		}
		return p
	}
	sw := port(0x200000, 7) // Switch1's cabled port 7
	sw.PKeys, sw.TableSize, sw.PKeysError = nil, 0, "table size unknown: SwitchInfo could not be read"
	hcaD := port(0x100009, 2)
	hcaD.PKeys, hcaD.TableSize, hcaD.Error = nil, 0, "PortInfo: timed out"
	hcaB := port(0x100003, 1)
	hcaB.PKeys, hcaB.PKeysError = nil, "P_KeyTable: timed out"
	c := NewFabricCollector(FabricOptions{NoCounters: true, Now: func() time.Time { return f.SweptAt }})
	serve(c, c.fromFabric(context.Background(), f, nil, nil))
	got := collect(t, c)
	for _, tc := range []struct {
		node, port string
		size       float64 // -1: no size series
		why        string
	}{
		{"Switch1", "7", -1, "table size unknown: SwitchInfo could not be read"},
		{"HcaD", "2", -1, "not read"},
		{"HcaB", "1", 64, "P_KeyTable: timed out"},
	} {
		id := []string{"node_name", tc.node, "port", tc.port}
		expect(t, got, 1, "ibkey_fabric_pkey_table_unread", append(id, "reason", tc.why)...)
		for _, name := range []string{"ibkey_fabric_pkey_table_valid_entries", "ibkey_fabric_pkey_entry_info"} {
			if n := len(find(got, name, id...)); n != 0 {
				t.Errorf("%s[%s]: %d %s series for a table not read", tc.node, tc.port, n, name)
			}
		}
		if tc.size < 0 {
			if s := find(got, "ibkey_fabric_pkey_table_size", id...); len(s) != 0 {
				t.Errorf("%s[%s]: table size %v, but the size was not read", tc.node, tc.port, s[0].value)
			}
		} else {
			expect(t, got, tc.size, "ibkey_fabric_pkey_table_size", id...)
		}
	}

	// --lid's records (viewRecord), of a table not read and of a table that does not
	// exist, as query.Fabric.Load gives them.
	view := func(num int, edit func(v *query.PortView)) *query.PortView {
		v := &query.PortView{
			Device: &ibverbs.Device{Name: "HcaX"}, Port: &ibverbs.Port{Num: num},
			Fabric: &query.FabricPort{NodeGUID: 0x300000, Addr: mad.LIDAddress(9)},
		}
		v.Device.NodeDesc.Value = "HcaX"
		edit(v)
		return v
	}
	recs := []*portRecord{
		viewRecord(view(1, func(v *query.PortView) { v.TableMissing = "P_KeyTable: timed out" })),
		viewRecord(view(2, func(v *query.PortView) {
			v.TableMissing, v.TableAbsent = "no P_Key table: the node reports a table length of 0", true
		})),
	}
	out := newSeriesSet()
	portSeries(out, recs)
	fams, err := out.families()
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, mf := range fams {
		for _, m := range mf.Metric {
			s := sample{name: mf.GetName(), labels: map[string]string{}, value: m.GetGauge().GetValue()}
			for _, l := range m.Label {
				s.labels[l.GetName()] = l.GetValue()
			}
			got = append(got, s)
		}
	}
	notRead, absent := []string{"node_name", "HcaX", "port", "1"}, []string{"node_name", "HcaX", "port", "2"}
	expect(t, got, 1, "ibkey_fabric_pkey_table_unread", append(notRead, "reason", "P_KeyTable: timed out")...)
	for _, name := range []string{"ibkey_fabric_pkey_table_size", "ibkey_fabric_pkey_table_valid_entries"} {
		if s := find(got, name, notRead...); len(s) != 0 {
			t.Errorf("--lid, a table not read: %s %v", name, s[0].value)
		}
	}
	expect(t, got, 0, "ibkey_fabric_pkey_table_size", absent...)
	expect(t, got, 0, "ibkey_fabric_pkey_table_valid_entries", absent...)
	if s := find(got, "ibkey_fabric_pkey_table_unread", absent...); len(s) != 0 {
		t.Errorf("--lid, a table that does not exist is reported not read: %v", s[0].labels)
	}
}

// TestFabricCountersByName: portSeries adds the counters' series in
// fabricCountersByName's order so that their families need no sorting: it must be every
// counter once, in name order.
func TestFabricCountersByName(t *testing.T) {
	var got, want []string
	for i, k := range fabricCountersByName {
		got, want = append(got, fabricCounters[k].counter.Name), append(want, fabricCounters[i].counter.Name)
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("fabricCountersByName gives %v, not every counter in name order %v", got, want)
	}
}

// TestFabricDownPortCounters: where a port's PMA PortCounters are read is query's one
// rule (query.MADPort.NoPortCounters), in a sweep and in --lid mode. A DOWN CA port's
// (the demo's "demo-node HCA-2" port 2) cannot be reached over the fabric (a CA
// answers PortCounters only for the port a MAD arrives on): not available, not
// unreadable, and not "no subnet manager has assigned a LID"; a switch's DOWN port is
// read at the switch's LID.
func TestFabricDownPortCounters(t *testing.T) {
	ctx := context.Background()
	tr, err := demo.OpenTransport("mlx5_0", 1, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	fab := &query.Fabric{T: tr, Via: demo.Via}
	hca2 := []string{"node_name", "demo-node HCA-2", "port", "2"}
	for _, sels := range [][]query.FabricSelector{nil, {
		{Addr: mad.LIDAddress(9), AllPorts: true},            // demo-node HCA-2
		{Addr: mad.LIDAddress(7), AllPorts: true},            // leaf02: ports 4 to 6 DOWN
		{Addr: mad.DirectedRoute(1), Port: 4, HasPort: true}, // leaf01
	}} {
		c := NewFabricCollector(FabricOptions{Fabric: fab, Interval: time.Minute, Selectors: sels})
		if err := c.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		got := collect(t, c)
		for _, name := range []string{query.RcvConstraintErrors, query.XmitConstraintErrors} {
			expect(t, got, 1, "ibkey_fabric_port_unavailable", append(hca2, "counter", name, "reason^", "port DOWN (demo-node HCA-2/2 is DOWN and has no LID of its own; a CA answers PMA PortCounters only for the port the MAD arrives on")...)
		}
		if u := find(got, "ibkey_fabric_port_unreadable", hca2...); len(u) != 0 {
			t.Errorf("selectors %v: HCA-2 port 2 unreadable: %v", sels, u)
		}
		if sels == nil {
			// The prefetch asked for every port the rule reads (TestPrefetchFollowsTheRule).
			if late := c.snap.Load().lateCounters; late != 0 {
				t.Errorf("sweep: %d PortCounters read after it, not prefetched", late)
			}
			continue
		}
		// A port's lid label is its own LID (port 2 has none; 9 is port 1's), a switch
		// port's the switch's, read at a LID or by directed route, as a sweep's.
		expect(t, got, 1, "ibkey_fabric_port_info", append(hca2, "lid", "0")...)
		expect(t, got, 1, "ibkey_fabric_port_info", "node_name", "leaf01", "port", "4", "lid", "2")
		for _, port := range []string{"4", "5", "6"} {
			leaf02 := []string{"node_name", "leaf02", "port", port, "lid", "7"}
			expect(t, got, 1, "ibkey_fabric_port_state_id", leaf02...)
			expect(t, got, 0, "ibkey_fabric_port_rcv_constraint_errors", leaf02...)
		}
	}
}

// TestSweepRecordsNoPortCounters: an ACTIVE CA port with LID 0 keeps its reason (no
// SM has assigned one: not read, a gap); a DOWN CA port is n/a over the fabric
// (Absent); a switch's DOWN port is read at the switch's LID.
func TestSweepRecordsNoPortCounters(t *testing.T) {
	f := loadFabric(t, "small.json")
	var ca, sw *fabric.Port
	for _, n := range f.Nodes {
		switch {
		case n.Description == "HcaB":
			ca = n.Port(1)
		case n.Description == "Switch1":
			sw = n.Port(1)
		}
	}
	ca.LID, sw.State = 0, check.StateDown
	byName := func() map[string]*portRecord {
		out := map[string]*portRecord{}
		for _, r := range sweepRecords(f, nil) {
			out[r.labels[1]+"/"+r.labels[2]] = r
		}
		return out
	}
	recs := byName()
	if r := recs["HcaB/1"]; r.noPMA != (query.Reading{Unavailable: noLID}) {
		t.Errorf("ACTIVE CA port, LID 0: %+v", r.noPMA)
	}
	if r := recs["Switch1/1"]; r.noPMA.Unavailable != "" || r.pma.LID == 0 {
		t.Errorf("DOWN switch port: lid %d, %+v", r.pma.LID, r.noPMA)
	}
	ca.State = check.StateDown
	if r := byName()["HcaB/1"]; !r.noPMA.Absent || !strings.HasPrefix(r.noPMA.Unavailable, "port DOWN (HcaB/1 is DOWN and has no LID") {
		t.Errorf("DOWN CA port: %+v", r.noPMA)
	}
}

// TestSweepRecordsLIDNotRead: a LID that was not read (the port's PortInfo failed; a
// switch's port 0's, whose LID is every port's) is not a LID no subnet manager
// assigned: the PortCounters are unreadable with that reason (a gap, not Absent) and the
// lid label is empty, never "0". Before, both read as "no subnet manager has assigned
// one yet", lid "0".
func TestSweepRecordsLIDNotRead(t *testing.T) {
	f := loadFabric(t, "small.json")
	for _, n := range f.Nodes {
		num, ok := map[string]int{"HcaB": 1, "Switch1": 0}[n.Description]
		if p := n.Port(num); ok && p != nil {
			p.Error, p.LID, p.State = "PortInfo: timed out", 0, ""
		}
	}
	recs := map[string]*portRecord{}
	for _, r := range sweepRecords(f, nil) {
		recs[r.labels[1]+"/"+r.labels[2]] = r
	}
	for _, name := range []string{"HcaB/1", "Switch1/0", "Switch1/1"} {
		r := recs[name]
		if r == nil || r.labels[3] != "" || r.noPMA.Absent || r.noPMA.Unavailable != "LID not read (PMA PortCounters are LID-routed): PortInfo: timed out" {
			t.Errorf("%s: %+v", name, r)
		}
	}
	if r := recs["HcaA/1"]; r == nil || r.labels[3] == "" || r.noPMA.Unavailable != "" {
		t.Errorf("HcaA/1, its LID read: %+v", r)
	}
}

// TestPrefetchFollowsTheRule: the PortCounters prefetched during a sweep
// (portInfoTap.pmaPorts) are those sweepRecords reads by query's one rule
// (query.MADPort.NoPortCounters), at the same LIDs, on generated fabrics: CA, router and
// switch ports in every PortState, with and without LIDs (a switch's port 0's too),
// some PortInfo reads failed. The only ports the prefetch cannot ask for are those
// whose PortInfo the tap never saw.
func TestPrefetchFollowsTheRule(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 2))
	states := []mad.PortState{mad.PortStateDown, mad.PortStateInit, mad.PortStateArmed, mad.PortStateActive}
	for round := range 30 {
		f := fabrictest.FatTree(3, 2, 3)
		tap := newPortInfoTap(nil)
		var infos []tappedPortInfo
		noInfo := map[query.PMAPort]bool{}
		for _, n := range f.Nodes {
			at := tapAddr{path: n.GUID.String()}
			isSwitch := n.Type == check.NodeSwitch
			if !isSwitch && rng.IntN(4) == 0 {
				n.Type = check.NodeRouter
			}
			tap.nodeAt[at] = tappedNode{guid: n.GUID, isSwitch: isSwitch}
			for _, p := range n.Ports {
				st := states[rng.IntN(len(states))]
				if isSwitch && p.Num == 0 {
					st = mad.PortStateActive
				}
				p.State, p.LID = stateName(st), uint16(rng.IntN(3))*uint16(1+rng.IntN(100))
				if isSwitch && p.Num > 0 {
					p.LID = 0 // PortInfo of a switch's external port: no LID of its own
					if p.Peer == nil && st >= mad.PortStateInit {
						p.Peer = &check.PortID{Node: 1, Port: 1} // a link: the sweep probed it
					} else if st == mad.PortStateDown {
						p.Peer = nil
					}
				}
				if rng.IntN(10) == 0 { // PortInfo not read: the tap saw nothing
					p.Error, p.State, p.LID = "PortInfo: timeout", "", 0
					continue
				}
				infos = append(infos, tappedPortInfo{at: at, port: p.Num, lid: p.LID, state: st})
			}
		}
		rule := map[query.PMAPort]bool{}
		for _, r := range sweepRecords(f, nil) {
			if r.noPMA.Unavailable == "" {
				k := r.pma
				rule[k] = true
				if f.Node(r.id.Node).Port(r.id.Port).Error != "" {
					noInfo[k] = true
				}
			}
		}
		got := map[query.PMAPort]bool{}
		for _, k := range tap.pmaPorts(infos) {
			got[k] = true
			if !rule[k] {
				t.Errorf("round %d: prefetch reads %+v, which the rule does not", round, k)
			}
		}
		for k := range rule {
			if !got[k] && !noInfo[k] {
				t.Errorf("round %d: the rule reads %+v, the prefetch does not (its PortInfo was seen)", round, k)
			}
		}
	}
}

// stateName is the sweep's name of a PortState (query's stateName).
func stateName(s mad.PortState) string {
	return map[mad.PortState]string{mad.PortStateDown: check.StateDown, mad.PortStateInit: check.StateInit,
		mad.PortStateArmed: check.StateArmed, mad.PortStateActive: check.StateActive}[s]
}

// TestInfoSeriesAreOne: a series named _info is metadata in its labels, value 1
// (Prometheus naming: foobar_build_info; OpenMetrics info), so that joins on it
// (* on (...) group_left) do not scale the other side. The findings of a port are
// counts: a port missing two keys of the file has two partitions-missing-key findings,
// as ibkey_fabric_port_findings 2 (it was ibkey_fabric_port_finding_info 2).
func TestInfoSeriesAreOne(t *testing.T) {
	f := loadFabric(t, "small.json")
	var hcaB *fabric.Port
	for _, n := range f.Nodes {
		if n.Description == "HcaB" {
			hcaB = n.Port(1)
		}
	}
	for i, k := range hcaB.PKeys {
		if k.Partition() != 0x7fff {
			hcaB.PKeys[i] = 0 // HcaB keeps only the default: storage and compute missing
		}
	}
	conf, err := os.ReadFile("testdata/partitions.conf")
	if err != nil {
		t.Fatal(err)
	}
	c := NewFabricCollector(FabricOptions{NoCounters: true, Partitions: partconf.Parse("partitions.conf", conf), Now: func() time.Time { return f.SweptAt }})
	serve(c, c.fromFabric(context.Background(), f, nil, nil))
	got := collect(t, c)
	expect(t, got, 2, "ibkey_fabric_port_findings", "node_name", "HcaB", "port", "1", "rule", "partitions-missing-key")
	got = append(got, collect(t, newHostCollector(writeHost(t, fakesysfs.MLX5()), &fakeClock{time.Unix(0, 0)}, nil))...)
	for _, s := range got {
		if strings.HasSuffix(s.name, "_info") && s.value != 1 {
			t.Errorf("%s%v = %v: an _info series is 1", s.name, s.labels, s.value)
		}
	}
}
