package devices

import (
	"strings"
	"testing"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
)

// TestFlagParsing: --dr without --port lists every port of the node; nothing runs.
func TestFlagParsing(t *testing.T) {
	r, got := cmdtest.Options(t, NewCmdDevices, "devices", "--dr", "0,1", "--ibsim=lab")
	if r.Code != 0 || got == nil || len(got.Fabric) != 1 || !got.Fabric[0].AllPorts || got.MAD.IbsimBase() != "lab" {
		t.Fatalf("%+v, options %+v", r, got)
	}
	cmdtest.Errors(t, root, []cmdtest.ErrorCase{
		{Args: []string{"devices", "extra"}, Code: 2, Stderr: `devices takes no arguments, got "extra"`},
		{Args: []string{"devices", "--port", "1"}, Code: 2, Stderr: "--port needs --lid or --dr"},
		{Args: []string{"--sysfs", "/nonexistent", "devices"}, Code: 3, Stderr: "no RDMA devices: /nonexistent/class/infiniband does not exist"},
		{Args: []string{"--sysfs", "devices_test.go", "devices"}, Code: 3, Stderr: "no RDMA devices: devices_test.go is a file, not a directory shaped like /sys: expected one holding class/infiniband/DEV, as /sys, a saved tree or a test fixture does; point --sysfs at a saved tree, or try --demo"},
		{Args: []string{"-o", "yaml", "devices"}, Code: 2, Stderr: `invalid output format "yaml" (accepted: table, plain, json)`},
	})
}

// TestGUIDFlag: devices takes --guid (-G) as pkeys does, the node found by a sweep;
// it had only --lid and --dr.
func TestGUIDFlag(t *testing.T) {
	for _, flag := range []string{"--guid", "-G"} {
		r := cmdtest.Run(t, root, false, nil, "--demo", "devices", flag, "0x0002c90300a00041", "-o", "plain")
		if r.Code != 0 || !strings.Contains(r.Stdout, "storage01  1") || !strings.Contains(r.Stderr, "GUID 0x0002c90300a00041 is lid 6") {
			t.Errorf("%s: exit %d\n%s%s", flag, r.Code, r.Stdout, r.Stderr)
		}
	}
	if r := cmdtest.Run(t, root, false, nil, "--demo", "devices", "--guid", "0x1234"); r.Code != 3 || !strings.Contains(r.Stderr, "no port or node with GUID 0x0000000000001234") {
		t.Errorf("unknown GUID: exit %d\n%s", r.Code, r.Stderr)
	}
}
