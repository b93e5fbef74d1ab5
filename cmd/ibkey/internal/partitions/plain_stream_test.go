package partitions

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestWritePlainMatchesGrid: writePlain writes what cmdutil.Grid's plain rendering
// writes, on random tables of cells that are empty, hold spaces, multi-byte runes,
// invalid UTF-8, and the bytes tabwriter treats specially (then it uses Grid).
func TestWritePlainMatchesGrid(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 15))
	pieces := []string{"", "a", "0x0002c90300001001", "two words", "é", "日本", "\xfe", "-", "nobody", "0x7fff,0x0001", " ", "\t", "\xff", "x\ny", "\v", "\f"}
	for n := 0; n < 2000; n++ {
		cols := 1 + rng.IntN(5)
		header := []string{"PORT", "NODE", "PARTITIONS", "REACHES", "X"}[:cols]
		rows := make([][]string, rng.IntN(12))
		special := n%3 == 0
		for i := range rows {
			rows[i] = make([]string, cols)
			for j := range rows[i] {
				k := rng.IntN(len(pieces))
				if !special {
					k = rng.IntN(len(pieces) - 5)
				}
				rows[i][j] = pieces[k] + pieces[rng.IntN(len(pieces)-5)]
			}
		}
		row := func(i int, c [][]byte) {
			for j := range c {
				c[j] = append(c[j], rows[i][j]...)
			}
		}
		var got, want bytes.Buffer
		if err := writePlain(&got, header, len(rows), row); err != nil {
			t.Fatal(err)
		}
		if err := writeGrid(&want, header, len(rows), row); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Fatalf("table %q: writePlain\n%q\nGrid\n%q", rows, got.String(), want.String())
		}
	}
}
