package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/lab"
)

// The lab tests run `ibkey pkeys/devices --lid/--dr` in-process against the simulated
// fabric and compare every answer with infiniband-diags (smpquery), the oracle. They
// skip when ibsim, OpenSM or infiniband-diags are missing, and fail instead under CI
// (lab.Require). `make fabric-test` runs them with CI=true.

const labTopologies = "../../internal/lab/testdata/"

// fastFail makes an unanswered MAD fail fast in the error tests (the comparisons keep
// the default timeout: a busy machine may answer late, and a reply costs no waiting).
var fastFail = []string{"--mad-timeout", "200ms", "--mad-retries", "1"}

// fabricTarget is one port to compare: every port of every switch (0 included) and
// every connected CA port, with the directed route that reaches it from the node
// both tools attach at (for a CA, arriving on that port).
type fabricTarget struct {
	node string
	typ  lab.NodeType
	port int
	path string // "0,1,3"
	lid  int    // set once OpenSM ran
}

func (tg fabricTarget) String() string { return fmt.Sprintf("%s[%d]", tg.node, tg.port) }

func fabricTargets(t *testing.T, topo *lab.Topology, from string) []*fabricTarget {
	t.Helper()
	var out []*fabricTarget
	for _, n := range topo.Nodes {
		first, arrive := 1, true
		if n.Type == lab.Switch {
			first, arrive = 0, false
		}
		for port := first; port <= n.NumPorts; port++ {
			if _, linked := n.Links[port]; arrive && !linked {
				continue
			}
			at := 0
			if arrive {
				at = port
			}
			p, err := topo.DRPath(from, n.Name, at)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, &fabricTarget{node: n.Name, typ: n.Type, port: port, path: lab.FormatDRPath(p)})
		}
	}
	return out
}

// pkeysDoc is the part of `pkeys -o json` the comparisons read.
type pkeysDoc struct {
	Via   string `json:"via"`
	Ports []struct {
		Device    string `json:"device"`
		Port      int    `json:"port"`
		TableSize *int   `json:"table_size"`
		Entries   []struct {
			Index int     `json:"index"`
			PKey  *string `json:"pkey"`
		} `json:"entries"`
		Address     string `json:"address"`
		NodeGUID    string `json:"node_guid"`
		Enforcement *struct {
			Inbound  bool `json:"inbound"`
			Outbound bool `json:"outbound"`
		} `json:"partition_enforcement"`
	} `json:"ports"`
}

type fabricLab struct {
	*lab.Lab
	from string // where ibkey and the tools attach
	sem  chan struct{}
}

// ibkey runs one command line attached to the lab and decodes its JSON into v.
func (l *fabricLab) ibkey(t *testing.T, v any, args ...string) result {
	t.Helper()
	all := []string{"--ibsim=" + l.SockName, "--sim-node", l.from}
	r := runIbkey(t, false, nil, append(all, args...)...)
	if r.code != 0 {
		t.Fatalf("ibkey %s: exit %d\n%s", strings.Join(args, " "), r.code, r.stderr)
	}
	if v != nil {
		if err := json.Unmarshal([]byte(r.stdout), v); err != nil {
			t.Fatalf("ibkey %s: %v\n%s", strings.Join(args, " "), err, r.stdout)
		}
	}
	return r
}

