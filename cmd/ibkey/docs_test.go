package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/internal/lab"
)

// The examples in README.md and docs/*.md are real runs. TestDocs turns every
// ```console block holding "$ " lines into a testscript script and runs it:
//
//   - "$ ibkey ARGS" runs ibkey in-process as on a terminal: stdout is a terminal (table
//     output by default) and stdout and stderr reach one stream in the order written,
//     unless the line ends in "> FILE" (stdout saved there, not a terminal) or pipes
//     stdout on ("| grep [-v] [-E] RE", "| head -N", "| tail -N": a pipe, not a
//     terminal); "$ cat FILE" runs cat(1);
//   - the lines below it, up to the next "$ " line, are what it prints; "# exit N" on
//     a line of its own or after the last line is its exit code (else 0); a last line
//     "..." shows only the first lines of a longer output;
//   - what differs from run to run is compared as a placeholder: RFC 3339 times, the
//     duration after a sweep's time ("at TIME in 3ms"), and in watch JSON the
//     interval_s and the rates (once each rate is checked to be its delta / interval_s).
//
// The comment before a block says what it runs against:
//
//	<!-- example: dir=PATH -->                 (run in PATH, relative to the repository)
//	<!-- example: skip REASON -->              (not run; the test lists it)
//	<!-- example: lab=NAME topology=FILE opensm=FILE file=NAME:FILE sock=NAME
//	ibsim: CONSOLE COMMAND
//	ibsim between samples: CONSOLE COMMAND -->
//
// The blocks of one lab=NAME in a file run in order in one script, against one ibsim
// started with the first block's topology (internal/lab); opensm=FILE runs OpenSM
// once with that partitions.conf before the block, file=NAME:FILE copies FILE into the
// script's directory, "ibsim:" runs a console command before the block, "ibsim
// between samples:" one after the block's first command printed its first line, and
// sock=NAME is the socket name the block shows for the lab's ibsim. Without a comment
// a block runs in the repository's top directory.
//
// `go test ./cmd/ibkey -run TestDocs -update` rewrites the blocks with what the
// commands print now (review the diff).
func TestDocs(t *testing.T) {
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(repo, "docs", "*.md"))
	files = append([]string{filepath.Join(repo, "README.md")}, files...)
	update := flag.Lookup("update") != nil && flag.Lookup("update").Value.String() == "true"

	scripts := t.TempDir()
	var all []*docExample
	docs := map[string]string{}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		docs[file] = string(b)
		rel, _ := filepath.Rel(repo, file)
		blocks := docBlocks(string(b))
		groups, err := docScripts(rel, blocks, &all)
		if err != nil {
			t.Fatal(err)
		}
		for name, script := range groups {
			if err := os.WriteFile(filepath.Join(scripts, name+".txtar"), []byte(script), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for _, blk := range blocks {
			if blk.skip != "" {
				t.Logf("%s:%d: not checked: %s", rel, blk.lineNo, blk.skip)
			}
		}
	}
	if len(all) < 40 {
		t.Fatalf("only %d examples found in README.md and docs/: is the block format still ```console with $ lines?", len(all))
	}

	run := &docRun{repo: repo, examples: all}
	t.Run("scripts", func(t *testing.T) {
		testscript.Run(t, testscript.Params{
			Dir:   scripts,
			Setup: run.setup,
			Cmds: map[string]func(*testscript.TestScript, bool, []string){
				"ibkey":   run.ibkey,
				"want":    run.want,
				"opensm":  run.opensm,
				"ibsim":   run.console,
				"between": run.between,
			},
		})
	})

	ran := 0
	for _, ex := range all {
		if !ex.ran {
			continue
		}
		ran++
		if ex.diff != "" && !update {
			t.Errorf("%s:%d: `%s`: %s", ex.file, ex.lineNo, ex.line, ex.diff)
		}
	}
	if update {
		for file, text := range docs {
			rel, _ := filepath.Rel(repo, file)
			out := rewriteDoc(text, rel, all)
			if out != text {
				if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("rewrote %s", rel)
			}
		}
	}
	t.Logf("%d of %d examples run", ran, len(all))
}

// docExample is one "$ " line of a block and what the document shows below it.
type docExample struct {
	id         int
	file       string
	lineNo     int
	line       string // the command line after "$ "
	output     string // what the document shows (exit marker removed)
	code       int
	exitShown  bool // the document writes the exit code (even 0)
	inlineExit bool
	blankAfter int    // empty lines after it (layout, not output)
	start, end int    // byte offsets of its text in the document ("$ " to its last line)
	ran        bool   // run by a script
	got        string // what it printed, as the document would show it
	gotCode    int
	diff       string // why it differs from the document; "" when it does not
	shownSock  string // the socket name the document shows for the lab's ibsim
}

