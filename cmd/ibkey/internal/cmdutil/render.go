package cmdutil

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/internal/jsondoc"
	"github.com/ibkey/ibkey/internal/textsafe"
)

// Grid is a table of strings rendered as a tablewriter table on a terminal or as
// stable plain columns otherwise.
//
// A table fits the width of the stream it is written to (a LineWrapper's, else
// DefaultWidth), by one rule for every table:
//  1. long cells wrap at word boundaries, never inside a word;
//  2. then columns are left out, one group at a time: the Optional groups in their
//     order, then every other column that is not Required, the last column first;
//  3. then, with only the Required columns left, the words too wide for their column
//     are cut in the middle, where an ellipsis (…) marks the cut (a column is cut
//     down to its header or minCut columns, whichever is wider).
//
// A line under the table names what was left out or cut. Only a width too narrow for
// the Required columns cut that far gives up the table: the rows are then written in
// the plain layout, after a line saying so. Plain output is never narrowed: it is for
// scripts.
type Grid struct {
	Header []string
	Rows   [][]string
	// FreeLast keeps the spaces of the last column in plain output: it is free text to
	// the end of the line (as ps(1)'s COMMAND), for prose such as decode's notes.
	FreeLast bool
	// Required are the columns (by header) a table never leaves out: the ones naming
	// a row and the one answering the command's question. Nil: the first column.
	Required []string
	// Optional are groups of columns (by header) a table leaves out first, the least
	// useful first; the columns neither names follow, the last column first.
	Optional [][]string
	// NoWrap are columns (by header) whose cells are never wrapped: a short phrase such
	// as a rate ("100G 4X EDR") reads wrongly on two lines, so its column is left out
	// (or, when Required, cut) rather than wrapped.
	NoWrap []string
}

// MaxCell is the most bytes of one cell a table or plain output shows (MaxFreeCell for
// a FreeLast cell, which is not padded); the middle of a longer cell is replaced by a
// count of what was left out (textsafe.Cap). Every row is padded to its columns' widest
// cell, so one 1 MB cell (a hostile NodeDescription in a fabric file) would otherwise
// make every line a megabyte.
const (
	MaxCell     = 256
	MaxFreeCell = 4096
)

// Add appends a row.
func (g *Grid) Add(cells ...string) { g.Rows = append(g.Rows, cells) }

// Render writes the whole grid with one write (tablewriter writes cell by cell:
// unbuffered, that is thousands of write(2) calls for a big table).
func (g *Grid) Render(w io.Writer, f Format) error {
	var b bytes.Buffer
	var err error
	if f == FormatTable {
		err = g.renderTable(&b, TableWidth(w))
	} else {
		err = g.renderPlain(&b)
	}
	if err != nil {
		return err
	}
	// Table lines fit already; plain lines are records, never wrapped.
	_, err = Unwrapped(w).Write(b.Bytes())
	return err
}

// TableWidth is how many columns a table written to w must fit.
func TableWidth(w io.Writer) int {
	if l, ok := w.(*LineWrapper); ok {
		return l.width
	}
	return DefaultWidth
}

// columns is a table's layout: which columns are shown and how wide.
type columns struct {
	keep    []int    // indexes of the columns shown
	width   []int    // the width of each shown column
	dropped []string // the headers of the columns left out
	cut     []string // the headers of the columns whose widest words are cut
}

// minCut is the narrowest a cut column gets (its header permitting): a few
// characters either side of the ellipsis still tell cells apart.
const minCut = 12

// dropOrder is the order in which columns are left out: the Optional groups, then
// every other column but the Required ones, from the last.
func (g *Grid) dropOrder() [][]string {
	required := g.Required
	if required == nil && len(g.Header) > 0 {
		required = g.Header[:1]
	}
	var order [][]string
	listed := map[string]bool{}
	for _, group := range g.Optional {
		var hs []string
		for _, h := range group {
			if !slices.Contains(required, h) && slices.Contains(g.Header, h) {
				hs = append(hs, h)
				listed[h] = true
			}
		}
		if len(hs) > 0 {
			order = append(order, hs)
		}
	}
	for _, h := range slices.Backward(g.Header) {
		if !listed[h] && !slices.Contains(required, h) {
			order = append(order, []string{h})
		}
	}
	return order
}

