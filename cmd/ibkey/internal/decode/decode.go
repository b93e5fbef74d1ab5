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
	c.Args = cobra.MinimumNArgs(1)
	c.ValidArgsFunction = cobra.NoFileCompletions
	c.RunE = cmdutil.RunE(f, o, &o.Deps, func(_ *cobra.Command, args []string) error {
		o.Values = args
		return nil
	}, runF, run)
	return c
}

// value is one decoded value as every format shows it.
type value struct {
	json  any      // its item in the JSON document's list
	row   []string // its plain row, notes aside
	text  string   // its text block, notes aside
	notes []string
}

// run decodes o.Values with parse (the first bad one is the error) and prints them in
// the chosen format: JSON (doc makes the document of the items), plain columns under
// header with the notes last, or a text block per value with its notes.
func run(o *DecodeOptions, header []string, doc func(items []any) any, parse func(string) (value, error)) error {
	vs := make([]value, 0, len(o.Values))
	for _, s := range o.Values {
		v, err := parse(s)
		if err != nil {
			return err
		}
		vs = append(vs, v)
	}
	switch o.Format {
	case cmdutil.FormatJSON:
		items := make([]any, len(vs))
		for i, v := range vs {
			items[i] = v.json
		}
		return cmdutil.WriteJSON(o.IO.Out, doc(items))
	case cmdutil.FormatPlain:
		// The notes stay in plain output (issue: "decode in plain mode keeps its
		// explanations"), as a last column so that a value is still one line.
		g := cmdutil.Grid{Header: append(header, "NOTES"), FreeLast: true}
		for _, v := range vs {
			g.Add(append(v.row, strings.Join(v.notes, "; "))...)
		}
		return g.Render(o.IO.Out, o.Format)
	}
	for i, v := range vs {
		if i > 0 {
			fmt.Fprintln(o.IO.Out)
		}
		io.WriteString(o.IO.Out, v.text)
		for _, n := range v.notes {
			fmt.Fprintf(o.IO.Out, "  - %s\n", n)
		}
	}
	return nil
}
