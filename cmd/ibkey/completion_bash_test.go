package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// bashBreaks is bash's default COMP_WORDBREAKS without the blanks (bash(1)).
const bashBreaks = "\"'@><=;|&(:"

// bashWords splits a command line the way bash fills COMP_WORDS: blanks separate
// words, each unescaped COMP_WORDBREAKS character is a word of its own; the cursor is
// at the end of the line (an empty last word after a blank).
func bashWords(line string) []string {
	var words []string
	cur, inWord := "", false
	flush := func() {
		if inWord {
			words = append(words, cur)
		}
		cur, inWord = "", false
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\\' && i+1 < len(line):
			cur += line[i : i+2]
			inWord = true
			i++
		case c == ' ':
			flush()
		case strings.IndexByte(bashBreaks, c) >= 0:
			flush()
			words = append(words, string(c))
		default:
			cur += string(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur)
	} else if strings.HasSuffix(line, " ") || line == "" {
		words = append(words, "")
	}
	return words
}

// bashReplaced is the start of the text bash replaces with a completion: after the
// last blank or unescaped word-break character before the cursor (the end).
func bashReplaced(line string) int {
	start := 0
	for i := 0; i < len(line); i++ {
		if line[i] == '\\' {
			i++
			continue
		}
		if line[i] == ' ' || strings.IndexByte(bashBreaks, line[i]) >= 0 {
			start = i + 1
		}
	}
	return start
}

// commonPrefix is what bash inserts for several choices.
func commonPrefix(s []string) string {
	if len(s) == 0 {
		return ""
	}
	p := s[0]
	for _, x := range s[1:] {
		for !strings.HasPrefix(x, p) {
			p = p[:len(p)-1]
		}
	}
	return p
}