// fit lays the table out in width columns (Grid's rule); ok is false when even the
// Required columns, cut, are wider.
func (g *Grid) fit(rows [][]string, width int) (c columns, ok bool) {
	n := len(g.Header)
	// natural: each column's widest cell; least: its widest piece (WrapWords breaks
	// no narrower), or its header; floor: what cutting leaves.
	natural, least, floor := make([]int, n), make([]int, n), make([]int, n)
	for i, h := range g.Header {
		natural[i], least[i] = ansi.StringWidth(h), ansi.StringWidth(h)
	}
	for _, r := range rows {
		for i := range min(n, len(r)) {
			natural[i] = max(natural[i], ansi.StringWidth(r[i]))
			least[i] = max(least[i], leastWidth(r[i]))
		}
	}
	for i, h := range g.Header {
		if slices.Contains(g.NoWrap, h) {
			least[i] = natural[i]
		}
		floor[i] = min(least[i], max(ansi.StringWidth(h), minCut))
	}
	order := g.dropOrder()
	gone := map[string]bool{}
	for level := 0; ; level++ {
		c.keep, c.width = nil, nil
		for i, h := range g.Header {
			if !gone[h] {
				c.keep = append(c.keep, i)
				c.width = append(c.width, natural[i])
			}
		}
		over := 3*len(c.keep) + 1 - width // │ cell │ cell │: a border and two spaces a column, and the last
		for _, cw := range c.width {
			over += cw
		}
		over = c.narrow(over, least)
		if over > 0 && level == len(order) {
			over = c.narrow(over, floor)
			for k, i := range c.keep {
				if c.width[k] < least[i] {
					c.cut = append(c.cut, g.Header[i])
				}
			}
		}
		if over <= 0 {
			for k, i := range c.keep {
				if c.width[k] < natural[i] && c.width[k] >= least[i] {
					c.width[k] = balance(rows, i, c.width[k], least[i])
				}
			}
			return c, true
		}
		if level == len(order) {
			return c, false
		}
		for _, h := range order[level] {
			gone[h] = true
			c.dropped = append(c.dropped, h)
		}
	}
}

// narrow takes columns from the shown ones' widths, from the widest that is wider
// than its limit, one at a time, until over (the columns too many) is 0 or no column
// can give more; it returns what is still over.
func (c *columns) narrow(over int, limit []int) int {
	for over > 0 {
		widest := -1
		for k, i := range c.keep {
			if c.width[k] > limit[i] && (widest < 0 || c.width[k] > c.width[widest]) {
				widest = k
			}
		}
		if widest < 0 {
			break
		}
		c.width[widest]--
		over--
	}
	return over
}

