package mad_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/lab"
	"golang.org/x/sync/errgroup"
)

// These tests compare the codec and the ibsim transport with infiniband-diags
// (the oracle) on the simulated fabric. They skip when the lab is not
// installed, and fail instead under CI.

var labOpts = mad.Options{Timeout: 300 * time.Millisecond, Retries: 2}

// target is one port to check: a switch port (any port, 0 included) or a
// connected CA port, with the directed route that reaches it from the
// transport's node (for a CA, arriving on that port).
type target struct {
	node string
	typ  lab.NodeType
	port uint8
	path []uint8
}

func (tg target) String() string { return fmt.Sprintf("%s[%d]", tg.node, tg.port) }

func targets(t *testing.T, topo *lab.Topology, from string) []target {
	t.Helper()
	var out []target
	for _, n := range topo.Nodes {
		if n.Type == lab.Switch {
			p, err := topo.DRPath(from, n.Name, 0)
			if err != nil {
				t.Fatal(err)
			}
			for port := 0; port <= n.NumPorts; port++ {
				out = append(out, target{n.Name, n.Type, uint8(port), p})
			}
			continue
		}
		for port := 1; port <= n.NumPorts; port++ {
			if _, ok := n.Links[port]; !ok {
				continue
			}
			p, err := topo.DRPath(from, n.Name, port)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, target{n.Name, n.Type, uint8(port), p})
		}
	}
	return out
}

// comparePKeys checks GetPKeyTable at a against `smpquery [-D] pkeys ADDR PORT`.
func comparePKeys(t *testing.T, l *lab.Lab, tr mad.Transport, a mad.Address, tg target, smpArgs ...string) []uint16 {
	t.Helper()
	ctx := context.Background()
	n, err := mad.GetPKeyTableLen(ctx, tr, a, tg.port)
	if err != nil {
		t.Errorf("%s via %s: GetPKeyTableLen: %v", tg, a, err)
		return nil
	}
	got, err := mad.GetPKeyTable(ctx, tr, a, tg.port, n)
	if err != nil {
		t.Errorf("%s via %s: GetPKeyTable: %v", tg, a, err)
		return nil
	}
	out, err := l.Tool("smpquery", append(smpArgs, strconv.Itoa(int(tg.port)))...)
	if err != nil {
		t.Errorf("%s: %v", tg, err)
		return nil
	}
	want, err := lab.ParsePKeys(out)
	if err != nil {
		t.Errorf("%s: %v", tg, err)
		return nil
	}
	if n != want.Capacity {
		t.Errorf("%s via %s: table length %d, smpquery says capacity %d", tg, a, n, want.Capacity)
	}
	if fmt.Sprintf("%04x", got) != fmt.Sprintf("%04x", want.Entries[:min(len(want.Entries), want.Capacity)]) {
		t.Errorf("%s via %s: P_Key table\n got %04x\nwant %04x (smpquery %s)", tg, a, got, want.Entries, strings.Join(smpArgs, " "))
	}
	return got
}

// compareFields checks decoded values against smpquery/perfquery fields.
func compareFields(t *testing.T, what string, f lab.Fields, want map[string]string) {
	t.Helper()
	for name, v := range want {
		if f[name] != v {
			t.Errorf("%s: %s = %q (tool), %q (ours)", what, name, f[name], v)
		}
	}
}

var widthNames = map[uint8]string{1: "1X", 2: "4X", 4: "8X", 8: "12X", 16: "2X"}

