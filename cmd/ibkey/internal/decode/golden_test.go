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

// TestErrors: a bad value exits 2 naming it and what is accepted.
func TestErrors(t *testing.T) {
	cmdtest.Errors(t, root, []cmdtest.ErrorCase{
		{Args: []string{"decode", "pkey", "0x10000"}, Code: 2, Stderr: `ibkey: invalid P_Key "0x10000": larger than 0xffff (accepted: hex 0x8001, 8001 or colon form 80:01, at most 0xffff)`},
		{Args: []string{"decode", "pkey", "0x8001", "zz"}, Code: 2, Stderr: `ibkey: invalid P_Key "zz": "z" is not a hex digit`},
		{Args: []string{"decode", "qkey", "--", "-5"}, Code: 2, Stderr: `ibkey: invalid Q_Key "-5": signs are not allowed`},
		{Args: []string{"decode", "pkey"}, Code: 2, Stderr: "requires at least 1 arg"},
		{Args: []string{"decode", "nope"}, Code: 2, Stderr: ""},
		{Args: []string{"decode", "pkey", "--bogus", "1"}, Code: 2, Stderr: "unknown flag: --bogus (see 'ibkey decode pkey --help')"},
	})
}
