package pkeys

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/ibverbs"
	"github.com/ibkey/ibkey/internal/query"
)

// randomViews are ports with random tables: every kind of entry (valid full and
// limited, empty, hole, duplicate, both, unreadable) and names with spaces, wide and
// invalid UTF-8 and the escapes textsafe writes for control characters.
func randomViews(rng *rand.Rand) []*query.PortView {
	names := []string{"mlx5_0", "mlx5_10", "x", "dev with space", "dév", "\xff\xfe", `a\tb`, `a\nb`, "ü̈", "很长的名字", `a\x0bb`}
	ifnames := []string{"ib0", "ib0.8001", "ib 1", "ïb2", `ib\t3`, "\xffib", "ib5.7fff"}
	var views []*query.PortView
	for d := range 1 + rng.IntN(4) {
		for p := 1; p <= 1+rng.IntN(2); p++ {
			v := &query.PortView{Port: &ibverbs.Port{Device: names[rng.IntN(len(names))] + strconv.Itoa(d), Num: p}}
			if rng.IntN(8) == 0 {
				v.TableMissing = "no P_Key table (no pkeys/ directory)"
				v.TableAbsent = rng.IntN(2) == 0 // iWARP: none; else not read
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

// TestWritePlainFields: every line of `pkeys -o plain` is seven awk fields (spaces in a
// cell as _, empty cells as -), one line per shown entry under the header, and each
// port that has no table is a note (one whose table was not read is warned about by
// renderPKeys: TestTableNotReadWarned), on generated tables with and without --all.
func TestWritePlainFields(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 1))
	for round := range 300 {
		views := randomViews(rng)
		all := round%2 == 0
		rows, missing := 0, 0
		for _, v := range views {
			if v.Table == nil {
				if v.TableNotRead() == "" {
					missing++
				}
				continue
			}
			for _, e := range v.Table.Entries {
				if show(e, all) {
					rows++
				}
			}
		}
		var b bytes.Buffer
		var notes []string
		if err := writePlain(&b, views, all, func(s string) { notes = append(notes, s) }); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		if len(lines) != rows+1 || len(notes) != missing {
			t.Fatalf("round %d: %d lines and %d notes, want %d and %d:\n%s", round, len(lines), len(notes), rows+1, missing, b.String())
		}
		for _, l := range lines {
			if f := strings.Fields(l); len(f) != len(plainHeader) {
				t.Fatalf("round %d: %d fields in %q", round, len(f), l)
			}
		}
	}
}
