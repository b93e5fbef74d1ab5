package query_test

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/lab"
	"github.com/ibkey/ibkey/internal/query"
)

// These tests sweep the simulated fabric and compare the result with
// infiniband-diags (ibnetdiscover, smpquery) run against the same ibsim. They skip
// when the lab is not installed, and fail instead under CI.

const (
	smallNet   = "../lab/testdata/small.net"
	fatTreeNet = "../lab/testdata/fattree.net"
)

var labMAD = mad.Options{Timeout: 300 * time.Millisecond, Retries: 2}

func sweepLab(t testing.TB, l *lab.Lab, node string, opts query.SweepOptions) *fabric.Fabric {
	t.Helper()
	tr := l.Dial(t, node, labMAD)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	f, err := query.Sweep(ctx, tr, opts)
	if err != nil {
		t.Fatalf("Sweep: %v", err)
	}
	return f
}

// ibnetdiscover parses what ibnetdiscover printed (lab.ParseIbnetdiscover).
func ibnetdiscover(t *testing.T, out string) lab.Net {
	t.Helper()
	nd, err := lab.ParseIbnetdiscover(out)
	if err != nil {
		t.Fatal(err)
	}
	return nd
}

// ndTypes are ibnetdiscover's node type words.
var ndTypes = map[string]check.NodeType{"Switch": check.NodeSwitch, "Ca": check.NodeCA, "Rt": check.NodeRouter}

func TestLabSweepMatchesIbnetdiscover(t *testing.T) {
	for _, net := range []string{smallNet, fatTreeNet} {
		t.Run(net[strings.LastIndex(net, "/")+1:], func(t *testing.T) {
			l := lab.Start(t, net, nil)
			for _, phase := range []string{"before OpenSM", "after OpenSM"} {
				if phase == "after OpenSM" {
					if err := l.RunOpenSM("Default=0x7fff, ipoib : ALL=full ;\n", false); err != nil {
						t.Fatal(err)
					}
				}
				f := sweepLab(t, l, "", query.SweepOptions{})
				nd := ibnetdiscover(t, l.MustTool("ibnetdiscover"))
				compareDiscovery(t, phase, f, nd, l.Topology)
			}
		})
	}
}