// balance is the narrowest width, down to least, at which column i's cells take no more
// lines than at width: "100 Gb/sec (4X EDR)" in 16 columns is two lines, and so it is in
// 10, which splits it where a reader would. The lines are counted over every cell, not
// only the longest: one long reason in a column of short ones must not narrow the
// column until the short ones wrap too (watch counters' VALUE wrapped every
// "n/a(needs fabric access)" at 80 columns for one three-line cell).
func balance(rows [][]string, i, width, least int) int {
	lines := func(w int) int {
		n := 0
		for _, r := range rows {
			if i < len(r) {
				n += len(WrapWords(r[i], w))
			}
		}
		return n
	}
	target := lines(width)
	lo, hi := least, width // lines(hi) == target; find the smallest such width
	for lo < hi {
		mid := (lo + hi) / 2
		if lines(mid) == target {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return hi
}

// Fits is whether g, rendered to w as a table, shows every cell whole (its columns
// that are not Required left out if need be): a command with a narrower form of the
// same facts writes that instead.
func (g *Grid) Fits(w io.Writer) bool {
	c, ok := g.fit(g.cappedRows(), TableWidth(w))
	return ok && len(c.cut) == 0
}

// cappedRows are g's rows with each cell capped to MaxCell.
func (g *Grid) cappedRows() [][]string {
	rows := make([][]string, len(g.Rows))
	for i, r := range g.Rows {
		rows[i] = make([]string, len(r))
		for j, c := range r {
			rows[i][j] = textsafe.Cap(c, MaxCell)
		}
	}
	return rows
}

func (g *Grid) renderTable(w io.Writer, width int) error {
	rows := g.cappedRows()
	c, ok := g.fit(rows, width)
	if !ok {
		note := fmt.Sprintf("(the table does not fit %d columns: its rows as plain records)", width)
		fmt.Fprintln(w, wrapLine(note, width))
		return g.renderPlain(w)
	}
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
	)
	header := make([]any, len(c.keep))
	for k, i := range c.keep {
		header[k] = g.Header[i]
	}
	t.Header(header...)
	for _, r := range rows {
		cells := make([]any, len(c.keep))
		for k, i := range c.keep {
			cell := ""
			if i < len(r) {
				cell = r[i]
			}
			if ansi.StringWidth(cell) > c.width[k] {
				lines := []string{cell}
				if !slices.Contains(g.NoWrap, g.Header[i]) {
					lines = WrapWords(cell, c.width[k])
				}
				for j, l := range lines {
					lines[j] = cutMiddle(l, c.width[k])
				}
				cell = strings.Join(lines, "\n")
			}
			cells[k] = cell
		}
		if err := t.Append(cells...); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	if note := c.note(width); note != "" {
		_, err := fmt.Fprintln(w, wrapLine(note, width))
		return err
	}
	return nil
}

// note is the line under a table that names the columns left out and cut.
func (c columns) note(width int) string {
	dropped, cut := strings.Join(c.dropped, ", "), strings.Join(c.cut, ", ")
	switch {
	case cut == "" && dropped == "":
		return ""
	case cut == "":
		return fmt.Sprintf("(%s left out to fit %d columns; -o plain shows every column)", dropped, width)
	case dropped == "":
		return fmt.Sprintf("(long words in %s cut at … to fit %d columns; -o plain shows them whole)", cut, width)
	}
	return fmt.Sprintf("(%s left out and long words in %s cut at … to fit %d columns; -o plain shows every column whole)", dropped, cut, width)
}

// cutMiddle is s in at most width columns: when wider, its middle is an ellipsis, so
// that both ends (a switch's name and its unit, a host's rack and slot) still show.
func cutMiddle(s string, width int) string {
	sw := ansi.StringWidth(s)
	if sw <= width {
		return s
	}
	tail := (width - 1) / 2
	head := width - 1 - tail
	return ansi.Truncate(s, head, "") + "…" + ansi.TruncateLeft(s, sw-tail, "")
}

// renderPlain prints aligned columns with a header line: each cell but a line's last
// is padded with spaces to two past its column's widest cell, in runes (what
// text/tabwriter does with padding 2 when the rows are alike, as a Grid's are). Cells
// never contain spaces (they become _) and empty cells print as -, so awk '{print
// $N}' always works; with FreeLast the last column alone keeps its spaces.
func (g *Grid) renderPlain(w io.Writer) error {
	lines := make([][]string, 0, len(g.Rows)+1)
	if g.Header != nil {
		lines = append(lines, g.Header)
	}
	for _, r := range g.Rows {
		cells := make([]string, len(r))
		for i, c := range r {
			if g.FreeLast && i == len(r)-1 && c != "" {
				cells[i] = freeTextCell.Replace(textsafe.Cap(c, MaxFreeCell))
				continue
			}
			cells[i] = PlainCell(textsafe.Cap(c, MaxCell))
		}
		lines = append(lines, cells)
	}
	var widths []int
	for _, l := range lines {
		for i := 0; i < len(l)-1; i++ {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(l[i]))
		}
	}
	var b []byte
	for _, l := range lines {
		for i, c := range l {
			b = append(b, c...)
			if i < len(l)-1 {
				for range widths[i] - utf8.RuneCountInString(c) + 2 {
					b = append(b, ' ')
				}
			}
		}
		b = append(b, '\n')
	}
	_, err := w.Write(b)
	return err
}

// freeTextCell keeps a FreeLast cell on its line and out of the columns.
var freeTextCell = strings.NewReplacer("\t", " ", "\n", " ")

// PlainCell is c as one awk field: "-" when empty, spaces as "_".
func PlainCell(c string) string {
	if c == "" {
		return "-"
	}
	return strings.ReplaceAll(c, " ", "_")
}

// WrapWords splits s into lines of at most width columns at its spaces and after its
// commas (a list such as 0xffff,0x8001 breaks between keys); a word wider than width
// gets a line of its own and is never cut.
func WrapWords(s string, width int) []string { return fillPieces(s, width, width) }

// fillPieces lays s's words in lines as WrapWords does, the first line at most first
// columns wide and the others at most rest.
func fillPieces(s string, first, rest int) []string {
	var lines []string
	var line strings.Builder
	used, width := 0, first
	for _, p := range breakPieces(s) {
		pw := ansi.StringWidth(p.text)
		sep := 0
		if p.space && used > 0 {
			sep = 1
		}
		if used > 0 && used+sep+pw > width {
			lines = append(lines, line.String())
			line.Reset()
			used, sep, width = 0, 0, rest
		}
		if sep == 1 {
			line.WriteByte(' ')
		}
		line.WriteString(p.text)
		used += sep + pw
	}
	return append(lines, line.String())
}

// piece is a part of a text that a line may end after: a word, or the part of a word
// up to and with a comma. space: a space comes before it.
type piece struct {
	text  string
	space bool
}

func breakPieces(s string) []piece {
	var out []piece
	for _, word := range strings.Fields(s) {
		space := true
		for word != "" {
			i := strings.IndexByte(word, ',')
			if i < 0 || i == len(word)-1 {
				out = append(out, piece{word, space})
				break
			}
			out = append(out, piece{word[:i+1], space})
			word, space = word[i+1:], false
		}
	}
	return out
}

// leastWidth is the narrowest WrapWords can make s: its widest piece.
func leastWidth(s string) int {
	least := 0
	for _, p := range breakPieces(s) {
		least = max(least, ansi.StringWidth(p.text))
	}
	return least
}

// wrapLine breaks one line wider than width at word boundaries; the lines after the
// first are indented two spaces more than it (under a "- " bullet's text, or under a
// message's start). The spaces between words are kept, except where a line breaks.
func wrapLine(line string, width int) string {
	if len(line) <= width || ansi.StringWidth(line) <= width {
		return line
	}
	text := strings.TrimLeft(line, " ")
	indent := line[:len(line)-len(text)]
	limit := width - len(indent)
	var b strings.Builder
	b.WriteString(indent)
	used := 0
	for text != "" {
		word := text
		if i := strings.IndexByte(text, ' '); i >= 0 {
			word = text[:i]
		}
		rest := text[len(word):]
		spaces := rest[:len(rest)-len(strings.TrimLeft(rest, " "))]
		ww := ansi.StringWidth(word)
		if used > 0 && used+ww > limit {
			b.WriteString("\n" + indent + "  ")
			limit, used = width-len(indent)-2, 0
		}
		b.WriteString(word)
		used += ww
		text = rest[len(spaces):]
		if text != "" {
			// The spaces go out with the next word, unless the line breaks before it.
			next := text
			if i := strings.IndexByte(text, ' '); i >= 0 {
				next = text[:i]
			}
			if used+len(spaces)+ansi.StringWidth(next) <= limit {
				b.WriteString(spaces)
				used += len(spaces)
			} else {
				used = limit + 1 // break before the next word
			}
		}
	}
	return b.String()
}

// LineWrapper writes through to w, breaking lines wider than width at word boundaries
// (wrapLine). It holds at most one unfinished line; Flush writes it.
type LineWrapper struct {
	w       io.Writer
	width   int
	partial []byte
}

// NewLineWrapper wraps w's lines at width columns.
func NewLineWrapper(w io.Writer, width int) *LineWrapper { return &LineWrapper{w: w, width: width} }

// Write writes p's complete lines, wrapped, and keeps an unfinished last line.
func (l *LineWrapper) Write(p []byte) (int, error) {
	n := len(p)
	if len(l.partial) > 0 {
		p = append(l.partial, p...)
	}
	end := bytes.LastIndexByte(p, '\n')
	if end < 0 {
		l.partial = append(l.partial[:0], p...)
		return n, nil
	}
	err := l.writeLines(p[:end+1])
	l.partial = append(l.partial[:0], p[end+1:]...)
	return n, err
}

// writeLines writes complete lines, wrapping the wide ones.
func (l *LineWrapper) writeLines(b []byte) error {
	var out []byte
	for rest := b; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		out = append(out, wrapLine(string(rest[:i]), l.width)...)
		out = append(out, '\n')
		rest = rest[i+1:]
	}
	_, err := l.w.Write(out)
	return err
}

