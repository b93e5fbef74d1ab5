package cmdutil

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/internal/jsondoc"
)

// Grid is a table of strings rendered as a tablewriter table on a terminal or as
// stable plain columns otherwise.
type Grid struct {
	Header []string
	Rows   [][]string
	// FreeLast keeps the spaces of the last column in plain output: it is free text to
	// the end of the line (as ps(1)'s COMMAND), for prose such as decode's notes.
	FreeLast bool
}

// Add appends a row.
func (g *Grid) Add(cells ...string) { g.Rows = append(g.Rows, cells) }

// Render writes the whole grid with one write (tabwriter and tablewriter write cell
// by cell: unbuffered, that is thousands of write(2) calls for a big table).
func (g *Grid) Render(w io.Writer, f Format) error {
	var b bytes.Buffer
	var err error
	if f == FormatTable {
		err = g.renderTable(&b)
	} else {
		err = g.renderPlain(&b)
	}
	if err != nil {
		return err
	}
	_, err = w.Write(b.Bytes())
	return err
}

func (g *Grid) renderTable(w io.Writer) error {
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
	)
	t.Header(toAny(g.Header)...)
	for _, r := range g.Rows {
		if err := t.Append(toAny(r)...); err != nil {
			return err
		}
	}
	return t.Render()
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// renderPlain prints aligned columns with a header line. Cells never contain spaces
// (they become _) and empty cells print as -, so awk '{print $N}' always works; with
// FreeLast the last column alone keeps its spaces.
func (g *Grid) renderPlain(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
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
	return tw.Flush()
}

// freeTextCell keeps a FreeLast cell on its line and out of tabwriter's columns.
var freeTextCell = strings.NewReplacer("\t", " ", "\n", " ")

// PlainCell is c as one awk field: "-" when empty, spaces as "_".
func PlainCell(c string) string {
	if c == "" {
		return "-"
	}
	return strings.ReplaceAll(c, " ", "_")
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

// Plural is "1 node", "2 nodes".
func Plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// Style returns a lipgloss style bound to w's own renderer, or nil when w is not to be
// coloured. A renderer bound to the stream never asks the terminal for its background
// colour (AdaptiveColor and HasDarkBackground do, and stall for seconds on terminals
// that do not answer), so only fixed ANSI colours are used here.
func Style(w io.Writer, color bool) *lipgloss.Style {
	if !color {
		return nil
	}
	// The caller decided w is a terminal and colour is allowed: a fixed 16-colour
	// profile, so nothing here probes the terminal or the environment.
	s := lipgloss.NewRenderer(w, termenv.WithProfile(termenv.ANSI)).NewStyle()
	return &s
}

// Notices prints warnings and notes on stderr, coloured when allowed.
type Notices struct {
	w     io.Writer
	color bool
}

// NewNotices prints on w; color allows a coloured "warning:" prefix.
func NewNotices(w io.Writer, color bool) *Notices { return &Notices{w: w, color: color} }

// Warn prints "warning: msg".
func (n *Notices) Warn(msg string) {
	prefix := "warning:"
	if s := Style(n.w, n.color); s != nil {
		prefix = s.Foreground(lipgloss.Color("3")).Bold(true).Render(prefix)
	}
	fmt.Fprintln(n.w, prefix, msg)
}

// Note prints "note: msg".
func (n *Notices) Note(msg string) { fmt.Fprintln(n.w, "note:", msg) }

// Label announces a host that is not the real machine.
func (n *Notices) Label(host string) {
	if host != "" {
		fmt.Fprintf(n.w, "ibkey: %s\n", host)
	}
}
