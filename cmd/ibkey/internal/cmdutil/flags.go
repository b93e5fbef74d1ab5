package cmdutil

import (
	"errors"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Durations: an interval flag (--interval, --*-interval) also takes plain seconds, as
// watch(1) -n and the infiniband-diags do (`--interval 5` is 5 s); --mad-timeout also
// takes plain milliseconds, as the diags' -t/--timeout do.

// plainDuration wraps a duration flag's value so a plain number is read in unit, and
// keeps the token as typed for messages (FlagText). With unit "" it only keeps the
// token: a plain number is refused as pflag refuses it (--timeout).
type plainDuration struct {
	pflag.Value
	unit  string // "s", "ms", or "" (no plain numbers)
	typed string // what the user wrote, for messages
}

func (d *plainDuration) Set(s string) error {
	d.typed = s
	if d.unit != "" && s != "" && strings.Trim(s, "0123456789.") == "" {
		s += d.unit
	}
	return d.Value.Set(s)
}

// FlagText is what the user typed for c's flag name ("0" for --interval 0, not
// "0s"), or its value's text when it was not typed through the command line.
func FlagText(c *cobra.Command, name string) string {
	fl := c.Flags().Lookup(name)
	if fl == nil {
		return ""
	}
	if d, ok := fl.Value.(*plainDuration); ok && d.typed != "" {
		return d.typed
	}
	return fl.Value.String()
}

// isIntervalFlag says whether a duration flag is an interval.
func isIntervalFlag(name string) bool {
	return name == "interval" || strings.HasSuffix(name, "-interval")
}

// IntervalVar defines an interval flag (its name is interval or ends in -interval):
// a duration that also takes plain seconds, says so in its help, and completes
// IntervalChoices (never file names).
func IntervalVar(c *cobra.Command, p *time.Duration, name string, value time.Duration, usage string) {
	plainDurationVarP(c.Flags(), p, name, "", value, usage+" (a plain number is seconds)", "s")
	_ = c.RegisterFlagCompletionFunc(name, CompleteDurations(IntervalChoices...))
}

// plainDurationVarP defines a duration flag that reads a plain number in unit ("s" or
// "ms").
func plainDurationVarP(fl *pflag.FlagSet, p *time.Duration, name, shorthand string, value time.Duration, usage, unit string) {
	fl.DurationVarP(p, name, shorthand, value, usage)
	d := fl.Lookup(name)
	d.Value = &plainDuration{Value: d.Value, unit: unit}
}

// AnnotationTableNeedsTerminal marks a command whose table output is a screen that
// needs a terminal on stdin and stdout (watch counters sets it in its Annotations):
// -o table is refused elsewhere instead of silently printing lines.
const AnnotationTableNeedsTerminal = "ibkey/table-needs-terminal"

// checkTableTerminal refuses -o table for a command marked with
// AnnotationTableNeedsTerminal when stdin or stdout is not a terminal.
func (f *Factory) checkTableTerminal(c *cobra.Command) error {
	if c.Annotations[AnnotationTableNeedsTerminal] == "" || f.Output != "table" || (f.IOStreams.InTTY && f.IOStreams.OutTTY) {
		return nil
	}
	what := "stdout is not a terminal"
	if f.IOStreams.OutTTY {
		what = "stdin is not a terminal"
	}
	return Usagef("-o table: '%s' draws its table on a terminal and %s (accepted here: -o plain, -o json)", c.CommandPath(), what)
}

// ibsimSpaced finds `--ibsim WORD` (the flag's value given after a space): --ibsim
// alone takes no value, so WORD was read as a command or an argument (readAs says
// which). word is "" when --ibsim is not followed by a word that could be a socket
// name.
func ibsimSpaced(root *cobra.Command, args []string) (word, readAs string) {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "--" {
			return "", ""
		}
		if args[i] != "--ibsim" {
			continue
		}
		w := args[i+1]
		if w == "" || strings.HasPrefix(w, "-") || strings.ContainsAny(w, "=,") {
			return "", "" // a flag, or an endpoint such as lid=3
		}
		cur := root
		if c, _, err := root.Find(args[:i]); err == nil {
			cur = c
		}
		for _, sub := range cur.Commands() {
			if sub.Name() == w || sub.HasAlias(w) {
				return "", "" // `ibkey --ibsim pkeys`
			}
		}
		if cur.HasSubCommands() {
			return w, "a command"
		}
		return w, "an argument"
	}
	return "", ""
}

// ibsimSpacedError rewrites a command's failure after `--ibsim WORD` into the usage
// error that explains it.
func ibsimSpacedError(root *cobra.Command, args []string, err error) error {
	w, readAs := ibsimSpaced(root, args)
	if w == "" {
		return err
	}
	var silent *SilentError
	if code := ExitCode(err); errors.As(err, &silent) || (code != ExitUsage && code != ExitEnv) {
		return err
	}
	return Usagef("--ibsim %s: give the simulator's socket name as --ibsim=%s (--ibsim alone means $IBSIM_SOCKNAME, else sim; %q was read as %s)", w, w, w, readAs)
}

// listValue is a list flag's value (pflag's StringSlice and the like).
type listValue interface {
	pflag.Value
	pflag.SliceValue
}

// oneLineList refuses a line break in a list flag's value: pflag parses it with
// encoding/csv, whose Reader reads one record, so `--ignore "a<newline>b"` would
// keep a and silently drop b.
type oneLineList struct{ listValue }

func (l oneLineList) Set(s string) error {
	if strings.ContainsAny(s, "\n\r") {
		return errors.New("a line break in a list: give the values on one line, separated by commas")
	}
	return l.listValue.Set(s)
}

// oneLineLists makes every comma-separated list flag of c refuse a line break
// (oneLineList): one mechanism, however many such flags the commands define.
func oneLineLists(c *cobra.Command) {
	wrap := func(fl *pflag.Flag) {
		if !strings.HasSuffix(fl.Value.Type(), "Slice") {
			return
		}
		if v, ok := fl.Value.(listValue); ok {
			fl.Value = oneLineList{v}
		}
	}
	for _, fs := range []*pflag.FlagSet{c.Flags(), c.PersistentFlags()} {
		// In the order defined: VisitAll would first sort the set (SortFlags, for
		// help), which this walk over every command on every run does not need.
		sorted := fs.SortFlags
		fs.SortFlags = false
		fs.VisitAll(wrap)
		fs.SortFlags = sorted
	}
}
