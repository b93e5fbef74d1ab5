package main

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
)

// manDate is fixed so regenerating the pages changes nothing unless the commands did.
var manDate = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

// generated returns every generated file (completions/ and man/, relative to the
// repository root) from the command tree.
func generated(t *testing.T) map[string][]byte {
	t.Helper()
	root := newRootCmd(cmdutil.NewFactory(&cmdutil.IOStreams{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}, func(string) string { return "" }, time.Now))
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	root.DisableAutoGenTag = true
	// A long help built when shown (exporter's) is in its man page too.
	for _, c := range root.Commands() {
		c.HelpFunc()(c, nil)
	}
	files := map[string][]byte{}
	var b bytes.Buffer
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(cmdutil.GenBashCompletion(root, &b, true))
	files["completions/ibkey.bash"] = append([]byte(nil), b.Bytes()...)
	b.Reset()
	must(root.GenZshCompletion(&b))
	files["completions/_ibkey"] = append([]byte(nil), b.Bytes()...)
	b.Reset()
	must(root.GenFishCompletion(&b, true))
	files["completions/ibkey.fish"] = append([]byte(nil), b.Bytes()...)

	dir := t.TempDir()
	header := &doc.GenManHeader{Title: "IBKEY", Section: "1", Date: &manDate, Source: "ibkey", Manual: "ibkey manual"}
	must(doc.GenManTreeFromOpts(root, doc.GenManTreeOptions{Header: header, Path: dir, CommandSeparator: "-"}))
	// Each page's EXIT STATUS is its command's exit codes, as its --help ends with them
	// (cmdutil.CommandExits); its DESCRIPTION is the long help without them.
	exits := map[string]string{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		rows, _ := cmdutil.CommandExits(c)
		exits[strings.ReplaceAll(c.CommandPath(), " ", "-")+".1"] = exitCodesTroff(rows)
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	ents, err := os.ReadDir(dir)
	must(err)
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		must(err)
		if exits[e.Name()] == "" {
			t.Fatalf("%s: no command of that name", e.Name())
		}
		files["man/"+e.Name()] = fixManPage(e.Name(), data, exits[e.Name()])
	}
	return files
}

