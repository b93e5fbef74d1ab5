package partitions

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/lab"
)

// The lab, through the CLI: ibsim simulates the partitions lab net (lab.StartPartconf:
// one switch, four HCAs), OpenSM programs it from each lab config of internal/partconf,
// and smpquery reads back the tables. `ibkey partitions show -o json` must predict each HCA port's table
// exactly (keys, memberships and indexes), and `partitions check` must say whether
// OpenSM rejected the file (can-talk --partitions against the same tables:
// cmd/ibkey/internal/cantalk/partitions_lab_test.go). `make fabric-test` runs these
// (-run 'Lab|Fabric').

// labTable reads one HCA port's programmed table: every entry, in index order.
func labTable(t *testing.T, l *lab.Lab, dr string) []check.PKey {
	t.Helper()
	pt, err := lab.ParsePKeys(l.MustTool("smpquery", "-D", "pkeys", dr))
	if err != nil {
		t.Fatal(err)
	}
	out := make([]check.PKey, len(pt.Entries))
	for i, v := range pt.Entries {
		out[i] = check.PKey(v)
	}
	return out
}

// showTables runs `ibkey partitions show -o json` for the four HCAs and returns each
// port's predicted entries by index (holes as 0x0000).
func showTables(t *testing.T, args ...string) map[check.GUID][]check.PKey {
	t.Helper()
	for _, h := range lab.PartconfHCAs {
		args = append(args, check.GUID(h.GUID).String())
	}
	return showFileTables(t, append(args, "--sm-guid", check.GUID(lab.PartconfHCAs[0].GUID).String())...)
}

// showFileTables is showTables for the ports the file names (no GUID arguments), and
// without --sm-guid.
func showFileTables(t *testing.T, args ...string) map[check.GUID][]check.PKey {
	t.Helper()
	return showFileTablesExit(t, 0, args...)
}

// showFileTablesExit is showFileTables for a run that exits with code.
func showFileTablesExit(t *testing.T, code int, args ...string) map[check.GUID][]check.PKey {
	t.Helper()
	args = append([]string{"partitions", "show"}, args...)
	// The lab net has no routers: --router none says so (a file with ALL_CAS items
	// would otherwise leave the HCAs' types unknown, exit 4).
	args = append(args, "--table-size", "64", "--router", "none", "-o", "json")
	r := runIbkey(t, false, nil, args...)
	if r.Code != code {
		t.Fatalf("ibkey %s: exit %d, want %d\n%s", strings.Join(args, " "), r.Code, code, r.Stderr)
	}
	var out showJSON
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
		t.Fatalf("show -o json: %v\n%s", err, r.Stdout)
	}
	tables := map[check.GUID][]check.PKey{}
	for _, p := range out.Ports {
		g, err := check.ParseGUID(p.PortGUID)
		if err != nil {
			t.Fatal(err)
		}
		var tbl []check.PKey
		for _, e := range p.Entries {
			if e.Index != len(tbl) {
				t.Fatalf("port %s: entry index %d after %d entries", p.PortGUID, e.Index, len(tbl))
			}
			v, err := check.ParsePKey(e.PKey)
			if err != nil {
				t.Fatal(err)
			}
			tbl = append(tbl, v)
		}
		tables[g] = tbl
	}
	return tables
}

// sameTable compares a predicted table with the programmed one: the same entries at the
// same indexes, and nothing valid past the prediction.
func sameTable(predicted, programmed []check.PKey) bool {
	for i, v := range programmed {
		want := check.PKey(0)
		if i < len(predicted) {
			want = predicted[i]
		}
		if want.Valid() != v.Valid() || (v.Valid() && v != want) {
			return false
		}
	}
	return len(predicted) <= len(programmed)
}

