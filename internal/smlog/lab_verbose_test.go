package smlog

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/lab"
)

// A second recording, at OpenSM's verbose log level (log_flags 0x07) and with a
// log_prefix: the messages only a verbose log has (PARSE WARN, duplicated definitions,
// the notice dump whose continuation lines carry QP1 whole, a missing partitions.conf,
// the SA's verbose join refusals), and the prefix before every function name.

// verboseConf: Default limited (the SM's port full), HcaB and HcaC each in a partition
// of their own, so they share only the default partition, both limited; a flag OpenSM
// does not know (PARSE WARN), a key defined twice (Duplicated partition definition),
// p1 an IPoIB partition of HcaB and HcaD.
const verboseConf = `Default=0x7fff : ALL=limited, SELF=full;
pB=0x0010 : 0x0002c90300000211=full;
pC=0x0020, bogus=1 : 0x0002c90300000221=full;
again=0x0020 : 0x0002c90300000231;
p1=0x8001, ipoib : 0x0002c90300000211=full, 0x0002c90300000231;
`

func recordVerbose(t *testing.T) string {
	t.Helper()
	lab.Require(t)
	l := lab.StartPartconf(t)
	d := l.StartOpenSMDaemon(t, verboseConf, "log_flags 0x07", "log_prefix ibkeylab")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	wait := func(what string, from int64) {
		t.Helper()
		if _, err := d.WaitLog(what, from, 10*time.Second); err != nil {
			t.Fatalf("%v\nlog:\n%s", err, tail(d.LogText(), 3000))
		}
	}
	// A trap twelve times: every one dumped whole at verbose level, the last two
	// not reported ("Ignoring noisy traps").
	var zero mad.GID
	for range 12 {
		from := d.LogSize()
		if err := l.SendTrap(ctx, "HcaC", lidA, lab.BadKeyTrap(true, lidC, lidB, lidC, 0x0010, 0, 0x0fedcb, 0x000007, zero, zero)); err != nil {
			t.Fatal(err)
		}
		wait("num:257", from)
	}
	// Trap 259 whose P_Key is not valid (DataValid 0x0003: LID1 and LID2 only).
	from := d.LogSize()
	if err := l.SendTrap(ctx, "Sw1", lidA, badSwitchPKeyTrap(lidSw, 0x0003, lidB, lidC, 0x8020, 0, 0, 0, lidSw, 3)); err != nil {
		t.Fatal(err)
	}
	wait("data_valid 0x0003", from)
	// A PathRecord between two ports that share no partition in which one is a full
	// member (HcaB and HcaC: only the default, both limited), with and without a
	// P_Key: the SA refuses it before it gets to ERR 1F1A or 1F1B, and logs nothing
	// (osm_sa_path_record.c pr_rcv_get_port_pair_paths: osm_port_share_pkey first).
	silentFrom := d.LogSize()
	for _, pk := range []string{"", "0x0010", "0x7fff"} {
		args := []string{"PR", "--slid", itoa(lidB), "--dlid", itoa(lidC)}
		if pk != "" {
			args = append(args, "--pkey", pk)
		}
		if out, err := l.ToolAt("HcaA", "saquery", args...); err != nil || strings.TrimSpace(out) != "" {
			t.Fatalf("saquery %v: %q %v (want no path)", args, out, err)
		}
	}
	// Joins the SA refuses at verbose level: a proxy join by a port that shares no
	// partition with the joining port, an invalid P_Key; and one with another
	// partition's P_Key (ERR 1B32).
	var bcast mad.GID
	copy(bcast[:], []byte{0xff, 0x12, 0x40, 0x1b, 0x80, 0x01, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff})
	for _, j := range []struct {
		node string
		req  joinRequest
		want string
	}{
		{"HcaC", joinRequest{MGID: bcast, PortGID: portGID(guidB)}, "don't share PKey"},
		{"HcaB", joinRequest{MGID: bcast, PortGID: portGID(guidB), PKey: 0x8000}, "Invalid PKey supplied"},
		{"HcaB", joinRequest{MGID: bcast, PortGID: portGID(guidB), PKey: 0x8010}, "ERR 1B32"},
	} {
		from := d.LogSize()
		if st, err := join(ctx, l, j.node, lidA, j.req); err != nil || st == 0 {
			t.Fatalf("join %+v: status 0x%04x %v (want a refusal)", j.req, st, err)
		}
		wait(j.want, from)
	}
	if seg := d.LogText()[silentFrom:]; strings.Contains(seg, "ERR 1F1") {
		t.Errorf("the SA logged a refusal of a path between ports that share no partition:\n%s", seg)
	}
	// HcaA subscribes to "new multicast group" (trap 66), then HcaB creates a group in
	// p1, which HcaA is not in: OpenSM does not forward the notice to HcaA.
	if st, err := subscribeTrap(ctx, l, "HcaA", lidA, 66, 0); err != nil || st != 0 {
		t.Fatalf("subscribe to trap 66: status 0x%04x %v", st, err)
	}
	var group mad.GID
	copy(group[:], []byte{0xff, 0x12, 0xa0, 0x1c, 0x80, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x42})
	from = d.LogSize()
	if st, err := join(ctx, l, "HcaB", lidA, joinRequest{MGID: group, PortGID: portGID(guidB), QKey: 0x42, PKey: 0x8001, Create: true}); err != nil || st != 0 {
		t.Fatalf("create a group: status 0x%04x %v", st, err)
	}
	wait("do not share same pkey", from)
	// partitions.conf goes away: OpenSM applies its default.
	if err := os.Remove(d.Conf); err != nil {
		t.Fatal(err)
	}
	from = d.LogSize()
	if err := d.Resweep(20 * time.Second); err != nil {
		t.Fatal(err)
	}
	wait("is not accessible", from)
	return d.LogText()
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

func TestLabLogVerbose(t *testing.T) {
	if testing.Short() {
		t.Skip("lab: -short")
	}
	log := recordVerbose(t)
	checkVerboseEvents(t, readAll(t, log))
	if recording("lab-verbose.log") {
		if err := os.WriteFile(filepath.Join("testdata", "lab-verbose.log"), []byte(log), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func checkVerboseEvents(t *testing.T, evs []*Event) {
	t.Helper()
	count := map[Kind]int{}
	for _, e := range evs {
		count[e.Kind]++
	}
	t.Logf("%d events: %v", len(evs), count)
	var warns, missing, joins, notices, traps, sw int
	for _, e := range evs {
		switch e.Kind {
		case KindConfigWarning:
			warns++
		case KindConfigMissing:
			missing++
			if !e.Fallback || !strings.Contains(e.Detail, "partitions.conf") {
				t.Errorf("missing file: %+v", e)
			}
		case KindJoinRefused:
			joins++
		case KindNoticeNotForwarded:
			notices++
			if e.To.GUID != guidA || e.MGID == "" {
				t.Errorf("notice: %+v", e)
			}
		case KindBadPKey:
			traps++
			// The verbose dump has QP1 whole, reported or not.
			if e.From.QP != 0x0fedcb || e.From.QPLow12 {
				t.Errorf("trap %d: QP1 0x%x cut %v", traps, e.From.QP, e.From.QPLow12)
			}
		case KindBadSwitchPKey:
			sw++
			if e.KeyType != "" || e.SwitchPort != 3 || e.From.LID != lidB || e.To.LID != lidC || e.From.QPKnown {
				t.Errorf("259 without P_Key: %+v", e)
			}
		case KindPathRefused:
			t.Errorf("a path refusal was logged: %+v", e)
		}
	}
	if traps != 12 || sw != 1 || joins != 3 || notices == 0 || missing == 0 || warns < 2 {
		t.Errorf("traps %d, 259 %d, joins %d, notices %d, missing %d, warnings %d", traps, sw, joins, notices, missing, warns)
	}
}

// TestLogPrefixWithoutVersionLine: the verbose lab log (log_prefix ibkeylab) without
// its first lines, as a rotated log starts: OpenSM writes "PREFIX: " before every
// message (libopensm/osm_log.c osm_log_v2), and the run's "PREFIX: OpenSM 3.3.23"
// line is in the file before rotation only. The events read are those of the whole
// log, each one line number down, none shown as not explained.
func TestLogPrefixWithoutVersionLine(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "lab-verbose.log"))
	if err != nil {
		t.Fatal(err)
	}
	whole := string(b)
	const cut = 4
	rest := whole
	for range cut {
		_, rest, _ = strings.Cut(rest, "\n")
	}
	if strings.Contains(rest, "OpenSM 3.3.23") {
		t.Fatal("the version line is still in the cut log")
	}
	read := func(log string) ([]*Event, int) {
		var evs []*Event
		unx := 0
		a := NewAssembler(time.Now(), time.Local, func(e *Event) { evs = append(evs, e) })
		a.Unexplained = func(*Unexplained) { unx++ }
		if err := Read(context.Background(), strings.NewReader(log), a); err != nil {
			t.Fatal(err)
		}
		return evs, unx
	}
	want, _ := read(whole)
	got, unx := read(rest)
	if len(got) != len(want) || unx != 0 {
		t.Fatalf("%d events and %d lines not explained, want %d events and none", len(got), unx, len(want))
	}
	for i := range want {
		w, g := want[i], got[i]
		if g.Kind != w.Kind || g.Code != w.Code || g.Key != w.Key || g.Line != w.Line-cut || g.Detail != w.Detail {
			t.Errorf("event %d: %s %s key 0x%x line %d %q, want %s %s key 0x%x line %d %q", i, g.Kind, g.Code, g.Key, g.Line, g.Detail, w.Kind, w.Code, w.Key, w.Line-cut, w.Detail)
		}
	}
}
