package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	stdslices "slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
	"github.com/ibkey/ibkey/internal/textsafe"
)

// TestBadInput walks the whole command tree and feeds every flag's value and every
// positional argument generated bad values (empty, blank, '-', negative and
// overflowing numbers, bad hex, control bytes, terminal escapes, invalid UTF-8, a
// bidi override, a 10k-byte token, a reversed range, a directory, a missing file,
// /dev/null, a file of garbage bytes), each on a command line that works without
// them. The rules (BRIEF: "Bad input never panics: one line naming the bad token and
// what is accepted, exit 2. Missing devices and ports: exit 3 with what exists"):
// no panic, an exit code from the one table (cmdutil.ExitCodes), exit 2 as exactly
// one "ibkey: " line that shows the token and what is accepted, nothing raw from the
// token that a terminal would act on. A flag added later is covered without editing
// this test; a command added later fails here until badInputBases has a line for it.
// -short runs a sample of the values for each flag.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage")
	if err := os.WriteFile(garbage, []byte("\x00\xff\xfe\x1b[2J\x1b]0;title\a\u202e\x01lid=\x7f\n\n0x\xc3(\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	all := badValues(dir, garbage)
	cases := 0
	// values are the values of the next case: all of them, or under -short a
	// different quarter for each case (every value still goes to many commands).
	values := func() []badValue {
		cases++
		if !testing.Short() {
			return all
		}
		var out []badValue
		for i, v := range all {
			if (i+cases)%4 == 0 {
				out = append(out, v)
			}
		}
		return out
	}
	root := newRootCmd(cmdutil.NewFactory(&cmdutil.IOStreams{}, func(string) string { return "" }, nil))
	rootFlags := root.PersistentFlags()
	for _, c := range leafCommands(root) {
		path := commandName(c)
		bases, ok := badInputBases[path]
		if !ok {
			t.Errorf("ibkey %s: no command line in badInputBases to feed bad input to", path)
			continue
		}
		checkBasesCoverUse(t, c, bases)
		// Every flag: the command's own after each base line, the root's persistent
		// ones (read before any command runs) after the first.
		var flags []*pflag.Flag
		c.LocalFlags().VisitAll(func(fl *pflag.Flag) { flags = append(flags, fl) })
		own := len(flags)
		rootFlags.VisitAll(func(fl *pflag.Flag) {
			if c.LocalFlags().Lookup(fl.Name) == nil {
				flags = append(flags, fl)
			}
		})
		for b, base := range bases {
			for i, fl := range flags {
				if b > 0 && i >= own {
					break
				}
				args := stdslices.Clone(base.args)
				if fl.Name == "sysfs" || fl.Name == "demo" {
					args = stdslices.DeleteFunc(args, func(a string) bool { return a == "--demo" })
				}
				n := len(args)
				args = append(args, "")
				checkBadInput(t, fmt.Sprintf("%s/%d/--%s", path, b, fl.Name), "--"+fl.Name, base.streams, values(), func(v string) []string {
					args[n] = "--" + fl.Name + "=" + v
					return stdslices.Clone(args)
				})
			}
			// Every positional argument; in KEY=VALUE,... and DEV/PORT arguments each
			// part too.
			for k := base.firstArg; k < len(base.args); k++ {
				for i, variant := range argVariants(base.args[k]) {
					checkBadInput(t, fmt.Sprintf("%s/%d/arg%d.%d", path, b, k-base.firstArg, i), "", base.streams, values(), func(v string) []string {
						args := stdslices.Clone(base.args)
						args[k] = variant(v)
						return args
					})
				}
			}
		}
	}
}

// badInput is a command line that works: bad values go in its positional arguments
// (args[firstArg:]) and after it as flags.
type badInput struct {
	args     []string
	firstArg int
	// streams: the command runs until a count or a signal (watch): the test stops it
	// after streamLimit as a user's Ctrl-C would, and its exit 130 is no failure (a
	// large count is no bad input).
	streams bool
}

// base is a command line whose positional arguments start after the words of path.
func base(prefix []string, path string, args ...string) badInput {
	words := append(stdslices.Clone(prefix), strings.Fields(path)...)
	return badInput{args: append(words, args...), firstArg: len(words)}
}

// streaming marks b as a command that runs until a count or a signal.
func streaming(b badInput) badInput { b.streams = true; return b }

// badInputBases are a working command line for each command (by its path below
// the root), on the demo host and fabric or on the repo's fixtures. Each gets the
// command's own flags, the first also the root's; together they give every
// positional argument of the command's usage, and put each flag where it is used
// (pkeys --port after --lid, can-talk --sm-log after --sa).
var badInputBases = func() map[string][]badInput {
	demo := []string{"--demo"}
	mlx5Host := []string{"--sysfs", "../../testdata/sysfs/mlx5"}
	const conf = "../../testdata/partitions/cluster.conf"
	const fab = "testdata/fabric/"
	return map[string][]badInput{
		"can-talk": {base(demo, "can-talk", "node=storage01", "lid=4,pkey=0x8001"),
			base(demo, "can-talk", "node=storage01,pkey=0x8001", "lid=4,pkey=0x8001", "--sa"),
			base(mlx5Host, "can-talk", "mlx5_0/1", "mlx5_1/2", "--partitions="+fab+"partitions.conf")},
		"completion bash":       {base(nil, "completion bash")},
		"completion fish":       {base(nil, "completion fish")},
		"completion powershell": {base(nil, "completion powershell")},
		"completion zsh":        {base(nil, "completion zsh")},
		"decode pkey":           {base(nil, "decode pkey", "0x8001")},
		"decode qkey":           {base(nil, "decode qkey", "0x80010000")},
		"devices":               {base(demo, "devices"), base(mlx5Host, "devices")},
		"exporter":              {base(demo, "exporter", "--once"), base(demo, "exporter", "--once", "--sweep")},
		"fabric check":          {base(demo, "fabric check")},
		"fabric diff":           {base(demo, "fabric diff", fab+"small.json", fab+"small-changed.json")},
		"fabric discover":       {base(demo, "fabric discover")},
		"fabric pkeys":          {base(demo, "fabric pkeys")},
		"job":                   {base(demo, "job", "NCCL_IB_PKEY=0x8001"), base(demo, "job", "--want=0x8001"), base(demo, "job", "--lid=3"), base(mlx5Host, "job", "UCX_IB_PKEY=0x8001")},
		"partitions check":      {base(nil, "partitions check", conf)},
		"partitions matrix":     {base(nil, "partitions matrix", conf)},
		"partitions show":       {base(nil, "partitions show", conf, "0x0002c90300000204")},
		"pkeys":                 {base(demo, "pkeys"), base(demo, "pkeys", "--lid=3"), base(demo, "pkeys", "mlx5_0", "1"), base(mlx5Host, "pkeys", "mlx5_1", "2")},
		"sm log":                {base(nil, "sm log", "../../internal/smlog/testdata/lab.log")},
		"watch counters":        {streaming(base(demo, "watch counters", "--once")), streaming(base(demo, "watch counters", "--once", "mlx5_0/1"))},
		"watch pkeys":           {streaming(base(demo, "watch pkeys", "--count=1", "--interval=10ms", "mlx5_0/1"))},
	}
}()

// leafCommands are the commands of the tree that run.
func leafCommands(root *cobra.Command) []*cobra.Command {
	root.InitDefaultCompletionCmd()
	var out []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Runnable() && c.HasParent() && !c.Hidden {
			out = append(out, c)
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	return out
}

// checkBasesCoverUse: the base lines give each argument c's usage names (pkeys
// [DEV [PORT]]: two) at least once, so every positional gets bad values.
func checkBasesCoverUse(t *testing.T, c *cobra.Command, bases []badInput) {
	t.Helper()
	want := len(strings.Fields(c.Use)) - 1
	most := 0
	for _, b := range bases {
		most = max(most, len(stdslices.DeleteFunc(stdslices.Clone(b.args[b.firstArg:]), func(a string) bool { return strings.HasPrefix(a, "-") })))
	}
	if most < want {
		t.Errorf("ibkey %s: usage %q names %d arguments, the base lines give at most %d", commandName(c), c.Use, want, most)
	}
}

// argVariants are the ways to put a bad value v into arg: as the whole argument, as
// the value of each KEY=VALUE of a comma list, as either side of DEV/PORT.
func argVariants(arg string) []func(v string) string {
	if strings.HasPrefix(arg, "-") {
		return nil // a flag of the base line: the flags get their own cases
	}
	out := []func(string) string{func(v string) string { return v }}
	if strings.HasPrefix(arg, ".") || strings.HasPrefix(arg, "testdata") {
		return out // a file
	}
	parts := strings.Split(arg, ",")
	for i, p := range parts {
		if k, _, ok := strings.Cut(p, "="); ok {
			out = append(out, func(v string) string {
				q := stdslices.Clone(parts)
				q[i] = k + "=" + v
				return strings.Join(q, ",")
			})
		}
	}
	if d, p, ok := strings.Cut(arg, "/"); ok {
		out = append(out, func(v string) string { return d + "/" + v }, func(v string) string { return v + "/" + p })
	}
	return out
}

// badValue is one generated bad value.
type badValue struct{ name, value string }

func badValues(dir, garbage string) []badValue {
	return []badValue{
		{"empty", ""},
		{"blank", " \t"},
		{"dash", "-"},
		{"negative", "-1"},
		{"0x10000", "0x10000"},
		{"2^64", "18446744073709551616"},
		{"0x", "0x"},
		{"badhex", "0xfg12"},
		{"nul", "1\x00"},
		{"control", "a\x01\x7fb"},
		{"newline", "3\nibkey: fake"},
		{"escape", "\x1b[31mred\x1b]0;title\a"},
		{"utf8", "\xff\xfe"},
		{"bidi", "\u202egnp.exe"},
		{"10k", "long" + strings.Repeat("9", 10000)},
		{"reversed", "9-1"},
		{"dir", dir},
		{"missing", filepath.Join(dir, "missing.conf")},
		{"devnull", "/dev/null"},
		{"garbage", garbage},
	}
}

// badInputTimeout bounds one command line: a bad value must not make a command
// wait; streamLimit is how long a streaming command runs before its Ctrl-C.
const (
	badInputTimeout = 10 * time.Second
	streamLimit     = time.Second
)

// syncBuffer is a bytes.Buffer a command may write to from its goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// badRun is one command line's outcome.
type badRun struct {
	line           string
	token          string
	stdout, stderr string
	code           int
}

// checkBadInput runs, in one parallel subtest, the command line makeArgs makes for
// each value and checks the rules. flag is the flag the values are given to ("" for
// a positional argument): an exit-2 message that is the same whatever the value (a
// flag the line does not take) names the flag instead of the value.
func checkBadInput(t *testing.T, name, flag string, streams bool, values []badValue, makeArgs func(v string) []string) {
	t.Run(name, func(t *testing.T) {
		t.Parallel()
		var runs []badRun
		usage := map[string]int{} // exit-2 messages, how many values gave each
		for _, v := range values {
			r := runBad(t, streams, makeArgs(v.value))
			r.token = v.value
			runs = append(runs, r)
			if r.code == cmdutil.ExitUsage {
				usage[r.stderr]++
			}
		}
		for _, r := range runs {
			checkRun(t, r, flag, usage[r.stderr] > 1)
		}
	})
}

// runBad runs one command line in-process, failing the test on a panic or a hang.
func runBad(t *testing.T, streaming bool, args []string) badRun {
	t.Helper()
	r := badRun{line: "ibkey " + strconv.Quote(strings.Join(args, " ")), code: -1}
	if len(r.line) > 200 {
		r.line = r.line[:200] + "…"
	}
	var out, errOut syncBuffer
	streams := &cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	f := cmdutil.NewFactory(streams, func(string) string { return "" }, time.Now)
	limit := badInputTimeout
	if streaming {
		limit = streamLimit
	}
	// Cancelled as SIGINT cancels main's context (os/signal's cause text), so a
	// command stopped here exits as one a user stopped.
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	stop := time.AfterFunc(limit, func() { cancel(errors.New("interrupt signal received")) })
	defer stop.Stop()
	panicked := ""
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if p := recover(); p != nil {
				panicked = fmt.Sprintf("%v\n%s", p, debug.Stack())
			}
		}()
		r.code = cmdutil.Execute(ctx, newRootCmd(f), args, streams)
	}()
	select {
	case <-done:
	case <-time.After(badInputTimeout + 5*time.Second):
		t.Fatalf("%s: still running after %s", r.line, badInputTimeout+5*time.Second)
	}
	r.stdout, r.stderr = out.String(), errOut.String()
	if panicked != "" || strings.Contains(r.stderr, "panic:") || strings.Contains(r.stderr, "goroutine ") {
		t.Fatalf("%s: panic: %s\nstderr: %s", r.line, panicked, r.stderr)
	}
	if ctx.Err() != nil && !streaming {
		t.Errorf("%s: ran into the test's %s limit: exit %d", r.line, limit, r.code)
	}
	return r
}

