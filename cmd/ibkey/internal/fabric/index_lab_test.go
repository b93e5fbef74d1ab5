package fabric

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/partconf"
)

// TestLabReorderedTable (issue 24 item 3): HcaB[1]'s table rewritten behind the SM's back
// with the same keys in another order. What OpenSM 3.3.23 did: a running OpenSM left the
// table as it was, also after kill -HUP (it does not re-read a table it programmed); a
// restarted one kept every key where it found it except index 0, which it gave back to
// 0xffff, moving the key it found there after the last index it used. fabric check
// --partitions says nothing about a reorder away from index 0, and for one through index
// 0 warns (exit 0) that OpenSM will move those keys when it next reads the table, names
// the new indexes only as a fresh OpenSM's, and calls no membership wrong.
func TestLabReorderedTable(t *testing.T) {
	l := startFabricLab(t, "small.net")
	const conf = "Default=0x7fff : ALL=full ;\na=0x0001 : ALL=full ;\nb=0x0002 : ALL=full ;\nc=0x0003 : ALL=limited, SELF=full ;\nd=0x0004 : ALL=full ;\n"
	osm := l.StartOpenSMDaemon(t, conf)
	hup := func() {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if _, _, err := osm.Reprogram(ctx, conf); err != nil { // the same file: kill -HUP
			t.Fatal(err)
		}
	}
	parts := writeTemp(t, "partitions.conf", conf)
	hcaB := check.PortID{Node: 0x100003, Port: 1}

	f, _ := l.discoverFile(t)
	if got := f.Port(hcaB).PKeys[:5]; fmtKeys(got) != "0xffff 0x8001 0x8002 0x0003 0x8004" {
		t.Fatalf("OpenSM programmed HcaB[1] = %s; this test expects the order OpenSM 3.3.23 gave", fmtKeys(got))
	}
	lid := f.Port(hcaB).LID
	set := func(keys ...uint16) {
		t.Helper()
		var blk [mad.PKeysPerBlock]uint16
		copy(blk[:], keys)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := l.SetPKeyBlock(ctx, l.from, mad.LIDAddress(lid), 0, 0, blk); err != nil {
			t.Fatal(err)
		}
	}
	table := func() string {
		t.Helper()
		f, _ := l.discoverFile(t)
		return fmtKeys(f.Port(hcaB).PKeys[:6])
	}

	// Away from index 0: OpenSM keeps every index, so nothing to say.
	set(0xffff, 0x8004, 0x0003, 0x8002, 0x8001)
	d := l.checkJSON(t, 0, "--partitions", parts, "--ignore", "enforcement-off")
	if d.Errors != 0 || d.Warnings != 0 {
		t.Errorf("reordered away from index 0: %d errors, %d warnings: %v", d.Errors, d.Warnings, d.rules())
	}
	hup()
	if got := table(); got != "0xffff 0x8004 0x0003 0x8002 0x8001 0x0000" {
		t.Errorf("after kill -HUP HcaB[1] = %s, OpenSM kept the reorder before", got)
	}

	// Through index 0.
	set(0x8001, 0xffff, 0x8002, 0x0003, 0x8004)
	r := l.run(t, "fabric", "check", "--partitions", parts, "--ignore", "enforcement-off")
	if r.Code != 0 {
		t.Errorf("fabric check --partitions: exit %d, want 0 (warnings only)\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	d = l.checkJSON(t, 0, "--partitions", parts, "--ignore", "enforcement-off")
	if d.Errors != 0 || d.Warnings != 1 || !d.has(partconf.RuleIndexMoved, "HcaB", 1, "0x7fff") || !d.has(partconf.RuleIndexMoved, "HcaB", 1, "0x0001") {
		t.Errorf("reordered through index 0: %d errors, %d warnings, want one %s naming 0xffff and 0x8001 on HcaB[1]: %v", d.Errors, d.Warnings, partconf.RuleIndexMoved, d.rules())
	}
	for _, want := range []string{"0xffff from index 1 to index 0", "0x8001 from index 0 to another index (5 when OpenSM starts afresh)", "pinned to an index (NCCL_IB_PKEY", "kill -HUP, leaves it as it is"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("fabric check --partitions lacks %q:\n%s", want, r.Stdout)
		}
	}
	for _, wrong := range []string{"OpenSM programs it at index", "wrong-membership", "missing-key", "extra-key", fabric.RuleDefaultNotIndex0} {
		if strings.Contains(r.Stdout, wrong) {
			t.Errorf("fabric check --partitions says %q:\n%s", wrong, r.Stdout)
		}
	}
	// Without the file the audit still warns about index 0.
	if d := l.checkJSON(t, 0, "--ignore", "enforcement-off"); !d.has(fabric.RuleDefaultNotIndex0, "HcaB", 1, "0x0001") {
		t.Errorf("without --partitions: %v, want %s", d.rules(), fabric.RuleDefaultNotIndex0)
	}
	// The running OpenSM leaves it; a restarted one moves the keys as said.
	hup()
	if got := table(); got != "0x8001 0xffff 0x8002 0x0003 0x8004 0x0000" {
		t.Errorf("after kill -HUP HcaB[1] = %s, want the table left as it was", got)
	}
	osm.Stop()
	if err := l.RunOpenSM(conf, false); err != nil {
		t.Fatal(err)
	}
	if got := table(); got != "0xffff 0x0000 0x8002 0x0003 0x8004 0x8001" {
		t.Errorf("after OpenSM restarted HcaB[1] = %s, want 0xffff at index 0 and 0x8001 at 5, as fabric check said", got)
	}
}

func fmtKeys(ks []check.PKey) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = k.String()
	}
	return strings.Join(s, " ")
}

