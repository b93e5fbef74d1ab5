package cmdutil

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ibkey/ibkey/internal/textsafe"
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
// question than the one asked; a duration past its bound; and a --timeout that is not
// positive (it bounds the whole command: FabricSweep), whether or not this run sweeps.
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
		case "stringArray", "stringSlice":
			// One of the values is empty (--previous=, --kind a,,b): the same.
			if v, ok := fl.Value.(pflag.SliceValue); ok && slices.Contains(v.GetSlice(), "") {
				err = Usagef("--%s needs a value (given empty)", fl.Name)
			}
		case "duration":
			d, perr := time.ParseDuration(fl.Value.String())
			if perr != nil {
				return
			}
			if fl.Name == "timeout" && d <= 0 {
				// The token as typed ("0", not "0s"), as --mad-timeout's.
				err = Usagef("invalid --timeout %s (accepted: a positive duration, e.g. 30s)", FlagText(c, "timeout"))
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
				err = Usagef("invalid --%s %s: at most %s", fl.Name, FlagText(c, fl.Name), fmtDuration(limit))
			}
		}
	})
	return err
}

// checkCobraFlags runs cobra's checks of required flags and flag groups (--lid and
// --dr given together) before c runs, so that their untyped errors exit 2 (cobra
// runs them after the pre-run hooks, and then passes: they are the same checks).
func checkCobraFlags(c *cobra.Command) error {
	if err := cmp.Or(c.ValidateRequiredFlags(), c.ValidateFlagGroups()); err != nil {
		return Usagef("%s: %s (see '%s --help')", commandName(c), err, c.CommandPath())
	}
	return nil
}

func fmtDuration(d time.Duration) string {
	s := d.String()
	s = strings.TrimSuffix(s, "0s")
	return strings.TrimSuffix(s, "0m")
}

// RefuseUnknownSubcommands makes every command that only groups subcommands (ibkey
// itself, watch, fabric, partitions, decode, completion) refuse an argument that names
// none of them (and, but for ibkey itself, being run without one), exit 2, in one line that names the word, the closest subcommand and
// the accepted ones, instead of printing its help and exiting 0 (or cobra's
// several-line "Did you mean this?"); the same when flags follow the mistyped word
// (`watch counter --once`: the flag belongs to the subcommand meant, so "unknown
// flag" would name the wrong mistake). `help TOPIC` refuses a topic that is no
// command the same way.
//
// The same walk, before any flag is parsed, makes cobra's argument errors exit 2
// (UsageArgs on every leaf's validator, cobra's own too) and every list flag refuse
// a line break (oneLineLists).
func RefuseUnknownSubcommands(root *cobra.Command) {
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	refuse := func(c *cobra.Command, args []string) error {
		if len(args) > 0 {
			return unknownCommand("", c, args[0])
		}
		return nil
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		oneLineLists(c)
		if c.Args != nil && !c.HasSubCommands() {
			// cobra's own validators (the completion commands' NoArgs) return
			// untyped errors: bad input, exit 2, in one line.
			c.Args = UsageArgs(c.Args)
		}
		if c.HasSubCommands() {
			// The root too: without Args, cobra refuses an unknown word there itself,
			// over several lines.
			c.Args = refuse
			if c.RunE == nil && c.Run == nil {
				c.RunE = func(c *cobra.Command, args []string) error {
					if c == root {
						return c.Help()
					}
					// `ibkey watch` alone: a usage mistake, in one line.
					return Usagef("%s needs a subcommand (commands: %s; see '%s --help')", commandName(c), strings.Join(subNames(c), ", "), c.CommandPath())
				}
			}
		}
		if c.Name() == "help" && c.Parent() == root {
			run := c.Run
			c.Run = nil
			c.RunE = func(h *cobra.Command, args []string) error {
				if len(args) > 0 {
					if found, _, err := root.Find(args); err != nil || found == root {
						return unknownCommand("help: ", root, strings.Join(args, " "))
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

// unknownCommand is the usage error for word given to group, a command with
// subcommands, where a subcommand should be: `unknown command "counter" for "ibkey
// watch"; did you mean "counters"? (commands: counters, pkeys)`, after prefix.
func unknownCommand(prefix string, group *cobra.Command, word string) error {
	msg := fmt.Sprintf("%sunknown command %q for %q", prefix, word, group.CommandPath())
	if s := closestCommands(group, word); len(s) > 0 {
		quoted := make([]string, len(s))
		for i, n := range s {
			quoted[i] = strconv.Quote(n)
		}
		msg += "; did you mean " + strings.Join(quoted, " or ") + "?"
	} else if group.Flags().Lookup(word) != nil || group.PersistentFlags().Lookup(word) != nil {
		// `ibkey version`, `ibkey demo pkeys`: the flag of that name.
		msg += "; did you mean --" + word + "?"
	}
	return Usagef("%s (commands: %s)", msg, strings.Join(subNames(group), ", "))
}

// closestCommands are the subcommands of group closest to word by edit distance,
// among those cobra's suggestion rules admit (within SuggestionsMinimumDistance,
// default 2; word a prefix of the name; or named in the subcommand's SuggestFor):
// "pkey" suggests pkeys only, not also a command two edits away.
func closestCommands(group *cobra.Command, word string) []string {
	limit := group.SuggestionsMinimumDistance
	if limit <= 0 {
		limit = 2 // cobra's default
	}
	lower := strings.ToLower(word)
	var best []string
	bestD := -1
	for _, s := range group.Commands() {
		if !s.IsAvailableCommand() {
			continue
		}
		name := strings.ToLower(s.Name())
		d := textsafe.EditDistance(lower, name)
		if d > limit && !strings.HasPrefix(name, lower) && !slices.Contains(s.SuggestFor, word) {
			continue
		}
		switch {
		case bestD < 0 || d < bestD:
			best, bestD = []string{s.Name()}, d
		case d == bestD:
			best = append(best, s.Name())
		}
	}
	return best
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
