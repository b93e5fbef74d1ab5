package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/internal/tools/manpage"
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
	ents, err := os.ReadDir(dir)
	must(err)
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		must(err)
		files["man/"+e.Name()] = manpage.Fix(e.Name(), data, exitCodesTroff())
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
