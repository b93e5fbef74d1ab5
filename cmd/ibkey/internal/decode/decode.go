// Package decode is `ibkey decode pkey|qkey`: P_Key and Q_Key values explained. It
// reads nothing from the system and sends no MADs.
package decode

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
)

// DecodeOptions holds `ibkey decode pkey|qkey`'s output and arguments.
type DecodeOptions struct {
	cmdutil.Deps
	Values []string
}

// NewCmdDecode is `ibkey decode`, the parent of pkey and qkey.
func NewCmdDecode(f *cmdutil.Factory) *cobra.Command {
	c := &cobra.Command{
		Use:   "decode",
		Short: "Explain P_Key and Q_Key values",
	}
	c.AddCommand(NewCmdPKey(f, nil), NewCmdQKey(f, nil))
	return c
}

// newValuesCmd makes c (its texts set) a decode subcommand: VALUE... arguments, then
// runF (tests) or run.
func newValuesCmd(f *cmdutil.Factory, c *cobra.Command, runF, run func(*DecodeOptions) error) *cobra.Command {
	o := &DecodeOptions{}
	c.Args = cmdutil.UsageArgs(cobra.MinimumNArgs(1))
	c.ValidArgsFunction = cobra.NoFileCompletions
	c.RunE = cmdutil.RunE(f, o, &o.Deps, func(_ *cobra.Command, args []string) error {
		o.Values = args
		return nil
	}, runF, run)
	return c
}

// decoding is how one kind of value is decoded and shown.
type decoding[D any] struct {
	parse  func(string) (D, error) // parse and decode one value
	json   func([]D) any           // the -o json document
	header []string                // the plain columns
	row    func(D) []string        // one plain row
	text   func(w io.Writer, d D)  // the text block of one value, notes aside
	notes  func(D) []string
}

// run decodes o.Values (the first bad one is the error) and prints them in the chosen
// format: JSON, plain columns, or a text block per value with its notes.
func (k decoding[D]) run(o *DecodeOptions) error {
	f := o.Format
	out := make([]D, 0, len(o.Values))
	for _, s := range o.Values {
		d, err := k.parse(s)
		if err != nil {
			return err
		}
		out = append(out, d)
	}
	switch f {
	case cmdutil.FormatJSON:
		return cmdutil.WriteJSON(o.IO.Out, k.json(out))
	case cmdutil.FormatPlain:
		// The notes stay in plain output (issue: "decode in plain mode keeps its
		// explanations"), as a last column so that a value is still one line.
		g := cmdutil.Grid{Header: append(k.header[:len(k.header):len(k.header)], "NOTES"), FreeLast: true}
		for _, d := range out {
			g.Add(append(k.row(d), strings.Join(k.notes(d), "; "))...)
		}
		return g.Render(o.IO.Out, f)
	}
	for i, d := range out {
		if i > 0 {
			fmt.Fprintln(o.IO.Out)
		}
		k.text(o.IO.Out, d)
		for _, n := range k.notes(d) {
			fmt.Fprintf(o.IO.Out, "  - %s\n", n)
		}
	}
	return nil
}
