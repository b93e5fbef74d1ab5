package cmdutil

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

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
	// --guid takes a GUID alone: an endpoint's options after it (pkey=, index=) are
	// refused, never read past (they were, and were silently ignored).
	for _, g := range []string{"0xzz", "0x0002c90300000204,pkey=0x8001", "0x0002c90300000204,index=1", "guid=0x0002c90300000204"} {
		a := AddressFlags{GUID: g}
		if _, err := a.Selectors(nil); ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), fmt.Sprintf("invalid --guid %q", g)) {
			t.Errorf("bad --guid %q: %v", g, err)
		}
	}
	for _, g := range []string{"0x0002c90300000204", "2c90300000204", "0002:c903:0000:0204"} {
		if _, err := (&AddressFlags{GUID: g}).Selectors(nil); err != nil {
			t.Errorf("--guid %q: %v", g, err)
		}
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

// TestAddressFlagRepeated: pflag's string flags keep only the last of two values, so
// `--lid 6 --lid 7` watched lid 7 alone and `--dr 0 --dr 0,1` read one of the two
// paths without a word. --lid adds to its list; --dr, --guid and --port refuse.
func TestAddressFlagRepeated(t *testing.T) {
	parse := func(args ...string) (*AddressFlags, error) {
		var a AddressFlags
		c := &cobra.Command{Use: "x"}
		a.RegisterFor(c, &Factory{})
		return &a, c.ParseFlags(args)
	}
	a, err := parse("--lid", "6", "-L", "7-9", "--lid", "12")
	if err != nil || a.LID != "6,7-9,12" {
		t.Errorf("--lid 6 -L 7-9 --lid 12: %q, %v; want 6,7-9,12", a.LID, err)
	}
	if a, err := parse("--lid", "6"); err != nil || a.LID != "6" {
		t.Errorf("--lid 6: %q, %v", a.LID, err)
	}
	for _, args := range [][]string{
		{"--dr", "0", "--dr", "0,1"},
		{"-G", "0x1", "--guid", "0x2"},
		{"--lid", "4", "--port", "1", "--port", "all"},
	} {
		_, err := parse(args...)
		if err == nil || !strings.Contains(err.Error(), "given twice") {
			t.Errorf("%v: %v, want a refusal naming both values", args, err)
		}
	}
}

// TestFabricLabel: several LIDs are labelled by the lowest and highest, whatever the
// order given (before: --lid 8-10,3 said "lid 8 .. lid 3").
func TestFabricLabel(t *testing.T) {
	for lids, want := range map[string]string{
		"9":      "fabric: lid 9 via x",
		"3-5":    "fabric: 3 LIDs (lid 3 .. lid 5) via x",
		"8-10,3": "fabric: 4 LIDs (lid 3 .. lid 10) via x",
	} {
		a := &AddressFlags{LID: lids}
		sels, err := a.Selectors(nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := FabricLabel(sels, "x"); got != want {
			t.Errorf("--lid %s: %q, want %q", lids, got, want)
		}
	}
}
