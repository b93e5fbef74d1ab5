package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
	"github.com/ibkey/ibkey/internal/fakesysfs"
	"github.com/ibkey/ibkey/internal/lab"
)

// perfqueryNames: PortCounters field names as perfquery prints them, by ibkey's
// counter name.
var perfqueryNames = map[string]string{
	"port_rcv_constraint_errors":      "PortRcvConstraintErrors",
	"port_xmit_constraint_errors":     "PortXmitConstraintErrors",
	"symbol_error":                    "SymbolErrorCounter",
	"link_error_recovery":             "LinkErrorRecoveryCounter",
	"link_downed":                     "LinkDownedCounter",
	"port_rcv_errors":                 "PortRcvErrors",
	"port_rcv_remote_physical_errors": "PortRcvRemotePhysicalErrors",
	"port_rcv_switch_relay_errors":    "PortRcvSwitchRelayErrors",
	"port_xmit_discards":              "PortXmitDiscards",
	"local_link_integrity_errors":     "LocalLinkIntegrityErrors",
	"excessive_buffer_overrun_errors": "ExcessiveBufferOverrunErrors",
	"VL15_dropped":                    "VL15Dropped",
}

// smpqueryViolations: PortInfo's violation counters as smpquery portinfo prints them.
var smpqueryViolations = map[string]string{
	"pkey_violations": "PkeyViolations",
	"qkey_violations": "QkeyViolations",
	"mkey_violations": "MkeyViolations",
}

