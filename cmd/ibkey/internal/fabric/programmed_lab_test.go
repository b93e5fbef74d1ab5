package fabric

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/lab"
)

// TestLabProgrammedFabricHasNoErrors (issue 24 item 5): fabric check on a fabric OpenSM
// has just programmed reports no error, in the two cases where its switch ports do not
// mirror the CA ports they face.
//
// What OpenSM 3.3.23 did: with part_enforce off (-Z off) it does not write the switch
// ports facing CAs at all (and turns their enforcement off on a real switch; ibsim
// reports it off anyway), so they keep the default table while the CAs get their
// partitions. With enforcement on, after a CA port left enough partitions to need one
// 32-entry block fewer, the switch port facing it kept the old keys in the block after
// (smpquery): pkey_mgr_update_peer_port rewrites only the blocks the CA's keys fill.
// Neither drops a packet: a switch port that does not enforce passes every partition,
// and a key the CA lacks is dropped by the CA itself. Both are warnings now (they were
// errors: exit 1 on a fabric the SM had just programmed).
func TestLabProgrammedFabricHasNoErrors(t *testing.T) {
	const base = "Default=0x7fff : ALL=full ;\nstorage=0x0001 : 0x100001=full, 0x100004 ;\n"
	t.Run("part_enforce off", func(t *testing.T) {
		l := startFabricLab(t, "small.net")
		if err := l.RunOpenSMArgs(base, "-Z", "off"); err != nil {
			t.Fatal(err)
		}
		// Switch1[2] faces HcaB, which got 0x0001; the switch port did not.
		smp, err := lab.ParsePKeys(l.tool(t, "smpquery", "pkeys", "2", "2"))
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range smp.Entries {
			if k&0x7fff == 1 {
				t.Fatalf("OpenSM -Z off wrote 0x0001 to Switch1[2] (%v): revisit this test", smp.Entries[:4])
			}
		}
		d := l.checkJSON(t, 0)
		if d.Errors != 0 || !d.has(fabric.RuleHCAKeyNotOnSwitch, "HcaB", 1, "0x0001") || !d.has(fabric.RuleEnforcementOff, "Switch1", 2, "") {
			t.Errorf("%d errors, want none, and warnings %s and %s for HcaB[1]/Switch1[2]: %v", d.Errors, fabric.RuleHCAKeyNotOnSwitch, fabric.RuleEnforcementOff, d.rules())
		}
	})
	t.Run("stale switch block", func(t *testing.T) {
		l := startFabricLab(t, "small.net")
		var many strings.Builder
		many.WriteString(base)
		for i := 0; i < 40; i++ { // HcaB[1] holds 42 keys: two blocks
			fmt.Fprintf(&many, "p%d=0x%04x : 0x100004=full ;\n", i, 0x100+i)
		}
		if err := l.RunOpenSM(many.String(), false); err != nil {
			t.Fatal(err)
		}
		if err := l.RunOpenSM(base, false); err != nil { // back to 2 keys: one block
			t.Fatal(err)
		}
		smp, err := lab.ParsePKeys(l.tool(t, "smpquery", "pkeys", "2", "2"))
		if err != nil {
			t.Fatal(err)
		}
		if smp.Entries[32] == 0 {
			t.Fatalf("Switch1[2]'s second block was cleared (%v): revisit this test", smp.Entries[32:36])
		}
		d := l.checkJSON(t, 0)
		if d.Errors != 0 || !d.has(fabric.RuleSwitchKeyNotOnHCA, "Switch1", 2, fmt.Sprintf("0x%04x", 0x100+30)) {
			t.Errorf("%d errors, want none, and the stale keys as %s on Switch1[2]: %v", d.Errors, fabric.RuleSwitchKeyNotOnHCA, d.rules())
		}
	})
}

