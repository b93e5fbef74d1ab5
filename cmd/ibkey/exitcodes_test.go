package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
)

// TestExitCodeTable: the exit-code tables of README.md and docs/*.md are the ones
// generated from the code, as --help and the man pages show them: a marker
// "<!-- exit-codes: ... -->" is followed by cmdutil.ExitCodes, one naming a command
// ("<!-- exit-codes: ibkey sm log ...") by that command's (cmdutil.CommandExits);
// -update rewrites them.
func TestExitCodeTable(t *testing.T) {
	docs, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	root := newRootCmd(testFactory())
	total := 0
	for _, name := range append([]string{"../../README.md"}, docs...) {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		text, n, err := fillExitCodes(string(b), root)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		total += n
		if text == string(b) {
			continue
		}
		if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
			if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("%s: an exit-code table is stale: run go test ./cmd/ibkey -run TestExitCodeTable -update", name)
	}
	if total < 4 {
		t.Errorf("only %d exit-code tables in README.md and docs/ (the table, can-talk, fabric, sm log, ...)", total)
	}
}

// fillExitCodes is text with every exit-code table after a marker regenerated, and
// how many there are.
func fillExitCodes(text string, root *cobra.Command) (string, int, error) {
	const open, end = "<!-- exit-codes:", "<!-- /exit-codes -->"
	var b strings.Builder
	n := 0
	for {
		i := strings.Index(text, open)
		if i < 0 {
			b.WriteString(text)
			return b.String(), n, nil
		}
		eol := strings.Index(text[i:], "\n")
		j := strings.Index(text[i:], end)
		if eol < 0 || j < eol {
			return "", n, fmt.Errorf("%s without its %s", open, end)
		}
		rows := cmdutil.ExitCodes
		if path, ok := strings.CutPrefix(text[i+len(open):i+eol], " ibkey "); ok {
			path, _, _ = strings.Cut(path, " (")
			c, rest, err := root.Find(strings.Fields(path))
			if err != nil || len(rest) > 0 {
				return "", n, fmt.Errorf("%s names no command: %q", open, path)
			}
			rows, _ = cmdutil.CommandExits(c)
		}
		b.WriteString(text[:i+eol+1] + exitCodesMarkdown(rows))
		text = text[i+j:]
		n++
	}
}

// TestExitCodesInHelp: `ibkey --help` ends with the same table.
func TestExitCodesInHelp(t *testing.T) {
	r := runIbkey(t, false, nil, "--help")
	if r.code != 0 || !strings.Contains(r.stdout, cmdutil.ExitCodesText(cmdutil.ExitCodes)) {
		t.Errorf("ibkey --help (exit %d) does not show the exit-code table:\n%s", r.code, r.stdout)
	}
	for _, l := range strings.Split(r.stdout, "\n") {
		if len([]rune(l)) > 80 {
			t.Errorf("ibkey --help: a line over 80 columns: %q", l)
		}
	}
}

// TestExporterHelpShowsTheTable: `ibkey exporter --help` shows the one table, not an
// exit-code line of its own beside it.
func TestExporterHelpShowsTheTable(t *testing.T) {
	r := runIbkey(t, false, nil, "exporter", "--help")
	if r.code != 0 || !strings.Contains(r.stdout, cmdutil.ExitCodesText(cmdutil.ExitCodes)) || strings.Count(r.stdout, "Exit codes") != 1 {
		t.Errorf("ibkey exporter --help (exit %d): not the exit-code table alone:\n%s", r.code, r.stdout)
	}
}

// exitCodesMarkdown is an exit-code table as README.md and docs/ show it.
func exitCodesMarkdown(rows []cmdutil.ExitCodeDoc) string {
	var b strings.Builder
	b.WriteString("| code | meaning |\n|---|---|\n")
	for _, e := range rows {
		fmt.Fprintf(&b, "| %s | %s |\n", e.Code, e.Meaning)
	}
	return b.String()
}

// exitCodesTroff is an exit-code table (cmdutil.CommandExits) as a man page's EXIT
// STATUS section: a .TP list, one code a paragraph, as man-pages(7) shows one.
func exitCodesTroff(rows []cmdutil.ExitCodeDoc) string {
	var b strings.Builder
	for _, e := range rows {
		m := strings.ToUpper(e.Meaning[:1]) + e.Meaning[1:] + "."
		fmt.Fprintf(&b, ".TP\n\\fB%s\\fP\n%s\n", e.Code, strings.ReplaceAll(m, "-", "\\-"))
	}
	return b.String()
}

// TestHelpFits80Columns: every command's --help fits 80 columns (long help is
// reflowed at spaces, flags wrapped); no word is cut.
func TestHelpFits80Columns(t *testing.T) {
	root := newRootCmd(testFactory())
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if !c.Hidden {
			args := append(strings.Fields(c.CommandPath())[1:], "--help")
			r := runIbkey(t, false, nil, args...)
			for _, l := range strings.Split(r.stdout, "\n") {
				if utf8.RuneCountInString(l) > cmdutil.HelpWidth {
					t.Errorf("%s --help: a line over %d columns: %q", c.CommandPath(), cmdutil.HelpWidth, l)
				}
			}
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
}

func testFactory() *cmdutil.Factory {
	return cmdutil.NewFactory(&cmdutil.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}, func(string) string { return "" }, nil)
}