func b01(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

func nodeInfoFields(ni mad.NodeInfo) map[string]string {
	return map[string]string{
		"NodeType":   ni.NodeType.String(),
		"NumPorts":   strconv.Itoa(int(ni.NumPorts)),
		"SystemGuid": fmt.Sprintf("0x%016x", ni.SystemImageGUID),
		"Guid":       fmt.Sprintf("0x%016x", ni.NodeGUID),
		"PortGuid":   fmt.Sprintf("0x%016x", ni.PortGUID),
		"PartCap":    strconv.Itoa(int(ni.PartitionCap)),
		"DevId":      fmt.Sprintf("0x%04x", ni.DeviceID),
		"LocalPort":  strconv.Itoa(int(ni.LocalPortNum)),
		"VendorId":   fmt.Sprintf("0x%06x", ni.VendorID),
	}
}

func portInfoFields(pi mad.PortInfo) map[string]string {
	return map[string]string{
		"GidPrefix":       fmt.Sprintf("0x%016x", pi.GIDPrefix),
		"Lid":             strconv.Itoa(int(pi.LID)),
		"SMLid":           strconv.Itoa(int(pi.MasterSMLID)),
		"CapMask":         fmt.Sprintf("0x%x", pi.CapabilityMask),
		"LinkWidthActive": widthNames[pi.LinkWidthActive],
		"LinkState":       pi.PortState.String(),
		"PhysLinkState":   pi.PhysState.String(),
		"LMC":             strconv.Itoa(int(pi.LMC)),
		"SMSL":            strconv.Itoa(int(pi.MasterSMSL)),
		"PartEnforceInb":  b01(pi.PartitionEnforcementInbound),
		"PartEnforceOutb": b01(pi.PartitionEnforcementOutbound),
		"FilterRawInb":    b01(pi.FilterRawInbound),
		"FilterRawOutb":   b01(pi.FilterRawOutbound),
		"MkeyViolations":  strconv.Itoa(int(pi.MKeyViolations)),
		"PkeyViolations":  strconv.Itoa(int(pi.PKeyViolations)),
		"QkeyViolations":  strconv.Itoa(int(pi.QKeyViolations)),
	}
}

func switchInfoFields(si mad.SwitchInfo) map[string]string {
	return map[string]string{"PartEnforceCap": strconv.Itoa(int(si.PartitionEnforcementCap))}
}

// checkNode compares NodeInfo, PortInfo and (for switches) SwitchInfo at a
// with smpquery run with addrArgs ("-D", "0,1" or "3").
func checkNode(t *testing.T, l *lab.Lab, tr mad.Transport, a mad.Address, tg target, addrArgs ...string) {
	t.Helper()
	ctx := context.Background()
	tool := func(args ...string) lab.Fields {
		out, err := l.Tool("smpquery", args...)
		if err != nil {
			t.Error(err)
		}
		return lab.ParseFields(out)
	}
	withAddr := func(attr string, extra ...string) []string {
		args := []string{}
		if addrArgs[0] == "-D" {
			args = append(args, "-D")
			addrArgs = addrArgs[1:]
			defer func() { addrArgs = append([]string{"-D"}, addrArgs...) }()
		}
		return append(append(append(args, attr), addrArgs...), extra...)
	}
	port := strconv.Itoa(int(tg.port))
	if tg.port == 0 || tg.typ == lab.CA {
		ni, err := mad.GetNodeInfo(ctx, tr, a)
		if err != nil {
			t.Errorf("%s: GetNodeInfo: %v", tg, err)
		} else {
			compareFields(t, tg.String()+" nodeinfo "+a.String(), tool(withAddr("nodeinfo")...), nodeInfoFields(ni))
		}
		desc, err := mad.GetNodeDesc(ctx, tr, a)
		if err != nil {
			t.Errorf("%s: GetNodeDesc: %v", tg, err)
		} else if want, _ := l.Tool("smpquery", withAddr("nodedesc")...); !strings.Contains(want, "Node Description:") || !strings.HasSuffix(strings.TrimSpace(want), "."+desc) {
			t.Errorf("%s: NodeDescription %q, smpquery: %q", tg, desc, want)
		}
	}
	pi, err := mad.GetPortInfo(ctx, tr, a, tg.port)
	if err != nil {
		t.Errorf("%s: GetPortInfo: %v", tg, err)
	} else {
		compareFields(t, tg.String()+" portinfo "+a.String(), tool(withAddr("portinfo", port)...), portInfoFields(pi))
	}
	if tg.typ == lab.Switch && tg.port == 0 {
		si, err := mad.GetSwitchInfo(ctx, tr, a)
		if err != nil {
			t.Errorf("%s: GetSwitchInfo: %v", tg, err)
		} else {
			compareFields(t, tg.String()+" switchinfo "+a.String(), tool(withAddr("switchinfo")...), switchInfoFields(si))
		}
	}
}

type fabricCase struct {
	file       string
	opts       *lab.Options
	allowBoth  bool
	partitions func(portGUID map[string]uint64) string // key "Node[port]"
	// wantMultiBlock: some table must have entries beyond block 0.
	wantMultiBlock bool
}

// each runs f for every target, a few at a time: the diags tools take ~15 ms
// each and ibsim has client slots to spare (10, one held by our transport).
func each(tgs []target, f func(target)) {
	var g errgroup.Group
	g.SetLimit(4)
	for _, tg := range tgs {
		g.Go(func() error { f(tg); return nil })
	}
	g.Wait()
}

func testFabric(t *testing.T, fc fabricCase) {
	l := lab.Start(t, fc.file, fc.opts)
	tr := l.Dial(t, "", labOpts)
	src := l.Topology.Nodes[0].Name
	if tr.Node != src {
		t.Fatalf("attached at %q, want the first node %q", tr.Node, src)
	}
	tgs := targets(t, l.Topology, src)
	ctx := context.Background()

	// Before any SM ran: every LID is 0, only directed routes work.
	var mu sync.Mutex
	guids := map[string]uint64{}
	each(tgs, func(tg target) {
		a := mad.DirectedRoute(tg.path...)
		path := mad.FormatDRPath(tg.path)
		comparePKeys(t, l, tr, a, tg, "-D", "pkeys", path)
		checkNode(t, l, tr, a, tg, "-D", path)
		ni, err := mad.GetNodeInfo(ctx, tr, a)
		if err != nil {
			t.Error(err)
			return
		}
		mu.Lock()
		guids[tg.String()] = ni.PortGUID
		mu.Unlock()
	})
	if t.Failed() {
		t.FailNow()
	}
	if _, err := mad.GetNodeInfo(ctx, tr, mad.LIDAddress(1)); !errors.Is(err, mad.ErrTimeout) {
		t.Errorf("LID-routed before the SM ran: err = %v, want ErrTimeout", err)
	}

	if err := l.RunOpenSM(fc.partitions(guids), fc.allowBoth); err != nil {
		t.Fatal(err)
	}

	// After OpenSM: LID-routed, every port's table as the SM programmed it.
	multiBlock := false
	each(tgs, func(tg target) {
		pi, err := mad.GetPortInfo(ctx, tr, mad.DirectedRoute(tg.path...), tg.port)
		if err != nil {
			t.Error(err)
			return
		}
		lid := pi.LID
		if tg.typ == lab.Switch && tg.port != 0 {
			// Switch external ports have no LID; address the switch.
			pi0, err := mad.GetPortInfo(ctx, tr, mad.DirectedRoute(tg.path...), 0)
			if err != nil {
				t.Error(err)
				return
			}
			lid = pi0.LID
		}
		if lid == 0 || pi.PortState != mad.PortStateActive && tg.typ == lab.CA {
			t.Errorf("%s after OpenSM: LID %d, state %s", tg, lid, pi.PortState)
			return
		}
		a := mad.LIDAddress(lid)
		tbl := comparePKeys(t, l, tr, a, tg, "pkeys", strconv.Itoa(int(lid)))
		for i, v := range tbl {
			if i >= mad.PKeysPerBlock && v&0x7fff != 0 {
				mu.Lock()
				multiBlock = true
				mu.Unlock()
			}
		}
		checkNode(t, l, tr, a, tg, strconv.Itoa(int(lid)))
	})
	if fc.wantMultiBlock && !multiBlock {
		t.Error("no P_Key table had entries beyond block 0; the partitions should have put some there")
	}
}

func TestLabSmallFabric(t *testing.T) {
	t.Parallel()
	testFabric(t, fabricCase{
		file:      "../../lab/testdata/small.net",
		allowBoth: true,
		partitions: func(g map[string]uint64) string {
			return fmt.Sprintf(`Default=0x7fff, ipoib : ALL=full ;
Compute=0x0001 : 0x%016x=full, 0x%016x=limited ;
Storage=0x0002 : ALL_CAS=limited, 0x%016x=full ;
Mgmt=0x0a0b : ALL_SWITCHES=full, 0x%016x=limited, 0x%016x=full ;
Both=0x0003 : 0x%016x=both, 0x%016x=full ;
`, g["HcaA[1]"], g["HcaB[1]"], g["HcaC[1]"], g["HcaD[2]"], g["HcaD[1]"], g["HcaA[1]"], g["HcaB[1]"])
		},
	})
}

func TestLabFatTree(t *testing.T) {
	t.Parallel()
	testFabric(t, fabricCase{
		file:           "../../lab/testdata/fattree.net",
		wantMultiBlock: true,
		partitions: func(g map[string]uint64) string {
			// 40 partitions all holding Hca1, so its table spans two blocks.
			var b strings.Builder
			b.WriteString("Default=0x7fff, ipoib : ALL=full ;\n")
			for k := 1; k <= 40; k++ {
				fmt.Fprintf(&b, "P%d=0x%04x : 0x%016x=full, 0x%016x=limited ;\n",
					k, 0x100+k, g["Hca1[1]"], g[fmt.Sprintf("Hca%d[1]", k%32+1)])
			}
			return b.String()
		},
	})
}

// Lane speeds as smpquery names them (libibmad dump.c mad_dump_linkspeed and
// mad_dump_linkspeedext).
var (
	speedNames    = map[uint8]string{1: "2.5 Gbps", 2: "5.0 Gbps", 4: "10.0 Gbps"}
	extSpeedNames = map[uint8]string{0: "No Extended Speed", 1: "14.0625 Gbps", 2: "25.78125 Gbps", 4: "53.125 Gbps"}
)

// TestLabPortSpeeds compares PortInfo's LinkWidthActive, LinkSpeedActive and
// LinkSpeedExtActive (byte 62, high 4 bits) with smpquery on links of three speeds
// (speeds.net: QDR, EDR, HDR), at both ends of each; elsewhere the lab's links are
// all SDR, without an extended speed.
func TestLabPortSpeeds(t *testing.T) {
	t.Parallel()
	l := lab.Start(t, "../../lab/testdata/speeds.net", nil)
	tr := l.Dial(t, "", labOpts)
	ctx := context.Background()
	ext := map[uint8]bool{}
	for port := uint8(1); port <= 3; port++ {
		for _, a := range []struct {
			addr mad.Address
			port uint8
		}{{mad.DirectedRoute(), port}, {mad.DirectedRoute(port), 1}} {
			pi, err := mad.GetPortInfo(ctx, tr, a.addr, a.port)
			if err != nil {
				t.Fatalf("%s port %d: %v", a.addr, a.port, err)
			}
			// A switch's external ports have no CapabilityMask (ibsim answers 0);
			// the CAs say they support extended speeds.
			if len(a.addr.Path) > 0 && pi.CapabilityMask&mad.CapExtendedSpeeds == 0 {
				t.Errorf("%s port %d: CapabilityMask 0x%x without IsExtendedSpeedsSupported", a.addr, a.port, pi.CapabilityMask)
			}
			ext[pi.LinkSpeedExtActive] = true
			out := l.MustTool("smpquery", "-D", "portinfo", mad.FormatDRPath(a.addr.Path), strconv.Itoa(int(a.port)))
			compareFields(t, fmt.Sprintf("%s port %d", a.addr, a.port), lab.ParseFields(out), map[string]string{
				"LinkWidthActive":    widthNames[pi.LinkWidthActive],
				"LinkSpeedActive":    speedNames[pi.LinkSpeedActive],
				"LinkSpeedExtActive": extSpeedNames[pi.LinkSpeedExtActive],
			})
		}
	}
	if len(ext) != 3 {
		t.Errorf("LinkSpeedExtActive values %v: want three (none, EDR, HDR), or the test checks less than it says", ext)
	}
}
