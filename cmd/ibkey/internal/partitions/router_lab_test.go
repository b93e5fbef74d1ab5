package partitions

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/lab"
	"github.com/ibkey/ibkey/internal/query"
)

// routerNet: one switch, two HCAs and a router (ibsim "Rt"; its GUIDs are set from
// the console, ibsim's net files have no syntax for them). internal/lab's topology
// parser knows only switches and HCAs, so the lab is given a file that only includes
// this one (the parser skips includes); the tools attach at the first node, Sw1.
const routerNet = `Switch 8 "Sw1"
[1] "HcaA"[1]
[2] "HcaB"[1]
[3] "Rt1"[1]

caguid=0x0002c90300000300
Hca 1 "HcaA"
[1] "Sw1"[1]

caguid=0x0002c90300000310
Hca 1 "HcaB"
[1] "Sw1"[2]

Rt 1 "Rt1"
[1] "Sw1"[3]
`

// TestLabPartitionsRouterPorts: OpenSM programs a router port from ALL_ROUTERS, not
// ALL_CAS; `partitions show --router GUID` predicts the router's and the HCAs' tables
// exactly as OpenSM programs them (read back with smpquery).
func TestLabPartitionsRouterPorts(t *testing.T) {
	lab.Require(t)
	if testing.Short() {
		t.Skip("lab: -short")
	}
	const (
		hcaA, hcaB check.GUID = 0x0002c90300000301, 0x0002c90300000311
		rtNode     check.GUID = 0x0002c90300000320
		rtPort                = rtNode + 1
	)
	dir := t.TempDir()
	net, included := filepath.Join(dir, "net"), filepath.Join(dir, "router.net")
	if err := os.WriteFile(included, []byte(routerNet), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(net, []byte(fmt.Sprintf("include %q\n", included)), 0o644); err != nil {
		t.Fatal(err)
	}
	l := lab.Start(t, net, &lab.Options{SMNode: "HcaA"})
	l.MustConsole(fmt.Sprintf(`Guid "Rt1" %#x`, uint64(rtNode)))
	l.MustConsole(fmt.Sprintf(`Guid "Rt1"[1] %#x`, uint64(rtPort)))
	// The console applies asynchronously: wait until the router answers with its GUID.
	for try := 0; ; try++ {
		out := l.MustTool("smpquery", "-D", "nodeinfo", "0,3")
		if g, err := lab.ParseFields(out).Uint("PortGuid"); err == nil && check.GUID(g) == rtPort {
			break
		}
		if try == 200 {
			t.Fatalf("the router's port GUID was not set:\n%s", out)
		}
		time.Sleep(5 * time.Millisecond)
	}
	conf := `Default=0x7fff, ipoib : ALL=full ;
cas=0x0010 : ALL_CAS=full ;
routers=0x0020 : ALL_ROUTERS=full ;
both=0x0030 : ALL_CAS=limited, ALL_ROUTERS=full ;
`
	if err := l.RunOpenSM(conf, false); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "partitions.conf")
	if err := os.WriteFile(file, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	// A sweep of the lab saved as a fabric file: --fabric-file takes the router
	// ports from it.
	tr, err := mad.DialIbsim(context.Background(), mad.IbsimOptions{SockName: l.SockName})
	if err != nil {
		t.Fatal(err)
	}
	swept, err := query.Sweep(context.Background(), tr, query.SweepOptions{NoTables: true})
	tr.Close()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := fabric.EncodeFabric(&b, swept); err != nil {
		t.Fatal(err)
	}
	fabricFile := filepath.Join(dir, "fabric.json")
	if err := os.WriteFile(fabricFile, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	predict := func(types ...string) map[check.GUID][]check.PKey {
		t.Helper()
		args := []string{"partitions", "show", file, hcaA.String(), hcaB.String(), rtPort.String(),
			"--sm-guid", hcaA.String(), "--table-size", "64", "-o", "json"}
		args = append(args, types...)
		r := runIbkey(t, false, nil, args...)
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		var doc showJSON
		if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
			t.Fatal(err)
		}
		out := map[check.GUID][]check.PKey{}
		for _, p := range doc.Ports {
			g, err := check.ParseGUID(p.PortGUID)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range p.Entries {
				v, err := check.ParsePKey(e.PKey)
				if err != nil {
					t.Fatal(err)
				}
				out[g] = append(out[g], v)
			}
		}
		return out
	}
	for _, types := range [][]string{{"--router", rtPort.String()}, {"--fabric-file", fabricFile}} {
		predicted := predict(types...)
		for _, port := range []struct {
			guid check.GUID
			dr   string
		}{{hcaA, "0,1"}, {hcaB, "0,2"}, {rtPort, "0,3"}} {
			real := labTable(t, l, port.dr)
			if !sameTable(predicted[port.guid], real) {
				t.Errorf("port %s: partitions show %s predicts %v, OpenSM programmed %v", port.guid.String(), types[0], predicted[port.guid], trimTable(real))
			}
		}
	}
	// Without --router the router is taken for a CA port (ALL_CAS instead of
	// ALL_ROUTERS), which OpenSM does not do: the comparison tells them apart.
	if real, wrong := labTable(t, l, "0,3"), predict()[rtPort]; sameTable(wrong, real) {
		t.Errorf("router port: the CA-port prediction %v matches what OpenSM programmed %v: the test cannot tell", wrong, trimTable(real))
	} else {
		t.Logf("router port: OpenSM %v; as a CA %v", trimTable(real), wrong)
	}
}
