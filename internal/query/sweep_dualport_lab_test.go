package query_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/lab"
	"github.com/ibkey/ibkey/internal/query"
)

// TestLabSweepLocalCAOtherPort: swept from HcaD, a dual-port CA with both ports cabled
// (port 1 to Switch1, port 2 to Switch2), the sweep finds port 2 as ibnetdiscover run
// at HcaD does (its port GUID 0x10000b), reads its table as smpquery does, and the
// audit sees a change made to that table. Before, port 2 had no GUID and no table,
// the audit passed whatever it held, and a partition whose only full member is port 2
// was reported as "limited-only".
func TestLabSweepLocalCAOtherPort(t *testing.T) {
	l := lab.Start(t, smallNet, nil)
	// Port 2 of HcaD (0x10000b) is the only full member of 0x0001.
	conf := "Default=0x7fff : ALL=full ;\na=0x0001 : 0x10000b=full, 0x100004 ;\n"
	if err := l.RunOpenSM(conf, false); err != nil {
		t.Fatal(err)
	}
	f := sweepLab(t, l, "HcaD", query.SweepOptions{})
	out, err := l.ToolAt("HcaD", "ibnetdiscover")
	if err != nil {
		t.Fatal(err)
	}
	compareDiscovery(t, "from HcaD", f, ibnetdiscover(t, out), l.Topology)

	d := f.Node(0x100009)
	if d == nil {
		t.Fatal("HcaD not in the sweep")
	}
	p2 := d.Port(2)
	if p2.GUID != 0x10000b || p2.PKeys == nil {
		t.Fatalf("HcaD[2]: GUID %s, table %v (%s); ibnetdiscover at HcaD reports port GUID 0x10000b", p2.GUID, p2.PKeys, p2.PKeysError)
	}
	smp, err := l.ToolAt("HcaD", "smpquery", "pkeys", strconv.Itoa(int(p2.LID)))
	if err != nil {
		t.Fatal(err)
	}
	want, err := lab.ParsePKeys(smp)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(p2.PKeys) != fmt.Sprint(toPKeys(want.Entries[:want.Capacity])) {
		t.Errorf("HcaD[2] table %v, smpquery %v", p2.PKeys, want.Entries[:want.Capacity])
	}
	for _, fd := range fabric.AuditFabric(f, fabric.AuditOptions{}).Findings {
		if fd.Severity == check.SeverityError || fd.Rule == fabric.RuleLimitedOnly {
			t.Errorf("audit of the fabric OpenSM just programmed: %s", fd)
		}
	}

	// Drop 0x8001 from HcaD[2] behind the SM's back: the audit must see it.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var block [mad.PKeysPerBlock]uint16
	block[0] = 0xffff
	if err := l.SetPKeyBlock(ctx, "HcaA", mad.LIDAddress(p2.LID), 0, 0, block); err != nil {
		t.Fatal(err)
	}
	f = sweepLab(t, l, "HcaD", query.SweepOptions{})
	var rules []string
	for _, fd := range fabric.AuditFabric(f, fabric.AuditOptions{}).Findings {
		rules = append(rules, fd.Rule)
	}
	if got := strings.Join(rules, " "); !strings.Contains(got, fabric.RuleSwitchKeyNotOnHCA) || !strings.Contains(got, fabric.RuleLimitedOnly) {
		t.Errorf("after removing 0x8001 from HcaD[2]: rules %v, want %s (Switch2[2] still holds it) and %s (0x0001 has no full member left)",
			rules, fabric.RuleSwitchKeyNotOnHCA, fabric.RuleLimitedOnly)
	}
}