// docBlock is one ```console block with "$ " lines and the comment before it.
type docBlock struct {
	lineNo   int
	marker   string // the <!-- example: ... --> comment, without its frame
	skip     string
	examples []*docExample
}

// runDir serialises the in-process ibkey runs of the scripts, each in its script's
// directory.
var runDir sync.Mutex

var (
	exitOwnLine = regexp.MustCompile(`^# exit (\d+)$`)
	exitInline  = regexp.MustCompile(`^(.*\S)\s{2,}# exit (\d+)$`)
	rfc3339     = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`)
)

// docBlocks finds the ```console blocks holding "$ " lines, each with the
// <!-- example: ... --> comment before it (a comment may span lines).
func docBlocks(s string) []*docBlock {
	var blocks []*docBlock
	lines := strings.SplitAfter(s, "\n")
	off, marker := 0, ""
	for i := 0; i < len(lines); i++ {
		l := strings.TrimRight(lines[i], "\n")
		if rest, ok := strings.CutPrefix(l, "<!-- example:"); ok {
			var m strings.Builder
			for {
				body, closed := strings.CutSuffix(strings.TrimRight(rest, " "), "-->")
				m.WriteString(strings.TrimSpace(body))
				if closed || i+1 >= len(lines) {
					break
				}
				off += len(lines[i])
				i++
				m.WriteString("\n")
				rest = strings.TrimRight(lines[i], "\n")
			}
			marker = m.String()
		}
		if !strings.HasPrefix(l, "```") || l == "```" {
			off += len(lines[i])
			continue
		}
		lang := strings.TrimPrefix(l, "```")
		blk := &docBlock{lineNo: i + 1, marker: marker}
		if r, ok := strings.CutPrefix(marker, "skip"); ok {
			blk.skip = strings.TrimSpace(r)
		}
		marker = ""
		off += len(lines[i])
		var cur *docExample
		var outLines []string
		flush := func(end int) {
			if cur == nil {
				return
			}
			for len(outLines) > 0 && outLines[len(outLines)-1] == "" {
				outLines = outLines[:len(outLines)-1]
				cur.blankAfter++
			}
			if k := len(outLines); k > 0 {
				if m := exitOwnLine.FindStringSubmatch(outLines[k-1]); m != nil {
					cur.code, _ = strconv.Atoi(m[1])
					cur.exitShown = true
					outLines = outLines[:k-1]
				} else if m := exitInline.FindStringSubmatch(outLines[k-1]); m != nil {
					cur.code, _ = strconv.Atoi(m[2])
					cur.exitShown, cur.inlineExit = true, true
					outLines[k-1] = m[1]
				}
			}
			for _, o := range outLines {
				cur.output += o + "\n"
			}
			cur.end = end
			blk.examples = append(blk.examples, cur)
		}
		for i++; i < len(lines); i++ {
			l := strings.TrimRight(lines[i], "\n")
			if l == "```" {
				break
			}
			if line, ok := strings.CutPrefix(l, "$ "); ok {
				flush(off)
				cur, outLines = &docExample{line: line, lineNo: i + 1, start: off}, nil
			} else if cur != nil {
				outLines = append(outLines, l)
			}
			off += len(lines[i])
		}
		flush(off)
		off += len(lines[min(i, len(lines)-1)])
		if lang == "console" && len(blk.examples) > 0 {
			blocks = append(blocks, blk)
		}
	}
	return blocks
}

// labSetup is what a block's comment asks for.
type labSetup struct {
	lab, topology, sock, dir string
	before                   []string // script lines run before the block
	between                  []string // ibsim console commands between samples
}

// parseMarker reads a block's comment.
func parseMarker(marker string) (labSetup, error) {
	s := labSetup{sock: "sim"}
	for _, line := range strings.Split(marker, "\n") {
		line = strings.TrimSpace(line)
		if cmd, ok := strings.CutPrefix(line, "ibsim between samples:"); ok {
			s.between = append(s.between, strings.TrimSpace(cmd))
			continue
		}
		if cmd, ok := strings.CutPrefix(line, "ibsim:"); ok {
			s.before = append(s.before, "ibsim "+scriptQuote(strings.TrimSpace(cmd)))
			continue
		}
		for _, tok := range strings.Fields(line) {
			k, v, _ := strings.Cut(tok, "=")
			switch {
			case k == "dir" && v != "":
				s.dir = v
			case k == "lab" && v != "":
				s.lab = v
			case k == "topology" && v != "":
				s.topology = v
			case k == "sock" && v != "":
				s.sock = v
			case k == "opensm" && v != "":
				s.before = append(s.before, "opensm $REPO/"+v)
			case k == "file" && strings.Contains(v, ":"):
				name, path, _ := strings.Cut(v, ":")
				if name == "" || path == "" || strings.ContainsRune(name, '/') {
					return s, fmt.Errorf("file=%s: want file=NAME:FILE, NAME a plain file name", v)
				}
				s.before = append(s.before, "cp $REPO/"+path+" "+name)
			default:
				return s, fmt.Errorf("unknown %q in its comment (accepted: dir=PATH, lab=NAME, topology=FILE, opensm=FILE, file=NAME:FILE, sock=NAME, lines \"ibsim: CMD\" and \"ibsim between samples: CMD\", or \"skip REASON\")", tok)
			}
		}
	}
	if s.lab == "" && (s.topology != "" || len(s.before) > 0 || len(s.between) > 0) {
		return s, fmt.Errorf("a lab setup without lab=NAME")
	}
	return s, nil
}

// docScripts turns a document's blocks into testscript scripts, by name: one per lab
// (its topology in the archive's .lab file, where Setup finds it), one per other
// block. Every example is numbered in *all.
func docScripts(file string, blocks []*docBlock, all *[]*docExample) (map[string]string, error) {
	scripts := map[string]string{}
	labs := map[string]*strings.Builder{}
	base := strings.NewReplacer("/", "_", ".", "_").Replace(file)
	for bi, blk := range blocks {
		if blk.skip != "" {
			continue
		}
		s, err := parseMarker(blk.marker)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", file, blk.lineNo, err)
		}
		b := &strings.Builder{}
		if s.lab != "" {
			if labs[s.lab] == nil {
				if s.topology == "" {
					return nil, fmt.Errorf("%s:%d: the first block of lab %q names no topology=FILE", file, blk.lineNo, s.lab)
				}
				labs[s.lab] = b
				fmt.Fprintf(b, "# %s: lab %s on %s\n", file, s.lab, s.topology)
				defer func(name, topo string) {
					scripts[base+"_lab_"+name] = labs[name].String() + "-- .lab --\n" + topo + "\n"
				}(s.lab, s.topology)
			} else if s.topology != "" {
				return nil, fmt.Errorf("%s:%d: topology= in a later block of lab %q (it belongs to the first)", file, blk.lineNo, s.lab)
			}
			b = labs[s.lab]
		} else {
			fmt.Fprintf(b, "cd $REPO/%s\n", s.dir)
		}
		fmt.Fprintf(b, "\n# %s:%d\n", file, blk.lineNo)
		for _, l := range s.before {
			b.WriteString(l + "\n")
		}
		for i, ex := range blk.examples {
			ex.id, ex.file, ex.shownSock = len(*all), file, s.sock
			*all = append(*all, ex)
			if i == 0 {
				for _, c := range s.between {
					b.WriteString("between " + scriptQuote(c) + "\n")
				}
			}
			words, err := shellWords(ex.line)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: `%s`: %v", file, ex.lineNo, ex.line, err)
			}
			switch {
			case len(words) > 0 && words[0] == "ibkey":
				b.WriteString("ibkey " + strconv.Itoa(ex.id))
				for _, w := range words[1:] {
					b.WriteString(" " + scriptQuote(w))
				}
				b.WriteString("\n")
			case len(words) == 2 && words[0] == "cat":
				b.WriteString("exec cat " + scriptQuote(words[1]) + "\n")
			default:
				return nil, fmt.Errorf("%s:%d: `%s`: only ibkey and cat lines are run (or mark the block <!-- example: skip REASON -->)", file, ex.lineNo, ex.line)
			}
			fmt.Fprintf(b, "want %d\n", ex.id)
		}
		if s.lab == "" {
			scripts[fmt.Sprintf("%s_%03d", base, bi)] = b.String()
		}
	}
	return scripts, nil
}

