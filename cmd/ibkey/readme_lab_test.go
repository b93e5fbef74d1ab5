package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/internal/lab"
)

// The README's ```console blocks are real sessions too: TestREADMELabExamples runs
// them, most against the simulated fabric (internal/lab: ibsim, OpenSM), and compares
// what each command prints with the README, as TestREADMEExamples does for the
// ```text blocks (same "# exit N" rule, same -update).
//
// Every console block says before it, in a comment, what it runs against:
//
//		<!-- readme: lab=NAME topology=FILE opensm=FILE file=NAME:FILE sock=NAME
//		ibsim: CONSOLE COMMAND
//		ibsim between samples: CONSOLE COMMAND -->
//
//	  - lab=NAME: the blocks naming one lab run in one ibsim, in README order, each
//	    after the setup of the blocks before it; the first names its topology=FILE.
//	    One ibsim per lab, whatever the number of blocks.
//	  - opensm=FILE runs OpenSM once (-o) with that partitions.conf before the block
//	    (several: in the order written); file=NAME:FILE copies FILE into the session's
//	    directory as NAME (arguments naming a file there are found there, and
//	    "> NAME" writes there); ibsim: runs an ibsim console command before the block;
//	    ibsim between samples: runs one when the block's first command has printed its
//	    first line (a watch between its first and second sample).
//	  - sock=NAME is the socket name the block shows (default "sim", the simulator's
//	    own default; the test's ibsim has a name of its own, printed as NAME).
//	  - host: no simulator (the demo host, files of the repository).
//	  - not checked: REASON: the block is not run; the test lists it with the reason.
//
// FILEs are relative to the repository. Command lines are run in-process as on a
// terminal (stdout a terminal, so table output by default), with stdout and stderr
// in one stream in the order written; "CMD | FILTER" (tail -N, head -N, grep [-v]
// [-E] RE) filters stdout only and makes it a pipe, "CMD > FILE" saves it, "echo $?"
// prints the previous line's exit code and "CMD; echo exit $?" its own. A last
// output line "..." shows only the first lines of a longer output.
//
// What differs from run to run is compared as a placeholder, never dropped: RFC 3339
// times, the duration after a sweep's time ("at TIME in 3ms"), and in watch JSON the
// interval_s and the rates, once each rate is checked to be its delta / interval_s.
// -update keeps the README's own values where only those differ.
func TestREADMELabExamples(t *testing.T) {
	const readme = "../../README.md"
	b, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	blocks := readmeBlocks(string(b), "console")
	if len(blocks) < 5 {
		t.Fatalf("only %d ```console blocks with $ lines in README.md: is the block format still the same?", len(blocks))
	}
	update := flag.Lookup("update") != nil && flag.Lookup("update").Value.String() == "true"

	// Plan: the blocks of each lab, in README order.
	setups := make([]consoleSetup, len(blocks))
	bodies := make([]*string, len(blocks)) // the block as run (for -update); nil: not run
	var labOrder []string
	labBlocks := map[string][]int{}
	var hostBlocks []int
	notChecked := 0
	for i, blk := range blocks {
		s, err := parseConsoleMarker(blk.marker)
		if err != nil {
			t.Errorf("README.md:%d: ```console block: %v", blk.lineNo, err)
			continue
		}
		setups[i] = s
		switch {
		case s.notChecked != "":
			notChecked++
			t.Logf("README.md:%d: console block NOT CHECKED: %s", blk.lineNo, s.notChecked)
		case s.lab == "":
			hostBlocks = append(hostBlocks, i)
		default:
			if _, seen := labBlocks[s.lab]; !seen {
				labOrder = append(labOrder, s.lab)
				if s.topology == "" {
					t.Errorf("README.md:%d: the first block of lab %q names no topology=FILE", blk.lineNo, s.lab)
				}
			} else if s.topology != "" {
				t.Errorf("README.md:%d: topology= in a later block of lab %q (it belongs to the first)", blk.lineNo, s.lab)
			}
			labBlocks[s.lab] = append(labBlocks[s.lab], i)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	var mu sync.Mutex
	examples := 0
	runBlocks := func(t *testing.T, sess *consoleSession, idx []int) {
		// The examples run in the session's directory and name its files as the
		// README does, so that their lines are as wide as the README shows them.
		t.Chdir(sess.dir)
		for _, i := range idx {
			if !sess.setUp(t, blocks[i], setups[i]) {
				return
			}
			body, n, ok := sess.runBlock(t, blocks[i], setups[i], update)
			if !ok {
				return // the blocks after it build on it
			}
			mu.Lock()
			bodies[i], examples = &body, examples+n
			mu.Unlock()
		}
	}
	top, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("host", func(t *testing.T) {
		for _, i := range hostBlocks {
			runBlocks(t, &consoleSession{dir: top, top: top}, []int{i})
		}
	})
	t.Run("labs", func(t *testing.T) {
		for _, name := range labOrder {
			idx := labBlocks[name]
			t.Run(name, func(t *testing.T) {
				first := setups[idx[0]]
				l := lab.Start(t, filepath.Join(top, first.topology), nil)
				runBlocks(t, &consoleSession{lab: l, dir: t.TempDir(), top: top}, idx)
			})
		}
	})

	if update {
		out := string(b)
		for i := len(blocks) - 1; i >= 0; i-- { // from the end: earlier offsets stay valid
			if bodies[i] != nil {
				out = out[:blocks[i].start] + *bodies[i] + out[blocks[i].end:]
			}
		}
		if out != string(b) {
			if err := os.WriteFile(readme, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("rewrote %s", readme)
		}
	}
	run := 0
	for _, body := range bodies {
		if body != nil {
			run++
		}
	}
	t.Logf("%d of %d console blocks checked (%d examples), %d not checked, %d labs", run, len(blocks), examples, notChecked, len(labOrder))
}

// consoleSetup is what a console block's marker asks for.
type consoleSetup struct {
	lab, topology string
	sock          string      // the socket name the README shows
	steps         []setupStep // before the block, in order
	between       []string    // ibsim console commands after the first command's first line
	notChecked    string      // the reason the block is not run
	host          bool        // no simulator
}

// setupStep is one thing done before a block: OpenSM run with a file, a file copied
// into the session, an ibsim console command.
type setupStep struct {
	kind string // opensm, file, ibsim
	arg  string
	name string // file: the name in the session's directory
}

// parseConsoleMarker reads a console block's <!-- readme: ... --> comment.
func parseConsoleMarker(marker string) (consoleSetup, error) {
	s := consoleSetup{sock: "sim"}
	if marker == "" {
		return s, errors.New(`no <!-- readme: ... --> comment before it: say what it runs against (lab=NAME ..., host) or why it is not checked ("not checked: REASON")`)
	}
	if r, ok := strings.CutPrefix(marker, "not checked:"); ok {
		s.notChecked = strings.Join(strings.Fields(r), " ")
		if s.notChecked == "" {
			return s, errors.New(`"not checked:" without a reason`)
		}
		return s, nil
	}
	for _, line := range strings.Split(marker, "\n") {
		line = strings.TrimSpace(line)
		if cmd, ok := strings.CutPrefix(line, "ibsim between samples:"); ok {
			s.between = append(s.between, strings.TrimSpace(cmd))
			continue
		}
		if cmd, ok := strings.CutPrefix(line, "ibsim:"); ok {
			s.steps = append(s.steps, setupStep{kind: "ibsim", arg: strings.TrimSpace(cmd)})
			continue
		}
		for _, tok := range strings.Fields(line) {
			k, v, _ := strings.Cut(tok, "=")
			switch {
			case tok == "host":
				s.host = true
			case k == "lab" && v != "":
				s.lab = v
			case k == "topology" && v != "":
				s.topology = v
			case k == "sock" && v != "":
				s.sock = v
			case k == "opensm" && v != "":
				s.steps = append(s.steps, setupStep{kind: "opensm", arg: v})
			case k == "file" && strings.Contains(v, ":"):
				name, path, _ := strings.Cut(v, ":")
				if name == "" || path == "" || strings.ContainsRune(name, '/') {
					return s, fmt.Errorf("file=%s: want file=NAME:FILE, NAME a plain file name", v)
				}
				s.steps = append(s.steps, setupStep{kind: "file", name: name, arg: path})
			default:
				return s, fmt.Errorf("unknown %q in its comment (accepted: lab=NAME, topology=FILE, opensm=FILE, file=NAME:FILE, sock=NAME, host, lines \"ibsim: CMD\" and \"ibsim between samples: CMD\", or \"not checked: REASON\")", tok)
			}
		}
	}
	switch {
	case s.host && (s.lab != "" || len(s.steps) > 0 || len(s.between) > 0):
		return s, errors.New("host and a lab setup in one comment")
	case !s.host && s.lab == "":
		return s, errors.New("neither lab=NAME nor host in its comment")
	}
	return s, nil
}

// consoleSession is where a lab's blocks run: its ibsim (nil for host blocks) and a
// directory for the files the commands name.
type consoleSession struct {
	lab *lab.Lab
	dir string
	top string // the repository, which setups name their files in
}

// setUp does what the block's comment asks before it runs.
func (s *consoleSession) setUp(t *testing.T, blk readmeBlock, setup consoleSetup) bool {
	t.Helper()
	for _, st := range setup.steps {
		var err error
		switch st.kind {
		case "opensm":
			var conf []byte
			if conf, err = os.ReadFile(filepath.Join(s.top, st.arg)); err == nil {
				err = s.lab.RunOpenSM(string(conf), false)
			}
		case "file":
			var b []byte
			if b, err = os.ReadFile(filepath.Join(s.top, st.arg)); err == nil {
				err = os.WriteFile(filepath.Join(s.dir, st.name), b, 0o644)
			}
		case "ibsim":
			_, err = s.lab.Console(st.arg)
		}
		if err != nil {
			t.Errorf("README.md:%d: setting up the block (%s %s): %v", blk.lineNo, st.kind, st.arg, err)
			return false
		}
	}
	return true
}

// runBlock runs a block's examples in order, reports each difference and returns the
// block as it is now (for -update) and the number of examples run; !ok when a line
// could not be run (the block is then left as it is).
func (s *consoleSession) runBlock(t *testing.T, blk readmeBlock, setup consoleSetup, update bool) (body string, n int, ok bool) {
	t.Helper()
	var b strings.Builder
	prev := 0
	for i, ex := range blk.examples {
		run := consoleRun{dir: s.dir, shown: setup.sock, prevCode: prev}
		if s.lab != nil {
			run.sock = s.lab.SockName
		}
		if i == 0 && len(setup.between) > 0 {
			run.between = func() {
				for _, c := range setup.between {
					if _, err := s.lab.Console(c); err != nil {
						t.Errorf("README.md:%d: ibsim between samples: %v", blk.lineNo, err)
					}
				}
			}
		}
		got, code, err := run.run(ex.line)
		if err != nil {
			t.Errorf("README.md:%d: `%s`: %v", ex.lineNo, ex.line, err)
			return "", 0, false
		}
		prev = code
		// A code shown by the next line (echo $?) is compared there.
		shownNext := i+1 < len(blk.examples) && blk.examples[i+1].line == "echo $?"
		if shownNext {
			code = ex.code
		}
		want, elided := strings.CutSuffix(ex.output, "...\n")
		if elided {
			got = firstLines(got, strings.Count(want, "\n"), &elided)
		} else if strings.HasSuffix(got, "\n\n") && ex.blankAfter > 0 {
			want += "\n" // an output ending in an empty line: the README's empty line is part of it
		}
		if same, err := sameOutput(got, want); err != nil {
			t.Errorf("README.md:%d: `%s`: %v", ex.lineNo, ex.line, err)
		} else if !same || code != ex.code || (strings.HasSuffix(ex.output, "...\n") && !elided) {
			if !update {
				what := ""
				if strings.HasSuffix(ex.output, "...\n") && !elided {
					what = " (the README elides lines with \"...\", but there are no more)"
				}
				t.Errorf("README.md:%d: `%s`: exit %d (README: %d)%s; prints:\n%s\nREADME shows:\n%s", ex.lineNo, ex.line, code, ex.code, what, got, ex.output)
			}
		} else {
			got = want // the same but for what varies per run: the README keeps its own
		}
		if elided {
			got += "...\n"
		}
		b.WriteString("$ " + ex.line + "\n")
		b.WriteString(withExit(got, code, ex.exitShown, ex.inlineExit))
		b.WriteString(strings.Repeat("\n", ex.blankAfter))
	}
	return b.String(), len(blk.examples), true
}

// firstLines is the first n lines of s; *more says whether s had more.
func firstLines(s string, n int, more *bool) string {
	ls := strings.SplitAfter(s, "\n")
	if ls[len(ls)-1] == "" {
		ls = ls[:len(ls)-1]
	}
	*more = len(ls) > n
	return strings.Join(ls[:min(n, len(ls))], "")
}

// consoleRun runs one console line.
type consoleRun struct {
	dir         string // where file arguments are found and "> FILE" writes
	sock, shown string // the lab's ibsim socket name, and the name the README shows
	prevCode    int    // for "echo $?"
	between     func() // run once, after the command's first line on stdout
}

// run runs a command line as the README writes it: ibkey (in-process), with the
// shell forms the package comment lists.
func (r consoleRun) run(line string) (string, int, error) {
	words, err := shellWords(line)
	if err != nil {
		return "", 0, err
	}
	// "CMD; echo exit $?"
	echoExit := false
	if n := len(words); n >= 4 && words[n-4].op && words[n-4].text == ";" &&
		fmt.Sprint(texts(words[n-3:])) == "[echo exit $?]" {
		echoExit, words = true, words[:n-4]
	}
	var stages [][]string
	var redirect string
	cur := []string{}
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case w.op && w.text == "|":
			stages, cur = append(stages, cur), []string{}
		case w.op && w.text == ">" && i+2 == len(words) && len(stages) == 0 && !words[i+1].op:
			redirect = words[i+1].text
			i++
		case w.op:
			return "", 0, fmt.Errorf("%q: only \"CMD | FILTER\", \"CMD > FILE\" and \"CMD; echo exit $?\" are run", w.text)
		default:
			cur = append(cur, w.text)
		}
	}
	stages = append(stages, cur)
	args := stages[0]
	switch {
	case len(args) == 2 && args[0] == "echo" && args[1] == "$?" && len(stages) == 1:
		return fmt.Sprintf("%d\n", r.prevCode), 0, nil
	case len(args) == 0 || args[0] != "ibkey":
		return "", 0, errors.New(`only ibkey and "echo $?" lines are run (or mark the block "not checked: REASON")`)
	}
	args = args[1:] // files named in the arguments are the session's: it runs in r.dir

	var mu sync.Mutex
	var shown, stdout bytes.Buffer
	piped := len(stages) > 1 || redirect != ""
	out := io.Writer(&lockedWriter{mu: &mu, w: &shown})
	if piped {
		out = &lockedWriter{mu: &mu, w: &stdout}
	}
	if r.between != nil {
		out = &afterFirstLine{w: out, f: r.between}
	}
	streams := &cmdutil.IOStreams{In: strings.NewReader(""), Out: out, ErrOut: &lockedWriter{mu: &mu, w: &shown}, OutTTY: !piped}
	f := cmdutil.NewFactory(streams, func(k string) string {
		switch k {
		case "NO_COLOR":
			return "1"
		case "IBSIM_SOCKNAME":
			return r.sock
		}
		return ""
	}, time.Now)
	code := cmdutil.Execute(context.Background(), newRootCmd(f), args, streams)
	if a, ok := out.(*afterFirstLine); ok && !a.done {
		return "", 0, errors.New("ibsim between samples: the command printed no line on stdout")
	}

	if redirect != "" {
		if err := os.WriteFile(filepath.Join(r.dir, redirect), stdout.Bytes(), 0o644); err != nil {
			return "", 0, err
		}
	}
	piece := stdout.String()
	for _, st := range stages[1:] {
		if piece, err = filter(st, piece); err != nil {
			return "", 0, err
		}
	}
	text := shown.String()
	if redirect == "" {
		text += piece
	}
	if echoExit {
		text += fmt.Sprintf("exit %d\n", code)
		code = 0
	}
	// What the run names on its own is shown as the README writes it.
	if r.sock != "" {
		text = strings.ReplaceAll(text, r.sock, r.shown)
	}
	text = strings.ReplaceAll(text, r.dir+string(filepath.Separator), "")
	return text, code, nil
}

// filter runs a pipeline filter on text: tail -N, head -N, grep [-v] [-E] RE.
func filter(args []string, text string) (string, error) {
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	bad := fmt.Errorf("filter %q: only tail -N, head -N and grep [-v] [-E] RE are run", strings.Join(args, " "))
	switch {
	case len(args) == 2 && (args[0] == "tail" || args[0] == "head") && strings.HasPrefix(args[1], "-"):
		n, err := strconv.Atoi(args[1][1:])
		if err != nil || n < 0 {
			return "", bad
		}
		n = min(n, len(lines))
		if args[0] == "tail" {
			return strings.Join(lines[len(lines)-n:], ""), nil
		}
		return strings.Join(lines[:n], ""), nil
	case len(args) >= 2 && args[0] == "grep":
		invert := false
		for _, o := range args[1 : len(args)-1] {
			switch o {
			case "-v":
				invert = true
			case "-E":
			default:
				return "", bad
			}
		}
		re, err := regexp.Compile(args[len(args)-1])
		if err != nil {
			return "", fmt.Errorf("grep: %v", err)
		}
		var b strings.Builder
		for _, l := range lines {
			if re.MatchString(strings.TrimSuffix(l, "\n")) != invert {
				b.WriteString(l)
			}
		}
		return b.String(), nil
	}
	return "", bad
}

// word is a shell word, or an operator (| > ;) when op.
type word struct {
	text string
	op   bool
}

func texts(ws []word) []string {
	var s []string
	for _, w := range ws {
		s = append(s, w.text)
	}
	return s
}

// shellWords splits a command line as sh would for the README's lines: words
// separated by blanks, '...' and "..." quoting (no escapes, no expansion), and the
// operators | > ; outside quotes; other shell syntax (&, <, globs, $(...)) is refused.
func shellWords(s string) ([]word, error) {
	var ws []word
	var cur strings.Builder
	inWord := false
	end := func() {
		if inWord {
			ws = append(ws, word{text: cur.String()})
			cur.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\'', '"':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				return nil, fmt.Errorf("unterminated %c in %q", c, s)
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case ' ', '\t':
			end()
		case '|', '>', ';':
			end()
			ws = append(ws, word{text: string(c), op: true})
		case '&', '<', '`', '(', ')', '\\', '*', '?':
			if c == '?' && strings.HasSuffix(cur.String(), "$") {
				cur.WriteByte(c) // $?, for echo
				continue
			}
			return nil, fmt.Errorf("%q: shell syntax the README's lines do not use (only |, > and ; outside quotes)", c)
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	end()
	return ws, nil
}

// lockedWriter lets stdout and stderr share one buffer.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// afterFirstLine calls f once, when the first complete line has been written: the
// command waits for it, so what f does happens between that line and the next.
type afterFirstLine struct {
	w    io.Writer
	f    func()
	done bool
}

func (a *afterFirstLine) Write(p []byte) (int, error) {
	n, err := a.w.Write(p)
	if !a.done && bytes.IndexByte(p[:n], '\n') >= 0 {
		a.done = true
		a.f()
	}
	return n, err
}

var (
	sweepDuration = regexp.MustCompile(`TIME in [0-9][0-9.]*(ns|µs|us|ms|s|m[0-9.]*s?|h[0-9hms.]*)`)
	intervalNum   = regexp.MustCompile(`"interval_s":-?[0-9][0-9.eE+-]*`)
	rateNum       = regexp.MustCompile(`"rate":-?[0-9][0-9.eE+-]*`)
)

// sameOutput compares a run's output with the README's, with the placeholders the
// package comment lists; an error says a watch rate is not its delta / interval.
func sameOutput(got, want string) (bool, error) {
	g, err := normRun(got)
	if err != nil {
		return false, fmt.Errorf("in the output: %v", err)
	}
	w, err := normRun(want)
	if err != nil {
		return false, fmt.Errorf("in the README: %v", err)
	}
	return g == w, nil
}

func normRun(s string) (string, error) {
	s = sweepDuration.ReplaceAllString(normTimes(s), "TIME in DURATION")
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "{") || !strings.Contains(l, `"interval_s":`) {
			continue
		}
		if err := checkRates(l); err != nil {
			return "", err
		}
		l = intervalNum.ReplaceAllString(l, `"interval_s":SECONDS`)
		lines[i] = rateNum.ReplaceAllString(l, `"rate":RATE`)
	}
	return strings.Join(lines, ""), nil
}

// checkRates checks that every rate of a watch JSON sample is its delta divided by
// the sample's interval_s, so that hiding both behind placeholders hides nothing but
// the interval's jitter.
func checkRates(line string) error {
	var sample struct {
		Interval *float64 `json:"interval_s"`
		Ports    []struct {
			Device   string `json:"device"`
			Port     int    `json:"port"`
			Counters map[string]struct {
				Delta *float64 `json:"delta"`
				Rate  *float64 `json:"rate"`
			} `json:"counters"`
		} `json:"ports"`
	}
	if err := json.Unmarshal([]byte(line), &sample); err != nil {
		return fmt.Errorf("a watch sample that is not JSON: %v: %s", err, line)
	}
	for _, p := range sample.Ports {
		for name, c := range p.Counters {
			switch {
			case c.Rate == nil:
			case sample.Interval == nil || c.Delta == nil:
				return fmt.Errorf("%s/%d %s: a rate without a delta and an interval", p.Device, p.Port, name)
			case math.Abs(*c.Rate - *c.Delta / *sample.Interval) > 1e-6*math.Max(1, math.Abs(*c.Rate)):
				return fmt.Errorf("%s/%d %s: rate %v is not delta %v / interval_s %v", p.Device, p.Port, name, *c.Rate, *c.Delta, *sample.Interval)
			}
		}
	}
	return nil
}

// The console runner's own rules: what it parses, runs and refuses.
func TestREADMEConsoleRunner(t *testing.T) {
	t.Run("shellWords", func(t *testing.T) {
		ws, err := shellWords(`ibkey --demo exporter --once | grep -v '^#' | grep -E "a|b c"; echo exit $?`)
		if err != nil {
			t.Fatal(err)
		}
		got := fmt.Sprint(texts(ws))
		if want := "[ibkey --demo exporter --once | grep -v ^# | grep -E a|b c ; echo exit $?]"; got != want {
			t.Errorf("got %s, want %s", got, want)
		}
		if !ws[4].op || ws[7].op || ws[11].op || !ws[12].op {
			t.Errorf("operators: %+v", ws)
		}
		for _, bad := range []string{`grep 'x`, "a && b", "a < f", "a $(b)", "ls *.conf"} {
			if _, err := shellWords(bad); err == nil {
				t.Errorf("%q is accepted", bad)
			}
		}
	})
	t.Run("filter", func(t *testing.T) {
		in := "a1\nb2\na3\n"
		for _, c := range []struct {
			args []string
			want string
		}{
			{[]string{"tail", "-2"}, "b2\na3\n"},
			{[]string{"head", "-1"}, "a1\n"},
			{[]string{"tail", "-9"}, in},
			{[]string{"grep", "^a"}, "a1\na3\n"},
			{[]string{"grep", "-v", "^a"}, "b2\n"},
			{[]string{"grep", "-E", "1|2"}, "a1\nb2\n"},
		} {
			if got, err := filter(c.args, in); err != nil || got != c.want {
				t.Errorf("%v: %q, %v; want %q", c.args, got, err, c.want)
			}
		}
		for _, args := range [][]string{{"sort"}, {"grep", "-c", "a"}, {"tail", "2"}, {"head", "-x"}} {
			if _, err := filter(args, in); err == nil {
				t.Errorf("%v is run", args)
			}
		}
	})
	t.Run("run refuses", func(t *testing.T) {
		for _, line := range []string{"ls -l", "ibkey devices && echo ok", "ibkey devices > a > b", "ibkey devices; echo $?"} {
			if _, _, err := (consoleRun{dir: t.TempDir()}).run(line); err == nil {
				t.Errorf("%q is run", line)
			}
		}
	})
	t.Run("echo", func(t *testing.T) {
		out, code, err := consoleRun{prevCode: 3}.run("echo $?")
		if err != nil || out != "3\n" || code != 0 {
			t.Errorf("echo $?: %q %d %v", out, code, err)
		}
		out, code, err = consoleRun{dir: t.TempDir()}.run("ibkey decode pkey 0x18001; echo exit $?")
		if err != nil || !strings.HasSuffix(out, "\nexit 2\n") || code != 0 {
			t.Errorf("; echo exit $?: %q %d %v", out, code, err)
		}
	})
	t.Run("markers", func(t *testing.T) {
		s, err := parseConsoleMarker("lab=x topology=t.net opensm=a.conf file=p.conf:b.conf sock=s\nibsim: Cmd \"A\"[1]\nibsim between samples: Cmd2")
		if err != nil {
			t.Fatal(err)
		}
		if s.lab != "x" || s.topology != "t.net" || s.sock != "s" || len(s.steps) != 3 || s.steps[1].name != "p.conf" ||
			s.steps[2].arg != `Cmd "A"[1]` || fmt.Sprint(s.between) != "[Cmd2]" {
			t.Errorf("parsed %+v", s)
		}
		if s, err := parseConsoleMarker("not checked: needs a real HCA"); err != nil || s.notChecked != "needs a real HCA" {
			t.Errorf("not checked: %+v %v", s, err)
		}
		for _, m := range []string{"", "lab=x tpology=t.net", "host lab=x", "sock=s", "not checked:", "lab=x file=a/b:c"} {
			if _, err := parseConsoleMarker(m); err == nil {
				t.Errorf("marker %q accepted", m)
			}
		}
	})
	t.Run("normalised", func(t *testing.T) {
		a := `{"sampled_at":"2026-11-22T22:38:17.7Z","interval_s":2,"ports":[{"device":"d","port":1,"counters":{"c":{"delta":5,"rate":2.5}}}]}` + "\nswept at 2026-11-21T15:26:05Z in 3ms\n"
		b := `{"sampled_at":"2026-11-21T10:00:00.1Z","interval_s":1.25,"ports":[{"device":"d","port":1,"counters":{"c":{"delta":5,"rate":4}}}]}` + "\nswept at 2026-11-22T00:00:00Z in 1.5s\n"
		if same, err := sameOutput(a, b); !same || err != nil {
			t.Errorf("times, durations and consistent rates differ: %v %v", same, err)
		}
		for _, c := range []string{
			strings.Replace(b, `"delta":5`, `"delta":6`, 1), // a delta is compared
			strings.Replace(b, `"c":`, `"x":`, 1),           // and the counter's name
			strings.Replace(b, "in 1.5s", "in 1.5s, 2 nodes", 1),
		} {
			if same, _ := sameOutput(a, c); same {
				t.Errorf("%q compares equal to %q", c, a)
			}
		}
		if _, err := sameOutput(a, strings.Replace(b, `"rate":4`, `"rate":3`, 1)); err == nil {
			t.Error("a rate that is not delta / interval_s is accepted")
		}
	})
}
