package fabric

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/lab"
)

// TestLabDiffAgainstIbnetdiscover generates the reconfigurations real fabrics go
// through on the simulated fabric (a link unlinked and relinked, a node taken off the
// fabric and back, a cable moved to another port, parallel links crossed, a node
// replaced by one with another GUID, LIDs reassigned by an OpenSM with another LMC,
// the subnet prefix changed, partitions.conf edited and OpenSM HUPped, a P_Key table
// entry changed behind OpenSM's back, then a HUP; a NodeDescription changed) on
// small.net (parallel links, a dual-homed CA) and the router lab, in a seeded random
// order, and compares `ibkey fabric diff` of the sweeps before and after
// with what the reference tools read from the same fabric:
//   - topology: ibnetdiscover's own listings of its caches (`--load-cache`): the
//     nodes, links, port GUIDs and LIDs ibkey says changed are exactly those that
//     changed there, and every port `ibnetdiscover --load-cache B --diff A` flags
//     (its default checks, then lid and nodedesc) is named by one of ibkey's changes;
//   - P_Keys and PortInfo (state, physical state, LID, LMC, GID prefix): every
//     change ibkey names agrees with what smpquery reads on both sides, and every
//     port where smpquery saw one has one;
//   - the exit code is 1 with changes and 0 without (the help's table).
//
// ibnetdiscover --diff is blind where ibkey is not: cabling that moves between ports of
// one switch (its diff compares the remote port's GUID, which every port of a switch
// shares), so crossed parallel links show in its listings, not in its diff.
//
// IBKEY_DIFF_SEEDS=N runs N seeds per topology (default 1; `make truth` runs more).
func TestLabDiffAgainstIbnetdiscover(t *testing.T) {
	lab.Require(t)
	if testing.Short() {
		t.Skip("lab: -short")
	}
	seeds := 1
	if n, err := strconv.Atoi(os.Getenv("IBKEY_DIFF_SEEDS")); err == nil && n > 0 {
		seeds = n
	}
	t.Run("nodedesc", func(t *testing.T) {
		// ibsim answers a SubnSet(NodeDescription) with "method unsupported" (ibsim
		// sim_mad.c do_nodedesc; SMs only Get it) and has no console command for it:
		// the same fabric with one node renamed is a second simulator, whose GUIDs
		// are the same (ibsim numbers them in file order).
		t.Parallel()
		text, err := os.ReadFile(labTopologies + "small.net")
		if err != nil {
			t.Fatal(err)
		}
		renamed := filepath.Join(t.TempDir(), "renamed.net")
		if err := os.WriteFile(renamed, []byte(strings.ReplaceAll(string(text), `"HcaC"`, `"HcaC renamed"`)), 0o644); err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		a := startFabricLab(t, "small.net").diffSnap(t, dir)
		l := &fabricLab{Lab: lab.Start(t, renamed, nil), from: "HcaA"}
		compareDiff(t, l, a, l.diffSnap(t, dir))
	})
	for _, topo := range []string{"small", "router"} {
		for s := range seeds {
			seed := uint64(7100 + s)
			t.Run(fmt.Sprintf("%s/%d", topo, seed), func(t *testing.T) {
				t.Parallel()
				var l *fabricLab
				if topo == "router" {
					l = &fabricLab{Lab: lab.StartRouterLab(t), from: "HcaA"}
				} else {
					l = startFabricLab(t, "small.net")
				}
				runDiffCases(t, l, seed)
			})
		}
	}
}

// diffSnap is one side of a generated case: ibkey's sweep, ibnetdiscover's cache of
// the same fabric state and its listing, and the P_Key tables smpquery read.
type diffSnap struct {
	file   string
	f      *fabric.Fabric
	cache  string
	net    lab.Net
	lids   map[check.PortID]string // "LID/LMC" of CA and router ports, LID of switch port 0
	tables map[check.PortID][]uint16
	// portInfo is what smpquery portinfo reads of each port ibkey read, by ibkey's
	// field names and in its spelling.
	portInfo map[check.PortID]map[string]string
}