// scriptQuote quotes a word for testscript (single quotes, ” for a quote).
func scriptQuote(w string) string {
	if w != "" && !strings.ContainsAny(w, " \t'\"#$\\{}") {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", "''") + "'"
}

// shellWords splits a command line as sh would for the documents' lines: words
// separated by blanks and '...' and "..." quoting (no escapes, no expansion); other
// shell syntax (;, &, <, globs, $(...)) is refused. |, > are words.
func shellWords(s string) ([]string, error) {
	var ws []string
	var cur strings.Builder
	inWord := false
	end := func() {
		if inWord {
			ws = append(ws, cur.String())
			cur.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\'', '"':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				return nil, fmt.Errorf("unterminated %c", c)
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case ' ', '\t':
			end()
		case ';', '&', '<', '`', '(', ')', '\\', '*', '?':
			return nil, fmt.Errorf("%q: shell syntax the documents' lines do not use", c)
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	end()
	return ws, nil
}

// docRun is the state the scripts' commands share.
type docRun struct {
	repo     string
	examples []*docExample
	mu       sync.Mutex
}

type labKey struct{}
type betweenKey struct{}
type resultKey struct{}

// docResult is what the last ibkey line printed, and its exit code.
type docResult struct {
	out  string
	code int
}

// setup gives every script $REPO and, for a lab's script, its ibsim.
func (r *docRun) setup(env *testscript.Env) error {
	env.Setenv("REPO", r.repo)
	env.Values[resultKey{}] = &docResult{}
	env.Values[betweenKey{}] = &[]string{}
	topo, err := os.ReadFile(filepath.Join(env.WorkDir, ".lab"))
	if err != nil {
		return nil // not a lab's script
	}
	// lab.Start skips the script (under CI=true: fails it) when the simulator is not
	// installed, naming what is missing.
	env.Values[labKey{}] = lab.Start(env.T().(testing.TB), filepath.Join(r.repo, strings.TrimSpace(string(topo))), nil)
	return nil
}

func labOf(ts *testscript.TestScript) *lab.Lab {
	l, _ := ts.Value(labKey{}).(*lab.Lab)
	if l == nil {
		ts.Fatalf("a lab command outside a lab's script")
	}
	return l
}

// opensm FILE runs OpenSM once on the script's lab with that partitions.conf.
func (r *docRun) opensm(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: opensm FILE")
	}
	conf, err := os.ReadFile(args[0])
	ts.Check(err)
	ts.Check(labOf(ts).RunOpenSM(string(conf), false))
}

// ibsim CMD runs a command on the lab's ibsim console.
func (r *docRun) console(ts *testscript.TestScript, neg bool, args []string) {
	_, err := labOf(ts).Console(strings.Join(args, " "))
	ts.Check(err)
}

// between CMD runs an ibsim console command once the next ibkey line printed its
// first line.
func (r *docRun) between(ts *testscript.TestScript, neg bool, args []string) {
	p := ts.Value(betweenKey{}).(*[]string)
	*p = append(*p, strings.Join(args, " "))
}

// ibkey ID ARGS... runs ibkey in-process as the package comment says.
func (r *docRun) ibkey(ts *testscript.TestScript, neg bool, args []string) {
	ex := r.examples[mustAtoi(ts, args[0])]
	args = args[1:]
	var redirect string
	var filters [][]string
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case ">":
			if i+2 != len(args) {
				ts.Fatalf("> FILE must end the line")
			}
			redirect = ts.MkAbs(args[i+1])
			args = args[:i]
		case "|":
			rest := args[i+1:]
			args = args[:i]
			for len(rest) > 0 {
				j := indexOf(rest, "|")
				if j < 0 {
					filters, rest = append(filters, rest), nil
				} else {
					filters, rest = append(filters, rest[:j]), rest[j+1:]
				}
			}
		}
	}
	// Files named in the arguments are the script's: the command runs in the script's
	// directory, as a user's would, so that it names them (and fits its lines to the
	// terminal) as the document shows. The scripts run in parallel and the directory
	// is the process's: one command at a time (runDir).
	cwd := ts.MkAbs(".")
	runDir.Lock()
	defer runDir.Unlock()
	back, err := os.Getwd()
	ts.Check(err)
	ts.Check(os.Chdir(cwd))
	defer func() { ts.Check(os.Chdir(back)) }()
	var mu sync.Mutex
	var shown, stdout bytes.Buffer
	piped := len(filters) > 0 || redirect != ""
	out := io.Writer(&lockedWriter{mu: &mu, w: &shown})
	if piped {
		out = &lockedWriter{mu: &mu, w: &stdout}
	}
	between := ts.Value(betweenKey{}).(*[]string)
	var hook *afterFirstLine
	if len(*between) > 0 {
		l := labOf(ts)
		cmds := *between
		*between = nil
		hook = &afterFirstLine{w: out, f: func() {
			for _, c := range cmds {
				if _, err := l.Console(c); err != nil {
					ts.Logf("ibsim between samples: %v", err)
				}
			}
		}}
		out = hook
	}
	sock := ""
	if l, _ := ts.Value(labKey{}).(*lab.Lab); l != nil {
		sock = l.SockName
	}
	streams := &cmdutil.IOStreams{In: strings.NewReader(""), Out: out, ErrOut: &lockedWriter{mu: &mu, w: &shown}, OutTTY: !piped}
	f := cmdutil.NewFactory(streams, func(k string) string {
		switch k {
		case "NO_COLOR":
			return "1"
		case "IBSIM_SOCKNAME":
			return sock
		}
		return ""
	}, time.Now)
	code := cmdutil.Execute(context.Background(), newRootCmd(f), args, streams)
	if hook != nil && !hook.done {
		ts.Fatalf("ibsim between samples: the command printed no line on stdout")
	}
	if redirect != "" {
		ts.Check(os.WriteFile(redirect, stdout.Bytes(), 0o644))
	}
	piece := stdout.String()
	for _, fl := range filters {
		var err error
		piece, err = filter(fl, piece)
		ts.Check(err)
	}
	text := shown.String()
	if redirect == "" {
		text += piece
	}
	// What the run names on its own is shown as the document writes it.
	if sock != "" {
		text = strings.ReplaceAll(text, sock, ex.shownSock)
	}
	text = strings.ReplaceAll(text, cwd+string(filepath.Separator), "")
	*ts.Value(resultKey{}).(*docResult) = docResult{out: text, code: code}
	fmt.Fprint(ts.Stdout(), text)
}

