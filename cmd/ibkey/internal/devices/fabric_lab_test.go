package devices

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
	"github.com/ibkey/ibkey/internal/lab"
)

// `ibkey devices --lid` on the simulated fabric (cmdtest.StartLab), every field
// compared with smpquery's nodeinfo, nodedesc, portinfo and pkeys. `make fabric-test`
// runs it with CI=true (without the lab it skips, under CI it fails).

// devicesDoc is `devices -o json`.
type devicesDoc struct {
	Ports      []devicePortJSON     `json:"ports"`
	Incomplete []cmdutil.Incomplete `json:"incomplete"`
}

// smpquery's names for what ibkey prints the kernel's way.
var (
	linkStates  = map[string]string{"Down": "DOWN", "Initialize": "INIT", "Armed": "ARMED", "Active": "ACTIVE"}
	physStates  = map[string]string{"Sleep": "Sleep", "Polling": "Polling", "Disabled": "Disabled", "PortConfigurationTraining": "PortConfigurationTraining", "LinkUp": "LinkUp", "LinkErrorRecovery": "LinkErrorRecovery", "PhyTest": "Phy Test"}
	laneSpeeds  = map[string]struct{ name, gbps string }{"2.5 Gbps": {"SDR", "2.5"}, "5.0 Gbps": {"DDR", "5"}, "10.0 Gbps": {"QDR", "10"}}
	nodeTypes   = map[string]string{"Channel Adapter": "ca", "Switch": "switch"}
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
			l := cmdtest.StartLab(t, topo, root)
			targets := l.Targets(t)
			if err := l.RunOpenSM(cmdtest.FabricConf(t), false); err != nil {
				t.Fatal(err)
			}
			l.ResolveLIDs(t, targets)
			lidOf := map[string]map[int]int{} // node -> port -> LID (CAs)
			var nodes []*cmdtest.Target       // one address per node
			for _, tg := range targets {
				if lidOf[tg.Node] == nil {
					lidOf[tg.Node] = map[int]int{}
					nodes = append(nodes, tg)
				}
				lidOf[tg.Node][tg.Port] = tg.LID
			}
			if topo == "fattree.net" {
				// Every node of small.net, a sample of the fat tree's (its
				// tables are all compared in TestLabFabricPKeys): a leaf, a
				// spine and HCAs on two leaves.
				nodes = sampleNodes(nodes, "Leaf1", "Spine2", "Hca1", "Hca8", "Hca9", "Hca32")
			}
			l.Each(t, nodes, func(t *testing.T, tg *cmdtest.Target) {
				lid := strconv.Itoa(tg.LID)
				var doc devicesDoc
				r := l.Run(t, "devices", "-o", "json", "--lid", lid)
				if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
					t.Fatalf("devices --lid %s: %v\n%s%s", lid, err, r.Stdout, r.Stderr)
				}
				// Exit 4 exactly when a table was not read, each named in
				// incomplete; a CA's DOWN port's is no gap (query.PortView.DownTableNotRead:
				// n/a, a note, exit 0).
				var unread []string
				for _, p := range doc.Ports {
					if p.TableSize == nil && p.State != "DOWN" {
						unread = append(unread, fmt.Sprintf("%s/%d", p.Device, p.Port))
					}
				}
				if want := map[bool]int{false: 0, true: 4}[len(unread) > 0]; r.Code != want || len(doc.Incomplete) != len(unread) {
					t.Fatalf("devices --lid %s: exit %d, want %d; tables not read %v, incomplete %v\n%s", lid, r.Code, want, unread, doc.Incomplete, r.Stderr)
				}
				ni := lab.ParseFields(l.Diag(t, "smpquery", "nodeinfo", lid))
				desc := nodeDesc(l.Diag(t, "smpquery", "nodedesc", lid))
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
					pi := lab.ParseFields(l.Diag(t, "smpquery", "portinfo", lid, port))
					check := func(name, got, want string) {
						if got != want {
							t.Errorf("port %s %s = %q, smpquery says %q", port, name, got, want)
						}
					}
					check("port", strconv.Itoa(p.Port), port)
					check("device", p.Device, desc)
					check("type", deref(p.Type), nodeTypes[ni["NodeType"]])
					check("node_desc", deref(p.NodeDesc), desc)
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
						check("port_guid", deref(p.PortGUID), lab.ParseFields(l.Diag(t, "smpquery", "nodeinfo", own))["PortGuid"])
						check("address", p.Address, "lid "+own)
						pkeyArgs = []string{"pkeys", own}
					}
					tbl, err := lab.ParsePKeys(l.Diag(t, append([]string{"smpquery"}, pkeyArgs...)...))
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

func sampleNodes(nodes []*cmdtest.Target, names ...string) []*cmdtest.Target {
	var out []*cmdtest.Target
	for _, n := range nodes {
		for _, name := range names {
			if n.Node == name {
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

func derefInt[T int | uint16](p *T) any {
	if p == nil {
		return "<null>"
	}
	return *p
}

// TestLabDownPortNA (issue 25 item 9): a CA's DOWN port, whose table no SMP can read
// (none arrives there), shows PKEYS n/a with the reason, not "none" (which is an iWARP
// port's real lack of a table), with the reason in a note. It is no gap
// (query.PortView.DownTableNotRead: nothing can read it and it is part of no answer): exit 0,
// no incomplete, as pkeys, fabric pkeys and fabric check treat it (waves 8-14 exited 4
// here and in pkeys alone).
func TestLabDownPortNA(t *testing.T) {
	l := cmdtest.StartLab(t, "small.net", root)
	if err := l.RunOpenSM(cmdtest.FabricConf(t), false); err != nil {
		t.Fatal(err)
	}
	targets := l.Targets(t)
	l.ResolveLIDs(t, targets)
	for _, tg := range targets {
		if tg.Node != "HcaA" || tg.Port != 1 {
			continue
		}
		lid := strconv.Itoa(tg.LID)
		r := l.Run(t, "devices", "--lid", lid, "--port", "2")
		if r.Code != 0 || !strings.Contains(r.Stdout, "HcaA    2     InfiniBand  DOWN") || !strings.Contains(r.Stdout, "n/a    n/a") ||
			strings.Contains(r.Stdout, "none") || !strings.Contains(r.Stderr, "note: HcaA/2: PKEYS n/a: port 2 is DOWN") {
			t.Errorf("devices --lid %s --port 2: exit %d\n%s%s", lid, r.Code, r.Stdout, r.Stderr)
		}
		r = l.Run(t, "devices", "--lid", lid, "--port", "2", "-o", "json")
		if r.Code != 0 || strings.Contains(r.Stdout, `"incomplete"`) || !strings.Contains(r.Stdout, "port 2 is DOWN: no SMP can arrive there") {
			t.Errorf("devices --lid %s --port 2 -o json: exit %d, want 0 with the reason under missing\n%s%s", lid, r.Code, r.Stdout, r.Stderr)
		}
		return
	}
	t.Fatal("no HcaA[1] in small.net")
}

// TestLabOverlappingSelectors: selectors that name one port twice (both LIDs of HcaD,
// a dual-homed CA: devices --lid shows every port of the node) list it once, in the
// order first named (Fabric.LoadMany); each port was listed once per selector before.
func TestLabOverlappingSelectors(t *testing.T) {
	l := cmdtest.StartLab(t, "small.net", root)
	if err := l.RunOpenSM(cmdtest.FabricConf(t), false); err != nil {
		t.Fatal(err)
	}
	targets := l.Targets(t)
	l.ResolveLIDs(t, targets)
	lids := map[int]string{}
	for _, tg := range targets {
		if tg.Node == "HcaD" {
			lids[tg.Port] = strconv.Itoa(tg.LID)
		}
	}
	both := lids[2] + "," + lids[1]
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--lid", both, "--port", "all"}, "HcaD/1 HcaD/2"},
		{[]string{"--lid", both, "--port", "1"}, "HcaD/1"},
		{[]string{"--lid", lids[2], "--lid", lids[1]}, "HcaD/1 HcaD/2"},
	} {
		var doc devicesDoc
		r := l.Run(t, append([]string{"devices", "-o", "json"}, tc.args...)...)
		if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || r.Code != 0 {
			t.Fatalf("devices %s: exit %d, %v\n%s%s", strings.Join(tc.args, " "), r.Code, err, r.Stdout, r.Stderr)
		}
		var got []string
		for _, p := range doc.Ports {
			got = append(got, fmt.Sprintf("%s/%d", p.Device, p.Port))
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("devices %s: ports %v, want %s", strings.Join(tc.args, " "), got, tc.want)
		}
	}
}
