package jsonschematest

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/schemas"
)

// TestSchemasCompile: every committed schema compiles (its references resolve) and
// every command schema is named by SchemaFor for some command line, so none is dead.
func TestSchemasCompile(t *testing.T) {
	lines := map[string][]string{
		"devices":           {"--demo", "devices", "-o", "json"},
		"pkeys":             {"--sysfs", "x", "pkeys", "mlx5_0", "1", "-o", "json"},
		"pkeys-find":        {"pkeys", "--find", "0x8001", "-o", "json"},
		"can-talk":          {"can-talk", "a", "b", "-o", "json"},
		"decode-pkey":       {"decode", "pkey", "1", "-o", "json"},
		"decode-qkey":       {"decode", "qkey", "1", "-o", "json"},
		"watch-counters":    {"watch", "counters", "-o", "json"},
		"watch-pkeys":       {"watch", "pkeys", "-o", "json"},
		"job":               {"job", "NCCL_IB_PKEY=1", "-o", "json"},
		"partitions-check":  {"partitions", "check", "f", "-o", "json"},
		"partitions-show":   {"partitions", "show", "f", "-o", "json"},
		"partitions-matrix": {"partitions", "matrix", "f", "-o", "json"},
		"fabric-file":       {"--ibsim", "fabric", "discover", "-o", "json"},
		"fabric-pkeys":      {"fabric", "pkeys", "-o", "json"},
		"fabric-pkeys-key":  {"fabric", "pkeys", "--key", "0x1", "-o", "json"},
		"fabric-check":      {"fabric", "check", "-o", "json"},
		"fabric-diff":       {"fabric", "diff", "a", "b", "-o", "json"},
		"sm-log":            {"sm", "log", "f", "-o", "json"},
		"sm-log-event":      {"sm", "log", "--follow", "f", "-o", "json"},
	}
	err := fs.WalkDir(schemas.FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		name := strings.TrimSuffix(path, ".schema.json")
		if _, err := Schema(name); err != nil {
			t.Errorf("%s: %v", path, err)
		}
		if name == "common" {
			return nil
		}
		args, ok := lines[name]
		if !ok {
			t.Errorf("%s: no command line in this test", path)
		} else if got := SchemaFor(args); got != name {
			t.Errorf("SchemaFor(%v) = %q, want %q", args, got, name)
		}
		delete(lines, name)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name := range lines {
		t.Errorf("no schemas/%s.schema.json", name)
	}
	if got := SchemaFor([]string{"exporter", "-o", "json"}); got != "" {
		t.Errorf("SchemaFor(exporter) = %q", got)
	}
}

// TestIncompleteRule: "incomplete" is never on exit 0 (and a partial read never exits
// 0), always on exit 4, and on exit 1 exactly when the case says its read is partial
// (Unsaid leaves exit 1 to the test).
func TestIncompleteRule(t *testing.T) {
	for _, tc := range []struct {
		code int
		has  bool
		read Read
		ok   bool
	}{
		{0, false, Complete, true}, {0, true, Complete, false}, {0, false, Partial, false}, {0, true, Unsaid, false},
		{4, true, Complete, true}, {4, true, Partial, true}, {4, false, Partial, false}, {4, false, Complete, false},
		{1, false, Complete, true}, {1, true, Complete, false}, {1, true, Partial, true}, {1, false, Partial, false},
		{1, true, Unsaid, true}, {1, false, Unsaid, true},
	} {
		if got := incompleteRule(tc.code, tc.has, tc.read) == ""; got != tc.ok {
			t.Errorf("exit %d, incomplete %v, read %d: ok %v, want %v", tc.code, tc.has, tc.read, got, tc.ok)
		}
	}
}