// want ID compares what the line before it printed (ibkey's result, or cat's stdout)
// with the document, and records it for -update.
func (r *docRun) want(ts *testscript.TestScript, neg bool, args []string) {
	ex := r.examples[mustAtoi(ts, args[0])]
	res := ts.Value(resultKey{}).(*docResult)
	got, code := res.out, res.code
	if !strings.HasPrefix(strings.TrimSpace(ex.line), "ibkey") {
		got, code = ts.ReadFile("stdout"), 0
	}
	*res = docResult{}
	want, elided := strings.CutSuffix(ex.output, "...\n")
	more := false
	if elided {
		got = firstLines(got, strings.Count(want, "\n"), &more)
	} else if strings.HasSuffix(got, "\n\n") && ex.blankAfter > 0 {
		want += "\n" // an output ending in an empty line: the document's empty line is part of it
	}
	diff := ""
	same, err := sameOutput(got, want)
	switch {
	case err != nil:
		diff = err.Error()
	case elided && !more:
		diff = "the document elides lines with \"...\", but there are no more"
	case !same || code != ex.code:
		diff = fmt.Sprintf("exit %d (document: %d); prints:\n%s\ndocument shows:\n%s", code, ex.code, got, ex.output)
	}
	if same && err == nil {
		got = want // the same but for what varies per run: the document keeps its own
	}
	if elided && more {
		got += "...\n"
	}
	r.mu.Lock()
	ex.ran, ex.got, ex.gotCode, ex.diff = true, got, code, diff
	r.mu.Unlock()
	if diff != "" {
		ts.Logf("%s:%d: differs: %s", ex.file, ex.lineNo, diff)
	}
}

