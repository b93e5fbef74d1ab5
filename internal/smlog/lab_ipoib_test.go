package smlog

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/lab"
	"github.com/ibkey/ibkey/internal/partconf"
	"github.com/ibkey/ibkey/internal/query"
)

// ipoibConf: p1 has ipoib and scope=5 (OpenSM still creates its broadcast group in
// link-local scope only), p2 the same with the scope-5 broadcast group created by an
// mgid= line (what partitions check advises), p3 no ipoib flag (no broadcast group).
const ipoibConf = `Default=0x7fff, ipoib : ALL=full ;
p1=0x0001, ipoib, scope=5 : ALL=full ;
p2=0x0002, ipoib, scope=5 :
 mgid=ff15:401b::ffff:ffff,sl=0
 ALL=full ;
p3=0x0003 : ALL=full ;
`

// TestLabIPoIBBroadcastJoin joins IPoIB broadcast groups as the kernel's IPoIB does
// (ipoib_multicast.c ipoib_mcast_join: MGID, PortGID, P_Key and JoinState only, no
// Q_Key or MTU to create the group with) against OpenSM running ipoibConf, and checks
// what OpenSM answers and logs against what partconf's model and lint and the log's
// explanation say.
func TestLabIPoIBBroadcastJoin(t *testing.T) {
	lab.Require(t)
	l := lab.StartPartconf(t)
	d := l.StartOpenSMDaemon(t, ipoibConf)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const insufComps = 0x0600 // IB_SA_MAD_STATUS_INSUF_COMPS: ERR_REQ_INSUFFICIENT_COMPONENTS
	from := d.LogSize()
	for _, c := range []struct {
		mgid   string
		status uint16
	}{
		{"ff12:401b:8001::ffff:ffff", 0},          // scope=5 did not move the group
		{"ff15:401b:8001::ffff:ffff", insufComps}, // an interface in scope 5: ERR 1B11
		{"ff15:401b:8002::ffff:ffff", 0},          // created by the mgid= line
		{"ff12:401b:8003::ffff:ffff", insufComps}, // no ipoib flag: ERR 1B11
	} {
		g := mad.GID(netip.MustParseAddr(c.mgid).As16())
		k := uint16(g[4])<<8 | uint16(g[5])
		st, err := join(ctx, l, "HcaB", lidA, joinRequest{MGID: g, PortGID: portGID(guidB), PKey: k})
		if err != nil || st != c.status {
			t.Errorf("join %s: status 0x%04x %v, want 0x%04x", c.mgid, st, err, c.status)
		}
	}
	if _, err := d.WaitLog("ERR 1B11", from, 20*time.Second); err != nil {
		t.Fatal(err)
	}

	// The model: p1's broadcast group is link-local, p2 has both.
	c := partconf.Parse("partitions.conf", []byte(ipoibConf))
	groups := map[string]bool{}
	for _, p := range c.Partitions {
		for _, g := range p.Groups {
			groups[g.MGID.String()] = true
		}
	}
	for mgid, want := range map[string]bool{"ff12:401b:8001::ffff:ffff": true, "ff15:401b:8001::ffff:ffff": false,
		"ff15:401b:8002::ffff:ffff": true, "ff12:401b:8003::ffff:ffff": false} {
		if groups[mgid] != want {
			t.Errorf("model: group %s %v, OpenSM %v", mgid, groups[mgid], want)
		}
	}
	// The lint warns about p1 (line 2) only.
	var lines []int
	for fd := range partconf.LintFindings(c, partconf.LintOptions{}).All() {
		if fd.Rule == "ipoib-scope" {
			lines = append(lines, fd.Pos.Line)
		}
	}
	if len(lines) != 1 || lines[0] != 2 {
		t.Errorf("ipoib-scope findings at lines %v, want [2]", lines)
	}

	// The log: both refusals, explained with the line to edit.
	path := filepath.Join(t.TempDir(), "partitions.conf")
	if err := os.WriteFile(path, []byte(ipoibConf), 0o644); err != nil {
		t.Fatal(err)
	}
	parts, err := query.ReadPartitions(path, nil, partconf.Options{TableSize: 64, SMGUID: guidA})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range readAll(t, d.LogText()) {
		if ev.Code != "1B11" {
			continue
		}
		ex := (&Explainer{R: NewResolver(nil, NewNames()), Parts: parts, PartsText: ipoibConf}).Explain(ev)
		got = append(got, ev.MGID)
		want := map[string]string{"ff15:401b:8001::ffff:ffff": "mgid=ff15:401b::ffff:ffff,sl=0", "ff12:401b:8003::ffff:ffff": "add `, ipoib`"}[ev.MGID]
		if ev.Kind != KindJoinRefused || ev.From.GUID != guidB || want == "" || !strings.Contains(ex.Fix, want) || !strings.Contains(ex.Rule, "stays down") {
			t.Errorf("event %+v\nrule %s\nfix %s (want %q)", *ev, ex.Rule, ex.Fix, want)
		}
	}
	if strings.Join(got, " ") != "ff15:401b:8001::ffff:ffff ff12:401b:8003::ffff:ffff" {
		t.Errorf("1B11 events for %v", got)
	}
}

