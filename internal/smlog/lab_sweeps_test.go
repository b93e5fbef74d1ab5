package smlog

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/lab"
)

// TestLabSweepDuplicates runs OpenSM (verbose) through generated partitions files, one
// SIGHUP each, and checks the log's "Duplicated partition definition" lines against a
// model of osm_prtn.c: OpenSM keeps its partitions from one sweep to the next (only
// their members are cleared), so a definition of a key it already has logs the line:
// with the same name at every sweep (routine: not an event), with another name when
// the file defines the key twice or renamed it since an earlier sweep (a warning,
// whose explanation names both). A partition left without members is deleted.
func TestLabSweepDuplicates(t *testing.T) {
	l := startLab(t)
	d := l.StartOpenSMDaemon(t, "Default=0x7fff : ALL=full;\n", "log_flags 0x07")
	hcas := []string{"0x0002c90300000211", "0x0002c90300000221", "0x0002c90300000231"}
	names := []string{"pA", "pB", "pC"}
	rng := rand.New(rand.NewPCG(23, 14))
	known := map[uint16]string{0x7fff: "Default"} // OpenSM's partitions after the last sweep
	for round := range 8 {
		var conf strings.Builder
		conf.WriteString("Default=0x7fff : ALL=full;\n")
		type dup struct{ name, prev string }
		var want []dup
		now := map[uint16]string{0x7fff: "Default"}
		for range 1 + rng.IntN(4) {
			key := uint16(1 + rng.IntN(3))
			name := names[rng.IntN(len(names))]
			member := hcas[rng.IntN(len(hcas))]
			if rng.IntN(2) == 0 {
				member += "=full"
			}
			fmt.Fprintf(&conf, "%s=0x%04x : %s;\n", name, key, member)
			prev, ok := now[key]
			if !ok {
				prev, ok = known[key]
			}
			switch {
			case !ok:
				now[key] = name
			case prev != name:
				want = append(want, dup{name, prev})
				now[key] = prev
			default:
				now[key] = prev
			}
		}
		known = now
		from := d.LogSize()
		if err := os.WriteFile(d.Conf, []byte(conf.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := d.Resweep(20 * time.Second); err != nil {
			t.Fatal(err)
		}
		seg := d.LogText()[from:]
		if !strings.Contains(seg, "Duplicated partition definition: 'Default' (0x7fff) prev name 'Default'") {
			t.Fatalf("round %d: OpenSM no longer logs the Default it keeps between sweeps; the model is wrong:\n%s", round, seg)
		}
		var got []dup
		x := &Explainer{R: NewResolver(nil, nil)}
		for _, e := range readAll(t, seg) {
			if e.Kind != KindConfigWarning || !strings.HasPrefix(e.Detail, "Duplicated") {
				t.Errorf("round %d: unexpected event %s %q", round, e.Kind, e.Detail)
				continue
			}
			var name, prev string
			var key uint64
			if !scanf([]byte(e.Detail), dupFormat, &name, &key, &prev) {
				t.Fatalf("round %d: %q", round, e.Detail)
			}
			got = append(got, dup{name, prev})
			if ex := x.Explain(e); !strings.Contains(ex.Rule, fmt.Sprintf("as %q when it read the definition %q", prev, name)) {
				t.Errorf("round %d: %s", round, ex.Rule)
			}
		}
		t.Logf("round %d: %d definitions renamed or defined twice", round, len(want))
		if !slices.Equal(got, want) {
			t.Errorf("round %d: file\n%sduplicates logged %v, the model says %v", round, conf.String(), got, want)
		}
	}
}

// TestLabRejectedAndFullTables checks what sm log says of a rejected partitions file
// and of a P_Key table that overflows against the tables OpenSM then programmed, read
// back with smpquery: after the fallback every port holds the default partition only,
// as a full member; after ERR 0512 the port's table is full and holds none of the
// partitions the log names.
func TestLabRejectedAndFullTables(t *testing.T) {
	l := startLab(t)
	d := l.StartOpenSMDaemon(t, labConf)
	tables := func() map[int][]uint16 {
		m := map[int][]uint16{}
		for _, lid := range []int{lidA, lidB, lidC, lidD} {
			pt, err := lab.ParsePKeys(l.MustTool("smpquery", "pkeys", itoa(lid)))
			if err != nil {
				t.Fatal(err)
			}
			m[lid] = pt.Entries
		}
		return m
	}
	sweep := func(conf string) []*Event {
		t.Helper()
		from := d.LogSize()
		if err := os.WriteFile(d.Conf, []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := d.Resweep(20 * time.Second); err != nil {
			t.Fatal(err)
		}
		return readAll(t, d.LogText()[from:])
	}
	x := &Explainer{R: NewResolver(nil, nil)}

	evs := sweep(labConf + "p4=0x0004 : 0x0002c90300000211=full;\nbroken\n")
	if len(evs) != 1 || evs[0].Kind != KindConfigRejected || !evs[0].Fallback || evs[0].ConfLine != 6 {
		t.Fatalf("rejected file: %v", evs)
	}
	if rule := x.Explain(evs[0]).Rule; !strings.Contains(rule, "every port is a full member of the default partition only") {
		t.Errorf("rule: %s", rule)
	}
	for lid, tbl := range tables() {
		for i, k := range tbl {
			if k != 0 && (i != 0 || k != 0xffff) {
				t.Errorf("after the fallback LID %d holds 0x%04x at index %d", lid, k, i)
			}
		}
	}

	var big strings.Builder
	big.WriteString(labConf)
	for k := 0x100; k < 0x100+70; k++ {
		fmt.Fprintf(&big, "x%d=0x%04x : 0x0002c90300000231;\n", k, k)
	}
	s := NewSummary()
	for _, e := range sweep(big.String()) {
		s.Add(e)
	}
	if len(s.Groups) != 1 || s.Groups[0].First.Kind != KindTableFull || s.Groups[0].First.From.NodeDesc != "HcaD" {
		t.Fatalf("table full: %d groups", len(s.Groups))
	}
	g := s.Groups[0]
	tbl := tables()[lidD]
	for i, k := range tbl {
		if k == 0 {
			t.Errorf("HcaD's table has a free entry at %d, yet OpenSM logged ERR 0512", i)
		}
	}
	for _, k := range g.Keys {
		if slices.ContainsFunc(tbl, func(e uint16) bool { return check.PKey(e).Partition() == check.PKey(k).Partition() }) {
			t.Errorf("ERR 0512 names 0x%04x, yet HcaD's table holds it: %v", k, tbl)
		}
	}
	// Every partition of the file HcaD is in is either in its table or named by ERR 0512.
	if n := len(g.Keys) + len(slices.DeleteFunc(slices.Clone(tbl), func(e uint16) bool { return e == 0 })); n != 4+70 {
		t.Errorf("HcaD: %d keys in the table and %d named by ERR 0512; the file gives it %d", len(tbl), len(g.Keys), 4+70)
	}
}

// TestLabPartitionsFileHistory sweeps a verbose OpenSM through a generated sequence of
// partitions files (good, one it rejects, an empty one, none at all) and checks
// what sm log adds to each partitions-rejected and partitions-missing problem: the
// first later sweep that read a good file, by its SUBNET UP line, or nothing when
// none came.
func TestLabPartitionsFileHistory(t *testing.T) {
	l := startLab(t)
	d := l.StartOpenSMDaemon(t, labConf, "log_flags 0x07")
	files := map[string]string{"good": labConf, "bad": labConf + "oops\n", "empty": "# no definition\n"}
	kinds := []string{"good", "bad", "empty", "missing"}
	rng := rand.New(rand.NewPCG(7, 3))
	type sweep struct {
		kind string
		up   int // the line of its SUBNET UP
	}
	var sweeps []sweep
	lineCount := func() int { return strings.Count(d.LogText(), "\n") }
	// A rejected file is rejected at one of three lines (each its own problem); the
	// sixth sweep finds no file; the last reads a good one, so every problem has a
	// later good sweep.
	for i := range 12 {
		k := kinds[rng.IntN(len(kinds))]
		switch i {
		case 5:
			k = "missing"
		case 11:
			k = "good"
		}
		files["bad"] = labConf + strings.Repeat("# comment\n", rng.IntN(3)) + "oops\n"
		if k == "missing" {
			if err := os.Remove(d.Conf); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
		} else if err := os.WriteFile(d.Conf, []byte(files[k]), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := d.Resweep(20 * time.Second); err != nil {
			t.Fatal(err)
		}
		// The SUBNET UP just logged is the last line with it.
		lines := strings.Split(d.LogText(), "\n")
		up := 0
		for i := lineCount() - 1; i >= 0; i-- {
			if strings.HasSuffix(lines[i], "-> SUBNET UP") {
				up = i + 1
				break
			}
		}
		sweeps = append(sweeps, sweep{k, up})
	}
	var kindsSeen []string
	for _, s := range sweeps {
		kindsSeen = append(kindsSeen, s.kind)
	}
	t.Logf("sweeps: %v", kindsSeen)
	s := NewSummary()
	a := NewAssembler(time.Now(), time.Local, func(e *Event) { s.Add(e) })
	for _, line := range strings.Split(strings.TrimSuffix(d.LogText(), "\n"), "\n") {
		a.Line([]byte(line))
	}
	a.Flush()
	groups, notes := 0, map[string]bool{}
	for _, g := range s.Groups {
		if g.First.Kind != KindConfigRejected && g.First.Kind != KindConfigMissing {
			continue
		}
		groups++
		// The sweep of the group's last event, then the first good one after it.
		want := ""
		for i, sw := range sweeps {
			if int64(sw.up) < g.LastLine {
				continue
			}
			for _, later := range sweeps[i+1:] {
				if later.kind == "good" {
					want = fmt.Sprintf("(SUBNET UP at line %d,", later.up)
					break
				}
			}
			break
		}
		got := a.SweptSince(g.First.Kind, g.LastLine)
		notes[got] = true
		if want == "" && got != "" || want != "" && (!strings.Contains(got, want) || !strings.Contains(got, "read a partitions file it could parse")) {
			t.Errorf("%s ending at line %d: note %q, want %q", g.First.Kind, g.LastLine, got, want)
		}
	}
	if groups < 3 || len(notes) < 2 {
		t.Errorf("%d partitions file problems with %d different notes in %v: the case is too weak", groups, len(notes), kindsSeen)
	}
}
