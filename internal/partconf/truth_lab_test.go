package partconf

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	ibsimlab "github.com/ibkey/ibkey/internal/lab"
)

// The generated-case test: random topologies (RandomTopology: chains of
// switches, one- and two-port CAs, routers with one or two cabled ports, HCAs cabled
// back to back, or two dual-port HCAs cabled to each other without a switch) and random
// sequences of two to four files (NewGenFile, then MutateGenFile: definitions
// removed, added and moved, indx0 moved, memberships and keys changed), each sequence
// applied by one OpenSM 3.3.23 daemon (SIGHUP, as `reload` does) or by a new OpenSM
// process per file (opensm -o), with or without -W, with part_enforce both, in, out or
// off, and with keep_pkey_indexes TRUE or FALSE (an opensm.conf line: the daemon's
// conf, or a new OpenSM's -F FILE, read by ParseOpenSMConf as fabric check reads it;
// with in and out OpenSM writes the switch ports' tables as with both). After
// every file the tables of every end port and of every switch port facing one are read
// in-process over MADs and compared index by index with:
//   - the model of that run from the tables the ports held before it (and, for a
//     daemon, what it remembers: Options.Memory);
//   - the model of the whole sequence from the tables at its start, as `partitions
//     show FILE --previous ...` predicts it (Reconfigure, running or restarted);
// and can-talk for every pair of end ports, from the model, with the P_Key rule on
// the real tables. Port types come from NodeInfo; the file may name router ports,
// router and CA node GUIDs (not ports) and ports OpenSM does not reach.
//
// `go test` runs a fixed seed set; `make truth` (IBKEY_TRUTH=N) runs N topologies and
// prints the counts (OpenSM runs, checks by kind, agreements) and every disagreement.

// truthStats are the counts of a truth run.
type truthStats struct {
	topologies, routers, routers2, backToBack, noSwitch int
	sequences, daemons, files                           int
	crashed, uncertain, rejected                        int
	features                                            map[string]int // files with a construct
	checks, agree                                       map[string]int // by kind
	problems                                            []string
}

func (s *truthStats) check(kind string, ok bool, problem func() string) {
	s.checks[kind]++
	if ok {
		s.agree[kind]++
		return
	}
	s.problems = append(s.problems, problem())
}

type truthPort struct {
	gen   GenPort
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
	sequences := 2
	if n, _ := strconv.Atoi(os.Getenv("IBKEY_TRUTH")); n > 0 {
		seeds = nil
		for i := 0; i < n; i++ {
			seeds = append(seeds, uint64(1000+i))
		}
		sequences = 3
	}
	if list := os.Getenv("IBKEY_TRUTH_SEEDS"); list != "" { // rerun some: make truth SEEDS=1120,1124
		seeds = nil
		for _, f := range strings.Split(list, ",") {
			v, err := strconv.ParseUint(strings.TrimSpace(f), 10, 64)
			if err != nil {
				t.Fatalf("IBKEY_TRUTH_SEEDS: %q: %v", f, err)
			}
			seeds = append(seeds, v)
		}
		sequences = 3
	}
	st := &truthStats{features: map[string]int{}, checks: map[string]int{}, agree: map[string]int{}}
	for _, seed := range seeds {
		runTruthTopology(t, seed, sequences, st)
	}
	kinds := slices.Sorted(func(yield func(string) bool) {
		for k := range st.checks {
			if !yield(k) {
				return
			}
		}
	})
	var by []string
	total, agree := 0, 0
	for _, k := range kinds {
		by = append(by, fmt.Sprintf("%s %d/%d", k, st.agree[k], st.checks[k]))
		total += st.checks[k]
		agree += st.agree[k]
	}
	var feats []string
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range st.features {
			if !yield(k) {
				return
			}
		}
	}) {
		feats = append(feats, fmt.Sprintf("%s %d", k, st.features[k]))
	}
	summary := fmt.Sprintf("truth: %d/%d checks agree (%s)\n"+
		"truth: %d topologies (%d with routers, %d with two-port routers, %d with back-to-back cables, %d without a switch); "+
		"%d sequences (%d by one OpenSM daemon), %d OpenSM runs (%d rejected files; not compared: %d uncertain, %d where OpenSM crashed)\n"+
		"truth: files with %s",
		agree, total, strings.Join(by, ", "), st.topologies, st.routers, st.routers2, st.backToBack, st.noSwitch,
		st.sequences, st.daemons, st.files, st.rejected, st.uncertain, st.crashed, strings.Join(feats, ", "))
	t.Log(summary)
	fmt.Println(summary)
	for _, p := range st.problems {
		t.Errorf("DISAGREE %s", p)
	}
}

