package watch

import (
	"testing"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/jsonschematest"
)

// TestJSONSchema: every line of `watch counters -o json` follows
// schemas/watch-counters.schema.json: the first sample (no deltas), later ones, every
// counter (--all-counters), counters not read (n/a with the reason) and a port
// without counters/. The watch pkeys events are validated in TestWatchPKeys.
func TestJSONSchema(t *testing.T) {
	for _, args := range [][]string{
		{"--demo", "watch", "counters", "--count", "3", "--interval", "10ms", "-o", "json"},
		{"--demo", "watch", "counters", "--count", "2", "--interval", "10ms", "--all-counters", "-o", "json"},
		{"--sysfs", mlx5, "watch", "counters", "--once", "-o", "json"},
		{"--sysfs", mlx5, "watch", "counters", "mlx5_2/1", "--count", "2", "--interval", "10ms", "-o", "json"},
	} {
		r := runIbkey(t, args...)
		if r.Code != 0 {
			t.Fatalf("%v: exit %d: %s", args, r.Code, r.Stderr)
		}
		jsonschematest.Lines(t, "watch-counters", r.Stdout)
	}
}