// TestGroupAloneIsUsage: every command that only groups subcommands (`ibkey fabric`,
// `ibkey sm`, ...) given alone is a usage mistake, exit 2, in one line naming its
// subcommands; only the root alone shows its help.
func TestGroupAloneIsUsage(t *testing.T) {
	f := cmdutil.NewFactory(&cmdutil.IOStreams{}, func(string) string { return "" }, nil)
	var groups [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		if c.HasSubCommands() && len(path) > 0 {
			groups = append(groups, path)
		}
		for _, sub := range c.Commands() {
			if !sub.Hidden && sub.Name() != "help" && sub.Name() != "completion" {
				walk(sub, append(append([]string(nil), path...), sub.Name()))
			}
		}
	}
	walk(newRootCmd(f), nil)
	if len(groups) < 4 {
		t.Fatalf("found %d command groups, want fabric, partitions, decode, sm, ...: %v", len(groups), groups)
	}
	for _, g := range groups {
		r := runIbkey(t, false, nil, g...)
		name := strings.Join(g, " ")
		if r.code != 2 || !strings.Contains(r.stderr, name+" needs a subcommand") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("ibkey %s: exit %d, stderr %q; want exit 2 and one line '%s needs a subcommand'", name, r.code, r.stderr, name)
		}
	}
}

// TestCommandExitCodes: each command's exit codes are said one way. A command that
// declares its own (cmdutil.SetExits) declares only codes of the one table
// (cmdutil.ExitCodes), bad input among them (any command can be given an unknown
// flag), and its --help ends with them instead of the table; a command that declares
// none shows the table. That every code a command test observes is declared is
// checked where the tests run commands (cmdtest; TestUndeclaredExitFails).
func TestCommandExitCodes(t *testing.T) {
	table := map[string]bool{}
	for _, e := range cmdutil.ExitCodes {
		table[e.Code] = true
	}
	var own []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, s := range c.Commands() {
			walk(s)
		}
		if c.Hidden {
			return
		}
		rows, declared := cmdutil.CommandExits(c)
		args := append(strings.Fields(c.CommandPath())[1:], "--help")
		r := runIbkey(t, false, nil, args...)
		if strings.Count(r.stdout, "Exit codes") != 1 {
			t.Errorf("%s --help: %d exit-code lists, want one", c.CommandPath(), strings.Count(r.stdout, "Exit codes"))
		}
		if !declared {
			if !strings.Contains(r.stdout, cmdutil.ExitCodesText(cmdutil.ExitCodes)) {
				t.Errorf("%s declares no exit codes, but its --help does not show the table:\n%s", c.CommandPath(), r.stdout)
			}
			return
		}
		own = append(own, c.CommandPath())
		seen := map[string]bool{}
		for _, e := range rows {
			if !table[e.Code] {
				t.Errorf("%s declares exit code %s, not in cmdutil.ExitCodes", c.CommandPath(), e.Code)
			}
			if seen[e.Code] {
				t.Errorf("%s declares exit code %s twice", c.CommandPath(), e.Code)
			}
			seen[e.Code] = true
			if e.Meaning == "" {
				t.Errorf("%s declares exit code %s without its meaning", c.CommandPath(), e.Code)
			}
		}
		if !strings.Contains(r.stdout, cmdutil.ExitCodesText(rows)) {
			t.Errorf("%s --help does not end with its exit codes:\n%s", c.CommandPath(), r.stdout)
		}
		if !seen[fmt.Sprint(cmdutil.ExitUsage)] {
			t.Errorf("%s does not declare exit code %d (bad input), which any command can return", c.CommandPath(), cmdutil.ExitUsage)
		}
		if strings.Contains(r.stdout, cmdutil.ExitCodesText(cmdutil.ExitCodes)) {
			t.Errorf("%s declares its exit codes but its --help shows the table too", c.CommandPath())
		}
	}
	walk(newRootCmd(testFactory()))
	if len(own) < 10 {
		t.Errorf("only %d commands declare their exit codes: %v", len(own), own)
	}
}

// recordingTB is a testing.TB whose Errorf is recorded instead of failing the test.
type recordingTB struct {
	testing.TB
	errors []string
}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

// TestUndeclaredExitFails: cmdtest fails a command line whose exit code its command
// does not declare (a command that can exit 4 but does not say so), and takes any
// code of the table from a command that declares none; --help is no exit of its own.
func TestUndeclaredExitFails(t *testing.T) {
	cmd := func(declare bool) cmdtest.Root {
		return cmdtest.WithCommands(func(*cmdutil.Factory) *cobra.Command {
			c := &cobra.Command{Use: "probe", RunE: func(*cobra.Command, []string) error { return cmdutil.Exit(cmdutil.ExitIncomplete) }}
			if declare {
				cmdutil.SetExits(c, cmdutil.ExitMeaning{Code: cmdutil.ExitNo, Meaning: "no"}, cmdutil.ExitMeaning{Code: cmdutil.ExitUsage, Meaning: "bad input"})
			}
			return c
		})
	}
	for _, tc := range []struct {
		declare bool
		args    []string
		fails   bool
	}{
		{true, []string{"probe"}, true},
		{true, []string{"probe", "--nope"}, false},
		{true, []string{"probe", "--help"}, false},
		{false, []string{"probe"}, false},
	} {
		rec := &recordingTB{TB: t}
		r := cmdtest.Run(rec, cmd(tc.declare), false, nil, tc.args...)
		if (len(rec.errors) > 0) != tc.fails {
			t.Errorf("declared %v, ibkey %s (exit %d): cmdtest errors %q, want failing %v", tc.declare, strings.Join(tc.args, " "), r.Code, rec.errors, tc.fails)
		}
	}
}