// checkRun checks one outcome: an exit code from the table, nothing raw a terminal
// acts on, exit 2 as one line naming the token (or, for a message that does not
// depend on the value, the flag) and what is accepted, exit 3 as an ibkey: line.
func checkRun(t *testing.T, r badRun, flag string, sameForOthers bool) {
	t.Helper()
	if !inExitTable(r.code) {
		t.Errorf("%s: exit %d is not in the exit-code table\nstderr: %q", r.line, r.code, r.stderr)
	}
	for _, s := range []string{r.stderr, r.stdout} {
		if i := strings.IndexFunc(s, rawControl); i >= 0 {
			t.Errorf("%s: a raw control character %q reaches the output: %q", r.line, s[i:i+min(len(s)-i, 4)], s[max(0, i-60):min(len(s), i+20)])
		}
	}
	for _, s := range []string{r.stderr, r.stdout} {
		if strings.Contains("\n"+s, "\nibkey: fake") {
			t.Errorf("%s: a newline in the token starts a line of its own: %q", r.line, s[:min(len(s), 400)])
		}
	}
	switch r.code {
	case cmdutil.ExitUsage:
		if r.stdout != "" {
			t.Errorf("%s: exit 2 with output on stdout: %q", r.line, r.stdout[:min(len(r.stdout), 200)])
		}
		msg, ok := strings.CutSuffix(r.stderr, "\n")
		if !ok || strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "ibkey: ") {
			t.Errorf("%s: exit 2 is not one \"ibkey: \" line: %q", r.line, r.stderr)
			return
		}
		named := showsToken(msg, r.token)
		// A message about the flag rather than its value (the same for other values,
		// or quoting no value and opening nothing: "--once ... cannot be combined with
		// --count") names the flag.
		if !named && flag != "" && (sameForOthers || !strings.ContainsAny(msg, `"'`) && !strings.Contains(msg, "open ")) {
			named = strings.Contains(msg, flag) || strings.Contains(msg, strings.TrimLeft(flag, "-")+"]")
		}
		if !named {
			t.Errorf("%s: exit 2 does not name the bad token %q: %q", r.line, r.token[:min(len(r.token), 40)], msg)
		}
		if !saysAccepted(msg) {
			t.Errorf("%s: exit 2 does not say what is accepted: %q", r.line, msg)
		}
	case cmdutil.ExitEnv:
		lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
		if last := lines[len(lines)-1]; !strings.HasPrefix(last, "ibkey: ") {
			t.Errorf("%s: exit 3 does not end in an ibkey: line: %q", r.line, r.stderr)
		} else if deviceOrPort.MatchString(last) && !listsWhatExists(last) {
			t.Errorf("%s: exit 3 neither lists what exists nor says what to do: %q", r.line, last)
		}
	}
}

