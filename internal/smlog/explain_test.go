package smlog

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/partconf"
	"github.com/ibkey/ibkey/internal/query"
)

// labLog reads testdata/lab.log (TestLabLog records it) into groups, as of the end of
// 2026 in UTC.
func labLog(t *testing.T) (*Summary, *Names) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "lab.log"))
	if err != nil {
		t.Fatalf("%v (record it: go test -run TestLabLog -update)", err)
	}
	defer f.Close()
	s := NewSummary()
	a := NewAssembler(time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC), time.UTC, func(e *Event) { s.Add(e) })
	if err := Read(context.Background(), f, a); err != nil {
		t.Fatal(err)
	}
	return s, a.Names
}

func labFabric(t *testing.T) *fabric.Fabric {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "lab-fabric.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fab, err := fabric.DecodeFabric(f)
	if err != nil {
		t.Fatal(err)
	}
	return fab
}

func labParts(t *testing.T) (*query.Partitions, string) {
	t.Helper()
	path := filepath.Join("testdata", "lab-partitions.conf")
	p, err := query.ReadPartitions(path, nil, partconf.Options{TableSize: 64, SMGUID: guidA})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	return p, string(b)
}

// TestExplainLab explains every group of the lab's log three ways: from the log
// alone, with the sweep, and with the sweep and the partitions file.
func TestExplainLab(t *testing.T) {
	for _, c := range []struct {
		name         string
		fabric, file bool
	}{{"log", false, false}, {"fabric", true, false}, {"partitions", true, true}} {
		t.Run(c.name, func(t *testing.T) {
			s, names := labLog(t)
			var fab *fabric.Fabric
			if c.fabric {
				fab = labFabric(t)
			}
			x := &Explainer{R: NewResolver(fab, names)}
			if c.file {
				x.Parts, x.PartsText = labParts(t)
			}
			var b strings.Builder
			for _, g := range s.Groups {
				ex := x.ExplainGroup(g)
				fmt.Fprintf(&b, "%s x%d (line %d)\n", g.First.Kind, g.Count, g.First.Line)
				for _, e := range []struct {
					name string
					end  *End
				}{{"from", ex.From}, {"to", ex.To}, {"reporter", ex.Reporter}, {"switch", ex.Switch}} {
					if e.end != nil {
						fmt.Fprintf(&b, "  %s: %s [%s]\n", e.name, e.end.LongLabel(), e.end.From)
					}
				}
				fmt.Fprintf(&b, "  rule: %s\n  fix: %s\n", ex.Rule, ex.Fix)
				if ex.FixAt != "" {
					fmt.Fprintf(&b, "  at: %s\n", ex.FixAt)
				}
				for _, n := range ex.Notes {
					fmt.Fprintf(&b, "  note: %s\n", n)
				}
			}
			golden.RequireEqual(t, b.String())
		})
	}
}

// TestExplainConfigMissing: "is not accessible" is OpenSM's stat() of the path it
// reads failing (osm_prtn.c osm_prtn_make_partitions): it read no file. The
// explanation names that path, from the log alone too, and says no partition of any
// file exists (not "every partition of the file is gone": there was none read).
func TestExplainConfigMissing(t *testing.T) {
	const line = "Nov 27 09:56:07 134108 [E8DBC6C0] 0x04 -> osm_prtn_make_partitions: Partition configuration /etc/opensm/partitions.conf is not accessible (Permission denied)\n"
	var evs []*Event
	a := NewAssembler(time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC), time.UTC, func(e *Event) { evs = append(evs, e) })
	if err := Read(context.Background(), strings.NewReader(line), a); err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Kind != KindConfigMissing {
		t.Fatalf("events %+v", evs)
	}
	parts, text := labParts(t)
	for _, x := range []*Explainer{{R: NewResolver(nil, a.Names)}, {R: NewResolver(nil, a.Names), Parts: parts, PartsText: text}} {
		ex := x.Explain(evs[0])
		for _, want := range []string{"/etc/opensm/partitions.conf (Permission denied)", "no other partition exists"} {
			if !strings.Contains(ex.Rule, want) {
				t.Errorf("rule %q lacks %q", ex.Rule, want)
			}
		}
		if strings.Contains(ex.Rule, "of the file is gone") {
			t.Errorf("rule %q: OpenSM read no file", ex.Rule)
		}
		if !strings.Contains(ex.Fix, "/etc/opensm/partitions.conf") {
			t.Errorf("fix %q does not name the path OpenSM reads", ex.Fix)
		}
	}
}

