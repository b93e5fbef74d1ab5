package pkeys

import (
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
)

// TestFlagParsing: DEV PORT, --find and the MAD flags reach the options; nothing runs.
func TestFlagParsing(t *testing.T) {
	r, got := cmdtest.Options(t, NewCmdPKeys, "pkeys", "mlx5_0", "1", "--find", "0x8001", "--all")
	if r.Code != 0 || got == nil || got.Selector.Device != "mlx5_0" || !got.Selector.HasPort || got.Selector.Port != 1 ||
		got.Find != "0x8001" || !got.All || got.Fabric != nil {
		t.Fatalf("%+v, options %+v", r, got)
	}
	r, got = cmdtest.Options(t, NewCmdPKeys, "--ibsim", "pkeys", "--lid", "3-5", "--port", "all", "--mad-timeout", "250")
	if r.Code != 0 || got == nil || len(got.Fabric) != 3 || !got.Fabric[0].AllPorts || got.MAD.MADTimeout != 250*time.Millisecond || got.MAD.IbsimBase() != cmdutil.IbsimDefault {
		t.Fatalf("%+v, options %+v", r, got)
	}
	if got.Ctx == nil {
		t.Error("no context")
	}
	// The diags' spellings: -C -P -t (ms) -L -D -G.
	r, got = cmdtest.Options(t, NewCmdPKeys, "--sysfs", "../../../../testdata/sysfs/mlx5", "pkeys", "-C", "mlx5_1", "-P", "2", "-t", "100", "-L", "4")
	if r.Code != 0 || got == nil || got.MAD.CA != "mlx5_1" || got.MAD.CAPort != 2 || got.MAD.MADTimeout != 100*time.Millisecond || len(got.Fabric) != 1 || got.Fabric[0].Addr.String() != "lid 4" {
		t.Fatalf("-C -P -t -L: %+v, options %+v", r, got)
	}
	r, got = cmdtest.Options(t, NewCmdPKeys, "pkeys", "-D", "0,1,3")
	if r.Code != 0 || got.Addr.DR != "0,1,3" || len(got.Fabric) != 1 {
		t.Fatalf("-D: %+v", r)
	}
	r, got = cmdtest.Options(t, NewCmdPKeys, "pkeys", "-G", "0002:c903:0000:0204", "--port", "all")
	if r.Code != 0 || got.Addr.GUID != "0002:c903:0000:0204" || len(got.Fabric) != 1 || !got.Fabric[0].AllPorts {
		t.Fatalf("-G: %+v", r)
	}
}

// TestCompletion: --lid offers the LIDs of the host in use (no MAD is sent), as a
// list; --mad-timeout durations; --sim-node nothing, never file names.
func TestCompletion(t *testing.T) {
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"__complete", "--demo", "pkeys", "--lid", ""}, []string{"3\tlocal mlx5_0/1\n", "9\tlocal mlx5_1/1\n", ":36\n"}},
		{[]string{"__complete", "--demo", "pkeys", "--lid", "3,"}, []string{"3,9\tlocal mlx5_1/1\n", ":36\n"}},
		{[]string{"__complete", "--demo", "pkeys", "--mad-timeout", "5"}, []string{"500ms\n", "5s\n", ":36\n"}},
		{[]string{"__complete", "--demo", "pkeys", "--sim-node", ""}, []string{":4\n"}},
		{[]string{"__complete", "--demo", "pkeys", "--port", ""}, []string{"all\n", ":4\n"}},
		// DEV and PORT: the host's devices (with their descriptions), ports and IPoIB
		// interfaces; --find the keys held.
		{[]string{"__complete", "--sysfs", cmdtest.MLX5, "pkeys", ""}, []string{"irdma0\tirdma", "mlx5_0\tnode01 HCA-1", "mlx5_2\tnode01 RoCE"}},
		{[]string{"__complete", "--demo", "pkeys", "mlx5_1", ""}, []string{"1\n", "2\n"}},
		{[]string{"__complete", "--sysfs", cmdtest.MLX5, "pkeys", "ib0"}, []string{"ib0.8001\tIPoIB on mlx5_0/1, P_Key 0x8001\n"}},
		{[]string{"__complete", "--demo", "pkeys", "mlx5_0", "1", "--find", ""}, []string{"0x8001\tfull member of 0x0001", "0x0002\tlimited member of 0x0002"}},
	}
	for _, tc := range cases {
		r := cmdtest.Run(t, root, false, nil, tc.args...)
		for _, w := range tc.want {
			if !strings.Contains(r.Stdout, w) {
				t.Errorf("ibkey %s: want %q in %q", strings.Join(tc.args, " "), w, r.Stdout)
			}
		}
		if !strings.Contains(r.Stdout, ":4\n") && !strings.Contains(r.Stdout, ":0\n") && !strings.Contains(r.Stdout, ":36\n") {
			t.Errorf("ibkey %s: no completion directive in %q", strings.Join(tc.args, " "), r.Stdout)
		}
	}
	// A host given after the word being completed is not parsed yet; a missing host
	// completes nothing rather than failing.
	r := cmdtest.Run(t, root, false, nil, "__complete", "--sysfs", "/nonexistent", "pkeys", "")
	if strings.Contains(r.Stdout, "mlx5") || r.Code != 0 {
		t.Errorf("no host: %+v", r)
	}
}

