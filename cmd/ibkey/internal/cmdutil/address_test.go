package cmdutil

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/query"
)

// TestAddressHints: a fabric address typed where a local device goes names the flag.
func TestAddressHints(t *testing.T) {
	cases := map[string]string{
		"4":                  "use --lid 4 (-L 4)",
		"0x1a":               "use --lid 0x1a (-L 0x1a)",
		"0,1,3":              "use --dr 0,1,3 (-D 0,1,3)",
		"0x0002c90300000204": "use --guid 0x0002c90300000204 (-G 0x0002c90300000204)",
		"mlx5_0":             "",
		"ib0.8001":           "",
	}
	for arg, want := range cases {
		var a AddressFlags
		_, err := a.Selectors([]string{arg})
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%q: %v; want %q", arg, err, want)
		}
	}
	var a AddressFlags
	a.GUID = "0xzz"
	if _, err := a.Selectors(nil); err == nil || !strings.Contains(err.Error(), `invalid --guid "0xzz"`) {
		t.Errorf("bad --guid: %v", err)
	}
}

// TestReadFabricFileNamesTheFlag: query's *FabricFileError names the file; cmd adds
// the flag, and the error stays a usage error (exit 2) that errors.As still finds.
func TestReadFabricFileNamesTheFlag(t *testing.T) {
	dir := t.TempDir()
	notFabric := filepath.Join(dir, "x.json")
	if err := os.WriteFile(notFabric, []byte(`{"format":"other","version":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path, prefix string
	}{
		{filepath.Join(dir, "missing.json"), "--fabric-file: "},
		{notFabric, "--fabric-file " + notFabric + ": "},
	} {
		_, err := ReadFabricFile(tc.path)
		var fe *query.FabricFileError
		if !strings.HasPrefix(fmt.Sprint(err), tc.prefix) || !errors.As(err, &fe) || ExitCode(err) != ExitUsage {
			t.Errorf("ReadFabricFile(%s): %v (exit %d), want %q..., a *query.FabricFileError, exit %d", tc.path, err, ExitCode(err), tc.prefix, ExitUsage)
		}
		if _, qerr := query.ReadFabricFile(tc.path); strings.Contains(fmt.Sprint(qerr), "--fabric-file") {
			t.Errorf("query.ReadFabricFile(%s): %v names a flag", tc.path, qerr)
		}
	}
}
