package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"
)

const mlx5 = "../../testdata/sysfs/mlx5"

type result struct {
	stdout, stderr string
	code           int
}

// runIbkey runs one command line in-process with fake streams; tty makes stdout a
// terminal (table output by default).
func runIbkey(t *testing.T, tty bool, env map[string]string, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	streams := &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, OutTTY: tty}
	code := run(args, streams, func(k string) string { return env[k] })
	return result{out.String(), errOut.String(), code}
}

// TestGolden compares every command's output, in each format, with testdata/TestGolden/*.golden
// (go test ./cmd/ibkey -update rewrites them).
func TestGolden(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
	}{
		{"devices_table", []string{"--sysfs", mlx5, "devices", "-o", "table"}, 0},
		{"devices_plain", []string{"--sysfs", mlx5, "devices"}, 0},
		{"devices_json", []string{"--sysfs", mlx5, "devices", "-o", "json"}, 0},
		{"pkeys_table", []string{"--sysfs", mlx5, "pkeys", "-o", "table"}, 0},
		{"pkeys_plain", []string{"--sysfs", mlx5, "pkeys"}, 0},
		{"pkeys_json", []string{"--sysfs", mlx5, "pkeys", "-o", "json"}, 0},
		{"pkeys_port_all_plain", []string{"--sysfs", mlx5, "pkeys", "mlx5_0", "1", "--all"}, 0},
		{"pkeys_port_slash_json", []string{"--sysfs", mlx5, "pkeys", "mlx5_1/1", "-o", "json"}, 0},
		{"pkeys_iwarp_table", []string{"--sysfs", mlx5, "pkeys", "irdma0", "-o", "table"}, 0},
		{"pkeys_simulator_plain", []string{"--sysfs", "../../testdata/sysfs/simulator", "pkeys"}, 0},
		{"pkeys_find_plain", []string{"--sysfs", mlx5, "pkeys", "mlx5_0", "1", "--find", "0x0005"}, 0},
		{"pkeys_find_limited_table", []string{"--sysfs", mlx5, "pkeys", "--find", "80:02", "-o", "table"}, 0},
		{"pkeys_find_json", []string{"--sysfs", mlx5, "pkeys", "--find", "0x8010", "-o", "json"}, 0},
		{"pkeys_find_missing", []string{"--sysfs", mlx5, "pkeys", "mlx5_0", "1", "--find", "0x0009"}, 1},
		{"decode_pkey_table", []string{"decode", "pkey", "0x8001", "0x0001", "0x7fff", "0xffff", "0x0000", "0x8000", "-o", "table"}, 0},
		{"decode_pkey_plain", []string{"decode", "pkey", "0x8001", "01", "7f:ff", "FFFF", "0", "8000"}, 0},
		{"decode_pkey_json", []string{"decode", "pkey", "0x8001", "0x7fff", "0x0000", "-o", "json"}, 0},
		{"decode_qkey_table", []string{"decode", "qkey", "0x80010000", "0xb1b", "0x80000001", "0x12345678", "0x90000000", "-o", "table"}, 0},
		{"decode_qkey_plain", []string{"decode", "qkey", "0x80010000", "b1b", "0x8fffffff"}, 0},
		{"decode_qkey_json", []string{"decode", "qkey", "0x80010000", "0x11", "-o", "json"}, 0},
		{"demo_devices_table", []string{"--demo", "devices", "-o", "table"}, 0},
		{"demo_pkeys_table", []string{"--demo", "pkeys", "-o", "table"}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runIbkey(t, false, nil, tc.args...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, tc.code, r.stderr)
			}
			golden.RequireEqual(t, "$ ibkey "+strings.Join(tc.args, " ")+"\n"+r.stdout+"--- stderr\n"+r.stderr)
		})
	}
}

func TestDefaultFormatFollowsTerminal(t *testing.T) {
	tty := runIbkey(t, true, nil, "decode", "pkey", "0x8001")
	pipe := runIbkey(t, false, nil, "decode", "pkey", "0x8001")
	if !strings.HasPrefix(tty.stdout, "P_Key 0x8001") || !strings.HasPrefix(pipe.stdout, "VALUE") {
		t.Errorf("terminal:\n%s\npipe:\n%s", tty.stdout, pipe.stdout)
	}
}

func TestEnvironment(t *testing.T) {
	r := runIbkey(t, false, map[string]string{"IBKEY_SYSFS": mlx5}, "pkeys", "mlx5_1", "2")
	if r.code != 0 || !strings.Contains(r.stdout, "mlx5_1/2") {
		t.Errorf("IBKEY_SYSFS: %+v", r)
	}
	r = runIbkey(t, false, map[string]string{"IBKEY_DEMO": "1"}, "devices")
	if r.code != 0 || !strings.Contains(r.stderr, "demo host") {
		t.Errorf("IBKEY_DEMO: %+v", r)
	}
	// --sysfs wins over IBKEY_SYSFS.
	r = runIbkey(t, false, map[string]string{"IBKEY_SYSFS": "/nonexistent"}, "--sysfs", mlx5, "devices")
	if r.code != 0 {
		t.Errorf("--sysfs over IBKEY_SYSFS: %+v", r)
	}
}