// TestIPoIBNames: an IPoIB interface is read as its port; a name that is neither a
// device nor an interface lists both (exit 3).
func TestIPoIBNames(t *testing.T) {
	cmdtest.Errors(t, root, []cmdtest.ErrorCase{
		{Args: []string{"--sysfs", cmdtest.MLX5, "pkeys", "ib7"}, Code: 3, Stderr: "ibkey: no device or IPoIB interface ib7 (devices: irdma0, mlx5_0, mlx5_1, mlx5_2; IPoIB interfaces: ib0, ib0.8001, ib0.8002, ib0.8004, ib1)"},
		{Args: []string{"--sysfs", cmdtest.MLX5, "pkeys", "ib0.8001/1"}, Code: 2, Stderr: "ib0.8001 is an IPoIB interface, which runs on one port: give it without /PORT"},
		{Args: []string{"--sysfs", cmdtest.MLX5, "pkeys", "eth0"}, Code: 3, Stderr: "no device or IPoIB interface eth0"},
	})
	// mlx5_1/1 holds 0x0001 at 1, a limited entry, and entry 3 was not read: the index
	// is printed and the exit is 4 (a full entry there would be the one used).
	r := cmdtest.Run(t, root, false, nil, "--sysfs", cmdtest.MLX5, "pkeys", "ib1", "--find", "0x8001", "-o", "plain")
	if r.Code != 4 || r.Stdout != "1\n" || !strings.Contains(r.Stderr, "ib1: IPoIB interface on mlx5_1/") {
		t.Errorf("pkeys ib1 --find: %+v", r)
	}
}

// TestErrors: bad input exits 2 naming the token; a missing device or port exits 3
// listing what exists.
func TestErrors(t *testing.T) {
	cmdtest.Errors(t, root, []cmdtest.ErrorCase{
		{Args: []string{"--sysfs", cmdtest.MLX5, "pkeys", "mlx5_9"}, Code: 3, Stderr: "ibkey: no device or IPoIB interface mlx5_9 (devices: irdma0, mlx5_0, mlx5_1, mlx5_2; IPoIB interfaces: ib0, ib0.8001, ib0.8002, ib0.8004, ib1)"},
		{Args: []string{"--sysfs", cmdtest.MLX5, "pkeys", "mlx5_0", "2"}, Code: 3, Stderr: "ibkey: no port 2 on mlx5_0 (ports: 1)"},
		{Args: []string{"--sysfs", cmdtest.MLX5, "pkeys", "mlx5_0/2"}, Code: 3, Stderr: "ibkey: no port 2 on mlx5_0 (ports: 1)"},
		// A device that exists and cannot be read is not known (4), named alone as in a
		// listing; never missing (3, which lists what exists).
		{Args: []string{"--sysfs", cmdtest.Dangling, "pkeys", "scif0"}, Code: 4, Stderr: "ibkey: not read: device scif0: "},
		{Args: []string{"--sysfs", cmdtest.Dangling, "pkeys", "scif0/1"}, Code: 4, Stderr: "ibkey: not read: device scif0: "},
		{Args: []string{"--sysfs", cmdtest.MLX5, "pkeys", "../../etc"}, Code: 2, Stderr: `invalid device ".."`},
		{Args: []string{"--sysfs", cmdtest.MLX5, "pkeys", "..", "1"}, Code: 2, Stderr: `invalid device ".."`},
		{Args: []string{"--sysfs", cmdtest.MLX5, "pkeys", "mlx5_0", "x"}, Code: 2, Stderr: `invalid port "x"`},
		{Args: []string{"--sysfs", cmdtest.MLX5, "pkeys", "mlx5_0", "1", "2"}, Code: 2, Stderr: "accepts at most 2 arg(s)"},
		// A port given twice is bad input, whichever spelling the first one has
		// (mlx5_1:1 2 showed port 2).
		{Args: []string{"--sysfs", cmdtest.MLX5, "pkeys", "mlx5_1/1", "2"}, Code: 2, Stderr: `ibkey: unexpected "2" after "mlx5_1/1" (accepted: DEV PORT or DEV/PORT)`},
		{Args: []string{"--sysfs", cmdtest.MLX5, "pkeys", "mlx5_1:1", "2"}, Code: 2, Stderr: `ibkey: unexpected "2" after "mlx5_1:1" (accepted: DEV PORT or DEV/PORT)`},
		{Args: []string{"--sysfs", cmdtest.MLX5, "pkeys", "--find", "0xfffff"}, Code: 2, Stderr: `invalid P_Key "0xfffff"`},
		{Args: []string{"pkeys", "--bogus"}, Code: 2, Stderr: "unknown flag: --bogus"},
	})
}

