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
// before, on stderr and in JSON, and the exit is 4: they exist and were not read.
func TestFabricAccessReason(t *testing.T) {
	const why = "needs fabric access (PortInfo, not in sysfs: pass --ca DEV as root or the rdma group, or --ibsim)"
	dir := watchTree(t)
	r := runIbkey(t, "--sysfs", dir, "watch", "counters", "mlx5_0/2", "--once")
	for _, c := range []string{"pkey_violations", "qkey_violations"} {
		if line := "note: " + c + ": n/a: " + why + "\n"; r.Code != 4 || !strings.Contains(r.Stderr, line) {
			t.Errorf("exit %d, stderr %q; want %q", r.Code, r.Stderr, line)
		}
	}
	r = runIbkey(t, "--sysfs", dir, "watch", "counters", "mlx5_0/2", "--once", "-o", "json")
	if want := `"unavailable":"` + why + `"`; r.Code != 4 || strings.Count(strings.ReplaceAll(r.Stdout, `": "`, `":"`), want) != 2 {
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
	// The other port's counters were read (its PortInfo ones not: exit 4 for those,
	// named, but no read error).
	if r := runIbkey(t, "--sysfs", dir, "watch", "counters", "mlx5_0/2", "--once", "-o", "plain"); r.Code != 4 || strings.Contains(r.Stdout, "error(") ||
		!strings.Contains(r.Stderr, "warning: pkey_violations, qkey_violations not read on 1 port (n/a") {
		t.Errorf("the port read but for PortInfo's counters: exit %d: %s", r.Code, r.Stderr)
	}
}

// TestNotReadExit4 (rule 1: show what was read, name what was not, exit 4): a counter
// the port has that the sources could not read (an InfiniBand port's PortInfo
// counters from sysfs alone) is n/a with its reason and makes the exit 4, with one
// warning naming the counters, how many ports, and what reads them; a counter the
// port does not have (an iWARP port's P_Key and Q_Key counters, a device without PMA
// counters/) is n/a too, but that is the whole answer: exit 0.
func TestNotReadExit4(t *testing.T) {
	dir := watchTree(t)
	r := runIbkey(t, "--sysfs", dir, "watch", "counters", "--once")
	want := "warning: pkey_violations, qkey_violations not read on 2 ports (n/a: the notes above say why and what reads them; --lid LID with --ca or --ibsim reads a port over the fabric)\n"
	if r.Code != 4 || !strings.HasSuffix(r.Stderr, want) {
		t.Errorf("IB ports from sysfs: exit %d, stderr %q; want 4 ending with %q", r.Code, r.Stderr, want)
	}
	r = runIbkey(t, "--sysfs", mlx5, "watch", "counters", "irdma0/1", "--once")
	if r.Code != 0 || strings.Contains(r.Stderr, "not read") || !strings.Contains(r.Stdout, "pkey_violations=n/a(iWARP_has_no_P_Keys_or_Q_Keys:_ibv_query_port_reports_0)") ||
		!strings.Contains(r.Stdout, "port_rcv_constraint_errors=n/a(no_PMA_counters)") {
		t.Errorf("an iWARP port without PMA counters: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	// A RoCE port has no PortInfo, but its P_Key and Q_Key violations exist where the
	// driver counts them, and only verbs read them: from a tree that does not say the
	// driver they are not read (exit 4), never "none by nature".
	r = runIbkey(t, "--sysfs", mlx5, "watch", "counters", "mlx5_2/1", "--once")
	if r.Code != 4 || !strings.Contains(r.Stderr, "note: qkey_violations: n/a: no PortInfo: the Ethernet link layer has no QP0 (no SMPs); verbs may read it on the host itself (ibv_query_port): the device's driver is not known") ||
		!strings.Contains(r.Stderr, "warning: pkey_violations, qkey_violations not read on 1 port") {
		t.Errorf("a RoCE port of a driver not known: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}
