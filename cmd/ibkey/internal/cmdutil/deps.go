package cmdutil

import (
	"context"

	"github.com/spf13/cobra"
)

// Deps are what a command takes from the Factory when it runs (RunE fills them): its
// options struct embeds them.
type Deps struct {
	IO      *IOStreams
	Format  Format
	Notices *Notices
	Ctx     context.Context // the command's: main cancels it on a signal
	// ColorOut: stdout may be coloured (a terminal, colour allowed).
	ColorOut bool
}

// RunE is the RunE of a command whose options o embed Deps d: d is filled in, args
// (nil: the command takes none) checks the arguments and reads them into o, then run
// runs, or runF in tests of flag parsing.
func RunE[O any](f *Factory, o *O, d *Deps, args func(*cobra.Command, []string) error, runF, run func(*O) error) func(*cobra.Command, []string) error {
	return func(c *cobra.Command, a []string) error {
		format, err := f.Format()
		if err != nil {
			return err
		}
		*d = Deps{IO: f.IOStreams, Format: format, Notices: f.Notices(), Ctx: Context(c), ColorOut: f.ColorOut()}
		if args != nil {
			if err := args(c, a); err != nil {
				return err
			}
		}
		if runF != nil {
			return runF(o)
		}
		return run(o)
	}
}
