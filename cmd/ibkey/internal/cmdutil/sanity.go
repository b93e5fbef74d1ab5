package cmdutil

import (
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Upper bounds of duration flags: a value past them is a typo (100000h), not a plan,
// and a MAD timeout of hours would make a stalled fabric look like a hang.
const (
	maxMADTimeout = time.Minute
	maxInterval   = 24 * time.Hour
	maxTimeout    = 7 * 24 * time.Hour
)

// checkFlagValues refuses, for the command about to run, a string flag given with an
// empty value (--find=, --partitions ""): taken as "not given" it would answer another
// question than the one asked; and a duration past its bound.
func checkFlagValues(c *cobra.Command) error {
	var err error
	c.Flags().Visit(func(fl *pflag.Flag) {
		if err != nil {
			return
		}
		switch fl.Value.Type() {
		case "string":
			if fl.Value.String() == "" && fl.NoOptDefVal == "" {
				err = Usagef("--%s needs a value (given empty)", fl.Name)
			}
		case "duration":
			d, perr := time.ParseDuration(fl.Value.String())
			if perr != nil {
				return
			}
			limit := time.Duration(0)
			switch {
			case fl.Name == "mad-timeout":
				limit = maxMADTimeout
			case isIntervalFlag(fl.Name):
				limit = maxInterval
			case fl.Name == "timeout" || strings.HasSuffix(fl.Name, "-timeout"):
				limit = maxTimeout
			}
			if limit > 0 && d > limit {
				err = Usagef("invalid --%s %s: at most %s", fl.Name, fmtDuration(d), fmtDuration(limit))
			}
		}
	})
	return err
}

func fmtDuration(d time.Duration) string {
	s := d.String()
	s = strings.TrimSuffix(s, "0s")
	return strings.TrimSuffix(s, "0m")
}

// RefuseUnknownSubcommands makes every command that only groups subcommands (watch,
// fabric, partitions, decode, completion) refuse an argument that names none of them,
// exit 2, instead of printing its help and exiting 0; and `help TOPIC` refuse a topic
// that is no command.
func RefuseUnknownSubcommands(root *cobra.Command) {
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c != root && c.HasSubCommands() {
			c.Args = func(c *cobra.Command, args []string) error {
				if len(args) > 0 {
					return Usagef("%s: unknown command %q (commands: %s)", c.CommandPath(), args[0], strings.Join(subNames(c), ", "))
				}
				return nil
			}
			if c.RunE == nil && c.Run == nil {
				c.RunE = func(c *cobra.Command, args []string) error { return c.Help() }
			}
		}
		if c.Name() == "help" && c.Parent() == root {
			run := c.Run
			c.Run = nil
			c.RunE = func(h *cobra.Command, args []string) error {
				if len(args) > 0 {
					if found, _, err := root.Find(args); err != nil || found == root {
						return Usagef("help: unknown command %q (commands: %s)", strings.Join(args, " "), strings.Join(subNames(root), ", "))
					}
				}
				run(h, args)
				return nil
			}
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
}

func subNames(c *cobra.Command) []string {
	var out []string
	for _, s := range c.Commands() {
		if s.IsAvailableCommand() {
			out = append(out, s.Name())
		}
	}
	return out
}