// TestExplainDefaultBroadcast explains ERR 1B11 for ib0's broadcast group (P_Key
// 0xffff; the line is the lab's OpenSM's, TestLabIPoIBDefaultBroadcast): from the log
// alone the likely cause is a Default line without ipoib; with --partitions the
// Default line to edit, or what else the file says.
func TestExplainDefaultBroadcast(t *testing.T) {
	const line = "Nov 28 01:25:43 025049 [526046C0] 0x01 -> mcmr_rcv_join_mgrp: ERR 1B11: Port 0x0002c90300000211 (HcaB) failed to join non-existing multicast group with MGID ff12:401b:ffff::ffff:ffff, insufficient components specified for implicit create (comp_mask 0x10083)\n"
	var evs []*Event
	a := NewAssembler(time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC), time.UTC, func(e *Event) { evs = append(evs, e) })
	if err := Read(context.Background(), strings.NewReader(line), a); err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Kind != KindJoinRefused || evs[0].Key != 0xffff {
		t.Fatalf("events %+v", evs)
	}
	const want = "`Default=0x7fff, ipoib : ALL=full;`"
	ex := (&Explainer{R: NewResolver(nil, a.Names)}).Explain(evs[0])
	if !strings.Contains(ex.Rule, "only when it reads no partitions file (osm_prtn.c)") || !strings.Contains(ex.Fix, "likely cause: partitions.conf's Default line has no ipoib flag") || !strings.Contains(ex.Fix, want) || ex.FixAt != "" {
		t.Errorf("log alone: rule %s\nfix %s at %q", ex.Rule, ex.Fix, ex.FixAt)
	}
	dir := t.TempDir()
	for _, c := range []struct{ conf, fix, at string }{
		{"# ours\nDefault=0x7fff : ALL=full;\np1=0x1, ipoib : ALL=full;\n", "the Default line at %s:2:1 `Default=0x7fff : ALL=full;` has no ipoib flag: add `, ipoib` (" + want + ")", ":2:1"},
		{"p1=0x1, ipoib : ALL=full;\n", "%s has no Default line: OpenSM adds Default=0x7fff : ALL=limited, SELF=full, with no broadcast group; add " + want, ":1:1"},
		{"Default=0x7fff : ALL=full;\nDefault=0x7fff, ipoib : SELF=full;\n", "%s creates group ff12:401b:ffff::ffff:ffff (partition Default at %s:1:1): OpenSM ran with another file", ":1:1"},
		{"Default=0x7fff : ALL=full;\np=0x1 : 0x:\n", "OpenSM rejects %s (first error at %s:2:", ":2:"},
	} {
		path := filepath.Join(dir, "partitions.conf")
		if err := os.WriteFile(path, []byte(c.conf), 0o644); err != nil {
			t.Fatal(err)
		}
		parts, err := query.ReadPartitions(path, nil, partconf.Options{TableSize: 64})
		if err != nil {
			t.Fatal(err)
		}
		ex := (&Explainer{R: NewResolver(nil, a.Names), Parts: parts, PartsText: c.conf}).Explain(evs[0])
		if fix := strings.ReplaceAll(c.fix, "%s", path); !strings.Contains(ex.Fix, fix) || !strings.HasPrefix(ex.FixAt, path+c.at) {
			t.Errorf("%q:\nfix %s at %s\nwant %s at %s", c.conf, ex.Fix, ex.FixAt, fix, path+c.at)
		}
	}
}

// TestExplainLIDNotInFabric: a LID that the fabric given does not hold is not "give
// --fabric-file" (it was given): the note says the fabric lacks it.
func TestExplainLIDNotInFabric(t *testing.T) {
	ev := &Event{Kind: KindBadPKey, Trap: 257, Key: 0x0001, KeyType: KeyPKey, SL: -1, SwitchPort: -1,
		From: Port{LID: 9, Num: -1}, To: Port{LID: lidC, Num: -1}, Reporter: Port{LID: lidC, Num: -1}}
	for _, c := range []struct {
		fab  bool
		want string
	}{{false, "LID 9 is not resolved: the log does not name it; give --fabric-file"}, {true, "LID 9 is not resolved: neither the log nor the fabric read (swept through "}} {
		var fab *fabric.Fabric
		if c.fab {
			fab = labFabric(t)
		}
		ex := (&Explainer{R: NewResolver(fab, NewNames())}).Explain(ev)
		if n := strings.Join(ex.Notes, "\n"); !strings.Contains(n, c.want) {
			t.Errorf("fabric %v: notes %q, want %q", c.fab, n, c.want)
		}
	}
}

