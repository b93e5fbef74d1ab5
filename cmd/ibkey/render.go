package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/charmbracelet/lipgloss"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// grid is a table of strings rendered as a tablewriter table on a terminal or as
// stable plain columns otherwise.
type grid struct {
	header []string
	rows   [][]string
}

func (g *grid) add(cells ...string) { g.rows = append(g.rows, cells) }

// render writes the whole grid with one write (tabwriter and tablewriter write cell
// by cell: unbuffered, that is thousands of write(2) calls for a big table).
func (g *grid) render(w io.Writer, f format) error {
	var b bytes.Buffer
	var err error
	if f == formatTable {
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

func (g *grid) renderTable(w io.Writer) error {
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
	)
	t.Header(toAny(g.header)...)
	for _, r := range g.rows {
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
// (they become _) and empty cells print as -, so awk '{print $N}' always works.
func (g *grid) renderPlain(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	if g.header != nil {
		fmt.Fprintln(tw, strings.Join(g.header, "\t"))
	}
	for _, r := range g.rows {
		cells := make([]string, len(r))
		for i, c := range r {
			cells[i] = plainCell(c)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

func plainCell(c string) string {
	if c == "" {
		return "-"
	}
	return strings.ReplaceAll(c, " ", "_")
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// notices prints warnings and notes on stderr, colored when allowed.
type notices struct {
	w     io.Writer
	color bool
}

func (g *Globals) notices() *notices { return &notices{w: g.IO.ErrOut, color: g.Color()} }

func (n *notices) warn(msg string) {
	prefix := "warning:"
	if n.color {
		prefix = lipgloss.NewRenderer(n.w).NewStyle().Foreground(lipgloss.Color("3")).Bold(true).Render(prefix)
	}
	fmt.Fprintln(n.w, prefix, msg)
}

func (n *notices) note(msg string) { fmt.Fprintln(n.w, "note:", msg) }

// label announces a host that is not the real machine.
func (n *notices) label(host string) {
	if host != "" {
		fmt.Fprintf(n.w, "ibkey: %s\n", host)
	}
}