// TestLabPartitionsCLI: one ibsim and one OpenSM run per lab config
// (lab.EachPartconfCase); show and check against what OpenSM did.
func TestLabPartitionsCLI(t *testing.T) {
	lab.EachPartconfCase(t, func(t *testing.T, c lab.PartconfCase, l *lab.Lab, real map[uint64][]check.PKey) {
		conf := c.File()
		args := []string{conf}
		if c.AllowBoth {
			args = append(args, "--allow-both")
		}
		predicted := showTables(t, args...)
		for _, h := range lab.PartconfHCAs {
			g := check.GUID(h.GUID)
			if !sameTable(predicted[g], real[h.GUID]) {
				t.Errorf("port %s: partitions show predicts %v, OpenSM programmed %v", g.String(), predicted[g], trimTable(real[h.GUID]))
			}
		}
		// check must say what OpenSM did with the file: rejected or applied.
		r := runIbkey(t, false, nil, "partitions", "check", conf, "-o", "json")
		var chk struct {
			Rejected bool `json:"rejected"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &chk); err != nil {
			t.Fatal(err)
		}
		log, _ := os.ReadFile(filepath.Join(l.Dir, "opensm", "opensm.log"))
		if rejected := strings.Contains(string(log), "retrying with default config"); rejected != chk.Rejected {
			t.Errorf("OpenSM rejected the file: %v; partitions check says rejected=%v", rejected, chk.Rejected)
		}
	})
}

// TestLabPartitionsReconfiguration runs OpenSM twice on one running fabric, with
// reconf-a.conf then reconf-b.conf (which removes partitions, changes one membership and
// adds keys), and checks that OpenSM keeps indexes and leaves holes as
// `partitions show --previous` predicts, and that without --previous the prediction is
// the fresh-port table (which the second run does not produce: the holes are real).
func TestLabPartitionsReconfiguration(t *testing.T) {
	lab.Require(t)
	if testing.Short() {
		t.Skip("lab: -short")
	}
	l := lab.StartPartconf(t)
	for _, step := range []struct {
		conf string
		args []string
	}{
		{reconfAConf, []string{reconfAConf}},
		{reconfBConf, []string{reconfBConf, "--previous", reconfAConf, "--restarted"}},
	} {
		text, err := os.ReadFile(step.conf)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.RunOpenSM(string(text), false); err != nil {
			t.Fatal(err)
		}
		predicted := showTables(t, step.args...)
		holes := 0
		real := map[check.GUID][]check.PKey{}
		for _, h := range lab.PartconfHCAs {
			g := check.GUID(h.GUID)
			real[g] = labTable(t, l, h.DR)
			if !sameTable(predicted[g], real[g]) {
				t.Errorf("%s: port %s: partitions show %s predicts %v, OpenSM programmed %v", filepath.Base(step.conf), g.String(), strings.Join(step.args, " "), predicted[g], trimTable(real[g]))
			}
			for i, v := range trimTable(real[g]) {
				if !v.Valid() && i > 0 {
					holes++
				}
			}
		}
		if step.conf == reconfBConf && holes == 0 {
			t.Errorf("reconf-b.conf after reconf-a.conf: no hole in any table; OpenSM no longer keeps indexes?")
		}
	}
}

// TestLabPartitionsReconfigurationDaemon: one OpenSM daemon applies reconf-a.conf,
// then (SIGHUP, as `reload` does) reconf-b.conf, then reconf-a.conf again. A running
// OpenSM remembers where it put every key (accum_pkeys), so after the second file new
// keys go after removed ones, and after the third the keys put back return to their
// old indexes: `partitions show` with --previous (no --restarted) predicts each table,
// and --restarted (a new process) does not, which shows the test can tell them apart.
func TestLabPartitionsReconfigurationDaemon(t *testing.T) {
	lab.Require(t)
	if testing.Short() {
		t.Skip("lab: -short")
	}
	l := lab.StartPartconf(t)
	d := l.StartOpenSMDaemon(t, readConf(t, reconfAConf))
	restartDiffers := false
	for i, step := range []struct {
		conf     string
		previous []string
	}{
		{reconfAConf, nil},
		{reconfBConf, []string{reconfAConf}},
		{reconfAConf, []string{reconfAConf, reconfBConf}},
	} {
		if i > 0 {
			if _, _, err := d.Reprogram(context.Background(), readConf(t, step.conf)); err != nil {
				t.Fatal(err)
			}
		}
		args := []string{step.conf}
		for _, p := range step.previous {
			args = append(args, "--previous", p)
		}
		predicted := showTables(t, args...)
		restarted := predicted
		if len(step.previous) > 0 {
			restarted = showTables(t, append(args, "--restarted")...)
		}
		for _, h := range lab.PartconfHCAs {
			g := check.GUID(h.GUID)
			real := labTable(t, l, h.DR)
			if !sameTable(predicted[g], real) {
				t.Errorf("step %d: port %s: partitions show %s predicts %v, the OpenSM daemon programmed %v", i+1, g.String(), strings.Join(args, " "), predicted[g], trimTable(real))
			}
			if !sameTable(restarted[g], real) {
				restartDiffers = true
			}
		}
	}
	if !restartDiffers {
		t.Error("a restarted OpenSM's prediction matched the daemon's tables at every step: the test cannot tell them apart")
	}
}

// readConf is the text of a partitions.conf in testdata.
func readConf(t *testing.T, f string) string {
	t.Helper()
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// trimTable drops the empty entries after the last valid one, for messages.
func trimTable(t []check.PKey) []check.PKey {
	end := 0
	for i, v := range t {
		if v.Valid() {
			end = i + 1
		}
	}
	return t[:end]
}

// TestLabPartitionsKeepPKeyIndexesFalse: an OpenSM daemon with keep_pkey_indexes
// FALSE applies reconf-a.conf, then reconf-b.conf (SIGHUP). It rebuilds each table
// from index 0 (no hole, no key kept at its index): `partitions show B --previous A
// --opensm-conf` with that opensm.conf predicts the tables, and without
// --opensm-conf (keep_pkey_indexes TRUE, the default) it does not, which shows the
// test can tell them apart.
func TestLabPartitionsKeepPKeyIndexesFalse(t *testing.T) {
	lab.Require(t)
	if testing.Short() {
		t.Skip("lab: -short")
	}
	l := lab.StartPartconf(t)
	d := l.StartOpenSMDaemon(t, readConf(t, reconfAConf), "keep_pkey_indexes FALSE")
	if _, _, err := d.Reprogram(context.Background(), readConf(t, reconfBConf)); err != nil {
		t.Fatal(err)
	}
	osmConf := filepath.Join(t.TempDir(), "opensm.conf")
	if err := os.WriteFile(osmConf, []byte("keep_pkey_indexes FALSE\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{reconfBConf, "--previous", reconfAConf}
	predicted := showTables(t, append(args, "--opensm-conf", osmConf)...)
	kept := showTables(t, args...)
	differs := false
	for _, h := range lab.PartconfHCAs {
		g := check.GUID(h.GUID)
		real := labTable(t, l, h.DR)
		if !sameTable(predicted[g], real) {
			t.Errorf("port %s: partitions show %s --opensm-conf (keep_pkey_indexes FALSE) predicts %v, the OpenSM daemon programmed %v", g.String(), strings.Join(args, " "), predicted[g], trimTable(real))
		}
		differs = differs || !sameTable(kept[g], real)
	}
	if !differs {
		t.Error("keep_pkey_indexes TRUE's prediction matched every table: the test cannot tell them apart")
	}
}

// TestLabPartitionsOpenSMConf: OpenSM reads allow_both_pkeys TRUE, its
// partition_config_file and the port it binds to (guid) from an opensm.conf (-F) and
// programs a file with a `both` member and SELF. `partitions show --opensm-conf`
// without FILE or --sm-guid reads that file and predicts the tables; without
// --opensm-conf (no -W, and SELF's entry on no port) it does not, which shows the test
// can tell them apart. `partitions check --opensm-conf` does not warn about both without
// -W; `partitions check FILE` does.
func TestLabPartitionsOpenSMConf(t *testing.T) {
	lab.Require(t)
	if testing.Short() {
		t.Skip("lab: -short")
	}
	l := lab.StartPartconf(t)
	var parts strings.Builder
	parts.WriteString("Default=0x7fff, ipoib : ALL=full ;\nboth=0x0005 :")
	for i, h := range lab.PartconfHCAs {
		flag := "=full"
		if i%2 == 0 {
			flag = "=both"
		}
		if i > 0 {
			parts.WriteString(",")
		}
		parts.WriteString(" " + check.GUID(h.GUID).String() + flag)
	}
	parts.WriteString(" ;\nmgmt=0x0006 : SELF=full, " + check.GUID(lab.PartconfHCAs[1].GUID).String() + "=full ;\n")
	// The lab writes the partitions.conf it gives OpenSM (-P) here; the opensm.conf
	// names the same file.
	file := filepath.Join(l.Dir, "opensm", "partitions.conf")
	osmConf := filepath.Join(t.TempDir(), "opensm.conf")
	sm := check.GUID(lab.PartconfHCAs[0].GUID) // the port the lab's OpenSM runs on
	if err := os.WriteFile(osmConf, []byte("allow_both_pkeys TRUE\npartition_config_file "+file+"\nguid "+sm.String()+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := l.RunOpenSMArgs(parts.String(), "-F", osmConf); err != nil {
		t.Fatal(err)
	}
	predicted := showFileTables(t, "--opensm-conf", osmConf)
	withoutW := showFileTablesExit(t, 4, file) // SELF without --sm-guid: exit 4
	differs := false
	for _, h := range lab.PartconfHCAs {
		g := check.GUID(h.GUID)
		real := labTable(t, l, h.DR)
		if !sameTable(predicted[g], real) {
			t.Errorf("port %s: partitions show --opensm-conf (allow_both_pkeys TRUE) predicts %v, OpenSM programmed %v", g.String(), predicted[g], trimTable(real))
		}
		differs = differs || !sameTable(withoutW[g], real)
	}
	if !differs {
		t.Error("the prediction without allow_both_pkeys matched every table: the test cannot tell them apart")
	}
	r := runIbkey(t, false, nil, "partitions", "check", "--opensm-conf", osmConf)
	if r.Code != 0 || strings.Contains(r.Stdout, "both-without-W") || !strings.Contains(r.Stderr, "reading "+file+", the partition_config_file of "+osmConf) {
		t.Errorf("partitions check --opensm-conf: exit %d\n%s--- stderr\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if r := runIbkey(t, false, nil, "partitions", "check", file); !strings.Contains(r.Stdout, "both-without-W") {
		t.Errorf("partitions check without --opensm-conf: no both-without-W warning\n%s", r.Stdout)
	}
}