func (l *fabricLab) diffSnap(t *testing.T, dir string) *diffSnap {
	t.Helper()
	dir, err := os.MkdirTemp(dir, "snap")
	if err != nil {
		t.Fatal(err)
	}
	s := &diffSnap{file: filepath.Join(dir, "fabric.json"), cache: filepath.Join(dir, "ibnetdiscover.cache")}
	f, r := l.discoverFile(t)
	if r.Code != 0 {
		t.Fatalf("fabric discover: exit %d: %s", r.Code, r.Stderr)
	}
	if err := os.WriteFile(s.file, []byte(r.Stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	s.f = f
	l.tool(t, "ibnetdiscover", "--cache", s.cache)
	listing := l.tool(t, "ibnetdiscover", "--load-cache", s.cache)
	net, err := lab.ParseIbnetdiscover(listing)
	if err != nil {
		t.Fatal(err)
	}
	s.net, s.lids = net, parseNetLIDs(listing)
	s.tables, s.portInfo = map[check.PortID][]uint16{}, map[check.PortID]map[string]string{}
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if id := (check.PortID{Node: n.GUID, Port: p.Num}); p.Error == "" {
				s.portInfo[id] = smpPortInfo(t, l.tool(t, "smpquery", "-D", "portinfo", pathTo(f, id), fmt.Sprint(p.Num)))
			}
			if p.PKeys == nil || (p.LID == 0 && n.Type != check.NodeSwitch) {
				continue
			}
			var args []string
			if n.Type == check.NodeSwitch {
				args = []string{"-D", "pkeys", n.Path, fmt.Sprint(p.Num)}
			} else {
				args = []string{"pkeys", fmt.Sprint(p.LID)}
			}
			pt, err := lab.ParsePKeys(l.tool(t, append([]string{"smpquery"}, args...)...))
			if err != nil {
				t.Fatal(err)
			}
			s.tables[check.PortID{Node: n.GUID, Port: p.Num}] = pt.Entries
		}
	}
	return s
}

var (
	netCAPortRE = regexp.MustCompile(`^\[(\d+)\]\([0-9a-f]+\)\s+"[SHR]-[0-9a-f]{16}"\[\d+\].*# lid (\d+) lmc (\d+) `)
	netSwLIDRE  = regexp.MustCompile(`^Switch\s+\d+\s+"S-([0-9a-f]{16})".*port 0 lid (\d+) lmc (\d+)`)
	netNodeRE   = regexp.MustCompile(`^(?:[<>] )?(?:Switch|Ca|Rt)\s+\d+\s+"[SHR]-([0-9a-f]{16})"`)
	netDiffRE   = regexp.MustCompile(`^([<>]) \[(\d+)\]`)
)

// smpPortInfo is smpquery portinfo's state, physical state, LID, LMC and GID prefix,
// named and spelt as fabric diff's port-changed fields (a GID prefix 0 is none).
func smpPortInfo(t *testing.T, out string) map[string]string {
	f := lab.ParseFields(out)
	m := map[string]string{
		"state":      map[string]string{"Down": check.StateDown, "Initialize": check.StateInit, "Armed": check.StateArmed, "Active": check.StateActive}[f["LinkState"]],
		"phys_state": f["PhysLinkState"],
	}
	for _, x := range []struct{ field, name string }{{"lid", "Lid"}, {"lmc", "LMC"}, {"gid_prefix", "GidPrefix"}} {
		v, err := f.Uint(x.name)
		if err != nil {
			t.Fatalf("smpquery portinfo: %v\n%s", err, out)
		}
		m[x.field] = fmt.Sprint(v)
		if x.field == "gid_prefix" {
			m[x.field] = ""
			if v != 0 {
				m[x.field] = check.FormatGIDPrefix(check.GUID(v))
			}
		}
	}
	if m["state"] == "" || m["phys_state"] == "" {
		t.Fatalf("smpquery portinfo: state %q, physical state %q unknown\n%s", f["LinkState"], f["PhysLinkState"], out)
	}
	return m
}

// pathTo is the directed route to port id's node in f, by which the port can be
// asked for: a CA's or router's port is reached through its own link, so the route
// is the one that arrives at its peer's end and goes on through it.
func pathTo(f *fabric.Fabric, id check.PortID) string {
	n := f.Node(id.Node)
	if n.Type == check.NodeSwitch || id.Port == 0 {
		return n.Path
	}
	p := f.Port(id)
	if p.Peer == nil {
		return n.Path
	}
	if peer := f.Node(p.Peer.Node); peer.Type == check.NodeSwitch {
		return fmt.Sprintf("%s,%d", peer.Path, p.Peer.Port)
	}
	return n.Path
}

// parseNetLIDs reads the LIDs ibnetdiscover lists: "LID/LMC" of each CA and router
// port on a link, and the LID of each switch's port 0.
func parseNetLIDs(out string) map[check.PortID]string {
	m := map[check.PortID]string{}
	var cur check.GUID
	for line := range strings.Lines(out) {
		line = strings.TrimSpace(line)
		if h := netNodeRE.FindStringSubmatch(line); h != nil {
			g, _ := strconv.ParseUint(h[1], 16, 64)
			cur = check.GUID(g)
			if sw := netSwLIDRE.FindStringSubmatch(line); sw != nil {
				m[check.PortID{Node: cur}] = sw[2]
			}
			continue
		}
		if p := netCAPortRE.FindStringSubmatch(line); p != nil {
			n, _ := strconv.Atoi(p[1])
			m[check.PortID{Node: cur, Port: n}] = p[2] + "/" + p[3]
		}
	}
	return m
}