// inExitTable says whether code is one of cmdutil.ExitCodes ("128+N": above 128).
func inExitTable(code int) bool {
	for _, e := range cmdutil.ExitCodes {
		if e.Code == strconv.Itoa(code) {
			return true
		}
		if b, ok := strings.CutSuffix(e.Code, "+N"); ok && b == strconv.Itoa(cmdutil.ExitSignal) && code > cmdutil.ExitSignal && code < 2*cmdutil.ExitSignal {
			return true
		}
	}
	return false
}

// rawControl says whether r is a character a terminal acts on (C0 and C1 controls
// but newline and tab, and the bidi overrides and isolates).
func rawControl(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
		return true
	}
	return unicode.Is(unicode.Bidi_Control, r)
}

// showsToken says whether msg shows token as a person can recognise it: itself,
// escaped (textsafe, Go quoting), the number it was read as, its first line, or for
// a long one its start; a blank token quoted or called empty.
func showsToken(msg, token string) bool {
	token, _, _ = strings.Cut(token, "\n")
	forms := []string{token, textsafe.String(token), textsafe.Text(token), strconv.Quote(token), strconv.QuoteToASCII(token)}
	if n, err := strconv.ParseInt(token, 0, 64); err == nil {
		forms = append(forms, strconv.FormatInt(n, 10))
	}
	for _, s := range forms {
		if s = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(s, `"`), `"`)); s == "" {
			continue
		}
		if strings.Contains(msg, s[:min(len(s), 64)]) {
			return true
		}
	}
	return strings.Contains(msg, strconv.Quote(token)) || strings.Contains(msg, "'"+token+"'") || strings.Contains(msg, "empty")
}

