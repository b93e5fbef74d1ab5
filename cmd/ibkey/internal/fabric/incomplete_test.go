package fabric

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
)

// editedFabric writes small.json changed by edit, for --fabric-file.
func editedFabric(t *testing.T, name string, from string, edit func(f *fabric.Fabric)) string {
	t.Helper()
	f, err := cmdutil.ReadFabricFile(from)
	if err != nil {
		t.Fatal(err)
	}
	edit(f)
	var b strings.Builder
	if err := fabric.EncodeFabric(&b, f); err != nil {
		t.Fatal(err)
	}
	return writeTemp(t, name, b.String())
}

// onPort edits the first cabled port of the node described desc.
func onPort(desc string, edit func(p *fabric.Port)) func(f *fabric.Fabric) {
	return func(f *fabric.Fabric) {
		for _, n := range f.Nodes {
			if n.Description != desc {
				continue
			}
			for _, p := range n.Ports {
				if p.Peer != nil {
					edit(p)
					return
				}
			}
		}
		panic("no cabled port on " + desc)
	}
}

// TestFabricJSONIncomplete: fabric pkeys (both modes), fabric check and fabric diff
// say in their JSON what they did not check, as "incomplete" {kind, message} items,
// whenever something was not (the test runner checks the rule on every run, from what
// each case says of its input: partial or not; here each gap gives its kind): a
// partial sweep's gaps (partial-sweep, unread-node, unread-table), what the audit
// could not check, and a --partitions file OpenSM's handling of which cannot be
// predicted (not-checked). A definite error wins the exit (1) and the document still
// names what was not checked beside it (until wave 11 it had no incomplete on exit 1).
func TestFabricJSONIncomplete(t *testing.T) {
	noTables := editedFabric(t, "no-tables.json", smallFabric, func(f *fabric.Fabric) {
		for _, n := range f.Nodes {
			for _, p := range n.Ports {
				p.PKeys, p.PKeysError = nil, ""
			}
		}
	})
	tableFailed := onPort("HcaD", func(p *fabric.Port) { p.PKeys, p.PKeysError = nil, "timed out" })
	partialTable := editedFabric(t, "partial-table.json", smallFabric, tableFailed)
	partialWithErrors := editedFabric(t, "partial-errors.json", enforcingFabric, tableFailed)
	gaps := editedFabric(t, "gaps.json", smallFabric, func(f *fabric.Fabric) {
		f.Incomplete = "--timeout 1s expired"
		f.Unreachable = append(f.Unreachable, fabric.Unreachable{From: check.PortID{Node: f.Nodes[0].GUID, Port: 1}, Path: "0,1,9", Error: "timed out"})
		f.Nodes[0].Errors = append(f.Nodes[0].Errors, "NodeDescription: timed out")
		onPort("HcaB", func(p *fabric.Port) { p.Error = "timed out" })(f)
	})
	// The same stopped sweep of a fabric whose tables read hold definite errors.
	gapsWithErrors := editedFabric(t, "gaps-errors.json", enforcingFabric, func(f *fabric.Fabric) {
		f.Incomplete = "--timeout 1s expired"
		f.Unreachable = append(f.Unreachable, fabric.Unreachable{From: check.PortID{Node: f.Nodes[0].GUID, Port: 1}, Path: "0,1,9", Error: "timed out"})
	})
	// A table marked as one the sweep chose not to read, on a port a link of the sweep
	// reaches (the sweep never writes that): not read, so not checked by any command.
	auditGap := editedFabric(t, "audit-gap.json", smallFabric, onPort("HcaD", func(p *fabric.Port) {
		p.PKeys, p.PKeysError = nil, "not read: skipped"
	}))
	uncertain := writeTemp(t, "uncertain.conf", "Default=0x7fff : ALL=full;\np=0x10 : 0x0002c90300000211=full, mgid=ff12::5;\n")

	for _, tc := range []struct {
		args    []string
		Code    int
		kinds   string // the kinds of incomplete, in order
		text    string // in a message
		partial bool   // the input leaves something unread or unpredictable
	}{
		{[]string{"fabric", "pkeys", "--fabric-file", smallFabric}, 0, "", "", false},
		{[]string{"fabric", "check", "--fabric-file", smallFabric, "--ignore", "enforcement-off"}, 0, "", "", false},
		{[]string{"fabric", "pkeys", "--fabric-file", noTables}, 4, "unread-table", "16 P_Key tables not in the sweep (made with --no-tables)", true},
		{[]string{"fabric", "pkeys", "--fabric-file", noTables, "--key", "0x0002"}, 4, "unread-table", "16 P_Key tables not in the sweep", true},
		{[]string{"fabric", "check", "--fabric-file", noTables}, 4, "unread-table", "16 P_Key tables not in the sweep", true},
		{[]string{"fabric", "pkeys", "--fabric-file", partialTable, "--key", "0x0002"}, 4, "unread-table", "1 P_Key table not read", true},
		{[]string{"fabric", "check", "--fabric-file", partialTable}, 4, "unread-table", "1 P_Key table not read", true},
		{[]string{"fabric", "check", "--fabric-file", partialTable, "--strict"}, 1, "unread-table", "1 P_Key table not read", true},
		{[]string{"fabric", "check", "--fabric-file", partialWithErrors}, 1, "unread-table", "1 P_Key table not read", true},
		// A stopped sweep (a partial-sweep gap) whose tables read hold errors.
		{[]string{"fabric", "check", "--fabric-file", gapsWithErrors}, 1, "partial-sweep partial-sweep", "the sweep stopped early (--timeout 1s expired)", true},
		{[]string{"fabric", "pkeys", "--fabric-file", gapsWithErrors, "--key", "0x0002"}, 4, "partial-sweep partial-sweep", "the sweep stopped early", true},
		{[]string{"fabric", "check", "--fabric-file", gaps}, 4, "partial-sweep partial-sweep unread-node unread-node", "behind ", true},
		{[]string{"fabric", "pkeys", "--fabric-file", gaps}, 4, "partial-sweep partial-sweep unread-node unread-node", "the sweep stopped early (--timeout 1s expired)", true},
		{[]string{"fabric", "check", "--fabric-file", auditGap}, 4, "unread-table", `1 P_Key table not read: "HcaD"[1]: not read: skipped`, true},
		{[]string{"fabric", "pkeys", "--fabric-file", auditGap}, 4, "unread-table", `1 P_Key table not read: "HcaD"[1]: not read: skipped`, true},
		{[]string{"fabric", "check", "--fabric-file", smallFabric, "--partitions", uncertain, "--ignore", "enforcement-off"}, 4, "not-checked", "cannot be predicted", true},
		{[]string{"fabric", "check", "--fabric-file", partialTable, "--partitions", uncertain, "--ignore", "enforcement-off"}, 4, "unread-table not-checked", "cannot be predicted", true},
		// A definite error wins over a file OpenSM's handling of which cannot be
		// predicted, as over a partial sweep (it exited 4); incomplete says the file's.
		{[]string{"fabric", "check", "--fabric-file", enforcingFabric, "--partitions", uncertain, "--ignore", "enforcement-off"}, 1, "not-checked", "cannot be predicted", true},
		{[]string{"fabric", "check", "--fabric-file", partialWithErrors, "--partitions", uncertain, "--ignore", "enforcement-off"}, 1, "unread-table not-checked", "cannot be predicted", true},
		// fabric diff: a partial side, named; with a change (exit 1) or none (4).
		{[]string{"fabric", "diff", smallFabric, partialTable}, 4, "unread-table", partialTable + ": 1 P_Key table not read", true},
		{[]string{"fabric", "diff", enforcingFabric, partialTable}, 1, "unread-table", partialTable + ": 1 P_Key table not read", true},
		{[]string{"fabric", "diff", gapsWithErrors, smallFabric}, 1, "partial-sweep partial-sweep", gapsWithErrors + ": the sweep stopped early", true},
		{[]string{"fabric", "diff", smallFabric, enforcingFabric}, 1, "", "", false},
		// --strict: a table not read (a not-read warning) is no definite failure.
		{[]string{"fabric", "check", "--fabric-file", auditGap, "--strict", "--ignore", "enforcement-off"}, 4, "unread-table", `1 P_Key table not read: "HcaD"[1]: not read: skipped`, true},
	} {
		args := append(tc.args, "-o", "json")
		run := func(t *testing.T, args ...string) cmdtest.Result { return runIbkey(t, false, nil, args...) }
		if tc.partial {
			run = runPartial
		}
		r := run(t, args...)
		var doc struct {
			Incomplete []cmdutil.Incomplete `json:"incomplete"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
			t.Fatalf("ibkey %s: %v\n%s", strings.Join(args, " "), err, r.Stdout)
		}
		var kinds, text []string
		for _, i := range doc.Incomplete {
			kinds = append(kinds, i.Kind)
			text = append(text, i.Message)
		}
		if r.Code != tc.Code || strings.Join(kinds, " ") != tc.kinds || !strings.Contains(strings.Join(text, "\n"), tc.text) {
			t.Errorf("ibkey %s: exit %d, incomplete %s; want exit %d, kinds %q and %q\n%s", strings.Join(args, " "), r.Code, fmt.Sprint(doc.Incomplete), tc.Code, tc.kinds, tc.text, r.Stderr)
		}
	}
}

// TestNotCheckedKindsAreIncompleteKinds: internal/fabric names what the audit could
// not check with the kinds of the JSON vocabulary's incomplete items.
func TestNotCheckedKindsAreIncompleteKinds(t *testing.T) {
	for nc, kind := range map[fabric.NotCheckedKind]string{
		fabric.UnreadTable:     cmdutil.IncompleteUnreadTable,
		fabric.UnreadNode:      cmdutil.IncompleteUnreadNode,
		fabric.PartialSweep:    cmdutil.IncompletePartialSweep,
		fabric.OtherNotChecked: cmdutil.IncompleteNotChecked,
	} {
		if string(nc) != kind {
			t.Errorf("fabric.NotCheckedKind %q, incomplete kind %q", nc, kind)
		}
	}
}

// TestPKeysKeyPartialNotes: fabric pkeys --key on a partial sweep speaks of what was
// read: "no port read holds", never "no port holds" (a table not read may).
func TestPKeysKeyPartialNotes(t *testing.T) {
	noTables := editedFabric(t, "no-tables.json", smallFabric, func(f *fabric.Fabric) {
		for _, n := range f.Nodes {
			for _, p := range n.Ports {
				p.PKeys, p.PKeysError = nil, ""
			}
		}
	})
	partial := editedFabric(t, "partial.json", smallFabric, onPort("HcaD", func(p *fabric.Port) { p.PKeys, p.PKeysError = nil, "timed out" }))
	for _, tc := range []struct {
		file, key, note string
	}{
		{noTables, "0x0002", "note: no port read holds partition 0x0002; what was not read may hold more"},
		{smallFabric, "0x0005", "note: no port holds partition 0x0005\n"},
		{partial, "0x0002", "partition 0x0002: 2 end ports read (1 full, 1 limited), 3 switch ports mirroring them; what was not read may hold more"},
	} {
		r := runIbkey(t, false, nil, "fabric", "pkeys", "--fabric-file", tc.file, "--key", tc.key)
		if !strings.Contains(r.Stderr, tc.note) {
			t.Errorf("--key %s on %s: exit %d, want %q\n%s", tc.key, tc.file, r.Code, tc.note, r.Stderr)
		}
	}
}

// TestPKeysNotReadIsNA: a port whose PortInfo was not read has no LID, state or table
// size to show: n/a in the table, null (with the error) in JSON, never 0 or "".
// A sweep without tables does not know the table sizes either.
func TestPKeysNotReadIsNA(t *testing.T) {
	file := editedFabric(t, "portinfo.json", smallFabric, onPort("HcaB", func(p *fabric.Port) {
		p.Error, p.State, p.PhysState, p.LID, p.TableSize, p.PKeys = "PortInfo: timed out", "", "", 0, 0, nil
	}))
	r := runIbkey(t, false, nil, "fabric", "pkeys", "--fabric-file", file, "-o", "plain")
	if !regexp.MustCompile(`(?m)^HcaB +1 +ca +0x0000000000100003 +n/a +n/a +n/a +n/a +n/a$`).MatchString(r.Stdout) {
		t.Errorf("HcaB[1] not read: want n/a cells\n%s", r.Stdout)
	}
	r = runIbkey(t, false, nil, "fabric", "discover", "--fabric-file", file, "-o", "plain")
	if !regexp.MustCompile(`(?m)^HcaB +ca +0x0000000000100003 +1 +0x0000000000100004 +n/a +n/a +"Switch1"\[2\]$`).MatchString(r.Stdout) || r.Code != 4 {
		t.Errorf("discover: exit %d, HcaB[1] not read: want n/a cells\n%s", r.Code, r.Stdout)
	}
	r = runIbkey(t, false, nil, "fabric", "pkeys", "--fabric-file", file, "-o", "json")
	var doc struct {
		Ports []map[string]any `json:"ports"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatal(err)
	}
	for _, p := range doc.Ports {
		if p["node_desc"] == "HcaB" && p["port"] == 1.0 {
			if p["lid"] != nil || p["state"] != nil || p["table_size"] != nil || p["error"] != "PortInfo: timed out" {
				t.Errorf("HcaB[1] in JSON: %v", p)
			}
		}
		if p["node_desc"] == "HcaA" && p["port"] == 1.0 && (p["lid"] != 1.0 || p["state"] != "ACTIVE" || p["table_size"] != 64.0) {
			t.Errorf("HcaA[1] in JSON: %v", p)
		}
	}
	if r.Code != 4 {
		t.Errorf("exit %d", r.Code)
	}
}

// TestSwitchPortNotReadIsListed: a switch port whose PortInfo was not read may have a
// cable: discover and pkeys list it with n/a cells instead of leaving it out.
func TestSwitchPortNotReadIsListed(t *testing.T) {
	file := editedFabric(t, "sw-portinfo.json", smallFabric, func(f *fabric.Fabric) {
		for _, n := range f.Nodes {
			if n.Description == "Switch1" {
				p := n.Port(5) // no cable
				p.Error, p.State, p.PhysState, p.PKeysError, p.TableSize = "PortInfo: timed out", "", "", "", 0
			}
		}
	})
	for _, tc := range []struct {
		cmd, row string
	}{
		{"discover", `(?m)^Switch1 +switch +0x0000000000200000 +5 +- +n/a +n/a +-$`},
		{"pkeys", `(?m)^Switch1 +5 +switch +0x0000000000200000 +n/a +n/a +n/a +n/a +n/a$`},
	} {
		r := runIbkey(t, false, nil, "fabric", tc.cmd, "--fabric-file", file, "-o", "plain")
		if r.Code != 4 || !regexp.MustCompile(tc.row).MatchString(r.Stdout) {
			t.Errorf("fabric %s: exit %d, want Switch1[5] with n/a\n%s%s", tc.cmd, r.Code, r.Stdout, r.Stderr)
		}
	}
}

// TestDiffPartialDefinite: fabric diff with a partial side exits 1 when what both
// sides read differs (a definite difference, cmdutil.ExitCodes), still naming the
// partial sweep on stderr, and 4 when the only difference is a table read on one side
// (table-readable: what was read, not what changed). It exited 4 for both.
func TestDiffPartialDefinite(t *testing.T) {
	tableFailed := onPort("HcaD", func(p *fabric.Port) { p.PKeys, p.PKeysError = nil, "timed out" })
	partialSame := editedFabric(t, "partial-same.json", smallFabric, tableFailed)
	partialChanged := editedFabric(t, "partial-changed.json", changedFabric, tableFailed)
	for _, tc := range []struct {
		a, b string
		Code int
		out  string
	}{
		{smallFabric, partialChanged, 1, "pkey-added"},
		{partialChanged, smallFabric, 1, "pkey-removed"},
		{smallFabric, partialSame, 4, "table-readable"},
	} {
		r := runIbkey(t, false, nil, "fabric", "diff", tc.a, tc.b)
		if r.Code != tc.Code || !strings.Contains(r.Stdout, tc.out) || !strings.Contains(r.Stderr, "is a partial sweep (1 P_Key table not read") {
			t.Errorf("fabric diff %s %s: exit %d, want %d with %s\n%s--- stderr\n%s", tc.a, tc.b, r.Code, tc.Code, tc.out, r.Stdout, r.Stderr)
		}
	}
}
