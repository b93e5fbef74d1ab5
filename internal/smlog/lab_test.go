package smlog

import (
	"bytes"
	"context"
	"encoding/binary"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/lab"
	"github.com/ibkey/ibkey/internal/query"
)

// The lab's OpenSM writes the log every test here reads: the partitions lab net
// (internal/partconf/testdata/lab/net: Sw1 and HcaA..HcaD, OpenSM on HcaA), the daemon
// running labConf, traps sent through ibsim from the node that reports them, SA
// queries OpenSM refuses, a join it refuses, partitions files it rejects. With -update
// (the golden package's flag) the log, the sweep and the partitions file are saved in
// testdata/ for the tests and the command's goldens that do not run the lab.

// labConf: Default full for everyone; p1 (0x0001, ipoib) HcaB full, HcaC and HcaD
// limited; p2 (0x0002) HcaC and HcaD limited; p3 (0x0003) HcaB full, HcaD.
const labConf = `Default=0x7fff : ALL=full;
p1=0x8001, ipoib : 0x0002c90300000211=full, 0x0002c90300000221, 0x0002c90300000231;
p2=0x0002 : 0x0002c90300000221, 0x0002c90300000231;
p3=0x0003 : 0x0002c90300000211=full, 0x0002c90300000231;
`

// The lab's ports: LIDs OpenSM assigns on this net (checked against the sweep).
const (
	lidA, lidSw, lidB, lidC, lidD = 1, 2, 3, 4, 5
	guidA, guidB, guidC, guidD    = 0x0002c90300000201, 0x0002c90300000211, 0x0002c90300000221, 0x0002c90300000231
)

func portGID(g uint64) mad.GID {
	var id mad.GID
	id[0], id[1] = 0xfe, 0x80
	for i := 0; i < 8; i++ {
		id[8+i] = byte(g >> (56 - 8*i))
	}
	return id
}

// badMKeyTrap is trap 256: a port refused an SMP (method, attribute, modifier) from
// lid carrying M_Key mkey (IBA 14.3.1, table 179).
func badMKeyTrap(issuer, lid uint16, method uint8, attr uint16, mod uint32, mkey uint64) lab.Trap {
	t := lab.Trap{Number: 256, Producer: 1, IssuerLID: issuer} // producer 1: a CA
	d := t.Details[:]
	be := binary.BigEndian
	be.PutUint16(d[2:], lid)
	d[6] = method
	be.PutUint16(d[8:], attr)
	be.PutUint32(d[10:], mod)
	be.PutUint64(d[14:], mkey)
	return t
}

// badSwitchPKeyTrap is trap 259: switch swLID dropped, at its external port port, a
// packet from lid1/qp1 to lid2/qp2 with P_Key pkey (IBA 14.3.1, table 181). valid is
// DataValid: which of the fields hold values (bit 0 LID1, 1 LID2, 2 P_Key, 3 SL, 4
// QP1, 5 QP2, 6 GID1, 7 GID2).
func badSwitchPKeyTrap(issuer uint16, valid uint16, lid1, lid2, pkey uint16, sl uint8, qp1, qp2 uint32, swLID uint16, port uint8) lab.Trap {
	t := lab.Trap{Number: 259, Producer: 2, IssuerLID: issuer} // producer 2: a switch
	d := t.Details[:]
	be := binary.BigEndian
	be.PutUint16(d[0:], valid)
	be.PutUint16(d[2:], lid1)
	be.PutUint16(d[4:], lid2)
	be.PutUint16(d[6:], pkey)
	be.PutUint32(d[8:], uint32(sl)<<28|qp1&0xffffff)
	be.PutUint32(d[12:], qp2&0xffffff)
	be.PutUint16(d[48:], swLID)
	d[50] = port
	return t
}

// labRecording is what the recorder produced.
type labRecording struct {
	log    string
	fabric *fabric.Fabric
}

