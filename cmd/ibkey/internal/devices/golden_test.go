package devices

import (
	"testing"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
)

// root is `ibkey` with devices only.
var root = cmdtest.WithCommands(func(f *cmdutil.Factory) *cobra.Command { return NewCmdDevices(f, nil) })

// TestGolden compares the command's output, in each format, with
// testdata/TestGolden/*.golden (go test -update rewrites them).
func TestGolden(t *testing.T) {
	cmdtest.Golden(t, root, []cmdtest.GoldenCase{
		{Name: "devices_table", Args: []string{"--sysfs", cmdtest.MLX5, "devices", "-o", "table"}, Code: 4},
		{Name: "devices_plain", Args: []string{"--sysfs", cmdtest.MLX5, "devices"}, Code: 4},
		{Name: "devices_json", Args: []string{"--sysfs", cmdtest.MLX5, "devices", "-o", "json"}, Code: 4},
		{Name: "demo_devices_table", Args: []string{"--demo", "devices", "-o", "table"}, Code: 0},
	}, nil)
}