// rewriteDoc is text with every example of file that ran replaced by what it printed.
func rewriteDoc(text, file string, all []*docExample) string {
	var exs []*docExample
	for _, ex := range all {
		if ex.file == file && ex.ran {
			exs = append(exs, ex)
		}
	}
	sort.Slice(exs, func(i, j int) bool { return exs[i].start > exs[j].start })
	for _, ex := range exs { // from the end: earlier offsets stay valid
		var b strings.Builder
		b.WriteString("$ " + ex.line + "\n")
		b.WriteString(withExit(ex.got, ex.gotCode, ex.exitShown, ex.inlineExit))
		b.WriteString(strings.Repeat("\n", ex.blankAfter))
		text = text[:ex.start] + b.String() + text[ex.end:]
	}
	return text
}

func mustAtoi(ts *testscript.TestScript, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		ts.Fatalf("%q: not an example number", s)
	}
	return n
}

func indexOf(ws []string, w string) int {
	for i, x := range ws {
		if x == w {
			return i
		}
	}
	return -1
}

// withExit is output as the document shows it: the exit code, when not 0, after the
// last line or on a line of its own.
func withExit(out string, code int, shown, inline bool) string {
	if code == 0 && !shown {
		return out
	}
	if inline {
		return strings.TrimSuffix(out, "\n") + fmt.Sprintf("        # exit %d\n", code)
	}
	return out + fmt.Sprintf("# exit %d\n", code)
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
	intervalNum   = regexp.MustCompile(`"interval_s":\s*-?[0-9][0-9.eE+-]*`)
	rateNum       = regexp.MustCompile(`"rate":\s*-?[0-9][0-9.eE+-]*`)
)

