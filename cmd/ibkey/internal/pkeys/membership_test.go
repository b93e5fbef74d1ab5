package pkeys

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/jsonschematest"
	"github.com/ibkey/ibkey/internal/check"
)

// TestEmptyEntryMembership: an empty entry (0x0000, or 0x8000 with the membership bit
// set) is a member of nothing, so `pkeys --all` shows its membership as an empty cell
// ("-" in plain) and null in JSON, while every valid entry shows the membership its
// top bit gives; the schema rejects a membership on an empty entry.
func TestEmptyEntryMembership(t *testing.T) {
	for _, base := range [][]string{{"--sysfs", cmdtest.MLX5}, {"--demo"}} {
		r := cmdtest.Run(t, root, false, nil, append(base, "pkeys", "--all", "-o", "plain")...)
		code := 0
		if base[0] == "--sysfs" {
			code = 4 // entry mlx5_1/1[3] not read
		}
		if r.Code != code {
			t.Fatalf("%v: exit %d: %s", base, r.Code, r.Stderr)
		}
		empty := 0
		for _, line := range strings.Split(strings.TrimSpace(r.Stdout), "\n")[1:] {
			f := strings.Fields(line) // PORT INDEX PKEY MEMBERSHIP KEY NOTES IPOIB
			if len(f) != 7 || f[2] == "unreadable" {
				continue
			}
			p, err := check.ParsePKey(f[2])
			if err != nil {
				t.Fatalf("%v: %q: %v", base, line, err)
			}
			want := p.Membership().String()
			if !p.Valid() {
				want, empty = "-", empty+1
			}
			if f[3] != want {
				t.Errorf("%v: %q: membership %q, want %q", base, line, f[3], want)
			}
		}
		if empty == 0 {
			t.Fatalf("%v: no empty entry in --all:\n%s", base, r.Stdout)
		}

		args := append(base, "pkeys", "--all", "-o", "json")
		r = cmdtest.Run(t, root, false, nil, args...)
		var doc map[string]any
		if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
			t.Fatal(err)
		}
		var changed bool
		for _, port := range doc["ports"].([]any) {
			entries, _ := port.(map[string]any)["entries"].([]any)
			for _, e := range entries {
				e := e.(map[string]any)
				if _, unread := e["unreadable"]; unread {
					continue
				}
				p, _ := check.ParsePKey(e["pkey"].(string))
				var want any = p.Membership().String()
				if !p.Valid() {
					want = nil
				}
				if e["valid"] != p.Valid() || e["membership"] != want {
					t.Errorf("%v: entry %v: valid %v, membership %v; want %v, %v", base, e["index"], e["valid"], e["membership"], p.Valid(), want)
				}
				if !p.Valid() && !changed {
					e["membership"], changed = "limited", true
				}
			}
		}
		bad, _ := json.Marshal(doc)
		if err := jsonschematest.Check("pkeys", bad); err == nil {
			t.Errorf("%v: the schema accepts a membership on an empty entry", base)
		}
	}
}
