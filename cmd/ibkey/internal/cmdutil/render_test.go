package cmdutil

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/charmbracelet/x/ansi"
)

func maxWidth(s string) int {
	w := 0
	for _, l := range strings.Split(s, "\n") {
		w = max(w, ansi.StringWidth(l))
	}
	return w
}

func TestWrapWords(t *testing.T) {
	for _, tc := range []struct {
		in    string
		width int
		want  []string
	}{
		{"", 10, []string{""}},
		{"one", 10, []string{"one"}},
		{"100 Gb/sec (4X EDR)", 10, []string{"100 Gb/sec", "(4X EDR)"}},
		{"100 Gb/sec (4X EDR)", 16, []string{"100 Gb/sec (4X", "EDR)"}},
		{"a verylongwordthatdoesnotfit b", 5, []string{"a", "verylongwordthatdoesnotfit", "b"}},
		{"0xffff,0x8002,0x0003,0x8004", 14, []string{"0xffff,0x8002,", "0x0003,0x8004"}},
		{"0xffff,0x8002 0x0003", 7, []string{"0xffff,", "0x8002", "0x0003"}},
		{"trailing,", 4, []string{"trailing,"}},
		{"日本語 テキスト", 6, []string{"日本語", "テキスト"}},
	} {
		if got := WrapWords(tc.in, tc.width); strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("WrapWords(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
	}
}

// TestWrapWordsNeverCuts: on random texts, the words come back whole and in order, and
// every line that holds more than one piece fits.
func TestWrapWordsNeverCuts(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 1))
	words := []string{"a", "bb", "partition", "0x8001,", "0x0002", "日本", "(4X", "EDR)", "supercalifragilistic"}
	for range 2000 {
		var in []string
		for range r.IntN(12) {
			in = append(in, words[r.IntN(len(words))])
		}
		text := strings.Join(in, " ")
		width := 1 + r.IntN(30)
		lines := WrapWords(text, width)
		if got := strings.ReplaceAll(strings.Join(lines, ""), " ", ""); got != strings.ReplaceAll(text, " ", "") {
			t.Fatalf("WrapWords(%q, %d) = %q: lost or moved text", text, width, lines)
		}
		for _, l := range lines {
			if ansi.StringWidth(l) > width && len(breakPieces(l)) > 1 {
				t.Fatalf("WrapWords(%q, %d): line %q is wider and could have broken", text, width, l)
			}
		}
	}
}

func TestWrapLine(t *testing.T) {
	for _, tc := range []struct {
		in    string
		width int
		want  string
	}{
		{"short line", 80, "short line"},
		{"  - a bullet that is a bit too long for the width", 20,
			"  - a bullet that is\n    a bit too long\n    for the width"},
		{"file:1:2: error: message [rule]", 12, "file:1:2:\n  error:\n  message\n  [rule]"},
		{"Switch1/1  InfiniBand  ACTIVE  via lid 2", 30, "Switch1/1  InfiniBand  ACTIVE\n  via lid 2"},
		{"x averyveryverylongword y", 8, "x\n  averyveryverylongword\n  y"},
	} {
		if got := wrapLine(tc.in, tc.width); got != tc.want {
			t.Errorf("wrapLine(%q, %d) =\n%s\nwant\n%s", tc.in, tc.width, got, tc.want)
		}
	}
}

// TestLineWrapper: lines are wrapped whatever the writes' boundaries; short lines pass
// through as they are; an unfinished line waits for Flush.
func TestLineWrapper(t *testing.T) {
	text := "short\n" + strings.Repeat("word ", 30) + "end\n  - " + strings.Repeat("x ", 50) + "\nlast without newline"
	var want bytes.Buffer
	for i, l := range strings.Split(text, "\n") {
		if i > 0 {
			want.WriteByte('\n')
		}
		want.WriteString(wrapLine(l, 40))
	}
	r := rand.New(rand.NewPCG(25, 2))
	for range 200 {
		var out bytes.Buffer
		lw := NewLineWrapper(&out, 40)
		for rest := text; rest != ""; {
			n := min(len(rest), 1+r.IntN(20))
			if _, err := lw.Write([]byte(rest[:n])); err != nil {
				t.Fatal(err)
			}
			rest = rest[n:]
		}
		if strings.HasSuffix(out.String(), "newline") {
			t.Fatal("the unfinished line was written before Flush")
		}
		if err := lw.Flush(); err != nil {
			t.Fatal(err)
		}
		if out.String() != want.String() {
			t.Fatalf("got\n%s\nwant\n%s", out.String(), want.String())
		}
		if maxWidth(out.String()) > 40 {
			t.Fatalf("a line is wider than 40:\n%s", out.String())
		}
	}
}

