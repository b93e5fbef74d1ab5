package smlog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// qosPolicy: paths from HcaB get QoS level QB, which allows P_Key 0x0001 only; paths
// from HcaC get QC, which allows 0x0003 only (HcaC is not in p3); a third rule names
// P_Key 0x0009, which no partition has (OpenSM's qos-policy.conf syntax,
// doc/QoS_management_in_OpenSM.txt).
const qosPolicy = `port-groups
  port-group
    name: B
    port-guid: 0x0002c90300000211
  end-port-group
  port-group
    name: C
    port-guid: 0x0002c90300000221
  end-port-group
end-port-groups
qos-levels
  qos-level
    name: DEFAULT
    sl: 0
  end-qos-level
  qos-level
    name: QB
    sl: 1
    pkey: 0x0001
  end-qos-level
  qos-level
    name: QC
    sl: 2
    pkey: 0x0003
  end-qos-level
end-qos-levels
qos-match-rules
  qos-match-rule
    source: B
    qos-level-name: QB
  end-qos-match-rule
  qos-match-rule
    source: C
    qos-level-name: QC
  end-qos-match-rule
  qos-match-rule
    pkey: 0x0009
    qos-level-name: QB
  end-qos-match-rule
end-qos-match-rules
`

// writeQoSPolicy writes qosPolicy to a file of the test's for OpenSM's qos_policy_file.
func writeQoSPolicy(t *testing.T) string {
	t.Helper()
	policy := filepath.Join(t.TempDir(), "qos-policy.conf")
	if err := os.WriteFile(policy, []byte(qosPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	return policy
}

// TestLabQoSPathRefusals makes OpenSM refuse paths for its QoS policy's P_Keys (ERR
// 1F1D: a P_Key the level does not list; 1F1E: no P_Key of the level shared) and log
// a match rule of a partition that does not exist (ERR AC14, which ibkey does not
// explain: it must be named, never dropped), and checks what sm log makes of them.
func TestLabQoSPathRefusals(t *testing.T) {
	l := startLab(t)
	policy := writeQoSPolicy(t)
	d := l.StartOpenSMDaemon(t, labConf, "qos TRUE", "qos_policy_file "+policy)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"PR", "--slid", itoa(lidB), "--dlid", itoa(lidD), "--pkey", "0x8003"}, "ERR 1F1D"},
		{[]string{"PR", "--slid", itoa(lidC), "--dlid", itoa(lidD)}, "ERR 1F1E"},
	} {
		from := d.LogSize()
		out, err := l.ToolAt("HcaA", "saquery", c.args...)
		if err != nil || strings.TrimSpace(out) != "" {
			t.Fatalf("saquery %v: %q %v (want no path)\n%s", c.args, out, err, d.LogText())
		}
		if _, err := d.WaitLog(c.want, from, 10*time.Second); err != nil {
			t.Fatalf("%v\n%s", err, tail(d.LogText(), 3000))
		}
	}
	log := d.LogText()
	var evs []*Event
	var unx []*Unexplained
	a := NewAssembler(time.Now(), time.Local, func(e *Event) { evs = append(evs, e) })
	a.Unexplained = func(u *Unexplained) { unx = append(unx, u) }
	for _, line := range strings.Split(strings.TrimSuffix(log, "\n"), "\n") {
		a.Line([]byte(line))
	}
	a.Flush()
	x := &Explainer{R: NewResolver(nil, a.Names)}
	var d1, e1 bool
	for _, e := range evs {
		if e.Kind != KindPathRefused {
			t.Errorf("unexpected %s %s", e.Kind, e.Code)
			continue
		}
		rule := x.Explain(e).Rule
		switch e.Code {
		case "1F1D":
			d1 = true
			if e.QoSLevel != "QB" || e.Key != 0x8003 || e.From.GUID != guidB || e.To.GUID != guidD ||
				!strings.Contains(rule, `the level "QB"`) || !strings.Contains(rule, "P_Key 0x8003 is not among") {
				t.Errorf("1F1D: %+v\n%s", e, rule)
			}
		case "1F1E":
			e1 = true
			if e.QoSLevel != "QC" || e.KeyType != "" || e.From.GUID != guidC || e.To.GUID != guidD || !strings.Contains(rule, `the level "QC" applies to "HcaC" and "HcaD"[1], and they share none of the partitions it lists`) {
				t.Errorf("1F1E: %+v\n%s", e, rule)
			}
		}
	}
	if !d1 || !e1 {
		t.Errorf("1F1D %v, 1F1E %v in\n%s", d1, e1, tail(log, 3000))
	}
	// AC14 is logged at every sweep that loads the policy.
	if len(unx) == 0 {
		t.Fatalf("ERR AC14 not named as not explained")
	}
	for _, u := range unx {
		if u.Code != "AC14" || !strings.Contains(u.Message, "0x0009") {
			t.Errorf("not explained: %+v", u)
		}
	}
}
