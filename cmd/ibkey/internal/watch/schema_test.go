package watch

import (
	"bytes"
	"testing"
	"time"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/jsonschematest"
	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/query"
)

// TestJSONSchema: every line of `watch counters -o json` follows
// schemas/watch-counters.schema.json: the first sample (no deltas), later ones, every
// counter (--all-counters), counters not read (n/a with the reason) and a port
// without counters/. The watch pkeys events: TestPKeyEventsJSONSchema and TestWatchPKeys.
func TestJSONSchema(t *testing.T) {
	for _, args := range [][]string{
		{"--demo", "watch", "counters", "--count", "3", "--interval", "10ms", "-o", "json"},
		{"--demo", "watch", "counters", "--count", "2", "--interval", "10ms", "--all-counters", "-o", "json"},
		{"--sysfs", mlx5, "watch", "counters", "--once", "-o", "json"},
		{"--sysfs", mlx5, "watch", "counters", "mlx5_2/1", "--count", "2", "--interval", "10ms", "-o", "json"},
	} {
		r := runIbkey(t, args...)
		if r.Code != 0 && r.Code != 4 { // 4: counters not read (n/a), in the schema too
			t.Fatalf("%v: exit %d: %s", args, r.Code, r.Stderr)
		}
		jsonschematest.Lines(t, "watch-counters", r.Stdout)
	}
}

// TestPKeyEventsJSONSchema: every kind of watch pkeys event (added, removed,
// membership, replaced, unreadable, readable, port_error, port_back), as the command
// prints it with -o json, follows schemas/watch-pkeys.schema.json.
func TestPKeyEventsJSONSchema(t *testing.T) {
	e := func(v uint16) query.Entry { return query.Entry{PKey: check.PKey(v)} }
	unread := query.Entry{Unreadable: "EIO"}
	tables := []*query.TableRead{
		{Entries: []query.Entry{e(0xffff), e(0x8001), e(0x0002), e(0x0000), e(0x8004), e(0x8005)}},
		{Entries: []query.Entry{e(0xffff), e(0x0000), e(0x8002), e(0x8030), unread, e(0x8006)}},
		{Err: "read failed: no such device"},
		{Entries: []query.Entry{e(0xffff), e(0x0000), e(0x8002), e(0x8030), e(0x8004), e(0x8006)}},
	}
	seen := map[string]bool{}
	var out bytes.Buffer
	r := query.PortRef{Device: "mlx5_0", Port: 1}
	now := time.Date(2026, 11, 22, 21, 0, 0, 0, time.UTC)
	for i := 1; i < len(tables); i++ {
		for _, ev := range tableEvents(r, tables[i-1], tables[i], nil) {
			ev.Time = now.Format(time.RFC3339Nano)
			seen[ev.Change] = true
			if err := printPKeyEvent(&out, cmdutil.FormatJSON, now, ev); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The table 0 -> 3 directly: readable again.
	for _, ev := range tableEvents(r, tables[1], tables[3], nil) {
		ev.Time = now.Format(time.RFC3339Nano)
		seen[ev.Change] = true
		if err := printPKeyEvent(&out, cmdutil.FormatJSON, now, ev); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{"added", "removed", "membership", "replaced", "unreadable", "readable", "port_error", "port_back"} {
		if !seen[k] {
			t.Errorf("no %s event generated: %v", k, seen)
		}
	}
	jsonschematest.Lines(t, "watch-pkeys", out.String())
}
