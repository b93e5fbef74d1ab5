package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/query"
)

func TestParseLIDList(t *testing.T) {
	good := map[string][]uint16{
		"3":         {3},
		"0x10":      {16},
		"3,5,9":     {3, 5, 9},
		"3-6":       {3, 4, 5, 6},
		"1,3-5,4,1": {1, 3, 4, 5},
		"49151":     {49151},
	}
	for in, want := range good {
		got, err := ParseLIDList(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ParseLIDList(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "49152", "0xffff", "5-3", "3-", "-3", "a", "3,,4", "1-49151,x"} {
		if got, err := ParseLIDList(in); err == nil {
			t.Errorf("ParseLIDList(%q) = %v, want an error", in, got)
		} else if !strings.Contains(err.Error(), "accepted:") {
			t.Errorf("ParseLIDList(%q): %v does not say what is accepted", in, err)
		}
	}
}

// Address and transport flags are checked before anything is opened.
func TestFabricUsageErrors(t *testing.T) {
	cases := []struct {
		args   []string
		env    map[string]string
		code   int
		stderr string
	}{
		{[]string{"pkeys", "--lid", "3", "mlx5_0", "1"}, nil, 2, "either as DEV PORT (local) or with --lid/--dr"},
		{[]string{"pkeys", "--lid", "3", "--dr", "0,1"}, nil, 2, "if any flags in the group [lid dr] are set none of the others can be"},
		{[]string{"pkeys", "--port", "1"}, nil, 2, "--port needs --lid or --dr"},
		{[]string{"devices", "--port", "1"}, nil, 2, "--port needs --lid or --dr"},
		{[]string{"pkeys", "--lid", "0"}, nil, 2, `invalid --lid "0"`},
		{[]string{"pkeys", "--lid", "9-3"}, nil, 2, "ends below its start"},
		{[]string{"pkeys", "--dr", "1,2"}, nil, 2, "must start with 0"},
		{[]string{"pkeys", "--dr", "0,1", "--port", "x"}, nil, 2, `invalid --port "x" (accepted: a port number 0-255, or all)`},
		{[]string{"--ibsim", "--ca", "mlx5_0", "pkeys", "--lid", "3"}, nil, 2, "do not apply with --ibsim"},
		{[]string{"--sim-node", "HcaA", "pkeys", "--lid", "3"}, nil, 2, "--sim-node chooses where to attach to the simulator: it needs --ibsim"},
		{[]string{"--ibsim", "--mad-timeout", "0s", "pkeys", "--lid", "3"}, nil, 2, "invalid --mad-timeout"},
		{[]string{"--demo", "pkeys", "--lid", "3"}, nil, 2, "the demo host has no fabric"},
		// No umad at all: the fixture has no class/infiniband_mad.
		{[]string{"--sysfs", mlx5, "pkeys", "--lid", "3"}, nil, 3, "query a simulated fabric with --ibsim"},
		{[]string{"--sysfs", "/nonexistent", "devices", "--lid", "3"}, nil, 3, "no local port to send MADs from"},
		// A simulator that is not running.
		{[]string{"--ibsim=ibkey-no-such-sim", "pkeys", "--lid", "3"}, nil, 3, `no simulator listening on socket "ibkey-no-such-sim"`},
		{[]string{"pkeys", "--lid", "3"}, map[string]string{"IBKEY_IBSIM": "ibkey-no-such-sim"}, 3, `"ibkey-no-such-sim"`},
		{[]string{"--ibsim", "pkeys", "--lid", "3"}, map[string]string{"IBSIM_SOCKNAME": "ibkey-no-such-sim2"}, 3, `"ibkey-no-such-sim2"`},
	}
	for _, tc := range cases {
		r := runIbkey(t, false, tc.env, tc.args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.stderr) {
			t.Errorf("ibkey %s: exit %d, stderr %q; want exit %d and %q", strings.Join(tc.args, " "), r.code, r.stderr, tc.code, tc.stderr)
		}
		if strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
			t.Errorf("ibkey %s: error spans several lines: %q", strings.Join(tc.args, " "), r.stderr)
		}
	}
}

func testGlobals(env map[string]string) *Globals {
	var out, errOut bytes.Buffer
	g := &Globals{IO: &IOStreams{Out: &out, ErrOut: &errOut}, Getenv: func(k string) string { return env[k] }}
	g.Fabric.MADTimeout = 1e9
	g.Fabric.MADRetries = 3
	return g
}

// Without --ca, MADs go out of the first ACTIVE InfiniBand port; umad's refusals
// reach the user with what to do, as environment errors (exit 3).
func TestOpenFabricUmad(t *testing.T) {
	g := testGlobals(nil)
	g.SysfsDir = mlx5
	var gotDev string
	var gotPort int
	g.Fabric.openUmad = func(dev string, port int, o mad.UmadOptions) (mad.Transport, error) {
		gotDev, gotPort = dev, port
		if o.SysfsRoot != mlx5 {
			t.Errorf("umad sysfs root %q, want %q", o.SysfsRoot, mlx5)
		}
		return nil, fmt.Errorf("umad: open /dev/infiniband/umad0: permission denied: needs root or membership of group \"rdma\", which owns /dev/infiniband/umad0: %w", fs.ErrPermission)
	}
	_, err := g.OpenFabric(context.Background())
	var env *query.EnvError
	if !errors.As(err, &env) || !strings.Contains(err.Error(), "needs root or membership of group \"rdma\"") {
		t.Errorf("OpenFabric: %v, want an EnvError with the reason", err)
	}
	if exitCode(err) != exitEnv {
		t.Errorf("exit code %d, want %d", exitCode(err), exitEnv)
	}
	// mlx5_0/1 is the first ACTIVE InfiniBand port (irdma0 comes first, but is iWARP).
	if gotDev != "mlx5_0" || gotPort != 1 {
		t.Errorf("default port %s/%d, want mlx5_0/1", gotDev, gotPort)
	}
	g.Fabric.CA, g.Fabric.CAPort = "mlx5_1", 2
	if _, err := g.OpenFabric(context.Background()); err == nil || gotDev != "mlx5_1" || gotPort != 2 {
		t.Errorf("--ca mlx5_1 --ca-port 2: opened %s/%d (%v)", gotDev, gotPort, err)
	}

	// A host with no ACTIVE InfiniBand port lists what it has.
	dir := t.TempDir()
	port := filepath.Join(dir, "class/infiniband/dev0/ports/1")
	if err := os.MkdirAll(port, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]string{"state": "1: DOWN\n", "link_layer": "InfiniBand\n"} {
		if err := os.WriteFile(filepath.Join(port, name), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	g = testGlobals(nil)
	g.SysfsDir = dir
	g.Fabric.openUmad = func(string, int, mad.UmadOptions) (mad.Transport, error) { return nil, errors.New("opened") }
	_, err = g.OpenFabric(context.Background())
	if err == nil || !strings.Contains(err.Error(), "no ACTIVE InfiniBand port to send MADs from (ports: dev0/1 InfiniBand DOWN); choose one with --ca DEV --ca-port N") || exitCode(err) != exitEnv {
		t.Errorf("no active port: %v", err)
	}
}

func TestIbsimBase(t *testing.T) {
	cases := []struct {
		flag string
		env  map[string]string
		want string
	}{
		{"", nil, ""},
		{"sim", nil, "sim"},
		{"sim", map[string]string{"IBSIM_SOCKNAME": "lab7"}, "lab7"},
		{"other", map[string]string{"IBSIM_SOCKNAME": "lab7"}, "other"},
		{"", map[string]string{"IBKEY_IBSIM": "1"}, "sim"},
		{"", map[string]string{"IBKEY_IBSIM": "1", "IBSIM_SOCKNAME": "lab7"}, "lab7"},
		{"", map[string]string{"IBKEY_IBSIM": "x"}, "x"},
		{"y", map[string]string{"IBKEY_IBSIM": "x"}, "y"},
	}
	for _, tc := range cases {
		g := testGlobals(tc.env)
		g.Fabric.Ibsim = tc.flag
		if got := g.ibsimBase(); got != tc.want {
			t.Errorf("--ibsim=%q env %v: base %q, want %q", tc.flag, tc.env, got, tc.want)
		}
	}
}