// sameOutput compares a run's output with the document's, with the placeholders the
// package comment lists; an error says a watch rate is not its delta / interval.
func sameOutput(got, want string) (bool, error) {
	g, err := normRun(got)
	if err != nil {
		return false, fmt.Errorf("in the output: %v", err)
	}
	w, err := normRun(want)
	if err != nil {
		return false, fmt.Errorf("in the document: %v", err)
	}
	return g == w, nil
}

func normTimes(s string) string { return rfc3339.ReplaceAllString(s, "TIME") }

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

// The document runner's own rules: what it parses, runs and refuses.
func TestDocsRunner(t *testing.T) {
	t.Run("shellWords", func(t *testing.T) {
		ws, err := shellWords(`ibkey --demo exporter --once | grep -v '^#' | grep -E "a|b c"`)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := fmt.Sprint(ws), "[ibkey --demo exporter --once | grep -v ^# | grep -E a|b c]"; got != want {
			t.Errorf("got %s, want %s", got, want)
		}
		for _, bad := range []string{`grep 'x`, "a && b", "a < f", "a $(b)", "ls *.conf", "a; echo $?"} {
			if _, err := shellWords(bad); err == nil {
				t.Errorf("%q is accepted", bad)
			}
		}
	})
	t.Run("scriptQuote", func(t *testing.T) {
		for in, want := range map[string]string{"plain": "plain", "a b": "'a b'", "it's": "'it''s'", "^#": "'^#'", "$X": "'$X'", "": "''"} {
			if got := scriptQuote(in); got != want {
				t.Errorf("scriptQuote(%q) = %s, want %s", in, got, want)
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
	t.Run("markers", func(t *testing.T) {
		s, err := parseMarker("lab=x topology=t.net opensm=a.conf file=p.conf:b.conf sock=s\nibsim: Cmd \"A\"[1]\nibsim between samples: Cmd2")
		if err != nil {
			t.Fatal(err)
		}
		if s.lab != "x" || s.topology != "t.net" || s.sock != "s" || len(s.before) != 3 ||
			s.before[1] != "cp $REPO/b.conf p.conf" || s.before[2] != `ibsim 'Cmd "A"[1]'` || fmt.Sprint(s.between) != "[Cmd2]" {
			t.Errorf("parsed %+v", s)
		}
		for _, m := range []string{"lab=x tpology=t.net", "opensm=a.conf", "sock=s lab=", "lab=x file=a/b:c"} {
			if _, err := parseMarker(m); err == nil {
				t.Errorf("marker %q accepted", m)
			}
		}
	})
	t.Run("blocks", func(t *testing.T) {
		doc := "text\n<!-- example: skip needs a real HCA -->\n```console\n$ ibkey x\nout\n```\n\n```console\n$ ibkey y\nline\n# exit 3\n$ ibkey z\na\n\n```\n```text\n$ ibkey w\n```\n"
		blocks := docBlocks(doc)
		if len(blocks) != 2 || blocks[0].skip != "needs a real HCA" || len(blocks[1].examples) != 2 {
			t.Fatalf("blocks: %+v", blocks)
		}
		y, z := blocks[1].examples[0], blocks[1].examples[1]
		if y.line != "ibkey y" || y.output != "line\n" || y.code != 3 || !y.exitShown || z.output != "a\n" || z.blankAfter != 1 {
			t.Errorf("examples: %+v %+v", y, z)
		}
		y.ran, y.got, y.gotCode, y.file = true, "other\n", 1, "f"
		if got := rewriteDoc(doc, "f", []*docExample{y}); !strings.Contains(got, "$ ibkey y\nother\n# exit 1\n$ ibkey z") {
			t.Errorf("rewritten:\n%s", got)
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