func devicesGrid() Grid {
	g := Grid{Header: []string{"DEVICE", "PORT", "LINK", "STATE", "PHYS", "LID", "SM_LID", "RATE", "PKEYS", "PORT_GUID"},
		Optional: [][]string{{"PHYS"}, {"SM_LID"}, {"LINK"}}}
	g.Add("mlx5_0", "1", "InfiniBand", "ACTIVE", "LinkUp", "3", "1", "100 Gb/sec (4X EDR)", "6/128", "0x248a0703005e1a21")
	g.Add("mlx5_1", "2", "InfiniBand", "DOWN", "Polling", "0", "0", "10 Gb/sec (4X SDR)", "1/128", "0x248a0703005e1b32")
	return g
}

// TestGridFits: a table fits its width by wrapping cells at word boundaries, then by
// leaving out its Optional columns and then every column but the Required ones (and
// saying so); it is never wider than its width.
func TestGridFits(t *testing.T) {
	g := devicesGrid()
	for _, tc := range []struct {
		width              int
		dropped            string
		wrapped, plainLike bool
	}{
		{200, "", false, false},
		{115, "", false, false},
		{110, "", true, false},
		{100, "PHYS", true, false},
		{80, "PHYS, SM_LID, LINK", true, false},
		// Not Optional, not Required (DEVICE, the first column): PORT_GUID, the last,
		// goes next. Until the rule, the table fell back to plain records here.
		{50, "PHYS, SM_LID, LINK, PORT_GUID", true, false},
	} {
		var b bytes.Buffer
		// The width a table fits is its stream's: a LineWrapper's.
		if err := g.Render(NewLineWrapper(&b, tc.width), FormatTable); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if w := maxWidth(out); w > tc.width && !tc.plainLike {
			t.Errorf("width %d: the table is %d wide:\n%s", tc.width, w, out)
		}
		if got := strings.Contains(out, "left out to fit"); got != (tc.dropped != "") {
			t.Errorf("width %d: dropped note %v:\n%s", tc.width, got, out)
		}
		if tc.dropped != "" && !strings.Contains(strings.Join(strings.Fields(out), " "), "("+tc.dropped+" left out to fit "+fmt.Sprint(tc.width)+" columns") {
			t.Errorf("width %d: want %s left out:\n%s", tc.width, tc.dropped, out)
		}
		if got := strings.Contains(out, "│ (4X"); got != tc.wrapped {
			t.Errorf("width %d: RATE wrapped %v, want %v:\n%s", tc.width, got, tc.wrapped, out)
		}
		if got := !strings.Contains(out, "│"); got != tc.plainLike {
			t.Errorf("width %d: plain layout %v, want %v:\n%s", tc.width, got, tc.plainLike, out)
		}
	}
	var b bytes.Buffer
	if err := g.Render(NewLineWrapper(&b, 80), FormatTable); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "left out to fit 80 columns") {
		t.Errorf("a LineWrapper's width is the table's:\n%s", b.String())
	}
}

