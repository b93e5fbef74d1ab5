package cmdutil

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadNodeNameMap: the map's problems are bad input (exit 2) naming the flag, and
// the file (a directory, a missing file) or its line.
func TestReadNodeNameMap(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "map")
	if err := os.WriteFile(file, []byte("0x1 \"one\"\nnode01 0x2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		dir:                           "--node-name-map: ",
		filepath.Join(dir, "missing"): "--node-name-map: ",
		file:                          "--node-name-map " + file + `:2: "node01" is not a GUID`,
	} {
		if _, err := ReadNodeNameMap(path); err == nil || ExitCode(err) != ExitUsage || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: %v (exit %d), want a usage error starting %q", path, err, ExitCode(err), want)
		}
	}
}
