package smlog

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/lab"
	"github.com/ibkey/ibkey/internal/query"
)

// TestLabTrapMulticast: a port drops a packet sent to a multicast LID for its P_Key
// (257) or Q_Key (258) and reports it, LID2 being the group's LID and QP2 0xffffff
// (IBA 14.3.1, 10.5.2.2). The port that dropped it is the trap's reporter, not "LID
// 49153", which no port holds; with the sweep and with the log alone.
func TestLabTrapMulticast(t *testing.T) {
	if testing.Short() {
		t.Skip("lab: -short")
	}
	lab.Require(t)
	l := lab.StartPartconf(t)
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