// TestGeneratedFilesFresh fails when completions/ or man/ differ from what the
// command tree generates; `make completions man` (go test -run ThisTest -update) rewrites them.
func TestGeneratedFilesFresh(t *testing.T) {
	update := flag.Lookup("update") // registered by the golden package
	files := generated(t)
	top := filepath.Join("..", "..")
	if update != nil && update.Value.String() == "true" {
		for _, d := range []string{"completions", "man"} {
			if err := os.RemoveAll(filepath.Join(top, d)); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(top, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for name, data := range files {
			if err := os.WriteFile(filepath.Join(top, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for name, data := range files {
		got, err := os.ReadFile(filepath.Join(top, name))
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("%s is stale or missing: run `make completions man`", name)
		}
	}
	for _, d := range []string{"completions", "man"} {
		ents, _ := os.ReadDir(filepath.Join(top, d))
		for _, e := range ents {
			if _, ok := files[d+"/"+e.Name()]; !ok {
				t.Errorf("%s/%s is no longer generated: run `make completions man`", d, e.Name())
			}
		}
	}
	if len(files) < 8 {
		t.Errorf("only %d generated files", len(files))
	}
}

// TestEveryCommandDocumented keeps the man pages useful: every command has a short
// description, and leaf commands an example.
func TestEveryCommandDocumented(t *testing.T) {
	root := newRootCmd(cmdutil.NewFactory(&cmdutil.IOStreams{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}, func(string) string { return "" }, time.Now))
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Short == "" {
			t.Errorf("%s has no Short", c.CommandPath())
		}
		if c.Runnable() && !c.HasSubCommands() && c.Example == "" && !strings.HasPrefix(c.CommandPath(), "ibkey completion") {
			t.Errorf("%s has no Example", c.CommandPath())
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
}

// manEnvironment is the ENVIRONMENT section shared by every page.
const manEnvironment = `.TP
\fBIBKEY_SYSFS\fP
The sysfs root to read instead of /sys (as --sysfs).
.TP
\fBIBKEY_DEMO\fP
Set to 1 to use the embedded demo host (as --demo).
.TP
\fBIBKEY_IBSIM\fP
Send MADs through the ibsim simulator with this socket base name (as --ibsim BASE).
.TP
\fBIBSIM_SOCKNAME\fP
The simulator's socket base name when --ibsim is given without one (default sim), as ibsim and its LD_PRELOAD shim read it.
.TP
\fBNO_COLOR\fP
Any value turns colour off (as --no-color; see \%https://no\-color.org).
.TP
\fBTERM\fP
\fBdumb\fP turns colour off, and \fBibkey watch counters\fP prints a table per sample instead of its live screen.
`

// manFiles is the FILES section shared by every page.
const manFiles = `.TP
\fI/sys/class/infiniband/\fP
The ports, P_Key tables, GIDs and counters of the local devices (Documentation/ABI/stable/sysfs-class-infiniband in the kernel).
.TP
\fI/sys/class/net/\fP
IPoIB interfaces and the P_Keys they run with.
.TP
\fI/dev/infiniband/umad*\fP
MAD access to the fabric (SMPs and PMA queries; needs read-write access, usually root).
.TP
\fI/dev/infiniband/uverbs*\fP
Port counters through verbs (ibv_query_port), readable by every user.
.TP
\fI/etc/opensm/partitions.conf\fP
OpenSM's partition configuration, read by partitions and fabric check --partitions.
`

// manSeeAlso are the related tools every page points to, after ibkey's own pages, as man
// pages reference each other.
const manSeeAlso = `\fBsmpquery\fP(8), \fBperfquery\fP(8), \fBibnetdiscover\fP(8), \fBopensm\fP(8), \fBrdma\fP(8), \fBibv_devinfo\fP(1)`

// fixManPage finishes a man page cobra/doc generated, so it reads like the pages of
// the tools ibkey sits beside (smpquery(8), rdma(8)): each page titled with its own
// name, lines filled without justification (groff's "cannot adjust line" warnings came
// from long JSON schemas), break points inside those schemas instead of hyphens, and
// the EXIT STATUS, ENVIRONMENT, FILES and SEE ALSO sections man-pages(7) lists for a
// command's page. page is cobra/doc's output for the page named name
// ("ibkey-pkeys.1"); exitStatus is the EXIT STATUS section's troff (exitCodesTroff).
func fixManPage(name string, page []byte, exitStatus string) []byte {
	title := strings.ToUpper(strings.TrimSuffix(name, ".1"))
	lines := strings.Split(string(page), "\n")
	var out []string
	sawSeeAlso, example := false, false
	for _, l := range lines {
		switch {
		case l == ".EX" || l == ".EE":
			example = l == ".EX"
		case example:
			// --help indents examples by two spaces; man(1) indents the section
			// already, and a line that fitted 80 columns there must fit here too.
			out = append(out, fitExample(strings.TrimPrefix(l, "  "))...)
			continue
		case strings.HasPrefix(l, ".TH "):
			// .TH "IBKEY" "1" ...: each page carries its own title; no justification
			// (ragged right, as most section 1 pages render at 80 columns) and no hyphens
			// inside JSON field names.
			l = strings.Replace(l, `"IBKEY"`, `"`+title+`"`, 1)
			out = append(out, l, ".ad l", ".nh") // .TH resets hyphenation: turn it off again
			continue
		case l == ".SH SEE ALSO":
			// .nh again: the .TP paragraphs were hyphenated despite the .nh after .TH
			// (groff 1.22.4, man -l at 80 columns).
			out = append(out, ".SH EXIT STATUS", ".nh", strings.TrimSuffix(exitStatus, "\n"),
				"", ".SH ENVIRONMENT", strings.TrimSuffix(manEnvironment, "\n"),
				"", ".SH FILES", strings.TrimSuffix(manFiles, "\n"), "")
			sawSeeAlso = true
		case sawSeeAlso && strings.HasPrefix(l, `\fB`):
			// The last line of cobra's SEE ALSO list: add the related tools after it.
		case !strings.HasPrefix(l, "."):
			l = breakable(l)
		}
		out = append(out, l)
	}
	s := strings.Join(out, "\n")
	if sawSeeAlso {
		s = strings.TrimRight(s, "\n") + ", " + manSeeAlso + "\n"
	}
	return []byte(s)
}

// manExampleWidth is what an example line may take at 80 columns: man(1) indents a
// section's text by 7.
const manExampleWidth = 80 - 7

// fitExample is an example's command line l as it fits manExampleWidth: a comment's
// padding shrunk, then the line broken before a flag (else an argument) with a shell continuation
// (\e is troff's backslash), the rest indented by 4, as a reader can paste it.
func fitExample(l string) []string {
	if len(l) <= manExampleWidth {
		return []string{l}
	}
	if j := strings.Index(l, "  #"); j >= 0 {
		hash := j + 2
		l = strings.TrimRight(l[:hash], " ") + "  " + l[hash:]
		if len(l) <= manExampleWidth {
			return []string{l}
		}
	}
	var out []string
	indent := ""
	for len(indent)+len(l) > manExampleWidth {
		head := l[:manExampleWidth-len(indent)-2]
		cut := strings.LastIndex(head, " -") // before a flag, its value kept with it
		if cut <= 0 {
			cut = strings.LastIndex(head, " ")
		}
		if cut <= 0 {
			break
		}
		out = append(out, indent+l[:cut]+` \e`)
		l, indent = l[cut+1:], "    "
	}
	return append(out, indent+l)
}

// breakable adds troff's zero-width break point (\:) after the commas and colons of
// a word longer than a short line, so a JSON schema wraps between fields instead of
// overflowing or being hyphenated inside a field name.
func breakable(l string) string {
	words := strings.Split(l, " ")
	for i, w := range words {
		if len(w) < 24 {
			continue
		}
		var b bytes.Buffer
		for j := 0; j < len(w); j++ {
			b.WriteByte(w[j])
			if (w[j] == ',' || w[j] == ':' || w[j] == '/') && j+1 < len(w) {
				b.WriteString(`\:`)
			}
		}
		words[i] = b.String()
	}
	return strings.Join(words, " ")
}

// TestRepositoryPagesRenderClean renders every committed page with man(1) at 80
// columns, as a user's terminal would, and fails on any groff warning; it also checks
// each page has its own title and the sections fixManPage adds.
func TestRepositoryPagesRenderClean(t *testing.T) {
	if _, err := exec.LookPath("man"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("man(1) is missing: apt-get install man-db groff-base")
		}
		t.Skip("man(1) is missing: apt-get install man-db groff-base")
	}
	pages, err := filepath.Glob(filepath.Join("..", "..", "man", "*.1"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("no man pages found: %v", err)
	}
	for _, p := range pages {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(p)
		title := `.TH "` + strings.ToUpper(strings.TrimSuffix(name, ".1")) + `"`
		for _, want := range []string{title, ".SH EXIT STATUS", ".SH ENVIRONMENT", ".SH FILES", `\fBsmpquery\fP(8)`} {
			if !bytes.Contains(data, []byte(want)) {
				t.Errorf("%s: no %q", name, want)
			}
		}
		cmd := exec.Command("man", "--warnings", "-l", p)
		cmd.Env = append(os.Environ(), "MANWIDTH=80", "MANPAGER=cat", "PAGER=cat", "LANG=C.UTF-8")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Errorf("man -l %s: %v: %s", name, err, stderr.String())
			continue
		}
		if stderr.Len() > 0 {
			t.Errorf("man -l %s at 80 columns warns:\n%s", name, stderr.String())
		}
		for _, l := range strings.Split(stdout.String(), "\n") {
			if utf8.RuneCountInString(l) > 80 {
				t.Errorf("man -l %s: a line over 80 columns: %q", name, l)
			}
		}
		// The exit codes are in EXIT STATUS, once: not in DESCRIPTION as --help's text.
		if n := bytes.Count(data, []byte("Exit codes")); n > 0 {
			t.Errorf("%s: --help's exit-code text is in the page (%d times); it belongs in EXIT STATUS only", name, n)
		}
	}
}

func TestFixManPageTitlesAndSections(t *testing.T) {
	page := []byte(".nh\n.TH \"IBKEY\" \"1\" \"Nov 2026\" \"ibkey\" \"ibkey manual\"\n\n.SH NAME\nibkey-pkeys - x\n\n.PP\nJSON: {\"a\",\"bbbbbbbbbbbbbbb\",\"ccccccccccccccccc\"}\n\n.SH SEE ALSO\n\\fBibkey(1)\\fP\n")
	got := string(fixManPage("ibkey-pkeys.1", page, ".TP\n\\fB0\\fP\nSuccess.\n"))
	for _, want := range []string{`.TH "IBKEY-PKEYS" "1"`, ".ad l", ".SH EXIT STATUS", `{"a",\:"bbbbbbbbbbbbbbb",\:"ccccccccccccccccc"}`, `\fBibkey(1)\fP, \fBsmpquery\fP(8)`} {
		if !strings.Contains(got, want) {
			t.Errorf("fixManPage output has no %q:\n%s", want, got)
		}
	}
	if strings.Index(got, ".SH EXIT STATUS") > strings.Index(got, ".SH SEE ALSO") {
		t.Error("EXIT STATUS must come before SEE ALSO (man-pages(7) order)")
	}
}
