package cantalk

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/jsonschematest"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/lab"
	"github.com/ibkey/ibkey/internal/query"
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
		Agrees  *bool  `json:"agrees"` // null: not compared
		Unknown bool   `json:"unknown"`
		Reason  string `json:"reason"`
		LogLine string `json:"log_line"`
	} `json:"sa"`
}

type saDir struct {
	From    string `json:"from"`
	To      string `json:"to"`
	OK      bool   `json:"ok"`
	Unknown bool   `json:"unknown"`
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
				if doc.SA.Path != path || doc.SA.Agrees == nil || !*doc.SA.Agrees || doc.SA.Unknown {
					t.Errorf("ibkey %s: SA path %v (saquery: %v), agrees %v, unknown %v: %s", strings.Join(args, " "), doc.SA.Path, path, agreesText(doc.SA.Agrees), doc.SA.Unknown, doc.SA.Reason)
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
// path and OpenSM logs nothing; can-talk says the refusal is about the requester, and
// the tables' yes, which the SM did not confirm, is UNKNOWN (exit 4).
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
	if r.Code != 4 || !strings.HasPrefix(r.Stdout, "UNKNOWN: the tables read say lid=4 and lid=5 can talk; the Subnet Manager does not confirm it\n") ||
		!strings.Contains(r.Stdout, "shares no partition (with a full member) with") || !strings.Contains(r.Stdout, "ask from a port that does") {
		t.Errorf("ibkey %s: exit %d\n%s%s", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
	}
	// In the JSON the SM's answer is not compared (agrees null): it said nothing of
	// the ends (it was agrees false, a disagreement).
	r = runIbkey(t, append(args, "-o", "json")...)
	var yes saDoc
	if err := json.Unmarshal([]byte(r.Stdout), &yes); err != nil || r.Code != 4 || yes.SA.Agrees != nil || !yes.SA.Unknown {
		t.Errorf("ibkey %s -o json: exit %d, %v, SA %+v (want agrees null)", strings.Join(args, " "), r.Code, err, yes.SA)
	}
	// The tables' no (HcaC and HcaD both limited members of the default partition):
	// OpenSM refuses HcaB before it looks at the ends, so its refusal is no answer
	// about them (it said "refuses a path too: both ends are limited members", agrees
	// true). The no stays definite (exit 1); the SM's answer is not compared.
	args = []string{"can-talk", "lid=4,pkey=0x7fff", "lid=5,pkey=0x7fff", "--sa", "-o", "json", "--ibsim=" + l.SockName, "--sim-node", "HcaB"}
	r = runIbkey(t, args...)
	var doc saDoc
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || r.Code != 1 || doc.Verdict != "no" || doc.SA.Path || doc.SA.Agrees != nil || !doc.SA.Unknown ||
		!strings.Contains(doc.SA.Reason, `the port that asked, "HcaB"[1], shares no partition (with a full member) with lid=4`) || strings.Contains(doc.SA.Reason, " too ") {
		t.Errorf("ibkey %s: exit %d, %v, SA %+v", strings.Join(args, " "), r.Code, err, doc.SA)
	}
	time.Sleep(100 * time.Millisecond)
	if b, _ := os.ReadFile(d.Log); strings.Contains(string(b[from:]), "ERR 1F1") {
		t.Errorf("OpenSM logged a refusal: %s", b[from:])
	}
}

// TestLabCanTalkSADefiniteNo: what the SM did not confirm undoes a yes (exit 4), never
// a definite no (exit 1, the exit-code table: "also in a partial read: what was found
// is definite"). HcaB asks, and shares no partition with a full member with the
// others, so OpenSM refuses it silently; every pair and key is asked with RC QPs and
// with UD QPs whose Q_Keys match and differ. Then, with OpenSM stopped, the SA cannot
// be asked at all, about two ports that are both limited members.
func TestLabCanTalkSADefiniteNo(t *testing.T) {
	lab.Require(t)
	if testing.Short() {
		t.Skip("lab: -short")
	}
	l := lab.StartPartconf(t)
	conf := "Default=0x7fff : ALL=limited, SELF=full;\np2=0x0002 : 0x0002c90300000221=full, 0x0002c90300000231;\n"
	d := l.StartOpenSMDaemon(t, conf)
	attach := []string{"--ibsim=" + l.SockName, "--sim-node", "HcaB"}
	type doc struct {
		saDoc
		OneWay     *bool    `json:"one_way"`
		NotChecked []string `json:"not_checked"`
		Warnings   []string `json:"warnings"`
		AToB       saDir    `json:"a_to_b"`
		BToA       saDir    `json:"b_to_a"`
		Incomplete []struct {
			Kind    string `json:"kind"`
			Message string `json:"message"`
		} `json:"incomplete"`
	}
	// unasked: the SM cannot be asked (stopped): its answer is not read, so a definite
	// no says so in incomplete (a partial read); one it gave that disagrees was read.
	ask := func(args []string, unasked bool) (doc, bool) {
		t.Helper()
		args = append(append(args, "--sa", "-o", "json"), attach...)
		run := cmdtest.Run
		if unasked {
			run = cmdtest.RunPartial
		}
		r := run(t, root, false, nil, args...)
		var j doc
		if err := json.Unmarshal([]byte(r.Stdout), &j); err != nil {
			t.Fatalf("ibkey %s: exit %d: %v\n%s%s", strings.Join(args, " "), r.Code, err, r.Stdout, r.Stderr)
		}
		jsonschematest.Validate(t, "can-talk", []byte(r.Stdout))
		if j.Unresolved != nil {
			return j, false
		}
		incomplete := false
		for _, in := range j.Incomplete {
			incomplete = incomplete || in.Kind == "not-checked" && in.Message == j.SA.Reason
		}
		undone := false
		for _, nc := range j.NotChecked {
			undone = undone || nc == j.SA.Reason
		}
		warned := false
		for _, w := range j.Warnings {
			warned = warned || w == "not checked: "+j.SA.Reason
		}
		said := strings.Contains(r.Stderr, "not checked: "+j.SA.Reason)
		switch {
		case !j.SA.Unknown:
			want := 1
			switch j.Verdict {
			case "yes":
				want = 0
			case "unknown", "different-subnets":
				want = 4
			}
			if r.Code != want || warned || incomplete {
				t.Errorf("ibkey %s: verdict %s, exit %d (want %d)\n%s%s", strings.Join(args, " "), j.Verdict, r.Code, want, r.Stdout, r.Stderr)
			}
		case j.Verdict == "yes":
			t.Errorf("ibkey %s: a yes the SM did not confirm: exit %d (want unknown, exit 4)\n%s%s", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
		case undone: // the tables' yes
			if j.Verdict != "unknown" || r.Code != 4 || !incomplete || warned || strings.Count(r.Stderr, "not checked: "+j.SA.Reason) != 1 {
				t.Errorf("ibkey %s: a yes the SM did not confirm: verdict %s, exit %d (want unknown, 4), incomplete %v, warning %v\n%s%s", strings.Join(args, " "), j.Verdict, r.Code, incomplete, warned, r.Stdout, r.Stderr)
			}
			j.Verdict = "undone yes"
		case j.Verdict == "no" || j.Verdict == "one-way" || j.Verdict == "not-active":
			if r.Code != 1 || incomplete != unasked || !warned || !said {
				t.Errorf("ibkey %s: a definite %s the SM did not confirm: exit %d (want 1), incomplete %v, warning %v, stderr %v\n%s%s", strings.Join(args, " "), j.Verdict, r.Code, incomplete, warned, said, r.Stdout, r.Stderr)
			}
			if j.Verdict == "one-way" {
				// The working direction is only what the tables read: not known in
				// the JSON, and the headline says the SM does not confirm it.
				ok, bad := j.AToB, j.BToA
				if bad.Unknown {
					ok, bad = bad, ok
				}
				if ok.OK || !ok.Unknown || bad.OK || bad.Unknown {
					t.Errorf("ibkey %s: one-way the SM did not confirm: a_to_b %+v, b_to_a %+v (want the working direction unknown, not ok)", strings.Join(args, " "), j.AToB, j.BToA)
				}
				text := runIbkey(t, append(args[:len(args)-len(attach)-2:len(args)-len(attach)-2], attach...)...)
				want := fmt.Sprintf("ONE-WAY: %s → %s does not work; the tables read say %s → %s works, the Subnet Manager does not confirm it\n", bad.From, bad.To, ok.From, ok.To)
				if text.Code != 1 || !strings.HasPrefix(text.Stdout, want) {
					t.Errorf("ibkey %s: exit %d, want 1 and headline %q\n%s%s", strings.Join(args, " "), text.Code, want, text.Stdout, text.Stderr)
				}
			}
		default:
			if r.Code != 4 {
				t.Errorf("ibkey %s: verdict %s, exit %d (want 4)", strings.Join(args, " "), j.Verdict, r.Code)
			}
		}
		return j, true
	}
	// The last pair is one-way: A sends wr_qkey 0x12, B accepts only 0x11.
	qps := [][2]string{{"", ""}, {",qp=ud,qkey=0x11", ",qp=ud,qkey=0x11"}, {",qp=ud,qkey=0x11", ",qp=ud,qkey=0x12"},
		{",qp=ud,qkey=0x11,wr_qkey=0x12", ",qp=ud,qkey=0x11"}}
	seen := map[string]int{}
	for _, a := range []int{1, 3, 4, 5} {
		for _, b := range []int{1, 3, 4, 5} {
			for _, k := range []string{"0x0002", "0x7fff", "0xffff"} {
				for _, q := range qps {
					if a == b {
						continue
					}
					j, ok := ask([]string{"can-talk", fmt.Sprintf("lid=%d,pkey=%s%s", a, k, q[0]), fmt.Sprintf("lid=%d,pkey=%s%s", b, k, q[1])}, false)
					if ok && j.SA.Unknown {
						seen[j.Verdict]++
					}
				}
			}
		}
	}
	t.Logf("verdicts the SM did not confirm: %v", seen)
	if seen["undone yes"] == 0 || seen["no"] == 0 || seen["one-way"] == 0 {
		t.Fatalf("verdicts the SM did not confirm: %v: the test needs a yes, a no and a one-way", seen)
	}
	// No SM: HcaC and HcaD are both limited members of the default partition.
	d.Stop()
	// Nothing was compared: agrees is null, never the false of before.
	if j, _ := ask([]string{"can-talk", "lid=4,pkey=0x7fff", "lid=5,pkey=0x7fff"}, true); j.Verdict != "no" || !j.SA.Unknown || j.SA.Agrees != nil || !strings.Contains(j.SA.Reason, "could not be asked") ||
		!strings.Contains(j.SA.Reason, "OpenSM answers nothing while it is not the master SM") {
		t.Errorf("with OpenSM stopped: verdict %s, SA %+v", j.Verdict, j.SA)
	}
	// And a one-way pair (HcaC full, HcaD limited in p2; HcaC sends Q_Key 0x12): the
	// SM cannot confirm the working direction.
	if j, _ := ask([]string{"can-talk", "lid=4,pkey=0x0002,qp=ud,qkey=0x11,wr_qkey=0x12", "lid=5,pkey=0x0002,qp=ud,qkey=0x11"}, true); j.Verdict != "one-way" || j.OneWay != nil || !j.SA.Unknown || !strings.Contains(j.SA.Reason, "could not be asked") {
		t.Errorf("with OpenSM stopped: verdict %s, SA %+v", j.Verdict, j.SA)
	}
}

// TestLabCanTalkSAFabricFile (wave 12): with --fabric-file the ends' tables are a
// saved sweep's, and the SA is asked now by that sweep's LIDs. Where they disagree
// the reason names the file and when it was swept, and says it may be older than the
// fabric the SM answers about (it said "the tables read" and blamed only the SM's
// view). The file here gives HcaC (LID 4) partition 0x0003, which saLabConf does not.
func TestLabCanTalkSAFabricFile(t *testing.T) {
	lab.Require(t)
	if testing.Short() {
		t.Skip("lab: -short")
	}
	l := lab.StartPartconf(t)
	l.StartOpenSMDaemon(t, saLabConf)
	file, swept := savedSweep(t, l, "older.json", func(swept *fabric.Fabric) {
		var hcaC *fabric.Port
		for _, n := range swept.Nodes {
			for _, p := range n.Ports {
				if n.Description == "HcaC" && p.LID == 4 && p.PKeys != nil {
					hcaC = p
				}
			}
		}
		if hcaC == nil {
			t.Fatal("no HcaC with LID 4 and its table in the sweep")
		}
		i := slices.Index(hcaC.PKeys, 0)
		if i < 0 {
			t.Fatal("HcaC's table has no empty entry")
		}
		hcaC.PKeys[i] = 0x0003
	})
	r := runIbkey(t, "can-talk", "--fabric-file", file, "lid=3,pkey=0x8003", "lid=4,pkey=0x0003", "--sa", "-o", "json", "--ibsim="+l.SockName, "--sim-node", "HcaA")
	var doc saDoc
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatalf("exit %d: %v\n%s%s", r.Code, err, r.Stdout, r.Stderr)
	}
	want := []string{"the Subnet Manager refuses a path in partition 0x0003", "from LID 3 to LID 4 (the LIDs in " + file + ")",
		"that the tables in " + file + " (swept " + swept.SweptAt.UTC().Format(time.RFC3339) + ") allow",
		file + " may be older than the fabric the Subnet Manager answers about now (sweep again), or its view"}
	for _, w := range want {
		if !strings.Contains(doc.SA.Reason, w) {
			t.Errorf("sa reason %q lacks %q", doc.SA.Reason, w)
		}
	}
	if r.Code != 4 || doc.Verdict != "unknown" || doc.SA.Path || !doc.SA.Unknown {
		t.Errorf("exit %d, verdict %s, SA %+v: want UNKNOWN (exit 4), the SM refusing the file's yes", r.Code, doc.Verdict, doc.SA)
	}
}

// agreesText prints sa.agrees, null included.
func agreesText(a *bool) string {
	if a == nil {
		return "null"
	}
	return strconv.FormatBool(*a)
}

// TestLabCanTalkSARequesters (wave 19): every HCA but the SM's asks about every pair
// with keys the ends hold as full, limited or not at all, under a file where every
// port but the SM's is a limited member of the default partition. The SM's answer in
// can-talk is saquery's from the same node, and an answer OpenSM gave without looking
// at the ends (the asker shares no partition with one) is never compared.
func TestLabCanTalkSARequesters(t *testing.T) {
	lab.Require(t)
	if testing.Short() {
		t.Skip("lab: -short")
	}
	l := lab.StartPartconf(t)
	l.StartOpenSMDaemon(t, "Default=0x7fff : ALL=limited, SELF=full;\np1=0x8001 : 0x0002c90300000211=full, 0x0002c90300000221;\np3=0x0003 : 0x0002c90300000221=full, 0x0002c90300000231;\n")
	nodes := map[int]string{1: "HcaA", 3: "HcaB", 4: "HcaC", 5: "HcaD"}
	compared, notCompared := 0, 0
	for _, req := range []int{3, 4, 5} {
		for _, a := range []int{1, 3, 4, 5} {
			for _, b := range []int{1, 3, 4, 5} {
				for _, k := range []string{"0x8001", "0x0003", "0x7fff"} {
					if a == b {
						continue
					}
					out, err := l.ToolAt(nodes[req], "saquery", "PR", "--slid", strconv.Itoa(a), "--dlid", strconv.Itoa(b), "--pkey", k)
					if err != nil {
						t.Fatal(err)
					}
					path := strings.Contains(out, "PathRecord dump")
					args := []string{"can-talk", fmt.Sprintf("lid=%d,pkey=%s", a, k), fmt.Sprintf("lid=%d,pkey=%s", b, k), "--sa", "-o", "json", "--ibsim=" + l.SockName, "--sim-node", nodes[req]}
					r := runIbkey(t, args...)
					var doc saDoc
					if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
						t.Fatalf("ibkey %s: exit %d: %v\n%s%s", strings.Join(args, " "), r.Code, err, r.Stdout, r.Stderr)
					}
					if doc.Unresolved != nil {
						if path {
							t.Errorf("ibkey %s: a port lacks the key, but saquery finds a path", strings.Join(args, " "))
						}
						continue
					}
					asker := strings.Contains(doc.SA.Reason, "the port that asked")
					if doc.SA.Path != path || asker && (doc.SA.Agrees != nil || !doc.SA.Unknown) || !asker && doc.SA.Agrees == nil {
						t.Errorf("ibkey %s: SA path %v (saquery: %v), agrees %s, unknown %v: %s", strings.Join(args, " "), doc.SA.Path, path, agreesText(doc.SA.Agrees), doc.SA.Unknown, doc.SA.Reason)
					}
					if asker {
						notCompared++
					} else {
						compared++
					}
				}
			}
		}
	}
	if compared == 0 || notCompared == 0 {
		t.Fatalf("%d answers compared, %d refusals of the asker: the test needs both", compared, notCompared)
	}
}

// savedSweep sweeps l's fabric from HcaA, lets edit change the result (nil: as swept)
// and saves it as a fabric file named name: its path and the sweep.
func savedSweep(t *testing.T, l *lab.Lab, name string, edit func(*fabric.Fabric)) (string, *fabric.Fabric) {
	t.Helper()
	tr, err := mad.DialIbsim(context.Background(), mad.IbsimOptions{SockName: l.SockName, Node: "HcaA"})
	if err != nil {
		t.Fatal(err)
	}
	swept, err := query.Sweep(context.Background(), tr, query.SweepOptions{})
	tr.Close()
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(swept)
	}
	var b strings.Builder
	if err := fabric.EncodeFabric(&b, swept); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return file, swept
}
