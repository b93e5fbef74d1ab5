package decode

import (
	"testing"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
)

// root is `ibkey` with decode only.
var root = cmdtest.WithCommands(func(f *cmdutil.Factory) *cobra.Command { return NewCmdDecode(f) })

// TestGolden compares the command's output, in each format, with
// testdata/TestGolden/*.golden (go test -update rewrites them).
func TestGolden(t *testing.T) {
	cmdtest.Golden(t, root, []cmdtest.GoldenCase{
		{Name: "decode_pkey_table", Args: []string{"decode", "pkey", "0x8001", "0x0001", "0x7fff", "0xffff", "0x0000", "0x8000", "-o", "table"}, Code: 0},
		{Name: "decode_pkey_plain", Args: []string{"decode", "pkey", "0x8001", "01", "7f:ff", "FFFF", "0", "8000"}, Code: 0},
		{Name: "decode_pkey_json", Args: []string{"decode", "pkey", "0x8001", "0x7fff", "0x0000", "-o", "json"}, Code: 0},
		{Name: "decode_qkey_table", Args: []string{"decode", "qkey", "0x80010000", "0xb1b", "0x80000001", "0x12345678", "0x90000000", "-o", "table"}, Code: 0},
		{Name: "decode_qkey_plain", Args: []string{"decode", "qkey", "0x80010000", "b1b", "0x8fffffff"}, Code: 0},
		{Name: "decode_qkey_json", Args: []string{"decode", "qkey", "0x80010000", "0x11", "-o", "json"}, Code: 0},
	}, nil)
}