// TestExplainBadMKeyLevels: a Get is refused for its M_Key only at protection levels
// 2 and 3 (opensm(8), IBA 14.2.4.1); the rule said "above 0".
func TestExplainBadMKeyLevels(t *testing.T) {
	ev := &Event{Kind: KindBadMKey, Trap: 256, Key: 0x42, KeyType: KeyMKey, SL: -1, SwitchPort: -1, From: unknownPort(), To: unknownPort(),
		Reporter: Port{LID: lidD, Num: -1}, Detail: "method 0x1, attribute 0x15, modifier 0x1"}
	rule := (&Explainer{R: NewResolver(nil, NewNames())}).Explain(ev).Rule
	if !strings.Contains(rule, "at protection level 2 or 3 a Get") || strings.Contains(rule, "above 0") {
		t.Errorf("rule: %s", rule)
	}
}

// TestExplainTrapCut: the lab's log read while OpenSM was writing a trap, cut after
// each trap's first line (osm_trap_rcv.c log_trap_info writes the key on the next,
// and the 256 and 259 ones only in the report): the event names its reporter and says
// its key is not known, never "P_Key 0x0000", "Q_Key 0x00000000", "M_Key 0x0000..."
// or "port -1".
func TestExplainTrapCut(t *testing.T) {
	b, err := os.ReadFile("testdata/lab.log")
	if err != nil {
		t.Fatal(err)
	}
	log := string(b)
	for _, num := range []string{"num:256", "num:257", "num:258", "num:259"} {
		i := strings.Index(log, num)
		if i < 0 {
			t.Fatalf("no %s in the lab's log", num)
		}
		cut := log[:i+strings.IndexByte(log[i:], '\n')+1]
		var evs []*Event
		a := NewAssembler(time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC), time.UTC, func(e *Event) { evs = append(evs, e) })
		if err := Read(context.Background(), strings.NewReader(cut), a); err != nil {
			t.Fatal(err)
		}
		last := evs[len(evs)-1]
		ex := (&Explainer{R: NewResolver(nil, a.Names)}).Explain(last)
		all := ex.Rule + " " + ex.Fix + " " + strings.Join(ex.Notes, " ")
		if "num:"+strconv.Itoa(last.Trap) != num || last.KeyType != "" || last.Reporter.LID == 0 ||
			strings.Contains(all, "0x0000") || strings.Contains(all, "port -1") || !strings.Contains(all, "not known") {
			t.Errorf("%s cut after its first line: trap %d, key %q 0x%x, reporter LID %d:\nrule %s\nfix %s\nnotes %q", num, last.Trap, last.KeyType, last.Key, last.Reporter.LID, ex.Rule, ex.Fix, ex.Notes)
		}
	}
}

// TestExplainEnforcementOffIndex: ERR 0507's second number is an index of the switch
// port's own new table, the CA's keys as OpenSM copied them to it (osm_pkey_mgr.c
// pkey_mgr_update_peer_port skips invalid entries and a limited key beside its full
// one; last_used_pkey_index reads the peer's table), not an index of the CA's table.
func TestExplainEnforcementOffIndex(t *testing.T) {
	var evs []*Event
	a := NewAssembler(time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC), time.UTC, func(e *Event) { evs = append(evs, e) })
	a.Line([]byte("Nov 28 10:00:00 000001 [AB12] 0x01 -> pkey_mgr_update_peer_port: ERR 0507: Not enough pkey entries (40 <= 47) on switch 0x0002c90000000001 port 7 (sw-leaf-1). Clearing Enforcement bit"))
	a.Flush()
	if len(evs) != 1 {
		t.Fatalf("%d events", len(evs))
	}
	ex := (&Explainer{R: NewResolver(nil, a.Names)}).Explain(evs[0])
	if !strings.Contains(ex.Rule, "the switch port holds 40 entries; the CA's partitions, copied to it, reach index 47") || strings.Contains(ex.Rule, "CA behind it uses index") {
		t.Errorf("rule %s", ex.Rule)
	}
}
