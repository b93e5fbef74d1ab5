package partconf

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	ibsimlab "github.com/ibkey/ibkey/internal/lab"
	"github.com/ibkey/ibkey/internal/partconf/partgen"
)

// The generated-case test: random topologies (ibsimlab.RandomTopology: chains of switches,
// one- and two-port CAs, routers, back-to-back links) and random valid files
// (partgen), each run through OpenSM 3.3.23 on ibsim; every port's table, and every
// switch port facing a CA or router, is read in-process over MADs and compared with
// the model index by index, and can-talk for every pair of end ports is derived from
// the real tables and compared with Model.CanTalk. Each file starts from the tables
// the previous one left (Options.Before), so reconfiguration is exercised too.
//
// `go test` runs a fixed seed set; `make truth` (IBKEY_TRUTH=N) runs N topologies and
// prints "N/M agree" and every disagreement.

// truthCase is one OpenSM run.
type truthCase struct {
	seed      uint64
	conf      string
	allowBoth bool
	enforce   bool
	problems  []string
	uncertain bool
	crashed   string // OpenSM itself failed: nothing to compare
}

type truthPort struct {
	gen   ibsimlab.GenPort
	port  Port
	route mad.Address
	size  int
	peer  mad.Address // the peer switch, when cabled to one
	pport uint8
	psize int
}

func TestLabTruth(t *testing.T) {
	needLab(t)
	seeds := []uint64{1, 2, 3}
	perTopo := 4
	if n, _ := strconv.Atoi(os.Getenv("IBKEY_TRUTH")); n > 0 {
		seeds = nil
		for i := 0; i < n; i++ {
			seeds = append(seeds, uint64(1000+i))
		}
		perTopo = 6
	}
	var all []*truthCase
	for _, seed := range seeds {
		all = append(all, runTruthTopology(t, seed, perTopo)...)
	}
	agree, uncertain, crashed := 0, 0, 0
	var bad []string
	for _, c := range all {
		switch {
		case c.crashed != "":
			crashed++
			t.Logf("OpenSM FAILED on seed %d (not a model disagreement; the file is below):\n%s\n--- file:\n%s", c.seed, c.crashed, c.conf)
		case c.uncertain:
			uncertain++
		case len(c.problems) == 0:
			agree++
		default:
			bad = append(bad, fmt.Sprintf("seed %d (-W %v, enforce %v):\n  %s\n--- file:\n%s", c.seed, c.allowBoth, c.enforce, strings.Join(c.problems, "\n  "), c.conf))
		}
	}
	summary := fmt.Sprintf("truth: %d/%d agree (not counted: %d the model calls uncertain, %d where OpenSM itself crashed)", agree, len(all)-uncertain-crashed, uncertain, crashed)
	t.Log(summary)
	fmt.Println(summary)
	for _, b := range bad {
		t.Errorf("DISAGREE %s", b)
	}
}