// TestGridRule: whatever its cells, a table at 80 columns is a table no wider than
// 80: its columns but the Required ones are left out, then the words too wide for
// a column are cut at an ellipsis; the line under it names both. A width too narrow
// for the Required headers gives plain records after a line saying so.
func TestGridRule(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 3))
	word := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = "abcdefghij-:;/0123456789"[r.IntN(24)]
		}
		return string(b)
	}
	for range 300 {
		cols := 2 + r.IntN(9)
		g := Grid{}
		for i := range cols {
			g.Header = append(g.Header, fmt.Sprintf("COL%d", i))
		}
		g.Required = []string{g.Header[0], g.Header[1+r.IntN(cols-1)]}
		if r.IntN(2) == 0 {
			g.Optional = [][]string{{g.Header[cols-1]}, {g.Header[0]}} // a Required one listed: still kept
		}
		for range 1 + r.IntN(6) {
			var row []string
			for range cols {
				var words []string
				for range 1 + r.IntN(3) {
					words = append(words, word(1+r.IntN(70)))
				}
				row = append(row, strings.Join(words, " "))
			}
			g.Add(row...)
		}
		var b bytes.Buffer
		if err := g.Render(NewLineWrapper(&b, 80), FormatTable); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if w := maxWidth(out); w > 80 || !strings.Contains(out, "│ COL0") {
			t.Fatalf("not a table of 80 columns (%d):\n%s", w, out)
		}
		for _, h := range g.Required {
			if !strings.Contains(out, " "+h+" ") {
				t.Fatalf("required %s left out:\n%s", h, out)
			}
		}
		if strings.Contains(out, "…") != strings.Contains(strings.Join(strings.Fields(out), " "), "cut at …") {
			t.Fatalf("a cut not named:\n%s", out)
		}
	}
	g := Grid{Header: []string{"NODE", "PORT", "TYPE", "PEER"}, Required: []string{"NODE", "PEER"}}
	g.Add("MF0;ib-leaf-r12-u40:MQM8790/U1", "1", "switch", "MF0;ib-spine-r1-u38:MQM9790/U1 and more words")
	g.Add("gpu-node-r12u07 HCA-1", "2", "ca", "-")
	for _, tc := range []struct {
		width int
		want  []string
	}{
		{80, []string{"│ MF0;ib-leaf-r12-u40:MQM8790/U1 │ 1    │ MF0;ib-spine-r1-u38:MQM9790/U1 │", "(TYPE left out to fit 80 columns; -o plain shows every column)"}},
		{40, []string{"│ MF0;ib-l…8790/U1 │ MF0;ib-s…M9790/U1 │\n│                  │ and more words    │\n│ gpu-node-r12u07  │ -                 │\n│ HCA-1  ",
			"(TYPE, PORT left out and long words in\n  NODE, PEER cut at … to fit 40 columns;\n  -o plain shows every column whole)\n"}},
		{20, []string{"(the table does not\n  fit 20 columns:\n  its rows as plain\n  records)\nNODE                            PORT"}},
	} {
		var b bytes.Buffer
		if err := g.Render(NewLineWrapper(&b, tc.width), FormatTable); err != nil {
			t.Fatal(err)
		}
		for _, want := range tc.want {
			if !strings.Contains(b.String(), want) {
				t.Errorf("width %d: %q missing:\n%s", tc.width, want, b.String())
			}
		}
	}
}

// TestGridCapsCells: a 1 MB cell is shown capped, in a table and in plain output, so a
// table of many rows stays small.
func TestGridCapsCells(t *testing.T) {
	huge := strings.Repeat("x", 1<<20)
	g := Grid{Header: []string{"NODE", "PORT"}}
	for i := range 1000 {
		g.Add(huge, fmt.Sprint(i))
	}
	g.Add("short", "1")
	for _, f := range []Format{FormatPlain, FormatTable} {
		var b bytes.Buffer
		if err := g.Render(&b, f); err != nil {
			t.Fatal(err)
		}
		if b.Len() > 1001*2*(MaxCell+64) {
			t.Errorf("format %d: %d bytes for 1,001 rows", f, b.Len())
		}
		if !strings.Contains(b.String(), "omitted") {
			t.Errorf("format %d: the cap is not said", f)
		}
	}
	free := Grid{Header: []string{"VALUE", "NOTES"}, FreeLast: true}
	free.Add("0x1", strings.Repeat("note ", 200))
	var b bytes.Buffer
	if err := free.Render(&b, FormatPlain); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "omitted") {
		t.Errorf("a 1,000-byte free last cell is capped:\n%s", b.String())
	}
}