// TestLabFabricWatchCounters: `watch counters --lid/--dr` against ibsim, with
// perfquery and smpquery as the oracles: PortCounters set from ibsim's console show
// up with the values perfquery reports, changes between samples as deltas, 300 as a
// saturated 255; the PortInfo violation counters are real zeros from the SMP (ibsim
// does not simulate them), not the n/a of a watch without fabric access.
func TestLabFabricWatchCounters(t *testing.T) {
	l := cmdtest.StartLab(t, "small.net", newRootCmd)
	var hcaB, hcaD1, hcaD2, sw1 *cmdtest.Target
	for _, tg := range l.Targets(t) {
		switch {
		case tg.Node == "HcaB" && tg.Port == 1:
			hcaB = tg
		case tg.Node == "HcaD" && tg.Port == 1:
			hcaD1 = tg
		case tg.Node == "HcaD" && tg.Port == 2:
			hcaD2 = tg
		case tg.Node == "Switch1" && tg.Port == 4:
			sw1 = tg // not cabled: DOWN
		}
	}
	base := l.Attach()
	// watchExit: the watch exits code (4: counters the ports have were not read).
	watchExit := func(t *testing.T, code int, args ...string) []cmdtest.CountersSample {
		t.Helper()
		r := runIbkey(t, false, nil, append(append(base, "watch", "counters", "-o", "json"), args...)...)
		if r.code != code {
			t.Fatalf("watch counters %s: exit %d\n%s", strings.Join(args, " "), r.code, r.stderr)
		}
		return cmdtest.DecodeCounters(t, r.stdout)
	}
	watch := func(t *testing.T, args ...string) []cmdtest.CountersSample {
		t.Helper()
		return watchExit(t, 0, args...)
	}

	t.Run("dr-before-sm", func(t *testing.T) {
		// No LID yet: PortInfo is read by directed route; PortCounters need a LID,
		// so they are not read: exit 4.
		s := watchExit(t, 4, "--dr", hcaB.Path, "--once")
		p := s[0].Ports[0]
		if p.Device != "HcaB" || p.Port != 1 || p.Address != "DR path "+hcaB.Path {
			t.Fatalf("port: %+v", p)
		}
		for name, c := range p.Counters {
			switch {
			case strings.HasSuffix(name, "_violations"):
				if c.Source != "smp portinfo" || c.Value == nil || *c.Value != 0 {
					t.Errorf("%s: %+v", name, c)
				}
			case c.Source != "pma portcounters" || c.Value != nil || !strings.Contains(c.Unavailable, "needs a LID"):
				t.Errorf("%s without a LID: want n/a (needs a LID) from pma portcounters: %+v", name, c)
			}
		}
	})

	if err := l.RunOpenSM(cmdtest.FabricConf(t), false); err != nil {
		t.Fatal(err)
	}
	l.ResolveLIDs(t, []*cmdtest.Target{hcaB, hcaD1, hcaD2, sw1})
	lid := strconv.Itoa(hcaB.LID)
	perfSet := func(field string, v int) {
		l.MustConsole(fmt.Sprintf(`PerformanceSet "HcaB"[1] PortCounters.%s=%d`, field, v))
	}

	t.Run("perfquery", func(t *testing.T) {
		perfSet("PortRcvConstraintErrors", 7)
		perfSet("PortXmitConstraintErrors", 3)
		perfSet("SymbolErrorCounter", 1234)
		perfSet("LinkDownedCounter", 2)
		perfSet("PortRcvSwitchRelayErrors", 9)
		samples := watch(t, "--lid", lid, "--count", "2", "--interval", "100ms", "--all-counters")
		pq := lab.ParseFields(l.Diag(t, "perfquery", lid, "1"))
		pi := lab.ParseFields(l.Diag(t, "smpquery", "portinfo", lid, "1"))
		if len(samples) != 2 {
			t.Fatalf("%d samples", len(samples))
		}
		for i, s := range samples {
			if len(s.Ports) != 1 || s.Ports[0].Address != "lid "+lid || s.Ports[0].State != "ACTIVE" {
				t.Fatalf("sample %d: %+v", i, s.Ports)
			}
			got := s.Ports[0].Counters
			for name, field := range perfqueryNames {
				c := got[name]
				if c.Source != "pma portcounters" || c.Value == nil || strconv.FormatUint(*c.Value, 10) != pq[field] {
					t.Errorf("sample %d %s: %+v, perfquery %s: %s", i, name, c, field, pq[field])
				}
			}
			for name, field := range smpqueryViolations {
				c := got[name]
				if c.Source != "smp portinfo" || c.Value == nil || strconv.FormatUint(*c.Value, 10) != pi[field] || c.Unavailable != "" {
					t.Errorf("sample %d %s: %+v, smpquery portinfo %s: %s", i, name, c, field, pi[field])
				}
			}
			if d := got["port_rcv_constraint_errors"].Delta; i == 1 && (d == nil || *d != 0) {
				t.Errorf("sample %d: delta %v, want 0", i, d)
			}
		}
		if pq["PortRcvConstraintErrors"] != "7" || pq["SymbolErrorCounter"] != "1234" {
			t.Errorf("the console did not set the counters: perfquery %v", pq)
		}
	})

	t.Run("delta", func(t *testing.T) {
		perfSet("PortRcvConstraintErrors", 10)
		lines, stderr, code := cmdtest.Start(t, newRootCmd, append(base, "watch", "counters", "--lid", lid, "--count", "3", "--interval", "300ms", "-o", "json")...)
		go func() { _, _ = io.Copy(io.Discard, stderr) }()
		var samples []cmdtest.CountersSample
		for i := range 3 {
			samples = append(samples, cmdtest.DecodeCounters(t, cmdtest.Next(t, lines))...)
			if i == 0 {
				perfSet("PortRcvConstraintErrors", 15) // between the first and second sample
			}
		}
		if c := <-code; c != 0 {
			t.Fatalf("exit %d", c)
		}
		var total uint64
		for i, s := range samples {
			c := s.Ports[0].Counters["port_rcv_constraint_errors"]
			switch {
			case i == 0 && (c.Value == nil || *c.Value != 10 || c.Delta != nil):
				t.Errorf("first sample: %+v", c)
			case i > 0 && c.Delta == nil:
				t.Errorf("sample %d: no delta: %+v", i, c)
			case i > 0:
				total += *c.Delta
			}
		}
		if total != 5 || *samples[2].Ports[0].Counters["port_rcv_constraint_errors"].Value != 15 {
			t.Errorf("deltas add up to %d, want 5 (10 -> 15)", total)
		}
	})

	t.Run("reset", func(t *testing.T) {
		// perfquery -R (a Set of PortCounters, the reference tool's reset) between two
		// samples, then 4 new drops: the counter went down, so the delta is the new
		// value and says reset; what was counted before the reset is lost.
		perfSet("PortRcvConstraintErrors", 20)
		lines, stderr, code := cmdtest.Start(t, newRootCmd, append(base, "watch", "counters", "--lid", lid, "--count", "4", "--interval", "400ms", "-o", "json")...)
		go func() { _, _ = io.Copy(io.Discard, stderr) }()
		var samples []cmdtest.CountersSample
		for i := range 4 {
			samples = append(samples, cmdtest.DecodeCounters(t, cmdtest.Next(t, lines))...)
			if i == 0 {
				l.Diag(t, "perfquery", "-R", lid, "1")
				if pq := lab.ParseFields(l.Diag(t, "perfquery", lid, "1")); pq["PortRcvConstraintErrors"] != "0" {
					t.Fatalf("perfquery -R did not reset: %v", pq)
				}
				perfSet("PortRcvConstraintErrors", 4)
			}
		}
		if c := <-code; c != 0 {
			t.Fatalf("exit %d", c)
		}
		// The first sample that is not 20 any more (the tools may outlast an
		// interval) is the one after the reset. A sample can fall between the reset
		// and the 4 drops: 0, reset, then 4 with a delta of 4.
		counterText := func(v any) string {
			b, _ := json.Marshal(v)
			return string(b)
		}
		for i, smp := range samples[1:] {
			c := smp.Ports[0].Counters["port_rcv_constraint_errors"]
			if c.Value != nil && *c.Value == 20 && !c.Reset {
				continue
			}
			if c.Value != nil && *c.Value == 0 && c.Reset && i+2 < len(samples) {
				next := samples[i+2].Ports[0].Counters["port_rcv_constraint_errors"]
				if next.Value == nil || *next.Value != 4 || next.Reset || next.Delta == nil || *next.Delta != 4 || next.Saturated {
					t.Errorf("sample %d, after perfquery -R (sample %d: 0, reset) and 4 drops: %s, want 4, delta 4", i+2, i+1, counterText(next))
				}
				return
			}
			if c.Value == nil || *c.Value != 4 || !c.Reset || c.Delta == nil || *c.Delta != 4 || c.Saturated {
				t.Errorf("sample %d, after perfquery -R and 4 drops: %s, want 4, reset, delta 4", i+1, counterText(c))
			}
			return
		}
		t.Errorf("no sample after the reset: %+v", samples)
	})

	t.Run("saturated", func(t *testing.T) {
		perfSet("PortXmitConstraintErrors", 300) // ibsim clamps to 255, as the 8-bit counter saturates
		s := watch(t, "--lid", lid, "--count", "2", "--interval", "50ms")
		pq := lab.ParseFields(l.Diag(t, "perfquery", lid, "1"))
		for i, smp := range s {
			c := smp.Ports[0].Counters["port_xmit_constraint_errors"]
			if c.Value == nil || *c.Value != 255 || pq["PortXmitConstraintErrors"] != "255" || !c.Saturated {
				t.Errorf("sample %d: %+v (perfquery %s), want 255 saturated", i, c, pq["PortXmitConstraintErrors"])
			}
			if i == 1 && c.Delta != nil {
				t.Errorf("still saturated: delta %d, want none (the real count is unknown)", *c.Delta)
			}
		}
		r := runIbkey(t, false, nil, append(base, "watch", "counters", "--lid", lid, "--once")...)
		if !strings.Contains(r.stdout, " port_xmit_constraint_errors=255(saturated) ") {
			t.Errorf("plain: %s", r.stdout)
		}
	})

	t.Run("down-ca-port", func(t *testing.T) {
		// HcaB's port 2 is DOWN with no LID; reached through port 1's LID its
		// PortCounters are n/a naming the port and why, as perfquery LID 2 fails:
		// ibsim's PMA answers only for the port the MAD arrives on.
		if out, err := l.ToolAt(l.From, "perfquery", lid, "2"); err == nil {
			t.Fatalf("perfquery %s 2 read a DOWN CA port's counters through port 1:\n%s", lid, out)
		}
		// Nothing the fabric can give is not a gap (as fabric.NotRead leaves DOWN
		// ports out): exit 0.
		r := runIbkey(t, false, nil, append(base, "watch", "counters", "--lid", lid, "--port", "all", "--once", "-o", "json")...)
		s := cmdtest.DecodeCounters(t, r.stdout)
		if r.code != 0 || len(s) != 1 || len(s[0].Ports) != 2 || s[0].Ports[1].Port != 2 || s[0].Ports[1].State != "DOWN" {
			t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		for _, name := range []string{"port_rcv_constraint_errors", "port_xmit_constraint_errors"} {
			c := s[0].Ports[1].Counters[name]
			if c.Value != nil || !strings.Contains(c.Unavailable, "HcaB/2 is DOWN and has no LID of its own") ||
				!strings.Contains(c.Unavailable, "only for the port the MAD arrives on") || strings.Contains(c.Unavailable, "lid "+lid) {
				t.Errorf("HcaB/2 %s: %+v", name, c)
			}
		}
	})

	t.Run("down-switch-port", func(t *testing.T) {
		// A switch's DOWN port is read through the switch's PMA (PortSelect), as
		// perfquery reads it: its counters are values, never n/a.
		l.MustConsole(`PerformanceSet "Switch1"[4] PortCounters.PortRcvConstraintErrors=6`)
		swLID := strconv.Itoa(sw1.LID)
		pq := lab.ParseFields(l.Diag(t, "perfquery", swLID, "4"))
		s := watch(t, "--lid", swLID, "--port", "4", "--once", "--all-counters")
		p := s[0].Ports[0]
		if p.Device != "Switch1" || p.Port != 4 || p.State != "DOWN" {
			t.Fatalf("port: %+v", p)
		}
		for name, field := range perfqueryNames {
			if c := p.Counters[name]; c.Value == nil || strconv.FormatUint(*c.Value, 10) != pq[field] || c.Unavailable != "" {
				t.Errorf("Switch1/4 %s: %+v, perfquery %s: %s", name, c, field, pq[field])
			}
		}
		if pq["PortRcvConstraintErrors"] != "6" {
			t.Errorf("the console did not set Switch1[4]: perfquery %v", pq)
		}
	})

	t.Run("same-port", func(t *testing.T) {
		// HcaD's two LIDs (one per port) with --port all select each of its ports
		// twice: each is listed once, named as the one node it is.
		lids := fmt.Sprintf("%d,%d", hcaD1.LID, hcaD2.LID)
		s := watch(t, "--lid", lids, "--port", "all", "--once")
		var got []string
		for _, p := range s[0].Ports {
			got = append(got, fmt.Sprintf("%s/%d", p.Device, p.Port))
		}
		if strings.Join(got, " ") != "HcaD/1 HcaD/2" {
			t.Errorf("--lid %s --port all: ports %q, want HcaD/1 HcaD/2 once each", lids, got)
		}
	})

	t.Run("address-fails", func(t *testing.T) {
		// A LID no port has: not read (not answering looks the same): the others
		// are watched, it is named, and the exit is pkeys' for the same addresses
		// (4; was 3), never 0.
		args := []string{"--lid", lid + ",60", "--once"}
		s := watchExit(t, 4, args...)
		if len(s) != 1 || len(s[0].Ports) != 1 || s[0].Ports[0].Device != "HcaB" {
			t.Fatalf("watched: %+v", s)
		}
		if p := runIbkey(t, false, nil, append(base, "pkeys", "--lid", lid+",60")...); p.code != 4 {
			t.Errorf("pkeys --lid %s,60: exit %d, the watch's reference", lid, p.code)
		}
	})

	t.Run("local-port", func(t *testing.T) {
		// A local port whose node_guid and LID are HcaB's: with --ibsim its PortInfo
		// counters come from SMPs (attached at HcaA, DR path 0 is HcaA, so the LID is
		// used); a device the fabric does not have stays n/a with what was tried.
		ni := lab.ParseFields(l.Diag(t, "smpquery", "nodeinfo", lid))
		g := strings.TrimPrefix(ni["Guid"], "0x")
		if len(g) != 16 {
			t.Fatalf("smpquery nodeinfo Guid %q", ni["Guid"])
		}
		port := func(lid string) fakesysfs.Port {
			return fakesysfs.Port{Num: 1, State: "4: ACTIVE", PhysState: "5: LinkUp", LinkLayer: "InfiniBand", LID: lid,
				PKeys: fakesysfs.Table(4, "0xffff"), Counters: fakesysfs.IBCounters(nil)}
		}
		dir := t.TempDir()
		err := fakesysfs.Write(dir, fakesysfs.Host{Devices: []fakesysfs.Device{
			{Name: "mlx5_0", PCI: "0000:03:00.0", NodeType: "1: CA", NodeGUID: g[0:4] + ":" + g[4:8] + ":" + g[8:12] + ":" + g[12:16],
				Ports: []fakesysfs.Port{port(fmt.Sprintf("0x%x", hcaB.LID))}},
			{Name: "mlx5_1", PCI: "0000:04:00.0", NodeType: "1: CA", NodeGUID: "0002:c903:dead:beef",
				Ports: []fakesysfs.Port{port("0x0")}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		r := runIbkey(t, false, nil, append(append([]string{"--sysfs", dir}, base...), "watch", "counters", "--once", "-o", "json")...)
		s := cmdtest.DecodeCounters(t, r.stdout)
		if r.code != 4 || len(s) != 1 || len(s[0].Ports) != 2 { // 4: mlx5_1/1's PortInfo counters not read
			t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		pk := s[0].Ports[0].Counters["pkey_violations"]
		if pk.Source != "smp portinfo" || pk.Value == nil || *pk.Value != 0 || pk.Unavailable != "" {
			t.Errorf("mlx5_0/1 (HcaB's GUID and LID): %+v", pk)
		}
		if rc := s[0].Ports[0].Counters["port_rcv_constraint_errors"]; rc.Source != "sysfs" {
			t.Errorf("constraint errors of a local port come from sysfs: %+v", rc)
		}
		other := s[0].Ports[1].Counters["pkey_violations"]
		if other.Value != nil || !strings.Contains(other.Unavailable, "not reachable over MADs") || !strings.Contains(other.Unavailable, "DR path 0 is node 0x") {
			t.Errorf("mlx5_1/1 (not on the fabric): %+v", other)
		}
	})

	t.Run("slots", func(t *testing.T) {
		clients, err := l.Attached()
		if err != nil || len(clients) != 0 {
			t.Fatalf("attached after the watches: %v %v", clients, err)
		}
	})
}