func runTruthTopology(t *testing.T, seed uint64, configs int) []*truthCase {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 0x1b4e))
	topo := ibsimlab.RandomTopology(rng)
	dir := t.TempDir()
	net := filepath.Join(dir, "net")
	if err := os.WriteFile(net, []byte(topo.Net()), 0o644); err != nil {
		t.Fatal(err)
	}
	l := startLab(t, net)
	for _, cmd := range topo.RouterConsole() {
		if _, err := fmt.Fprintln(l.stdin, cmd); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	tr, err := mad.DialIbsim(ctx, mad.IbsimOptions{SockName: l.sock, Node: "Hca1"})
	if err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	defer tr.Close()

	var ports []*truthPort
	var guids []uint64
	for _, gp := range topo.EndPorts() {
		if !gp.Managed {
			continue
		}
		tp := &truthPort{gen: gp, route: mad.DirectedRoute(gp.Route...)}
		var ni mad.NodeInfo
		for try := 0; ; try++ { // routers get their GUID from the console commands above
			ni, err = mad.GetNodeInfo(ctx, tr, tp.route)
			if err != nil {
				t.Fatalf("seed %d: NodeInfo %s %d: %v", seed, gp.Node.Name, gp.Num, err)
			}
			if ni.PortGUID != 0 && (gp.Node.Kind != "Rt" || ni.PortGUID == gp.Node.GUID+uint64(gp.Num)) || try > 200 {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		typ := check.NodeCA
		switch gp.Node.Kind {
		case "Switch":
			typ = check.NodeSwitch
		case "Rt":
			typ = check.NodeRouter
		}
		tp.size = int(ni.PartitionCap)
		tp.port = Port{GUID: check.GUID(ni.PortGUID), Type: typ, TableSize: tp.size}
		if gp.PeerSwitch != nil && typ != check.NodeSwitch {
			tp.peer = mad.DirectedRoute(gp.PeerRoute...)
			tp.pport = uint8(gp.PeerPort)
			si, err := mad.GetSwitchInfo(ctx, tr, tp.peer)
			if err != nil {
				t.Fatalf("seed %d: SwitchInfo: %v", seed, err)
			}
			tp.psize = int(si.PartitionEnforcementCap)
			tp.port.Peer = &SwitchPort{Switch: check.GUID(gp.PeerSwitch.GUID), Num: gp.PeerPort, EnforceCap: tp.psize}
		}
		ports = append(ports, tp)
		guids = append(guids, ni.PortGUID)
	}
	// The file may also name ports OpenSM does not reach (back to back).
	for _, gp := range topo.EndPorts() {
		if !gp.Managed && gp.Node.Kind == "Hca" {
			guids = append(guids, gp.Node.GUID+uint64(gp.Num))
		}
	}
	var mports []Port
	for _, p := range ports {
		mports = append(mports, p.port)
	}
	read := func() (map[check.GUID][]check.PKey, map[check.GUID][]check.PKey) {
		tables, peers := map[check.GUID][]check.PKey{}, map[check.GUID][]check.PKey{}
		for _, p := range ports {
			tables[p.port.GUID] = readTable(ctx, t, tr, p.route, 0, p.size)
			if p.port.Peer != nil {
				peers[p.port.GUID] = readTable(ctx, t, tr, p.peer, p.pport, p.psize)
			}
		}
		return tables, peers
	}
	before, peerBefore := read()
	sm := ports[0].port.GUID // Hca1 port 1 comes first
	var out []*truthCase
	for i := 0; i < configs; i++ {
		c := &truthCase{seed: seed, allowBoth: rng.IntN(2) == 0, enforce: rng.IntN(5) != 0}
		c.conf = partgen.Config(rng, partgen.Options{Ports: guids})
		conf := filepath.Join(dir, fmt.Sprintf("p%d.conf", i))
		if err := os.WriteFile(conf, []byte(c.conf), 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{"-g", fmt.Sprintf("%#x", uint64(sm))}
		if c.allowBoth {
			args = append(args, "-W")
		}
		if !c.enforce {
			args = append(args, "-Z", "off")
		}
		log, err := l.opensmArgs(t, "Hca1", conf, args...)
		cfg := Parse("p.conf", []byte(c.conf))
		if err != nil {
			out = append(out, c)
			c.crashed = err.Error()
			// A crashed OpenSM may have programmed part of the fabric.
			before, peerBefore = read()
			continue
		}
		m := NewModel(cfg, mports, Options{AllowBoth: c.allowBoth, SMGUID: sm, EnforceOff: !c.enforce, Before: before, PeerBefore: peerBefore})
		tables, peers := read()
		before, peerBefore = tables, peers
		out = append(out, c)
		if cfg.Uncertain != "" {
			c.uncertain = true
			continue
		}
		if rej := strings.Contains(log, "retrying with default config"); rej != cfg.Rejected {
			c.problems = append(c.problems, fmt.Sprintf("OpenSM rejected the file: %v, model %v (%v)\n  log: %s", rej, cfg.Rejected, cfg.Findings, grepLog(log)))
		}
		for _, p := range ports {
			want := slotString(m.Slots(p.port.GUID))
			if got := fmt.Sprint(tables[p.port.GUID]); got != want {
				c.problems = append(c.problems, fmt.Sprintf("%s port %d (%s): model %s, OpenSM %s", p.gen.Node.Name, p.gen.Num, p.port.GUID, want, got))
			}
			if pt := m.Peer(p.port.GUID); pt != nil {
				if got, want := fmt.Sprint(peers[p.port.GUID]), fmt.Sprint(pt.Table); got != want {
					c.problems = append(c.problems, fmt.Sprintf("switch %s port %d facing %s port %d: model %s, OpenSM %s", p.gen.PeerSwitch.Name, p.pport, p.gen.Node.Name, p.gen.Num, want, got))
				}
			}
		}
		for a := 0; a < len(ports); a++ {
			for b := a + 1; b < len(ports); b++ {
				pa, pb := ports[a], ports[b]
				if pa.port.Type == check.NodeSwitch || pb.port.Type == check.NodeSwitch {
					continue
				}
				want := pkeyRule(tables[pa.port.GUID], tables[pb.port.GUID])
				if got := m.CanTalk(pa.port.GUID, pb.port.GUID); got.CanTalk != want {
					c.problems = append(c.problems, fmt.Sprintf("can-talk %s/%d %s/%d: model %v, real tables %v", pa.gen.Node.Name, pa.gen.Num, pb.gen.Node.Name, pb.gen.Num, got.CanTalk, want))
				}
			}
		}
	}
	return out
}

// readTable reads a table and trims it after its last valid entry.
func readTable(ctx context.Context, t *testing.T, tr mad.Transport, a mad.Address, port uint8, n int) []check.PKey {
	t.Helper()
	raw, err := mad.GetPKeyTable(ctx, tr, a, port, n)
	if err != nil {
		t.Fatalf("P_KeyTable %s port %d: %v", a, port, err)
	}
	out := make([]check.PKey, len(raw))
	end := 0
	for i, k := range raw {
		out[i] = check.PKey(k)
		if out[i].Valid() {
			end = i + 1
		}
	}
	return out[:end]
}

// opensmArgs runs OpenSM once from node with conf and extra arguments; it returns the
// log.
func (l *lab) opensmArgs(t testing.TB, node, conf string, extra ...string) (string, error) {
	t.Helper()
	d, err := os.MkdirTemp(l.dir, "osm")
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"-o", "-e", "-s", "0", "-P", conf, "-f", filepath.Join(d, "opensm.log")}, extra...)
	_, err = l.run([]string{"SIM_HOST=" + node, "OSM_CACHE_DIR=" + d, "OSM_TMP_DIR=" + d}, "opensm", args...)
	log, _ := os.ReadFile(filepath.Join(d, "opensm.log"))
	if err != nil {
		if i := strings.Index(err.Error(), "\n"); i > 0 {
			err = fmt.Errorf("%s; log:\n%s", err.Error()[:i], tail(grepLog(string(log)), 1500))
		}
		return string(log), err
	}
	if !strings.Contains(string(log), "SUBNET UP") {
		return string(log), fmt.Errorf("opensm did not reach SUBNET UP:\n%s", grepLog(string(log)))
	}
	return string(log), nil
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}
