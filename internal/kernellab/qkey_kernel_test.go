package kernellab_test

import (
	"bufio"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/ibverbs"
	"github.com/ibkey/ibkey/internal/query"
)

// qkeyCase is one UD send on rxe0/1: QPs A and B with Q_Keys A and B ("gsi": B is the
// port's QP1, whose Q_Key is 0x80010000), one datagram from From with work-request
// Q_Key WR. Kernel is what rdma_rxe on Linux 6.1 did (received, or for QP1 accepted:
// qkey_viol_cntr did not move), measured in this lab; the test checks it again in
// every boot and checks ibkey's verdict for the device against it. IBA is what the IBA
// rule predicts, to show where rxe departs from it.
type qkeyCase struct {
	Name       string
	A, B       string
	From       string // "a" or "b"
	WR         string
	Kernel     bool
	IBA        bool
	Controlled bool // a QP context holds a controlled Q_Key (root only)
}

var qkeyCases = []qkeyCase{
	{"match", "11", "11", "a", "11", true, true, false},
	{"match_back", "11", "11", "b", "11", true, true, false},
	{"wr_names_receiver", "11", "22", "a", "22", true, true, false},
	{"wr_names_neither", "11", "22", "a", "33", false, false, false},
	{"wr_names_sender", "11", "22", "a", "11", false, false, false},
	{"back_wr_names_receiver", "11", "22", "b", "11", true, true, false},
	{"back_wr_names_sender", "11", "22", "b", "22", false, false, false},
	{"top_bit_alone_same_ctx", "22", "22", "a", "80000000", false, true, false},
	{"top_bit_alone_other_ctx", "11", "22", "a", "80000000", false, false, false},
	{"top_bit_plus_ctx", "11", "11", "a", "80000011", false, true, false},
	{"top_bit_max", "7fffffff", "7fffffff", "a", "ffffffff", false, true, false},
	{"zero_qkeys", "0", "0", "a", "0", true, true, false},
	{"zero_ctx_top_bit", "0", "0", "a", "80000000", false, true, false},
	{"ipoib_qkey_back", "b1b", "b1b", "b", "b1b", true, true, false},
	{"controlled_match", "80000011", "80000011", "a", "80000011", true, true, true},
	{"controlled_match_back", "80000011", "80000011", "b", "80000011", true, true, true},
	{"controlled_wr_names_receiver", "80000011", "80000022", "a", "80000022", true, false, true},
	{"controlled_back_wr_names_receiver", "80000011", "80000022", "b", "80000011", true, false, true},
	{"controlled_sender_plain_wr", "80000011", "11", "a", "11", true, true, true},
	{"plain_sender_controlled_receiver", "11", "80000011", "a", "80000011", true, false, true},
	{"all_ones", "ffffffff", "ffffffff", "a", "ffffffff", true, true, true},
	{"gsi_wr_gsi_qkey", "11", "gsi", "a", "80010000", true, false, false},
	{"gsi_wr_own_qkey", "11", "gsi", "a", "11", false, false, false},
	{"gsi_ctx_gsi_qkey", "80010000", "gsi", "a", "80010000", true, true, true},
	{"gsi_wr_zero", "80010000", "gsi", "a", "0", false, false, true},
}

func qkeySpecs() string {
	var s []string
	for _, c := range qkeyCases {
		s = append(s, strings.Join([]string{c.Name, c.A, c.B, c.From, c.WR}, ","))
	}
	return strings.Join(s, " ")
}

// trafficResult is one line of qkeytraffic's output.
type trafficResult struct {
	Case        string `json:"case"`
	Error       string `json:"error"`
	QKeyA       string `json:"qkey_a"`
	QKeyB       string `json:"qkey_b"`
	From        string `json:"from"`
	WRQKey      string `json:"wr_qkey"`
	GSI         bool   `json:"gsi"`
	Sentinel    bool   `json:"sentinel"`
	Received    *bool  `json:"received"`
	QViolBefore uint32 `json:"qkey_viol_before"`
	QViolAfter  uint32 `json:"qkey_viol_after"`
	PViolBefore uint32 `json:"bad_pkey_before"`
	PViolAfter  uint32 `json:"bad_pkey_after"`
	CreateQKey  string `json:"create_qkey"`
	OK          bool   `json:"ok"`
	Step        string `json:"step"`
}

func parseTraffic(t *testing.T, name string) map[string]trafficResult {
	t.Helper()
	out := mustSucceed(t, name)
	m := map[string]trafficResult{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var r trafficResult
		decodeJSON(t, name, sc.Text(), &r)
		m[r.Case] = r
	}
	return m
}

// accepted is the kernel's verdict: received by a user QP, or for QP1 (whose receive
// ibkey cannot see) passed the Q_Key check, i.e. qkey_viol_cntr did not move.
func (r trafficResult) accepted() bool {
	if r.GSI {
		return r.QViolAfter == r.QViolBefore
	}
	return r.Received != nil && *r.Received
}