// TestLabIPoIBDefaultBroadcast sends the kernel's broadcast join for ib0 (P_Key 0xffff:
// ff12:401b:ffff::ffff:ffff) to OpenSM with a Default line without ipoib, with one with
// it, and with no partitions file at all. OpenSM creates the default partition's
// broadcast group itself only without a file (osm_prtn.c prtn_make_default: `if
// (no_config)`); with a file, only the ipoib flag on the Default line creates it
// (osm_prtn_config.c partition_create), so `Default=0x7fff : ALL=full;`, and a file
// without a Default line, leave every host's ib0 without carrier (status 0x0600, ERR
// 1B11).
func TestLabIPoIBDefaultBroadcast(t *testing.T) {
	lab.Require(t)
	l := lab.StartPartconf(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	const insufComps = 0x0600
	bcast := mad.GID(netip.MustParseAddr("ff12:401b:ffff::ffff:ffff").As16())
	joinB := func(what string, want uint16) {
		t.Helper()
		st, err := join(ctx, l, "HcaB", lidA, joinRequest{MGID: bcast, PortGID: portGID(guidB), PKey: 0xffff})
		if err != nil || st != want {
			t.Errorf("%s: broadcast join status 0x%04x %v, want 0x%04x", what, st, err, want)
		}
	}
	for _, c := range []struct {
		conf string
		want uint16
		rule string // the warning partitions check gives
	}{
		{"Default=0x7fff : ALL=full;\n", insufComps, "default-no-ipoib"},
		{"Default=0x7fff, ipoib : ALL=full;\n", 0, ""},
		{"p1=0x0001, ipoib : ALL=full;\n", insufComps, "no-default"},
	} {
		d := l.StartOpenSMDaemon(t, c.conf)
		from := d.LogSize()
		joinB(c.conf, c.want)
		if c.want != 0 {
			if _, err := d.WaitLog("ERR 1B11", from, 20*time.Second); err != nil {
				t.Fatal(err)
			}
			// No file at all: the same daemon, its file removed, swept again.
			if err := os.Remove(d.Conf); err != nil {
				t.Fatal(err)
			}
			if err := d.Resweep(60 * time.Second); err != nil {
				t.Fatal(err)
			}
			joinB("no partitions file", 0)
			if _, _, err := d.Reprogram(ctx, c.conf); err != nil {
				t.Fatal(err)
			}
			// The group, once made, is the default partition's and stays while OpenSM
			// runs (osm_prtn.c: well_known, removed only with its partition, and the
			// default partition always exists): the file's missing ipoib bites at
			// OpenSM's next start, or when a standby SM takes over.
			joinB("no ipoib again, same daemon", 0)
		}
		d.Stop()
		// partconf's model agrees (the broadcast group exists with ipoib only), and
		// partitions check warns without it, naming ib0's carrier.
		conf := partconf.Parse("partitions.conf", []byte(c.conf))
		has := false
		for _, g := range conf.Partition(check.DefaultPartition).Groups {
			has = has || g.MGID.As16() == [16]byte(bcast)
		}
		var rules []string
		for fd := range partconf.LintFindings(conf, partconf.LintOptions{}).All() {
			if strings.Contains(fd.Message, "ib0") && strings.Contains(fd.Message, "without carrier") {
				rules = append(rules, fd.Rule)
			}
		}
		if has != (c.want == 0) || strings.Join(rules, " ") != c.rule {
			t.Errorf("%s: model has the broadcast group: %v; warnings about ib0 %v, want %q", c.conf, has, rules, c.rule)
		}
	}
	nf := partconf.NoFile().Partition(check.DefaultPartition).Groups
	if len(nf) != 1 || nf[0].MGID.As16() != [16]byte(bcast) {
		t.Errorf("no file: model's default groups %v, want the broadcast group", nf)
	}
}

// TestLabDefaultIPoIBAfterHUP follows default-no-ipoib's action on a running OpenSM:
// `, ipoib` added to the Default line, then SIGHUP. OpenSM 3.3.23 made the broadcast
// group in that sweep (osm_prtn.c osm_prtn_add_mcgroup creates a group it lacks), and
// the kernel's broadcast join it refused before succeeded.
func TestLabDefaultIPoIBAfterHUP(t *testing.T) {
	lab.Require(t)
	l := lab.StartPartconf(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	bcast := mad.GID(netip.MustParseAddr("ff12:401b:ffff::ffff:ffff").As16())
	d := l.StartOpenSMDaemon(t, "Default=0x7fff : ALL=full;\n")
	for _, c := range []struct {
		what string
		want uint16
	}{{"no ipoib", 0x0600}, {"ipoib added, SIGHUP", 0}} {
		if c.want == 0 {
			if _, _, err := d.Reprogram(ctx, "Default=0x7fff, ipoib : ALL=full;\n"); err != nil {
				t.Fatal(err)
			}
		}
		st, err := join(ctx, l, "HcaB", lidA, joinRequest{MGID: bcast, PortGID: portGID(guidB), PKey: 0xffff})
		if err != nil || st != c.want {
			t.Errorf("%s: broadcast join status 0x%04x %v, want 0x%04x", c.what, st, err, c.want)
		}
	}
}

// TestLabIPoIBGroupWithoutBroadcast creates IPoIB multicast groups (an IPv4 group,
// an IPv6 one) with a join that has every component OpenSM needs to create a group,
// in partitions with and without a broadcast group: OpenSM creates them only where
// the broadcast group of that scope exists (ERR 1B1B otherwise), and sm log says so.
func TestLabIPoIBGroupWithoutBroadcast(t *testing.T) {
	lab.Require(t)
	l := lab.StartPartconf(t)
	d := l.StartOpenSMDaemon(t, ipoibConf)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const reqInvalid = 0x0200 // IB_SA_MAD_STATUS_REQ_INVALID
	from := d.LogSize()
	var refused []string
	for _, c := range []struct {
		mgid, bcast string
		status      uint16
	}{
		{"ff12:401b:8001::e000:1", "", 0},                                   // p1 has its link-local broadcast group
		{"ff12:401b:8003::e000:1", "ff12:401b:8003::ffff:ffff", reqInvalid}, // p3 has none
		{"ff12:601b:8003::1", "ff12:401b:8003::ffff:ffff", reqInvalid},      // an IPv6 group of p3
		{"ff15:401b:8001::e000:1", "ff15:401b:8001::ffff:ffff", reqInvalid}, // p1 in scope 5: none
	} {
		g := mad.GID(netip.MustParseAddr(c.mgid).As16())
		k := uint16(g[4])<<8 | uint16(g[5])
		st, err := join(ctx, l, "HcaB", lidA, joinRequest{MGID: g, PortGID: portGID(guidB), PKey: k, QKey: 0x0b1b, Create: true})
		if err != nil || st != c.status {
			t.Errorf("join %s: status 0x%04x %v, want 0x%04x", c.mgid, st, err, c.status)
		}
		if c.bcast != "" {
			refused = append(refused, c.bcast)
		}
	}
	if _, err := d.WaitLog("ERR 1B1B", from, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range readAll(t, d.LogText()[from:]) {
		ex := (&Explainer{R: NewResolver(nil, NewNames())}).Explain(ev)
		got = append(got, ev.MGID)
		k, _, _, _ := ipoibMGID(ev.MGID)
		if ev.Kind != KindJoinRefused || ev.Code != "1B1B" || ev.Key != uint64(k) || !strings.Contains(ex.Rule, "group "+ev.MGID+" (partition") ||
			!strings.Contains(ex.Rule, "names neither the port nor the group") {
			t.Errorf("event %+v\nrule %s\nfix %s", *ev, ex.Rule, ex.Fix)
		}
	}
	if strings.Join(got, " ") != strings.Join(refused, " ") {
		t.Errorf("1B1B events for %v, want %v\n%s", got, refused, tail(d.LogText(), 2000))
	}
}

// TestLabIPoIBGroupCreateMismatch creates IPoIB groups of p1 with another Q_Key, and
// another partition's P_Key, than p1's broadcast group: OpenSM checks a new IPoIB
// group's fields against the broadcast group (ERR 1B30 or 1B32, then 1B1C without a
// port), so "the group's" Q_Key is the broadcast group's, and the group asked for
// does not exist for saquery to list; a limited P_Key of p1 is created.
func TestLabIPoIBGroupCreateMismatch(t *testing.T) {
	lab.Require(t)
	l := lab.StartPartconf(t)
	d := l.StartOpenSMDaemon(t, ipoibConf)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	from := d.LogSize()
	for _, c := range []struct {
		mgid   string
		pkey   uint16
		qkey   uint32
		status uint16
	}{
		{"ff12:401b:8001::e000:2", 0x8001, 0x1234, 0x0200},
		{"ff12:401b:8001::e000:3", 0x8002, 0x0b1b, 0x0200},
		{"ff12:401b:8001::e000:4", 0x0001, 0x0b1b, 0},
	} {
		g := mad.GID(netip.MustParseAddr(c.mgid).As16())
		st, err := join(ctx, l, "HcaB", lidA, joinRequest{MGID: g, PortGID: portGID(guidB), PKey: c.pkey, QKey: c.qkey, Create: true})
		if err != nil || st != c.status {
			t.Errorf("join %s: status 0x%04x %v, want 0x%04x", c.mgid, st, err, c.status)
		}
	}
	if _, err := d.WaitLog("ff12:401b:8001::e000:3", from, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	var codes []string
	for _, ev := range readAll(t, d.LogText()[from:]) {
		codes = append(codes, ev.Code)
		ex := (&Explainer{R: NewResolver(nil, NewNames())}).Explain(ev)
		if ev.Kind != KindJoinRefused || !strings.Contains(ex.Rule, "the join would create group "+ev.MGID+"; ") || !strings.Contains(ex.Rule, "broadcast group's 0x") ||
			!strings.Contains(ex.Fix, "broadcast group ff12:401b:8001::ffff:ffff") {
			t.Errorf("event %+v\nrule %s\nfix %s", *ev, ex.Rule, ex.Fix)
		}
	}
	if strings.Join(codes, " ") != "1B30 1B32" {
		t.Errorf("events %v, want 1B30 1B32", codes)
	}
}
