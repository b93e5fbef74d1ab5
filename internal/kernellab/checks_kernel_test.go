package kernellab_test

import (
	"debug/elf"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestVerbsMatchesDevinfo: ibkey's verbs reader (purego, CGO_ENABLED=0) gives the
// numbers ibv_devinfo -v gives, as root and as uid 65534, and the P_Key sysfs shows.
func TestVerbsMatchesDevinfo(t *testing.T) {
	raw := rawValues(t)
	for _, who := range []string{"root", "nobody"} {
		p := probeVerbs(t, "probe_verbs_"+who)
		dv := devinfoPort(t, "devinfo_"+who)
		if p.Error != "" || p.Port == nil {
			t.Fatalf("%s: ibkey's verbs reader failed: %s", who, p.Error)
		}
		if !slices.Contains(p.Devices, dev) {
			t.Errorf("%s: devices %v lack %s", who, p.Devices, dev)
		}
		got := map[string]uint64{"bad_pkey_cntr": uint64(p.Port.BadPKeyCntr), "qkey_viol_cntr": uint64(p.Port.QKeyViolCntr),
			"pkey_tbl_len": uint64(p.Port.PKeyTblLen), "gid_tbl_len": uint64(p.Port.GIDTblLen), "port_lid": uint64(p.Port.LID), "state": uint64(p.Port.State), "phys_state": uint64(p.Port.PhysState)}
		for k, v := range got {
			if dv[k] != v {
				t.Errorf("%s: %s: verbs %d, ibv_devinfo -v %d", who, k, v, dv[k])
			}
		}
		// rdma_rxe reports a GID table (RXE_PORT_GID_TBL_LEN): the offset is not
		// read as 0 on both sides.
		if p.Port.GIDTblLen <= 0 {
			t.Errorf("%s: gid_tbl_len %d: rxe has a GID table", who, p.Port.GIDTblLen)
		}
		if p.Port.LinkLayer != 2 || raw["ports/1/link_layer"] != "Ethernet" {
			t.Errorf("%s: link layer %d (want 2, Ethernet; sysfs says %q)", who, p.Port.LinkLayer, raw["ports/1/link_layer"])
		}
		if p.PKey0 != raw["ports/1/pkeys/0"] {
			t.Errorf("%s: ibv_query_pkey index 0 = %q, sysfs pkeys/0 = %q", who, p.PKey0, raw["ports/1/pkeys/0"])
		}
		if !strings.Contains(p.Steps["open_missing"], "no such verbs device") || p.Steps["query_port_missing"] == "" {
			t.Errorf("%s: errors for a missing device or port: %v", who, p.Steps)
		}
	}
}

// TestStaticFlavour: the default build is dynamic (purego needs the C loader), the
// ibkey_static build is static and says in words that it has no verbs.
func TestStaticFlavour(t *testing.T) {
	p := probeVerbs(t, "probe_static")
	if p.Available || !strings.Contains(p.Error, "static flavour") {
		t.Errorf("static probe: %+v, want verbs unavailable naming the static flavour", p)
	}
	interp := func(name string) bool {
		f, err := elf.Open(filepath.Join(shared.bin, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				return true
			}
		}
		return false
	}
	if !interp("probe") || interp("probe-static") {
		t.Errorf("dynamic loader: default build %v (want true), ibkey_static build %v (want false)", interp("probe"), interp("probe-static"))
	}
}

type ibkeyPort struct {
	Device    string `json:"device"`
	Port      int    `json:"port"`
	LinkLayer string `json:"link_layer"`
	State     string `json:"state"`
	PhysState string `json:"phys_state"`
	NodeType  string `json:"type"`
	Rate      string `json:"rate"`
	TableSize int    `json:"table_size"`
	Entries   []struct {
		Index int    `json:"index"`
		PKey  string `json:"pkey"`
		Valid bool   `json:"valid"`
	} `json:"entries"`
}

// TestIbkeyDevicesAndPKeysOnKernel: ibkey devices and pkeys on the real tree agree with
// rdma link/dev and the raw files.
func TestIbkeyDevicesAndPKeysOnKernel(t *testing.T) {
	raw := rawValues(t)
	var devs struct{ Ports []ibkeyPort }
	decodeJSON(t, "ibkey_devices", mustSucceed(t, "ibkey_devices"), &devs)
	if len(devs.Ports) != 1 {
		t.Fatalf("ibkey devices: %d ports, want 1 (rxe0/1): %+v", len(devs.Ports), devs.Ports)
	}
	p := devs.Ports[0]
	var links []struct {
		IfName        string `json:"ifname"`
		State         string `json:"state"`
		PhysicalState string `json:"physical_state"`
		Netdev        string `json:"netdev"`
	}
	decodeJSON(t, "rdma_link", mustSucceed(t, "rdma_link"), &links)
	var rdev []struct {
		IfName   string `json:"ifname"`
		NodeType string `json:"node_type"`
	}
	decodeJSON(t, "rdma_dev", mustSucceed(t, "rdma_dev"), &rdev)
	if len(links) != 1 || len(rdev) != 1 {
		t.Fatalf("rdma link %+v / rdma dev %+v: want one rxe port", links, rdev)
	}
	if p.Device != rdev[0].IfName || links[0].IfName != dev+"/1" && links[0].IfName != dev {
		t.Errorf("device %s, rdma dev %s, rdma link %s", p.Device, rdev[0].IfName, links[0].IfName)
	}
	if p.State != links[0].State || !strings.EqualFold(strings.ReplaceAll(links[0].PhysicalState, "_", ""), p.PhysState) {
		t.Errorf("ibkey state %s/%s, rdma link %s/%s", p.State, p.PhysState, links[0].State, links[0].PhysicalState)
	}
	if p.NodeType != rdev[0].NodeType { // both "ca": ibkey's type is iproute2's spelling
		t.Errorf("node type: ibkey %s, rdma dev %s", p.NodeType, rdev[0].NodeType)
	}
	if p.LinkLayer != raw["ports/1/link_layer"] || p.Rate != raw["ports/1/rate"] || p.TableSize != 1 {
		t.Errorf("ibkey %+v; raw link_layer %q rate %q pkeys %q", p, raw["ports/1/link_layer"], raw["ports/1/rate"], raw["pkeys"])
	}
	for _, who := range []string{"ibkey_pkeys", "ibkey_pkeys_nobody"} {
		var pk struct{ Ports []ibkeyPort }
		decodeJSON(t, who, mustSucceed(t, who), &pk)
		if len(pk.Ports) != 1 || len(pk.Ports[0].Entries) != 1 || pk.Ports[0].Entries[0].PKey != raw["ports/1/pkeys/0"] || !pk.Ports[0].Entries[0].Valid {
			t.Errorf("%s: %+v, want one valid entry %s", who, pk.Ports, raw["ports/1/pkeys/0"])
		}
	}
	var ct struct {
		CanTalk bool `json:"can_talk"`
	}
	decodeJSON(t, "ibkey_cantalk", mustSucceed(t, "ibkey_cantalk"), &ct)
	if !ct.CanTalk {
		t.Errorf("ibkey can-talk rxe0/1 rxe0/1: %s", result(t, "ibkey_cantalk").Stdout)
	}
	t.Logf("ibkey devices -o plain on the real kernel:\n%s", mustSucceed(t, "ibkey_devices_plain"))
}

type watchJSON struct {
	Ports []struct {
		Device   string `json:"device"`
		Counters map[string]struct {
			Value       *uint64 `json:"value"`
			Source      string  `json:"source"`
			Unavailable string  `json:"unavailable"`
		} `json:"counters"`
	} `json:"ports"`
}

// TestIbkeyWatchOnKernel: `watch counters --once` on rxe: no counters/ directory (no
// PMA), so the constraint counters are n/a with that reason, never 0; with --ca rxe0
// it exits 0 (the port has no QP0: verbs and sysfs instead of SMPs).
func TestIbkeyWatchOnKernel(t *testing.T) {
	var w watchJSON
	decodeJSON(t, "ibkey_watch", mustSucceed(t, "ibkey_watch"), &w)
	if len(w.Ports) != 1 {
		t.Fatalf("ibkey watch: %+v", w)
	}
	for name, c := range w.Ports[0].Counters {
		if c.Value != nil && strings.Contains(name, "constraint") {
			t.Errorf("%s = %d on a port without counters/: want n/a", name, *c.Value)
		}
		if c.Value == nil && c.Unavailable == "" {
			t.Errorf("%s: no value and no reason", name)
		}
	}
	ca := result(t, "ibkey_watch_ca")
	if ca.Exit != 0 {
		t.Errorf("ibkey watch counters --ca rxe0 exits %d: %s", ca.Exit, ca.Stderr)
	}
	t.Logf("watch --once: %s%s\nwatch --once --ca rxe0 (exit %d): %s%s", mustSucceed(t, "ibkey_watch"), result(t, "ibkey_watch").Stderr, ca.Exit, ca.Stdout, ca.Stderr)
	ctq := result(t, "ibkey_cantalk_qkey")
	var v struct {
		AToB struct {
			OK      bool     `json:"ok"`
			Reasons []string `json:"reasons"`
		} `json:"a_to_b"`
	}
	decodeJSON(t, "ibkey_cantalk_qkey", ctq.Stdout, &v)
	// Measured (qkey table, top_bit_plus_ctx): rxe drops it; ibkey must say so, by rule.
	if v.AToB.OK || !strings.Contains(strings.Join(v.AToB.Reasons, " "), "verbatim rule") || ctq.Exit != 1 {
		t.Errorf("ibkey can-talk on rxe0 with wr_qkey 0x80000011 (exit %d): a_to_b %+v; want dropped under the verbatim rule, exit 1", ctq.Exit, v.AToB)
	}
	t.Logf("ibkey can-talk rxe0/1,qp=ud,qkey=0x11,wr_qkey=0x80000011 rxe0/1,qp=ud,qkey=0x11 (binary, exit %d):\n%s", ctq.Exit, ctq.Stdout)
}

// TestWatchVerbsDeltas: the sampler with the verbs source shows exactly the Q_Key
// violations the traffic between its two samples caused, labelled "verbs", as uid
// 65534 (no root, no MADs) and as root.
func TestWatchVerbsDeltas(t *testing.T) {
	for _, tc := range []struct {
		name      string
		qkeyDelta uint64
	}{
		// w1 wr names neither QP, w2 a top-bit wr_qkey (verbatim on rxe), w3 QP1 with a
		// non-GSI Q_Key: three drops; w4 matches.
		{"watch_traffic_nobody", 3},
		// w5 and w6 match: nothing counted.
		{"watch_traffic_root", 0},
	} {
		var w watchResult
		decodeJSON(t, tc.name, mustSucceed(t, tc.name), &w)
		if w.Error != "" {
			t.Fatalf("%s: %s\ntraffic: %s", tc.name, w.Error, w.Traffic)
		}
		find := func(cs []counterJSON, n string) counterJSON {
			for _, c := range cs {
				if c.Name == n {
					return c
				}
			}
			t.Fatalf("%s: no %s in %+v", tc.name, n, cs)
			return counterJSON{}
		}
		q, p := find(w.After, "qkey_violations"), find(w.After, "pkey_violations")
		if q.Source != "verbs" || p.Source != "verbs" || !q.HasDelta || q.Delta != tc.qkeyDelta || !p.HasDelta || p.Delta != 0 {
			t.Errorf("%s: qkey %+v, pkey %+v; want source verbs, qkey delta %d, pkey delta 0\ntraffic:\n%s", tc.name, q, p, tc.qkeyDelta, w.Traffic)
		}
		if c := find(w.After, "port_rcv_constraint_errors"); c.Unavailable == "" {
			t.Errorf("%s: port_rcv_constraint_errors %+v: rxe has no counters/, want n/a", tc.name, c)
		}
	}
	// ibkey watch (the binary, root) after all traffic reads what ibv_devinfo reads.
	cs := watchOnce(t, "ibkey_watch_after")
	dv := devinfoPort(t, "devinfo_final")
	q, pk := verbsValue(t, "ibkey_watch_after", cs, "qkey_violations"), verbsValue(t, "ibkey_watch_after", cs, "pkey_violations")
	t.Logf("after all traffic: ibv_devinfo qkey_viol_cntr=%d bad_pkey_cntr=%d; ibkey watch counters %d / %d", dv["qkey_viol_cntr"], dv["bad_pkey_cntr"], q, pk)
	if q != dv["qkey_viol_cntr"] || pk != dv["bad_pkey_cntr"] {
		t.Errorf("ibkey watch counters after all traffic: qkey %d pkey %d; ibv_devinfo %v", q, pk, dv)
	}
}

// TestUmadOnKernel: ibkey's umad transport and the umad ABI on the real kernel.
func TestUmadOnKernel(t *testing.T) {
	var r umadResult
	decodeJSON(t, "umad_root", mustSucceed(t, "umad_root"), &r)
	steps := map[string]umadStep{}
	var log strings.Builder
	for _, s := range r.Steps {
		steps[s.Name] = s
		log.WriteString(word(s.OK, "ok   ", "FAIL ") + s.Name + ": " + s.Info + "\n")
	}
	t.Logf("umad on rxe0 (root):\n%s", log.String())
	want := func(name string, ok bool, info string) {
		t.Helper()
		s, found := steps[name]
		if !found || s.OK != ok || !strings.Contains(s.Info, info) {
			t.Errorf("%s: %+v, want ok=%v with %q", name, s, ok, info)
		}
	}
	want("register SMI agent (qpn 0)", false, "protocol not supported")
	want("mad.OpenUmad", true, "")
	want("mad.GetPortInfo (SMP)", false, "no QP0")
	want("query.ReadPortCounters (GMP, no GRH)", false, "")
	for _, n := range []string{
		"open client + ENABLE_PKEY", "open responder + ENABLE_PKEY",
		"register client agent (PerfMgt, qpn 1)", "register responder agent (PerfMgt Get)",
		"client sends Get(PortCounters) with GRH to its own GID", "responder receives the request",
		"received length = 64-byte header + 256-byte MAD", "hdr.id is the responder's agent",
		"hdr.qpn (be32 at 20) is the sender's QP 1", "hdr.grh_present (32) set, hdr.gid (36..51) the port's GID",
		"request TID and method arrived intact", "responder sends GetResp back through the received header",
		"client receives the reply", "reply status 0, method GetResp, TID low 32 bits kept", "mad.Decode of the reply",
		"client gets its request back with status ETIMEDOUT", "register an agent without ENABLE_PKEY",
		"old-header reply is 56 + 256 bytes", "unregister client agent",
	} {
		want(n, true, "")
	}
	var nb umadResult
	decodeJSON(t, "umad_nobody", mustSucceed(t, "umad_nobody"), &nb)
	if len(nb.Steps) == 0 || nb.Steps[0].Name != "mad.OpenUmad" || nb.Steps[0].OK || !strings.Contains(nb.Steps[0].Info, "permission denied") {
		t.Errorf("uid 65534: %+v, want OpenUmad to fail with permission denied (umad0 is 0600)", nb.Steps)
	}
}

// TestFixtureMatchesKernel: testdata/sysfs/rxe is the tree this kernel writes: the same
// files, the same contents except values that change every boot (GUIDs and GIDs come
// from dummy0's random MAC; lifespan counts time).
func TestFixtureMatchesKernel(t *testing.T) {
	mustSucceed(t, "save_sysfs")
	saved := filepath.Join(shared.run.Dir, "work", "sysfs-rxe")
	fixture := filepath.Join(repoRoot(), "testdata", "sysfs", "rxe")
	volatile := map[string]bool{"node_guid": true, "sys_image_guid": true, "0": false}
	read := func(root string) map[string]string {
		m := map[string]string{}
		// The trailing slash follows the class symlink of the fixture.
		top := filepath.Join(root, "class", "infiniband", dev) + "/"
		err := filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			st, err := os.Stat(p)
			if err != nil || st.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(top, p)
			b, err := os.ReadFile(p)
			m[rel] = string(b)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	got, want := read(saved), read(fixture)
	for k, v := range got {
		w, ok := want[k]
		base := filepath.Base(k)
		switch {
		case !ok:
			t.Errorf("the kernel has %s, the fixture does not", k)
		case volatile[base] || strings.Contains(k, "/gids/") || strings.HasSuffix(k, "hw_counters/lifespan"):
		case v != w:
			t.Errorf("%s: kernel %q, fixture %q", k, v, w)
		}
	}
	for k := range want {
		if _, ok := got[k]; !ok && k != "parent" {
			t.Errorf("the fixture has %s, the kernel's saved tree does not", k)
		}
	}
	raw := rawValues(t)
	if raw["parent"] != strings.TrimSpace(want["parent"]) || !strings.Contains(raw["link"], "devices/virtual/infiniband/rxe0") {
		t.Errorf("fixture parent %q / link; kernel parent %q link %q", want["parent"], raw["parent"], raw["link"])
	}
}

var _ = json.Unmarshal
