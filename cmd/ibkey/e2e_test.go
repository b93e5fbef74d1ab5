package main

import (
	"bytes"
	"errors"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestEndToEnd builds the binary and runs it like a user: real process, real exit
// codes, stdout not a terminal.
func TestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "ibkey")
	build := exec.Command("go", "build", "-ldflags", "-X main.stampedVersion=e2e", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	fixture, _ := filepath.Abs(mlx5)
	cases := []struct {
		args   []string
		env    []string
		code   int
		stdout string
		stderr string
	}{
		{[]string{"--version"}, nil, 0, "ibkey version e2e", ""},
		{[]string{"--demo", "pkeys", "mlx5_0", "1"}, nil, 0, "mlx5_0/1  1      0x8001  full", "demo host"},
		{[]string{"pkeys", "mlx5_0", "1", "--find", "0x8005"}, []string{"IBKEY_SYSFS=" + fixture}, 0, "4\n", ""},
		// mlx5_1/1 has an entry that cannot be read: 0x0042 may be there, so not a definite no.
		{[]string{"pkeys", "--find", "0x0042"}, []string{"IBKEY_SYSFS=" + fixture}, 4, "", "1 P_Key table entry could not be read (index 3)"},
		{[]string{"--sysfs", fixture, "pkeys", "mlx5_7"}, nil, 3, "", "ibkey: no device or IPoIB interface mlx5_7 (devices: irdma0, mlx5_0, mlx5_1, mlx5_2; IPoIB interfaces: ib0, ib0.8001, ib0.8002, ib0.8004, ib1)\n"},
		{[]string{"--sysfs", fixture, "pkeys", "mlx5_0", "9"}, nil, 3, "", "ibkey: no port 9 on mlx5_0 (ports: 1)\n"},
		{[]string{"--sysfs", fixture, "pkeys", "../../../etc/passwd"}, nil, 2, "", `invalid device ".."`},
		{[]string{"decode", "pkey", "0x1ffff"}, nil, 2, "", `ibkey: invalid P_Key "0x1ffff": larger than 0xffff`},
		{[]string{"decode", "qkey", "0xg"}, nil, 2, "", `ibkey: invalid Q_Key "0xg"`},
		{[]string{"decode", "pkey", "0x8001", "-o", "json"}, nil, 0, `"membership": "full"`, ""},
		{[]string{"--sysfs", "/nonexistent", "devices"}, nil, 3, "", "no RDMA devices"},
		{[]string{"frobnicate"}, nil, 2, "", `unknown command "frobnicate"`},
		// One binary: the words of commands that once ran in a second binary are plain
		// arguments elsewhere, and those commands run here.
		{[]string{"decode", "pkey", "counters"}, nil, 2, "", `ibkey: invalid P_Key "counters"`},
		{[]string{"exporter", "--help"}, nil, 0, "Usage:", ""},
		{[]string{"--sysfs", fixture, "watch", "counters", "--once", "-o", "json"}, nil, 4, `"port_rcv_constraint_errors"`, "pkey_violations, qkey_violations not read on"},
		{[]string{"completion", "bash"}, nil, 0, "__start_ibkey", ""},
		{[]string{"can-talk", "0x8001", "0x0001"}, nil, 0, "YES: 0x8001 and 0x0001 can talk\n", ""},
		{[]string{"--demo", "can-talk", "mlx5_1/1", "0x0002"}, nil, 1, "NO: mlx5_1/1 and 0x0002 cannot talk\n", "demo host"},
		{[]string{"can-talk", "0x0002c90300000204", "0x8001"}, nil, 2, "", `ibkey: endpoint "0x0002c90300000204" is a port GUID`},
		{[]string{"--sysfs", fixture, "can-talk", "mlx5_7/1", "0x8001"}, nil, 3, "", "ibkey: no device mlx5_7 (devices: irdma0, mlx5_0, mlx5_1, mlx5_2)\n"},
	}
	for _, tc := range cases {
		cmd := exec.Command(bin, tc.args...)
		cmd.Env = append([]string{"PATH=/usr/bin:/bin"}, tc.env...)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		name := "ibkey " + strings.Join(tc.args, " ")
		if code != tc.code {
			t.Errorf("%s: exit %d, want %d (stderr %q)", name, code, tc.code, errOut.String())
		}
		if !strings.Contains(out.String(), tc.stdout) {
			t.Errorf("%s: stdout %q, want %q", name, out.String(), tc.stdout)
		}
		if !strings.Contains(errOut.String(), tc.stderr) {
			t.Errorf("%s: stderr %q, want %q", name, errOut.String(), tc.stderr)
		}
		if strings.Contains(errOut.String(), "panic") || strings.Contains(errOut.String(), "goroutine ") {
			t.Errorf("%s: panicked:\n%s", name, errOut.String())
		}
	}
}

