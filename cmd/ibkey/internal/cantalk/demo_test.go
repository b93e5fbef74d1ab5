package cantalk

import (
	"strings"
	"testing"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
)

// TestDemoResolvesGUIDs: --demo is a host and the fabric its ports are cabled to
// (--help), and a sweep of it sends nothing anywhere, so a port GUID of that fabric
// is found in it like lid= and node= are, instead of exit 2 asking for --ibsim or
// --ca. storage01's port 0x0002c90300a00041 and node02's share partition 0x0001 as
// full members (the answer node=storage01 node=node02 gives).
func TestDemoResolvesGUIDs(t *testing.T) {
	for _, args := range [][]string{
		{"--demo", "can-talk", "0x0002c90300a00041", "node=node02", "-o", "plain"},
		{"--demo", "can-talk", "guid=0x0002c90300a00041", "0x0002c90300a00021", "-o", "plain"},
	} {
		r := runIbkey(t, args...)
		if r.Code != 0 || !strings.HasPrefix(r.Stdout, "YES") {
			t.Errorf("%v: exit %d, want 0 and YES\n%s%s", args, r.Code, r.Stdout, r.Stderr)
		}
	}
	// Without --demo and without a transport a GUID still needs its source.
	r := runIbkey(t, "--sysfs", cantalkFixture, "can-talk", "0x0002c90300a00041", "0x8001")
	if r.Code != 2 {
		t.Errorf("GUID without a source: exit %d, want 2\n%s", r.Code, r.Stderr)
	}
}

// TestDownPortTableNoGap: a DOWN CA port's table over the fabric is no gap
// (query.PortView.DownTableNotRead), as in pkeys, devices and fabric pkeys: the NOT ACTIVE
// verdict does not depend on it, and its JSON listed it in incomplete.
func TestDownPortTableNoGap(t *testing.T) {
	r := cmdtest.Run(t, root, false, nil, "--demo", "can-talk", "lid=9,port=2", "lid=3", "-o", "json")
	if r.Code != 1 || !strings.Contains(r.Stdout, `"verdict": "not-active"`) || strings.Contains(r.Stdout, `"incomplete"`) {
		t.Errorf("exit %d, want 1, not-active, no incomplete\n%s", r.Code, r.Stdout)
	}
}
