package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"regexp"
	stdslices "slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
	"github.com/ibkey/ibkey/internal/lab"
)

// The lab tests of more than one command: pkeys and devices failing over MADs, here;
// can-talk on a fabric discovered by fabric discover, in fabriccmd_lab_test.go. (pkeys
// and devices compared with smpquery: their packages.) They skip when ibsim, OpenSM or
// infiniband-diags are missing, and fail instead under CI (lab.Require). `make
// fabric-test` runs them with CI=true.

// fastFail makes an unanswered MAD fail fast in the lab's error tests (comparisons keep
// the default timeout: a busy machine may answer late, and a reply costs no waiting).
var fastFail = []string{"--mad-timeout", "200ms", "--mad-retries", "1"}

// fastFailGiveUp is how an unanswered MAD fails under fastFail: the transport's
// timeout (mad.TimeoutError, as query.NoAnswerError words it) after 1 + --mad-retries
// attempts, each reported dropped by the simulator (ibsim answers a MAD it cannot
// deliver with status 110: every case here) or unanswered for --mad-timeout.
var fastFailGiveUp = regexp.MustCompile(`: (dropped or no route \(2 attempt\(s\)\)|no reply after 2 attempt\(s\) of 200ms): `)

// TestLabFabricErrors: what cannot be answered fails with exit 3 and one clear line,
// never a hang: a MAD nobody answers is given up as the transport's timeout after
// the attempts --mad-retries allows (named in the line), not retried further; and
// every run gives its ibsim slot back. (How long that takes is for benchmarks.)
func TestLabFabricErrors(t *testing.T) {
	l := cmdtest.StartLab(t, "small.net", newRootCmd)
	targets := l.Targets(t)
	runAll := func(t *testing.T, stderr []string, args ...string) {
		t.Helper()
		r := l.Run(t, append(append([]string{}, fastFail...), args...)...)
		// An address that did not answer: the transport gave up after the attempts
		// fastFail allows, with the timeout's own error.
		if strings.HasPrefix(stderr[0], "no answer from ") && !fastFailGiveUp.MatchString(r.Stderr) {
			t.Errorf("ibkey %s: stderr %q; want the MAD timeout after 2 attempts (%s)", strings.Join(args, " "), r.Stderr, fastFailGiveUp)
		}
		for _, want := range stderr {
			if r.Code != 3 || !strings.Contains(r.Stderr, want) || r.Stdout != "" {
				t.Errorf("ibkey %s: exit %d, stdout %q, stderr %q; want exit 3 and %q", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr, want)
			}
		}
		if strings.Count(strings.TrimSpace(r.Stderr), "\n") > 0 {
			t.Errorf("ibkey %s: error spans several lines: %q", strings.Join(args, " "), r.Stderr)
		}
	}
	run := func(t *testing.T, stderr string, args ...string) {
		t.Helper()
		runAll(t, []string{stderr}, args...)
	}
	var hcaB *cmdtest.Target
	for _, tg := range targets {
		if tg.Node == "HcaB" {
			hcaB = tg
		}
	}

	t.Run("lid-before-sm", func(t *testing.T) {
		// Before OpenSM, HcaA's port is INIT with no LID and no SM LID (its PortInfo,
		// read when the reply did not come): the hint says so, not that an SM ran.
		runAll(t, []string{"no answer from lid 1 via", "no subnet manager has brought the local port up (INIT, LID 0, SM LID 0): until one has, only directed routes (--dr) reach other nodes"},
			"pkeys", "--lid", "1")
	})
	t.Run("dr-dead-end", func(t *testing.T) {
		// Out of HcaA's unconnected port 2.
		run(t, "no answer from DR path 0,2", "devices", "--dr", "0,2")
	})
	t.Run("no-such-port", func(t *testing.T) {
		run(t, "no port 9 on the switch at DR path 0,1 (ports: 0-8)", "pkeys", "--dr", "0,1", "--port", "9")
		run(t, "no port 0 on the CA at DR path 0 (ports: 1-2)", "pkeys", "--dr", "0", "--port", "0")
	})
	if err := l.RunOpenSM(cmdtest.FabricConf(t), false); err != nil {
		t.Fatal(err)
	}
	l.ResolveLIDs(t, targets)
	t.Run("unassigned-lid", func(t *testing.T) {
		// OpenSM has run: HcaA's port is ACTIVE with its SM LID, so the LID is not
		// assigned or not routed, and the hint says where the assigned ones are.
		runAll(t, []string{"no answer from lid 999", "a subnet manager has run (SM LID ", "the LID is not assigned or not routed, or its node does not answer ('ibkey fabric discover' lists the assigned LIDs)"},
			"pkeys", "--lid", "999")
	})
	t.Run("dropped", func(t *testing.T) {
		l.MustConsole(fmt.Sprintf(`Error "HcaB"[%d] 100`, hcaB.Port))
		defer l.MustConsole(fmt.Sprintf(`Error "HcaB"[%d] 0`, hcaB.Port))
		run(t, fmt.Sprintf("no answer from lid %d", hcaB.LID), "pkeys", "--lid", strconv.Itoa(hcaB.LID))
		run(t, fmt.Sprintf("no answer from DR path %s", hcaB.Path), "devices", "--dr", hcaB.Path)
		// The attempts follow --mad-retries (the last one given wins): one, none retried.
		r := l.Run(t, append(append([]string{}, fastFail...), "--mad-retries", "0", "devices", "--dr", hcaB.Path)...)
		if want := fmt.Sprintf("no answer from DR path %s via ", hcaB.Path); r.Code != 3 || !strings.Contains(r.Stderr, want) ||
			!regexp.MustCompile(`: (dropped or no route \(1 attempt\(s\)\)|no reply after 1 attempt\(s\) of 200ms): `).MatchString(r.Stderr) {
			t.Errorf("--mad-retries 0: exit %d, stderr %q; want 3 and the MAD timeout after 1 attempt", r.Code, r.Stderr)
		}
	})
	t.Run("partial-list", func(t *testing.T) {
		// What answered is printed; the LID that did not is named, not read: exit 4
		// (before: exit 3, "1 of 2 addresses failed").
		r := l.Run(t, append(append([]string{}, fastFail...), "pkeys", "-o", "json", "--lid", fmt.Sprintf("%d,999", hcaB.LID))...)
		var doc struct {
			Ports []json.RawMessage `json:"ports"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || len(doc.Ports) != 1 {
			t.Errorf("stdout %q: %v", r.Stdout, err)
		}
		if r.Code != 4 || !strings.Contains(r.Stderr, "warning: not read: lid 999: no answer via ") || strings.Count(r.Stderr, "999") != 2 { // the label's "lid 4 .. lid 999", and the line's
			t.Errorf("exit %d, stderr %q", r.Code, r.Stderr)
		}
	})
	t.Run("port-missing-on-some", func(t *testing.T) {
		// --port 5 over every LID: the switches have it, the two-port CAs do not. The
		// switches' ports are shown; each CA's LID is named, with its ports, on stderr
		// and in incomplete, exit 4 (before: exit 3 after the output).
		var lids []string
		cas := 0
		for _, tg := range targets {
			if tg.LID != 0 && (tg.Type != lab.Switch || tg.Port == 0) && !stdslices.Contains(lids, strconv.Itoa(tg.LID)) {
				lids = append(lids, strconv.Itoa(tg.LID))
				if tg.Type != lab.Switch {
					cas++
				}
			}
		}
		r := l.Run(t, append(append([]string{}, fastFail...), "pkeys", "-o", "json", "--port", "5", "--lid", strings.Join(lids, ","))...)
		var doc struct {
			Ports      []struct{ Device string }
			Incomplete []struct{ Kind, Message string }
		}
		if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || r.Code != 4 || len(doc.Ports) != 2 || len(doc.Incomplete) != cas {
			t.Fatalf("exit %d (want 4), %v: %d ports (want the 2 switches'), incomplete %+v (want %d CAs)\n%s", r.Code, err, len(doc.Ports), doc.Incomplete, cas, r.Stderr)
		}
		for _, in := range doc.Incomplete {
			if in.Kind != "unread-node" || !strings.HasSuffix(in.Message, " port 5: the CA has no such port (ports: 1-2)") {
				t.Errorf("incomplete %+v", in)
			}
		}
	})
	t.Run("range-with-holes", func(t *testing.T) {
		labLIDRangeWithHoles(t, l, targets, hcaB)
	})
	t.Run("range-none-answered", func(t *testing.T) {
		// No address answered: nothing to show, and the fabric or the range is wrong
		// (exit 3, each named).
		r := l.Run(t, append(append([]string{}, fastFail...), "pkeys", "--lid", "900-902")...)
		if r.Code != 3 || r.Stdout != "" || !strings.Contains(r.Stderr, "3 of 3 addresses failed: no answer from lid 900") {
			t.Errorf("exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
		}
	})
	t.Run("sim-node-unknown", func(t *testing.T) {
		// A --sim-node the simulator does not have is bad input (exit 2) naming the
		// node ibsim attaches to by default; ibsim refuses it as it refuses a client
		// when its slots are full (exit 3), so ibkey tells them apart.
		r := cmdtest.Run(t, newRootCmd, false, nil, "--ibsim="+l.SockName, "--sim-node", "NoSuchHca", "pkeys", "--dr", "0")
		if want := `ibkey: invalid --sim-node "NoSuchHca": ibsim "` + l.SockName + `" has no such node (accepted: a node's name or description in its topology, such as "HcaA" where it attaches by default; `; r.Code != 2 || !strings.HasPrefix(r.Stderr, want) || strings.Count(r.Stderr, "\n") != 1 {
			t.Errorf("exit %d, stderr %q; want 2 and %q...", r.Code, r.Stderr, want)
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
		run(t, "no simulator listening on socket", "pkeys", "--lid", strconv.Itoa(hcaB.LID))
	})
}

// labLIDRangeWithHoles: pkeys and devices --lid over a range where some LIDs answer and
// some do not (LIDs past the fabric's, a node that stopped answering) show the ports
// that answered, name each LID not read on stderr and in the JSON's incomplete (kind
// unread-node, as a partial sweep's nodes; the documents validated against schemas/ by
// cmdtest.Run), and exit 4: not read is not known, never absent (smpquery fails alike
// on a LID nobody holds and a node that does not answer). pkeys --find of a key no port
// read holds is not "not found" (exit 1): an unread LID may hold it.
func labLIDRangeWithHoles(t *testing.T, l *cmdtest.Lab, targets []*cmdtest.Target, dropped *cmdtest.Target) {
	top := 0
	for _, tg := range targets {
		top = max(top, tg.LID)
	}
	l.MustConsole(fmt.Sprintf(`Error "%s"[%d] 100`, dropped.Node, dropped.Port))
	defer l.MustConsole(fmt.Sprintf(`Error "%s"[%d] 0`, dropped.Node, dropped.Port))
	lids := fmt.Sprintf("1-%d", top+2)
	unread := []int{dropped.LID, top + 1, top + 2} // in order: each at most the top LID
	var answered []string
	for _, tg := range targets {
		if tg.LID != 0 && tg.Node != dropped.Node {
			answered = append(answered, tg.Node)
		}
	}
	run := func(args ...string) cmdtest.Result {
		t.Helper()
		r := l.Run(t, append(append([]string{}, fastFail...), args...)...)
		// One line names them all (a run of LIDs as a range), the reason said once.
		named := map[int]bool{}
		if _, rest, ok := strings.Cut(r.Stderr, "warning: not read: "); ok && strings.Count(r.Stderr, "not read: ") == 1 {
			list, _, _ := strings.Cut(rest, ": no answer via ")
			for _, item := range strings.Split(list, ", ") {
				item, _, _ = strings.Cut(strings.TrimPrefix(item, "lid "), " ")
				lo, hi, _ := strings.Cut(item, "-")
				a, _ := strconv.Atoi(lo)
				b, _ := strconv.Atoi(cmp.Or(hi, lo))
				for l := a; l > 0 && l <= b; l++ {
					named[l] = true
				}
			}
		}
		for _, lid := range unread {
			if !named[lid] {
				t.Errorf("ibkey %s: lid %d not named on the one line of stderr that says what was not read:\n%s", strings.Join(args, " "), lid, r.Stderr)
			}
		}
		if len(named) != len(unread) {
			t.Errorf("ibkey %s: stderr names lids %v not read, want %v:\n%s", strings.Join(args, " "), named, unread, r.Stderr)
		}
		if r.Code != 4 {
			t.Errorf("ibkey %s: exit %d, want 4\n%s", strings.Join(args, " "), r.Code, r.Stderr)
		}
		return r
	}
	checkDoc := func(args []string, r cmdtest.Result) {
		t.Helper()
		var doc struct {
			Ports []struct {
				Device string `json:"device"`
			} `json:"ports"`
			Incomplete []struct{ Kind, Message string } `json:"incomplete"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
			t.Fatalf("ibkey %s: %v\n%s", strings.Join(args, " "), err, r.Stdout)
		}
		read := map[string]bool{}
		for _, p := range doc.Ports {
			read[p.Device] = true
		}
		for _, n := range answered {
			if !read[n] {
				t.Errorf("ibkey %s: %s answered and is not shown", strings.Join(args, " "), n)
			}
		}
		if read[dropped.Node] {
			t.Errorf("ibkey %s: %s shown, yet it does not answer", strings.Join(args, " "), dropped.Node)
		}
		var named []string
		for _, in := range doc.Incomplete {
			if in.Kind == "unread-node" {
				named = append(named, in.Message)
			}
		}
		if len(named) != len(unread) {
			t.Errorf("ibkey %s: incomplete names %q, want lids %v", strings.Join(args, " "), named, unread)
		}
		for i, lid := range unread {
			if i < len(named) && !strings.HasPrefix(named[i], fmt.Sprintf("not read: lid %d", lid)) {
				t.Errorf("ibkey %s: incomplete[%d] = %q, want lid %d", strings.Join(args, " "), i, named[i], lid)
			}
		}
	}
	r := run("pkeys", "--lid", lids)
	for _, n := range answered {
		if !strings.Contains(r.Stdout, n+"/") {
			t.Errorf("pkeys --lid %s: %s not shown:\n%s", lids, n, r.Stdout)
		}
	}
	for _, args := range [][]string{{"pkeys", "-o", "json", "--lid", lids}, {"devices", "-o", "json", "--lid", lids}} {
		checkDoc(args, run(args...))
	}
	// No port read holds 0x0042: it may be on an unread LID.
	args := []string{"pkeys", "-o", "json", "--lid", lids, "--find", "0x0042"}
	r = run(args...)
	var found struct {
		Found      bool              `json:"found"`
		Incomplete []json.RawMessage `json:"incomplete"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &found); err != nil || found.Found || len(found.Incomplete) != len(unread) {
		t.Errorf("pkeys --find: %v %+v\n%s", err, found, r.Stdout)
	}
}
