package pkeys

import (
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/internal/query"
)

// plainHeader are the columns of `pkeys -o plain`.
var plainHeader = []string{"PORT", "INDEX", "PKEY", "MEMBERSHIP", "KEY", "NOTES", "IPOIB"}

// plainColumns is len(plainHeader).
const plainColumns = 7

// writePlain writes the entries of views that show selects as `-o plain` columns:
// byte for byte what cmdutil.Grid renders (text/tabwriter, padding 2, "-" for an empty
// cell, "_" for a space), computed directly. A 16-device host with 128-entry tables is
// 4,096 rows, and tabwriter's cell-by-cell buffering was a sixth of the command's CPU.
// Ports without a table are noted through note.
func writePlain(w io.Writer, views []*query.PortView, all bool, note func(string)) error {
	var cells []string
	for _, v := range views {
		if v.Table == nil {
			note(v.Ref().String() + ": " + v.TableMissing)
			continue
		}
		ref := cmdutil.PlainCell(v.Ref().String())
		for _, e := range v.Table.Entries {
			if show(e, all) {
				cells = appendPlainCells(cells, ref, e)
			}
		}
	}
	var width [plainColumns]int
	for i, h := range plainHeader {
		width[i] = len(h)
	}
	for i, c := range cells {
		if !tabwriterPlain(c) {
			// A cell tabwriter would treat specially (a tab, a line break, its escape
			// byte): let it render the grid itself.
			return gridPlain(w, cells)
		}
		if n := utf8.RuneCountInString(c); n > width[i%plainColumns] {
			width[i%plainColumns] = n
		}
	}
	size := 0
	for _, n := range width {
		size += n + 2
	}
	b := make([]byte, 0, (len(cells)/plainColumns+1)*size)
	b = appendRow(b, plainHeader, &width)
	for i := 0; i < len(cells); i += plainColumns {
		b = appendRow(b, cells[i:i+plainColumns], &width)
	}
	_, err := w.Write(b)
	return err
}

// appendRow appends one line: every cell but the last padded to its column's width
// plus 2 (tabwriter's padding), the last as it is.
func appendRow(b []byte, row []string, width *[plainColumns]int) []byte {
	for i, c := range row {
		b = append(b, c...)
		if i == len(row)-1 {
			break
		}
		for pad := width[i] + 2 - utf8.RuneCountInString(c); pad > 0; pad-- {
			b = append(b, ' ')
		}
	}
	return append(b, '\n')
}

// tabwriterPlain reports whether tabwriter passes c through as plain text: no cell or
// line terminator (\t \v \n \f) and no tabwriter.Escape byte.
func tabwriterPlain(c string) bool {
	return !strings.ContainsAny(c, "\t\v\n\f") && strings.IndexByte(c, 0xff) < 0
}

// gridPlain renders cells (rows of plainColumns, already plain cells) through
// cmdutil.Grid.
func gridPlain(w io.Writer, cells []string) error {
	g := cmdutil.Grid{Header: plainHeader}
	for i := 0; i < len(cells); i += plainColumns {
		g.Add(cells[i : i+plainColumns]...)
	}
	return g.Render(w, cmdutil.FormatPlain)
}

// appendPlainCells appends the plain cells of one entry: PORT (ref, already a plain
// cell) and entryCells' INDEX PKEY MEMBERSHIP KEY NOTES IPOIB.
func appendPlainCells(cells []string, ref string, e query.Entry) []string {
	idx := strconv.Itoa(e.Index)
	if e.Unreadable != "" {
		return append(cells, ref, idx, "unreadable", "-", "-", "unreadable", "-")
	}
	return append(cells, ref, idx, hex4(uint16(e.PKey)), e.PKey.Membership().String(), hex4(e.PKey.Key()),
		cmdutil.PlainCell(strings.Join(entryNotes(e), ",")), cmdutil.PlainCell(strings.Join(e.Interfaces, ",")))
}

// hex4 is v as 0x%04x (check.PKey's String and KeyString) without fmt.
func hex4(v uint16) string {
	const digits = "0123456789abcdef"
	return string([]byte{'0', 'x', digits[v>>12], digits[v>>8&0xf], digits[v>>4&0xf], digits[v&0xf]})
}
