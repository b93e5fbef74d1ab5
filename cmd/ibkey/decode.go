package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/internal/check"
)

// DecodeOptions holds `ibkey decode`'s dependencies and arguments.
type DecodeOptions struct {
	*Globals
	Values []string
}

func newDecodeCmd(g *Globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "decode",
		Short: "Explain P_Key and Q_Key values",
		Args:  usageArgs(cobra.NoArgs),
		// A bare `ibkey decode` is a usage mistake: show the subcommands, exit 2.
		RunE: func(c *cobra.Command, args []string) error {
			_ = c.Help()
			return &silentError{code: exitUsage}
		},
	}
	c.AddCommand(newDecodePKeyCmd(g), newDecodeQKeyCmd(g))
	return c
}

func newDecodePKeyCmd(g *Globals) *cobra.Command {
	o := &DecodeOptions{Globals: g}
	return &cobra.Command{
		Use:   "pkey VALUE...",
		Short: "Explain P_Key values: membership, 15-bit key, validity, default partition",
		Long: `Explain P_Key values. Bit 15 is the membership (1 full, 0 limited), bits 0-14 the
key. Key 0 is invalid (0x0000, 0x8000); key 0x7fff is the default partition (0xffff
full, 0x7fff limited). Values are hex with or without 0x, or the colon form 80:01.`,
		Example:           "  ibkey decode pkey 0x8001 7fff 80:02",
		Args:              usageArgs(cobra.MinimumNArgs(1)),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(c *cobra.Command, args []string) error {
			o.Values = args
			return runDecodePKey(o)
		},
	}
}

func newDecodeQKeyCmd(g *Globals) *cobra.Command {
	o := &DecodeOptions{Globals: g}
	return &cobra.Command{
		Use:   "qkey VALUE...",
		Short: "Explain Q_Key values: controlled bit, ranges, well-known values",
		Long: `Explain Q_Key values: whether the top bit (controlled, privileged) is set, which range
the value falls in (general use 0x80000000-0x8000ffff, reserved 0x80010000-0x8fffffff),
and well-known values (GSI 0x80010000, OpenSM's IPoIB default 0x00000b1b).

JSON (-o json): {"qkeys":[{"value","controlled","well_known","range","notes"}]};
well_known is "gsi", "ipoib" or "", range one of unprivileged, general-use, reserved,
controlled.`,
		Example:           "  ibkey decode qkey 0x80010000 b1b",
		Args:              usageArgs(cobra.MinimumNArgs(1)),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(c *cobra.Command, args []string) error {
			o.Values = args
			return runDecodeQKey(o)
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
	case formatJSON:
		return writeJSON(o.IO.Out, struct {
			PKeys []check.PKeyDecoding `json:"pkeys"`
		}{out})
	case formatPlain:
		g := grid{header: []string{"VALUE", "KEY", "MEMBERSHIP", "VALID", "DEFAULT"}}
		for _, d := range out {
			g.add(d.Value, d.Key, d.Membership, yesNo(d.Valid), yesNo(d.Default))
		}
		return g.render(o.IO.Out, f)
	}
	for i, d := range out {
		if i > 0 {
			fmt.Fprintln(o.IO.Out)
		}
		fmt.Fprintf(o.IO.Out, "P_Key %s\n", d.Value)
		fmt.Fprintf(o.IO.Out, "  key         %s\n  membership  %s\n  valid       %s\n  default     %s\n",
			d.Key, d.Membership, yesNo(d.Valid), yesNo(d.Default))
		for _, n := range d.Notes {
			fmt.Fprintf(o.IO.Out, "  - %s\n", n)
		}
	}
	return nil
}

func runDecodeQKey(o *DecodeOptions) error {
	f, err := o.Format()
	if err != nil {
		return err
	}
	out := make([]check.QKeyDecoding, 0, len(o.Values))
	for _, s := range o.Values {
		q, err := check.ParseQKey(s)
		if err != nil {
			return err
		}
		out = append(out, check.DecodeQKey(q))
	}
	switch f {
	case formatJSON:
		return writeJSON(o.IO.Out, struct {
			QKeys []check.QKeyDecoding `json:"qkeys"`
		}{out})
	case formatPlain:
		g := grid{header: []string{"VALUE", "CONTROLLED", "RANGE", "WELL_KNOWN"}}
		for _, d := range out {
			g.add(d.Value, yesNo(d.Controlled), string(d.Range), d.WellKnown)
		}
		return g.render(o.IO.Out, f)
	}
	for i, d := range out {
		if i > 0 {
			fmt.Fprintln(o.IO.Out)
		}
		fmt.Fprintf(o.IO.Out, "Q_Key %s\n", d.Value)
		wk := map[string]string{"gsi": "GSI (QP1)", "ipoib": "IPoIB (OpenSM default)", "": "no"}[d.WellKnown]
		fmt.Fprintf(o.IO.Out, "  controlled  %s\n  range       %s\n  well-known  %s\n", yesNo(d.Controlled), d.Range, wk)
		for _, n := range d.Notes {
			fmt.Fprintf(o.IO.Out, "  - %s\n", n)
		}
	}
	return nil
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
