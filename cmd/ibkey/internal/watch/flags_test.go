package watch

import (
	"strings"
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

// TestIntervalAsTyped: a refused --interval is quoted as it was typed ("0", not "0s").
func TestIntervalAsTyped(t *testing.T) {
	root := cmdtest.WithCommands(func(f *cmdutil.Factory) *cobra.Command { return NewCmdWatch(f) })
	for typed, want := range map[string]string{
		"0":     "ibkey: invalid --interval 0 (accepted: a duration of at least 10ms",
		"0.001": "ibkey: invalid --interval 0.001 (accepted:",
		"5ms":   "ibkey: invalid --interval 5ms (accepted:",
	} {
		r := cmdtest.Run(t, root, false, nil, "--demo", "watch", "pkeys", "--interval", typed)
		if r.Code != cmdutil.ExitUsage || !strings.HasPrefix(r.Stderr, want) {
			t.Errorf("--interval %s: exit %d, stderr %q; want exit 2 and %q", typed, r.Code, r.Stderr, want)
		}
	}
}
