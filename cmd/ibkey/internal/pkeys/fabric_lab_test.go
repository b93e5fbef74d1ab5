package pkeys

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
	"github.com/ibkey/ibkey/internal/lab"
)

// The lab tests run `ibkey pkeys --lid/--dr` in-process against the simulated
// fabric and compare every answer with infiniband-diags (smpquery), the oracle. They
// skip when ibsim, OpenSM or infiniband-diags are missing, and fail instead under CI
// (lab.Require). `make fabric-test` runs them with CI=true.

// pkeysDoc is `pkeys -o json`.
type pkeysDoc struct {
	Via   string         `json:"via"`
	Ports []pkeyPortJSON `json:"ports"`
}

// comparePKeys checks `ibkey pkeys ADDR --all -o json` against smpquery's table.
func comparePKeys(t *testing.T, l *cmdtest.Lab, ibkeyArgs []string, smpArgs ...string) {
	t.Helper()
	var doc pkeysDoc
	l.RunJSON(t, &doc, append([]string{"pkeys", "--all", "-o", "json"}, ibkeyArgs...)...)
	want, err := lab.ParsePKeys(l.Diag(t, append([]string{"smpquery"}, smpArgs...)...))
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

func TestLabFabricPKeys(t *testing.T) {
	for _, topo := range []string{"small.net", "fattree.net"} {
		t.Run(topo, func(t *testing.T) {
			t.Parallel()
			l := cmdtest.StartLab(t, topo, root)
			targets := l.Targets(t)

			// Before any SM: every LID is 0, only directed routes work.
			t.Run("dr", func(t *testing.T) {
				l.Each(t, targets, func(t *testing.T, tg *cmdtest.Target) {
					p := strconv.Itoa(tg.Port)
					comparePKeys(t, l, []string{"--dr", tg.Path, "--port", p}, "-D", "pkeys", tg.Path, p)
				})
			})
			if err := l.RunOpenSM(cmdtest.FabricConf(t), false); err != nil {
				t.Fatal(err)
			}
			l.ResolveLIDs(t, targets)

			t.Run("lid", func(t *testing.T) {
				l.Each(t, targets, func(t *testing.T, tg *cmdtest.Target) {
					lid, p := strconv.Itoa(tg.LID), strconv.Itoa(tg.Port)
					if tg.Type == lab.Switch {
						comparePKeys(t, l, []string{"--lid", lid, "--port", p}, "pkeys", lid, p)
						return
					}
					// A CA port's LID reaches that port: no --port needed.
					comparePKeys(t, l, []string{"--lid", lid}, "pkeys", lid)
				})
			})
			t.Run("lid-default-port", func(t *testing.T) {
				// Without --port: a switch's LID is port 0's, as smpquery pkeys LID.
				for _, sw := range l.Topology.Nodes {
					for _, tg := range targets {
						if sw.Type == lab.Switch && tg.Node == sw.Name && tg.Port == 0 {
							comparePKeys(t, l, []string{"--lid", strconv.Itoa(tg.LID)}, "pkeys", strconv.Itoa(tg.LID))
						}
					}
				}
			})
			t.Run("ca-other-port", func(t *testing.T) {
				// Another port of a CA is read through its own LID: compare with
				// smpquery at that LID (smpquery pkeys LID PORT would print the
				// arrival port's table again).
				byNode := map[string][]*cmdtest.Target{}
				for _, tg := range targets {
					if tg.Type == lab.CA {
						byNode[tg.Node] = append(byNode[tg.Node], tg)
					}
				}
				n := 0
				for _, ports := range byNode {
					for _, a := range ports {
						for _, b := range ports {
							if a != b {
								n++
								comparePKeys(t, l, []string{"--lid", strconv.Itoa(a.LID), "--port", strconv.Itoa(b.Port)}, "pkeys", strconv.Itoa(b.LID))
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
					if tg.Type != lab.Switch || tg.Port == 0 {
						continue
					}
					var doc pkeysDoc
					l.RunJSON(t, &doc, "pkeys", "-o", "json", "--lid", strconv.Itoa(tg.LID), "--port", strconv.Itoa(tg.Port))
					f := lab.ParseFields(l.Diag(t, "smpquery", "portinfo", strconv.Itoa(tg.LID), strconv.Itoa(tg.Port)))
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
					if tg.Type == lab.CA {
						lids = append(lids, strconv.Itoa(tg.LID))
					}
				}
				var doc pkeysDoc
				l.RunJSON(t, &doc, "pkeys", "-o", "json", "--lid", strings.Join(lids, ","))
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

// TestLabGUID: --guid (-G) reads the same port as the directed route to it: the
// GUID is found by a sweep of the simulated fabric (issue 12 item 9).
func TestLabGUID(t *testing.T) {
	l := cmdtest.StartLab(t, "small.net", root)
	ibsim := "--ibsim=" + l.SockName
	for _, dr := range []string{"0,1", "0"} {
		byDR := cmdtest.Run(t, root, false, nil, "pkeys", ibsim, "--dr", dr, "-o", "json", "--mad-retries", "1")
		if byDR.Code != 0 {
			t.Fatalf("--dr %s: %+v", dr, byDR)
		}
		var doc struct {
			Ports []struct {
				NodeGUID string `json:"node_guid"`
			} `json:"ports"`
		}
		if err := json.Unmarshal([]byte(byDR.Stdout), &doc); err != nil || len(doc.Ports) != 1 {
			t.Fatalf("--dr %s: %v\n%s", dr, err, byDR.Stdout)
		}
		g := doc.Ports[0].NodeGUID
		t.Logf("--dr %s: node %s", dr, g)
		byGUID := cmdtest.Run(t, root, false, nil, "pkeys", ibsim, "-G", g, "-o", "json", "--mad-retries", "1")
		if byGUID.Code != 0 || !strings.Contains(byGUID.Stderr, "GUID "+g+" is ") {
			t.Fatalf("-G %s: %+v", g, byGUID)
		}
		// The address read through differs (LID or route); the table does not.
		strip := func(s string) string {
			var out []string
			for _, line := range strings.Split(s, "\n") {
				if !strings.Contains(line, `"address"`) {
					out = append(out, line)
				}
			}
			return strings.Join(out, "\n")
		}
		if strip(byGUID.Stdout) != strip(byDR.Stdout) {
			t.Errorf("-G %s:\n%s\n--dr %s:\n%s", g, byGUID.Stdout, dr, byDR.Stdout)
		}
	}
	r := cmdtest.Run(t, root, false, nil, "pkeys", ibsim, "--guid", "0x0123456789abcdef", "--mad-retries", "1")
	if r.Code != 3 || !strings.Contains(r.Stderr, "no port or node with GUID 0x0123456789abcdef in the fabric") {
		t.Errorf("unknown GUID: %+v", r)
	}
}

// TestLabDownPort (issue 25 item 9): HcaA's port 2 has no cable (DOWN). A CA answers
// P_KeyTable only for the port an SMP arrives on, and none arrives at a DOWN port, so
// its table cannot be read: `pkeys --lid A --port 2` says why (it printed an empty
// table and said nothing); it is part of no answer (query.PortView.DownTableNotRead):
// exit 0, no incomplete, as fabric pkeys and fabric check treat it. smpquery pkeys A 2,
// the oracle, answers with the
// table of port 1 (the arrival port) and exits 0: a CA ignores the port of the request.
func TestLabDownPort(t *testing.T) {
	l := cmdtest.StartLab(t, "small.net", root)
	if err := l.RunOpenSM(cmdtest.FabricConf(t), false); err != nil {
		t.Fatal(err)
	}
	targets := l.Targets(t)
	l.ResolveLIDs(t, targets)
	lid := ""
	for _, tg := range targets {
		if tg.Node == "HcaA" && tg.Port == 1 {
			lid = strconv.Itoa(tg.LID)
		}
	}
	if lid == "" {
		t.Fatal("no HcaA[1] in small.net")
	}
	r := l.Run(t, "pkeys", "--lid", lid, "--port", "2", "-o", "json")
	var doc struct {
		Ports []struct {
			State     string  `json:"state"`
			TableSize *int    `json:"table_size"`
			Error     string  `json:"pkeys_error"`
			Entries   []any   `json:"entries"`
			NodeDesc  *string `json:"node_desc"`
		} `json:"ports"`
		Incomplete []struct{ Kind, Message string } `json:"incomplete"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatalf("%v\n%s", err, r.Stdout)
	}
	if r.Code != 0 || len(doc.Ports) != 1 || doc.Ports[0].State != "DOWN" || doc.Ports[0].TableSize != nil ||
		doc.Ports[0].Entries != nil || !strings.Contains(doc.Ports[0].Error, "port 2 is DOWN: no SMP can arrive there") ||
		len(doc.Incomplete) != 0 {
		t.Errorf("pkeys --lid %s --port 2: exit %d\n%s%s", lid, r.Code, r.Stdout, r.Stderr)
	}
	if r := l.Run(t, "pkeys", "--lid", lid, "--port", "2"); r.Code != 0 || !strings.Contains(r.Stderr, "note: HcaA/2: P_Key table n/a: port 2 is DOWN") {
		t.Errorf("pkeys --lid %s --port 2 (plain): exit %d\n%s%s", lid, r.Code, r.Stdout, r.Stderr)
	}
	port2, err := lab.ParsePKeys(l.Diag(t, "smpquery", "pkeys", lid, "2"))
	if err != nil {
		t.Fatal(err)
	}
	port1, err := lab.ParsePKeys(l.Diag(t, "smpquery", "pkeys", lid, "1"))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(port2) != fmt.Sprint(port1) {
		t.Errorf("smpquery pkeys %s 2 no longer answers with port 1's table:\n%v\n%v", lid, port2, port1)
	}
	// devices shows such a table as n/a (TestLabDownPortNA in devices).
}

// TestLabOverlappingSelectors: selectors that name one port twice (both LIDs of HcaD,
// a dual-homed CA, with --port all or --port 1) list it once, in the order first
// named (Fabric.LoadMany); each port was listed once per selector before.
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
		{[]string{"--lid", lids[2], "--lid", lids[1]}, "HcaD/2 HcaD/1"},
	} {
		var doc pkeysDoc
		l.RunJSON(t, &doc, append([]string{"pkeys", "-o", "json"}, tc.args...)...)
		var got []string
		for _, p := range doc.Ports {
			got = append(got, fmt.Sprintf("%s/%d", p.Device, p.Port))
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("pkeys %s: ports %v, want %s", strings.Join(tc.args, " "), got, tc.want)
		}
	}
}
