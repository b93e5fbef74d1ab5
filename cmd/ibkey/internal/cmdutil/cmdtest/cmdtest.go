// Package cmdtest runs ibkey commands in-process for tests: one runner for a command
// line, one golden-file runner and one error-case runner, shared by every command's
// tests. Only tests import it.
package cmdtest

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"
	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/jsonschematest"
)

// Root builds the command tree under test from the factory of one command line.
type Root func(f *cmdutil.Factory) *cobra.Command

// WithCommands is a root named ibkey with the shared flags (cmdutil.AddRootFlags) and
// the given commands: a command's package tests it as a user types it.
func WithCommands(cmds ...func(f *cmdutil.Factory) *cobra.Command) Root {
	return func(f *cmdutil.Factory) *cobra.Command {
		root := &cobra.Command{Use: "ibkey"}
		cmdutil.AddRootFlags(root, f)
		for _, c := range cmds {
			root.AddCommand(c(f))
		}
		return root
	}
}

// Result is what a command line printed and its exit code.
type Result struct {
	Stdout, Stderr string
	Code           int
}

// Run runs one command line in-process with fake streams; tty makes stdout a terminal
// (table output by default), env is the whole environment. What a command line asking
// for JSON prints is validated against its schema (jsonschematest.Stdout) and the rule
// of "incomplete" for a read that has everything the answer asks about
// (jsonschematest.Complete; RunPartial for one that does not).
func Run(t testing.TB, root Root, tty bool, env map[string]string, args ...string) Result {
	t.Helper()
	return run(t, root, tty, env, jsonschematest.Complete, args)
}

// RunPartial is Run for a case whose input leaves something the answer asks about
// unread (jsonschematest.Partial): it must not exit 0, and its JSON says what was not
// read on exit 1 as on exit 4.
func RunPartial(t testing.TB, root Root, tty bool, env map[string]string, args ...string) Result {
	t.Helper()
	return run(t, root, tty, env, jsonschematest.Partial, args)
}

func run(t testing.TB, root Root, tty bool, env map[string]string, read jsonschematest.Read, args []string) Result {
	t.Helper()
	var out, errOut bytes.Buffer
	streams := &cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, OutTTY: tty}
	f := cmdutil.NewFactory(streams, func(k string) string { return env[k] }, time.Now)
	code, c := cmdutil.ExecuteC(context.Background(), root(f), args, streams)
	declared(t, c, code)
	// Every JSON output of every command's tests follows its committed schema.
	jsonschematest.Stdout(t, args, out.String())
	jsonschematest.Incomplete(t, args, out.String(), code, read)
	return Result{out.String(), errOut.String(), code}
}

// declared fails t when c exited with a code its help does not list
// (cmdutil.CommandExits: the codes c declares, or the table of every code): what
// every command test observes is what --help and the man page say it can return.
// --help exits 0 for every command, and says nothing of the command's own exit.
func declared(t testing.TB, c *cobra.Command, code int) {
	t.Helper()
	if c == nil || c.Name() == "help" {
		return
	}
	if h, _ := c.Flags().GetBool("help"); h {
		return
	}
	rows, _ := cmdutil.CommandExits(c)
	name := cmdutil.ExitCodeName(code)
	if !slices.ContainsFunc(rows, func(r cmdutil.ExitCodeDoc) bool { return r.Code == name }) {
		t.Errorf("%s exited %d, a code its --help does not list (cmdutil.SetExits)", c.CommandPath(), code)
	}
}

// GoldenCase is a command line, its exit code and, in testdata/TEST/NAME.golden, its
// output. Partial: its input leaves something the answer asks about unread (RunPartial).
type GoldenCase struct {
	Name    string
	Args    []string
	Code    int
	Partial bool
}

// Golden runs each case as a subtest (stdout not a terminal, empty environment) and
// compares "$ ibkey ARGS", stdout and stderr with its golden file (`go test -update`
// rewrites them: the flag of the golden package). check, when not nil, adds the
// test's own assertions.
func Golden(t *testing.T, root Root, cases []GoldenCase, check func(t *testing.T, c GoldenCase, r Result)) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			read := jsonschematest.Complete
			if tc.Partial {
				read = jsonschematest.Partial
			}
			r := run(t, root, false, nil, read, tc.Args)
			if r.Code != tc.Code {
				t.Fatalf("exit %d, want %d; stdout:\n%s\nstderr:\n%s", r.Code, tc.Code, r.Stdout, r.Stderr)
			}
			if check != nil {
				check(t, tc, r)
			}
			golden.RequireEqual(t, "$ ibkey "+strings.Join(tc.Args, " ")+"\n"+r.Stdout+"--- stderr\n"+r.Stderr)
		})
	}
}

// ErrorCase is a command line that fails: its exit code and a part of its stderr.
type ErrorCase struct {
	Args   []string
	Code   int
	Stderr string
}

// Errors runs each case and checks what every error must be: the exit code, Stderr
// on stderr, the error on one line (notes and warnings before it aside), and nothing
// on stdout.
func Errors(t *testing.T, root Root, cases []ErrorCase) {
	t.Helper()
	for _, tc := range cases {
		r := Run(t, root, false, nil, tc.Args...)
		line := "ibkey " + strings.Join(tc.Args, " ")
		if r.Code != tc.Code || !strings.Contains(r.Stderr, tc.Stderr) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d and %q", line, r.Code, r.Stderr, tc.Code, tc.Stderr)
		}
		if r.Stdout != "" {
			t.Errorf("%s: stdout %q on error", line, r.Stdout)
		}
		if n := len(errorLines(r.Stderr)); n > 1 {
			t.Errorf("%s: error spans %d lines: %q", line, n, r.Stderr)
		}
	}
}

// errorLines are the lines of stderr that are not notes or warnings.
func errorLines(stderr string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if l != "" && !strings.HasPrefix(l, "note: ") && !strings.HasPrefix(l, "warning: ") {
			out = append(out, l)
		}
	}
	return out
}

// Options runs one command line (stdout not a terminal, empty environment) on a root
// with the command newCmd builds, its runF hook recording the options instead of
// running: what flag parsing made of the line. The options are nil when the command did
// not get as far as running.
func Options[O any](t testing.TB, newCmd func(*cmdutil.Factory, func(*O) error) *cobra.Command, args ...string) (Result, *O) {
	t.Helper()
	var got *O
	root := WithCommands(func(f *cmdutil.Factory) *cobra.Command {
		return newCmd(f, func(o *O) error { got = o; return nil })
	})
	return Run(t, root, false, nil, args...), got
}
