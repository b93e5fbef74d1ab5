package smlog

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/ibverbs/mad"
)

// TestLabJoinLimitedGroup: HcaC, a limited member of p1, creates a group with the
// limited P_Key 0x0001; joins that name 0x0001 are then refused (ERR 1B31, then
// 1B1A), from a limited member (HcaD) and from a full one (HcaB) alike, and a full
// member's join with 0x8001 is not. OpenSM keeps the creator's limited P_Key as the
// group's: a group's side can be limited.
func TestLabJoinLimitedGroup(t *testing.T) {
	l := startLab(t)
	d := l.StartOpenSMDaemon(t, labConf)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const mgid = "ff12:1234::1"
	g := mad.GID(netip.MustParseAddr(mgid).As16())
	from := d.LogSize()
	for _, c := range []struct {
		node   string
		guid   uint64
		pkey   uint16
		create bool
		status uint16
	}{
		{"HcaC", guidC, 0x0001, true, 0},
		{"HcaD", guidD, 0x0001, false, 0x0200},
		{"HcaB", guidB, 0x0001, false, 0x0200},
		{"HcaB", guidB, 0x8001, false, 0},
	} {
		st, err := join(ctx, l, c.node, lidA, joinRequest{MGID: g, PortGID: portGID(c.guid), PKey: c.pkey, QKey: 0x42, Create: c.create})
		if err != nil || st != c.status {
			t.Errorf("%s joins with 0x%04x: status 0x%04x %v, want 0x%04x", c.node, c.pkey, st, err, c.status)
		}
	}
	if _, err := d.WaitLog("ERR 1B1A", from, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	var who []string
	for _, e := range readAll(t, d.LogText()[from:]) {
		ex := (&Explainer{R: NewResolver(nil, NewNames())}).Explain(e)
		who = append(who, e.From.NodeDesc)
		if e.Code != "1B31" || e.MGID != mgid || e.Key != 0x0001 || !strings.Contains(ex.Rule, "group "+mgid+" has the limited P_Key 0x0001, given by the join that created it") ||
			!strings.Contains(ex.Fix, "join with the full P_Key 0x8001") || strings.Contains(ex.Fix, "the group's own P_Key") {
			t.Errorf("%+v\nrule %s\nfix %s", e, ex.Rule, ex.Fix)
		}
	}
	if strings.Join(who, " ") != "HcaD HcaB" {
		t.Errorf("1B31 events from %v, want HcaD HcaB", who)
	}
}
