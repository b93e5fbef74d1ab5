package watch

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/ibverbs/verbs"
	"github.com/ibkey/ibkey/internal/query"
)

// fakeVerbs is a libibverbs with devices whose Q_Key violation counter goes up by
// Step at every ibv_query_port, as traffic with a wrong Q_Key would raise it.
type fakeVerbs struct {
	mu     sync.Mutex
	devs   map[string]*fakeDevice
	opened []string
	closed bool
}

type fakeDevice struct {
	lib        *fakeVerbs
	bad, qviol uint32
	step       uint32
	closed     bool
}

func newFakeVerbs(names ...string) *fakeVerbs {
	f := &fakeVerbs{devs: map[string]*fakeDevice{}}
	for _, n := range names {
		f.devs[n] = &fakeDevice{lib: f, bad: 7, qviol: 100, step: 3}
	}
	return f
}

func (f *fakeVerbs) OpenDevice(name string) (query.VerbsDevice, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d, ok := f.devs[name]
	if !ok {
		return nil, fmt.Errorf("verbs: %s: %w", name, verbs.ErrNoDevice)
	}
	f.opened = append(f.opened, name)
	return d, nil
}

func (f *fakeVerbs) Close() error { f.mu.Lock(); f.closed = true; f.mu.Unlock(); return nil }

func (d *fakeDevice) QueryPort(port int) (verbs.PortAttr, error) {
	d.lib.mu.Lock()
	defer d.lib.mu.Unlock()
	if port != 1 {
		return verbs.PortAttr{}, &verbs.CallError{Call: "ibv_query_port", Errno: errors.New("invalid argument")}
	}
	a := verbs.PortAttr{State: 4, BadPKeyCntr: d.bad, QKeyViolCntr: d.qviol, LinkLayer: 1}
	d.qviol += d.step
	return a, nil
}

func (*fakeDevice) QueryDevice() (verbs.DeviceAttr, error) {
	return verbs.DeviceAttr{}, errors.New("ibv_query_device: not in this fake")
}

func (d *fakeDevice) Close() error { d.closed = true; return nil }

// verbsRoot is `ibkey watch counters` whose verbs source is src (the test's libibverbs,
// or none), and whose umad transport fails the test when it is opened.
func verbsRoot(t *testing.T, src func() *query.VerbsCounters) cmdtest.Root {
	return cmdtest.WithCommands(func(f *cmdutil.Factory) *cobra.Command {
		w := &cobra.Command{Use: "watch"}
		w.AddCommand(NewCmdCounters(f, func(o *CountersOptions) error {
			o.Verbs = func(h *query.Host) *query.VerbsCounters { return src() }
			o.MAD.OpenUmad = func(dev string, port int, _ mad.UmadOptions) (mad.Transport, error) {
				t.Errorf("umad opened on %s/%d: a RoCE port has no SMPs to send", dev, port)
				return nil, errors.New("umad must not be opened here")
			}
			return runCounters(o)
		}))
		return w
	})
}

