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
	var rows []plainRow
	var refs []string
	width := [plainColumns]int{}
	for i, h := range plainHeader {
		width[i] = len(h)
	}
	special := false
	for _, v := range views {
		if v.Table == nil {
			note(v.Ref().String() + ": " + v.TableMissing)
			continue
		}
		ref := cmdutil.PlainCell(v.Ref().String())
		refs = append(refs, ref)
		special = special || !tabwriterPlain(ref)
		for i := range v.Table.Entries {
			e := &v.Table.Entries[i]
			if !show(*e, all) {
				continue
			}
			r := plainRow{ref: len(refs) - 1, e: e}
			if e.Unreadable == "" {
				r.notes = plainNotes(e)
				if len(e.Interfaces) > 0 {
					r.ipoib = cmdutil.PlainCell(strings.Join(e.Interfaces, ","))
					special = special || !tabwriterPlain(r.ipoib)
				}
			}
			rows = append(rows, r)
			width[0] = max(width[0], utf8.RuneCountInString(ref))
			width[1] = max(width[1], decimalWidth(e.Index))
			if e.Unreadable != "" {
				// unreadable, -, -, unreadable, -
				width[2], width[5] = max(width[2], len("unreadable")), max(width[5], len("unreadable"))
				width[3], width[4] = max(width[3], 1), max(width[4], 1)
				continue
			}
			width[2], width[4] = max(width[2], 6), max(width[4], 6) // 0x%04x
			width[3] = max(width[3], len(orDash(membership(e.PKey))))
			width[5] = max(width[5], len(orDash(r.notes)))
			width[6] = max(width[6], utf8.RuneCountInString(orDash(r.ipoib)))
		}
	}
	if special {
		// A cell tabwriter would treat specially (a tab, a line break, its escape
		// byte): let it render the grid itself.
		return gridPlain(w, rows, refs)
	}
	size := 0
	for _, n := range width {
		size += n + 2
	}
	b := make([]byte, 0, (len(rows)+1)*size)
	b = appendRow(b, plainHeader, &width)
	refWidth := make([]int, len(refs))
	for i, ref := range refs {
		refWidth[i] = utf8.RuneCountInString(ref)
	}
	for _, r := range rows {
		b = r.append(b, refs[r.ref], refWidth[r.ref], &width)
	}
	_, err := w.Write(b)
	return err
}

// pad appends the spaces after a cell of n runes in a column of width w.
func pad(b []byte, n, w int) []byte {
	for i := n; i < w+2; i++ {
		b = append(b, ' ')
	}
	return b
}

// append appends the row's line: the cells of cells(), padded as appendRow pads them,
// without making them strings.
func (r plainRow) append(b []byte, ref string, refWidth int, width *[plainColumns]int) []byte {
	b = pad(append(b, ref...), refWidth, width[0])
	b = pad(strconv.AppendInt(b, int64(r.e.Index), 10), decimalWidth(r.e.Index), width[1])
	if r.e.Unreadable != "" {
		b = pad(append(b, "unreadable"...), len("unreadable"), width[2])
		b = pad(append(b, '-'), 1, width[3])
		b = pad(append(b, '-'), 1, width[4])
		b = pad(append(b, "unreadable"...), len("unreadable"), width[5])
		return append(b, "-\n"...)
	}
	m := orDash(membership(r.e.PKey))
	b = pad(appendHex4(b, uint16(r.e.PKey)), 6, width[2])
	b = pad(append(b, m...), len(m), width[3])
	b = pad(appendHex4(b, uint16(r.e.PKey.Partition())), 6, width[4])
	notes := orDash(r.notes)
	b = pad(append(b, notes...), len(notes), width[5])
	b = append(b, orDash(r.ipoib)...)
	return append(b, '\n')
}

// plainRow is one entry of the plain table, its cells not yet formatted.
type plainRow struct {
	ref   int // index into the refs of writePlain
	e     *query.Entry
	notes string // NOTES cell, "" when it is "-"
	ipoib string // IPOIB cell, "" when it is "-"
}

// cells are the row's cells (entryCells, as plain cells), for cmdutil.Grid.
func (r plainRow) cells(refs []string) []string {
	idx := strconv.Itoa(r.e.Index)
	if r.e.Unreadable != "" {
		return []string{refs[r.ref], idx, "unreadable", "-", "-", "unreadable", "-"}
	}
	return []string{refs[r.ref], idx, string(appendHex4(nil, uint16(r.e.PKey))), orDash(membership(r.e.PKey)),
		string(appendHex4(nil, uint16(r.e.PKey.Partition()))), orDash(r.notes), orDash(r.ipoib)}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// plainNotes is entryNotes joined, without building a slice for the common cases.
func plainNotes(e *query.Entry) string {
	if !e.Both && e.DuplicateOf < 0 {
		switch {
		case !e.PKey.Valid() && e.Hole:
			return "hole"
		case !e.PKey.Valid():
			return "empty"
		case e.PKey.IsDefault():
			return "default"
		}
		return ""
	}
	return strings.Join(entryNotes(*e), ",")
}

// decimalWidth is len(strconv.Itoa(n)).
func decimalWidth(n int) int {
	w := 1
	if n < 0 {
		w, n = 2, -n
	}
	for ; n >= 10; n /= 10 {
		w++
	}
	return w
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

// gridPlain renders rows through cmdutil.Grid.
func gridPlain(w io.Writer, rows []plainRow, refs []string) error {
	g := cmdutil.Grid{Header: plainHeader}
	for _, r := range rows {
		g.Add(r.cells(refs)...)
	}
	return g.Render(w, cmdutil.FormatPlain)
}

// appendHex4 appends v as 0x%04x (check.PKey's and check.PartitionKey's String) without fmt.
func appendHex4(b []byte, v uint16) []byte {
	const digits = "0123456789abcdef"
	return append(b, '0', 'x', digits[v>>12], digits[v>>8&0xf], digits[v>>4&0xf], digits[v&0xf])
}
