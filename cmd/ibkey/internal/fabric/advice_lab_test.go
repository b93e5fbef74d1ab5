package fabric

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/lab"
	"github.com/ibkey/ibkey/internal/partconf"
)

// The advice of fabric check followed literally on the running OpenSM 3.3.23.

// bounce unlinks and relinks node[port] through ibsim's console (a link reset: the
// port goes Down, then comes back in INIT, and the switch sends trap 128) and waits for
// the heavy sweep OpenSM runs on each trap, even with periodic sweeps off (-s 0).
func bounce(t *testing.T, l *fabricLab, osm *lab.OpenSMDaemon, node string, port int) {
	t.Helper()
	for _, cmd := range []string{"Unlink", "ReLink"} {
		from := osm.LogSize()
		l.MustConsole(fmt.Sprintf("%s %q[%d]", cmd, node, port))
		if _, err := osm.WaitLog("SUBNET UP", from, 30*time.Second); err != nil {
			t.Fatalf("%s %s[%d]: %v", cmd, node, port, err)
		}
	}
}

// TestLabAdviceLinkReset: a table set behind the SM's back (a CA port's, then the
// switch port facing it). fabric check says to restart OpenSM or reset the port's link,
// as kill -HUP does not make it rewrite the table (--sa: nor read it into its view).
// What OpenSM 3.3.23 did: after kill -HUP the table stayed as set, and the SA's view
// (P_KeyTableRecord) without the key; after a link bounce (ibsim Unlink + ReLink of the CA
// port, trap 128 from the switch, a heavy sweep) it rewrote both ends of the link, and
// the next fabric check found nothing.
func TestLabAdviceLinkReset(t *testing.T) {
	l := startFabricLab(t, "small.net")
	osm := l.StartOpenSMDaemon(t, cliLabConf)
	parts := writeTemp(t, "partitions.conf", cliLabConf)
	hcaB := check.PortID{Node: 0x100003, Port: 1}
	f, _ := l.discoverFile(t)
	lid := f.Port(hcaB).LID
	set := func(a mad.Address, port uint8, keys ...uint16) {
		t.Helper()
		var blk [mad.PKeysPerBlock]uint16
		copy(blk[:], keys)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := l.SetPKeyBlock(ctx, l.from, a, port, 0, blk); err != nil {
			t.Fatal(err)
		}
	}
	hup := func() {
		t.Helper()
		if err := osm.Resweep(60 * time.Second); err != nil {
			t.Fatal(err)
		}
	}
	clean := func(when string) {
		t.Helper()
		if d := l.checkJSON(t, 0, "--sa", "--partitions", parts, "--ignore", "enforcement-off"); len(d.Findings) != 0 {
			t.Errorf("%s: findings %v, want none", when, d.rules())
		}
	}
	clean("programmed")

	// HcaB[1] given 0x8005 behind the SM's back.
	set(mad.LIDAddress(lid), 0, 0xffff, 0x0001, 0x8002, 0x8005)
	d := l.checkJSON(t, 1, "--sa", "--partitions", parts, "--ignore", "enforcement-off")
	if !d.has(partconf.RuleExtraKey, "HcaB", 1, "0x0005") || !d.has(RuleSATableDiffers, "HcaB", 1, "") {
		t.Fatalf("after the Set: %v, want %s and %s on HcaB[1]", d.rules(), partconf.RuleExtraKey, RuleSATableDiffers)
	}
	for _, f := range d.Findings {
		if f.Rule == partconf.RuleExtraKey && !strings.Contains(f.Action, "a table changed behind its back only a restart of OpenSM, or a reset of the port, makes it rewrite") {
			t.Errorf("%s: action %q", f.Rule, f.Action)
		}
	}
	hup()
	if d := l.checkJSON(t, 1, "--sa", "--partitions", parts, "--ignore", "enforcement-off"); !d.has(partconf.RuleExtraKey, "HcaB", 1, "0x0005") || !d.has(RuleSATableDiffers, "HcaB", 1, "") {
		t.Errorf("after kill -HUP: %v; OpenSM left the table as set before, as the advice says", d.rules())
	}
	bounce(t, l, osm, "HcaB", 1)
	clean("after HcaB[1]'s link was reset")

	// Switch1[2], facing HcaB[1], set behind the SM's back: the audit's actionResweep.
	set(mad.DirectedRoute(1), 2, 0xffff, 0x8007)
	d = l.checkJSON(t, 1, "--sa", "--partitions", parts, "--ignore", "enforcement-off")
	if !d.has(fabric.RuleSwitchKeyNotOnHCA, "Switch1", 2, "0x0007") || !d.has(fabric.RuleHCAKeyNotOnSwitch, "HcaB", 1, "0x0001") || !d.has(RuleSATableDiffers, "Switch1", 2, "") {
		t.Fatalf("after the switch Set: %v, want %s, %s and %s", d.rules(), fabric.RuleSwitchKeyNotOnHCA, fabric.RuleHCAKeyNotOnSwitch, RuleSATableDiffers)
	}
	hup()
	if d := l.checkJSON(t, 1, "--sa", "--partitions", parts, "--ignore", "enforcement-off"); !d.has(fabric.RuleSwitchKeyNotOnHCA, "Switch1", 2, "0x0007") || !d.has(RuleSATableDiffers, "Switch1", 2, "") {
		t.Errorf("after kill -HUP: %v; OpenSM left the switch port as set before", d.rules())
	}
	bounce(t, l, osm, "HcaB", 1)
	clean("after the link Switch1[2]-HcaB[1] was reset")
}

