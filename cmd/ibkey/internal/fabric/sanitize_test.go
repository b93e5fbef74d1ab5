package fabric

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/fabric"
)

// TestHostileNodeDescription: a NodeDescription with terminal escapes (a colour, a
// window title, a bidirectional override) is never printed raw by a fabric command,
// on stdout or stderr, in any format; the fabric file holds the escaped text.
func TestHostileNodeDescription(t *testing.T) {
	const evil = "\x1b[31mHcaB\x1b]0;pwned\x07\u202e"
	b, err := os.ReadFile(smallFabric)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, n := range doc["nodes"].([]any) {
		if n := n.(map[string]any); n["description"] == "HcaB" {
			n["description"] = evil
		}
	}
	file := filepath.Join(t.TempDir(), "evil.json")
	b, _ = json.Marshal(doc)
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	const escaped = `\x1b[31mHcaB\x1b]0;pwned\x07\u202e`
	for _, args := range [][]string{
		{"fabric", "discover", "--fabric-file", file},
		{"fabric", "discover", "--fabric-file", file, "-o", "table"},
		{"fabric", "pkeys", "--fabric-file", file},
		{"fabric", "pkeys", "--fabric-file", file, "-o", "json"},
		{"fabric", "pkeys", "--fabric-file", file, "--key", "0x0002"},
		{"fabric", "check", "--fabric-file", file},
		{"fabric", "check", "--fabric-file", file, "-o", "json"},
		{"fabric", "diff", smallFabric, file},
		{"fabric", "diff", smallFabric, file, "-o", "json"},
	} {
		r := runIbkey(t, false, nil, args...)
		all := r.Stdout + r.Stderr
		if strings.ContainsAny(all, "\x1b\x07\u202e") {
			t.Errorf("%v: raw escape printed:\n%q", args, all)
		}
		shown := all
		if strings.Contains(strings.Join(args, " "), "-o json") {
			var v any // JSON: the escaped text is inside a string
			if err := json.Unmarshal([]byte(r.Stdout), &v); err != nil {
				t.Fatalf("%v: %v", args, err)
			}
			shown = jsonStrings(v)
		}
		// A table of 80 columns cuts the name's middle at … (cmdutil.Grid): both its
		// escaped ends show.
		if strings.Contains(strings.Join(args, " "), "-o table") {
			shown = strings.Join(strings.Fields(shown), " ")
			if !strings.Contains(shown, `│ \x1b[31mHcaB\x1b…;pwned\x07\u202e │`) || !strings.Contains(shown, "NODE, PEER cut at …") {
				t.Errorf("%v: the node is not shown escaped and cut:\n%s", args, all)
			}
			continue
		}
		// Labels quote names with %q, which escapes the backslashes of the escapes again.
		if !strings.Contains(shown, escaped) && !strings.Contains(shown, strings.ReplaceAll(escaped, `\`, `\\`)) {
			t.Errorf("%v: the node is not shown escaped (%s):\n%s", args, escaped, all)
		}
	}
	// Read back, the fabric file's descriptions are sanitised like a live sweep's
	// (mad.ParseNodeDescription): the file ibkey writes holds the escaped text.
	r := runIbkey(t, false, nil, "fabric", "discover", "--fabric-file", file, "-o", "json")
	f, err := fabric.DecodeFabric(strings.NewReader(r.Stdout))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, n := range f.Nodes {
		found = found || n.Description == escaped
	}
	if !found || strings.ContainsAny(r.Stdout+r.Stderr, "\x1b\x07") {
		t.Errorf("fabric file: description escaped %v, raw escapes printed %v", found, strings.ContainsAny(r.Stdout+r.Stderr, "\x1b\x07"))
	}
}

// jsonStrings joins every string in v.
func jsonStrings(v any) string {
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			b.WriteString(v + "\n")
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(v)
	return b.String()
}

// TestHugeNodeDescription: a fabric file with a 1 MB NodeDescription is read with the
// description cut to a NodeDescription's 64 bytes (IBA 14.2.5.2), so no output is
// padded to a megabyte per line (it was 972 MB for fabric pkeys -o plain, and out of
// memory for -o table).
func TestHugeNodeDescription(t *testing.T) {
	b, err := os.ReadFile(smallFabric)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	huge := strings.Repeat("H", 1<<20)
	for _, n := range doc["nodes"].([]any) {
		if n := n.(map[string]any); n["description"] == "HcaB" {
			n["description"] = huge
		}
	}
	file := filepath.Join(t.TempDir(), "huge.json")
	b, _ = json.Marshal(doc)
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"fabric", "pkeys", "--fabric-file", file, "-o", "plain"},
		{"fabric", "pkeys", "--fabric-file", file, "-o", "table"},
		{"fabric", "discover", "--fabric-file", file, "-o", "plain"},
		{"fabric", "check", "--fabric-file", file},
	} {
		r := runIbkey(t, false, nil, args...)
		if n := len(r.Stdout) + len(r.Stderr); n > 64<<10 {
			t.Errorf("%v: %d bytes of output", args, n)
		}
		if !strings.Contains(r.Stdout+r.Stderr, strings.Repeat("H", 61)+"…") {
			t.Errorf("%v: the cut description is not shown:\n%.2000s", args, r.Stdout)
		}
	}
}
