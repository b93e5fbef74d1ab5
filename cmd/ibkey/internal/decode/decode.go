// Package decode is `ibkey decode pkey|qkey`: P_Key and Q_Key values explained. It
// reads nothing from the system and sends no MADs.
package decode

import (
	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
)

// DecodeOptions holds `ibkey decode pkey|qkey`'s output and arguments.
type DecodeOptions struct {
	IO     *cmdutil.IOStreams
	Format func() (cmdutil.Format, error)
	Values []string
}

func newOptions(f *cmdutil.Factory) *DecodeOptions {
	return &DecodeOptions{IO: f.IOStreams, Format: f.Format}
}

// NewCmdDecode is `ibkey decode`, the parent of pkey and qkey.
func NewCmdDecode(f *cmdutil.Factory) *cobra.Command {
	c := &cobra.Command{
		Use:   "decode",
		Short: "Explain P_Key and Q_Key values",
		Args:  cmdutil.UsageArgs(cobra.NoArgs),
		// A bare `ibkey decode` is a usage mistake: show the subcommands, exit 2.
		RunE: func(c *cobra.Command, args []string) error {
			_ = c.Help()
			return cmdutil.Exit(cmdutil.ExitUsage)
		},
	}
	c.AddCommand(NewCmdPKey(f, nil), NewCmdQKey(f, nil))
	return c
}