// TestTableNotReadWarned: a P_Key table that exists and was not read is named on
// stderr in every format, as ibkey devices names the same port (it was only on stdout
// in a table). A DOWN CA port's over the fabric is no gap (query.PortView.DownTableNotRead:
// nothing can read it, and it is part of no answer), as fabric pkeys, fabric check and
// watch treat it: a note, exit 0; it was a warning and exit 4 here and in devices
// alone. A table not read for another reason (a saved tree without pkeys/) is still a
// warning and exit 4 (TestJSONIncomplete).
func TestTableNotReadWarned(t *testing.T) {
	const want = "note: demo-node HCA-2/2: P_Key table n/a: port 2 is DOWN: no SMP can arrive there"
	for _, format := range []string{"table", "plain", "json"} {
		r := cmdtest.Run(t, root, false, nil, "--demo", "pkeys", "--lid", "9", "--port", "2", "-o", format)
		if r.Code != 0 || !strings.Contains(r.Stderr, want) || strings.Contains(r.Stderr, "warning:") {
			t.Errorf("-o %s: exit %d, stderr:\n%s\nwant exit 0 and %q", format, r.Code, r.Stderr, want)
		}
	}
	// --find asks what the table holds, and the device may hold the key (the demo
	// host's sysfs shows 0xffff on that port): unknown, exit 4, never "not found" (a
	// definite no here said exit 1 while the device held the key).
	r := cmdtest.Run(t, root, false, nil, "--demo", "pkeys", "--lid", "9", "--port", "2", "--find", "0xffff")
	if r.Code != 4 || !strings.Contains(r.Stderr, "note: demo-node HCA-2/2: P_Key table n/a: port 2 is DOWN") {
		t.Errorf("--find on the DOWN port: exit %d, want 4\n%s", r.Code, r.Stderr)
	}
	r = cmdtest.Run(t, root, false, nil, "--demo", "pkeys", "--lid", "9", "--port", "2", "--find", "0xffff", "-o", "json")
	if r.Code != 4 || !strings.Contains(r.Stdout, `"outcome": "unknown"`) || !strings.Contains(r.Stdout, `"incomplete"`) {
		t.Errorf("--find on the DOWN port, JSON: exit %d, want 4, outcome unknown and incomplete\n%s", r.Code, r.Stdout)
	}
	r = cmdtest.Run(t, root, false, nil, "--demo", "pkeys", "--lid", "9", "--port", "all", "--find", "0x8001", "-o", "plain")
	if r.Code != 4 || !strings.Contains(r.Stdout, "demo-node_HCA-2/1  1      0x0001  limited") {
		t.Errorf("--find over both ports: exit %d, want 4 (port 1 holds it, port 2 unknown)\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}