// netDiffFlags are the nodes and ports `ibnetdiscover --diff` prints with a < or >
// mark: a port line, or a node header (port 0: the node itself).
func netDiffFlags(out string) map[check.PortID]bool {
	m := map[check.PortID]bool{}
	var cur check.GUID
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if h := netNodeRE.FindStringSubmatch(line); h != nil {
			g, _ := strconv.ParseUint(h[1], 16, 64)
			cur = check.GUID(g)
			if line[0] == '<' || line[0] == '>' {
				m[check.PortID{Node: cur}] = true
			}
			continue
		}
		if p := netDiffRE.FindStringSubmatch(line); p != nil {
			n, _ := strconv.Atoi(p[2])
			m[check.PortID{Node: cur, Port: n}] = true
		}
	}
	return m
}

type diffChange struct {
	Kind    string              `json:"kind"`
	Ports   []check.FindingPort `json:"ports"`
	Field   string              `json:"field"`
	Before  string              `json:"before"`
	After   string              `json:"after"`
	Message string              `json:"message"`
}

var movedRE = regexp.MustCompile(`: (0x[0-9a-f]{4}) moved from index`)

// runDiffCases runs the generated reconfigurations on l, checking each one.
func runDiffCases(t *testing.T, l *fabricLab, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0x1bd1ff))
	dir := t.TempDir()
	cas := l.Topology.CAs()
	// partitions.conf: Default, then up to four random partitions of random CA ports.
	var portGUIDs []check.GUID
	conf := func(f *fabric.Fabric) string {
		if portGUIDs == nil {
			for _, n := range f.Nodes {
				if n.Type != check.NodeSwitch {
					for _, p := range n.Ports {
						if p.GUID != 0 && p.Peer != nil {
							portGUIDs = append(portGUIDs, p.GUID)
						}
					}
				}
			}
		}
		var b strings.Builder
		b.WriteString("Default=0x7fff, ipoib : ALL=full ;\n")
		for i := range 1 + rng.IntN(4) {
			fmt.Fprintf(&b, "p%d=0x%04x :", i, 1+rng.IntN(6))
			sep := " "
			for _, g := range portGUIDs {
				switch rng.IntN(3) {
				case 1:
					fmt.Fprintf(&b, "%s%s=full", sep, g)
					sep = ", "
				case 2:
					fmt.Fprintf(&b, "%s%s=limited", sep, g)
					sep = ", "
				}
			}
			b.WriteString(" ;\n")
		}
		return b.String()
	}
	// curConf and curOSM are the running OpenSM's partitions.conf and opensm.conf
	// lines: a restart changes only what its step means to.
	// log_flags 0x0f adds OSM_LOG_DEBUG, where pkey_mgr_update_port logs each table
	// block it writes to a CA or router port (osm_pkey_mgr.c).
	curConf, curOSM := "Default=0x7fff, ipoib : ALL=full ;\n", []string{}
	d := l.StartOpenSMDaemon(t, curConf, "log_flags 0x0f")
	restart := func(osm ...string) {
		d.Stop()
		curOSM = osm
		d = l.StartOpenSMDaemon(t, curConf, append([]string{"log_flags 0x0f"}, osm...)...)
	}
	osmLog := "" // what OpenSM logged while applying a partitions.conf step
	// settle waits for two heavy sweeps: the SUBNET UP after a SIGHUP may end a sweep
	// that was already under way (one a moved cable's port change started), which
	// can leave a new link's ports INIT; the second brings them to ACTIVE (seen in CI:
	// router/7100 04-cable_moved, its saved sweep INIT and the next one ACTIVE).
	settle := func() {
		t.Helper()
		for range 2 {
			if err := d.Resweep(30 * time.Second); err != nil {
				t.Fatal(err)
			}
		}
	}
	// linked: the current cabling, by "Node[port]".
	linked := map[string]string{}
	for _, n := range l.Topology.Nodes {
		for p, x := range n.Links {
			linked[fmt.Sprintf("%q[%d]", n.Name, p)] = fmt.Sprintf("%q[%d]", x.Peer, x.PeerPort)
		}
	}
	// parallel: small.net's two links between Switch1 and Switch2, left to the
	// step that crosses them.
	parallel := map[string]bool{`"Switch1"[7]`: true, `"Switch1"[8]`: true, `"Switch2"[7]`: true, `"Switch2"[8]`: true}
	// movable: the cabled ports, but none of the node where the tools and OpenSM
	// attach (l.from), nor the switch port facing it.
	movable := func(switches bool) []string {
		var out []string
		for e, peer := range linked {
			if strings.HasPrefix(e, fmt.Sprintf("%q[", l.from)) || strings.HasPrefix(peer, fmt.Sprintf("%q[", l.from)) || parallel[e] {
				continue
			}
			if sw := strings.Contains(e, "Switch") || strings.Contains(e, "Sw1"); sw == switches {
				out = append(out, e)
			}
		}
		slices.Sort(out)
		return out
	}
	console := func(cmd string) {
		t.Helper()
		if out := l.MustConsole(cmd); strings.Contains(out, "#") {
			t.Fatalf("ibsim %s: %s", cmd, out)
		}
	}
	unlink := func(e string) {
		peer := linked[e]
		console("Unlink " + e)
		delete(linked, e)
		delete(linked, peer)
	}
	link := func(a, b string) {
		console("Link " + a + " " + b)
		linked[a], linked[b] = b, a
	}
	type step struct {
		name string
		do   func() string // the change made, for the log
	}
	var unlinked []string
	off := "" // the node taken off the fabric
	steps := []step{
		{"unlink", func() string {
			m := movable(rng.IntN(2) == 0)
			if len(m) == 0 {
				m = movable(false)
			}
			e := m[rng.IntN(len(m))]
			unlinked = append(unlinked, e, linked[e])
			unlink(e)
			return "Unlink " + e
		}},
		{"relink", func() string {
			for len(unlinked) > 0 {
				a, b := unlinked[0], unlinked[1]
				unlinked = unlinked[2:]
				if out, _ := l.Console("ReLink " + a); !strings.Contains(out, "#") {
					linked[a], linked[b] = b, a
					return "ReLink " + a
				}
			}
			return ""
		}},
		{"node off and back", func() string {
			var names []string
			for _, n := range cas {
				if n.Name != l.from {
					names = append(names, n.Name)
				}
			}
			name := names[rng.IntN(len(names))]
			for e := range linked {
				if strings.HasPrefix(e, fmt.Sprintf("%q[", name)) {
					delete(linked, linked[e])
					delete(linked, e)
				}
			}
			console(fmt.Sprintf("Unlink %q", name))
			off = name
			return fmt.Sprintf("Unlink %q (all ports)", name)
		}},
		{"node back", func() string {
			// ReLink of a node restores every port it saved.
			if off == "" {
				return ""
			}
			name := off
			off = ""
			if out, _ := l.Console(fmt.Sprintf("ReLink %q", name)); strings.Contains(out, "#") {
				return ""
			}
			n := l.Topology.Nodes[slices.IndexFunc(l.Topology.Nodes, func(n *lab.Node) bool { return n.Name == name })]
			for p, x := range n.Links {
				a, b := fmt.Sprintf("%q[%d]", name, p), fmt.Sprintf("%q[%d]", x.Peer, x.PeerPort)
				linked[a], linked[b] = b, a
			}
			return fmt.Sprintf("ReLink %q (all ports)", name)
		}},
		{"cable moved", func() string {
			m := movable(false)
			e := m[rng.IntN(len(m))]
			peer := linked[e]
			sw := peer[:strings.Index(peer, "[")]
			n := l.Topology.Nodes[slices.IndexFunc(l.Topology.Nodes, func(n *lab.Node) bool { return fmt.Sprintf("%q", n.Name) == sw })]
			for p := n.NumPorts; p >= 1; p-- {
				free := fmt.Sprintf("%s[%d]", sw, p)
				if _, ok := linked[free]; !ok {
					unlink(e)
					link(e, free)
					return fmt.Sprintf("%s moved from %s to %s", e, peer, free)
				}
			}
			return ""
		}},
		{"node replaced", func() string {
			var names []string
			for _, n := range cas {
				if n.Name != l.from {
					names = append(names, n.Name)
				}
			}
			name := names[rng.IntN(len(names))]
			g := 0x0002c90300f00000 + rng.Uint64N(0x1000)*16
			console(fmt.Sprintf("Guid %q %#x", name, g))
			return fmt.Sprintf("%s now has node GUID %#x", name, g)
		}},
		{"LIDs reassigned", func() string {
			lmc := 1 + rng.IntN(2)
			osm := slices.DeleteFunc(slices.Clone(curOSM), func(s string) bool { return strings.HasPrefix(s, "lmc ") })
			restart(append(osm, fmt.Sprintf("lmc %d", lmc), "reassign_lids TRUE")...)
			return fmt.Sprintf("OpenSM restarted with lmc %d, reassign_lids", lmc)
		}},
		{"subnet prefix changed", func() string {
			prefix := fmt.Sprintf("0xfe800000000000%02x", 1+rng.IntN(0xfe))
			osm := slices.DeleteFunc(slices.Clone(curOSM), func(s string) bool { return strings.HasPrefix(s, "subnet_prefix ") })
			restart(append(osm, "subnet_prefix "+prefix)...)
			return "OpenSM restarted with subnet_prefix " + prefix
		}},
	}
	// Crossed parallel links: only where a pair of switches has two (small.net).
	if _, ok := linked[`"Switch1"[7]`]; ok {
		steps = append(steps, step{"parallel links crossed", func() string {
			if linked[`"Switch1"[7]`] != `"Switch2"[7]` || linked[`"Switch1"[8]`] != `"Switch2"[8]` {
				return ""
			}
			unlink(`"Switch1"[7]`)
			unlink(`"Switch1"[8]`)
			link(`"Switch1"[7]`, `"Switch2"[8]`)
			link(`"Switch1"[8]`, `"Switch2"[7]`)
			return "Switch1[7,8] - Switch2[7,8] crossed"
		}})
	}
	for range 3 {
		steps = append(steps, step{"partitions.conf", func() string {
			text := conf(nil)
			curConf = text
			from := d.LogSize()
			if _, _, err := d.Reprogram(context.Background(), text); err != nil {
				t.Fatal(err)
			}
			osmLog = d.LogText()[from:]
			return "partitions.conf now:\n" + text
		}})
	}
	steps = append(steps, step{"table entry set behind OpenSM's back", nil})
	rng.Shuffle(len(steps), func(i, j int) { steps[i], steps[j] = steps[j], steps[i] })

	a := l.diffSnap(t, dir)
	conf(a.f)
	for i := 0; i < len(steps); i++ {
		st := steps[i]
		var what string
		osmLog = ""
		if st.do == nil {
			what = setBehindOpenSM(t, l, a, rng)
			// Then a heavy sweep. OpenSM 3.3.23 does not put the entry back: it reads a
			// port's P_KeyTable only when the port needs an update (new, or back from
			// down: osm_port_info_rcv.c, need_update) and writes only the blocks that
			// differ from its own copy (osm_pkey_mgr.c); diff must say what smpquery
			// reads, whichever OpenSM does.
			steps = slices.Insert(steps, i+1, step{"OpenSM HUPped after the Set", func() string {
				settle()
				return "SIGHUP to OpenSM"
			}})
		} else {
			what = st.do()
			if what != "" && !strings.Contains(what, "OpenSM") && st.name != "partitions.conf" {
				settle()
			}
		}
		if what == "" {
			continue
		}
		b, log := l.diffSnap(t, dir), osmLog
		t.Run(fmt.Sprintf("%02d-%s", i, st.name), func(t *testing.T) {
			t.Logf("%s", what)
			compareDiff(t, l, a, b)
			// OpenSM, the only writer in this step, logged a write to each CA or
			// router port whose table ibkey says changed.
			if log == "" {
				return
			}
			for _, id := range pkeyChanged(t, a, b) {
				if n := b.f.Node(id.Node); n.Type != check.NodeSwitch && !strings.Contains(log, fmt.Sprintf("for node 0x%016x port %d ", uint64(id.Node), id.Port)) {
					t.Errorf("ibkey: P_Key changes on %s; OpenSM logged no table block written there:\n%s", b.f.Label(id), log)
				}
			}
		})
		a = b
	}
}