// TestLabReorderedTableLinkReset: index-moved's action says the indexes change when
// OpenSM re-reads the table, when it restarts or the port resets. What OpenSM 3.3.23
// did after a link reset of HcaB[1] (ibsim Unlink and ReLink): the same as a restart
// (TestLabReorderedTable): 0xffff back at index 0, 0x8001 after the last index used,
// and fabric check found nothing.
func TestLabReorderedTableLinkReset(t *testing.T) {
	l := startFabricLab(t, "small.net")
	const conf = "Default=0x7fff : ALL=full ;\na=0x0001 : ALL=full ;\nb=0x0002 : ALL=full ;\nc=0x0003 : ALL=limited, SELF=full ;\nd=0x0004 : ALL=full ;\n"
	osm := l.StartOpenSMDaemon(t, conf)
	parts := writeTemp(t, "partitions.conf", conf)
	hcaB := check.PortID{Node: 0x100003, Port: 1}
	f, _ := l.discoverFile(t)
	var blk [mad.PKeysPerBlock]uint16
	copy(blk[:], []uint16{0x8001, 0xffff, 0x8002, 0x0003, 0x8004})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := l.SetPKeyBlock(ctx, l.from, mad.LIDAddress(f.Port(hcaB).LID), 0, 0, blk); err != nil {
		t.Fatal(err)
	}
	if d := l.checkJSON(t, 0, "--partitions", parts, "--ignore", "enforcement-off"); !d.has(partconf.RuleIndexMoved, "HcaB", 1, "0x0001") {
		t.Fatalf("reordered through index 0: %v, want %s", d.rules(), partconf.RuleIndexMoved)
	}
	bounce(t, l, osm, "HcaB", 1)
	f, _ = l.discoverFile(t)
	if got := fmtKeys(f.Port(hcaB).PKeys[:6]); got != "0xffff 0x0000 0x8002 0x0003 0x8004 0x8001" {
		t.Errorf("after HcaB[1]'s link was reset: %s, want what a restarted OpenSM programs", got)
	}
	if d := l.checkJSON(t, 0, "--partitions", parts, "--ignore", "enforcement-off"); len(d.Findings) != 0 {
		t.Errorf("after HcaB[1]'s link was reset: %v, want none", d.rules())
	}
}
