package smlog

import (
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/lab"
)

// TestLabSMKeyMismatch runs a second OpenSM, at HcaB, with another sm_key: an SM
// that asks the other for its SMInfo logs ERR 2F18, naming it by the directed route
// it asked by, and the second enters MASTER state too (it ignores the first). sm
// log's rule names the route as one and says both may be master.
func TestLabSMKeyMismatch(t *testing.T) {
	l := startLab(t)
	d := l.StartOpenSMDaemon(t, labConf, "sm_key 0x0000000000000001", "sm_priority 15")
	d2, err := l.OpenSMDaemonAt(t, "HcaB", "Entering MASTER state", labConf, "sm_key 0x0000000000000002", "sm_priority 0")
	if err != nil {
		t.Fatalf("the second SM did not become master too: %v", err)
	}
	// The first SM swept before the second came: a heavy sweep finds it (its
	// SUBNET UP may not come while the two fight over the subnet). Which of the
	// two logs ERR 2F18 first, or at all, depends on who asks whom when: at least
	// one must.
	_ = d.Resweep(5 * time.Second)
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(d.LogText()+d2.LogText(), "ERR 2F18") && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	var n int
	for _, c := range []struct {
		d     *lab.OpenSMDaemon
		key   uint64
		route string
	}{{d2, 1, "0,1,1"}, {d, 2, "0,1,2"}} {
		for _, e := range readAll(t, c.d.LogText()) {
			if e.Kind != KindSMKeyMismatch {
				continue
			}
			n++
			rule := (&Explainer{R: NewResolver(nil, NewNames())}).Explain(e).Rule
			if e.Key != c.key || e.Detail != c.route || !strings.Contains(rule, "the SM at directed route "+c.route+" (from this SM's port)") ||
				!strings.Contains(rule, "both may run as master") {
				t.Errorf("%+v\n%s", e, rule)
			}
		}
	}
	if n == 0 {
		t.Errorf("no sm-key-mismatch event in either log:\n%s\n%s", tail(d.LogText(), 1500), tail(d2.LogText(), 1500))
	}
}

// TestLabGetTimeout makes ibsim drop every PortInfo Get to HcaB's port 1 (its
// console's Error command, limited to one attribute): OpenSM's next heavy sweep logs
// ERR 3113 and ERR 3120 for it, and sm log reads ERR 3120 as a get-timeout that names
// the attribute and says the line names no port.
func TestLabGetTimeout(t *testing.T) {
	l := startLab(t)
	d := l.StartOpenSMDaemon(t, labConf)
	if out, err := l.Console(`Error "HcaB"[1] 100 0x15`); err != nil {
		t.Fatalf("ibsim Error: %v (%s)", err, out)
	}
	_ = d.Resweep(10 * time.Second) // the sweep may not come up with a port silent
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(d.LogText(), "ERR 3120") && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	var n int
	for _, e := range readAll(t, d.LogText()) {
		if e.Kind != KindGetTimeout {
			continue
		}
		n++
		ex := (&Explainer{R: NewResolver(nil, NewNames())}).Explain(e)
		if e.Code != "3120" || e.Detail != "PortInfo (attribute 0x0015)" || !strings.Contains(ex.Rule, "the line does not name the port") ||
			!strings.Contains(ex.Fix, "bad-mkey events") {
			t.Errorf("%+v\n%s\n%s", e, ex.Rule, ex.Fix)
		}
	}
	if n == 0 {
		t.Errorf("no get-timeout event in the log:\n%s", tail(d.LogText(), 3000))
	}
}
