package smlog

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/lab"
	"github.com/ibkey/ibkey/internal/query"
)

// TestLabTrapMulticast: a port drops a packet sent to a multicast LID for its P_Key
// (257) or Q_Key (258) and reports it, LID2 being the group's LID and QP2 0xffffff
// (IBA 14.3.1, 10.5.2.2). The port that dropped it is the trap's reporter, not "LID
// 49153", which no port holds; with the sweep and with the log alone.
func TestLabTrapMulticast(t *testing.T) {
	l := startLab(t)
	d := l.StartOpenSMDaemon(t, labConf)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f, err := query.Sweep(ctx, l.Dial(t, "HcaA", mad.Options{}), query.SweepOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var zero mad.GID
	for _, tp := range []lab.Trap{
		lab.BadKeyTrap(true, lidC, lidD, 0xc001, 0x0001, 0, 0x000123, 0xffffff, zero, zero),
		lab.BadKeyTrap(false, lidC, lidB, 0xc001, 0x1234, 0, 0x000456, 0xffffff, zero, zero),
	} {
		from := d.LogSize()
		if err := l.SendTrap(ctx, "HcaC", lidA, tp); err != nil {
			t.Fatal(err)
		}
		if _, err := d.WaitLog("Reporting Security Notice", from, 10*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	evs := readAll(t, d.LogText())
	if len(evs) != 2 {
		t.Fatalf("%d events", len(evs))
	}
	names := NewNames()
	for _, e := range evs {
		names.guidByLID[e.Reporter.LID] = e.Reporter.GUID
	}
	for _, x := range []*Explainer{{R: NewResolver(f, nil)}, {R: NewResolver(nil, names)}} {
		for _, e := range evs {
			ex := x.Explain(e)
			all := ex.Rule + " " + ex.Fix + " " + strings.Join(ex.Notes, " ")
			reporter := ex.Reporter.Label()
			want := map[Kind]string{KindBadPKey: reporter + " dropped a packet from", KindBadQKey: "but " + reporter + "'s QP attached to the group accepts only its own"}[e.Kind]
			if !strings.Contains(ex.Rule, want) || strings.Contains(all, "LID 49153 ") || strings.Contains(all, "49153 is not resolved") ||
				strings.Contains(ex.Rule, "0xffffff") || !strings.Contains(all, "is a multicast LID") || ex.To.Label() != "multicast LID 0xc001" {
				t.Errorf("%s (fabric %v): want %q in\nrule %s\nfix %s\nnotes %q", e.Kind, x.R.Fabric != nil, want, ex.Rule, ex.Fix, ex.Notes)
			}
		}
	}
}

// TestLabTrapStormGenerated sends a generated sequence of traps 257, 258 and 259 from
// three reporters without waiting between them (OpenSM's dispatcher threads then
// log them interleaved), and checks that every trap sent is one event with its own
// key, LIDs, QPs and reporter: none lost, merged or crossed. Each trap is distinct
// (its QP1), so OpenSM's noisy-trap filter does not apply.
func TestLabTrapStormGenerated(t *testing.T) {
	l := startLab(t)
	d := l.StartOpenSMDaemon(t, labConf)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	type sent struct {
		kind     Kind
		reporter uint16
		key      uint64
		lid1     uint16
		qp1      uint32
	}
	rng := rand.New(rand.NewPCG(14, 23))
	nodes := map[uint16]string{lidB: "HcaB", lidC: "HcaC", lidD: "HcaD"}
	lids := []uint16{lidB, lidC, lidD}
	var want []sent
	var zero mad.GID
	from := d.LogSize()
	for i := range 60 {
		rep := lids[rng.IntN(len(lids))]
		lid1 := lids[rng.IntN(len(lids))]
		qp1 := uint32(0x100000 + i)
		var tp lab.Trap
		var s sent
		switch rng.IntN(3) {
		case 0:
			key := uint16(rng.IntN(4)) | uint16(rng.IntN(2))<<15
			tp = lab.BadKeyTrap(true, rep, lid1, rep, uint32(key), uint8(rng.IntN(16)), qp1, 0x10, zero, zero)
			s = sent{KindBadPKey, rep, uint64(key), lid1, qp1}
		case 1:
			key := rng.Uint32()
			tp = lab.BadKeyTrap(false, rep, lid1, rep, key, 0, qp1, 0x10, zero, zero)
			s = sent{KindBadQKey, rep, uint64(key), lid1, qp1}
		default:
			key := uint16(rng.IntN(4)) | 0x8000
			tp = badSwitchPKeyTrap(lidSw, 0x003f, lid1, rep, key, 0, qp1, 0x10, lidSw, 2)
			s = sent{KindBadSwitchPKey, lidSw, uint64(key), lid1, qp1}
		}
		node := nodes[rep]
		if s.kind == KindBadSwitchPKey {
			node = "Sw1"
		}
		if err := l.SendTrap(ctx, node, lidA, tp); err != nil {
			t.Fatal(err)
		}
		want = append(want, s)
	}
	deadline := time.Now().Add(20 * time.Second)
	for strings.Count(d.LogText()[from:], "Reporting Security Notice") < len(want) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	threads := map[string]bool{}
	for _, line := range strings.Split(d.LogText()[from:], "\n") {
		if strings.Contains(line, "log_trap_info") {
			threads[line[stampLen+2:stampLen+10]] = true
		}
	}
	t.Logf("%d traps logged by %d threads", len(want), len(threads))
	got := map[uint32]*Event{}
	for _, e := range readAll(t, d.LogText()[from:]) {
		if got[e.From.QP] != nil {
			t.Errorf("QP1 0x%x twice", e.From.QP)
		}
		got[e.From.QP] = e
	}
	if len(got) != len(want) {
		t.Errorf("%d events for %d traps", len(got), len(want))
	}
	for _, s := range want {
		e := got[s.qp1]
		if e == nil {
			t.Errorf("trap with QP1 0x%x: no event", s.qp1)
			continue
		}
		if e.Kind != s.kind || e.Reporter.LID != s.reporter || e.Key != s.key || e.From.LID != s.lid1 || e.From.QPLow12 || e.To.QP != 0x10 {
			t.Errorf("sent %+v, read %s reporter %d key 0x%x LID1 %d QP1 0x%x cut %v QP2 0x%x", s, e.Kind, e.Reporter.LID, e.Key, e.From.LID, e.From.QP, e.From.QPLow12, e.To.QP)
		}
	}
}

// TestLabSubscriptionRemoved: HcaB subscribes to HcaC's trap 257 while they share a
// partition (labConf), the file changes so that they share none (verboseConf: only
// the default partition, both limited), and HcaC's next trap makes OpenSM delete the
// subscription (osm_inform.c, o13-17.1.2; logged at the verbose level only, once: the
// next trap finds no subscription). A subscription made while they share none is
// refused (status 0x0200).
func TestLabSubscriptionRemoved(t *testing.T) {
	l := startLab(t)
	d := l.StartOpenSMDaemon(t, labConf, "log_flags 0x07")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if st, err := subscribeTrapLIDs(ctx, l, "HcaB", lidA, 257, 1, lidC, lidC); err != nil || st != 0 {
		t.Fatalf("subscribe: status 0x%04x %v", st, err)
	}
	if _, _, err := d.Reprogram(ctx, verboseConf); err != nil {
		t.Fatal(err)
	}
	from := d.LogSize()
	var zero mad.GID
	for range 2 {
		at := d.LogSize()
		if err := l.SendTrap(ctx, "HcaC", lidA, lab.BadKeyTrap(true, lidC, lidB, lidC, 0x0010, 0, 0x0fedcb, 0x000007, zero, zero)); err != nil {
			t.Fatal(err)
		}
		if _, err := d.WaitLog("Reporting Security Notice", at, 10*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	if st, err := subscribeTrapLIDs(ctx, l, "HcaB", lidA, 257, 1, lidC, lidC); err != nil || st != 0x0200 {
		t.Errorf("subscribe again: status 0x%04x %v, want 0x0200", st, err)
	}
	var removed int
	for _, e := range readAll(t, d.LogText()[from:]) {
		if e.Kind != KindNoticeNotForwarded {
			continue
		}
		removed++
		ex := (&Explainer{R: NewResolver(nil, NewNames())}).Explain(e)
		if e.Detail != subscriptionRemoved || !strings.Contains(ex.Rule, "lost its subscription") {
			t.Errorf("%+v\n%s", e, ex.Rule)
		}
	}
	if removed != 1 {
		t.Errorf("%d subscriptions removed, want 1:\n%s", removed, tail(d.LogText()[from:], 3000))
	}
}

// TestLabReportUnanswered: a subscriber that is gone when OpenSM forwards it a notice
// (the test's client subscribed HcaB to trap 257 and closed) does not answer the
// SubnAdmReport, and OpenSM logs ERR 1A06 for it (osm_sa_mad_ctrl.c
// sa_mad_ctrl_send_err_callback, after its vendor layer's ERR 5410 and before an SA
// MAD dump): a notice-not-forwarded warning naming HcaB's LID.
func TestLabReportUnanswered(t *testing.T) {
	l := startLab(t)
	d := l.StartOpenSMDaemon(t, labConf)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if st, err := subscribeTrapLIDs(ctx, l, "HcaB", lidA, 257, 1, lidC, lidC); err != nil || st != 0 {
		t.Fatalf("subscribe: status 0x%04x %v", st, err)
	}
	from := d.LogSize()
	var zero mad.GID
	if err := l.SendTrap(ctx, "HcaC", lidA, lab.BadKeyTrap(true, lidC, lidB, lidC, 0x0010, 0, 0x0fedcb, 0x000007, zero, zero)); err != nil {
		t.Fatal(err)
	}
	if _, err := d.WaitLog("ERR 1A06", from, 20*time.Second); err != nil {
		t.Fatalf("%v\n%s", err, tail(d.LogText()[from:], 3000))
	}
	var got []*Event
	for _, e := range readAll(t, d.LogText()[from:]) {
		if e.Kind == KindNoticeNotForwarded && e.Code == "1A06" {
			got = append(got, e)
		}
	}
	if len(got) == 0 || got[0].To.LID != lidB {
		t.Fatalf("%d 1A06 events (want the report to HcaB, LID %d):\n%s", len(got), lidB, tail(d.LogText()[from:], 3000))
	}
	ex := (&Explainer{R: NewResolver(nil, NewNames())}).Explain(got[0])
	if !strings.Contains(ex.Rule, "did not answer") || SeverityOf(got[0].Kind) != check.SeverityWarning {
		t.Errorf("%s", ex.Rule)
	}
	// Nothing around it is left not explained: libvendor's ERR 5410 before, the SA
	// MAD dump after.
	a := NewAssembler(time.Now(), time.Local, func(*Event) {})
	a.Unexplained = func(u *Unexplained) { t.Errorf("not explained: line %d %s: %s", u.Line, u.Function, u.Message) }
	if err := Read(ctx, strings.NewReader(d.LogText()[from:]), a); err != nil {
		t.Fatal(err)
	}
}

// TestLabTrapNoReport: the same trap 259 and 256 eleven times each within seconds.
// OpenSM logs each one's header line (osm_trap_rcv.c log_trap_info), but skips the
// info-level report, the only line with the P_Key, the switch port and the M_Key
// (osm_inform.c log_notice), of a trap it has had 10 times already, each within
// OSM_DEFAULT_TRAP_SUPPRESSION_TIMEOUT (5 s, osm_base.h) of the last. The eleventh
// of each is an event whose key, switch port and SMP are not known, and its
// explanation says so instead of "P_Key 0x0000", "port -1" or "M_Key 0x0000...".
func TestLabTrapNoReport(t *testing.T) {
	l := startLab(t)
	d := l.StartOpenSMDaemon(t, labConf)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	from := d.LogSize()
	for _, s := range []struct {
		node string
		tp   lab.Trap
	}{
		{"Sw1", badSwitchPKeyTrap(lidSw, 0x003f, lidC, lidB, 0x8002, 1, 0x111111, 0x222222, lidSw, 2)},
		{"HcaD", badMKeyTrap(lidD, lidB, 0x02, 0x0015, 1, 0x42)},
	} {
		for range 11 {
			at := d.LogSize()
			if err := l.SendTrap(ctx, s.node, lidA, s.tp); err != nil {
				t.Fatal(err)
			}
			if _, err := d.WaitLog("num:"+itoa(int(s.tp.Number)), at, 10*time.Second); err != nil {
				t.Fatal(err)
			}
		}
	}
	log := d.LogText()[from:]
	if n := strings.Count(log, "Reporting Security Notice"); n != 20 {
		t.Fatalf("%d reports, want 10 of each trap:\n%s", n, tail(log, 3000))
	}
	reported := map[Kind]int{}
	for _, e := range readAll(t, log) {
		ex := (&Explainer{R: NewResolver(nil, NewNames())}).Explain(e)
		all := ex.Rule + " " + ex.Fix + " " + strings.Join(ex.Notes, " ")
		if e.KeyType != "" {
			reported[e.Kind]++
			if e.Kind == KindBadSwitchPKey && (e.Key != 0x8002 || e.SwitchPort != 2) || e.Kind == KindBadMKey && e.Key != 0x42 {
				t.Errorf("reported %s: key 0x%x, switch port %d", e.Kind, e.Key, e.SwitchPort)
			}
			continue
		}
		if e.Reporter.LID == 0 || e.SwitchPort != -1 || strings.Contains(all, "0x0000") || strings.Contains(all, "port -1") ||
			strings.Contains(all, "()") || !strings.Contains(all, "no info-level report of this trap was logged") {
			t.Errorf("%s without its report: reporter LID %d, switch port %d, key 0x%x %q:\nrule %s\nfix %s\nnotes %q",
				e.Kind, e.Reporter.LID, e.SwitchPort, e.Key, e.KeyType, ex.Rule, ex.Fix, ex.Notes)
		}
	}
	if reported[KindBadSwitchPKey] != 10 || reported[KindBadMKey] != 10 {
		t.Errorf("reported events: %v, want 10 of each", reported)
	}
}
