package watch

import (
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
)

// TestFlagParsing: each watch command gets its own options; only counters has the MAD
// flags (watch pkeys reads sysfs only).
func TestFlagParsing(t *testing.T) {
	var counters *CountersOptions
	var pkeys *PKeysOptions
	root := cmdtest.WithCommands(func(f *cmdutil.Factory) *cobra.Command {
		c := &cobra.Command{Use: "watch"}
		c.AddCommand(NewCmdCounters(f, func(o *CountersOptions) error { counters = o; return nil }),
			NewCmdPKeys(f, func(o *PKeysOptions) error { pkeys = o; return nil }))
		return c
	})
	r := cmdtest.Run(t, root, false, nil, "watch", "counters", "--lid", "4,9", "--interval", "2s", "--count", "3", "--all-counters", "--ibsim")
	if r.Code != 0 || counters == nil || len(counters.Fabric) != 2 || counters.Interval != 2*time.Second || counters.Count != 3 || !counters.All || counters.Ctx == nil {
		t.Fatalf("%+v, options %+v", r, counters)
	}
	r = cmdtest.Run(t, root, false, nil, "watch", "pkeys", "mlx5_0/1", "mlx5_1")
	if r.Code != 0 || pkeys == nil || len(pkeys.Selectors) != 2 || pkeys.Selectors[0].Port != 1 || pkeys.Interval != time.Second {
		t.Fatalf("%+v, options %+v", r, pkeys)
	}
	cmdtest.Errors(t, root, []cmdtest.ErrorCase{
		{Args: []string{"watch", "pkeys", "--ibsim"}, Code: 2, Stderr: "--ibsim: 'ibkey watch pkeys' sends no MADs"},
		{Args: []string{"watch", "pkeys", "--lid", "3"}, Code: 2, Stderr: "unknown flag: --lid"},
	})
}
