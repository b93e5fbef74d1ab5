package manpage

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRepositoryPagesRenderClean renders every committed page with man(1) at 80
// columns, as a user's terminal would, and fails on any groff warning; it also checks
// each page has its own title and the sections Fix adds.
func TestRepositoryPagesRenderClean(t *testing.T) {
	if _, err := exec.LookPath("man"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("man(1) is missing: apt-get install man-db groff-base")
		}
		t.Skip("man(1) is missing: apt-get install man-db groff-base")
	}
	pages, err := filepath.Glob(filepath.Join("..", "..", "..", "man", "*.1"))
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
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Errorf("man -l %s: %v: %s", name, err, stderr.String())
			continue
		}
		if stderr.Len() > 0 {
			t.Errorf("man -l %s at 80 columns warns:\n%s", name, stderr.String())
		}
	}
}

func TestFixTitlesAndSections(t *testing.T) {
	page := []byte(".nh\n.TH \"IBKEY\" \"1\" \"Nov 2026\" \"ibkey\" \"ibkey manual\"\n\n.SH NAME\nibkey-pkeys - x\n\n.PP\nJSON: {\"a\",\"bbbbbbbbbbbbbbb\",\"ccccccccccccccccc\"}\n\n.SH SEE ALSO\n\\fBibkey(1)\\fP\n")
	got := string(Fix("ibkey-pkeys.1", page, ".TP\n\\fB0\\fP\nSuccess.\n"))
	for _, want := range []string{`.TH "IBKEY-PKEYS" "1"`, ".ad l", ".SH EXIT STATUS", `{"a",\:"bbbbbbbbbbbbbbb",\:"ccccccccccccccccc"}`, `\fBibkey(1)\fP, \fBsmpquery\fP(8)`} {
		if !strings.Contains(got, want) {
			t.Errorf("Fix output has no %q:\n%s", want, got)
		}
	}
	if strings.Index(got, ".SH EXIT STATUS") > strings.Index(got, ".SH SEE ALSO") {
		t.Error("EXIT STATUS must come before SEE ALSO (man-pages(7) order)")
	}
}
