package smlog

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/lab"
)

// TestLabQoSPolicyRejected gives the real daemon QoS policy files it cannot use and
// checks what it does and what sm log makes of it. OpenSM reads the policy at every
// heavy sweep (osm_qos.c osm_qos_setup); a file it cannot parse (ERR AC05, then
// AC03), one that fails validation (AC11, then AC04) or one it cannot open (AC01)
// (AC10, AC12, AC13 alike) leaves it without a policy, and the paths the policy's qos-levels refused for
// their P_Keys (ERR 1F1D) are given; a good file read at the next sweep refuses them
// again. The same log holds the unpath and repath notices (traps 68, 69: osm_inform.c
// log_notice, whose format ends in "n" instead of a newline), each glued to the
// record after it, which must still be read.
func TestLabQoSPolicyRejected(t *testing.T) {
	l := startLab(t)
	policy := writeQoSPolicy(t)
	d := l.StartOpenSMDaemon(t, labConf, "qos TRUE", "qos_policy_file "+policy)
	// HcaB to HcaD in p3 (0x8003): the level QB lists 0x0001 only (ERR 1F1D).
	given := func() bool {
		t.Helper()
		out, err := l.ToolAt("HcaA", "saquery", "PR", "--slid", itoa(lidB), "--dlid", itoa(lidD), "--pkey", "0x8003")
		if err != nil {
			t.Fatalf("saquery: %v\n%s", err, out)
		}
		return strings.Contains(out, "PathRecord dump")
	}
	if given() {
		t.Fatalf("the good policy's path was given\n%s", tail(d.LogText(), 2000))
	}
	cases := []struct {
		name, policy string // "" removes the file
		want         string // the error line
	}{
		{"syntax", strings.Replace(qosPolicy, "    sl: 2\n", "    sl: 2\n    bogus-tag: 3\n", 1), "ERR AC05: Syntax error (line 24:6): syntax error"},
		{"validation", strings.Replace(qosPolicy, "qos-level-name: QC", "qos-level-name: QX", 1), "ERR AC11: qos-match-rule num 2: qos-level 'QX' not found"},
		{"no default", strings.Replace(qosPolicy, "name: DEFAULT", "name: DEF", 1), "ERR AC10: Default qos-level (default) not defined."},
		{"source", strings.Replace(qosPolicy, "source: B", "source: X", 1), "ERR AC12: qos-match-rule num 1: source port-group 'X' not found"},
		{"destination", strings.Replace(qosPolicy, "source: C", "source: C\n    destination: Y", 1), "ERR AC13: qos-match-rule num 2: destination port-group 'Y' not found"},
		{"ipoib", strings.Replace(qosPolicy, "qos-match-rules\n", "qos-ulps\n  ipoib, pkey 0x0009 : 3\nend-qos-ulps\nqos-match-rules\n", 1), "ERR AC05: Syntax error (line 28:23): IPoIB partition, pkey 0x0009 - partition doesn't exist"},
		{"missing", "", "ERR AC01: Failed opening QoS policy file " + policy + " - No such file or directory"},
	}
	for _, c := range cases {
		if c.policy == "" {
			if err := os.Remove(policy); err != nil {
				t.Fatal(err)
			}
		} else if err := os.WriteFile(policy, []byte(c.policy), 0o644); err != nil {
			t.Fatal(err)
		}
		from := d.LogSize()
		if err := d.Resweep(60 * time.Second); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(d.LogText()[from:], c.want) {
			t.Fatalf("%s: no %q in\n%s", c.name, c.want, d.LogText()[from:])
		}
		if !given() {
			t.Errorf("%s: without its policy OpenSM still refuses the path its qos-level refused\n%s", c.name, d.LogText()[from:])
		}
	}
	if err := os.WriteFile(policy, []byte(qosPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := d.Resweep(60 * time.Second); err != nil {
		t.Fatal(err)
	}
	from := d.LogSize()
	if given() {
		t.Errorf("the good policy read again: the path is still given")
	}
	if _, err := d.WaitLog("ERR 1F1D", from, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	// Traps 68 and 69 from HcaC, each followed by a refused path (ERR 1F1E: HcaC's
	// level QC lists 0x0003, which HcaC lacks). OpenSM logs the notice whatever the
	// trap's type and producer (osm_trap_rcv.c, osm_inform.c check neither).
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, n := range []uint16{68, 69} {
		from := d.LogSize()
		if err := l.SendTrap(ctx, "HcaC", lidA, lab.Trap{Number: n, Producer: 1, IssuerLID: lidC}); err != nil {
			t.Fatal(err)
		}
		if _, err := d.WaitLog(`Reporting Informational Notice "`, from, 10*time.Second); err != nil {
			t.Fatal(err)
		}
		if out, err := l.ToolAt("HcaA", "saquery", "PR", "--slid", itoa(lidC), "--dlid", itoa(lidD)); err != nil || strings.TrimSpace(out) != "" {
			t.Fatalf("saquery: %q %v", out, err)
		}
		if _, err := d.WaitLog("ERR 1F1E", from, 10*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	log := d.LogText()
	if recording("lab-qos-rejected.log") {
		if err := os.WriteFile(filepath.Join("testdata", "lab-qos-rejected.log"), []byte(log), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	checkQoSRejected(t, log, policy)
}

// checkQoSRejected checks what the assembler reads in the log of
// TestLabQoSPolicyRejected (the lab's, or the one recorded in testdata), whose policy
// file was at policy.
func checkQoSRejected(t *testing.T, log, policy string) {
	t.Helper()
	var evs []*Event
	a := NewAssembler(time.Now(), time.Local, func(e *Event) { evs = append(evs, e) })
	a.Unexplained = func(u *Unexplained) {
		if u.Code != "AC14" { // the good policy's rule of a P_Key no partition has
			t.Errorf("not explained: line %d: %s", u.Line, u.Message)
		}
	}
	lines := strings.Split(strings.TrimSuffix(log, "\n"), "\n")
	for _, line := range lines {
		a.Line([]byte(line))
	}
	a.Flush()
	x := &Explainer{R: NewResolver(nil, a.Names)}
	type want struct{ code, detail, fixAt string }
	wants := []want{
		{"AC05", policy + ": syntax error (line 24, column 6)", policy + ":24"},
		{"AC11", policy + ": qos-match-rule num 2: qos-level 'QX' not found", ""},
		{"AC10", policy + ": the default qos-level (default) is not defined", ""},
		{"AC12", policy + ": qos-match-rule num 1: source port-group 'X' not found", ""},
		{"AC13", policy + ": qos-match-rule num 2: destination port-group 'Y' not found", ""},
		{"AC05", policy + ": IPoIB partition, pkey 0x0009 - partition doesn't exist (line 28, column 23)", policy + ":28"},
		{"AC01", policy + ": cannot be opened (No such file or directory)", ""},
	}
	// The sweep that read the good policy again logged no QoS policy error: each
	// rejection's note names its SUBNET UP, the last of the log (traps 68 and 69 make
	// light sweeps, which log none).
	up := strings.LastIndex(log, "-> SUBNET UP")
	upLine := strings.Count(log[:up], "\n") + 1
	var got []want
	var glued []*Event
	for _, e := range evs {
		switch e.Kind {
		case KindQoSRejected:
			ex := x.Explain(e)
			got = append(got, want{e.Code, e.Detail, ex.FixAt})
			if n := a.SweptSince(e.Kind, e.Line); !strings.Contains(n, "logged no QoS policy error (SUBNET UP at line "+itoa(upLine)+",") ||
				a.SweptSince(KindConfigRejected, e.Line) != "" {
				t.Errorf("%s at line %d: note %q, want SUBNET UP at line %d (and none for partitions.conf)", e.Code, e.Line, n, upLine)
			}
			if !e.Fallback || SeverityOf(e.Kind).String() != "error" || !strings.Contains(ex.Rule, "no longer limit which paths the SA gives in which partition (paths they refused, ERR 1F1D, 1F1E, 451C, 451D, are given)") ||
				!strings.Contains(ex.Fix, "SIGHUP OpenSM") || len(ex.Notes) != 0 || e.Code != "AC01" && len(e.Lines) != 2 {
				t.Errorf("%s at line %d: %+v\n%+v", e.Code, e.Line, e, ex)
			}
		case KindPathRefused:
			if strings.Contains(lines[e.Line-1], `"n`) {
				glued = append(glued, e)
			}
		}
	}
	if len(got) != len(wants) {
		t.Fatalf("qos-policy-rejected events %v, want %v", got, wants)
	}
	for i := range wants {
		if got[i] != wants[i] {
			t.Errorf("event %d: %+v, want %+v", i, got[i], wants[i])
		}
	}
	// The record after each notice shares its line: both 1F1E refusals are read, at
	// that line, and the event's line is the refusal's record alone.
	if len(glued) != 2 {
		t.Fatalf("%d refusals read after a notice, want 2", len(glued))
	}
	for i, e := range glued {
		notice := []string{`"UnPath, Path no longer valid"n`, `"RePath, Path recomputed"n`}[i]
		if e.Code != "1F1E" || !strings.Contains(lines[e.Line-1], notice) || len(e.Lines) != 1 ||
			!strings.HasSuffix(lines[e.Line-1], e.Lines[0]) || strings.Contains(e.Lines[0], "Notice") {
			t.Errorf("after %s: %+v", notice, e)
		}
	}
}

// TestQoSRejectedRecorded reads the log TestLabQoSPolicyRejected recorded.
func TestQoSRejectedRecorded(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "lab-qos-rejected.log"))
	if err != nil {
		t.Fatal(err)
	}
	log := string(b)
	i := strings.Index(log, "Failed opening QoS policy file ")
	if i < 0 {
		t.Fatal("no ERR AC01 in the recorded log")
	}
	policy, _, _ := strings.Cut(log[i+len("Failed opening QoS policy file "):], " - ")
	checkQoSRejected(t, log, policy)
}
