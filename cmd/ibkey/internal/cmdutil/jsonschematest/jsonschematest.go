// Package jsonschematest validates ibkey's JSON output against the committed JSON
// Schemas (the repository's schemas/ directory) in tests. It uses
// github.com/santhosh-tekuri/jsonschema/v6, a maintained validator that passes the
// JSON-Schema-Test-Suite, rather than a hand-written one; only tests import it, so the
// binary does not link it.
package jsonschematest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/ibkey/ibkey/schemas"
)

// compiler holds every schema file, so references between them
// (common.schema.json#/$defs/...) resolve without a network; it keeps the schemas it
// compiled. mu guards it: a Compiler is not safe for concurrent use.
var (
	compiler = sync.OnceValues(func() (*jsonschema.Compiler, error) {
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		c.AssertFormat() // date-time and the like are checked, not only annotated
		return c, fs.WalkDir(schemas.FS, ".", func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := schemas.FS.ReadFile(path)
			if err != nil {
				return err
			}
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			return c.AddResource(schemas.Base+path, doc)
		})
	})
	mu sync.Mutex
)

// Schema compiles the schema named name ("fabric-pkeys": schemas/fabric-pkeys.schema.json).
func Schema(name string) (*jsonschema.Schema, error) {
	c, err := compiler()
	if err != nil {
		return nil, err
	}
	mu.Lock()
	defer mu.Unlock()
	return c.Compile(schemas.Base + name + ".schema.json")
}

