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