func (l *fabricLab) tool(t *testing.T, args ...string) string {
	t.Helper()
	out, err := l.ToolAt(l.from, args[0], args[1:]...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// each runs f for every target as parallel subtests, at most cap(l.sem) at once
// (ibsim has 10 client slots; each check holds one at a time).
func (l *fabricLab) each(t *testing.T, targets []*fabricTarget, f func(t *testing.T, tg *fabricTarget)) {
	for _, tg := range targets {
		t.Run(tg.String(), func(t *testing.T) {
			t.Parallel()
			l.sem <- struct{}{}
			defer func() { <-l.sem }()
			f(t, tg)
		})
	}
}

// comparePKeys checks `ibkey pkeys ADDR --all -o json` against smpquery's table.
func comparePKeys(t *testing.T, l *fabricLab, ibkeyArgs []string, smpArgs ...string) {
	t.Helper()
	var doc pkeysDoc
	l.ibkey(t, &doc, append([]string{"pkeys", "--all", "-o", "json"}, ibkeyArgs...)...)
	want, err := lab.ParsePKeys(l.tool(t, append([]string{"smpquery"}, smpArgs...)...))
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Ports) != 1 {
		t.Fatalf("ibkey %s: %d ports, want 1", strings.Join(ibkeyArgs, " "), len(doc.Ports))
	}
	p := doc.Ports[0]
	if p.TableSize == nil || *p.TableSize != want.Capacity {
		t.Errorf("ibkey %s: table_size %v, smpquery %s: capacity %d", strings.Join(ibkeyArgs, " "), p.TableSize, strings.Join(smpArgs, " "), want.Capacity)
	}
	var got, exp []string
	for _, e := range p.Entries {
		got = append(got, fmt.Sprintf("%d:%s", e.Index, *e.PKey))
	}
	for i, v := range want.Entries[:want.Capacity] {
		exp = append(exp, fmt.Sprintf("%d:0x%04x", i, v))
	}
	if strings.Join(got, " ") != strings.Join(exp, " ") {
		t.Errorf("ibkey %s:\n got %v\nwant %v (smpquery %s)", strings.Join(ibkeyArgs, " "), got, exp, strings.Join(smpArgs, " "))
	}
}

func startFabricLab(t *testing.T, topology string) (*fabricLab, []*fabricTarget) {
	l := &fabricLab{Lab: lab.Start(t, labTopologies+topology, nil), sem: make(chan struct{}, 4)}
	l.from = l.Topology.Nodes[0].Name
	return l, fabricTargets(t, l.Topology, l.from)
}

func partitionsConf(t *testing.T) string {
	b, err := os.ReadFile("testdata/fabric/partitions.conf")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// resolveLIDs asks smpquery (by directed route) for each target's LID: a CA port's
// own, a switch's port 0's.
func resolveLIDs(t *testing.T, l *fabricLab, targets []*fabricTarget) {
	var mu sync.Mutex
	t.Run("lids", func(t *testing.T) {
		l.each(t, targets, func(t *testing.T, tg *fabricTarget) {
			port := tg.port
			if tg.typ == lab.Switch {
				port = 0
			}
			lid, err := lab.ParseFields(l.tool(t, "smpquery", "-D", "portinfo", tg.path, strconv.Itoa(port))).Uint("Lid")
			if err != nil || lid == 0 {
				t.Fatalf("smpquery portinfo: LID %d, %v", lid, err)
			}
			mu.Lock()
			tg.lid = int(lid)
			mu.Unlock()
		})
	})
	if t.Failed() {
		t.FailNow()
	}
}

func TestLabFabricPKeys(t *testing.T) {
	for _, topo := range []string{"small.net", "fattree.net"} {
		t.Run(topo, func(t *testing.T) {
			t.Parallel()
			l, targets := startFabricLab(t, topo)

			// Before any SM: every LID is 0, only directed routes work.
			t.Run("dr", func(t *testing.T) {
				l.each(t, targets, func(t *testing.T, tg *fabricTarget) {
					p := strconv.Itoa(tg.port)
					comparePKeys(t, l, []string{"--dr", tg.path, "--port", p}, "-D", "pkeys", tg.path, p)
				})
			})
			if err := l.RunOpenSM(partitionsConf(t), false); err != nil {
				t.Fatal(err)
			}
			resolveLIDs(t, l, targets)

			t.Run("lid", func(t *testing.T) {
				l.each(t, targets, func(t *testing.T, tg *fabricTarget) {
					lid, p := strconv.Itoa(tg.lid), strconv.Itoa(tg.port)
					if tg.typ == lab.Switch {
						comparePKeys(t, l, []string{"--lid", lid, "--port", p}, "pkeys", lid, p)
						return
					}
					// A CA port's LID reaches that port: no --port needed.
					comparePKeys(t, l, []string{"--lid", lid}, "pkeys", lid)
				})
			})
			t.Run("lid-default-port", func(t *testing.T) {
				// Without --port: a switch's LID is port 0's, as smpquery pkeys LID.
				for _, sw := range l.Topology.Switches() {
					for _, tg := range targets {
						if tg.node == sw.Name && tg.port == 0 {
							comparePKeys(t, l, []string{"--lid", strconv.Itoa(tg.lid)}, "pkeys", strconv.Itoa(tg.lid))
						}
					}
				}
			})
			t.Run("ca-other-port", func(t *testing.T) {
				// Another port of a CA is read through its own LID: compare with
				// smpquery at that LID (smpquery pkeys LID PORT would print the
				// arrival port's table again).
				byNode := map[string][]*fabricTarget{}
				for _, tg := range targets {
					if tg.typ == lab.CA {
						byNode[tg.node] = append(byNode[tg.node], tg)
					}
				}
				n := 0
				for _, ports := range byNode {
					for _, a := range ports {
						for _, b := range ports {
							if a != b {
								n++
								comparePKeys(t, l, []string{"--lid", strconv.Itoa(a.lid), "--port", strconv.Itoa(b.port)}, "pkeys", strconv.Itoa(b.lid))
							}
						}
					}
				}
				if topo == "small.net" && n == 0 {
					t.Error("no dual-port CA in small.net to check")
				}
			})
			t.Run("enforcement", func(t *testing.T) {
				for _, tg := range targets {
					if tg.typ != lab.Switch || tg.port == 0 {
						continue
					}
					var doc pkeysDoc
					l.ibkey(t, &doc, "pkeys", "-o", "json", "--lid", strconv.Itoa(tg.lid), "--port", strconv.Itoa(tg.port))
					f := lab.ParseFields(l.tool(t, "smpquery", "portinfo", strconv.Itoa(tg.lid), strconv.Itoa(tg.port)))
					e := doc.Ports[0].Enforcement
					if e == nil || b01(e.Inbound) != f["PartEnforceInb"] || b01(e.Outbound) != f["PartEnforceOutb"] {
						t.Errorf("%s: partition_enforcement %+v, smpquery PartEnforceInb %s PartEnforceOutb %s", tg, e, f["PartEnforceInb"], f["PartEnforceOutb"])
					}
				}
			})
			t.Run("lid-list", func(t *testing.T) {
				// One process, many LIDs: the same tables, in the order asked.
				var lids []string
				for _, tg := range targets {
					if tg.typ == lab.CA {
						lids = append(lids, strconv.Itoa(tg.lid))
					}
				}
				var doc pkeysDoc
				l.ibkey(t, &doc, "pkeys", "-o", "json", "--lid", strings.Join(lids, ","))
				if len(doc.Ports) != len(lids) {
					t.Fatalf("%d ports for %d LIDs", len(doc.Ports), len(lids))
				}
				for i, p := range doc.Ports {
					if p.Address != "lid "+lids[i] {
						t.Errorf("port %d: address %q, want lid %s", i, p.Address, lids[i])
					}
				}
			})
		})
	}
}

func b01(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// devicesDoc is `devices -o json`.
type devicesDoc struct {
	Ports []struct {
		Device     string            `json:"device"`
		Port       int               `json:"port"`
		NodeType   *string           `json:"node_type"`
		LinkLayer  *string           `json:"link_layer"`
		State      string            `json:"state"`
		PhysState  *string           `json:"phys_state"`
		LID        *int              `json:"lid"`
		SMLID      *int              `json:"sm_lid"`
		Rate       *string           `json:"rate"`
		PortGUID   *string           `json:"port_guid"`
		TableSize  *int              `json:"table_size"`
		ValidPKeys *int              `json:"valid_pkeys"`
		Missing    map[string]string `json:"missing"`
		Address    string            `json:"address"`
		NodeGUID   string            `json:"node_guid"`
	} `json:"ports"`
}

// smpquery's names for what ibkey prints the kernel's way.
var (
	linkStates  = map[string]string{"Down": "DOWN", "Initialize": "INIT", "Armed": "ARMED", "Active": "ACTIVE"}
	physStates  = map[string]string{"Sleep": "Sleep", "Polling": "Polling", "Disabled": "Disabled", "PortConfigurationTraining": "PortConfigurationTraining", "LinkUp": "LinkUp", "LinkErrorRecovery": "LinkErrorRecovery", "PhyTest": "Phy Test"}
	laneSpeeds  = map[string]struct{ name, gbps string }{"2.5 Gbps": {"SDR", "2.5"}, "5.0 Gbps": {"DDR", "5"}, "10.0 Gbps": {"QDR", "10"}}
	nodeTypes   = map[string]string{"Channel Adapter": "CA", "Switch": "switch"}
	widthFactor = map[string]float64{"1X": 1, "2X": 2, "4X": 4, "8X": 8, "12X": 12}
)

// expectedRate is the kernel-style rate from smpquery's LinkWidthActive and
// LinkSpeedActive (the lab has no extended speeds).
func expectedRate(f lab.Fields) string {
	s, ok := laneSpeeds[f["LinkSpeedActive"]]
	w, wok := widthFactor[f["LinkWidthActive"]]
	if !ok || !wok || f["LinkSpeedExtActive"] != "No Extended Speed" {
		return "?"
	}
	lane, _ := strconv.ParseFloat(s.gbps, 64)
	return fmt.Sprintf("%s Gb/sec (%s %s)", strconv.FormatFloat(lane*w, 'f', -1, 64), f["LinkWidthActive"], s.name)
}

func nodeDesc(out string) string {
	_, v, _ := strings.Cut(out, ":")
	return strings.TrimSpace(strings.TrimLeft(v, "."))
}

func TestLabFabricDevices(t *testing.T) {
	for _, topo := range []string{"small.net", "fattree.net"} {
		t.Run(topo, func(t *testing.T) {
			t.Parallel()
			l, targets := startFabricLab(t, topo)
			if err := l.RunOpenSM(partitionsConf(t), false); err != nil {
				t.Fatal(err)
			}
			resolveLIDs(t, l, targets)
			lidOf := map[string]map[int]int{} // node -> port -> LID (CAs)
			var nodes []*fabricTarget         // one address per node
			for _, tg := range targets {
				if lidOf[tg.node] == nil {
					lidOf[tg.node] = map[int]int{}
					nodes = append(nodes, tg)
				}
				lidOf[tg.node][tg.port] = tg.lid
			}
			if topo == "fattree.net" {
				// Every node of small.net, a sample of the fat tree's (its
				// tables are all compared in TestLabFabricPKeys): a leaf, a
				// spine and HCAs on two leaves.
				nodes = sampleNodes(nodes, "Leaf1", "Spine2", "Hca1", "Hca8", "Hca9", "Hca32")
			}
			l.each(t, nodes, func(t *testing.T, tg *fabricTarget) {
				lid := strconv.Itoa(tg.lid)
				var doc devicesDoc
				l.ibkey(t, &doc, "devices", "-o", "json", "--lid", lid)
				ni := lab.ParseFields(l.tool(t, "smpquery", "nodeinfo", lid))
				desc := nodeDesc(l.tool(t, "smpquery", "nodedesc", lid))
				numPorts, _ := ni.Uint("NumPorts")
				first := 1
				if ni["NodeType"] == "Switch" {
					first = 0
				}
				if len(doc.Ports) != int(numPorts)+1-first {
					t.Fatalf("%d ports, smpquery nodeinfo NumPorts %d", len(doc.Ports), numPorts)
				}
				for i, p := range doc.Ports {
					port := strconv.Itoa(first + i)
					pi := lab.ParseFields(l.tool(t, "smpquery", "portinfo", lid, port))
					check := func(name, got, want string) {
						if got != want {
							t.Errorf("port %s %s = %q, smpquery says %q", port, name, got, want)
						}
					}
					check("port", strconv.Itoa(p.Port), port)
					check("device", p.Device, desc)
					check("node_type", deref(p.NodeType), nodeTypes[ni["NodeType"]])
					check("node_guid", p.NodeGUID, ni["Guid"])
					check("link_layer", deref(p.LinkLayer), "InfiniBand")
					check("state", p.State, linkStates[pi["LinkState"]])
					check("phys_state", deref(p.PhysState), physStates[pi["PhysLinkState"]])
					check("rate", deref(p.Rate), expectedRate(pi))

					// The table: switch ports by modifier, CA ports at their own LID.
					pkeyArgs := []string{"pkeys", lid, port}
					external := ni["NodeType"] == "Switch" && port != "0"
					if !external {
						check("lid", fmt.Sprint(derefInt(p.LID)), pi["Lid"])
						check("sm_lid", fmt.Sprint(derefInt(p.SMLID)), pi["SMLid"])
					} else if p.LID != nil || p.SMLID != nil || p.PortGUID != nil || p.Missing["lid"] == "" {
						t.Errorf("switch port %s: lid %v, sm_lid %v, port_guid %v: want n/a with a reason (%v)", port, p.LID, p.SMLID, p.PortGUID, p.Missing)
					}
					switch {
					case ni["NodeType"] == "Switch" && port == "0", port == ni["LocalPort"]:
						check("port_guid", deref(p.PortGUID), ni["PortGuid"])
					case external:
					case pi["Lid"] == "0":
						if p.PortGUID != nil || p.TableSize != nil || p.Missing["table_size"] == "" {
							t.Errorf("CA port %s without a LID: port_guid %v table_size %v: want n/a with a reason", port, p.PortGUID, p.TableSize)
						}
						continue
					default:
						own := pi["Lid"]
						check("port_guid", deref(p.PortGUID), lab.ParseFields(l.tool(t, "smpquery", "nodeinfo", own))["PortGuid"])
						check("address", p.Address, "lid "+own)
						pkeyArgs = []string{"pkeys", own}
					}
					tbl, err := lab.ParsePKeys(l.tool(t, append([]string{"smpquery"}, pkeyArgs...)...))
					if err != nil {
						t.Fatal(err)
					}
					valid := 0
					for _, k := range tbl.Entries[:tbl.Capacity] {
						if k&0x7fff != 0 {
							valid++
						}
					}
					check("table_size", fmt.Sprint(derefInt(p.TableSize)), strconv.Itoa(tbl.Capacity))
					check("valid_pkeys", fmt.Sprint(derefInt(p.ValidPKeys)), strconv.Itoa(valid))
				}
			})
		})
	}
}

func sampleNodes(nodes []*fabricTarget, names ...string) []*fabricTarget {
	var out []*fabricTarget
	for _, n := range nodes {
		for _, name := range names {
			if n.node == name {
				out = append(out, n)
			}
		}
	}
	return out
}

func deref(p *string) string {
	if p == nil {
		return "<null>"
	}
	return *p
}

func derefInt(p *int) any {
	if p == nil {
		return "<null>"
	}
	return *p
}

// TestLabFabricErrors: what cannot be answered fails with exit 3 and one clear line,
// within the MAD timeout, never a hang; and every run gives its ibsim slot back.
func TestLabFabricErrors(t *testing.T) {
	l, targets := startFabricLab(t, "small.net")
	run := func(t *testing.T, stderr string, args ...string) {
		t.Helper()
		start := time.Now()
		all := append([]string{"--ibsim=" + l.SockName, "--sim-node", l.from}, fastFail...)
		r := runIbkey(t, false, nil, append(all, args...)...)
		// 2 attempts x 200ms per MAD, and a few MADs in a row at most.
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("ibkey %s took %v", strings.Join(args, " "), d)
		}
		if r.code != 3 || !strings.Contains(r.stderr, stderr) || r.stdout != "" {
			t.Errorf("ibkey %s: exit %d, stdout %q, stderr %q; want exit 3 and %q", strings.Join(args, " "), r.code, r.stdout, r.stderr, stderr)
		}
		if strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
			t.Errorf("ibkey %s: error spans several lines: %q", strings.Join(args, " "), r.stderr)
		}
	}
	var hcaB *fabricTarget
	for _, tg := range targets {
		if tg.node == "HcaB" {
			hcaB = tg
		}
	}

	t.Run("lid-before-sm", func(t *testing.T) {
		run(t, "no answer from lid 1", "pkeys", "--lid", "1")
	})
	t.Run("dr-dead-end", func(t *testing.T) {
		// Out of HcaA's unconnected port 2.
		run(t, "no answer from DR path 0,2", "devices", "--dr", "0,2")
	})
	t.Run("no-such-port", func(t *testing.T) {
		run(t, "no port 9 on the switch at DR path 0,1 (ports: 0-8)", "pkeys", "--dr", "0,1", "--port", "9")
		run(t, "no port 0 on the CA at DR path 0 (ports: 1-2)", "pkeys", "--dr", "0", "--port", "0")
	})
	if err := l.RunOpenSM(partitionsConf(t), false); err != nil {
		t.Fatal(err)
	}
	resolveLIDs(t, l, targets)
	t.Run("unassigned-lid", func(t *testing.T) {
		run(t, "no answer from lid 999", "pkeys", "--lid", "999")
	})
	t.Run("dropped", func(t *testing.T) {
		l.MustConsole(fmt.Sprintf(`Error "HcaB"[%d] 100`, hcaB.port))
		defer l.MustConsole(fmt.Sprintf(`Error "HcaB"[%d] 0`, hcaB.port))
		run(t, fmt.Sprintf("no answer from lid %d", hcaB.lid), "pkeys", "--lid", strconv.Itoa(hcaB.lid))
		run(t, fmt.Sprintf("no answer from DR path %s", hcaB.path), "devices", "--dr", hcaB.path)
	})
	t.Run("partial-list", func(t *testing.T) {
		// What answered is printed; the LIDs that did not are named; exit 3.
		all := append([]string{"--ibsim=" + l.SockName, "--sim-node", l.from}, fastFail...)
		r := runIbkey(t, false, nil, append(all, "pkeys", "-o", "json", "--lid", fmt.Sprintf("%d,999", hcaB.lid))...)
		var doc pkeysDoc
		if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || len(doc.Ports) != 1 {
			t.Errorf("stdout %q: %v", r.stdout, err)
		}
		if r.code != 3 || !strings.Contains(r.stderr, "1 of 2 addresses failed: no answer from lid 999") {
			t.Errorf("exit %d, stderr %q", r.code, r.stderr)
		}
	})
	t.Run("slots", func(t *testing.T) {
		clients, err := l.Attached()
		if err != nil || len(clients) != 0 {
			t.Fatalf("attached after the runs: %v %v", clients, err)
		}
	})
	t.Run("killed", func(t *testing.T) {
		l.Kill()
		run(t, "no simulator listening on socket", "pkeys", "--lid", strconv.Itoa(hcaB.lid))
	})
}
