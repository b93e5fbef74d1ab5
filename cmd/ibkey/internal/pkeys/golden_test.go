package pkeys

import (
	"testing"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
)

// root is `ibkey` with pkeys only.
var root = cmdtest.WithCommands(func(f *cmdutil.Factory) *cobra.Command { return NewCmdPKeys(f, nil) })

// TestGolden compares the command's output, in each format, with
// testdata/TestGolden/*.golden (go test -update rewrites them).
func TestGolden(t *testing.T) {
	cmdtest.Golden(t, root, []cmdtest.GoldenCase{
		{Name: "pkeys_table", Args: []string{"--sysfs", cmdtest.MLX5, "pkeys", "-o", "table"}, Code: 4},
		{Name: "pkeys_plain", Args: []string{"--sysfs", cmdtest.MLX5, "pkeys"}, Code: 4},
		{Name: "pkeys_json", Args: []string{"--sysfs", cmdtest.MLX5, "pkeys", "-o", "json"}, Code: 4},
		{Name: "pkeys_port_all_plain", Args: []string{"--sysfs", cmdtest.MLX5, "pkeys", "mlx5_0", "1", "--all"}, Code: 0},
		{Name: "pkeys_port_slash_json", Args: []string{"--sysfs", cmdtest.MLX5, "pkeys", "mlx5_1/1", "-o", "json"}, Code: 4},
		{Name: "pkeys_iwarp_table", Args: []string{"--sysfs", cmdtest.MLX5, "pkeys", "irdma0", "-o", "table"}, Code: 0},
		{Name: "pkeys_simulator_plain", Args: []string{"--sysfs", "../../../../testdata/sysfs/simulator", "pkeys"}, Code: 0},
		{Name: "pkeys_find_plain", Args: []string{"--sysfs", cmdtest.MLX5, "pkeys", "mlx5_0", "1", "--find", "0x0005"}, Code: 0},
		// mlx5_1/1's entry 3 was not read: it may hold a full 0x8002 (the index found
		// is then not the one used) or 0x8010: the ports found are printed, exit 4.
		{Name: "pkeys_find_limited_table", Args: []string{"--sysfs", cmdtest.MLX5, "pkeys", "--find", "80:02", "-o", "table"}, Code: 4, Partial: true},
		{Name: "pkeys_find_json", Args: []string{"--sysfs", cmdtest.MLX5, "pkeys", "--find", "0x8010", "-o", "json"}, Code: 4, Partial: true},
		{Name: "pkeys_find_missing", Args: []string{"--sysfs", cmdtest.MLX5, "pkeys", "mlx5_0", "1", "--find", "0x0009"}, Code: 1},
		// IPoIB interface names (issue 12 item 8).
		{Name: "pkeys_ipoib_child", Args: []string{"--sysfs", cmdtest.MLX5, "pkeys", "ib0.8001"}, Code: 0},
		{Name: "pkeys_find_index_differs", Args: []string{"--sysfs", "../../../../testdata/sysfs/cantalk", "pkeys", "--find", "0x0002"}, Code: 0},
		{Name: "demo_pkeys_table", Args: []string{"--demo", "pkeys", "-o", "table"}, Code: 0},
	}, nil)
}