func TestNoticesRepeats(t *testing.T) {
	var b bytes.Buffer
	n := NewNotices(&b, false)
	for i := range 20000 {
		n.Warn(fmt.Sprintf("mlx5_%d: port %d: pkeys/0: read error", i, i%2+1))
	}
	n.Warn("the file is rejected")
	n.Note("one note")
	n.Summary()
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	want := []string{
		"warning: mlx5_0: port 1: pkeys/0: read error",
		"warning: mlx5_1: port 2: pkeys/0: read error",
		"warning: mlx5_2: port 1: pkeys/0: read error",
		"warning: mlx5_3: port 2: pkeys/0: read error",
		"warning: mlx5_4: port 1: pkeys/0: read error",
		"warning: the file is rejected",
		"note: one note",
		"warning: 19,995 more warnings like these not shown (the last: mlx5_19999: port 2: pkeys/0: read error)",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", b.String(), strings.Join(want, "\n"))
	}
}

// TestNoticesMax: warnings of many kinds stop after NoticeMax lines; the rest are one
// summary line, however many kinds they are.
func TestNoticesMax(t *testing.T) {
	var b bytes.Buffer
	n := NewNotices(&b, false)
	for i := range 20000 {
		n.Warn(fmt.Sprintf("device %s: bogus", strings.Repeat(string(rune('a'+i%26)), 1+i/26)))
	}
	n.Summary()
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != NoticeMax+1 {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), NoticeMax+1, b.String())
	}
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "warning: 19,950 more warnings not shown (the last: device ") {
		t.Errorf("summary %q", last)
	}
	b.Reset()
	n.Summary()
	if b.Len() != 0 {
		t.Errorf("a second Summary printed %q", b.String())
	}
}

func TestNoticesWrapAndColour(t *testing.T) {
	var b bytes.Buffer
	n := NewNotices(&b, true)
	n.width = 30
	n.Warn("a warning long enough to be wrapped at thirty")
	want := "\x1b[1;33mwarning:\x1b[m a warning long enough\n  to be wrapped at thirty\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

func TestMaskNumbers(t *testing.T) {
	for in, want := range map[string]string{
		"mlx5_12: port 3: pkeys/127": "mlx#_#: port #: pkeys/#",
		"key 0x8001 at 0x0002c903":   "key # at #",
		"no numbers":                 "no numbers",
	} {
		if got := maskNumbers(in); got != want {
			t.Errorf("maskNumbers(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestUnwrapped: what goes through Unwrapped reaches the stream as written, however
// long its lines (shell lines to eval).
func TestUnwrapped(t *testing.T) {
	var b bytes.Buffer
	s := &IOStreams{Out: &b}
	s.WrapOut()
	long := "export NCCL_IB_HCA=" + strings.Repeat("mlx5_0:1,", 20) + "\n"
	if _, err := io.WriteString(Unwrapped(s.Out), long); err != nil {
		t.Fatal(err)
	}
	if b.String() != long {
		t.Errorf("%T: %q", s.Out, b.String())
	}
}

// TestGridNoWrap: a NoWrap column is left out rather than wrapped ("100G 4X EDR" on
// two lines at 100 columns, where the table had room for every row on one line
// without its least useful column).
func TestGridNoWrap(t *testing.T) {
	g := Grid{Header: []string{"DEVICE", "PHYS", "RATE", "GUID"}, Optional: [][]string{{"PHYS"}}, NoWrap: []string{"RATE"}}
	g.Add("mlx5_0", "LinkUp", "100G 4X EDR", "0x248a0703005e1a21")
	var b bytes.Buffer
	if err := g.Render(NewLineWrapper(&b, 50), FormatTable); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "│ 100G 4X EDR │") || strings.Contains(out, "LinkUp") {
		t.Errorf("want RATE whole and PHYS left out:\n%s", out)
	}
}

// TestGridNoteIndent: the line under a table that names what was left out is wrapped
// as every other long line of the output is (LineWrapper: the lines after the first
// two spaces in), not flush left under the table's corner.
func TestGridNoteIndent(t *testing.T) {
	g := Grid{Header: []string{"DEVICE", "PORT", "STATE", "LINK_LAYER_NAME", "PHYSICAL_STATE"}}
	g.Add("mlx5_0", "1", "ACTIVE", "InfiniBand", "LinkUp")
	var b bytes.Buffer
	if err := g.Render(NewLineWrapper(&b, 40), FormatTable); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "(") })
	if i < 0 || i == len(lines)-1 {
		t.Fatalf("no wrapped note:\n%s", b.String())
	}
	for _, l := range lines[i+1:] {
		if !strings.HasPrefix(l, "  ") {
			t.Errorf("a note line not indented: %q\n%s", l, b.String())
		}
	}
}

// TestGridBalanceShortCells: a column narrowed to what its longest cell needs does not
// wrap its short cells too: watch counters' VALUE, with one three-line reason, wrapped
// every "n/a(needs fabric access)" at 80 columns although the table had room for it.
func TestGridBalanceShortCells(t *testing.T) {
	g := Grid{Header: []string{"PORT", "STATE", "COUNTER", "VALUE"}}
	for _, port := range []string{"mlx5_0/1", "mlx5_1/1", "mlx5_2/1"} {
		g.Add(port, "ACTIVE", "port_xmit_constraint_errors", "0")
		g.Add("", "", "pkey_violations", "n/a(needs fabric access)")
	}
	g.Add("mlx5_2/1", "ACTIVE", "qkey_violations", "n/a(no PortInfo: the Ethernet link layer has no QP0)")
	var b bytes.Buffer
	if err := g.Render(NewLineWrapper(&b, 80), FormatTable); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); strings.Count(out, "n/a(needs fabric access)") != 3 || maxWidth(out) > 80 {
		t.Errorf("short cells wrapped:\n%s", out)
	}
}

