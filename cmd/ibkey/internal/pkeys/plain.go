package pkeys

import (
	"io"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/internal/query"
)

// plainHeader are the columns of `pkeys -o plain`: the port, then entryCells.
var plainHeader = []string{"PORT", "INDEX", "PKEY", "MEMBERSHIP", "KEY", "NOTES", "IPOIB"}

// writePlain writes the entries of views that show selects as `-o plain` columns, one
// line per entry; ports that have no table (iWARP) are noted through note (a table
// not read is warned about after the output, in every format).
func writePlain(w io.Writer, views []*query.PortView, all bool, note func(string)) error {
	g := cmdutil.Grid{Header: plainHeader}
	for _, v := range views {
		if v.Table == nil {
			if v.TableNotRead() == "" {
				note(v.Ref().String() + ": " + v.TableMissing)
			}
			continue
		}
		ref := v.Ref().String()
		for _, e := range v.Table.Entries {
			if show(e, all) {
				g.Add(append([]string{ref}, entryCells(e)...)...)
			}
		}
	}
	return g.Render(w, cmdutil.FormatPlain)
}