// recordLab runs the scenario and returns OpenSM's log.
func recordLab(t *testing.T) labRecording {
	t.Helper()
	lab.Require(t)
	l := lab.StartPartconf(t)
	d := l.StartOpenSMDaemon(t, labConf)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// The sweep: LIDs and tables as OpenSM programmed them.
	tr := l.Dial(t, "HcaA", mad.Options{})
	f, err := query.Sweep(ctx, tr, query.SweepOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[uint16]uint64{lidA: guidA, lidB: guidB, lidC: guidC, lidD: guidD}
	r := NewResolver(f, nil)
	for lid, g := range want {
		if id, ok := r.byLID[lid]; !ok || f.Port(id).GUID != check.GUID(g) {
			t.Fatalf("the lab's LIDs changed: LID %d is %v, want port %#x (update the constants)", lid, id, g)
		}
	}

	wait := func(what string, from int64) {
		t.Helper()
		if _, err := d.WaitLog(what, from, 10*time.Second); err != nil {
			t.Fatalf("%v\nlog:\n%s", err, d.LogText())
		}
	}
	trap := func(node string, tp lab.Trap) {
		t.Helper()
		from := d.LogSize()
		if err := l.SendTrap(ctx, node, lidA, tp); err != nil {
			t.Fatal(err)
		}
		wait("num:"+itoa(int(tp.Number)), from)
	}
	var zero mad.GID
	// 257: HcaC drops HcaD's limited P_Key 0x0001 (both limited members of p1).
	trap("HcaC", lab.BadKeyTrap(true, lidC, lidD, lidC, 0x0001, 0, 0x012345, 0x06789a, portGID(guidD), portGID(guidC)))
	// 257: HcaB drops 0x8002 from HcaC: HcaB is not in p2.
	trap("HcaB", lab.BadKeyTrap(true, lidB, lidC, lidB, 0x8002, 2, 0x000123, 0x000456, zero, zero))
	// 258: HcaC's QP 0x000001 drops a datagram from HcaB with Q_Key 0x1234.
	trap("HcaC", lab.BadKeyTrap(false, lidC, lidB, lidC, 0x1234, 0, 0xabcdef, 0x000001, zero, zero))
	// 259: Sw1 port 2, facing HcaB, drops 0x8002 from HcaC to HcaB (HcaB is not in p2).
	trap("Sw1", badSwitchPKeyTrap(lidSw, 0x003f, lidC, lidB, 0x8002, 1, 0x111111, 0x222222, lidSw, 2))
	// 256: HcaD refused an SMP Set(PortInfo) with M_Key 0x42 from LID 3.
	trap("HcaD", badMKeyTrap(lidD, lidB, 0x02, 0x0015, 1, 0x42))
	// HcaD drops HcaC's 0x0001 (both limited in p1) twelve times: OpenSM stops
	// reporting a trap after 10 within its aging window (osm_trap_rcv.c), so the last
	// two have QP1 cut to 12 bits.
	for range 12 {
		trap("HcaD", lab.BadKeyTrap(true, lidD, lidC, lidD, 0x0001, 0, 0x0abcde, 0x000002, zero, zero))
	}

	// SA refusals: PathRecords the SA refuses (saquery prints nothing).
	for _, q := range [][]string{
		{"PR", "--slid", itoa(lidC), "--dlid", itoa(lidD), "--pkey", "0x0002"}, // both limited
		{"PR", "--slid", itoa(lidB), "--dlid", itoa(lidC), "--pkey", "0x8002"}, // HcaB not in p2
	} {
		from := d.LogSize()
		out, err := l.ToolAt("HcaA", "saquery", q...)
		if err != nil || strings.TrimSpace(out) != "" {
			t.Fatalf("saquery %v: %q %v (want no path)", q, out, err)
		}
		wait("ERR 1F1A", from)
	}
	// P_KeyTableRecord without the SM_Key: ERR 4608.
	from := d.LogSize()
	if _, err := l.ToolAt("HcaA", "saquery", "PKTR", itoa(lidB)); err == nil {
		t.Fatal("saquery PKTR without the SM_Key answered")
	}
	wait("ERR 4608", from)
	// With a wrong non-zero SM_Key the SA drops the request: ERR 1A04, a timeout.
	from = d.LogSize()
	quick := l.Dial(t, "HcaA", mad.Options{Timeout: 300 * time.Millisecond, Retries: -1})
	if _, err := mad.GetPKeyTableRecord(ctx, quick, lidA, 2, lidB, 1, 0); err == nil {
		t.Fatal("the SA answered an SM_Key of 2")
	}
	wait("ERR 1A04", from)
	// HcaA joins p1's IPoIB broadcast group; HcaA is not in p1: ERR 1B14.
	var bcast mad.GID
	copy(bcast[:], []byte{0xff, 0x12, 0x40, 0x1b, 0x80, 0x01, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff})
	from = d.LogSize()
	if st, err := join(ctx, l, "HcaA", lidA, joinRequest{MGID: bcast, PortGID: portGID(guidA)}); err != nil || st == 0 {
		t.Fatalf("join: status 0x%04x, %v (want a refusal)", st, err)
	}
	wait("ERR 1B14", from)
	// HcaB (a p1 member) joins it with another Q_Key: ERR 1B30.
	from = d.LogSize()
	if st, err := join(ctx, l, "HcaB", lidA, joinRequest{MGID: bcast, PortGID: portGID(guidB), QKey: 0x1234}); err != nil || st == 0 {
		t.Fatalf("join: status 0x%04x, %v (want a refusal)", st, err)
	}
	wait("ERR 1B30", from)
	// An untrusted subscription to trap 257: ERR 430B.
	from = d.LogSize()
	if st, err := subscribeTrap(ctx, l, "HcaB", lidA, 257, 0); err != nil || st == 0 {
		t.Fatalf("subscribe: status 0x%04x, %v (want a refusal)", st, err)
	}
	wait("ERR 430B", from)

	// partitions.conf OpenSM rejects (line 3), then one with no definition at all,
	// then a good one again.
	for _, conf := range []string{
		"Default=0x7fff : ALL=full;\np1=0x8001 : 0x0002c90300000211=full;\nbad line without colon\n",
		"# nothing but a comment\n",
		labConf,
	} {
		if err := os.WriteFile(d.Conf, []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := d.Resweep(20 * time.Second); err != nil {
			t.Fatal(err)
		}
	}
	// A port in more partitions than its table holds (64 entries): ERR 0512.
	var big strings.Builder
	big.WriteString(labConf)
	for k := 0x100; k < 0x100+70; k++ {
		big.WriteString("x" + itoa(k) + "=0x" + hex4(k) + " : 0x0002c90300000231;\n")
	}
	// A group OpenSM skips and goes on: an mgid that is not multicast.
	big.WriteString("p7=0x0700, ipoib : 0x0002c90300000231, mgid=fe80::1;\n")
	if err := os.WriteFile(d.Conf, []byte(big.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	from = d.LogSize()
	if err := d.Resweep(20 * time.Second); err != nil {
		t.Fatal(err)
	}
	wait("ERR 0512", from)
	wait("gid is not multicast", from)
	// An IP group of another partition's P_Key: OpenSM logs the group, then loses its
	// place in the line and rejects the file (a PARSE ERROR on that line).
	bad := labConf + "p8=0x0800, ipoib : 0x0002c90300000231, mgid=ff12:401b:8009::1;\n"
	if err := os.WriteFile(d.Conf, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	from = d.LogSize()
	if err := d.Resweep(20 * time.Second); err != nil {
		t.Fatal(err)
	}
	wait("retrying with default config", from)
	if err := os.WriteFile(d.Conf, []byte(labConf), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := d.Resweep(20 * time.Second); err != nil {
		t.Fatal(err)
	}
	return labRecording{log: d.LogText(), fabric: f}
}

func itoa(n int) string { return strings.TrimSpace(strings.Repeat(" ", 0) + fmtInt(n)) }

func fmtInt(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

func hex4(n int) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[n>>12&0xf], digits[n>>8&0xf], digits[n>>4&0xf], digits[n&0xf]})
}

// recording says whether to save what the lab wrote in testdata/name (and the files
// recorded with it): with -update (the golden package's flag) when it is not there yet, or when IBKEY_SMLOG_RECORD=1
// asks for a new recording. A new recording changes every time stamp and thread
// number, and with them the goldens made from it, so `go test ./... -update` alone
// does not make one.
func recording(name string) bool {
	f := flag.Lookup("update")
	if f == nil || f.Value.String() != "true" {
		return false
	}
	if os.Getenv("IBKEY_SMLOG_RECORD") == "1" {
		return true
	}
	_, err := os.Stat(filepath.Join("testdata", name))
	return err != nil
}

// startLab starts the partitions lab net for a test of the real daemon (skipped with
// -short; without the lab installed, skipped, or failed under CI).
func startLab(t *testing.T) *lab.Lab {
	t.Helper()
	if testing.Short() {
		t.Skip("lab: -short")
	}
	lab.Require(t)
	return lab.StartPartconf(t)
}

// TestLabLog runs the lab and checks that every event OpenSM logged is read as it
// happened; recording says when it saves the log for the other tests.
func TestLabLog(t *testing.T) {
	if testing.Short() {
		t.Skip("lab: -short")
	}
	rec := recordLab(t)
	evs := readAll(t, rec.log)
	checkLabEvents(t, evs)
	if recording("lab.log") {
		dir := filepath.Join("testdata")
		if err := os.WriteFile(filepath.Join(dir, "lab.log"), []byte(rec.log), 0o644); err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := fabric.EncodeFabric(&b, rec.fabric); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "lab-fabric.json"), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "lab-partitions.conf"), []byte(labConf), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func readAll(t *testing.T, log string) []*Event {
	t.Helper()
	var evs []*Event
	a := NewAssembler(time.Now(), time.Local, func(e *Event) { evs = append(evs, e) })
	if err := Read(context.Background(), strings.NewReader(log), a); err != nil {
		t.Fatal(err)
	}
	return evs
}

// checkLabEvents checks the events of the lab scenario, in log order.
func checkLabEvents(t *testing.T, evs []*Event) {
	t.Helper()
	count := map[Kind]int{}
	for _, e := range evs {
		count[e.Kind]++
	}
	t.Logf("%d events: %v", len(evs), count)
	next := 0
	find := func(k Kind, match func(*Event) bool) *Event {
		t.Helper()
		for i := next; i < len(evs); i++ {
			if evs[i].Kind == k && (match == nil || match(evs[i])) {
				next = i + 1
				return evs[i]
			}
		}
		t.Fatalf("no %s event after event %d", k, next)
		return nil
	}
	e := find(KindBadPKey, nil)
	if e.Key != 0x0001 || e.From.LID != lidD || e.To.LID != lidC || e.From.QP != 0x012345 || e.From.QPLow12 || e.To.QP != 0x06789a ||
		e.Reporter.GUID != guidC || e.Reporter.LID != lidC || e.SL != 0 || len(e.Lines) != 3 {
		t.Errorf("first 257: %+v", e)
	}
	e = find(KindBadPKey, nil)
	if e.Key != 0x8002 || e.SL != 2 || e.From.QP != 0x000123 {
		t.Errorf("second 257: %+v", e)
	}
	e = find(KindBadQKey, nil)
	if e.Key != 0x1234 || e.From.QP != 0xabcdef || e.From.QPLow12 || e.To.QP != 1 || e.KeyType != KeyQKey {
		t.Errorf("258: %+v", e)
	}
	e = find(KindBadSwitchPKey, nil)
	if e.Key != 0x8002 || e.SwitchPort != 2 || e.Reporter.LID != lidSw || e.From.LID != lidC || e.To.LID != lidB || e.From.QP != 0x111111 || e.To.QP != 0x222222 || e.SL != 1 {
		t.Errorf("259: %+v", e)
	}
	e = find(KindBadMKey, nil)
	if e.Key != 0x42 || e.Reporter.LID != lidD {
		t.Errorf("256: %+v", e)
	}
	// The twelve repeats: the first ten reported whole, the last two cut.
	var whole, cut int
	for i := 0; i < 12; i++ {
		e = find(KindBadPKey, func(e *Event) bool { return e.To.LID == lidD })
		switch {
		case e.From.QP == 0x0abcde && !e.From.QPLow12:
			whole++
		case e.From.QP == 0xcde && e.From.QPLow12:
			cut++
		default:
			t.Errorf("repeat %d: QP1 0x%x cut %v", i, e.From.QP, e.From.QPLow12)
		}
	}
	if whole != 10 || cut != 2 {
		t.Errorf("repeats: %d whole, %d cut; want 10 and 2", whole, cut)
	}
	e = find(KindPathRefused, nil)
	if e.Code != "1F1A" || e.From.GUID != guidC || e.To.GUID != guidD || e.From.NodeDesc != "HcaC" || e.From.Num != 1 || e.Key != 0x0002 {
		t.Errorf("1F1A: %+v", e)
	}
	e = find(KindPathRefused, nil)
	if e.From.GUID != guidB || e.To.GUID != guidC || e.Key != 0x8002 {
		t.Errorf("second 1F1A: %+v", e)
	}
	if e = find(KindUntrusted, nil); e.Code != "4608" || e.Key != 0 {
		t.Errorf("4608: %+v", e)
	}
	if e = find(KindBadSMKey, nil); e.Code != "1A04" || e.Key != 2 {
		t.Errorf("1A04: %+v", e)
	}
	if e = find(KindJoinRefused, nil); e.Code != "1B14" || e.From.GUID != guidA || e.MGID != "ff12:401b:8001::ffff:ffff" {
		t.Errorf("1B14: %+v", e)
	}
	if e = find(KindJoinRefused, nil); e.Code != "1B30" || e.Key != 0x1234 || e.From.GUID != guidB || e.MGID != "ff12:401b:8001::ffff:ffff" || len(e.Lines) != 2 {
		t.Errorf("1B30: %+v", e)
	}
	if e = find(KindUntrusted, nil); e.Code != "430B" {
		t.Errorf("430B: %+v", e)
	}
	if e = find(KindConfigRejected, nil); e.ConfLine != 3 || !e.Fallback || e.Detail != "no partition definition found" {
		t.Errorf("parse error: %+v", e)
	}
	if e = find(KindConfigRejected, nil); e.ConfLine != 0 || !e.Fallback {
		t.Errorf("empty file: %+v", e)
	}
	if e = find(KindConfigWarning, nil); e.ConfLine != 75 || e.MGID != "fe80::1" {
		t.Errorf("mgid not multicast: %+v", e)
	}
	if e = find(KindTableFull, nil); e.From.NodeGUID == 0 || e.From.Num != 1 || e.From.NodeDesc != "HcaD" {
		t.Errorf("0512: %+v", e)
	}
	if e = find(KindConfigWarning, nil); e.MGID != "ff12:401b:8009::1" {
		t.Errorf("IP group: %+v", e)
	}
	if e = find(KindConfigRejected, nil); e.ConfLine != 5 || !e.Fallback {
		t.Errorf("IP group's rejection: %+v", e)
	}
}