// TestLabAdviceEnforcementOn: with OpenSM's part_enforce off, the switch ports facing
// CAs keep the default table (hca-key-not-on-switch, a warning). Its action says a
// Subnet Manager that turns enforcement on copies the CA port's keys there, and
// enforcement-off's says to set part_enforce and kill -HUP OpenSM (it said re-sweep,
// and a light sweep does not re-read opensm.conf). What OpenSM 3.3.23 did:
// part_enforce is re-read from opensm.conf on kill -HUP (osm_subnet.c opt_tbl marks
// it can_update; osm_subn_rescan_conf_files), and that sweep wrote HcaB[1]'s keys to
// Switch1[2].
func TestLabAdviceEnforcementOn(t *testing.T) {
	l := startFabricLab(t, "small.net")
	osm := l.StartOpenSMDaemon(t, cliLabConf, "part_enforce off")
	d := l.checkJSON(t, 0)
	if !d.has(fabric.RuleHCAKeyNotOnSwitch, "HcaB", 1, "0x0001") || !d.has(fabric.RuleEnforcementOff, "Switch1", 2, "") {
		t.Fatalf("part_enforce off: %v, want %s on HcaB[1] and %s", d.rules(), fabric.RuleHCAKeyNotOnSwitch, fabric.RuleEnforcementOff)
	}
	for _, f := range d.Findings {
		if f.Rule == fabric.RuleEnforcementOff && !strings.Contains(f.Action, "then kill -HUP it") {
			t.Errorf("%s: action %q", f.Rule, f.Action)
		}
	}
	osmConf := filepath.Join(filepath.Dir(osm.Conf), "opensm.conf")
	if err := os.WriteFile(osmConf, []byte("force_log_flush TRUE\npart_enforce both\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := osm.Resweep(60 * time.Second); err != nil {
		t.Fatal(err)
	}
	if d := l.checkJSON(t, 0, "--ignore", "enforcement-off"); len(d.Findings) != 0 {
		t.Errorf("part_enforce both and kill -HUP: %v, want none (Switch1[2] holds HcaB[1]'s keys)", d.rules())
	}
}

// TestLabAdviceGroupKept: the IPoIB broadcast group of p1 differs from an edited file
// after kill -HUP (ipoib-group-differs). The action said the group is re-created when
// every member has left it; what OpenSM 3.3.23 did: the group, which nobody in the lab
// ever joined, kept its old Q_Key and MTU through kill -HUP (a group partitions.conf
// declares is "well known": osm_prtn.c track_mgrp_w_partition, and
// osm_mcmr_rcv_find_or_create_new_mgrp returns an existing group as it is), and a
// restarted OpenSM created it with the file's values.
func TestLabAdviceGroupKept(t *testing.T) {
	lab.Require(t)
	if testing.Short() {
		t.Skip("lab: -short")
	}
	l := lab.StartPartconf(t)
	osm := l.StartOpenSMDaemon(t, saCheckConf)
	edited := strings.Replace(saCheckConf, "mtu=4, rate=7, Q_Key=0x00001111", "mtu=5, rate=7, Q_Key=0x00002222", 1)
	conf := writeTemp(t, "partitions.conf", edited)
	check := func() (saCheckDoc, int) {
		t.Helper()
		r := runIbkey(t, false, nil, "fabric", "check", "--ibsim="+l.SockName, "--sim-node", "HcaB", "--sa", "--partitions", conf,
			"--ignore", "enforcement-off", "-o", "json")
		var d saCheckDoc
		if err := json.Unmarshal([]byte(r.Stdout), &d); err != nil {
			t.Fatalf("fabric check --sa: exit %d: %v\n%s%s", r.Code, err, r.Stdout, r.Stderr)
		}
		return d, r.Code
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, _, err := osm.Reprogram(ctx, edited); err != nil {
		t.Fatal(err)
	}
	d, code := check()
	if code != 1 || d.ruleCount()[RuleIPoIBGroupDiffers] != 1 {
		t.Fatalf("after kill -HUP with the edited file: exit %d, %v, want one %s", code, d.ruleCount(), RuleIPoIBGroupDiffers)
	}
	for _, f := range d.Findings {
		if f.Rule == RuleIPoIBGroupDiffers && (!strings.Contains(f.Action, "restart OpenSM") || strings.Contains(f.Action, "every member has left")) {
			t.Errorf("%s: action %q", f.Rule, f.Action)
		}
	}
	osm.Stop()
	l.StartOpenSMDaemon(t, edited)
	if d, code := check(); code != 0 || len(d.Findings) != 0 {
		t.Errorf("after OpenSM restarted: exit %d, %v, want none", code, d.ruleCount())
	}
}

// TestLabAdviceSAViewNotFile: sa-view-not-file (the SM's view of a table is not what
// the file gives the port) followed on the running OpenSM 3.3.23. A file edited since
// OpenSM read it: kill -HUP, and the finding is gone. A file
// OpenSM rejected: kill -HUP changes nothing until the file is fixed, so the action
// has to say to fix it first (it said to read the log, then kill -HUP).
func TestLabAdviceSAViewNotFile(t *testing.T) {
	lab.Require(t)
	if testing.Short() {
		t.Skip("lab: -short")
	}
	l := lab.StartPartconf(t)
	osm := l.StartOpenSMDaemon(t, saCheckConf)
	partial := false // HcaB outside p1 reads no group: not checked
	run := func(conf string) (saCheckDoc, int) {
		t.Helper()
		file := writeTemp(t, "partitions.conf", conf)
		args := []string{"fabric", "check", "--ibsim=" + l.SockName, "--sim-node", "HcaB", "--sa", "--partitions", file,
			"--ignore", "enforcement-off", "-o", "json"}
		run := runIbkey
		if partial {
			run = func(t *testing.T, _ bool, _ map[string]string, args ...string) cmdtest.Result {
				return runPartial(t, args...)
			}
		}
		r := run(t, false, nil, args...)
		var d saCheckDoc
		if err := json.Unmarshal([]byte(r.Stdout), &d); err != nil {
			t.Fatalf("fabric check --sa: exit %d: %v\n%s%s", r.Code, err, r.Stdout, r.Stderr)
		}
		return d, r.Code
	}
	hup := func(conf string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if _, _, err := osm.Reprogram(ctx, conf); err != nil {
			t.Fatal(err)
		}
	}
	edited := saCheckConf + "p3=0x0003 : 0x0002c90300000221=full;\n"
	d, code := run(edited)
	if code != 1 || d.ruleCount()[RuleSAViewNotFile] != 1 {
		t.Fatalf("a file edited since OpenSM read it: exit %d, %v, want one %s", code, d.ruleCount(), RuleSAViewNotFile)
	}
	for _, f := range d.Findings {
		if f.Rule == RuleSAViewNotFile && !strings.Contains(f.Action, "fix the file") {
			t.Errorf("%s: action %q", f.Rule, f.Action)
		}
	}
	hup(edited)
	if d, code := run(edited); code != 0 || len(d.Findings) != 0 {
		t.Errorf("after kill -HUP: exit %d, %v, want none", code, d.ruleCount())
	}

	// OpenSM reads a file it rejects (a member that is no GUID): its fallback is the
	// SM's view; kill -HUP alone keeps it, the fixed file and kill -HUP settle it.
	hup(edited + "bad=0x0004 : nonsense;\n")
	partial = true
	for _, when := range []string{"OpenSM rejected its file", "kill -HUP with the file still rejected"} {
		if d, code := run(edited); code != 1 || d.ruleCount()[RuleSAViewNotFile] == 0 {
			t.Errorf("%s: exit %d, %v, want %s", when, code, d.ruleCount(), RuleSAViewNotFile)
		}
		if err := osm.Resweep(time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	hup(edited)
	partial = false
	if d, code := run(edited); code != 0 || len(d.Findings) != 0 {
		t.Errorf("the file fixed, kill -HUP: exit %d, %v, want none", code, d.ruleCount())
	}
}
