package demo

import (
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/ibverbs"
)

func TestMovers(t *testing.T) {
	ms := movers
	if len(ms) < 4 {
		t.Fatalf("%d movers", len(ms))
	}
	widths := ibverbs.CounterWidths
	for _, m := range ms {
		if _, ok := widths[m.Counter]; !ok {
			t.Errorf("%s/%d: %s is not a PortCounters counter", m.Device, m.Port, m.Counter)
		}
		if _, err := FS().Open(m.path()); err != nil {
			t.Errorf("%s: not in the embedded tree: %v", m.path(), err)
		}
	}
}

func TestMoverValue(t *testing.T) {
	steady := Mover{Counter: "port_rcv_constraint_errors", Start: 12, PerSecond: 1}
	saturating := Mover{Counter: "port_xmit_constraint_errors", Start: 243, PerSecond: 1}
	resetting := Mover{Counter: "port_rcv_constraint_errors", PerSecond: 2, ResetEvery: 20 * time.Second}
	cases := []struct {
		m    Mover
		at   time.Duration
		want uint64
	}{
		{steady, 0, 12}, {steady, 2500 * time.Millisecond, 14},
		{saturating, 11 * time.Second, 254}, {saturating, 12 * time.Second, 255}, {saturating, time.Hour, 255},
		{resetting, 19 * time.Second, 38}, {resetting, 20 * time.Second, 0}, {resetting, 21 * time.Second, 2},
		{Mover{Counter: "symbol_error", Start: 65530, PerSecond: 10}, time.Minute, 65535},
	}
	for _, c := range cases {
		if got := c.m.Value(c.at); got != c.want {
			t.Errorf("%+v at %s = %d, want %d", c.m, c.at, got, c.want)
		}
	}
}

// TestLiveSysfs reads the moving counters with the ordinary sysfs reader.
func TestLiveSysfs(t *testing.T) {
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	sys := LiveSysfs(func() time.Time { return now })
	read := func(dev string, port int, name string) uint64 {
		t.Helper()
		c := sys.ReadCounter(dev, port, name)
		if c.Err != nil {
			t.Fatal(c.Err)
		}
		return c.Value
	}
	if v := read("mlx5_0", 1, "port_rcv_constraint_errors"); v != 12 {
		t.Errorf("at start: %d (the tree's value is 12)", v)
	}
	now = now.Add(30 * time.Second)
	if v := read("mlx5_0", 1, "port_rcv_constraint_errors"); v != 42 {
		t.Errorf("steady after 30s: %d", v)
	}
	if v := read("mlx5_1", 1, "port_xmit_constraint_errors"); v != 255 {
		t.Errorf("saturating after 30s: %d", v)
	}
	if v := read("mlx5_1", 1, "port_rcv_constraint_errors"); v != 20 {
		t.Errorf("resetting after 30s (10s into its period): %d", v)
	}
	if v := read("mlx5_1", 2, "port_rcv_constraint_errors"); v != 0 {
		t.Errorf("quiet DOWN port: %d", v)
	}
	// Everything else is the embedded tree.
	p, err := sys.Port("mlx5_0", 1)
	if err != nil || p.State.Name != "ACTIVE" || !p.HasCounters {
		t.Errorf("port through the overlay: %+v %v", p, err)
	}
}
