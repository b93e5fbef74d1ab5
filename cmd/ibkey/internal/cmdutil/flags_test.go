package cmdutil

import (
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// TestPlainDurations: interval flags read a plain number as seconds, --mad-timeout as
// milliseconds; units still work; other duration flags are unchanged.
func TestPlainDurations(t *testing.T) {
	cases := []struct {
		flag, value string
		want        time.Duration
		bad         bool
	}{
		{"interval", "5", 5 * time.Second, false},
		{"interval", "0.5", 500 * time.Millisecond, false},
		{"interval", "250ms", 250 * time.Millisecond, false},
		{"sweep-interval", "90", 90 * time.Second, false},
		{"mad-timeout", "100", 100 * time.Millisecond, false},
		{"mad-timeout", "2s", 2 * time.Second, false},
		{"timeout", "5", 0, true}, // not an interval: a unit is required
		{"interval", "5x", 0, true},
		{"interval", "", 0, true},
	}
	for _, tc := range cases {
		c := &cobra.Command{Use: "x"}
		d := new(time.Duration)
		switch {
		case isIntervalFlag(tc.flag):
			IntervalVar(c, d, tc.flag, 0, "u")
		case tc.flag == "mad-timeout":
			d = &AddMADFlags(c, NewFactory(&IOStreams{}, func(string) string { return "" }, nil)).MADTimeout
		default:
			c.Flags().DurationVar(d, tc.flag, 0, "u")
		}
		err := c.Flags().Set(tc.flag, tc.value)
		if (err != nil) != tc.bad || (!tc.bad && *d != tc.want) {
			t.Errorf("--%s %q: %v, err %v; want %v (error %v)", tc.flag, tc.value, *d, err, tc.want, tc.bad)
		}
		if u := c.Flags().Lookup(tc.flag).Usage; tc.flag == "interval" && u != "u (a plain number is seconds)" {
			t.Errorf("usage %q", u)
		}
	}
}
