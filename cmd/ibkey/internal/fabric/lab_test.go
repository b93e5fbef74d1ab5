package fabric

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/lab"
)

const labTopologies = "../../../../internal/lab/testdata/"

// fastFail makes an unanswered MAD fail fast in the error tests.
var fastFail = []string{"--mad-timeout", "200ms", "--mad-retries", "1"}

// fabricLab is a running simulator and where ibkey and the tools attach.
type fabricLab struct {
	*lab.Lab
	from string
}

func startFabricLab(t *testing.T, topology string) *fabricLab {
	l := &fabricLab{Lab: lab.Start(t, labTopologies+topology, nil)}
	l.from = l.Topology.Nodes[0].Name
	return l
}

func (l *fabricLab) tool(t *testing.T, args ...string) string {
	t.Helper()
	out, err := l.ToolAt(l.from, args[0], args[1:]...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func partitionsConf(t *testing.T) string {
	b, err := os.ReadFile(filepath.Join(fabricTestdata, "partitions.conf"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The fabric commands on the simulated fabric, run in-process like a user would:
// discovery against ibnetdiscover, each audit problem injected and found, partial
// sweeps, and can-talk lid= / GUID endpoints against the P_Key rule applied to the
// tables smpquery reads. `make fabric-test` runs them (-run 'Lab|Fabric').

// labRun runs ibkey attached to the lab and returns the result, whatever the exit code.
func (l *fabricLab) run(t *testing.T, args ...string) cmdtest.Result {
	t.Helper()
	all := []string{"--ibsim=" + l.SockName, "--sim-node", l.from}
	return runIbkey(t, false, nil, append(all, args...)...)
}

// discoverFile runs `fabric discover -o json` and decodes the fabric file.
func (l *fabricLab) discoverFile(t *testing.T, args ...string) (*fabric.Fabric, cmdtest.Result) {
	t.Helper()
	r := l.run(t, append([]string{"fabric", "discover", "-o", "json"}, args...)...)
	f, err := fabric.DecodeFabric(strings.NewReader(r.Stdout))
	if err != nil {
		t.Fatalf("fabric discover -o json: exit %d: %v\nstderr: %s", r.Code, err, r.Stderr)
	}
	return f, r
}

func TestLabFabricDiscover(t *testing.T) {
	for _, topo := range []string{"small.net", "fattree.net"} {
		t.Run(topo, func(t *testing.T) {
			t.Parallel()
			l := startFabricLab(t, topo)
			for _, phase := range []string{"before OpenSM", "after OpenSM"} {
				if phase == "after OpenSM" {
					if err := l.RunOpenSM(partitionsConf(t), false); err != nil {
						t.Fatal(err)
					}
				}
				f, r := l.discoverFile(t)
				if r.Code != 0 {
					t.Fatalf("%s: exit %d: %s", phase, r.Code, r.Stderr)
				}
				net, err := lab.ParseIbnetdiscover(l.tool(t, "ibnetdiscover"))
				if err != nil {
					t.Fatal(err)
				}
				compareWithIbnetdiscover(t, phase, f, net, len(l.Topology.Nodes))

				// The plain listing: one row per end port or cabled port, peers named.
				plain := l.run(t, "fabric", "discover")
				rows := strings.Split(strings.TrimSpace(plain.Stdout), "\n")[1:]
				cabled := 0
				for _, row := range rows {
					if !strings.HasSuffix(row, " -") {
						cabled++
					}
				}
				if plain.Code != 0 || cabled != 2*len(net.Links) {
					t.Errorf("%s: plain listing: exit %d, %d rows with a peer, want %d (2 per link):\n%s", phase, plain.Code, cabled, 2*len(net.Links), plain.Stdout)
				}
			}
		})
	}
}

func compareWithIbnetdiscover(t *testing.T, phase string, f *fabric.Fabric, net lab.Net, topoNodes int) {
	t.Helper()
	types := map[check.NodeType]string{check.NodeSwitch: "Switch", check.NodeCA: "Ca", check.NodeRouter: "Rt"}
	if len(f.Nodes) != len(net.Nodes) || len(f.Nodes) != topoNodes {
		t.Errorf("%s: %d nodes, ibnetdiscover %d, topology %d", phase, len(f.Nodes), len(net.Nodes), topoNodes)
	}
	for _, n := range f.Nodes {
		want, ok := net.Nodes[uint64(n.GUID)]
		if !ok {
			t.Errorf("%s: node %s (%q) not in ibnetdiscover's output", phase, n.GUID, n.Description)
			continue
		}
		if got := (lab.NetNode{Type: types[n.Type], NumPorts: n.NumPorts, Desc: n.Description}); got != want {
			t.Errorf("%s: node %s: %+v, ibnetdiscover %+v", phase, n.GUID, got, want)
		}
		for _, p := range n.Ports {
			if g, ok := net.PortGUIDs[lab.NetEnd(uint64(n.GUID), p.Num)]; ok && n.Type != check.NodeSwitch && uint64(p.GUID) != g {
				t.Errorf("%s: %s: port GUID %s, ibnetdiscover 0x%016x", phase, f.Label(check.PortID{Node: n.GUID, Port: p.Num}), p.GUID, g)
			}
		}
	}
	got := map[string]bool{}
	for _, lk := range f.Links() {
		got[lab.NetLink(uint64(lk.A.Node), lk.A.Port, uint64(lk.B.Node), lk.B.Port)] = true
	}
	if a, b := sortedSet(got), sortedSet(net.Links); a != b {
		t.Errorf("%s: links\n got %s\nwant %s (ibnetdiscover)", phase, a, b)
	}
}

func sortedSet(m map[string]bool) string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// checkDoc is `fabric check -o json`.
type checkDoc struct {
	Findings []struct {
		Severity string `json:"severity"`
		Rule     string `json:"rule"`
		Ports    []struct {
			Node string `json:"node_desc"`
			Port int    `json:"port"`
		} `json:"ports"`
		PKeys   []string `json:"pkeys"`
		Message string   `json:"message"`
		Action  string   `json:"action"`
	} `json:"findings"`
	Errors     int     `json:"errors"`
	Warnings   int     `json:"warnings"`
	Partitions *string `json:"partitions_file"`
}

// has reports whether a finding of rule names node[port] and, when key is not "", the
// key (as 0x%04x of its 15 bits, either membership).
func (d checkDoc) has(rule, node string, port int, key string) bool {
	for _, f := range d.Findings {
		if f.Rule != rule || f.Action == "" {
			continue
		}
		named := false
		for _, p := range f.Ports {
			named = named || (p.Node == node && p.Port == port)
		}
		keyed := key == ""
		for _, k := range f.PKeys {
			v, _ := strconv.ParseUint(k[2:], 16, 16)
			keyed = keyed || fmt.Sprintf("0x%04x", v&0x7fff) == key
		}
		if named && keyed {
			return true
		}
	}
	return false
}

func (d checkDoc) rules() map[string]int {
	m := map[string]int{}
	for _, f := range d.Findings {
		m[f.Rule]++
	}
	return m
}

// checkJSON runs `fabric check -o json` with args and wants exit code.
func (l *fabricLab) checkJSON(t *testing.T, code int, args ...string) checkDoc {
	t.Helper()
	r := l.run(t, append([]string{"fabric", "check", "-o", "json"}, args...)...)
	var d checkDoc
	if err := json.Unmarshal([]byte(r.Stdout), &d); err != nil {
		t.Fatalf("fabric check %s: %v\n%s\n%s", strings.Join(args, " "), err, r.Stdout, r.Stderr)
	}
	if r.Code != code {
		t.Errorf("fabric check %s: exit %d, want %d; findings %v\n%s", strings.Join(args, " "), r.Code, code, d.rules(), r.Stderr)
	}
	return d
}

// small.net port GUIDs: HcaA 0x100001, HcaB 0x100004, HcaC 0x100007, HcaD 0x10000a
// (port 1) and 0x10000b (port 2).
const cliLabConf = `Default=0x7fff, ipoib : ALL=full ;
storage=0x0001 : 0x100001=full, 0x100004, 0x10000a ;
compute=0x0002, defmember=full : 0x100004, 0x100007=limited, 0x10000b ;
`

func writeTemp(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLabFabricCheckCommand(t *testing.T) {
	l := startFabricLab(t, "small.net")
	if err := l.RunOpenSM(cliLabConf, false); err != nil {
		t.Fatal(err)
	}
	conf := writeTemp(t, "partitions.conf", cliLabConf)
	before := filepath.Join(t.TempDir(), "before.json")
	f, _ := l.discoverFile(t)
	var buf strings.Builder
	if err := fabric.EncodeFabric(&buf, f); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(before, []byte(buf.String()), 0o644); err != nil {
		t.Fatal(err)
	}

	t.Run("clean", func(t *testing.T) {
		// ibsim shows enforcement off on every switch port: the only findings.
		d := l.checkJSON(t, 0, "--partitions", conf)
		if r := d.rules(); d.Errors != 0 || len(r) != 1 || r[fabric.RuleEnforcementOff] != 5 {
			t.Errorf("clean fabric: %d errors, rules %v; want only 5 enforcement-off warnings", d.Errors, r)
		}
		r := l.run(t, "fabric", "check", "--partitions", conf, "--ignore", "enforcement-off")
		if r.Code != 0 || !strings.HasPrefix(r.Stdout, "no problems found (6 nodes, 16 P_Key tables checked against ") {
			t.Errorf("clean fabric with --ignore enforcement-off: exit %d\n%s", r.Code, r.Stdout)
		}
		if r := l.run(t, "fabric", "check", "--strict"); r.Code != 1 {
			t.Errorf("--strict with warnings: exit %d, want 1", r.Code)
		}
		if r := l.run(t, "fabric", "diff", before); r.Code != 0 || r.Stdout != "" {
			t.Errorf("diff with an unchanged fabric: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
		}
	})

	t.Run("edited partitions.conf", func(t *testing.T) {
		// HcaB becomes full in storage, HcaC joins storage, HcaD[2] leaves compute.
		edited := writeTemp(t, "edited.conf", `Default=0x7fff, ipoib : ALL=full ;
storage=0x0001 : 0x100001=full, 0x100004=full, 0x10000a, 0x100007 ;
compute=0x0002, defmember=full : 0x100004, 0x100007=limited ;
`)
		d := l.checkJSON(t, 1, "--partitions", edited, "--ignore", "enforcement-off")
		for _, w := range []struct {
			rule, node string
			port       int
			key        string
		}{
			{"partitions-wrong-membership", "HcaB", 1, "0x0001"},
			{"partitions-missing-key", "HcaC", 1, "0x0001"},
			{"partitions-extra-key", "HcaD", 2, "0x0002"},
		} {
			if !d.has(w.rule, w.node, w.port, w.key) {
				t.Errorf("no %s for %s[%d] %s: %v", w.rule, w.node, w.port, w.key, d.rules())
			}
		}
		// The switch ports facing them differ the same way; ibsim reports their
		// enforcement off, so they are warnings of their own (TestLabEditedFile-
		// NamesWhatOpenSMChanges), not merged into the CA ports' errors.
		for _, f := range d.Findings {
			if f.Severity == "warning" && (!strings.HasPrefix(f.Rule, "partitions-") || !strings.HasPrefix(f.Ports[0].Node, "Switch") || !strings.Contains(f.Message, "enforcement is off")) {
				t.Errorf("warning %s on %s[%d]: only the switch ports facing the changed CA ports should be: %s", f.Rule, f.Ports[0].Node, f.Ports[0].Port, f.Message)
			}
		}
		if d.Warnings != 3 {
			t.Errorf("%d warnings, want 3 (Switch1[2], Switch2[1], Switch2[2])", d.Warnings)
		}
	})

	t.Run("switch port table changed", func(t *testing.T) {
		// Switch1 port 2 faces HcaB: drop storage (0x0001) from it and add 0x8005,
		// with a SubnSet from the test (ibsim accepts it from any client).
		old := f.Node(0x200000).Port(2).PKeys
		set := func(blk [mad.PKeysPerBlock]uint16) {
			t.Helper()
			if err := l.SetPKeyBlock(context.Background(), l.from, mad.DirectedRoute(1), 2, 0, blk); err != nil {
				t.Fatal(err)
			}
		}
		var orig, blk [mad.PKeysPerBlock]uint16
		for i := range blk {
			orig[i] = uint16(old[i])
			if blk[i] = orig[i]; uint16(check.PKey(blk[i]).Partition()) == 0x0001 {
				blk[i] = 0
			}
		}
		blk[len(blk)-1] = 0x8005
		set(blk)
		defer set(orig)

		// ibsim reports every switch port's enforcement bits off: the switch drops
		// nothing, so both are warnings (with the bits on, the first is an error:
		// small-changed-enforcing.json in TestFabricGolden).
		d := l.checkJSON(t, 0)
		if !d.has(fabric.RuleHCAKeyNotOnSwitch, "HcaB", 1, "0x0001") || !d.has(fabric.RuleHCAKeyNotOnSwitch, "Switch1", 2, "0x0001") {
			t.Errorf("no %s naming HcaB[1] and Switch1[2] for 0x0001: %v", fabric.RuleHCAKeyNotOnSwitch, d.rules())
		}
		if !d.has(fabric.RuleSwitchKeyNotOnHCA, "Switch1", 2, "0x0005") {
			t.Errorf("no %s naming Switch1[2] for 0x0005: %v", fabric.RuleSwitchKeyNotOnHCA, d.rules())
		}
		if d.Errors != 0 || d.Warnings < 2 {
			t.Errorf("%d errors, %d warnings, want 0 and the two above: %v", d.Errors, d.Warnings, d.rules())
		}
		// The switch port mirrors nothing the file gives: --partitions says so too.
		// (warnings: ibsim reports the switch port's enforcement off, so its table
		// decides nothing.)
		if d := l.checkJSON(t, 0, "--partitions", conf, "--ignore", "enforcement-off"); !d.has("partitions-missing-key", "Switch1", 2, "0x0001") {
			t.Errorf("--partitions: no partitions-missing-key on Switch1[2]: %v", d.rules())
		}
		// And diff against the sweep saved before names exactly that port.
		r := l.run(t, "fabric", "diff", before)
		want := "pkey-removed: \"Switch1\"[2]: 0x0001 (limited member of 0x0001) removed from index 1\n" +
			"pkey-added: \"Switch1\"[2]: 0x8005 (full member of 0x0005) added at index 31\n"
		if r.Code != 1 || sortedLines(r.Stdout) != sortedLines(want) {
			t.Errorf("fabric diff %s: exit %d\n%s\nwant\n%s", before, r.Code, r.Stdout, want)
		}
	})

	t.Run("limited-only partition", func(t *testing.T) {
		lonely := cliLabConf + "lonely=0x0003 : 0x100004, 0x100007 ;\n"
		if err := l.RunOpenSM(lonely, false); err != nil {
			t.Fatal(err)
		}
		d := l.checkJSON(t, 0, "--ignore", "enforcement-off")
		if !d.has(fabric.RuleLimitedOnly, "HcaB", 1, "0x0003") || !d.has(fabric.RuleLimitedOnly, "HcaC", 1, "0x0003") || d.Errors != 0 || d.Warnings != 1 {
			t.Errorf("want one %s warning naming HcaB[1] and HcaC[1]: %d errors, %v", fabric.RuleLimitedOnly, d.Errors, d.rules())
		}
		l.checkJSON(t, 1, "--ignore", "enforcement-off", "--strict")
		r := l.run(t, "fabric", "pkeys", "--key", "0x0003")
		if r.Code != 0 || !strings.Contains(r.Stderr, "every end port of partition 0x0003 is a limited member") {
			t.Errorf("fabric pkeys --key 0x0003: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
		}
	})
}

func sortedLines(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// TestLabFabricPartialSweep: a node that does not answer: what was read is printed,
// then exit 4 (incomplete) naming what was not read.
func TestLabFabricPartialSweep(t *testing.T) {
	l := startFabricLab(t, "small.net")
	l.MustConsole(`Error "HcaC"[1] 100`)
	start := time.Now()
	f, r := l.discoverFile(t, fastFail...)
	if r.Code != 4 || len(f.Nodes) != 5 || len(f.Unreachable) != 1 || !strings.Contains(r.Stderr, `partial sweep: 1 link with no answer from the far end (the nodes behind them are missing): behind "Switch2"[1] (DR path 0,1,7,1)`) {
		t.Errorf("node not answering: exit %d, %d nodes, unreachable %+v\n%s", r.Code, len(f.Nodes), f.Unreachable, r.Stderr)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %v", d)
	}
	// check prints its findings first (not-read), then exits 4.
	r = l.run(t, append([]string{"fabric", "check"}, fastFail...)...)
	if r.Code != 4 || !strings.Contains(r.Stdout, "[not-read]") {
		t.Errorf("fabric check: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	clients, err := l.Attached()
	if err != nil || len(clients) != 0 {
		t.Errorf("attached after the runs: %v %v", clients, err)
	}
}

// TestLabFabricSweepTimeout: --timeout cuts a sweep of the fat tree short; what was
// read is printed, marked incomplete, and the exit is 4. (ibsim answers a dropped MAD at
// once, so the cut comes from a timeout shorter than the sweep, tried until one is.)
func TestLabFabricSweepTimeout(t *testing.T) {
	l := startFabricLab(t, "fattree.net")
	// A timeout never cuts attaching short: ibsim crashes on a CONNECT its client
	// abandoned (it handles it later and finds the client gone).
	defer func() {
		if l.Exited() {
			t.Errorf("ibsim died during the runs: %s", l.Stderr())
		}
	}()
	for _, timeout := range []string{"1ms", "2ms", "4ms", "8ms", "16ms"} {
		r := l.run(t, "fabric", "discover", "-o", "json", "--timeout", timeout)
		if r.Code == 0 {
			continue // the whole sweep fit
		}
		if r.Stdout == "" {
			// Cut before the local node answered: nothing to print.
			// (--timeout bounds attaching too: the cut may come before the local node.)
			if r.Code != 4 || !strings.Contains(r.Stderr, "--timeout "+timeout+" expired before anything was read") {
				t.Fatalf("--timeout %s: exit %d, stderr %s", timeout, r.Code, r.Stderr)
			}
			continue
		}
		f, err := fabric.DecodeFabric(strings.NewReader(r.Stdout))
		if err != nil || r.Code != 4 || f.Incomplete == "" || len(f.Nodes) == 0 || !strings.Contains(r.Stderr, "partial sweep: the sweep stopped early (context deadline exceeded after") {
			t.Fatalf("--timeout %s: exit %d, %v, stderr %s", timeout, r.Code, err, r.Stderr)
		}
		t.Logf("--timeout %s: %d of %d nodes, %s", timeout, len(f.Nodes), len(l.Topology.Nodes), f.Incomplete)
		return
	}
	t.Skip("every sweep finished within the shortest timeouts tried")
}

// update is golden's -update flag: TestLabFabricFiles rewrites the committed sweeps.
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// TestLabFabricFiles checks that the committed sweeps behind the fabric goldens are
// what the lab gives (small.net after OpenSM applied testdata/fabric/partitions.conf,
// and the same with Switch1 port 2's table changed by a Set), and rewrites them with
// -update. Sweep metadata (time, duration) is not compared; the source is recorded
// with the lab's socket name replaced by "lab".
func TestLabFabricFiles(t *testing.T) {
	l := startFabricLab(t, "small.net")
	if err := l.RunOpenSM(partitionsConf(t), false); err != nil {
		t.Fatal(err)
	}
	record := func(t *testing.T, name string, edit func(*fabric.Fabric)) {
		t.Helper()
		f, r := l.discoverFile(t)
		if r.Code != 0 {
			t.Fatalf("exit %d: %s", r.Code, r.Stderr)
		}
		if edit != nil {
			edit(f)
		}
		f.Source = strings.Replace(f.Source, strconv.Quote(l.SockName), `"lab"`, 1)
		path := filepath.Join(fabricTestdata, name)
		if updating() {
			var b strings.Builder
			if err := fabric.EncodeFabric(&b, f); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		committed, err := cmdutil.ReadFabricFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if d := fabric.Diff(committed, f); len(d) > 0 {
			t.Errorf("%s differs from the lab (go test -run TestLabFabricFiles -update rewrites it):\n%+v", path, d)
		}
	}
	record(t, "small.json", nil)
	// Switch1 port 2 faces HcaB: storage (0x0002) replaced by 0x8005.
	blk := [mad.PKeysPerBlock]uint16{0xffff, 0x8005, 0x0003}
	if err := l.SetPKeyBlock(context.Background(), l.from, mad.DirectedRoute(1), 2, 0, blk); err != nil {
		t.Fatal(err)
	}
	record(t, "small-changed.json", nil)
	// The same with the enforcement bits OpenSM's part_enforce both sets on a real
	// switch's ports facing CAs (ibsim reports them off: TestLabCanTalkNamesTheHop).
	record(t, "small-changed-enforcing.json", func(f *fabric.Fabric) {
		for _, n := range f.Nodes {
			for _, p := range n.Ports {
				if n.Type != check.NodeSwitch || p.Num == 0 || p.Peer == nil || p.Enforcement == nil {
					continue
				}
				if peer := f.Node(p.Peer.Node); peer != nil && peer.Type != check.NodeSwitch {
					p.Enforcement.Inbound, p.Enforcement.Outbound = true, true
				}
			}
		}
	})
}
