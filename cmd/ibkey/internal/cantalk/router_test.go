package cantalk

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
)

// TestCanTalkPartitionsRouterPorts: with --partitions, a router port gets what
// ALL_ROUTERS gives and not what ALL_CAS gives (osm_prtn_config.c adds ports by node
// type), so naming it with --router changes the answer.
func TestCanTalkPartitionsRouterPorts(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "partitions.conf")
	data := "Default=0x7fff : ALL=limited ;\nrouters=0x0010 : ALL_ROUTERS=full ;\ncas=0x0020 : ALL_CAS=full ;\n"
	if err := os.WriteFile(conf, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	const a, b = "0x0002c90300000001", "0x0002c90300000002"
	r := cmdtest.Run(t, root, false, nil, "can-talk", a, b, "--partitions", conf, "--router", "none")
	if r.Code != 0 {
		t.Errorf("two CA ports share 0x0020 as full members: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	// Without --router the types are unknown, and as router ports they would share
	// only the default partition as limited members: the answer depends on it.
	r = cmdtest.Run(t, root, false, nil, "can-talk", a, b, "--partitions", conf)
	if r.Code != 4 || !strings.Contains(r.Stdout, "UNKNOWN") || !strings.Contains(r.Stderr, "is a router port") && strings.Contains(r.Stderr, "--router none") {
		t.Errorf("types not given: exit %d, want 4\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	// What a port the file does not name gets is what it gets as a CA port: said so.
	if !strings.Contains(r.Stdout, "it gets only what ALL / ALL_CAS give every CA port (taking it for one: --router not given") {
		t.Errorf("types not given: 'not named' does not say the port is taken for a CA port\n%s", r.Stdout)
	}
	r = cmdtest.Run(t, root, false, nil, "can-talk", a, b, "--partitions", conf, "--router", a)
	if r.Code != 1 {
		t.Errorf("a router port is not in ALL_CAS: exit %d, want 1\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r = cmdtest.Run(t, root, false, nil, "can-talk", a, b, "--partitions", conf, "--router", "0xzz")
	if r.Code != 2 {
		t.Errorf("--router 0xzz: exit %d, want 2\n%s", r.Code, r.Stderr)
	}
}