// TestSaveSysfsRoundTrip: a tree saved by scripts/save-sysfs reads the same as the original.
func TestSaveSysfsRoundTrip(t *testing.T) {
	saved := filepath.Join(t.TempDir(), "saved")
	fixture, _ := filepath.Abs(mlx5)
	cmd := exec.Command("../../scripts/save-sysfs", saved)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "SYSFS=" + fixture}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("save-sysfs: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "skipped unreadable") {
		t.Errorf("the unreadable pkey entry must be reported, got:\n%s", out)
	}
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"devices", "-o", "json"}, 4}, // mlx5_1/1[3] is not read (the entry skipped)
		{[]string{"pkeys", "mlx5_0", "-o", "json"}, 0},
		{[]string{"pkeys", "mlx5_1", "2"}, 0},
	} {
		args := tc.args
		a := runIbkey(t, false, nil, append([]string{"--sysfs", fixture}, args...)...)
		b := runIbkey(t, false, nil, append([]string{"--sysfs", saved}, args...)...)
		if a.stdout != b.stdout || a.code != b.code || a.code != tc.code {
			t.Errorf("ibkey %v differs on the saved tree:\n%s\n---\n%s", args, a.stdout, b.stdout)
		}
	}
	// What names a device's driver survives the copy: rdma_rxe's class link into
	// devices/virtual and its parent (the verbatim Q_Key rule: a top-bit wr_qkey is
	// dropped, ONE-WAY), and an mlx5 device's device/uevent (the demo host's: mlx5
	// counts no P_Key violations on RoCE, so that counter is none by nature).
	for _, tc := range []struct {
		tree string
		args []string
		code int
		want string
	}{
		{"../../testdata/sysfs/rxe", []string{"can-talk", "rxe0/1,qp=ud,qkey=0x11,wr_qkey=0x80000011", "rxe0/1,qp=ud,qkey=0x11"}, 1, "(verbatim): rxe0 is a software RoCE device"},
		{"../../internal/demo/host", []string{"watch", "counters", "mlx5_2", "--once", "-o", "plain"}, 4, "pkey_violations=n/a(mlx5_does_not_count_P_Key_violations_on_RoCE"},
	} {
		tree, _ := filepath.Abs(tc.tree)
		saved := filepath.Join(t.TempDir(), "saved")
		cmd := exec.Command("../../scripts/save-sysfs", saved)
		cmd.Env = []string{"PATH=/usr/bin:/bin", "SYSFS=" + tree}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("save-sysfs %s: %v\n%s", tc.tree, err, out)
		}
		a := runIbkey(t, false, nil, append([]string{"--sysfs", tree}, tc.args...)...)
		b := runIbkey(t, false, nil, append([]string{"--sysfs", saved}, tc.args...)...)
		sample := regexp.MustCompile(`(?m)^\S+Z `) // watch's sample times
		if a.code != tc.code || !strings.Contains(a.stdout, tc.want) || b.code != a.code || sample.ReplaceAllString(b.stdout, "") != sample.ReplaceAllString(a.stdout, "") {
			t.Errorf("ibkey %v on %s (exit %d) and its saved copy (exit %d), want exit %d and %q:\n%s\n---\n%s", tc.args, tc.tree, a.code, b.code, tc.code, tc.want, a.stdout, b.stdout)
		}
	}
}
