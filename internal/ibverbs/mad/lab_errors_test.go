package mad_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/lab"
	"github.com/ibkey/ibkey/internal/query"
)

const smallNet = "../../lab/testdata/small.net"

// lidOf returns the LID of node's port (0 for a switch) by directed route.
func lidOf(t testing.TB, l *lab.Lab, tr mad.Transport, node string, port uint8) uint16 {
	t.Helper()
	path, err := l.Topology.DRPath(l.Topology.Nodes[0].Name, node, int(port))
	if err != nil {
		t.Fatal(err)
	}
	pi, err := mad.GetPortInfo(context.Background(), tr, mad.DirectedRoute(path...), port)
	if err != nil {
		t.Fatal(err)
	}
	if pi.LID == 0 {
		t.Fatalf("%s[%d] has no LID", node, port)
	}
	return pi.LID
}

func TestLabPortCounters(t *testing.T) {
	t.Parallel()
	l := lab.Start(t, smallNet, nil)
	if err := l.RunOpenSM("Default=0x7fff : ALL=full ;\n", false); err != nil {
		t.Fatal(err)
	}
	tr := l.Dial(t, "", labOpts)
	ctx := context.Background()

	// Error counters do not move with traffic: set each to a distinct value.
	errCounters := map[string]uint64{
		"SymbolErrorCounter":           1234,
		"LinkErrorRecoveryCounter":     5,
		"LinkDownedCounter":            6,
		"PortRcvErrors":                300,
		"PortRcvRemotePhysicalErrors":  8,
		"PortRcvSwitchRelayErrors":     9,
		"PortXmitDiscards":             10,
		"PortXmitConstraintErrors":     11,
		"PortRcvConstraintErrors":      7,
		"LocalLinkIntegrityErrors":     3,
		"ExcessiveBufferOverrunErrors": 4,
		"VL15Dropped":                  13,
	}
	for _, tc := range []struct {
		node      string
		port      uint8
		lidOfPort uint8 // the port whose LID addresses the node
	}{{"HcaB", 1, 1}, {"HcaD", 2, 2}, {"Switch1", 2, 0}} {
		t.Run(fmt.Sprintf("%s[%d]", tc.node, tc.port), func(t *testing.T) {
			for name, v := range errCounters {
				out := l.MustConsole(fmt.Sprintf(`PerformanceSet "%s"[%d] PortCounters.%s=%d`, tc.node, tc.port, name, v))
				if !strings.Contains(out, "has been set to") {
					t.Fatalf("PerformanceSet %s: %q", name, out)
				}
			}
			lid := lidOf(t, l, tr, tc.node, tc.lidOfPort)
			pc, err := getPortCounters(ctx, tr, lid, tc.port)
			if err != nil {
				t.Fatal(err)
			}
			f := lab.ParseFields(l.MustTool("perfquery", fmt.Sprint(lid), fmt.Sprint(tc.port)))
			ours := map[string]uint64{
				"PortSelect":                   uint64(pc.PortSelect),
				"SymbolErrorCounter":           uint64(pc.SymbolErrorCounter),
				"LinkErrorRecoveryCounter":     uint64(pc.LinkErrorRecoveryCounter),
				"LinkDownedCounter":            uint64(pc.LinkDownedCounter),
				"PortRcvErrors":                uint64(pc.PortRcvErrors),
				"PortRcvRemotePhysicalErrors":  uint64(pc.PortRcvRemotePhysicalErrors),
				"PortRcvSwitchRelayErrors":     uint64(pc.PortRcvSwitchRelayErrors),
				"PortXmitDiscards":             uint64(pc.PortXmitDiscards),
				"PortXmitConstraintErrors":     uint64(pc.PortXmitConstraintErrors),
				"PortRcvConstraintErrors":      uint64(pc.PortRcvConstraintErrors),
				"LocalLinkIntegrityErrors":     uint64(pc.LocalLinkIntegrityErrors),
				"ExcessiveBufferOverrunErrors": uint64(pc.ExcessiveBufferOverrunErrors),
				"VL15Dropped":                  uint64(pc.VL15Dropped),
			}
			for name, v := range ours {
				want, err := f.Uint(name)
				if err != nil {
					t.Errorf("perfquery: %v", err)
					continue
				}
				if v != want {
					t.Errorf("%s = %d, perfquery %d", name, v, want)
				}
				if set, ok := errCounters[name]; ok && v != set {
					t.Errorf("%s = %d, set to %d from the console", name, v, set)
				}
			}
			// PortXmitWait moves with every MAD (perfquery's own too): ours
			// was read first, so it may only be smaller.
			for name, v := range map[string]uint32{"PortXmitWait": pc.PortXmitWait} {
				want, err := f.Uint(name)
				if err != nil {
					t.Errorf("perfquery: %v", err)
				} else if uint64(v) > want || want-uint64(v) > 1000 {
					t.Errorf("%s = %d, perfquery (later) %d", name, v, want)
				}
			}
		})
	}
	// The 8-bit constraint counters saturate at 255 (ibsim's PerformanceSet clamps
	// to the field width, ibsim/sim_cmd.c).
	out := l.MustConsole(`PerformanceSet "HcaC"[1] PortCounters.PortRcvConstraintErrors=300`)
	pc, err := getPortCounters(ctx, tr, lidOf(t, l, tr, "HcaC", 1), 1)
	if err != nil {
		t.Fatal(err)
	}
	if pc.PortRcvConstraintErrors != 255 {
		t.Errorf("PortRcvConstraintErrors after setting 300 = %d (console: %q), want 255", pc.PortRcvConstraintErrors, out)
	}
	pma := query.PMAPort{Port: 1}.Request()
	pma.Addr = mad.DirectedRoute(1)
	if _, err := tr.Do(ctx, pma); err == nil {
		t.Error("PortCounters by directed route: no error")
	}
}

