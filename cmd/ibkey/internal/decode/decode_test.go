package decode

import (
	"testing"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
)

// TestFlagParsing: the arguments reach the options; nothing runs, nothing is read.
func TestFlagParsing(t *testing.T) {
	r, got := cmdtest.Options(t, NewCmdPKey, "--sysfs", "/nonexistent", "pkey", "0x8001", "7fff", "-o", "json")
	if r.Code != 0 || got == nil || len(got.Values) != 2 || got.Values[1] != "7fff" {
		t.Fatalf("%+v, options %+v", r, got)
	}
	if f := got.Format; f != cmdutil.FormatJSON {
		t.Errorf("format %v", f)
	}
}
