package smlog

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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