// TestPlainIsTabwriters: the plain layout is text/tabwriter's (minwidth 0, padding 2,
// spaces) on grids whose rows are alike, as every Grid's are: generated grids with
// and without a header, with multi-byte, empty and spaced cells, FreeLast or not.
func TestPlainIsTabwriters(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	words := []string{"", "a", "Hca1", "0x0000000000100001", "ACTIVE", "née", "✓✓", "two words", "\"Leaf3\"[12]", strings.Repeat("x", 30)}
	for round := range 3000 {
		var g Grid
		cols := 1 + rng.IntN(6)
		if rng.IntN(3) > 0 {
			for c := range cols {
				g.Header = append(g.Header, fmt.Sprintf("H%d%s", c, strings.Repeat("_", rng.IntN(4))))
			}
		}
		g.FreeLast = rng.IntN(2) == 0
		for range rng.IntN(8) {
			row := make([]string, cols)
			for c := range row {
				row[c] = words[rng.IntN(len(words))]
			}
			g.Add(row...)
		}
		var want bytes.Buffer
		tw := tabwriter.NewWriter(&want, 0, 8, 2, ' ', 0)
		if g.Header != nil {
			fmt.Fprintln(tw, strings.Join(g.Header, "\t"))
		}
		for _, r := range g.Rows {
			cells := make([]string, len(r))
			for i, c := range r {
				if g.FreeLast && i == len(r)-1 && c != "" {
					cells[i] = freeTextCell.Replace(c)
					continue
				}
				cells[i] = PlainCell(c)
			}
			fmt.Fprintln(tw, strings.Join(cells, "\t"))
		}
		if err := tw.Flush(); err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := g.Render(&got, FormatPlain); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Fatalf("round %d: %q %q\n got:\n%s\n tabwriter:\n%s", round, g.Header, g.Rows, got.String(), want.String())
		}
	}
}

// BenchmarkGridPlain renders, as -o plain, a grid the shape of `fabric discover`'s at
// 512 nodes (1,376 rows of eight cells): about 1 ms; through text/tabwriter it was
// 2.5 ms and 1.3 MB.
//
//	go test ./cmd/ibkey/internal/cmdutil -run '^$' -bench GridPlain
func BenchmarkGridPlain(b *testing.B) {
	g := Grid{Header: []string{"NODE", "TYPE", "NODE_GUID", "PORT", "PORT_GUID", "LID", "STATE", "PEER"}}
	for i := range 1376 {
		g.Add(fmt.Sprintf("Hca%d", i), "ca", fmt.Sprintf("0x%016x", 0x2c90300000000+i), "1",
			fmt.Sprintf("0x%016x", 0x2c90300100000+i), fmt.Sprint(i+1), "Active", fmt.Sprintf("%q[%d]", fmt.Sprintf("Leaf%d", i%24), 1+i%36))
	}
	var out bytes.Buffer
	for b.Loop() {
		out.Reset()
		if err := g.Render(&out, FormatPlain); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(out.Len()))
}
