package pkeys

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/ibverbs"
	"github.com/ibkey/ibkey/internal/query"
)

// gridRender is the plain output as cmdutil.Grid renders it (the way it was printed
// before writePlain), with the notes it gives.
func gridRender(views []*query.PortView, all bool) (string, []string) {
	var notes []string
	g := cmdutil.Grid{Header: plainHeader}
	for _, v := range views {
		if v.Table == nil {
			notes = append(notes, v.Ref().String()+": "+v.TableMissing)
			continue
		}
		for _, e := range v.Table.Entries {
			if show(e, all) {
				g.Add(append([]string{v.Ref().String()}, entryCells(e)...)...)
			}
		}
	}
	var b bytes.Buffer
	if err := g.Render(&b, cmdutil.FormatPlain); err != nil {
		panic(err)
	}
	return b.String(), notes
}

// randomViews are ports with random tables: every kind of entry (valid full and
// limited, empty, hole, duplicate, both, unreadable) and names with spaces, wide and
// invalid UTF-8, tabs, line breaks and tabwriter's escape byte.
func randomViews(rng *rand.Rand) []*query.PortView {
	names := []string{"mlx5_0", "mlx5_10", "x", "dev with space", "dév", "\xff\xfe", "a\tb", "a\nb", "ü̈", "很长的名字", "a\vb", "a\fb", "a\rb"}
	ifnames := []string{"ib0", "ib0.8001", "ib 1", "ïb2", "ib\t3", "\xffib", "ib5.7fff"}
	var views []*query.PortView
	for d := range 1 + rng.IntN(4) {
		for p := 1; p <= 1+rng.IntN(2); p++ {
			v := &query.PortView{Port: &ibverbs.Port{Device: names[rng.IntN(len(names))] + strconv.Itoa(d), Num: p}}
			if rng.IntN(8) == 0 {
				v.TableMissing = "no P_Key table (no pkeys/ directory)"
				views = append(views, v)
				continue
			}
			t := &query.Table{}
			for i := range rng.IntN(300) {
				e := query.Entry{Index: i, PKey: check.PKey(rng.IntN(0x10000)), DuplicateOf: -1}
				switch rng.IntN(10) {
				case 0:
					e.Unreadable = "read error"
				case 1:
					e.PKey = 0
					e.Hole = rng.IntN(2) == 0
				case 2:
					e.DuplicateOf = rng.IntN(i + 1)
				case 3:
					e.Both = true
				case 4:
					for range 1 + rng.IntN(3) {
						e.Interfaces = append(e.Interfaces, ifnames[rng.IntN(len(ifnames))])
					}
				}
				t.Entries = append(t.Entries, e)
			}
			v.Table = t
			views = append(views, v)
		}
	}
	return views
}

// TestWritePlainMatchesGrid: writePlain's output and notes are byte for byte
// cmdutil.Grid's, on generated tables with and without --all.
func TestWritePlainMatchesGrid(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 1))
	fallbacks := 0
	for round := range 500 {
		views := randomViews(rng)
		all := round%2 == 0
		want, wantNotes := gridRender(views, all)
		var b bytes.Buffer
		var notes []string
		if err := writePlain(&b, views, all, func(s string) { notes = append(notes, s) }); err != nil {
			t.Fatal(err)
		}
		if b.String() != want || strings.Join(notes, "\n") != strings.Join(wantNotes, "\n") {
			t.Fatalf("round %d: writePlain differs from cmdutil.Grid\n--- writePlain\n%q\n--- Grid\n%q\nnotes %q, want %q", round, b.String(), want, notes, wantNotes)
		}
		if takesFallback(views, all) {
			fallbacks++
		}
	}
	if fallbacks == 0 {
		t.Error("no generated case took the tabwriter fallback: the generator lost its special names")
	}
}

func TestHex4(t *testing.T) {
	for v := range 0x10000 {
		if got, want := string(appendHex4(nil, uint16(v))), check.PKey(v).String(); got != want {
			t.Fatalf("appendHex4(%d) = %q, want %q", v, got, want)
		}
	}
}

// takesFallback says whether a cell of views is one writePlain leaves to tabwriter.
func takesFallback(views []*query.PortView, all bool) bool {
	for _, v := range views {
		if v.Table == nil {
			continue
		}
		for _, e := range v.Table.Entries {
			if !show(e, all) {
				continue
			}
			cells := append([]string{cmdutil.PlainCell(v.Ref().String())}, entryCells(e)...)
			for _, c := range cells {
				if !tabwriterPlain(cmdutil.PlainCell(c)) {
					return true
				}
			}
		}
	}
	return false
}
