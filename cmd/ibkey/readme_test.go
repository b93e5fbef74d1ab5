package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
)

// The README's examples are real output: TestREADMEExamples runs every command line of
// its ```text blocks ("$ ibkey ..." and "$ cat FILE") and compares what it prints
// with the lines below it, up to the next "$ " line or the end of the block.
//
//   - stdout and stderr go to one buffer, in the order the command writes them, as on a
//     terminal; stdout is a terminal (table output by default) unless the line pipes
//     it on ("| tail -N" or "| head -N": the filter reads stdout, stderr goes to the
//     terminal as in a shell);
//   - "# exit N" on a line of its own, or at the end of the last line after two
//     spaces, is the exit code; without it the exit code must be 0;
//   - RFC 3339 times are compared as "TIME" (watch lines carry the time of the run);
//   - <!-- readme: dir=PATH --> before a block runs its lines in PATH (relative to the
//     repository), <!-- readme: skip REASON --> leaves a block out (say why; the test
//     lists it).
//
// ```console blocks (the simulated fabric's sessions) are run by TestREADMELabExamples.
//
// `go test ./cmd/ibkey -run TestREADMEExamples -update` rewrites the blocks with what
// the commands print now (review the diff).
func TestREADMEExamples(t *testing.T) {
	const readme = "../../README.md"
	b, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	blocks := readmeBlocks(string(b), "text")
	n := 0
	update := flag.Lookup("update") != nil && flag.Lookup("update").Value.String() == "true"
	out := string(b)
	// Rewrite from the end so earlier offsets stay valid.
	for i := len(blocks) - 1; i >= 0; i-- {
		blk := blocks[i]
		dir, skip := textMarker(blk.marker)
		if skip != "" {
			t.Logf("README.md:%d: not checked: %s", blk.lineNo, skip)
			continue
		}
		var body strings.Builder
		for _, ex := range blk.examples {
			n++
			got, code := runExample(t, dir, ex.line)
			want := ex.output
			if strings.HasSuffix(got, "\n\n") && ex.blankAfter > 0 {
				// An output ending in an empty line: the README's empty line is part of it.
				want += "\n"
			}
			if normTimes(got) != normTimes(want) || code != ex.code {
				if !update {
					t.Errorf("README.md:%d: `%s`: exit %d (README: %d); prints:\n%s\nREADME shows:\n%s", ex.lineNo, ex.line, code, ex.code, got, want)
				}
			} else {
				got = want // the same but for the times: the README keeps its own
			}
			body.WriteString("$ " + ex.line + "\n")
			body.WriteString(withExit(got, code, ex.exitShown, ex.inlineExit))
			body.WriteString(strings.Repeat("\n", ex.blankAfter))
		}
		if update {
			out = out[:blk.start] + body.String() + out[blk.end:]
		}
	}
	if n < 10 {
		t.Fatalf("only %d README examples found: is the block format still ```text with $ lines?", n)
	}
	if update && out != string(b) {
		if err := os.WriteFile(readme, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote %s", readme)
	}
	t.Logf("%d README examples checked", n)
}

type readmeExample struct {
	line       string // the command line after "$ "
	output     string // what the README shows below it (exit marker removed)
	code       int
	exitShown  bool // the README writes the exit code (even 0)
	inlineExit bool
	blankAfter int // empty lines after it in the README (layout, not output)
	lineNo     int
}

type readmeBlock struct {
	lang       string // the fence's language: text, console
	start, end int    // byte offsets of the block's body (after ```LANG\n, before ```)
	lineNo     int    // the line of the opening fence
	// marker is the <!-- readme: ... --> comment written before the block (after the
	// previous block), without its frame: "dir=PATH", "skip REASON", a lab setup.
	marker   string
	examples []readmeExample
}

// textMarker reads a ```text block's marker: dir=PATH, or skip REASON.
func textMarker(marker string) (dir, skip string) {
	if r, ok := strings.CutPrefix(marker, "skip "); ok {
		return "", strings.TrimSpace(r)
	}
	d, _ := strings.CutPrefix(marker, "dir=")
	return d, ""
}

var (
	exitOwnLine = regexp.MustCompile(`^# exit (\d+)$`)
	exitInline  = regexp.MustCompile(`^(.*\S)\s{2,}# exit (\d+)$`)
	rfc3339     = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`)
)

// readmeBlocks finds the ```LANG blocks (lang: text, console) holding "$ " lines, each
// with the <!-- readme: ... --> comment before it (a comment may span lines).
func readmeBlocks(s, lang string) []readmeBlock {
	var blocks []readmeBlock
	lines := strings.SplitAfter(s, "\n")
	off, marker := 0, ""
	for i := 0; i < len(lines); i++ {
		l := strings.TrimRight(lines[i], "\n")
		if rest, ok := strings.CutPrefix(l, "<!-- readme:"); ok {
			// The comment, to its "-->" (on this line or a later one).
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
		// An opening fence: the marker before it is this block's, whatever its language.
		blockMarker := marker
		marker = ""
		off += len(lines[i])
		blk := readmeBlock{lang: strings.TrimPrefix(l, "```"), start: off, lineNo: i + 1, marker: blockMarker}
		var cur *readmeExample
		var outLines []string
		flush := func() {
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
			blk.examples = append(blk.examples, *cur)
		}
		for i++; i < len(lines); i++ {
			l := strings.TrimRight(lines[i], "\n")
			if l == "```" {
				break
			}
			if line, ok := strings.CutPrefix(l, "$ "); ok {
				flush()
				cur, outLines = &readmeExample{line: line, lineNo: i + 1}, nil
			} else if cur != nil {
				outLines = append(outLines, l)
			}
			off += len(lines[i])
		}
		flush()
		blk.end = off
		off += len(lines[min(i, len(lines)-1)])
		if blk.lang == lang && len(blk.examples) > 0 {
			blocks = append(blocks, blk)
		}
	}
	return blocks
}

// runExample runs one README command line from the repository's dir (or dir under
// it): ibkey in-process, with stdout and stderr in one buffer, or cat.
func runExample(t *testing.T, dir, line string) (string, int) {
	t.Helper()
	cmd, pipe, piped := strings.Cut(line, " | ")
	args := strings.Fields(cmd)
	top := filepath.Join("..", "..", dir)
	switch {
	case len(args) == 2 && args[0] == "cat":
		b, err := os.ReadFile(filepath.Join(top, args[1]))
		if err != nil {
			t.Fatal(err)
		}
		return string(b), 0
	case len(args) == 0 || args[0] != "ibkey":
		t.Fatalf("README example `%s`: only ibkey and cat lines are run (mark the block <!-- readme: skip ... -->)", line)
	}
	// Files named in the arguments are relative to dir: the example runs there, so
	// that its output (tables and lines fitted to 80 columns) is what a user sees.
	if dir != "" {
		t.Chdir(top)
	}
	var buf, stdout bytes.Buffer
	streams := &cmdutil.IOStreams{In: strings.NewReader(""), Out: &buf, ErrOut: &buf, OutTTY: !piped}
	if piped {
		streams.Out = &stdout // the filter reads stdout; stderr goes to the terminal
	}
	f := cmdutil.NewFactory(streams, func(k string) string {
		if k == "NO_COLOR" {
			return "1"
		}
		return ""
	}, time.Now)
	code := cmdutil.Execute(context.Background(), newRootCmd(f), args[1:], streams)
	out := buf.String()
	if piped {
		filtered, err := filter(strings.Fields(pipe), stdout.String())
		if err != nil {
			t.Fatalf("README example `%s`: %v", line, err)
		}
		out += filtered
	}
	return out, code
}

// withExit is output as the README shows it: the exit code, when not 0, after the
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

func normTimes(s string) string { return rfc3339.ReplaceAllString(s, "TIME") }
