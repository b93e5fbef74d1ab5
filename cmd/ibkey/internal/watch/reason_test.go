package watch

import (
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