// saysAccepted says whether msg says what would be accepted: in words, or for an
// unknown flag or command by pointing to --help, or for a file by the reason it
// cannot be read (the system's, "no such file or directory").
func saysAccepted(msg string) bool {
	for _, w := range []string{"accept", "expect", "must", "need", "use ", "give ", "usage: ", "one of", "apply to", "takes ", "is not a", "only ", "at most", "between", "range",
		"longer than", ": not ", "not a regular file", "no such file or directory", "file name too long", "permission denied", "invalid argument"} {
		if strings.Contains(msg, w) {
			return true
		}
	}
	// A message capped around a 10k token may have lost the words in its middle.
	return strings.Contains(msg, "unknown") && strings.Contains(msg, "--help'") || strings.Contains(msg, " bytes omitted] … ")
}

// deviceOrPort matches a message about a device, port or node (the rule's "missing
// devices and ports"), which lists what exists.
var deviceOrPort = regexp.MustCompile(`\b(device|port|node|interface|CA)s?\b`)

// listsWhatExists says whether an exit-3 message lists what exists ("(devices:
// mlx5_0, mlx5_1)", "(nodes: ...)") or, where nothing can be listed (no sysfs, no
// simulator), says what to do.
func listsWhatExists(msg string) bool {
	if i := strings.Index(msg, "("); i >= 0 && strings.Contains(msg[i:], ": ") {
		return true
	}
	for _, w := range []string{"give ", "use ", "try ", "pass ", "point ", "is ibsim running", "loaded?"} {
		if strings.Contains(msg, w) {
			return true
		}
	}
	return false
}