// pkeyChanged lists the ports `fabric diff a b` names in a P_Key change.
func pkeyChanged(t *testing.T, a, b *diffSnap) []check.PortID {
	r := runIbkey(t, false, nil, "fabric", "diff", a.file, b.file, "-o", "json")
	var doc struct{ Changes []diffChange }
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatal(err)
	}
	var out []check.PortID
	for _, c := range doc.Changes {
		if strings.HasPrefix(c.Kind, "pkey-") && !slices.Contains(out, c.Ports[0].PortID) {
			out = append(out, c.Ports[0].PortID)
		}
	}
	return out
}

// setBehindOpenSM changes one entry of a CA port's P_Key table with a SubnSet (the
// lab's Set sender): a key moved to another index, its membership flipped, a key
// added or one cleared.
func setBehindOpenSM(t *testing.T, l *fabricLab, a *diffSnap, rng *rand.Rand) string {
	var ports []check.PortID
	for id := range a.tables {
		if n := a.f.Node(id.Node); n.Type != check.NodeSwitch {
			ports = append(ports, id)
		}
	}
	slices.SortFunc(ports, func(x, y check.PortID) int {
		if check.LessPortID(x, y) {
			return -1
		}
		return 1
	})
	id := ports[rng.IntN(len(ports))]
	var blk [mad.PKeysPerBlock]uint16
	copy(blk[:], a.tables[id])
	used := slices.IndexFunc(blk[1:], func(v uint16) bool { return v&0x7fff == 0 }) + 1 // first free index
	if used == 0 {
		used = len(blk) - 1
	}
	what := ""
	switch k := rng.IntN(4); {
	case k == 0 && blk[1]&0x7fff != 0 && used > 0:
		blk[used], blk[1] = blk[1], 0
		what = fmt.Sprintf("index 1 moved to %d", used)
	case k == 1 && blk[1]&0x7fff != 0:
		blk[1] ^= 0x8000
		what = "index 1's membership flipped"
	case k == 2 && blk[1]&0x7fff != 0:
		blk[1] = 0
		what = "index 1 cleared"
	default:
		blk[used] = 0x8000 | uint16(0x20+rng.IntN(8))
		what = fmt.Sprintf("%#04x set at index %d", blk[used], used)
	}
	p := a.f.Port(id)
	if err := l.SetPKeyBlock(context.Background(), l.from, mad.Address{LID: p.LID}, 0, 0, blk); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("SubnSet P_KeyTable of %s: %s", a.f.Label(id), what)
}

