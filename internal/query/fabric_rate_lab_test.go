package query_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/lab"
	"github.com/ibkey/ibkey/internal/query"
)

// laneRates: smpquery's lane speeds (libibmad dump.c mad_dump_linkspeed and
// mad_dump_linkspeedext) as the kernel names and counts them.
var laneRates = map[string]struct {
	name string
	gbps float64
}{
	"2.5 Gbps": {"SDR", 2.5}, "5.0 Gbps": {"DDR", 5}, "10.0 Gbps": {"QDR", 10},
	"14.0625 Gbps": {"FDR", 14}, "25.78125 Gbps": {"EDR", 25}, "53.125 Gbps": {"HDR", 50},
}

// TestLabFabricPortRates: the rate of every port of speeds.net, both ends of a QDR,
// an EDR and an HDR link, as smpquery's portinfo gives it. A switch's external
// ports carry no CapabilityMask (ibsim answers 0); port 0's says whether
// LinkSpeedExtActive names the speed, as infiniband-diags takes it. Before, the
// switch's end of the EDR link read "40 Gb/sec (4X QDR)".
func TestLabFabricPortRates(t *testing.T) {
	t.Parallel()
	l := lab.Start(t, "../lab/testdata/speeds.net", nil)
	tr := l.Dial(t, "", labMAD)
	f := &query.Fabric{T: tr, Via: "lab"}
	ctx := context.Background()
	want := func(path []uint8, port int) string {
		fl := lab.ParseFields(l.MustTool("smpquery", "-D", "portinfo", mad.FormatDRPath(path), strconv.Itoa(port)))
		speed, ok := laneRates[fl["LinkSpeedExtActive"]]
		if !ok {
			speed, ok = laneRates[fl["LinkSpeedActive"]]
		}
		w, err := strconv.Atoi(fl["LinkWidthActive"][:len(fl["LinkWidthActive"])-1])
		if !ok || err != nil {
			t.Fatalf("smpquery portinfo %v %d: %q %q %q", path, port, fl["LinkWidthActive"], fl["LinkSpeedActive"], fl["LinkSpeedExtActive"])
		}
		return fmt.Sprintf("%s Gb/sec (%dX %s)", strconv.FormatFloat(speed.gbps*float64(w), 'f', -1, 64), w, speed.name)
	}
	seen := map[string]bool{}
	for port := 1; port <= 3; port++ {
		for _, sel := range []struct {
			path []uint8
			port int
		}{{nil, port}, {[]uint8{uint8(port)}, 1}} {
			// One port alone (--port), so that port 0 is not read first.
			views, err := f.Load(ctx, query.FabricSelector{Addr: mad.DirectedRoute(sel.path...), Port: sel.port, HasPort: true}, query.LoadOptions{})
			if err != nil || len(views) != 1 {
				t.Fatalf("Load %v port %d: %d views, %v", sel.path, sel.port, len(views), err)
			}
			got, w := views[0].Port.Rate, want(sel.path, sel.port)
			if !got.OK() || got.Value.Text != w {
				t.Errorf("DR path %s port %d: rate %q (%s), smpquery says %q", mad.FormatDRPath(sel.path), sel.port, got.Value.Text, got.Missing, w)
			}
			seen[w] = true
		}
	}
	all, err := f.Load(ctx, query.FabricSelector{Addr: mad.DirectedRoute(), AllPorts: true}, query.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range all {
		if v.Port.Num >= 1 && v.Port.Num <= 3 {
			if w := want(nil, v.Port.Num); v.Port.Rate.Value.Text != w {
				t.Errorf("all ports: port %d rate %q, smpquery says %q", v.Port.Num, v.Port.Rate.Value.Text, w)
			}
		}
	}
	if len(seen) != 3 {
		t.Errorf("rates %v: want three (QDR, EDR, HDR), or the test checks less than it says", seen)
	}
}