// getPortCounters reads one port's PortCounters through query.ReadPortCounters, the
// one PMA reader ibkey has (the exporter's, watch counters --lid's).
func getPortCounters(ctx context.Context, t mad.Transport, lid uint16, port uint8) (mad.PortCounters, error) {
	r := query.ReadPortCounters(ctx, t, []query.PMAPort{{LID: lid, Port: port}})[0]
	return r.Counters, r.Err
}

// within fails when f takes longer than limit (a hang, not a clear error).
func within(t *testing.T, limit time.Duration, f func() error) error {
	t.Helper()
	start := time.Now()
	err := f()
	if d := time.Since(start); d > limit {
		t.Errorf("took %v, want under %v", d, limit)
	}
	return err
}

func TestLabErrors(t *testing.T) {
	t.Parallel()
	l := lab.Start(t, smallNet, nil)
	if err := l.RunOpenSM("Default=0x7fff : ALL=full ;\n", false); err != nil {
		t.Fatal(err)
	}
	tr := l.Dial(t, "", labOpts)
	ctx := context.Background()
	limit := 2 * time.Second // attempts x timeout, plus slack

	t.Run("no route", func(t *testing.T) {
		err := within(t, limit, func() error {
			_, err := mad.GetNodeInfo(ctx, tr, mad.LIDAddress(999))
			return err
		})
		var te *mad.TimeoutError
		if !errors.As(err, &te) || !te.Dropped || te.Attempts != 3 {
			t.Fatalf("err = %v, want a TimeoutError reporting the drop after 3 attempts", err)
		}
		if !strings.Contains(err.Error(), "lid 999") {
			t.Errorf("error %q does not name the LID", err)
		}
	})

	t.Run("dead end directed route", func(t *testing.T) {
		// Switch1 port 5 has no cable.
		err := within(t, limit, func() error {
			_, err := mad.GetNodeInfo(ctx, tr, mad.DirectedRoute(1, 5))
			return err
		})
		if !errors.Is(err, mad.ErrTimeout) || !strings.Contains(err.Error(), "DR path 0,1,5") {
			t.Fatalf("err = %v, want ErrTimeout naming the path", err)
		}
	})

	t.Run("ibsim Error drops", func(t *testing.T) {
		hcaB := mad.LIDAddress(lidOf(t, l, tr, "HcaB", 1))
		// Only NodeInfo (attribute 17) is dropped.
		l.MustConsole(`Error "HcaB"[1] 100 17`)
		err := within(t, limit, func() error {
			_, err := mad.GetNodeInfo(ctx, tr, hcaB)
			return err
		})
		if !errors.Is(err, mad.ErrTimeout) {
			t.Errorf("NodeInfo with 100%% error rate: err = %v, want ErrTimeout", err)
		}
		if _, err := mad.GetPortInfo(ctx, tr, hcaB, 1); err != nil {
			t.Errorf("PortInfo is not in the error attribute, yet: %v", err)
		}
		// Every attribute dropped, then restored.
		l.MustConsole(`Error "HcaB"[1] 100`)
		if _, err := mad.GetPKeyTable(ctx, tr, hcaB, 1, 64); !errors.Is(err, mad.ErrTimeout) {
			t.Errorf("P_KeyTable with 100%% error rate: err = %v, want ErrTimeout", err)
		}
		l.MustConsole(`Error "HcaB"[1] 0`)
		if _, err := mad.GetNodeInfo(ctx, tr, hcaB); err != nil {
			t.Errorf("after clearing the error rate: %v", err)
		}
	})

	t.Run("status error", func(t *testing.T) {
		// A CA has no SwitchInfo: the SMA answers with a bad status.
		_, err := mad.GetSwitchInfo(ctx, tr, mad.DirectedRoute())
		var se *mad.StatusError
		if !errors.As(err, &se) {
			t.Fatalf("SwitchInfo of a CA: err = %v, want a StatusError", err)
		}
		t.Logf("SwitchInfo of a CA: %v", err)
	})

	t.Run("slots", func(t *testing.T) {
		// ibsim has 10 client slots; the 11th client is refused with a
		// message that says so. All are given back on Close.
		var held []*mad.Ibsim
		defer func() {
			for _, h := range held {
				if err := h.Close(); err != nil {
					t.Error(err)
				}
			}
		}()
		var err error
		for i := 0; i < 11 && err == nil; i++ {
			var h *mad.Ibsim
			h, err = mad.DialIbsim(ctx, mad.IbsimOptions{SockName: l.SockName, Options: labOpts})
			if err == nil {
				held = append(held, h)
			}
		}
		if err == nil || !strings.Contains(err.Error(), "client slots") {
			t.Fatalf("after %d clients: err = %v, want a refusal naming the slots", len(held)+1, err)
		}
		if len(held) != 9 { // the test's own transport holds one slot
			t.Errorf("got %d more slots, want 9", len(held))
		}
		// With every slot taken, an unknown node cannot be told from full slots
		// (ibsim refuses both alike): the refusal says both, never "no such node".
		_, err = mad.DialIbsim(ctx, mad.IbsimOptions{SockName: l.SockName, Node: "NoSuchHca", Options: labOpts})
		var nn *mad.NoSimNodeError
		if errors.As(err, &nn) || err == nil || !strings.Contains(err.Error(), "the node does not exist or all 10 client slots are taken") {
			t.Errorf("unknown node, slots full: err = %v, want the refusal naming both causes", err)
		}
	})

	t.Run("unknown node", func(t *testing.T) {
		// A slot is free: the node is what ibsim refused, and the default node is
		// named; the slot taken to find out is given back.
		before, aerr := l.Attached()
		if aerr != nil {
			t.Fatal(aerr)
		}
		_, err := mad.DialIbsim(ctx, mad.IbsimOptions{SockName: l.SockName, Node: "NoSuchHca", Options: labOpts})
		var nn *mad.NoSimNodeError
		if !errors.As(err, &nn) || nn.Node != "NoSuchHca" || nn.Default != "HcaA" || !strings.Contains(err.Error(), `"NoSuchHca"`) {
			t.Fatalf("err = %v, want a *NoSimNodeError naming NoSuchHca and the default node HcaA", err)
		}
		after, aerr := l.Attached()
		if aerr != nil || len(after) != len(before) {
			t.Errorf("clients attached before %q, after %q (%v): a slot leaked", before, after, aerr)
		}
	})

	t.Run("no simulator", func(t *testing.T) {
		_, err := mad.DialIbsim(ctx, mad.IbsimOptions{SockName: l.SockName + "-nobody", Options: labOpts})
		if err == nil || !strings.Contains(err.Error(), "no simulator listening") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestLabKilledSimulator(t *testing.T) {
	t.Parallel()
	l := lab.Start(t, smallNet, nil)
	tr := l.Dial(t, "", labOpts)
	ctx := context.Background()
	if _, err := mad.GetNodeInfo(ctx, tr, mad.DirectedRoute()); err != nil {
		t.Fatal(err)
	}
	l.Kill()
	err := within(t, 2*time.Second, func() error {
		_, err := mad.GetNodeInfo(ctx, tr, mad.DirectedRoute(1))
		return err
	})
	if err == nil {
		t.Fatal("a query after ibsim died succeeded")
	}
	t.Logf("after kill: %v", err)
	err = within(t, 3*time.Second, tr.Close)
	if err == nil {
		t.Error("Close after ibsim died: no error (the DISCONNECT cannot have been answered)")
	}
	if _, err := mad.GetNodeInfo(ctx, tr, mad.DirectedRoute()); !errors.Is(err, mad.ErrClosed) {
		t.Errorf("after Close: err = %v, want ErrClosed", err)
	}
}

// TestLabInjectedPKeyTable writes unusual tables with the lab's Set helper
// (ibsim accepts SubnSet from any client) and reads them back both ways.
func TestLabInjectedPKeyTable(t *testing.T) {
	t.Parallel()
	l := lab.Start(t, smallNet, nil)
	tr := l.Dial(t, "", labOpts)
	ctx := context.Background()
	var blk0, blk1 [mad.PKeysPerBlock]uint16
	blk0 = [mad.PKeysPerBlock]uint16{0: 0xffff, 1: 0x0000, 2: 0x8000, 3: 0x0001, 4: 0x8001, 5: 0x7fff, 31: 0x1234}
	for i := range blk1 {
		blk1[i] = uint16(0x8000 | (i + 1) | i<<8)
	}
	for _, tc := range []struct {
		node string
		port uint8
		path []uint8
	}{
		{"HcaC", 1, []uint8{1, 7, 1}},
		{"Switch2", 1, []uint8{1, 7}},
		{"Switch2", 0, []uint8{1, 7}},
	} {
		a := mad.DirectedRoute(tc.path...)
		n, err := mad.GetPKeyTableLen(ctx, tr, a, tc.port)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.SetPKeyBlock(ctx, "", a, tc.port, 0, blk0); err != nil {
			t.Fatalf("%s[%d]: set block 0: %v", tc.node, tc.port, err)
		}
		if n > mad.PKeysPerBlock {
			if err := l.SetPKeyBlock(ctx, "", a, tc.port, 1, blk1); err != nil {
				t.Fatalf("%s[%d]: set block 1: %v", tc.node, tc.port, err)
			}
		}
		got := comparePKeys(t, l, tr, a, target{node: tc.node, port: tc.port, path: tc.path}, "-D", "pkeys", mad.FormatDRPath(tc.path))
		if len(got) > 0 && got[2] != 0x8000 {
			t.Errorf("%s[%d]: entry 2 = %#04x, want the injected 0x8000", tc.node, tc.port, got[2])
		}
		if n > mad.PKeysPerBlock && len(got) > 33 && got[33] != blk1[1] {
			t.Errorf("%s[%d]: entry 33 = %#04x, want the injected %#04x", tc.node, tc.port, got[33], blk1[1])
		}
	}
}