// compareDiff checks `ibkey fabric diff a b` against ibnetdiscover and smpquery.
func compareDiff(t *testing.T, l *fabricLab, a, b *diffSnap) {
	r := runIbkey(t, false, nil, "fabric", "diff", a.file, b.file, "-o", "json")
	var doc struct {
		Same    bool         `json:"same"`
		Changes []diffChange `json:"changes"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatalf("fabric diff -o json: exit %d: %v\n%s%s", r.Code, err, r.Stdout, r.Stderr)
	}
	if want := map[bool]int{true: 0, false: 1}[doc.Same]; r.Code != want || doc.Same != (len(doc.Changes) == 0) {
		t.Errorf("exit %d with %d changes (same %v); the help says 0 without changes, 1 with", r.Code, len(doc.Changes), doc.Same)
	}
	text := runIbkey(t, false, nil, "fabric", "diff", a.file, b.file)
	t.Logf("ibkey fabric diff (exit %d):\n%s", text.Code, text.Stdout)
	// The help: "in node GUID and port order" (of each change's first port).
	for i := 1; i < len(doc.Changes); i++ {
		if x, y := doc.Changes[i-1].Ports[0].PortID, doc.Changes[i].Ports[0].PortID; check.LessPortID(y, x) {
			t.Errorf("change %d (%s[%d]) comes after change %d (%s[%d]): not in node GUID and port order", i, y.Node, y.Port, i-1, x.Node, x.Port)
		}
	}
	// A with the sweep run now (the fabric is still as b) is the same comparison.
	if now := l.run(t, "fabric", "diff", a.file); now.Code != text.Code || now.Stdout != text.Stdout {
		t.Errorf("fabric diff A (B swept now): exit %d\n%s\nwith the saved B: exit %d\n%s", now.Code, now.Stdout, text.Code, text.Stdout)
	}

	// Topology: what changed in ibnetdiscover's own listings of its two caches.
	nodesGone, nodesNew := map[check.GUID]bool{}, map[check.GUID]bool{}
	for g := range a.net.Nodes {
		if _, ok := b.net.Nodes[g]; !ok {
			nodesGone[check.GUID(g)] = true
		}
	}
	for g := range b.net.Nodes {
		if _, ok := a.net.Nodes[g]; !ok {
			nodesNew[check.GUID(g)] = true
		}
	}
	linksGone, linksNew := map[string]bool{}, map[string]bool{}
	for k := range a.net.Links {
		if !b.net.Links[k] {
			linksGone[k] = true
		}
	}
	for k := range b.net.Links {
		if !a.net.Links[k] {
			linksNew[k] = true
		}
	}
	netEnd := func(p check.FindingPort) string { return lab.NetEnd(uint64(p.Node), p.Port) }
	named := map[check.PortID]bool{} // ports (and nodes, port 0) ibkey named in a topology change
	namedField := map[string]bool{}  // "FIELD 0xGUID[port]" of ibkey's port-changed
	for _, c := range doc.Changes {
		switch c.Kind {
		case fabric.ChangeNodeRemoved, fabric.ChangeNodeAdded:
			set := map[bool]map[check.GUID]bool{true: nodesGone, false: nodesNew}[c.Kind == fabric.ChangeNodeRemoved]
			if !set[c.Ports[0].Node] {
				t.Errorf("ibkey: %s %s; ibnetdiscover's listings do not show it", c.Kind, c.Ports[0].Node)
			}
			delete(set, c.Ports[0].Node)
			named[check.PortID{Node: c.Ports[0].Node}] = true
		case fabric.ChangeNode:
			g := c.Ports[0].Node
			x, y := a.net.Nodes[uint64(g)], b.net.Nodes[uint64(g)]
			if c.Field == "node_desc" && (x.Desc != c.Before || y.Desc != c.After) {
				t.Errorf("ibkey: node %s node_desc %q -> %q; ibnetdiscover lists %q -> %q", g, c.Before, c.After, x.Desc, y.Desc)
			}
			named[check.PortID{Node: g}] = true
		case fabric.ChangeLinkRemoved, fabric.ChangeLinkAdded:
			k := lab.NetLink(uint64(c.Ports[0].Node), c.Ports[0].Port, uint64(c.Ports[1].Node), c.Ports[1].Port)
			set := map[bool]map[string]bool{true: linksGone, false: linksNew}[c.Kind == fabric.ChangeLinkRemoved]
			if !set[k] {
				t.Errorf("ibkey: %s %s; ibnetdiscover's listings do not show it", c.Kind, k)
			}
			delete(set, k)
			named[c.Ports[0].PortID], named[c.Ports[1].PortID] = true, true
		case fabric.ChangePort:
			p := c.Ports[0]
			switch c.Field {
			case "port_guid":
				before, after := a.net.PortGUIDs[netEnd(p)], b.net.PortGUIDs[netEnd(p)]
				if check.GUID(before).String() != c.Before || check.GUID(after).String() != c.After {
					t.Errorf("ibkey: %s port_guid %s -> %s; ibnetdiscover lists %s -> %s", netEnd(p), c.Before, c.After, check.GUID(before), check.GUID(after))
				}
				named[p.PortID] = true
			}
			switch c.Field {
			case "state", "phys_state", "lid", "lmc", "gid_prefix":
				x, y := a.portInfo[p.PortID][c.Field], b.portInfo[p.PortID][c.Field]
				if x != c.Before || y != c.After {
					t.Errorf("ibkey: %s %s %s -> %s; smpquery portinfo reads %q -> %q", netEnd(p), c.Field, c.Before, c.After, x, y)
				}
				namedField[c.Field+" "+netEnd(p)] = true
			}
			switch c.Field {
			case "lid", "lmc":
				id := p.PortID
				x, y := a.lids[id], b.lids[id]
				// ibnetdiscover lists only cabled ports (and a switch's port 0).
				if pa, pb := a.f.Port(id), b.f.Port(id); id.Port != 0 && (pa == nil || pa.Peer == nil || pb == nil || pb.Peer == nil) {
					break
				}
				if x == "" || y == "" {
					t.Errorf("ibkey: %s %s %s -> %s; ibnetdiscover lists no LID for it on a side (%q, %q)", netEnd(p), c.Field, c.Before, c.After, x, y)
					break
				}
				i := map[string]int{"lid": 0, "lmc": 1}[c.Field]
				if id.Port == 0 {
					if c.Field == "lmc" {
						break
					}
					x, y = x+"/", y+"/"
				}
				if strings.Split(x, "/")[i] != c.Before || strings.Split(y, "/")[i] != c.After {
					t.Errorf("ibkey: %s %s %s -> %s; ibnetdiscover lists %s -> %s (LID/LMC)", netEnd(p), c.Field, c.Before, c.After, x, y)
				}
				named[id] = true
			}
		}
	}
	for g, x := range a.net.Nodes {
		if y, ok := b.net.Nodes[g]; ok && x.Desc != y.Desc && !named[check.PortID{Node: check.GUID(g)}] {
			t.Errorf("ibnetdiscover: node %s described %q -> %q; ibkey does not say so", check.GUID(g), x.Desc, y.Desc)
		}
	}
	for g := range nodesGone {
		t.Errorf("ibnetdiscover: node %s gone; ibkey does not say so", g)
	}
	for g := range nodesNew {
		t.Errorf("ibnetdiscover: node %s new; ibkey does not say so", g)
	}
	for k := range linksGone {
		t.Errorf("ibnetdiscover: link %s gone; ibkey does not say so", k)
	}
	for k := range linksNew {
		t.Errorf("ibnetdiscover: link %s new; ibkey does not say so", k)
	}
	for id, x := range a.portInfo {
		y, ok := b.portInfo[id]
		for field, v := range x {
			// A GID prefix of 0 is none (a switch's external port), not compared.
			if ok && v != y[field] && v != "" && y[field] != "" && !namedField[field+" "+netEnd(check.FindingPort{PortID: id})] {
				t.Errorf("smpquery portinfo: %s's %s %s -> %s; ibkey does not say so", netEnd(check.FindingPort{PortID: id}), field, v, y[field])
			}
		}
	}
	for id, x := range a.lids {
		if y, ok := b.lids[id]; ok && x != y && !named[id] {
			t.Errorf("ibnetdiscover: %s LID/LMC %s -> %s; ibkey does not say so", netEnd(check.FindingPort{PortID: id}), x, y)
		}
	}
	// ibnetdiscover's own diff: every port it flags is named by ibkey, itself or the
	// port at its other end (a peer's GUID or LID that changed is the flagged port's
	// change in ibnetdiscover's terms).
	// Not sw with lid: infiniband-diags 44's ibnetdiscover --diff crashes (SIGSEGV) when
	// a switch with a port without a cable changed LID (diff_ports flags that port and
	// out_switch_port dereferences its remoteport, NULL); switch LIDs are checked
	// against the listings above.
	for _, dc := range []string{"sw,ca,router,port,nodedesc", "ca,router,lid"} {
		out := l.tool(t, "ibnetdiscover", "--load-cache", b.cache, "--diff", a.cache, "--diffcheck", dc)
		t.Logf("ibnetdiscover --diff --diffcheck %s:\n%s", dc, out)
		for id := range netDiffFlags(out) {
			covered := named[id] || named[check.PortID{Node: id.Node}]
			for _, f := range []*fabric.Fabric{a.f, b.f} {
				if p := f.Port(id); p != nil && p.Peer != nil && (named[*p.Peer] || named[check.PortID{Node: p.Peer.Node}]) {
					covered = true
				}
			}
			if !covered {
				t.Errorf("ibnetdiscover --diff (--diffcheck %s) flags %s; ibkey names no change there:\n%s", dc, netEnd(check.FindingPort{PortID: id}), out)
			}
		}
	}

	// P_Keys: each change against smpquery's tables of both sides.
	seen := map[check.PortID]bool{}
	has := func(tbl []uint16, k uint16) []int {
		var idx []int
		for i, v := range tbl {
			if v == k {
				idx = append(idx, i)
			}
		}
		return idx
	}
	for _, c := range doc.Changes {
		if !strings.HasPrefix(c.Kind, "pkey-") && c.Kind != fabric.ChangeTableResized {
			continue
		}
		id := c.Ports[0].PortID
		seen[id] = true
		x, okA := a.tables[id]
		y, okB := b.tables[id]
		if !okA || !okB {
			t.Errorf("ibkey: %s on %s; smpquery read it on one side only (%v, %v)", c.Kind, netEnd(c.Ports[0]), okA, okB)
			continue
		}
		key := func(s string) uint16 {
			v, _ := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 16)
			return uint16(v)
		}
		ok := true
		switch c.Kind {
		case fabric.ChangePKeyAdded:
			ok = len(has(x, key(c.After))) == 0 && len(has(y, key(c.After))) > 0
		case fabric.ChangePKeyRemoved:
			ok = len(has(x, key(c.Before))) > 0 && len(has(y, key(c.Before))) == 0
		case fabric.ChangePKeyMembership:
			k, o := key(c.Before), key(c.After)
			ok = k^o == 0x8000 && len(has(x, k)) > 0 && len(has(y, k)) == 0 && len(has(y, o)) > 0 && len(has(x, o)) == 0
		case fabric.ChangePKeyMoved:
			// before and after are the index lists; the key is in the message.
			m := movedRE.FindStringSubmatch(c.Message)
			ok = m != nil && joinInts(has(x, key(m[1]))) == c.Before && joinInts(has(y, key(m[1]))) == c.After
		}
		if !ok {
			t.Errorf("ibkey: %s %s %s -> %s; smpquery reads %04x before, %04x after", netEnd(c.Ports[0]), c.Kind, c.Before, c.After, x, y)
		}
	}
	for id, x := range a.tables {
		y, ok := b.tables[id]
		if ok && !slices.Equal(trimInvalid(x), trimInvalid(y)) && !seen[id] {
			t.Errorf("smpquery: %s's table %04x -> %04x; ibkey names no P_Key change there", netEnd(check.FindingPort{PortID: id}), x, y)
		}
	}
}

// trimInvalid is a table with its invalid entries (0x0000, 0x8000) made 0 and the
// trailing ones cut: what a P_Key comparison looks at.
func trimInvalid(t []uint16) []uint16 {
	out := make([]uint16, len(t))
	for i, v := range t {
		if v&0x7fff != 0 {
			out[i] = v
		}
	}
	for len(out) > 0 && out[len(out)-1] == 0 {
		out = out[:len(out)-1]
	}
	return out
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}