func runTruthTopology(t *testing.T, seed uint64, sequences int, st *truthStats) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 0x1b4e))
	topo := RandomTopology(rng)
	st.topologies++
	dir := t.TempDir()
	net := filepath.Join(dir, "net")
	if err := os.WriteFile(net, []byte(topo.Net()), 0o644); err != nil {
		t.Fatal(err)
	}
	l := startLab(t, net)
	for _, cmd := range topo.RouterConsole() {
		l.MustConsole(cmd)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	tr, err := mad.DialIbsim(ctx, mad.IbsimOptions{SockName: l.SockName, Node: "Hca1"})
	if err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	defer tr.Close()

	var ports []*truthPort
	var guids, others []uint64
	hasRouter, hasRouter2 := false, false
	for _, n := range topo.Nodes {
		if n.Type == ibsimlab.Router {
			hasRouter = true
			if len(n.Links) == 2 {
				hasRouter2 = true
			}
		}
		if n.Type != ibsimlab.Switch {
			others = append(others, n.GUID) // node GUIDs: no port has them
		}
	}
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
			if ni.PortGUID != 0 && (gp.Node.Type != ibsimlab.Router || ni.PortGUID == gp.Node.GUID+uint64(gp.Num)) || try > 200 {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		typ := check.NodeCA
		switch gp.Node.Type {
		case ibsimlab.Switch:
			typ = check.NodeSwitch
		case ibsimlab.Router:
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
			tp.port.Peer = &SwitchPort{EnforceCap: tp.psize}
		}
		ports = append(ports, tp)
		guids = append(guids, ni.PortGUID)
	}
	if hasRouter {
		st.routers++
	}
	if hasRouter2 {
		st.routers2++
	}
	if topo.BackToBack() {
		st.backToBack++
	}
	if !slices.ContainsFunc(topo.Nodes, func(n *GenNode) bool { return n.Type == ibsimlab.Switch }) {
		st.noSwitch++
	}
	// The file may also name ports OpenSM does not reach (back to back).
	for _, gp := range topo.EndPorts() {
		if !gp.Managed && gp.Node.Type == ibsimlab.CA {
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
	sm := ports[0].port.GUID // Hca1 port 1 comes first
	gopt := GenOptions{Ports: guids, Others: others}
	for sq := 0; sq < sequences; sq++ {
		runTruthSequence(t, l, rng, seed, sq, ports, mports, sm, gopt, read, st)
	}
}

// runTruthSequence applies two to four files in turn, by one OpenSM daemon or a new
// OpenSM per file, and compares after each.
func runTruthSequence(t *testing.T, l *ibsimlab.Lab, rng *rand.Rand, seed uint64, sq int, ports []*truthPort, mports []Port, sm check.GUID,
	gopt GenOptions, read func() (map[check.GUID][]check.PKey, map[check.GUID][]check.PKey), st *truthStats) {
	t.Helper()
	daemon := rng.IntN(2) == 0
	allowBoth, enforce := rng.IntN(2) == 0, rng.IntN(5) != 0
	n := 2 + rng.IntN(3)
	// The options the files above do not depend on come from a generator of their own,
	// so a seed runs the same topologies and files as before they were drawn:
	// keep_pkey_indexes FALSE (opensm.conf only: the daemon's conf, or opensm -F FILE)
	// in a third of the sequences, and part_enforce in or out (-Z, or a conf line) in
	// half of those with enforcement.
	orng := rand.New(rand.NewPCG(seed, 0x0c0f+uint64(sq)))
	keep, mode := orng.IntN(3) != 0, "off"
	if enforce {
		mode = [...]string{"both", "both", "in", "out"}[orng.IntN(4)]
	}
	inFile := orng.IntN(2) == 0 // a new OpenSM gets part_enforce in its -F FILE, not -Z
	st.sequences++
	if daemon {
		st.daemons++
	}
	how := "a new OpenSM per file"
	if daemon {
		how = "one OpenSM daemon (SIGHUP)"
	}
	// As opensm arguments, and as opensm.conf lines: the daemon's, or a new OpenSM's
	// -F FILE (keep_pkey_indexes has no flag).
	var fileConf []string
	if !keep {
		fileConf = append(fileConf, "keep_pkey_indexes FALSE")
	}
	if mode != "both" && (daemon || inFile) {
		fileConf = append(fileConf, "part_enforce "+mode)
	}
	osmConf := filepath.Join(t.TempDir(), "opensm.conf")
	if err := os.WriteFile(osmConf, []byte(strings.Join(fileConf, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	flags := func() []string {
		args := []string{"-g", fmt.Sprintf("%#x", uint64(sm))}
		if allowBoth {
			args = append(args, "-W")
		}
		if mode != "both" && !inFile {
			args = append(args, "-Z", mode)
		}
		if len(fileConf) > 0 {
			args = append(args, "-F", osmConf)
		}
		return args
	}
	args := flags()
	conf := append([]string{fmt.Sprintf("guid %#x", uint64(sm)), fmt.Sprintf("allow_both_pkeys %v", strings.ToUpper(fmt.Sprint(allowBoth)))}, fileConf...)
	opt := Options{AllowBoth: allowBoth, SMGUID: sm, EnforceOff: !enforce, Remember: true}
	if daemon || len(fileConf) > 0 {
		// The options as ibkey reads the conf (fabric check --opensm-conf): for a new
		// OpenSM its flags win (-W, -Z).
		text := strings.Join(fileConf, "\n") + "\n"
		if daemon {
			text = strings.Join(conf, "\n") + "\n"
		}
		read := ParseOpenSMConf("opensm.conf", []byte(text)).Options(opt)
		if daemon {
			opt = read
		} else {
			opt.ForgetIndexes = read.ForgetIndexes
		}
		if opt.AllowBoth != allowBoth || opt.EnforceOff != !enforce || opt.ForgetIndexes != !keep {
			t.Fatalf("seed %d sequence %d: ParseOpenSMConf(%q): %+v, want -W %v, part_enforce %s, keep_pkey_indexes %v", seed, sq, text, opt, allowBoth, mode, keep)
		}
	}
	var d *ibsimlab.OpenSMDaemon
	defer func() {
		if d != nil {
			d.Stop()
		}
	}()
	file := NewGenFile(rng, gopt)
	before, peerBefore := read()
	var chain, prev *Model // the sequence's model (show --previous), and the last run's
	chainOK := true
	var texts []string
	logSeen := 0 // bytes of the daemon's log read so far
	for k := 0; k < n; k++ {
		if k > 0 {
			file = MutateGenFile(rng, file, gopt)
			if !daemon && rng.IntN(3) == 0 {
				// A new OpenSM may run with -W where the last one did not, or the
				// other way round: the tables it finds were programmed under the
				// other rule (a limited 0x7fff at index 0, then `both`: one pass
				// writes 0xffff over it, onePassFrom0x7fff).
				allowBoth = !allowBoth
				opt.AllowBoth, args = allowBoth, flags()
				st.features["-W changed between files"]++
			}
			if daemon && orng.IntN(4) == 0 {
				// A running OpenSM re-reads keep_pkey_indexes in a heavy sweep
				// (osm_subnet.c opt_tbl: can_update; osm_subn_rescan_conf_files), when
				// the file's value differs from what the file said before
				// (opts_parse_boolean): a line removed leaves it as it was.
				keep = !keep
				line := "keep_pkey_indexes " + strings.ToUpper(fmt.Sprint(keep))
				if keep && orng.IntN(2) == 0 {
					line, keep = "", false
					st.features["keep_pkey_indexes FALSE removed from a running OpenSM's conf"]++
				} else {
					st.features["keep_pkey_indexes changed for a running OpenSM"]++
				}
				conf = slices.DeleteFunc(conf, func(l string) bool { return strings.HasPrefix(l, "keep_pkey_indexes ") })
				if line != "" {
					conf = append(conf, line)
				}
				fileConf = conf
				// The daemon's opensm.conf (internal/lab, OpenSMDaemonAt).
				if err := os.WriteFile(filepath.Join(filepath.Dir(d.Conf), "opensm.conf"), []byte(strings.Join(append([]string{"force_log_flush TRUE"}, conf...), "\n")+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				opt.ForgetIndexes = !keep
			}
		}
		text := file.String()
		texts = append(texts, text)
		st.files++
		cfg := Parse("p.conf", []byte(text))
		seen := maps.Clone(st.features)
		truthFeatures(cfg, ports, st)
		if !keep {
			st.features["keep_pkey_indexes FALSE"]++
			// With the constructs keep_pkey_indexes changes most.
			for _, f := range []string{"indx0", "a table overflowing", "both"} {
				if st.features[f] > seen[f] {
					st.features["keep_pkey_indexes FALSE with "+f]++
				}
			}
			if allowBoth {
				st.features["keep_pkey_indexes FALSE with -W"]++
			}
			if daemon && k > 0 {
				st.features["keep_pkey_indexes FALSE in a running OpenSM's sweep"]++
			}
		}
		if mode == "in" || mode == "out" {
			st.features["part_enforce "+mode]++
		}
		where := func() string {
			return fmt.Sprintf("seed %d sequence %d file %d of %d (%s, -W %v, part_enforce %s, keep_pkey_indexes %v, opensm.conf %q)",
				seed, sq, k+1, n, how, allowBoth, mode, strings.ToUpper(fmt.Sprint(keep)), fileConf)
		}
		files := func() string {
			var b strings.Builder
			for i, x := range texts {
				fmt.Fprintf(&b, "--- file %d:\n%s", i+1, x)
			}
			return b.String()
		}
		var log string
		var err error
		switch {
		case daemon && k == 0:
			d, err = l.OpenSMDaemon(t, text, conf...)
			log, logSeen = daemonLog(d, 0)
		case daemon:
			if _, _, err = d.Reprogram(context.Background(), text); err == nil {
				log, logSeen = daemonLog(d, logSeen)
			}
		default:
			err = l.RunOpenSMArgs(text, args...)
			log = opensmLog(l)
		}
		// Whether a one-shot OpenSM crashed on the file is a check of its own (a file
		// whose outcome hangs on uninitialised memory may crash or not: not counted).
		// A daemon is not checked: with a group in two partitions it crashed in some
		// runs only, and on a SIGHUP also over a group the previous file left (seed
		// 1110 of make truth N=300), which a model of one file cannot know.
		if crashed := err != nil && strings.Contains(err.Error(), "segmentation fault"); !daemon && (cfg.Uncertain == "" || cfg.crash) {
			st.check("crash", crashed == cfg.crash, func() string {
				return fmt.Sprintf("OpenSM crashed: %v, the model says it crashes: %v (%s), %s: %v\n%s", crashed, cfg.crash, cfg.Uncertain, where(), err, files())
			})
		}
		if err != nil {
			st.crashed++
			t.Logf("OpenSM FAILED, %s (not a model disagreement; the files are below):\n%v\n%s", where(), err, files())
			return // a crashed OpenSM may have programmed part of the fabric: next sequence
		}
		runOpt := opt
		runOpt.Before, runOpt.PeerBefore = before, peerBefore
		if daemon && prev != nil {
			runOpt.Memory = prev.memory
			cfg = cfg.reparseRunning(prev)
		}
		m := NewModel(cfg, mports, runOpt)
		switch {
		case k == 0:
			chain = m
		case chainOK:
			chain.Options.AllowBoth = allowBoth // the flag of this run (it may change between new processes)
			chain.Options.ForgetIndexes = opt.ForgetIndexes
			chain = Reconfigure(chain, cfg, daemon)
		}
		prev = m
		tables, peers := read()
		before, peerBefore = tables, peers
		if cfg.Uncertain != "" {
			st.uncertain++
			chainOK = false
			continue
		}
		if cfg.Rejected {
			st.rejected++
		}
		rej := strings.Contains(log, "retrying with default config")
		st.check("rejected", rej == cfg.Rejected, func() string {
			return fmt.Sprintf("%s: OpenSM rejected the file: %v, model %v (%v)\n  log: %s\n%s", where(), rej, cfg.Rejected, cfg.Findings, grepLog(log), files())
		})
		for _, p := range ports {
			got, want := fmt.Sprint(tables[p.port.GUID]), slotString(m.Slots(p.port.GUID))
			st.check("table", got == want, func() string {
				return fmt.Sprintf("%s: %s port %d (%s): model %s, OpenSM %s\n%s", where(), p.gen.Node.Name, p.gen.Num, p.port.GUID, want, got, files())
			})
			if pt := m.Peer(p.port.GUID); pt != nil {
				got, want := fmt.Sprint(peers[p.port.GUID]), fmt.Sprint(pt.Table)
				st.check("switch-port", got == want, func() string {
					return fmt.Sprintf("%s: switch %s port %d facing %s port %d: model %s, OpenSM %s\n%s", where(), p.gen.PeerSwitch.Name, p.pport, p.gen.Node.Name, p.gen.Num, want, got, files())
				})
			}
		}
		if chainOK && k > 0 {
			// What `partitions show FILE --previous ...` predicts, from the tables at
			// the sequence's start: after the first disagreement the rest of the
			// sequence is not counted (it would repeat it).
			for _, p := range ports {
				got, want := fmt.Sprint(tables[p.port.GUID]), slotString(chain.Slots(p.port.GUID))
				ok := got == want
				st.check("sequence", ok, func() string {
					return fmt.Sprintf("%s: %s port %d (%s): the sequence's model (show --previous) %s, OpenSM %s\n%s", where(), p.gen.Node.Name, p.gen.Num, p.port.GUID, want, got, files())
				})
				chainOK = chainOK && ok
			}
		}
		for a := 0; a < len(ports); a++ {
			for b := a + 1; b < len(ports); b++ {
				pa, pb := ports[a], ports[b]
				if pa.port.Type == check.NodeSwitch || pb.port.Type == check.NodeSwitch {
					continue
				}
				want := pkeyRule(tables[pa.port.GUID], tables[pb.port.GUID])
				got := canTalk(m, pa.port.GUID, pb.port.GUID).CanTalk()
				st.check("can-talk", got == want, func() string {
					return fmt.Sprintf("%s: can-talk %s/%d %s/%d: model %v, real tables %v\n%s", where(), pa.gen.Node.Name, pa.gen.Num, pb.gen.Node.Name, pb.gen.Num, got, want, files())
				})
			}
		}
	}
}

// daemonLog is what the daemon d logged after its first seen bytes, and the log's
// length.
func daemonLog(d *ibsimlab.OpenSMDaemon, seen int) (string, int) {
	if d == nil {
		return "", seen
	}
	b, _ := os.ReadFile(d.Log)
	return string(b[min(seen, len(b)):]), len(b)
}

// truthFeatures counts the constructs a file has that the model treats specially.
func truthFeatures(c *Config, ports []*truthPort, st *truthStats) {
	has := map[string]bool{}
	byGUID := map[check.GUID]check.NodeType{}
	for _, p := range ports {
		byGUID[p.port.GUID] = p.port.Type
	}
	for _, d := range c.Definitions {
		if d.Implicit {
			continue
		}
		if d.Indx0 {
			has["indx0"] = true
			if d.Partition != nil && d.Partition.IsDefault() {
				has["indx0 on the default partition"] = true
			}
		}
		if d.Partition != nil && len(d.Partition.Defs) > 2 && d.Partition.Defs[1].Name == d.Name {
			has["a split partition"] = true
		}
	}
	for _, d := range c.Definitions {
		for _, m := range d.Members {
			switch {
			case m.Kind == KindAllRouters:
				has["ALL_ROUTERS"] = true
			case m.Kind == KindAllCAs:
				has["ALL_CAS"] = true
			case m.Kind == KindGUID && byGUID[m.GUID] == check.NodeRouter:
				has["a router port GUID"] = true
			case m.Kind == KindGUID && m.Membership == FlagBoth:
				has["both"] = true
			}
			if m.Def.Partition != nil && m.Def.Partition.IsDefault() && !m.Def.Implicit && m.Membership == FlagLimited &&
				(m.Kind == KindAll || m.Kind == KindAllCAs) {
				has["a limited default partition"] = true
			}
		}
	}
	if !c.HasDefault {
		has["no Default line"] = true
	}
	for _, f := range c.Findings {
		switch f.Rule {
		case "mgid-comment":
			has["a comment after mgid="] = true
		}
	}
	if len(c.Partitions) > 60 {
		has["a table overflowing"] = true
	}
	for k := range has {
		st.features[k]++
	}
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