// commandName is c's path below the root ("watch counters").
func commandName(c *cobra.Command) string {
	_, rest, _ := strings.Cut(c.CommandPath(), " ")
	return rest
}

// TestBadInputFound: command lines TestBadInput's generator found breaking the rules,
// each with what its fix prints (cmdtest.Errors: the exit code, the text, one error
// line, nothing on stdout).
func TestBadInputFound(t *testing.T) {
	cmdtest.Errors(t, newRootCmd, []cmdtest.ErrorCase{
		// A newline in a token is shown as \n: never a second line reading as ibkey's.
		{Args: []string{"partitions", "check", "3\nibkey: fake"}, Code: 2, Stderr: `ibkey: partitions file: open 3\nibkey: fake: no such file or directory`},
		{Args: []string{"--demo", "pkeys", "--lid=3", "--ca=3\nibkey: fake"}, Code: 3, Stderr: `ibkey: the demo host's 3\nibkey: fake is not cabled`},
		// An empty file name is shown quoted.
		{Args: []string{"partitions", "check", ""}, Code: 2, Stderr: `ibkey: partitions file: open "": no such file or directory`},
		{Args: []string{"partitions", "show", "../../testdata/partitions/cluster.conf", "--previous="}, Code: 2, Stderr: "ibkey: --previous needs a value (given empty)"},
		// A port number out of a byte's range is bad input, not a missing port (exit 3).
		{Args: []string{"--demo", "pkeys", "--lid=3", "--ca=mlx5_0", "--ca-port=-1"}, Code: 2, Stderr: "ibkey: invalid --ca-port -1 (accepted: a port number 1-255 of --ca; 0 or unset for port 1)"},
		// The address flag given is named.
		{Args: []string{"--demo", "pkeys", "mlx5_0", "1", "--guid=0x1"}, Code: 2, Stderr: `ibkey: unexpected "mlx5_0 1" with --guid: a port is given either as DEV PORT`},
		// A missing --sm-log is refused before the endpoints are resolved and named.
		{Args: []string{"--demo", "can-talk", "node=storage01,pkey=0x8001", "lid=4,pkey=0x8001", "--sa", "--sm-log=/nonexistent/opensm.log"}, Code: 2, Stderr: "ibkey: --sm-log: open /nonexistent/opensm.log: no such file or directory"},
		{Args: []string{"--demo", "exporter", "--once", "--sweep", "--partitions=-"}, Code: 2, Stderr: "ibkey: partitions file: - (standard input) cannot be read here: give the file's path"},
		// A simulator socket name too long to bind is bad input, not a failed bind (exit 3).
		{Args: []string{"--demo", "pkeys", "--lid=3", "--ibsim=" + strings.Repeat("s", 93)}, Code: 2, Stderr: "93 bytes, longer than the 92 an ibsim socket name holds"},
		// A bad MAD flag value is refused also where this run sends no MAD.
		{Args: []string{"--demo", "devices", "--mad-retries=-1"}, Code: 2, Stderr: "ibkey: invalid --mad-retries -1 (accepted: 0-100)"},
		{Args: []string{"--demo", "exporter", "--once", "--ca-port=300"}, Code: 2, Stderr: "ibkey: invalid --ca-port 300"},
		{Args: []string{"--demo", "can-talk", "node=storage01", "node=node02", "--router=0xfg12"}, Code: 2, Stderr: `ibkey: invalid GUID "0xfg12": "g" is not a hex digit`},
		// A value of a flag's plain type says what the type accepts.
		{Args: []string{"--demo", "pkeys", "--ca-port=x"}, Code: 2, Stderr: `strconv.ParseInt: parsing "x": invalid syntax (accepted: a whole number) (see 'ibkey pkeys --help')`},
		{Args: []string{"--demo", "pkeys", "--lid=3", "--mad-timeout=x"}, Code: 2, Stderr: "(accepted: a duration such as 500ms, 5s or 1m30s, or a plain number of milliseconds)"},
		// 0 is refused as the diags' -t 0 is (smpquery: Invalid timeout "0"), named as
		// typed (was "0s"), also where this run sends no MAD.
		{Args: []string{"--demo", "pkeys", "--lid=3", "--mad-timeout=0"}, Code: 2, Stderr: "ibkey: invalid --mad-timeout 0 (accepted: a positive duration"},
		{Args: []string{"--demo", "devices", "-t", "0ms"}, Code: 2, Stderr: "ibkey: invalid --mad-timeout 0ms (accepted: "},
		{Args: []string{"--demo", "watch", "counters", "--once", "--mad-timeout=-5ms"}, Code: 2, Stderr: "ibkey: invalid --mad-timeout -5ms (accepted: "},
		// --timeout likewise: the token as typed (was "0s").
		{Args: []string{"--demo", "fabric", "check", "--timeout=0"}, Code: 2, Stderr: "ibkey: invalid --timeout 0 (accepted: a positive duration, e.g. 30s)"},
		{Args: []string{"--demo", "devices", "--no-color=x"}, Code: 2, Stderr: "(accepted: true or false; the flag alone is true)"},
		// A --node of blanks and commas names no host: bad input, not "no port found" (exit 3).
		{Args: []string{"--demo", "job", "--node= ,"}, Code: 2, Stderr: `ibkey: --node " ," names no host (accepted: names separated by commas`},
		// A line break in a list flag's value is refused (pflag's encoding/csv reads
		// one record and would drop what follows it), the token shown escaped.
		{Args: []string{"fabric", "check", "--ignore", "enforcement-off\nnot-read"}, Code: 2, Stderr: `ibkey: invalid argument "enforcement-off\nnot-read" for "--ignore" flag: a line break in a list: give the values on one line, separated by commas`},
		{Args: []string{"--demo", "sm", "log", "--kind", "bad-pkey\r\nbad-qkey"}, Code: 2, Stderr: `ibkey: invalid argument "bad-pkey\r\nbad-qkey" for "--kind" flag: a line break in a list`},
		// A 10k-byte token is capped inside the message: the line still ends with
		// what is accepted.
		{Args: []string{"fabric", "check", "--ignore", strings.Repeat("x", 10000)}, Code: 2, Stderr: `x" (accepted: hca-key-not-on-switch, switch-key-not-on-hca, `},
		// --web.config.file is checked also where no server runs (--once, --textfile).
		{Args: []string{"--demo", "exporter", "--once", "--web.config.file", "/nonexistent/web.yml"}, Code: 2, Stderr: "ibkey: --web.config.file: open /nonexistent/web.yml: no such file or directory"},
		{Args: []string{"--demo", "exporter", "--once", "--textfile", "/nonexistent", "--web.config.file", "../../testdata/partitions/cluster.conf"}, Code: 2, Stderr: "ibkey: --web.config.file ../../testdata/partitions/cluster.conf: "},
		// MAD flags that contradict each other or the transport are refused also
		// where this run sends no MAD.
		{Args: []string{"--demo", "devices", "--sim-node=BAD"}, Code: 2, Stderr: "ibkey: --sim-node chooses where to attach to the simulator: it needs --ibsim"},
		{Args: []string{"--demo", "devices", "--ca-port=2"}, Code: 2, Stderr: "ibkey: --ca-port needs --ca DEV"},
		{Args: []string{"--demo", "exporter", "--once", "--sim-node=BAD"}, Code: 2, Stderr: "ibkey: --sim-node chooses where to attach to the simulator: it needs --ibsim"},
		{Args: []string{"--demo", "job", "--ibsim=x", "--ca=mlx5_0"}, Code: 2, Stderr: "ibkey: --ca and --ca-port choose a local umad port; they do not apply with --ibsim"},
		// --ca (and --ca-port) is looked up where MADs would be sent from, also where
		// this run sends no MAD (it reads sysfs only).
		{Args: []string{"--demo", "devices", "--ca=BAD"}, Code: 3, Stderr: "ibkey: the demo host's BAD is not cabled to the demo fabric (its InfiniBand ports: mlx5_0/1, mlx5_1/1)"},
		{Args: []string{"--sysfs", "../../testdata/sysfs/mlx5", "devices", "--ca=BAD"}, Code: 3, Stderr: "ibkey: no device BAD (devices: irdma0, mlx5_0, mlx5_1, mlx5_2)"},
		{Args: []string{"--sysfs", "../../testdata/sysfs/mlx5", "exporter", "--once", "--ca=mlx5_0", "--ca-port=3"}, Code: 3, Stderr: "ibkey: no port 3 on mlx5_0 (ports: 1)"},
		// A GUID not in the fabric lists the nodes' GUIDs.
		{Args: []string{"--demo", "pkeys", "--guid=0x10000"}, Code: 3, Stderr: `node GUIDs: 0x0002c90200400100 "leaf01", 0x0002c90200400200 "leaf02"`},
	})
	// A job setting's value is shown escaped on stdout, never raw to the terminal.
	r := runIbkey(t, false, nil, "--demo", "job", "NCCL_IB_PKEY=\x1b[31m\u202e1")
	if strings.ContainsAny(r.stdout, "\x1b\u202e") || !strings.Contains(r.stdout, `NCCL_IB_PKEY=\x1b[31m\u202e1`) {
		t.Errorf("a setting's control characters reach stdout raw:\n%s", r.stdout)
	}
}