// Flush writes the unfinished last line, wrapped.
func (l *LineWrapper) Flush() error {
	if len(l.partial) == 0 {
		return nil
	}
	line := wrapLine(string(l.partial), l.width)
	l.partial = l.partial[:0]
	_, err := io.WriteString(l.w, line)
	return err
}

// WriteJSON writes v as one JSON document indented by two spaces, as every -o json
// document is (a document too large to hold whole goes through internal/jsondoc, which
// lays it out the same way).
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", jsondoc.Indent)
	return enc.Encode(v)
}

// WriteJSONLine writes v as one JSON object on one line: the events of a stream (watch),
// one per line, are JSON Lines, where a document may not span lines.
func WriteJSONLine(w io.Writer, v any) error { return json.NewEncoder(w).Encode(v) }

// AddIndentFlag keeps --indent, which `fabric discover` and `partitions show` took when
// their JSON was one compact line: every document is indented now, so the flag is
// hidden and does nothing (scripts that pass it keep working).
func AddIndentFlag(c *cobra.Command) {
	c.Flags().Bool("indent", false, "every -o json document is indented")
	_ = c.Flags().MarkHidden("indent")
}

// YesNo is "yes" or "no".
func YesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// Paint is s in bold and the 16-colour ANSI colour c ("1" red, "3" yellow) when color
// is true (the caller decided its stream is a terminal and colour is allowed), else s.
// Fixed colours only: nothing here asks the terminal for its background or its
// colour support.
func Paint(s, c string, color bool) string {
	if !color {
		return s
	}
	return lipgloss.NewStyle().Foreground(lipgloss.Color(c)).Bold(true).Render(s)
}