func TestErrors(t *testing.T) {
	cases := []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"decode", "pkey", "0x10000"}, 2, `ibkey: invalid P_Key "0x10000": larger than 0xffff (accepted: hex 0x8001, 8001 or colon form 80:01, at most 0xffff)`},
		{[]string{"decode", "pkey", "0x8001", "zz"}, 2, `ibkey: invalid P_Key "zz": "z" is not a hex digit`},
		{[]string{"decode", "qkey", "--", "-5"}, 2, `ibkey: invalid Q_Key "-5": signs are not allowed`},
		{[]string{"decode", "pkey"}, 2, "requires at least 1 arg"},
		{[]string{"decode", "nope"}, 2, ""},
		{[]string{"--sysfs", mlx5, "pkeys", "mlx5_9"}, 3, "ibkey: no device mlx5_9 (devices: irdma0, mlx5_0, mlx5_1, mlx5_2)"},
		{[]string{"--sysfs", mlx5, "pkeys", "mlx5_0", "2"}, 3, "ibkey: no port 2 on mlx5_0 (ports: 1)"},
		{[]string{"--sysfs", mlx5, "pkeys", "mlx5_0/2"}, 3, "ibkey: no port 2 on mlx5_0 (ports: 1)"},
		{[]string{"--sysfs", mlx5, "pkeys", "../../etc"}, 2, `invalid device ".."`},
		{[]string{"--sysfs", mlx5, "pkeys", "..", "1"}, 2, `invalid device ".."`},
		{[]string{"--sysfs", mlx5, "pkeys", "mlx5_0", "x"}, 2, `invalid port "x"`},
		{[]string{"--sysfs", mlx5, "pkeys", "mlx5_0", "1", "2"}, 2, "accepts at most 2 arg(s)"},
		{[]string{"--sysfs", mlx5, "pkeys", "--find", "0xfffff"}, 2, `invalid P_Key "0xfffff"`},
		{[]string{"--sysfs", "/nonexistent", "devices"}, 3, "no RDMA devices: /nonexistent/class/infiniband does not exist"},
		{[]string{"-o", "yaml", "devices"}, 2, `invalid output format "yaml" (accepted: table, plain, json)`},
		{[]string{"pkeys", "--bogus"}, 2, "unknown flag: --bogus"},
	}
	for _, tc := range cases {
		r := runIbkey(t, false, nil, tc.args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.stderr) {
			t.Errorf("ibkey %s: exit %d, stderr %q; want exit %d and %q", strings.Join(tc.args, " "), r.code, r.stderr, tc.code, tc.stderr)
		}
		if tc.stderr != "" && strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
			t.Errorf("ibkey %s: error spans several lines: %q", strings.Join(tc.args, " "), r.stderr)
		}
	}
}

func TestCompletion(t *testing.T) {
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"__complete", "--sysfs", mlx5, "pkeys", ""}, []string{"irdma0\tirdma", "mlx5_0\tnode01 HCA-1", "mlx5_2\tnode01 RoCE"}},
		{[]string{"__complete", "--demo", "pkeys", "mlx5_1", ""}, []string{"1\n", "2\n"}},
		{[]string{"__complete", "--demo", "pkeys", "mlx5_0", "1", "--find", ""}, []string{"0x8001\tfull member of 0x0001", "0x0002\tlimited member of 0x0002"}},
		{[]string{"__complete", "devices", "-o", ""}, []string{"table", "plain", "json"}},
		{[]string{"__complete", "completion", ""}, []string{"bash", "zsh", "fish", "powershell"}},
		{[]string{"__complete", ""}, []string{"devices", "pkeys", "decode"}},
	}
	for _, tc := range cases {
		r := runIbkey(t, false, nil, tc.args...)
		for _, w := range tc.want {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("ibkey %s: want %q in\n%s", strings.Join(tc.args, " "), w, r.stdout)
			}
		}
		if !strings.Contains(r.stdout, ":4\n") && !strings.Contains(r.stdout, ":0\n") {
			t.Errorf("ibkey %s: no completion directive in %q", strings.Join(tc.args, " "), r.stdout)
		}
	}
	// A host given after the word being completed is not parsed yet; a missing host
	// completes nothing rather than failing.
	r := runIbkey(t, false, nil, "__complete", "--sysfs", "/nonexistent", "pkeys", "")
	if strings.Contains(r.stdout, "mlx5") || r.code != 0 {
		t.Errorf("no host: %+v", r)
	}
}
