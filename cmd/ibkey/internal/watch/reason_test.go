package watch

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFabricAccessReason: the PortInfo counters without fabric access are n/a with a
// reason that names the MAD flags that give it (query's names none); users see it as
// before, on stderr and in JSON.
func TestFabricAccessReason(t *testing.T) {
	const why = "needs fabric access (PortInfo, not in sysfs: pass --ca DEV as root or the rdma group, or --ibsim)"
	dir := watchTree(t)
	r := runIbkey(t, "--sysfs", dir, "watch", "counters", "mlx5_0/2", "--once")
	for _, c := range []string{"pkey_violations", "qkey_violations"} {
		if line := "note: " + c + ": n/a: " + why + "\n"; r.Code != 0 || !strings.Contains(r.Stderr, line) {
			t.Errorf("exit %d, stderr %q; want %q", r.Code, r.Stderr, line)
		}
	}
	r = runIbkey(t, "--sysfs", dir, "watch", "counters", "mlx5_0/2", "--once", "-o", "json")
	if want := `"unavailable":"` + why + `"`; r.Code != 0 || strings.Count(strings.ReplaceAll(r.Stdout, `": "`, `":"`), want) != 2 {
		t.Errorf("json: exit %d, want %s twice:\n%s", r.Code, want, r.Stdout)
	}
}

// TestCounterErrorsExit4: a counter that could not be read (a value that does not fit
// it, an empty file) shows error(...) in the sample, is named once on stderr, and the
// exit is 4 (red-team finding 5); the other counters are shown as read.
func TestCounterErrorsExit4(t *testing.T) {
	dir := watchTree(t)
	c := filepath.Join(dir, "class/infiniband/mlx5_0/ports/1/counters")
	if err := errors.Join(os.WriteFile(filepath.Join(c, "port_xmit_constraint_errors"), []byte("300\n"), 0o644),
		os.WriteFile(filepath.Join(c, "port_rcv_constraint_errors"), nil, 0o644)); err != nil {
		t.Fatal(err)
	}
	r := runIbkey(t, "--sysfs", dir, "watch", "counters", "mlx5_0/1", "--once", "-o", "plain")
	for _, want := range []string{"warning: mlx5_0/1: port_xmit_constraint_errors not read: \"300\" does not fit in 8 bits\n",
		"warning: mlx5_0/1: port_rcv_constraint_errors not read: "} {
		if r.Code != 4 || !strings.Contains(r.Stderr, want) || !strings.Contains(r.Stdout, "port_xmit_constraint_errors=error(") {
			t.Errorf("exit %d, stderr %q; want 4 and %q\n%s", r.Code, r.Stderr, want, r.Stdout)
		}
	}
	if r := runIbkey(t, "--sysfs", dir, "watch", "counters", "mlx5_0/2", "--once", "-o", "plain"); r.Code != 0 {
		t.Errorf("the port read whole: exit %d: %s", r.Code, r.Stderr)
	}
}
