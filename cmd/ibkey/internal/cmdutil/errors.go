package cmdutil

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/ibverbs"
	"github.com/ibkey/ibkey/internal/query"
)

// Exit codes: 0 success / yes, 1 a definite no, 2 bad input, 3 environment, 4
// incomplete (the answer depends on something not read or checked).
const (
	ExitOK    = 0
	ExitNo    = 1
	ExitUsage = 2
	ExitEnv   = 3
	// ExitIncomplete: the answer depends on something that was not read or checked
	// (listed on stderr); never a definite yes or no.
	ExitIncomplete = 4
	// ExitSignal is added to the signal number when a signal ended the command, as a
	// shell reports it (SIGINT: 130, SIGTERM: 143).
	ExitSignal = 128
)

// SilentError carries an exit code for an outcome the command has already reported
// (a "no" from can-talk, a key not found).
type SilentError struct{ Code int }

func (e *SilentError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// Exit is a SilentError with code c.
func Exit(c int) error { return &SilentError{Code: c} }

// ExitCode maps typed errors to exit codes, in this one place.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var (
		silent   *SilentError
		parseErr *check.ParseError
		usage    *query.UsageError
		notFound *query.NotFoundError
		env      *query.EnvError

		unknown     *query.UnknownError
		interrupted *query.InterruptedError
	)
	switch {
	case errors.As(err, &silent):
		return silent.Code
	case errors.As(err, &parseErr), errors.As(err, &usage), errors.Is(err, ibverbs.ErrBadName):
		return ExitUsage
	case errors.As(err, &notFound), errors.As(err, &env):
		return ExitEnv
	case errors.As(err, &unknown):
		return ExitIncomplete
	case errors.As(err, &interrupted):
		return SignalExitCode(interrupted.Cause)
	}
	// Anything else is a failure no layer typed (an I/O error writing the answer, an
	// encoder's error): not bad input (2: cobra's flag and argument errors are typed
	// where they arise, FlagError, UsageArgs, checkCobraFlags) and not a device or
	// file found missing (3), but an answer not given: 4, never a yes or no.
	return ExitIncomplete
}

// Reported says whether err's message was already printed (a SilentError).
func Reported(err error) bool {
	var silent *SilentError
	return errors.As(err, &silent)
}

// Usagef is a bad-input error (exit 2).
func Usagef(format string, a ...any) error {
	return &query.UsageError{Msg: fmt.Sprintf(format, a...)}
}

// UsageArgs wraps a cobra argument validator so its errors exit 2; the walk of
// RefuseUnknownSubcommands puts it on every leaf command's validator. An error
// already typed (a validator that names the bad argument itself) is returned as it is.
func UsageArgs(v cobra.PositionalArgs) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		err := v(c, args)
		if err == nil || ExitCode(err) == ExitUsage {
			return err
		}
		return Usagef("%s: %s (usage: %s)", commandName(c), err, c.UseLine())
	}
}

// NoArgs is the validator of a command that takes no arguments: exit 2 saying so
// (cobra.NoArgs says `unknown command "mlx5_0"`, as if the word were a misspelt
// subcommand).
func NoArgs(c *cobra.Command, args []string) error {
	if len(args) > 0 {
		return Usagef("%s takes no arguments, got %q (usage: %s)", commandName(c), strings.Join(args, " "), c.UseLine())
	}
	return nil
}

// commandName is c's path without the root's name ("watch counters"): messages are
// printed after "ibkey: " already.
func commandName(c *cobra.Command) string {
	if !c.HasParent() {
		return c.Name()
	}
	_, rest, _ := strings.Cut(c.CommandPath(), " ")
	return rest
}

// FlagError makes cobra's flag errors exit 2 with a pointer to the help of the
// command path, and names the ibkey spelling of an infiniband-diags flag the command
// does not take.
func FlagError(c *cobra.Command, err error) error {
	if args := c.Flags().Args(); c.HasSubCommands() && len(args) > 0 {
		// A group command parses flags only when its first word named no subcommand
		// (cobra descends otherwise): that word is the mistake, and the flag is
		// likely the subcommand's (`watch counter --once`).
		return unknownCommand("", c, args[0])
	}
	msg := err.Error()
	if sh, ok := strings.CutPrefix(msg, "unknown shorthand flag: '"); ok && len(sh) > 0 {
		if hint := diagsHint(c, sh[:1]); hint != "" {
			msg += " (" + hint + ")"
		}
	}
	var invalid *pflag.InvalidValueError
	if errors.As(err, &invalid) {
		if a := acceptedValues(invalid.GetFlag()); a != "" {
			msg += " (accepted: " + a + ")"
		}
	}
	return &query.UsageError{Msg: fmt.Sprintf("%s (see '%s --help')", msg, c.CommandPath())}
}

// acceptedValues says what a flag of a plain type accepts, for pflag's "invalid
// argument" errors (which name the value and the Go parser's complaint only).
func acceptedValues(fl *pflag.Flag) string {
	if d, ok := fl.Value.(*plainDuration); ok && d.unit != "" {
		unit := map[string]string{"s": "seconds", "ms": "milliseconds"}[d.unit]
		return "a duration such as 500ms, 5s or 1m30s, or a plain number of " + unit
	}
	switch fl.Value.Type() {
	case "bool":
		return "true or false; the flag alone is true"
	case "int":
		return "a whole number"
	case "duration":
		return "a duration such as 500ms, 5s or 1m30s"
	}
	return ""
}

// diagsFlags are infiniband-diags' short flags and ibkey's spelling of each.
var diagsFlags = map[string]string{
	"C": "--ca DEV", "P": "--ca-port N", "D": "--dr PATH", "G": "--guid GUID",
	"L": "--lid LID", "t": "--mad-timeout MS",
}

// diagsHint explains a short flag the command does not have.
func diagsHint(c *cobra.Command, sh string) string {
	if sh == "v" || sh == "V" {
		return "ibkey has no verbose mode: warnings and notes are always on stderr; --version prints the version"
	}
	long, ok := diagsFlags[sh]
	if !ok {
		return ""
	}
	return fmt.Sprintf("infiniband-diags' -%s is %s in ibkey, which '%s' does not take", sh, long, c.CommandPath())
}
