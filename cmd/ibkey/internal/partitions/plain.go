package partitions

import (
	"bufio"
	"bytes"
	"io"
	"unicode/utf8"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
)

// writePlain writes n rows under header exactly as cmdutil.Grid renders them in plain
// form (text/tabwriter columns two spaces apart, empty cells "-", spaces "_"), without
// holding the rows: row(i, cells) appends the text of row i's cells to cells[j][:0].
// It is called twice per row, once for the column widths and once for the text: the
// summary of 100,000 ports is written in a 64 KiB buffer instead of a grid of strings
// and a tabwriter holding all of it. A cell with a byte tabwriter treats specially (tab,
// vertical tab, line or form feed, its escape 0xff) sends the table through Grid.
func writePlain(w io.Writer, header []string, n int, row func(i int, cells [][]byte)) error {
	cells := make([][]byte, len(header))
	widths := make([]int, len(header))
	for j, h := range header {
		widths[j] = utf8.RuneCountInString(h)
	}
	fill := func(i int) {
		for j := range cells {
			cells[j] = cells[j][:0]
		}
		row(i, cells)
		for j, c := range cells {
			if len(c) == 0 {
				cells[j] = append(c, '-')
				continue
			}
			for k, b := range c {
				if b == ' ' {
					c[k] = '_'
				}
			}
		}
	}
	for i := 0; i < n; i++ {
		fill(i)
		for j, c := range cells {
			if bytes.ContainsAny(c, "\t\v\n\f") || bytes.IndexByte(c, 0xff) >= 0 {
				return writeGrid(w, header, n, row)
			}
			widths[j] = max(widths[j], utf8.RuneCount(c))
		}
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	const padding = 2 // cmdutil.Grid's tabwriter padding
	pad := func(width, used int) {
		for k := used; k < width+padding; k++ {
			bw.WriteByte(' ')
		}
	}
	last := len(header) - 1
	for j, h := range header {
		bw.WriteString(h)
		if j < last {
			pad(widths[j], utf8.RuneCountInString(h))
		}
	}
	bw.WriteByte('\n')
	for i := 0; i < n; i++ {
		fill(i)
		for j, c := range cells {
			bw.Write(c)
			if j < last {
				pad(widths[j], utf8.RuneCount(c))
			}
		}
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// writeRows writes a table of n rows in format f: plain through writePlain, a table
// through cmdutil.Grid.
func writeRows(w io.Writer, f cmdutil.Format, header []string, n int, row func(i int, cells [][]byte)) error {
	if f == cmdutil.FormatPlain {
		return writePlain(w, header, n, row)
	}
	return writeGridAs(w, f, header, n, row)
}

// writeGrid is writePlain through cmdutil.Grid.
func writeGrid(w io.Writer, header []string, n int, row func(i int, cells [][]byte)) error {
	return writeGridAs(w, cmdutil.FormatPlain, header, n, row)
}

func writeGridAs(w io.Writer, f cmdutil.Format, header []string, n int, row func(i int, cells [][]byte)) error {
	g := cmdutil.Grid{Header: header}
	cells := make([][]byte, len(header))
	for i := 0; i < n; i++ {
		for j := range cells {
			cells[j] = cells[j][:0]
		}
		row(i, cells)
		r := make([]string, len(cells))
		for j, c := range cells {
			r[j] = string(c)
		}
		g.Add(r...)
	}
	return g.Render(w, f)
}