// TestLabEditedFileNamesWhatOpenSMChanges (issue 24 item 5): partitions.conf edited, not
// yet applied. fabric check --partitions NEW names, as errors, exactly the ports whose
// tables OpenSM then changes when it applies NEW (as swept before and after), with
// part_enforce on and off. With part_enforce off OpenSM leaves the switch ports facing
// CAs as they are: the comparison (which assumes part_enforce on without --opensm-conf)
// still names the ones whose table differs, but as warnings, since their enforcement is
// off and their table decides nothing.
func TestLabEditedFileNamesWhatOpenSMChanges(t *testing.T) {
	const old = "Default=0x7fff : ALL=full ;\nstorage=0x0001 : 0x100001=full, 0x100004, 0x10000a ;\ncompute=0x0002, defmember=full : 0x100004, 0x100007 ;\n"
	// storage loses HcaD[1] and gains HcaC; compute: HcaB limited; a new partition on HcaD[2].
	const edited = "Default=0x7fff : ALL=full ;\nstorage=0x0001 : 0x100001=full, 0x100004, 0x100007 ;\ncompute=0x0002, defmember=full : 0x100004=limited, 0x100007 ;\nnew=0x0003 : 0x10000b=full, 0x100001 ;\n"
	for _, enforce := range []bool{true, false} {
		t.Run(fmt.Sprintf("part_enforce %v", map[bool]string{true: "both", false: "off"}[enforce]), func(t *testing.T) {
			l := startFabricLab(t, "small.net")
			var args []string
			if !enforce {
				args = []string{"-Z", "off"}
			}
			if err := l.RunOpenSMArgs(old, args...); err != nil {
				t.Fatal(err)
			}
			before, _ := l.discoverFile(t)
			conf := writeTemp(t, "partitions.conf", edited)
			d := l.checkJSON(t, 1, "--partitions", conf, "--ignore", "enforcement-off")
			named, warned := map[string]bool{}, map[string]bool{}
			for _, f := range d.Findings {
				if !strings.HasPrefix(f.Rule, "partitions-") {
					continue
				}
				for i, p := range f.Ports {
					if i > 0 && !strings.HasPrefix(p.Node, "Switch") {
						continue // the CA port a switch port's finding compares it with
					}
					key := fmt.Sprintf("%s[%d]", p.Node, p.Port)
					if f.Severity == "error" {
						named[key] = true
					} else {
						warned[key] = true
					}
				}
			}
			if err := l.RunOpenSMArgs(edited, args...); err != nil {
				t.Fatal(err)
			}
			after, _ := l.discoverFile(t)
			changed := map[string]bool{}
			for _, n := range after.Nodes {
				for _, p := range n.Ports {
					was := before.Node(n.GUID).Port(p.Num)
					if p.PKeys != nil && was.PKeys != nil && fmtKeys(p.PKeys) != fmtKeys(was.PKeys) {
						changed[fmt.Sprintf("%s[%d]", n.Description, p.Num)] = true
					}
				}
			}
			// ibsim reports every switch port's enforcement off, also when OpenSM
			// (part_enforce both) writes the table: there the switch ports it changes
			// are named as warnings. With part_enforce off the warned ones are those
			// it leaves alone.
			all := map[string]bool{}
			for k := range named {
				all[k] = true
			}
			for k := range warned {
				if !strings.HasPrefix(k, "Switch") {
					t.Errorf("%s warned: only switch ports, whose enforcement is off, should be", k)
				}
				if enforce {
					all[k] = true
				} else if changed[k] {
					t.Errorf("%s warned, and OpenSM -Z off changed it", k)
				}
			}
			if sortedSet(all) != sortedSet(changed) {
				t.Errorf("named %v (errors) and %v (warnings), changed by OpenSM %v", sortedSet(named), sortedSet(warned), sortedSet(changed))
			}
			if len(changed) < 4 {
				t.Errorf("only %v changed: the edit should touch more ports", sortedSet(changed))
			}
			if !enforce && len(warned) == 0 {
				t.Errorf("part_enforce off: no switch port warned; the comparison assumes part_enforce on")
			}
		})
	}
}

// TestLabEmptyPartitionConfigFile: an opensm.conf whose partition_config_file is
// empty names no file OpenSM finds (stat("") fails), so it programs only its own
// Default=0x7fff, ipoib : ALL=full (osm_prtn_make_partitions, prtn_make_default).
// fabric check --opensm-conf compares with that: the tables a real partitions.conf
// gave are errors, and once OpenSM runs with the empty path there is none.
func TestLabEmptyPartitionConfigFile(t *testing.T) {
	l := startFabricLab(t, "small.net")
	const conf = "Default=0x7fff : ALL=full ;\nstorage=0x0001 : 0x100001=full, 0x100004, 0x10000a ;\n"
	if err := l.RunOpenSM(conf, false); err != nil {
		t.Fatal(err)
	}
	osmConf := writeTemp(t, "opensm.conf", "# the path left empty\npartition_config_file \n")
	d := l.checkJSON(t, 1, "--opensm-conf", osmConf, "--ignore", "enforcement-off")
	if d.Partitions == nil || *d.Partitions != "" || d.Errors == 0 {
		t.Fatalf("before: partitions_file %v, %d errors, want \"\" and the storage keys as errors: %v", d.Partitions, d.Errors, d.rules())
	}
	// OpenSM given the empty path itself (-P "" after the file's -P).
	if err := l.RunOpenSMArgs(conf, "-P", ""); err != nil {
		t.Fatal(err)
	}
	f, _ := l.discoverFile(t)
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			keys := slices.DeleteFunc(slices.Clone(p.PKeys), func(k check.PKey) bool { return k.Partition() == 0 })
			if n.IsEndPort(p) && len(keys) > 0 && fmtKeys(keys) != "0xffff" { // none: a port without a link
				t.Errorf("%s[%d] holds %s after OpenSM with an empty partition_config_file; want 0xffff alone", n.Description, p.Num, fmtKeys(keys))
			}
		}
	}
	d = l.checkJSON(t, 0, "--opensm-conf", osmConf, "--ignore", "enforcement-off")
	if d.Errors+d.Warnings != 0 {
		t.Errorf("after: %d errors, %d warnings: %v", d.Errors, d.Warnings, d.rules())
	}
	r := l.run(t, "fabric", "check", "--opensm-conf", osmConf, "--ignore", "enforcement-off")
	if r.Code != 0 || !strings.Contains(r.Stdout, "against OpenSM's own Default=0x7fff, ipoib : ALL=full (partition_config_file empty)") {
		t.Errorf("exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}
