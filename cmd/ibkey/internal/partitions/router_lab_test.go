package partitions

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/lab"
	"github.com/ibkey/ibkey/internal/query"
)

// TestLabPartitionsRouterPorts: OpenSM programs a router port from ALL_ROUTERS, not
// ALL_CAS, and a router port left out of the Default line's keywords keeps the implicit
// Default=0x7fff (limited); `partitions show --router GUID` (and --fabric-file)
// predicts the router's and the HCAs' tables exactly as OpenSM programs them (read back
// with smpquery); without either the router is shown as a CA port and the exit is 4.
func TestLabPartitionsRouterPorts(t *testing.T) {
	lab.Require(t)
	if testing.Short() {
		t.Skip("lab: -short")
	}
	l := lab.StartRouterLab(t)
	ports := lab.RouterLabPorts
	hcaA, rtPort := ports[0].GUID, ports[2].GUID
	dir := t.TempDir()
	conf := `Default=0x7fff, ipoib : ALL_CAS=full, ALL_SWITCHES=full ;
cas=0x0010 : ALL_CAS=full ;
routers=0x0020 : ALL_ROUTERS=full ;
both=0x0030 : ALL_CAS=limited, ALL_ROUTERS=full ;
member=0x0040 : 0x0002c90300000322=full, 0x0002c90300000311 ;
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
	tr, err := mad.DialIbsim(context.Background(), mad.IbsimOptions{SockName: l.SockName, Node: "HcaA"})
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
		args := []string{"partitions", "show", file, "--sm-guid", hcaA.String(), "--table-size", "64", "-o", "json"}
		for _, p := range ports {
			args = append(args, p.GUID.String())
		}
		args = append(args, types...)
		r := runIbkey(t, false, nil, args...)
		if want := map[bool]int{true: 4, false: 0}[len(types) == 0]; r.Code != want {
			t.Fatalf("%v: exit %d, want %d: %s", types, r.Code, want, r.Stderr)
		}
		var doc showJSON
		if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
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
	routers := ports[2].GUID.String() + "," + ports[3].GUID.String()
	for _, types := range [][]string{{"--router", routers}, {"--fabric-file", fabricFile}} {
		predicted := predict(types...)
		for _, port := range ports {
			real := labTable(t, l, port.DR)
			if !sameTable(predicted[port.GUID], real) {
				t.Errorf("port %s (%s): partitions show %s predicts %v, OpenSM programmed %v", port.GUID.String(), port.Name, types[0], predicted[port.GUID], trimTable(real))
			}
		}
	}
	// Without --router the router is shown as a CA port (ALL_CAS instead of
	// ALL_ROUTERS), which OpenSM does not do: the comparison tells them apart.
	if real, wrong := labTable(t, l, ports[2].DR), predict()[rtPort]; sameTable(wrong, real) {
		t.Errorf("router port: the CA-port prediction %v matches what OpenSM programmed %v: the test cannot tell", wrong, trimTable(real))
	} else {
		t.Logf("router port: OpenSM %v; as a CA %v", trimTable(real), wrong)
	}
}

// TestLabPartitionsPreviousRouter: OpenSM applies a file with ALL_CAS, then (restarted)
// one without: the router port keeps its key where the first file left it, so the
// index shown depends on its type even though FILE has no ALL_CAS item. With
// --router, `show FILE --previous --restarted` predicts what OpenSM programmed (read
// back with smpquery); without it, the router is taken for a CA port, its table
// differs from OpenSM's, and the exit is 4 naming it.
func TestLabPartitionsPreviousRouter(t *testing.T) {
	lab.Require(t)
	if testing.Short() {
		t.Skip("lab: -short")
	}
	l := lab.StartRouterLab(t)
	ports := lab.RouterLabPorts
	hcaA, hcaB, rt := ports[0], ports[1], ports[2]
	member := "b=0x0020 : " + hcaB.GUID.String() + "=full, " + rt.GUID.String() + "=full ;\n"
	prev := "Default=0x7fff, ipoib : ALL=full ;\ncas=0x0010 : ALL_CAS=full ;\n" + member
	cur := "Default=0x7fff, ipoib : ALL=full ;\n" + member
	dir := t.TempDir()
	files := map[string]string{}
	for name, text := range map[string]string{"prev.conf": prev, "cur.conf": cur} {
		files[name] = filepath.Join(dir, name)
		if err := os.WriteFile(files[name], []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, conf := range []string{prev, cur} {
		if err := l.RunOpenSM(conf, false); err != nil {
			t.Fatal(err)
		}
	}
	show := func(want int, more ...string) map[check.GUID][]check.PKey {
		t.Helper()
		args := append([]string{"partitions", "show", files["cur.conf"], "--previous", files["prev.conf"], "--restarted",
			"--sm-guid", hcaA.GUID.String(), "--table-size", "64", "-o", "json", hcaB.GUID.String(), rt.GUID.String()}, more...)
		r := runIbkey(t, false, nil, args...)
		if r.Code != want || (want == 4 && !strings.Contains(r.Stderr, rt.GUID.String())) {
			t.Fatalf("%v: exit %d, want %d: %s", more, r.Code, want, r.Stderr)
		}
		var doc showJSON
		if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
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
	predicted := show(0, "--router", rt.GUID.String()+","+ports[3].GUID.String())
	for _, port := range []struct {
		GUID check.GUID
		DR   string
	}{{hcaB.GUID, hcaB.DR}, {rt.GUID, rt.DR}} {
		if real := labTable(t, l, port.DR); !sameTable(predicted[port.GUID], real) {
			t.Errorf("port %s: show --router predicts %v, OpenSM programmed %v", port.GUID, predicted[port.GUID], trimTable(real))
		}
	}
	if real, asCA := labTable(t, l, rt.DR), show(4)[rt.GUID]; sameTable(asCA, real) {
		t.Errorf("router port: the CA-port prediction %v matches what OpenSM programmed %v: the test cannot tell", asCA, trimTable(real))
	} else {
		t.Logf("router port: OpenSM %v; as a CA %v", trimTable(real), asCA)
	}
}
