package cantalk

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/lab"
)

// saQoSConf: every port but the SM's is a limited member of the default partition;
// HcaC is a full member, HcaD a limited one, of p2 and p3.
const saQoSConf = `Default=0x7fff : ALL=limited, SELF=full;
p2=0x0002 : 0x0002c90300000221=full, 0x0002c90300000231;
p3=0x0003 : 0x0002c90300000221=full, 0x0002c90300000231;
`

// saQoSPolicy: paths from HcaD get QoS level QD, which allows P_Key 0x0002 only
// (OpenSM's qos-policy.conf syntax, doc/QoS_management_in_OpenSM.txt).
const saQoSPolicy = `port-groups
  port-group
    name: D
    port-guid: 0x0002c90300000231
  end-port-group
end-port-groups
qos-levels
  qos-level
    name: DEFAULT
    sl: 0
  end-qos-level
  qos-level
    name: QD
    sl: 1
    pkey: 0x0002
  end-qos-level
end-qos-levels
qos-match-rules
  qos-match-rule
    source: D
    qos-level-name: QD
  end-qos-match-rule
end-qos-match-rules
`

// TestLabCanTalkSAQoS (wave 19): OpenSM refuses a path for its QoS policy after the
// partitions' rule passed (osm_sa_path_record.c pr_rcv_get_path_parms, ERR 1F1D: the
// level does not list the P_Key asked). can-talk said the SM's view of the tables was
// not what the ports hold, with or without the log line that names the QoS level; and,
// asked from HcaD about a path from HcaD, that HcaD shares no partition with itself
// (OpenSM counts a port as sharing one with itself, osm_pkey.c osm_physp_share_pkey).
// Now, with --sm-log, it names the QoS level, and without it, it names the causes it
// cannot tell apart; the tables' yes is UNKNOWN (exit 4) either way.
func TestLabCanTalkSAQoS(t *testing.T) {
	lab.Require(t)
	if testing.Short() {
		t.Skip("lab: -short")
	}
	l := lab.StartPartconf(t)
	policy := filepath.Join(t.TempDir(), "qos-policy.conf")
	if err := os.WriteFile(policy, []byte(saQoSPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	d := l.StartOpenSMDaemon(t, saQoSConf, "qos TRUE", "qos_policy_file "+policy)
	// The reference: p2 has a path from HcaD, p3 none (the QoS level), and OpenSM says why.
	for k, want := range map[string]bool{"0x0002": true, "0x0003": false} {
		out, err := l.ToolAt("HcaD", "saquery", "PR", "--slid", "5", "--dlid", "4", "--pkey", k)
		if err != nil || strings.Contains(out, "PathRecord dump") != want {
			t.Fatalf("saquery PR 5 to 4 with P_Key %s from HcaD: %q %v (want a path: %v)", k, out, err, want)
		}
	}
	if _, err := d.WaitLog(`ERR 1F1D: QoS level "QD" doesn't define specified PKey 0x0003`, 0, 10e9); err != nil {
		t.Fatal(err)
	}
	attach := []string{"--ibsim=" + l.SockName, "--sim-node", "HcaD"}
	ends := []string{"can-talk", "lid=5,pkey=0x0003", "lid=4,pkey=0x8003", "--sa", "-o", "json"}
	for _, c := range []struct {
		name string
		log  bool
		want []string
	}{
		{"without the log", false, []string{"or it refuses for a broken route or its QoS policy, which OpenSM logs (--sm-log quotes the line)"}},
		{"with the log", true, []string{`for its QoS policy, not for the partition: its log says QoS level "QD" does not allow P_Key 0x0003 between these ports`}},
	} {
		args := append([]string{}, ends...)
		if c.log {
			args = append(args, "--sm-log", d.Log)
		}
		r := runIbkey(t, append(args, attach...)...)
		var doc saDoc
		if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
			t.Fatalf("%s: exit %d: %v\n%s%s", c.name, r.Code, err, r.Stdout, r.Stderr)
		}
		if r.Code != 4 || doc.Verdict != "unknown" || doc.SA.Path || !doc.SA.Unknown {
			t.Errorf("%s: exit %d, verdict %s, SA %+v: want UNKNOWN (exit 4)", c.name, r.Code, doc.Verdict, doc.SA)
		}
		for _, w := range c.want {
			if !strings.Contains(doc.SA.Reason, w) {
				t.Errorf("%s: sa reason %q lacks %q", c.name, doc.SA.Reason, w)
			}
		}
		for _, bad := range []string{"shares no partition", "lid=5 and lid=5"} {
			if strings.Contains(doc.SA.Reason, bad) {
				t.Errorf("%s: sa reason %q says %q: OpenSM counts the asking port as sharing a partition with itself", c.name, doc.SA.Reason, bad)
			}
		}
		if c.log && (strings.Contains(doc.SA.Reason, "its view of the tables") || doc.SA.Agrees != nil || !strings.Contains(doc.SA.LogLine, "ERR 1F1D")) {
			t.Errorf("%s: sa %+v: want the QoS level named, not compared", c.name, doc.SA)
		}
	}
	// The path OpenSM gives (p2) agrees.
	r := runIbkey(t, append([]string{"can-talk", "lid=5,pkey=0x0002", "lid=4,pkey=0x8002", "--sa", "-o", "json"}, attach...)...)
	var doc saDoc
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || r.Code != 0 || !doc.SA.Path || doc.SA.Agrees == nil || !*doc.SA.Agrees {
		t.Errorf("p2: exit %d, %v, SA %+v", r.Code, err, doc.SA)
	}
}

// TestLabCanTalkSAQoSSL (wave 19): the QoS level of paths from HcaD gives them SL 1,
// which every SL-to-VL table maps to VL15 (qos_*_sl2vl in opensm.conf); OpenSM refuses
// such a path without a line at its default log level (osm_sa_path_record.c
// pr_rcv_get_path_parms: "All the SLs lead to VL15", debug). can-talk --sa --sm-log,
// finding no line, names that cause beside a stale view; it said only the stale view.
func TestLabCanTalkSAQoSSL(t *testing.T) {
	lab.Require(t)
	if testing.Short() {
		t.Skip("lab: -short")
	}
	l := lab.StartPartconf(t)
	policy := filepath.Join(t.TempDir(), "qos-policy.conf")
	if err := os.WriteFile(policy, []byte(strings.Replace(saQoSPolicy, "    pkey: 0x0002\n", "", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	sl2vl := "0,15,0,0,0,0,0,0,0,0,0,0,0,0,0,0"
	d := l.StartOpenSMDaemon(t, saQoSConf, "qos TRUE", "qos_policy_file "+policy, "qos_ca_sl2vl "+sl2vl, "qos_swe_sl2vl "+sl2vl, "qos_sw0_sl2vl "+sl2vl)
	// The reference: no path from HcaD (SL 1), one from HcaC (SL 0), whoever asks.
	for _, c := range []struct {
		slid, dlid string
		want       bool
	}{{"5", "4", false}, {"4", "5", true}} {
		out, err := l.ToolAt("HcaD", "saquery", "PR", "--slid", c.slid, "--dlid", c.dlid, "--pkey", "0x0003")
		if err != nil || strings.Contains(out, "PathRecord dump") != c.want {
			t.Fatalf("saquery PR %s to %s: %q %v (want a path: %v)", c.slid, c.dlid, out, err, c.want)
		}
	}
	from := d.LogSize()
	r := runIbkey(t, "can-talk", "lid=5,pkey=0x0003", "lid=4,pkey=0x8003", "--sa", "--sm-log", d.Log, "-o", "json", "--ibsim="+l.SockName, "--sim-node", "HcaD")
	var doc saDoc
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatalf("exit %d: %v\n%s%s", r.Code, err, r.Stdout, r.Stderr)
	}
	if r.Code != 4 || doc.Verdict != "unknown" || doc.SA.Path || !doc.SA.Unknown || doc.SA.LogLine != "" ||
		!strings.Contains(doc.SA.Reason, "or its QoS policy gives the path an SL that its SL-to-VL tables drop: it logged no reason") {
		t.Errorf("exit %d, verdict %s, SA %+v", r.Code, doc.Verdict, doc.SA)
	}
	if log := d.LogText()[from:]; strings.Contains(log, "ERR 1F") {
		t.Errorf("OpenSM logged the refusal: %s", log)
	}
}