// Check validates doc (one JSON document) against the schema named name.
func Check(name string, doc []byte) error {
	s, err := Schema(name)
	if err != nil {
		return fmt.Errorf("schema %s: %w", name, err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	if err := s.Validate(inst); err != nil {
		return fmt.Errorf("does not follow schemas/%s.schema.json: %v", name, err)
	}
	return nil
}

// Validate fails t when doc does not follow the schema named name.
func Validate(t testing.TB, name string, doc []byte) {
	t.Helper()
	if err := Check(name, doc); err != nil {
		t.Errorf("%v\n%s", err, doc)
	}
}

// Goldens validates the JSON of every golden file under dir (cmdtest.Golden's
// layout: "$ ibkey ARGS", stdout, "--- stderr", stderr) against the schema SchemaFor
// names; every golden whose command line has "-o json" must have one, and at least
// one golden must be validated.
func Goldens(t *testing.T, dir string) {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".golden") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		first, rest, _ := strings.Cut(string(b), "\n")
		args, ok := strings.CutPrefix(first, "$ ibkey ")
		if !ok {
			return fmt.Errorf("%s: no \"$ ibkey\" line", path)
		}
		stdout, _, _ := strings.Cut(rest, "--- stderr\n")
		fields := strings.Fields(args)
		if !isJSON(fields) {
			return nil
		}
		name := SchemaFor(fields)
		if name == "" {
			t.Errorf("%s: no schema for `ibkey %s`", path, args)
			return nil
		}
		if strings.TrimSpace(stdout) == "" {
			return nil // an error case: nothing on stdout
		}
		if err := Check(name, []byte(stdout)); err != nil {
			t.Errorf("%s: %v", path, err)
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatalf("no JSON golden file under %s", dir)
	}
	t.Logf("%d JSON golden files validated", n)
}

func isJSON(args []string) bool {
	for i, a := range args {
		if a == "--output=json" || a == "-ojson" || ((a == "-o" || a == "--output") && i+1 < len(args) && args[i+1] == "json") {
			return true
		}
	}
	return false
}

// has reports whether args has the flag name (--key, or --key=V).
func has(args []string, name string) bool {
	return slices.ContainsFunc(args, func(a string) bool { return a == name || strings.HasPrefix(a, name+"=") })
}

// Lines validates a stream of JSON lines (watch -o json): every non-empty line is one
// document following the schema named name.
func Lines(t testing.TB, name, stdout string) {
	t.Helper()
	for i, line := range strings.Split(stdout, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		if err := Check(name, []byte(line)); err != nil {
			t.Errorf("line %d: %v", i+1, err)
		}
	}
}

// streams are the schemas of documents printed one per line (watch -o json).
var streams = map[string]bool{"watch-counters": true, "watch-pkeys": true, "sm-log-event": true}

// subSchemas are the commands whose subcommands each have a schema of their own,
// named "COMMAND-SUBCOMMAND" (a subcommand listed here); the others print no document.
var subSchemas = map[string][]string{"decode": {"pkey", "qkey"}, "watch": {"counters", "pkeys"},
	"partitions": {"check", "show", "matrix"}, "fabric": {"discover", "pkeys", "check", "diff"}}

// SchemaFor names the schema of the JSON `ibkey ARGS` prints (cmdutil/jsonschema.go:
// the command path joined by "-", a mode with another shape its own name), or "" for
// a command line that prints no JSON document of its own.
func SchemaFor(args []string) string {
	for i, a := range args {
		next := ""
		if i+1 < len(args) {
			next = args[i+1]
		}
		switch {
		case a == "devices" || a == "job" || a == "can-talk":
			return a
		case a == "pkeys" && (has(args, "--find") || has(args, "--key")): // one flag, two spellings
			return "pkeys-find"
		case a == "pkeys":
			return "pkeys"
		case a == "sm" && next == "log" && (has(args, "--follow") || has(args, "-F")):
			return "sm-log-event"
		case a == "sm" && next == "log":
			return "sm-log"
		case a == "fabric" && next == "discover":
			return "fabric-file"
		case a == "fabric" && next == "pkeys" && (has(args, "--key") || has(args, "--find")):
			return "fabric-pkeys-key"
		case slices.Contains(subSchemas[a], next):
			return a + "-" + next
		case a == "sm" || subSchemas[a] != nil:
			return ""
		}
	}
	return ""
}

// Stdout validates what `ibkey ARGS` printed when ARGS ask for JSON: one document, or
// for watch one per line. The shared test runner (cmdtest.Run) calls it, so every
// JSON output of every command's tests is checked against its schema.
func Stdout(t testing.TB, args []string, stdout string) {
	t.Helper()
	if !isJSON(args) || strings.TrimSpace(stdout) == "" {
		return
	}
	name := SchemaFor(args)
	if name == "" {
		t.Errorf("no schema for the JSON of `ibkey %s`", strings.Join(args, " "))
		return
	}
	if streams[name] {
		Lines(t, name, stdout)
		return
	}
	Validate(t, name, []byte(stdout))
}

// withIncomplete are the schemas whose documents carry "incomplete" whenever something
// the answer asked about was not read (cmdutil.Incomplete).
var withIncomplete = map[string]bool{"devices": true, "pkeys": true, "pkeys-find": true, "can-talk": true, "job": true,
	"fabric-pkeys": true, "fabric-pkeys-key": true, "fabric-check": true, "fabric-diff": true,
	"watch-counters": true, "watch-pkeys": true}

// Read is what a test case knows of its input: whether something the command's answer
// asks about cannot be read from it. The case says it, so the rule below is checked
// against what the case set up, never against the output alone.
type Read int

const (
	// Complete: the case's input has everything the answer asks about, or the case
	// exits 4 (which by itself says something was not read).
	Complete Read = iota
	// Partial: something the answer asks about is not in the case's input (a device,
	// a table or entries not read, a partial sweep, an unread host).
	Partial
	// Unsaid: a generated case that cannot say which (whether its answer reaches an
	// entry not read depends on the rules under test). Exit 0 and 4 are checked as
	// always; exit 1 is left to the test, which must check it against another field
	// of the document (job's per-library unchecked: TestWantExitCode).
	Unsaid
)

// Incomplete fails t when the JSON `ibkey ARGS` printed breaks the one rule of
// "incomplete" (cmdutil.Incomplete), for the commands that carry it: never on exit 0
// (and a Partial read never exits 0), always on exit 4, and on exit 1 exactly when the
// case's read is Partial. A stream (watch -o json) says it in-band, a line at a time:
// no line has it on exit 0, and some line has it on exit 4.
func Incomplete(t testing.TB, args []string, stdout string, code int, read Read) {
	t.Helper()
	name := SchemaFor(args)
	if !isJSON(args) || strings.TrimSpace(stdout) == "" || !withIncomplete[name] {
		return
	}
	docs := []string{stdout}
	if streams[name] {
		docs = strings.Split(strings.TrimSpace(stdout), "\n")
	}
	n := 0
	for _, d := range docs {
		var doc struct {
			Incomplete []json.RawMessage `json:"incomplete"`
		}
		if err := json.Unmarshal([]byte(d), &doc); err != nil {
			return // Stdout's validation says it
		}
		n += len(doc.Incomplete)
	}
	if msg := incompleteRule(code, n > 0, read); msg != "" {
		t.Errorf("`ibkey %s` exits %d with %d incomplete reasons: %s\n%s", strings.Join(args, " "), code, n, msg, stdout)
	}
}

// incompleteRule is what is wrong with a document that exits code, has "incomplete" or
// not, from a read the case says is complete or partial; "" when nothing is.
func incompleteRule(code int, has bool, read Read) string {
	switch {
	case code == 0 && read == Partial:
		return "exit 0 from a partial read: something asked about was not read, so it is no all-clear"
	case code == 0 && has:
		return "want none on exit 0"
	case code == 4 && !has:
		return "want them on exit 4"
	case code == 1 && read == Unsaid:
		return ""
	case code == 1 && has && read != Partial:
		return "want none on exit 1 from a complete read (the case reads everything)"
	case code == 1 && !has && read == Partial:
		return "want them on exit 1 from a partial read (the case leaves something unread)"
	}
	return ""
}
