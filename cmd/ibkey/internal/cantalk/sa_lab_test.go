package cantalk

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/lab"
)

// can-talk --sa in the lab: the partitions lab net with OpenSM running saLabConf as a
// daemon. For every pair of HCA ports (by LID) and every key, the SM's answer in
// can-talk's JSON is saquery PR --slid --dlid --pkey's (run from the same node),
// can-talk's verdict agrees with it, and a refused pair says why.

const saLabConf = `Default=0x7fff : ALL=full;
p1=0x8001, ipoib : 0x0002c90300000211=full, 0x0002c90300000221, 0x0002c90300000231;
p2=0x0002 : 0x0002c90300000221, 0x0002c90300000231;
p3=0x0003 : 0x0002c90300000211=full, 0x0002c90300000231;
`

type saDoc struct {
	Verdict    string          `json:"verdict"`
	Unresolved json.RawMessage `json:"unresolved"`
	SA         struct {
		Path    bool   `json:"path"`
		Agrees  bool   `json:"agrees"`
		Unknown bool   `json:"unknown"`
		Reason  string `json:"reason"`
		LogLine string `json:"log_line"`
	} `json:"sa"`
}

func TestLabCanTalkSA(t *testing.T) {
	lab.Require(t)
	if testing.Short() {
		t.Skip("lab: -short")
	}
	l := lab.StartPartconf(t)
	d := l.StartOpenSMDaemon(t, saLabConf)
	attach := []string{"--ibsim=" + l.SockName, "--sim-node", "HcaA"}
	// Every pair: A..D are LIDs 1, 3, 4, 5 (Sw1 is 2).
	lids := []int{1, 3, 4, 5}
	keys := []string{"0x8001", "0x0001", "0x0002", "0x8002", "0x0003", "0xffff", "0x7fff", "0x0009"}
	asked, unresolved := 0, 0
	for _, a := range lids {
		for _, b := range lids {
			if a == b {
				continue
			}
			for _, k := range keys {
				out, err := l.ToolAt("HcaA", "saquery", "PR", "--slid", strconv.Itoa(a), "--dlid", strconv.Itoa(b), "--pkey", k)
				if err != nil {
					t.Fatal(err)
				}
				path := strings.Contains(out, "PathRecord dump")
				args := append([]string{"can-talk", fmt.Sprintf("lid=%d,pkey=%s", a, k), fmt.Sprintf("lid=%d,pkey=%s", b, k), "--sa", "-o", "json"}, attach...)
				r := runIbkey(t, args...)
				var doc saDoc
				if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
					t.Fatalf("ibkey %s: exit %d: %v\n%s%s", strings.Join(args, " "), r.Code, err, r.Stdout, r.Stderr)
				}
				if doc.Unresolved != nil {
					// A port's table lacks the key: no QP there can use it, the SM
					// is not asked, and saquery must find no path either.
					if r.Code != 1 || path || !strings.Contains(r.Stdout, "the Subnet Manager was not asked") {
						t.Errorf("ibkey %s: exit %d, saquery path %v\n%s", strings.Join(args, " "), r.Code, path, r.Stdout)
					}
					unresolved++
					continue
				}
				asked++
				if doc.SA.Path != path || !doc.SA.Agrees || doc.SA.Unknown {
					t.Errorf("ibkey %s: SA path %v (saquery: %v), agrees %v, unknown %v: %s", strings.Join(args, " "), doc.SA.Path, path, doc.SA.Agrees, doc.SA.Unknown, doc.SA.Reason)
				}
				if (r.Code == 0) != path || (r.Code != 0 && r.Code != 1) {
					t.Errorf("ibkey %s: exit %d, saquery path %v\n%s", strings.Join(args, " "), r.Code, path, r.Stdout)
				}
			}
		}
	}
	if asked == 0 || unresolved == 0 {
		t.Fatalf("%d pairs asked, %d not resolved: the test needs both", asked, unresolved)
	}
	// A refused pair says why, with the SM's own log line: HcaC and HcaD are both
	// limited members of p2.
	args := append([]string{"can-talk", "lid=4,pkey=0x0002", "lid=5,pkey=0x0002", "--sa", "--sm-log", d.Log}, attach...)
	r := runIbkey(t, args...)
	if r.Code != 1 || !strings.Contains(r.Stdout, "SM: the Subnet Manager refuses a path in partition 0x0002 too") ||
		!strings.Contains(r.Stdout, "both ends are limited members of partition 0x0002") ||
		!strings.Contains(r.Stdout, "SM log: ") || !strings.Contains(r.Stdout, "ERR 1F1A: Ports 0x0002c90300000221 (HcaC port 1) and 0x0002c90300000231 (HcaD port 1) do not share specified PKey 0x0002") {
		t.Errorf("ibkey %s: exit %d\n%s%s", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
	}
}

// TestLabCanTalkSASilent: a requester that shares no partition with an end gets no
// path and OpenSM logs nothing; can-talk says the refusal is about the requester and
// exits 4 (the verdict from the tables stands, the SM did not confirm it).
func TestLabCanTalkSASilent(t *testing.T) {
	lab.Require(t)
	if testing.Short() {
		t.Skip("lab: -short")
	}
	l := lab.StartPartconf(t)
	// Default limited for everyone but the SM: HcaB asks about HcaC and HcaD (both in
	// p2), but shares no partition with a full member with either.
	conf := "Default=0x7fff : ALL=limited, SELF=full;\np2=0x0002 : 0x0002c90300000221=full, 0x0002c90300000231;\n"
	d := l.StartOpenSMDaemon(t, conf)
	if out, err := l.ToolAt("HcaB", "saquery", "PR", "--slid", "4", "--dlid", "5", "--pkey", "0x0002"); err != nil || strings.TrimSpace(out) != "" {
		t.Fatalf("saquery from HcaB: %q %v (want no path)", out, err)
	}
	from := d.LogSize()
	args := []string{"can-talk", "lid=4,pkey=0x0002", "lid=5,pkey=0x0002", "--sa", "--sm-log", d.Log, "--ibsim=" + l.SockName, "--sim-node", "HcaB"}
	r := runIbkey(t, args...)
	if r.Code != 4 || !strings.Contains(r.Stdout, "shares no partition (with a full member) with") || !strings.Contains(r.Stdout, "ask from a port that does") {
		t.Errorf("ibkey %s: exit %d\n%s%s", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
	}
	time.Sleep(100 * time.Millisecond)
	if b, _ := os.ReadFile(d.Log); strings.Contains(string(b[from:]), "ERR 1F1") {
		t.Errorf("OpenSM logged a refusal: %s", b[from:])
	}
}