func parseQ(t *testing.T, s string) check.QKey {
	t.Helper()
	if s == "gsi" {
		return check.GSIQKey
	}
	q, err := check.ParseQKey(s)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// rxeRule is the Q_Key rule ibkey chooses for rxe0/1 from the sysfs tree the guest's
// kernel wrote (saved in the same boot: class/infiniband/rxe0 is not a symlink in the
// copy, so the fixture under testdata/sysfs/rxe, which keeps the symlink, is checked
// to be the same tree by TestFixtureMatchesKernel).
func rxeRule(t *testing.T) (check.QKeyRule, string) {
	t.Helper()
	h := &query.Host{Sys: ibverbs.Open(filepath.Join(repoRoot(), "testdata", "sysfs", "rxe"))}
	views, err := h.Load(query.Selector{Device: dev, Port: 1, HasPort: true}, query.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return query.QKeyRuleOf(h.Sys, views[0])
}

// TestQKeyTableAgainstKernel: for every case, the kernel's result (received or not,
// and qkey_viol_cntr moving by exactly one when not), the result recorded in the table,
// and ibkey's verdict for the direction under the rule it picks for rxe0 all agree.
func TestQKeyTableAgainstKernel(t *testing.T) {
	got := parseTraffic(t, "qkey_table")
	rule, why := rxeRule(t)
	if rule != check.QKeyRuleVerbatim {
		t.Fatalf("ibkey picks %v for rxe0 (%s), want the verbatim rule", rule, why)
	}
	var table strings.Builder
	fmt.Fprintf(&table, "%-34s %-9s %-9s %-4s %-9s | %-7s %-6s | %-6s %-6s\n", "case", "qkey A", "qkey B", "from", "wr_qkey", "kernel", "Δviol", "ibkey", "IBA")
	for _, c := range qkeyCases {
		r, ok := got[c.Name]
		switch {
		case !ok:
			t.Errorf("%s: no result from the guest", c.Name)
			continue
		case r.Error != "":
			t.Errorf("%s: the traffic tool failed: %s", c.Name, r.Error)
			continue
		case !r.Sentinel:
			t.Errorf("%s: the sentinel datagram never arrived: the result is not final", c.Name)
			continue
		}
		delta := r.QViolAfter - r.QViolBefore
		kernel := r.accepted()
		if kernel && delta != 0 || !kernel && delta != 1 {
			t.Errorf("%s: received=%v but qkey_viol_cntr moved by %d", c.Name, kernel, delta)
		}
		if r.PViolAfter != r.PViolBefore {
			t.Errorf("%s: bad_pkey_cntr moved (%d -> %d): the P_Key is 0xffff on both sides", c.Name, r.PViolBefore, r.PViolAfter)
		}
		if kernel != c.Kernel {
			t.Errorf("%s: the kernel %s it this time; the table says %v", c.Name, word(kernel, "accepted", "dropped"), c.Kernel)
		}

		// ibkey: the two endpoints as can-talk sees them, the device's rule on both.
		qa, qb, wr := parseQ(t, c.A), parseQ(t, c.B), parseQ(t, c.WR)
		a := check.QPEndpoint("rxe0/1 A", 0xffff, check.QPUD)
		b := check.QPEndpoint("rxe0/1 B", 0xffff, check.QPUD)
		a.QKey, b.QKey, a.QKeyRule, b.QKeyRule = &qa, &qb, rule, rule
		s, d := &a, &b
		if c.From == "b" {
			s, d = &b, &a
		}
		s.WRQKey = &wr
		v := check.CanTalk(*s, *d)
		ibkey := v.AToB.OK
		ibaS, ibaD := *s, *d
		ibaS.QKeyRule, ibaD.QKeyRule = check.QKeyRuleIBA, check.QKeyRuleIBA
		iba := check.CanTalk(ibaS, ibaD).AToB.OK
		if ibkey != kernel {
			t.Errorf("%s: ibkey says %v, the kernel %s it; reasons: %q", c.Name, ibkey, word(kernel, "accepted", "dropped"), v.AToB.Reasons)
		}
		if iba != c.IBA {
			t.Errorf("%s: the IBA rule gives %v, the table says %v", c.Name, iba, c.IBA)
		}
		if wr.Controlled() && !strings.Contains(strings.Join(v.AToB.Reasons, " "), "verbatim rule") {
			t.Errorf("%s: a top-bit wr_qkey, but the reasons do not name the rule: %q", c.Name, v.AToB.Reasons)
		}
		fmt.Fprintf(&table, "%-34s %-9s %-9s %-4s %-9s | %-7s %-6d | %-6s %-6s\n", c.Name, c.A, c.B, c.From, c.WR,
			word(kernel, "yes", "no"), delta, word(ibkey, "yes", "no"), word(iba, "yes", "no"))
	}
	t.Logf("Q_Key cases on rxe0 (rule: %s):\n%s", why, table.String())
}

func word(b bool, yes, no string) string {
	if b {
		return yes
	}
	return no
}

// TestQKeyCountersMatchDevinfo: the counter after the table, as ibv_devinfo -v prints
// it, equals what the traffic tool and ibkey's verbs reader (as nobody) saw.
func TestQKeyCountersMatchDevinfo(t *testing.T) {
	got := parseTraffic(t, "qkey_table")
	var last uint32
	for _, c := range qkeyCases {
		if r, ok := got[c.Name]; ok && r.QViolAfter > last {
			last = r.QViolAfter
		}
	}
	dv := devinfoPort(t, "devinfo_after_table")
	if dv["qkey_viol_cntr"] != uint64(last) {
		t.Errorf("ibv_devinfo qkey_viol_cntr = %d, the traffic tool's last reading %d", dv["qkey_viol_cntr"], last)
	}
	pv := probeVerbs(t, "probe_verbs_after_table")
	if pv.Port == nil || uint64(pv.Port.QKeyViolCntr) != dv["qkey_viol_cntr"] || uint64(pv.Port.BadPKeyCntr) != dv["bad_pkey_cntr"] {
		t.Errorf("ibkey's verbs reader (uid 65534) = %+v, ibv_devinfo %v", pv.Port, dv)
	}
}

// TestControlledQKeyPrivilege records what an unprivileged user may do with controlled
// Q_Keys on this kernel, and checks ibkey says the same.
func TestControlledQKeyPrivilege(t *testing.T) {
	create := func(name string) trafficResult {
		var r trafficResult
		decodeJSON(t, name, strings.TrimSpace(mustSucceed(t, name)), &r)
		return r
	}
	nc, ng, np, rc := create("priv_nobody_create_controlled"), create("priv_nobody_create_gsi"), create("priv_nobody_create_plain"), create("priv_root_create_controlled")
	t.Logf("uid 65534: modify_qp qkey=0x80000011: ok=%v %s %s; qkey=0x80010000: ok=%v %s %s; qkey=0x11: ok=%v; root qkey=0x80000011: ok=%v",
		nc.OK, nc.Step, nc.Error, ng.OK, ng.Step, ng.Error, np.OK, rc.OK)
	if !np.OK || !rc.OK {
		t.Fatalf("baseline: nobody with 0x11 ok=%v (%s), root with 0x80000011 ok=%v (%s)", np.OK, np.Error, rc.OK, rc.Error)
	}
	if nc.OK || !strings.Contains(nc.Error, "not permitted") {
		t.Errorf("uid 65534 set a controlled Q_Key in a QP context (ok=%v, %s): ibkey's notes say Linux refuses it", nc.OK, nc.Error)
	}
	d := check.DecodeQKey(0x80000011)
	if !strings.Contains(strings.Join(d.Notes, " "), "only privileged code may set it in a QP context") {
		t.Errorf("decode qkey 0x80000011 notes %q do not say a QP context needs privilege", d.Notes)
	}
	// Sending is another matter: the work request's Q_Key is not checked, and rxe puts it
	// on the wire verbatim, so an unprivileged process reaches QP1 with the GSI Q_Key.
	sends := parseTraffic(t, "priv_nobody_send")
	g := sends["nb_gsi"]
	t.Logf("uid 65534 sends wr_qkey=0x80010000 to QP1: accepted=%v (qkey_viol %d -> %d); wr_qkey=0x80000011 to a 0x11 QP: received=%v",
		g.accepted(), g.QViolBefore, g.QViolAfter, sends["nb_top"].Received != nil && *sends["nb_top"].Received)
	if g.Error != "" || !g.Sentinel || !g.accepted() {
		t.Errorf("uid 65534 sending the GSI Q_Key to QP1: %+v; the table says rxe accepts it", g)
	}
	if r := mustSucceed(t, "rdma_system"); !strings.Contains(r, "privileged-qkey") {
		t.Logf("rdma system (iproute2 here) has no privileged-qkey switch: %q", strings.TrimSpace(r+result(t, "rdma_system").Stderr))
	}
}

// devinfoPort parses ibv_devinfo -v's port counters.
func devinfoPort(t *testing.T, name string) map[string]uint64 {
	t.Helper()
	m := map[string]uint64{}
	for _, l := range strings.Split(mustSucceed(t, name), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		k := strings.TrimSuffix(f[0], ":")
		switch k {
		case "bad_pkey_cntr", "qkey_viol_cntr", "pkey_tbl_len", "gid_tbl_len", "port_lid":
			v, err := strconv.ParseUint(f[1], 0, 32)
			if err != nil {
				t.Fatalf("%s: %s: %v", name, l, err)
			}
			m[k] = v
		case "state:", "state":
			m["state"] = parseParen(f)
		case "phys_state":
			m["phys_state"] = parseParen(f)
		}
	}
	return m
}

// parseParen reads the number in "PORT_ACTIVE (4)".
func parseParen(f []string) uint64 {
	last := strings.Trim(f[len(f)-1], "()")
	v, _ := strconv.ParseUint(last, 10, 32)
	return v
}

func probeVerbs(t *testing.T, name string) verbsResult {
	t.Helper()
	var p verbsResult
	decodeJSON(t, name, mustSucceed(t, name), &p)
	return p
}
