package cmdutil

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/internal/textsafe"
)

// AddRootFlags gives root the flags every command shares (--sysfs, --demo, -o,
// --no-color, and the hidden --ibsim of AddRootIbsimFlag), bound into f, and decides
// the output format and colour once, before any command runs. cmd/ibkey's root and
// the command tests (cmdtest) build their roots with it.
func AddRootFlags(root *cobra.Command, f *Factory) {
	pf := root.PersistentFlags()
	pf.StringVar(&f.SysfsDir, "sysfs", "", "read sysfs from `DIR` instead of /sys (env IBKEY_SYSFS)")
	pf.BoolVar(&f.Demo, "demo", false, "use the embedded demo host, and the demo fabric its InfiniBand ports are cabled to (env IBKEY_DEMO=1)")
	pf.StringVarP(&f.Output, "output", "o", "", "`FORMAT`: table (default on a terminal), plain, json")
	pf.BoolVar(&f.NoColor, "no-color", false, "no colors (also NO_COLOR)")
	AddRootIbsimFlag(root)
	_ = root.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(OutputFormats, cobra.ShellCompDirectiveNoFileComp))
	_ = root.MarkPersistentFlagDirname("sysfs")
	root.SilenceUsage = true
	root.SilenceErrors = true
	root.SetIn(f.IOStreams.In)
	root.SetOut(f.IOStreams.Out)
	root.SetErr(f.IOStreams.ErrOut)
	root.SetFlagErrorFunc(FlagError)
	root.SetHelpFunc(help)
	root.PersistentPreRunE = func(c *cobra.Command, args []string) error {
		if err := CheckRootIbsim(c); err != nil {
			return err
		}
		if err := f.Decide(); err != nil {
			return err
		}
		if err := checkCobraFlags(c); err != nil {
			return err
		}
		if err := checkFlagValues(c); err != nil {
			return err
		}
		if err := f.checkMADValues(c); err != nil {
			return err
		}
		if err := f.checkMADUse(c); err != nil {
			return err
		}
		if err := f.checkTableTerminal(c); err != nil {
			return err
		}
		// A table is for people: its long lines wrap to the terminal. A command whose
		// table is a full-screen program gets stdout as it is.
		if f.format == FormatTable && c.Annotations[AnnotationTableNeedsTerminal] == "" {
			f.IOStreams.WrapOut()
		}
		return nil
	}
}

// Execute runs root with args under ctx (main's signal context) and returns the exit
// code; an error is printed on stderr as one "ibkey: ..." line unless the command
// already reported it.
func Execute(ctx context.Context, root *cobra.Command, args []string, streams *IOStreams) int {
	code, _ := ExecuteC(ctx, root, args, streams)
	return code
}

// ExecuteC is Execute that also returns the command the line ran, as cobra's
// ExecuteC finds it (root for an unknown command): the command tests (cmdtest) check
// the code is one that command declares (CommandExits).
func ExecuteC(ctx context.Context, root *cobra.Command, args []string, streams *IOStreams) (int, *cobra.Command) {
	RefuseUnknownSubcommands(root)
	root.SetArgs(args)
	c, err := root.ExecuteContextC(ctx)
	streams.Finish()
	return exitCode(ctx, root, args, streams, err), c
}

// exitCode is the exit code of a command line that returned err, with the error
// printed on stderr unless the command already reported it.
func exitCode(ctx context.Context, root *cobra.Command, args []string, streams *IOStreams, err error) int {
	if err == nil {
		return ExitOK
	}
	err = ibsimSpacedError(root, args, err)
	cause := context.Cause(ctx)
	if _, signalled := signalOf(cause); signalled && ExitCode(err) < ExitSignal {
		// A signal ended the command: what it returned (a read cut short, "context
		// canceled", addresses "failed") is the consequence. Name the signal and exit
		// 128+signo, as the screen does, never 3 or 4 as if the fabric had failed.
		switch {
		case Reported(err):
		case errors.Is(err, cause): // the command returned the signal itself
			streams.errLine(fmt.Sprintf("ibkey: stopped by a signal (%s)", cause))
		default:
			streams.errLine(fmt.Sprintf("ibkey: stopped by a signal (%s): %s", cause, textsafe.Error(err)))
		}
		return SignalExitCode(cause)
	}
	code := ExitCode(err)
	if !Reported(err) {
		// textsafe: an error can quote a file's bytes or a user's token; it is
		// sanitised and capped (a 10 MB line is summarised) before a terminal sees it.
		// Bad input, and a device, port or file not found, is one line: a newline in
		// a token (a file named "a\nibkey: ok") is shown as \n, never as a second
		// line that reads as ibkey's own.
		msg := err.Error()
		if code == ExitUsage || code == ExitEnv {
			msg = strings.ReplaceAll(msg, "\n", `\n`)
		}
		streams.errLine("ibkey: " + textsafe.Message(capTokens(msg)))
	}
	return code
}

// maxToken is how much of one word of an error message (a user's token, a path) is
// shown: a quarter of the message's cap (textsafe.MaxMessage), so a token quoted
// twice still leaves room for what is accepted.
const maxToken = textsafe.MaxMessage / 4

// capTokens shortens each word of msg longer than maxToken (textsafe.Cap: its head
// and tail, and the bytes omitted) instead of the whole line: a 10,000-byte token
// does not cut off the "(accepted: ...)" that follows it.
func capTokens(msg string) string {
	if len(msg) <= textsafe.MaxMessage {
		return msg
	}
	words := strings.Split(msg, " ")
	for i, w := range words {
		words[i] = textsafe.Cap(w, maxToken)
	}
	return strings.Join(words, " ")
}

// HelpWidth is the width --help is written for: the 80 columns of most terminals.
const HelpWidth = 80

// usageTemplate is cobra's default usage template with the flag lists wrapped to
// HelpWidth (pflag's FlagUsagesWrapped) instead of one line per flag however long.
func usageTemplate() string {
	return strings.NewReplacer(
		"{{.LocalFlags.FlagUsages ", fmt.Sprintf("{{.LocalFlags.FlagUsagesWrapped %d ", HelpWidth),
		"{{.InheritedFlags.FlagUsages ", fmt.Sprintf("{{.InheritedFlags.FlagUsagesWrapped %d ", HelpWidth),
	).Replace((&cobra.Command{}).UsageTemplate())
}

// LongHelp is c's help text as --help shows it: its long help (or its short one),
// then its exit codes (CommandExits: the ones it declares, or the table of every
// code). It is made when asked for, not when the command tree is built on every run
// (issue 23's start-up budget).
func LongHelp(c *cobra.Command) string {
	text := cmp.Or(c.Long, c.Short)
	rows, _ := CommandExits(c)
	if text == "" {
		return ExitCodesText(rows)
	}
	return strings.TrimRight(text, "\n") + "\n\n" + ExitCodesText(rows)
}

// help is cobra's help with the long text reflowed to HelpWidth (WrapHelp), and the
// usage wrapped too (usageTemplate, set when help is asked for).
func help(c *cobra.Command, _ []string) {
	text := LongHelp(c)
	w := c.OutOrStdout()
	if text != "" {
		fmt.Fprintf(w, "%s\n\n", strings.TrimRight(WrapHelp(text, HelpWidth), " \t\n"))
	}
	if c.Runnable() || c.HasSubCommands() {
		c.Root().SetUsageTemplate(usageTemplate())
		fmt.Fprint(w, c.UsageString())
	}
}