// TestBashCompletion runs the generated completions/ibkey.bash in bash itself, with
// bash-completion, as bash would on TAB: COMP_WORDS, COMP_CWORD, COMP_LINE and
// COMP_POINT set, the completion function called, COMPREPLY applied to the line.
func TestBashCompletion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	const bc = "/usr/share/bash-completion/bash_completion"
	if _, err := os.Stat(bc); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s missing (apt-get install bash-completion)", bc)
		}
		t.Skipf("%s missing (apt-get install bash-completion)", bc)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "ibkey")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	script, _ := filepath.Abs("../../completions/ibkey.bash")
	fabricFile, _ := filepath.Abs("testdata/fabric/small.json")

	cases := []struct {
		line string
		// want is the line after one TAB (COMP_TYPE 9); choices, when set, are
		// COMPREPLY's values (descriptions cut) on a second TAB (COMP_TYPE 63).
		want    string
		choices []string
		absent  []string // not among the choices
	}{
		// The bug: the prefix before = was inserted again, escaped.
		{line: "ibkey --demo can-talk mlx5_0/1,pkey=", want: "ibkey --demo can-talk mlx5_0/1,pkey=0x",
			choices: []string{"0x8001", "0x0002", "0xffff"}},
		{line: "ibkey --demo can-talk mlx5_0/1,pkey=0x80", want: "ibkey --demo can-talk mlx5_0/1,pkey=0x80", choices: []string{"0x8001", "0x8003", "0x8010"}},
		{line: "ibkey --demo can-talk mlx5_0/1,pkey=0x801", want: "ibkey --demo can-talk mlx5_0/1,pkey=0x8010"},
		// The line as bash leaves it after completing the option name (comma escaped).
		{line: `ibkey --demo can-talk mlx5_0/1\,pkey=0x801`, want: `ibkey --demo can-talk mlx5_0/1\,pkey=0x8010`},
		// A comma needs no escape: the line stays as typed (issue 25).
		{line: "ibkey --demo can-talk mlx5_0/1,in", want: `ibkey --demo can-talk mlx5_0/1,index=`},
		// An option already given is not offered again.
		{line: "ibkey --demo can-talk mlx5_0/1,index=2,", choices: []string{"2,pkey=", "2,qp="}, absent: []string{"2,index="}}, // relative to the last =, which bash keeps
		// DEV/<TAB> completes the device's ports.
		{line: "ibkey --demo pkeys mlx5_1/", want: "ibkey --demo pkeys mlx5_1/", choices: []string{"mlx5_1/1", "mlx5_1/2"}},
		{line: "ibkey --demo pkeys mlx5_0/", want: "ibkey --demo pkeys mlx5_0/1"},
		{line: "ibkey --demo can-talk mlx5_0/1,index=", choices: []string{"0", "1", "2"}},
		{line: "ibkey --demo can-talk mlx5_0/1,index=2", want: "ibkey --demo can-talk mlx5_0/1,index=2"},
		{line: "ibkey can-talk 0x8001,qp=u", want: "ibkey can-talk 0x8001,qp=u", choices: []string{"uc", "ud"}},
		{line: "ibkey can-talk 0x8001,qp=ud,qkey=0x11,w", want: `ibkey can-talk 0x8001,qp=ud,qkey=0x11,wr_qkey=`},
		{line: "ibkey --demo can-talk mlx5_0/1 mlx5_1/", want: "ibkey --demo can-talk mlx5_0/1 mlx5_1/", choices: []string{"mlx5_1/1", "mlx5_1/2"}},
		// Flags: values, never file names.
		{line: "ibkey --demo pkeys --mad-timeout 25", want: "ibkey --demo pkeys --mad-timeout 250ms"},
		{line: "ibkey --demo pkeys --mad-timeout=25", want: "ibkey --demo pkeys --mad-timeout=250ms"},
		{line: "ibkey --demo pkeys --sim-node ", want: "ibkey --demo pkeys --sim-node "},
		{line: "ibkey --demo watch counters --interval ", choices: []string{"1s", "5s", "1m"}},
		{line: "ibkey --demo pkeys ib0.80", choices: []string{"ib0.8001", "ib0.8002", "ib0.8020"}},
		{line: "ibkey can-talk --fabric-file " + fabricFile + " lid=", choices: []string{"1", "2", "3"}},
		{line: "ibkey can-talk --fabric-file " + fabricFile + " node=Hca", choices: []string{"HcaA", "HcaB"}},
	}
	for _, tc := range cases {
		for _, typ := range []string{"9", "63"} {
			if typ == "9" && tc.want == "" || typ == "63" && tc.choices == nil {
				continue
			}
			words := bashWords(tc.line)
			var b strings.Builder
			b.WriteString("source " + bc + "\nsource " + script + "\n")
			b.WriteString("COMP_WORDS=(")
			for _, w := range words {
				b.WriteString(shellQuote(w) + " ")
			}
			b.WriteString(")\n")
			b.WriteString("COMP_CWORD=" + strconv.Itoa(len(words)-1) + "\n")
			b.WriteString("COMP_LINE=" + shellQuote(tc.line) + "\nCOMP_POINT=${#COMP_LINE}\nCOMP_TYPE=" + typ + "\nCOLUMNS=200\n")
			b.WriteString("PATH=" + dir + ":$PATH\n__start_ibkey ibkey 2>/dev/null\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n")
			cmd := exec.Command("bash", "--norc", "--noprofile")
			cmd.Stdin = strings.NewReader(b.String())
			var out, errOut bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errOut
			if err := cmd.Run(); err != nil {
				t.Fatalf("%q: bash: %v\n%s", tc.line, err, errOut.String())
			}
			reply := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			if out.Len() == 0 {
				reply = nil
			}
			if typ == "63" {
				var got []string
				for _, r := range reply {
					if f := strings.Fields(r); len(f) > 0 {
						got = append(got, f[0])
					}
				}
				for _, w := range tc.choices {
					if !contains(got, w) {
						t.Errorf("%q TAB TAB: want %q among %q", tc.line, w, got)
					}
				}
				for _, w := range tc.absent {
					if contains(got, w) {
						t.Errorf("%q TAB TAB: %q offered again among %q", tc.line, w, got)
					}
				}
				continue
			}
			line := tc.line
			if len(reply) > 0 {
				line = tc.line[:bashReplaced(tc.line)] + commonPrefix(reply)
			}
			if line != tc.want {
				t.Errorf("%q TAB: line %q, want %q (COMPREPLY %q)", tc.line, line, tc.want, reply)
			}
		}
	}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}
