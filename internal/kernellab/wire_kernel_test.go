package kernellab_test

import (
	"bufio"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The commands wired to the real kernel: ibkey watch counters reads the violation
// counters through verbs (any user), --ca on the RoCE port falls back instead of
// failing, and can-talk and decode qkey name the Q_Key rule rxe follows.

type watchCounter struct {
	Value       *uint64 `json:"value"`
	Delta       *uint64 `json:"delta"`
	Source      string  `json:"source"`
	Unavailable string  `json:"unavailable"`
}

type watchSample struct {
	Ports []struct {
		Device   string                  `json:"device"`
		Port     int                     `json:"port"`
		Counters map[string]watchCounter `json:"counters"`
	} `json:"ports"`
}

// watchOnce reads a `watch counters --once -o json` result: the counters of rxe0/1.
func watchOnce(t *testing.T, name string) map[string]watchCounter {
	t.Helper()
	var s watchSample
	decodeJSON(t, name, mustSucceed(t, name), &s)
	if len(s.Ports) != 1 || s.Ports[0].Device != dev {
		t.Fatalf("%s: ports %+v, want rxe0/1 only", name, s.Ports)
	}
	return s.Ports[0].Counters
}

// verbsValue is a counter read through verbs, failing when it is not.
func verbsValue(t *testing.T, name string, cs map[string]watchCounter, counter string) uint64 {
	t.Helper()
	c := cs[counter]
	if c.Source != "verbs" || c.Value == nil {
		t.Fatalf("%s: %s = %+v, want a value from verbs", name, counter, c)
	}
	return *c.Value
}

// TestIbkeyWatchVerbsOnKernel: `ibkey watch counters --once` shows the P_Key/Q_Key
// violation counters from verbs, as root and as uid 65534, equal to ibv_devinfo -v and
// to what the traffic tool saw around the Q_Key table; the static flavour says why it
// cannot.
func TestIbkeyWatchVerbsOnKernel(t *testing.T) {
	root := watchOnce(t, "ibkey_watch")
	dv := devinfoPort(t, "devinfo_root")
	if q, p := verbsValue(t, "ibkey_watch", root, "qkey_violations"), verbsValue(t, "ibkey_watch", root, "pkey_violations"); q != dv["qkey_viol_cntr"] || p != dv["bad_pkey_cntr"] {
		t.Errorf("root: ibkey qkey %d pkey %d, ibv_devinfo %v", q, p, dv)
	}
	table := parseTraffic(t, "qkey_table")
	first, last := table[qkeyCases[0].Name], table[qkeyCases[len(qkeyCases)-1].Name]
	before := watchOnce(t, "ibkey_watch_nobody")
	after := watchOnce(t, "ibkey_watch_nobody_after_table")
	b, a := verbsValue(t, "ibkey_watch_nobody", before, "qkey_violations"), verbsValue(t, "ibkey_watch_nobody_after_table", after, "qkey_violations")
	da := devinfoPort(t, "devinfo_after_table")
	if b != uint64(first.QViolBefore) || a != uint64(last.QViolAfter) || a != da["qkey_viol_cntr"] {
		t.Errorf("uid 65534: ibkey qkey_violations %d before and %d after the table; the traffic tool saw %d and %d, ibv_devinfo %d after",
			b, a, first.QViolBefore, last.QViolAfter, da["qkey_viol_cntr"])
	}
	drops := 0
	for _, c := range qkeyCases {
		if !c.Kernel {
			drops++
		}
	}
	t.Logf("uid 65534: ibkey watch counters --once: qkey_violations %d before the Q_Key table, %d after (+%d; %d cases dropped)", b, a, a-b, drops)
	if a-b < uint64(drops) {
		t.Errorf("qkey_violations moved by %d across the table, which dropped %d datagrams", a-b, drops)
	}
	plain := mustSucceed(t, "ibkey_watch_plain_nobody")
	want := regexp.MustCompile(` pkey_violations=` + strconv.FormatUint(da["bad_pkey_cntr"], 10) + `\(verbs\) qkey_violations=` + strconv.FormatUint(a, 10) + `\(verbs\)\n$`)
	if !want.MatchString(plain) || !strings.Contains(plain, "port_rcv_constraint_errors=n/a(no_PMA_counters)") {
		t.Errorf("plain line as uid 65534: %q, want %s", plain, want)
	}
	// The static flavour cannot load libibverbs: the port has the violation counters
	// (verbs reads them above), this ibkey did not read them, so it exits 4 and says
	// which (rule 1: not read is never exit 0).
	sr := result(t, "ibkey_watch_static")
	if sr.Exit != 4 || !strings.Contains(sr.Stderr, "warning: pkey_violations, qkey_violations not read on 1 port") {
		t.Errorf("ibkey_static: exit %d, want 4 with the counters not read named; stderr:\n%s", sr.Exit, sr.Stderr)
	}
	var ss watchSample
	decodeJSON(t, "ibkey_watch_static", sr.Stdout, &ss)
	if len(ss.Ports) != 1 {
		t.Fatalf("ibkey_static: ports %+v, want rxe0/1 only", ss.Ports)
	}
	if q := ss.Ports[0].Counters["qkey_violations"]; q.Value != nil || !strings.Contains(q.Unavailable, "static flavour") || !strings.Contains(q.Unavailable, "no PortInfo: the Ethernet link layer has no QP0") {
		t.Errorf("ibkey_static: qkey_violations %+v, want n/a naming the static flavour and the missing PortInfo of a RoCE port", q)
	}
}

// TestIbkeyWatchStreamOnKernel: ibkey watch counters, sampling every 500 ms as uid
// 65534 while traffic with three Q_Key drops runs, shows deltas that add up to 3 on
// qkey_violations and 0 on pkey_violations, from verbs.
func TestIbkeyWatchStreamOnKernel(t *testing.T) {
	r := result(t, "ibkey_watch_stream_nobody")
	if r.Exit != 0 || !strings.Contains(r.Stderr, "traffic exit 0") {
		t.Fatalf("exit %d\nstderr: %s", r.Exit, r.Stderr)
	}
	var samples []watchSample
	sc := bufio.NewScanner(strings.NewReader(r.Stdout))
	for sc.Scan() {
		var s watchSample
		decodeJSON(t, "ibkey_watch_stream_nobody", sc.Text(), &s)
		samples = append(samples, s)
	}
	if len(samples) < 3 {
		t.Fatalf("%d samples, want at least 3:\n%s\n%s", len(samples), r.Stdout, r.Stderr)
	}
	var qsum, psum uint64
	for i, s := range samples {
		if len(s.Ports) != 1 {
			t.Fatalf("sample %d: %+v", i, s)
		}
		q, p := s.Ports[0].Counters["qkey_violations"], s.Ports[0].Counters["pkey_violations"]
		if q.Source != "verbs" || p.Source != "verbs" || q.Value == nil {
			t.Fatalf("sample %d: qkey %+v pkey %+v, want verbs", i, q, p)
		}
		switch {
		case i == 0 && (q.Delta != nil || p.Delta != nil):
			t.Errorf("first sample has deltas: %+v %+v", q, p)
		case i > 0 && (q.Delta == nil || p.Delta == nil):
			t.Fatalf("sample %d has no delta: %+v %+v", i, q, p)
		case i > 0:
			qsum += *q.Delta
			psum += *p.Delta
		}
	}
	t.Logf("ibkey watch counters as uid 65534 across traffic (3 Q_Key drops): %d samples, qkey_violations deltas add up to %d, pkey_violations to %d; watch: %s",
		len(samples), qsum, psum, strings.TrimSpace(tail(r.Stderr, 1)))
	if qsum != 3 || psum != 0 {
		t.Errorf("deltas: qkey %d (want 3), pkey %d (want 0)\n%s\n%s", qsum, psum, r.Stdout, r.Stderr)
	}
}

// TestIbkeyWatchCaRoCEOnKernel: --ca rxe0 exits 0, says the port has no QP0 and where
// the counters come from instead, and shows them from verbs.
func TestIbkeyWatchCaRoCEOnKernel(t *testing.T) {
	r := result(t, "ibkey_watch_ca")
	if r.Exit != 0 || !strings.Contains(r.Stderr, "has no QP0") || !strings.Contains(r.Stderr, "violation counters: from verbs") {
		t.Fatalf("watch counters --ca rxe0: exit %d\nstderr: %s", r.Exit, r.Stderr)
	}
	cs := watchOnce(t, "ibkey_watch_ca")
	verbsValue(t, "ibkey_watch_ca", cs, "qkey_violations")
	p := result(t, "ibkey_watch_ca_plain")
	if p.Exit != 0 || !strings.Contains(p.Stdout, "(verbs)") {
		t.Errorf("plain: exit %d %q", p.Exit, p.Stdout)
	}
	t.Logf("watch counters --ca rxe0 --once -o plain (exit %d):\n%s%s", p.Exit, p.Stdout, p.Stderr)
}

// TestIbkeyQKeyRuleOnKernel: can-talk names the rule it applied to the rxe port
// (verbatim, from the tree this kernel wrote) and, for bare keys, that the rule it
// cannot know decides (UNKNOWN);
// decode qkey states the device dependence and the measured privilege.
func TestIbkeyQKeyRuleOnKernel(t *testing.T) {
	type side struct {
		Rule   string `json:"qkey_rule"`
		Reason string `json:"qkey_rule_reason"`
	}
	var v struct {
		Reasons []string `json:"reasons"`
		A, B    side
		AToB    struct {
			OK bool `json:"ok"`
		} `json:"a_to_b"`
	}
	decodeJSON(t, "ibkey_cantalk_qkey", result(t, "ibkey_cantalk_qkey").Stdout, &v)
	if v.A.Rule != "verbatim" || v.B.Rule != "verbatim" || !strings.Contains(strings.Join(v.Reasons, " "), "(verbatim): rxe0 is a software RoCE device (rdma_rxe on dummy0)") {
		t.Errorf("can-talk on rxe0: a %+v b %+v reasons %q", v.A, v.B, v.Reasons)
	}
	plain := result(t, "ibkey_cantalk_qkey_plain")
	if plain.Exit != 1 || !strings.Contains(plain.Stdout, "Q_Key send rule of") || !strings.Contains(plain.Stdout, "verbatim") {
		t.Errorf("can-talk (plain, uid 65534): exit %d\n%s%s", plain.Exit, plain.Stdout, plain.Stderr)
	}
	// The same Q_Keys as bare keys name no device: the IBA rule would deliver, and
	// this kernel's rxe0 (above) drops, so the answer is not known (exit 4), never
	// the YES the assumed IBA rule alone gives.
	bare := result(t, "ibkey_cantalk_bare")
	var b struct {
		Reasons []string `json:"reasons"`
		A       side
		AToB    struct {
			OK *bool `json:"ok"` // null: not known
		} `json:"a_to_b"`
	}
	decodeJSON(t, "ibkey_cantalk_bare", bare.Stdout, &b)
	reasons := strings.Join(b.Reasons, " ")
	if bare.Exit != 4 || b.A.Rule != "iba-assumed" || b.AToB.OK != nil || !strings.Contains(reasons, "(iba-assumed): no device given") ||
		!strings.Contains(reasons, "a device that sends the wr_qkey verbatim (Linux's rdma_rxe) sends 0x80000011, which B (0xffff) drops") {
		t.Errorf("can-talk with bare keys: exit %d, a %+v, reasons %q", bare.Exit, b.A, b.Reasons)
	}
	var d struct {
		QKeys []struct {
			Value string   `json:"value"`
			Notes []string `json:"notes"`
		} `json:"qkeys"`
	}
	decodeJSON(t, "ibkey_decode_qkey", mustSucceed(t, "ibkey_decode_qkey"), &d)
	for _, q := range d.QKeys {
		notes := strings.Join(q.Notes, " ")
		for _, w := range []string{"depends on the device", "rdma_rxe sends this value verbatim", "fails with EPERM", "reaches QP1 with the GSI Q_Key 0x80010000"} {
			if !strings.Contains(notes, w) {
				t.Errorf("decode qkey %s: notes lack %q: %q", q.Value, w, q.Notes)
			}
		}
	}
	t.Logf("can-talk on rxe0 as uid 65534 (exit %d):\n%s", plain.Exit, plain.Stdout)
}

// TestIbkeyExporterVerbsOnKernel: the exporter's host mode, as uid 65534, exports the
// P_Key/Q_Key violation counters of rxe0 through verbs with the values ibv_devinfo
// shows (no traffic runs between the two), and --once exits 0: nothing is left unread
// (rdma_rxe counts both keys' violations on its Ethernet link layer).
func TestIbkeyExporterVerbsOnKernel(t *testing.T) {
	r := result(t, "ibkey_exporter_once_nobody")
	dv := devinfoPort(t, "devinfo_after_table")
	for _, want := range []string{
		fmt.Sprintf("\nibkey_port_qkey_violations{device=%q,port=%q,source=\"verbs\"} %d\n", dev, port, dv["qkey_viol_cntr"]),
		fmt.Sprintf("\nibkey_port_pkey_violations{device=%q,port=%q,source=\"verbs\"} %d\n", dev, port, dv["bad_pkey_cntr"]),
	} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("exporter --once lacks %q (exit %d)\n%s", strings.TrimSpace(want), r.Exit, r.Stderr)
		}
	}
	if r.Exit != 0 {
		t.Errorf("exporter --once: exit %d\n%s", r.Exit, r.Stderr)
	}
}