// TestWatchCountersVerbs: the violation counters of local ports come from verbs, for any
// user, labelled "verbs" in JSON and plain lines, with deltas across samples; M_Key
// violations, which verbs do not have, stay PortInfo's (n/a without a transport, with
// both reasons).
func TestWatchCountersVerbs(t *testing.T) {
	dir := watchTree(t)
	lib := newFakeVerbs("mlx5_0")
	root := verbsRoot(t, func() *query.VerbsCounters { return query.NewVerbsCounters(lib, nil) })
	r := cmdtest.Run(t, root, false, nil, "--sysfs", dir, "watch", "counters", "mlx5_0/1", "--count", "2", "--interval", "10ms", "-o", "json", "--all-counters")
	if r.Code != 4 || !strings.Contains(r.Stderr, "warning: mkey_violations not read on 1 port") { // M_Key violations: PortInfo's only
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	var samples []sampleJSON
	for _, l := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		var s sampleJSON
		if err := json.Unmarshal([]byte(l), &s); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		samples = append(samples, s)
	}
	if len(samples) != 2 || len(samples[1].Ports) != 1 {
		t.Fatalf("samples: %+v", samples)
	}
	c := samples[1].Ports[0].Counters
	q, p, m := c["qkey_violations"], c["pkey_violations"], c["mkey_violations"]
	if q.Source != "verbs" || q.Value == nil || *q.Value != 103 || q.Delta == nil || *q.Delta != 3 {
		t.Errorf("qkey_violations: %+v, want verbs 103 (+3)", q)
	}
	if p.Source != "verbs" || p.Value == nil || *p.Value != 7 || p.Delta == nil || *p.Delta != 0 {
		t.Errorf("pkey_violations: %+v, want verbs 7 (+0)", p)
	}
	if m.Value != nil || m.Source != query.SourcePortInfo || !strings.Contains(m.Unavailable, "verbs: not in ibv_query_port") || !strings.Contains(m.Unavailable, "needs fabric access") {
		t.Errorf("mkey_violations: %+v, want n/a naming verbs and PortInfo", m)
	}
	if s := c["symbol_error"]; s.Source != "sysfs" || s.Value == nil {
		t.Errorf("symbol_error: %+v, want sysfs", s)
	}
	if !lib.closed || !lib.devs["mlx5_0"].closed {
		t.Errorf("the verbs device and library were not closed")
	}

	r = cmdtest.Run(t, root, false, nil, "--sysfs", dir, "watch", "counters", "mlx5_0/1", "--once")
	want := regexp.MustCompile(`^\S+ mlx5_0/1 ACTIVE port_rcv_constraint_errors=0 port_xmit_constraint_errors=0 pkey_violations=7\(verbs\) qkey_violations=\d+\(verbs\)\n$`)
	if r.Code != 0 || !want.MatchString(r.Stdout) || strings.Contains(r.Stderr, "n/a") {
		t.Errorf("--once: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r = cmdtest.Run(t, root, false, nil, "--sysfs", dir, "watch", "counters", "mlx5_0/1", "--count", "2", "--interval", "10ms")
	if r.Code != 0 || !regexp.MustCompile(` qkey_violations=\d+\(\+3,[0-9.]+/s,verbs\)\n$`).MatchString(r.Stdout) {
		t.Errorf("--count 2: exit %d\n%s", r.Code, r.Stdout)
	}

	// A device libibverbs does not list (a port of another kernel's tree): n/a naming
	// both sources, never 0.
	lib2 := newFakeVerbs()
	root2 := verbsRoot(t, func() *query.VerbsCounters { return query.NewVerbsCounters(lib2, nil) })
	r = cmdtest.Run(t, root2, false, nil, "--sysfs", dir, "watch", "counters", "mlx5_0/2", "--once", "-o", "json")
	var s sampleJSON
	if err := json.Unmarshal([]byte(r.Stdout), &s); err != nil || r.Code != 4 {
		t.Fatalf("exit %d, %v: %s", r.Code, err, r.Stdout)
	}
	if q := s.Ports[0].Counters["qkey_violations"]; q.Value != nil || !strings.Contains(q.Unavailable, "mlx5_0 is not a verbs device here") || !strings.Contains(q.Unavailable, "smp portinfo: needs fabric access") {
		t.Errorf("no such verbs device: %+v", q)
	}
}

// TestWatchCountersVerbsAbsent: without libibverbs (or in the static build) the
// violation counters are n/a with the reason, on stdout and once on stderr, never 0.
func TestWatchCountersVerbsAbsent(t *testing.T) {
	dir := watchTree(t)
	why := &verbs.UnavailableError{Reason: "cannot load libibverbs.so.1 (install libibverbs1 / rdma-core): libibverbs.so.1: cannot open shared object file"}
	root := verbsRoot(t, func() *query.VerbsCounters { return query.NewVerbsCounters(nil, why) })
	r := cmdtest.Run(t, root, false, nil, "--sysfs", dir, "watch", "counters", "mlx5_0/1", "--once")
	want := `pkey_violations=n/a(verbs:_verbs_unavailable:_cannot_load_libibverbs.so.1) qkey_violations=n/a(verbs:_verbs_unavailable:_cannot_load_libibverbs.so.1)`
	if r.Code != 4 || !strings.Contains(r.Stdout, want) {
		t.Errorf("exit %d: %s\nwant %s", r.Code, r.Stdout, want)
	}
	if !strings.Contains(r.Stderr, "note: pkey_violations: n/a: verbs: verbs unavailable: cannot load libibverbs.so.1 (install libibverbs1 / rdma-core)") || !strings.Contains(r.Stderr, "smp portinfo: needs fabric access") {
		t.Errorf("stderr: %s", r.Stderr)
	}
	// A RoCE port has no PortInfo at all: that is the reason, not fabric access.
	r = cmdtest.Run(t, root, false, nil, "--sysfs", mlx5, "watch", "counters", "mlx5_0/1", "mlx5_2/1", "--once")
	roce := `mlx5_2/1 ACTIVE port_rcv_constraint_errors=n/a(no_PMA_counters) port_xmit_constraint_errors=n/a(no_PMA_counters) pkey_violations=n/a(verbs:_verbs_unavailable:_cannot_load_libibverbs.so.1) qkey_violations=n/a(verbs:_verbs_unavailable:_cannot_load_libibverbs.so.1)`
	if r.Code != 4 || !strings.Contains(r.Stdout, roce) || !strings.Contains(r.Stderr, "smp portinfo: no PortInfo: the Ethernet link layer has no QP0") || !strings.Contains(r.Stderr, "smp portinfo: needs fabric access") {
		t.Errorf("RoCE and IB ports without verbs: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// TestWatchCountersCaRoCE: --ca on a RoCE port does not try SMPs (no QP0): it says what
// the port supports and watches with verbs and sysfs, exit 0.
func TestWatchCountersCaRoCE(t *testing.T) {
	lib := newFakeVerbs("mlx5_2")
	root := verbsRoot(t, func() *query.VerbsCounters { return query.NewVerbsCounters(lib, nil) })
	r := cmdtest.Run(t, root, false, nil, "--sysfs", mlx5, "watch", "counters", "--ca", "mlx5_2", "mlx5_2/1", "--once", "-o", "json")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	for _, w := range []string{"mlx5_2/1: a port on the Ethernet link layer (RoCE or iWARP) has no QP0", "violation counters: from verbs"} {
		if !strings.Contains(r.Stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, r.Stderr)
		}
	}
	var s sampleJSON
	if err := json.Unmarshal([]byte(r.Stdout), &s); err != nil {
		t.Fatal(err)
	}
	q := s.Ports[0].Counters["qkey_violations"]
	if q.Source != "verbs" || q.Value == nil || *q.Value != 100 {
		t.Errorf("qkey_violations: %+v", q)
	}
	if c := s.Ports[0].Counters["port_rcv_constraint_errors"]; c.Value != nil || !strings.Contains(c.Unavailable, "no PMA counters") {
		t.Errorf("port_rcv_constraint_errors: %+v", c)
	}
}

// TestWatchCountersCaNoUmad: --ca on an InfiniBand port whose umad device cannot be
// opened (no root: EACCES) watches with verbs and sysfs, saying so, instead of exit 3;
// M_Key violations (PortInfo's only) are n/a with umad's reason. Without a verbs source
// (a saved tree, the demo host), and for a --ca port that does not exist, umad's error
// stands (exit 3).
func TestWatchCountersCaNoUmad(t *testing.T) {
	dir := watchTree(t)
	denied := fmt.Errorf("umad: open /dev/infiniband/umad0: %w (umad needs root or the rdma group)", os.ErrPermission)
	rootWith := func(src func() *query.VerbsCounters) cmdtest.Root {
		return cmdtest.WithCommands(func(f *cmdutil.Factory) *cobra.Command {
			w := &cobra.Command{Use: "watch"}
			w.AddCommand(NewCmdCounters(f, func(o *CountersOptions) error {
				o.Verbs = func(h *query.Host) *query.VerbsCounters { return src() }
				o.MAD.OpenUmad = func(string, int, mad.UmadOptions) (mad.Transport, error) { return nil, denied }
				return runCounters(o)
			}))
			return w
		})
	}
	lib := newFakeVerbs("mlx5_0")
	root := rootWith(func() *query.VerbsCounters { return query.NewVerbsCounters(lib, nil) })
	r := cmdtest.Run(t, root, false, nil, "--sysfs", dir, "watch", "counters", "--ca", "mlx5_0", "mlx5_0/1", "--once", "-o", "json", "--all-counters")
	if r.Code != 4 { // M_Key violations not read (umad's reason)
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	for _, w := range []string{"mlx5_0/1: MADs unavailable (umad: open /dev/infiniband/umad0: permission denied", "violation counters: from verbs"} {
		if !strings.Contains(r.Stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, r.Stderr)
		}
	}
	var s sampleJSON
	if err := json.Unmarshal([]byte(r.Stdout), &s); err != nil {
		t.Fatal(err)
	}
	c := s.Ports[0].Counters
	if q := c["qkey_violations"]; q.Source != "verbs" || q.Value == nil || *q.Value != 100 {
		t.Errorf("qkey_violations: %+v, want 100 from verbs", q)
	}
	if m := c["mkey_violations"]; m.Value != nil || !strings.Contains(m.Unavailable, "umad unavailable: umad: open /dev/infiniband/umad0: permission denied") {
		t.Errorf("mkey_violations: %+v, want n/a with umad's reason", m)
	}
	if sy := c["symbol_error"]; sy.Source != "sysfs" || sy.Value == nil {
		t.Errorf("symbol_error: %+v, want sysfs", sy)
	}

	// No verbs source: nothing answers the violation counters; umad's error stands.
	r = cmdtest.Run(t, rootWith(func() *query.VerbsCounters { return nil }), false, nil, "--sysfs", dir, "watch", "counters", "--ca", "mlx5_0", "--once")
	if r.Code != 3 || !strings.Contains(r.Stderr, "permission denied") {
		t.Errorf("no verbs: exit %d, stderr %q; want 3 and umad's error", r.Code, r.Stderr)
	}
	// A --ca port that does not exist is not watched with other sources.
	r = cmdtest.Run(t, root, false, nil, "--sysfs", dir, "watch", "counters", "--ca", "mlx5_9", "--once")
	if r.Code != 3 {
		t.Errorf("--ca mlx5_9: exit %d, stderr %q; want 3", r.Code, r.Stderr)
	}
}