func compareDiscovery(t *testing.T, phase string, f *fabric.Fabric, nd lab.Net, topo *lab.Topology) {
	t.Helper()
	if len(f.Nodes) != len(nd.Nodes) || len(f.Nodes) != len(topo.Nodes) {
		t.Errorf("%s: %d nodes, ibnetdiscover %d, topology %d", phase, len(f.Nodes), len(nd.Nodes), len(topo.Nodes))
	}
	for _, n := range f.Nodes {
		want, ok := nd.Nodes[uint64(n.GUID)]
		if !ok {
			t.Errorf("%s: node %s (%q) not in ibnetdiscover's output", phase, n.GUID, n.Description)
			continue
		}
		if n.Type != ndTypes[want.Type] || n.NumPorts != want.NumPorts || n.Description != want.Desc {
			t.Errorf("%s: node %s: %s %d ports %q, ibnetdiscover %s %d ports %q", phase, n.GUID, n.Type, n.NumPorts, n.Description, want.Type, want.NumPorts, want.Desc)
		}
		if len(n.Errors) > 0 {
			t.Errorf("%s: node %q: errors %v", phase, n.Description, n.Errors)
		}
		for _, p := range n.Ports {
			if p.Error != "" {
				t.Errorf("%s: %s: %s", phase, f.Label(check.PortID{Node: n.GUID, Port: p.Num}), p.Error)
			}
			if want, ok := nd.PortGUIDs[lab.NetEnd(uint64(n.GUID), p.Num)]; ok && n.Type != check.NodeSwitch && p.GUID != check.GUID(want) {
				t.Errorf("%s: %s: port GUID %s, ibnetdiscover %s", phase, f.Label(check.PortID{Node: n.GUID, Port: p.Num}), p.GUID, check.GUID(want))
			}
		}
	}
	links := map[string]bool{}
	for _, lk := range f.Links() {
		links[lab.NetLink(uint64(lk.A.Node), lk.A.Port, uint64(lk.B.Node), lk.B.Port)] = true
	}
	if got, want := sortedKeys(links), sortedKeys(nd.Links); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("%s: links\n got %v\nwant %v (ibnetdiscover)", phase, got, want)
	}
	if len(f.Unreachable) > 0 {
		t.Errorf("%s: unreachable: %+v", phase, f.Unreachable)
	}
	t.Logf("%s: %d nodes, %d links, swept in %v", phase, len(f.Nodes), len(links), f.Duration)
}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestLabSweepTables checks every P_Key table the sweep read against smpquery, after
// OpenSM gave each CA port a different table (HcaD's two ports differ, so a table read
// through the wrong route shows).
func TestLabSweepTables(t *testing.T) {
	l := lab.Start(t, smallNet, nil)
	conf := "Default=0x7fff : ALL=full ;\n" +
		"a=0x0001 : 0x100004=full, 0x10000a ;\n" +
		"b=0x0002, defmember=full : 0x10000b, 0x100007=limited, 0x100001 ;\n"
	if err := l.RunOpenSM(conf, false); err != nil {
		t.Fatal(err)
	}
	f := sweepLab(t, l, "", query.SweepOptions{})
	checked := 0
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			id := check.PortID{Node: n.GUID, Port: p.Num}
			lid := p.LID
			if n.Type == check.NodeSwitch {
				lid = n.Port(0).LID
			}
			if p.PKeys == nil {
				if p.Peer != nil || n.Type == check.NodeSwitch && p.Num == 0 {
					t.Errorf("%s: table not read: %s", f.Label(id), p.PKeysError)
				}
				continue
			}
			out, err := l.Tool("smpquery", "pkeys", strconv.Itoa(int(lid)), strconv.Itoa(p.Num))
			if err != nil {
				t.Errorf("%s: %v", f.Label(id), err)
				continue
			}
			want, err := lab.ParsePKeys(out)
			if err != nil {
				t.Fatal(err)
			}
			if p.TableSize != want.Capacity || fmt.Sprint(p.PKeys) != fmt.Sprint(toPKeys(want.Entries[:want.Capacity])) {
				t.Errorf("%s: table (%d) %v\nsmpquery (%d) %v", f.Label(id), p.TableSize, p.PKeys, want.Capacity, want.Entries[:want.Capacity])
			}
			checked++
		}
	}
	if checked < 13 { // 4 CA ports + 2 switch port 0 + 7 cabled switch ports... at least
		t.Errorf("only %d tables compared", checked)
	}
	d := f.Node(0x100009)
	if d == nil || d.Port(1).PKeys == nil || d.Port(2).PKeys == nil || fmt.Sprint(d.Port(1).PKeys) == fmt.Sprint(d.Port(2).PKeys) {
		t.Errorf("HcaD's two ports should have been read through their own routes and differ: %+v", d)
	}
}

func toPKeys(v []uint16) []check.PKey {
	out := make([]check.PKey, len(v))
	for i, x := range v {
		out[i] = check.PKey(x)
	}
	return out
}

// TestLabSweepUnreachable: a node that does not answer is reported and the sweep goes
// on past it.
func TestLabSweepUnreachable(t *testing.T) {
	l := lab.Start(t, smallNet, nil)
	l.MustConsole(`Error "HcaC"[1] 100`)
	l.MustConsole(`Error "HcaB"[1] 100 21`) // PortInfo only
	f := sweepLab(t, l, "", query.SweepOptions{})
	if len(f.Nodes) != 5 {
		t.Errorf("%d nodes, want 5 (all but HcaC)", len(f.Nodes))
	}
	if len(f.Unreachable) != 1 || f.Unreachable[0].From != (check.PortID{Node: 0x200001, Port: 1}) {
		t.Errorf("unreachable = %+v, want Switch2 port 1", f.Unreachable)
	}
	if b := f.Node(0x100003); b == nil || b.Port(1).Error == "" {
		t.Errorf("HcaB's PortInfo error not recorded: %+v", b)
	}
	var rules []string
	for _, fd := range fabric.AuditFabric(f, fabric.AuditOptions{}).Findings {
		rules = append(rules, fd.Rule)
		t.Log(fd)
	}
	if !strings.Contains(strings.Join(rules, " "), fabric.RuleNotRead) {
		t.Errorf("audit rules %v, want %s", rules, fabric.RuleNotRead)
	}
}
