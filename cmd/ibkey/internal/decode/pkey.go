package decode

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/internal/check"
)

// NewCmdPKey is `ibkey decode pkey`; runF replaces the run function in tests.
func NewCmdPKey(f *cmdutil.Factory, runF func(*DecodeOptions) error) *cobra.Command {
	o := newOptions(f)
	return &cobra.Command{
		Use:   "pkey VALUE...",
		Short: "Explain P_Key values: membership, 15-bit key, validity, default partition",
		Long: `Explain P_Key values. Bit 15 is the membership (1 full, 0 limited), bits 0-14 the
key. Key 0 is invalid (0x0000, 0x8000); key 0x7fff is the default partition (0xffff
full, 0x7fff limited). Values are hex with or without 0x, or the colon form 80:01.`,
		Example:           "  ibkey decode pkey 0x8001 7fff 80:02",
		Args:              cmdutil.UsageArgs(cobra.MinimumNArgs(1)),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(c *cobra.Command, args []string) error {
			o.Values = args
			if runF != nil {
				return runF(o)
			}
			return runDecodePKey(o)
		},
	}
}

func runDecodePKey(o *DecodeOptions) error {
	f, err := o.Format()
	if err != nil {
		return err
	}
	out := make([]check.PKeyDecoding, 0, len(o.Values))
	for _, s := range o.Values {
		p, err := check.ParsePKey(s)
		if err != nil {
			return err
		}
		out = append(out, check.DecodePKey(p))
	}
	switch f {
	case cmdutil.FormatJSON:
		return cmdutil.WriteJSON(o.IO.Out, struct {
			PKeys []check.PKeyDecoding `json:"pkeys"`
		}{out})
	case cmdutil.FormatPlain:
		g := cmdutil.Grid{Header: []string{"VALUE", "KEY", "MEMBERSHIP", "VALID", "DEFAULT"}}
		for _, d := range out {
			g.Add(d.Value, d.Key, d.Membership, cmdutil.YesNo(d.Valid), cmdutil.YesNo(d.Default))
		}
		return g.Render(o.IO.Out, f)
	}
	for i, d := range out {
		if i > 0 {
			fmt.Fprintln(o.IO.Out)
		}
		fmt.Fprintf(o.IO.Out, "P_Key %s\n", d.Value)
		fmt.Fprintf(o.IO.Out, "  key         %s\n  membership  %s\n  valid       %s\n  default     %s\n",
			d.Key, d.Membership, cmdutil.YesNo(d.Valid), cmdutil.YesNo(d.Default))
		for _, n := range d.Notes {
			fmt.Fprintf(o.IO.Out, "  - %s\n", n)
		}
	}
	return nil
}
