package query

import (
	"testing"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/ibverbs"
)

// TestPortRulesLocal: a local port that is DOWN answers not-active (issue: can-talk
// said yes, exit 0).
func TestPortRulesLocal(t *testing.T) {
	calls := 0
	eps, err := ResolveEndpointsFrom(EndpointSources{Host: fixtureHost(&calls)}, specs(t, "mlx5_0/1", "mlx5_1/2")...)
	if err != nil {
		t.Fatal(err)
	}
	if eps[1].Endpoint.State == "" {
		t.Errorf("state %q", eps[1].Endpoint.State)
	}
	if v := check.CanTalk(eps[0].Endpoint, eps[1].Endpoint); v.Kind != check.VerdictNotActive {
		t.Errorf("%s %v", v.Kind, v.Reasons)
	}
	if eps[0].Endpoint.Subnet == nil || eps[0].Endpoint.Subnet.GIDPrefix == 0 {
		t.Errorf("mlx5_0/1 subnet %+v", eps[0].Endpoint.Subnet)
	}
}

// TestFindPKeyUnread (issue 13 item 5): entries 0 and 1 unreadable; the key is not in
// the rest: "unknown", never "not in the table". (The exit codes of these outcomes are
// pkeys --find's: its TestJSONIncomplete.)
func TestFindPKeyUnread(t *testing.T) {
	table := &Table{Entries: []Entry{{Index: 0, Unreadable: "EIO"}, {Index: 1, Unreadable: "EIO"}, {Index: 2, PKey: 0x8001}, {Index: 3, PKey: 0x0002}}}
	v := &PortView{Device: &ibverbs.Device{Name: "mlx5_0"}, Port: &ibverbs.Port{Device: "mlx5_0", Num: 1}, Table: table}
	for _, tc := range []struct {
		key  check.PKey
		want FindOutcome
	}{{0x7fff, FindUnknown}, {0x8001, FindFound}, {0x0002, FindFound}, {0, FindNotFound}} {
		r := FindPKey(v, tc.key)
		if r.Outcome != tc.want || len(r.Unread) != 2 {
			t.Errorf("%s: %s (%q); want %s", tc.key, r.Outcome, r.Reason, tc.want)
		}
		if tc.key == 0x0002 && r.Reason == "" {
			t.Errorf("a limited entry found with unread entries should say a full one may be unread")
		}
	}
	table.Entries[0], table.Entries[1] = Entry{Index: 0, PKey: 0xffff}, Entry{Index: 1}
	if r := FindPKey(v, 0x0005); r.Outcome != FindNotFound {
		t.Errorf("all read, absent: %s", r.Outcome)
	}
}
