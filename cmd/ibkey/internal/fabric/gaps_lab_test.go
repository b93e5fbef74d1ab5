package fabric

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/lab"
)

// What a sweep did not read (fabric.NotRead), on the lab: each command that answers
// from a sweep says the same gaps and exits 4, never 0 or a definite no.

// incompleteOf is the "incomplete" of a JSON document.
func incompleteOf(t *testing.T, r cmdtest.Result) []cmdutil.Incomplete {
	t.Helper()
	var doc struct {
		Incomplete []cmdutil.Incomplete `json:"incomplete"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatalf("%v\n%s\n%s", err, r.Stdout, r.Stderr)
	}
	return doc.Incomplete
}

// TestLabNoTablesOutsideTheSubnet: HcaA's port 2 is cabled back to back to HcaX (no SM
// on that link: INIT, LID 0). A sweep made with --no-tables lacks the five tables of the
// subnet (ibnetdiscover's: HcaA[1], HcaB[1], Switch1's port 0 and its two cabled ports),
// not HcaA[2]'s, which is outside it; every command that needs the tables says so and
// exits 4, and pkeys --key does not say that no port holds a partition smpquery shows.
func TestLabNoTablesOutsideTheSubnet(t *testing.T) {
	l := &fabricLab{Lab: lab.Start(t, "../../../../internal/query/testdata/backtoback.net", nil), from: "HcaA"}
	if err := l.RunOpenSM("Default=0x7fff : ALL=full ;\na=0x0001 : 0x100001=full ;\n", false); err != nil {
		t.Fatal(err)
	}
	smp, err := lab.ParsePKeys(l.tool(t, "smpquery", "pkeys", "1"))
	if err != nil || smp.Entries[1] != 0x8001 {
		t.Fatalf("smpquery pkeys 1: %v %v, expected 0x8001 at index 1 of HcaA[1]", smp.Entries, err)
	}
	f, r := l.discoverFile(t, "--no-tables")
	if r.Code != 0 {
		t.Errorf("discover --no-tables: exit %d (the tables are not needed to list the fabric)\n%s", r.Code, r.Stderr)
	}
	file := writeTemp(t, "no-tables.json", r.Stdout)
	t.Logf("%s", r.Stderr)
	const gap = "5 P_Key tables not in the sweep (made with --no-tables)"
	for _, args := range [][]string{{"pkeys"}, {"pkeys", "--key", "0x0001"}, {"check"}} {
		r := runIbkey(t, false, nil, append(append([]string{"fabric"}, args...), "--fabric-file", file, "-o", "json")...)
		inc := incompleteOf(t, r)
		if r.Code != 4 || len(inc) != 1 || inc[0].Kind != cmdutil.IncompleteUnreadTable || !strings.HasPrefix(inc[0].Message, gap+": ") ||
			strings.Contains(inc[0].Message, `"HcaA"[2]`) || !strings.Contains(r.Stderr, "ibkey: partial sweep: "+gap) {
			t.Errorf("fabric %s on a --no-tables sweep: exit %d, incomplete %v; want exit 4 and %q\n%s", strings.Join(args, " "), r.Code, inc, gap, r.Stderr)
		}
	}
	// The port outside is said to be outside, not a gap.
	if out := f.OutsidePorts(); len(out) != 1 || out[0].Node != 0x100000 || out[0].Port != 2 {
		t.Errorf("outside %+v, want HcaA[2]", out)
	}
	// With the tables: complete, and HcaA[2]'s table (no route arrives on it) is no gap;
	// pkeys says why its cells are n/a.
	r = l.run(t, "fabric", "pkeys", "--key", "0x0001", "-o", "json")
	if inc := incompleteOf(t, r); r.Code != 0 || len(inc) != 0 {
		t.Errorf("pkeys --key 0x0001 with the tables: exit %d, incomplete %v\n%s", r.Code, inc, r.Stderr)
	}
	// A fabric file from an older sweep, which left HcaA through its port 2 (ibsim
	// forwards it) and read HcaX and its table: HcaX is outside the subnet, so neither
	// a gap nor a table checked.
	full, r := l.discoverFile(t)
	a2 := check.PortID{Node: 0x100000, Port: 2}
	x1 := check.PortID{Node: 0x100006, Port: 1}
	full.Port(a2).Peer, full.Port(a2).PKeysError = &x1, "not read yet: no directed route arrived on this port"
	full.Nodes = append(full.Nodes, &fabric.Node{GUID: x1.Node, Type: check.NodeCA, Description: "HcaX", NumPorts: 1, PartitionCap: 64, Path: "0,2",
		Ports: []*fabric.Port{{Num: 1, GUID: 0x100007, State: check.StateInit, PhysState: "LinkUp", Peer: &a2, TableSize: 64, PKeys: make(fabric.PKeyTable, 64)}}})
	full.Normalize()
	var b strings.Builder
	if err := fabric.EncodeFabric(&b, full); err != nil {
		t.Fatal(err)
	}
	old := writeTemp(t, "older.json", b.String())
	r = runIbkey(t, false, nil, "fabric", "check", "--fabric-file", old, "--ignore", "enforcement-off,port-not-active")
	if r.Code != 0 || !strings.Contains(r.Stdout, "no problems found (4 nodes, 5 P_Key tables checked;") || !strings.Contains(r.Stderr, "2 ports outside the swept subnet, not audited") {
		t.Errorf("check on an older sweep: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r = l.run(t, "fabric", "pkeys", "-o", "json")
	if inc := incompleteOf(t, r); r.Code != 0 || len(inc) != 0 || !strings.Contains(r.Stderr, `note: P_Key tables n/a, not part of the swept subnet: "HcaA"[2]: outside the swept subnet: it is INIT with LID 0`) {
		t.Errorf("pkeys with the tables: exit %d, incomplete %v\n%s", r.Code, inc, r.Stderr)
	}
}

// failPortInfo fails every PortInfo read of the node at path, as a switch whose SMA
// does not answer PortInfo would.
type failPortInfo struct {
	*mad.Ibsim
	path []uint8
}

func (x *failPortInfo) Exchange(ctx context.Context, calls []mad.Call) error {
	err := x.Ibsim.Exchange(ctx, calls)
	for i := range calls {
		if q := calls[i].Req; q.Attr == mad.AttrPortInfo && q.Addr.Directed && slices.Equal(q.Addr.Path, x.path) {
			calls[i].Err = errors.New("injected: no PortInfo")
		}
	}
	return err
}

// TestLabSwitchWithoutPortInfo: Switch2 (reached through Switch1's port 7) answers
// NodeInfo, NodeDescription and SwitchInfo but no PortInfo. The sweep cannot tell
// which of its links are up, so it probes none: HcaC and HcaD, behind it, are missing
// without a link that "did not answer". Every command names the PortInfo reads not read
// and says that nodes behind them may be missing, and exits 4; the audit says it too.
func TestLabSwitchWithoutPortInfo(t *testing.T) {
	l := startFabricLab(t, "small.net")
	if err := l.RunOpenSM(cliLabConf, false); err != nil {
		t.Fatal(err)
	}
	dial := func(ctx context.Context, o mad.IbsimOptions) (mad.Transport, string, error) {
		t, err := mad.DialIbsim(ctx, o)
		if err != nil {
			return nil, "", err
		}
		return &failPortInfo{Ibsim: t, path: []uint8{1, 7}}, t.Node, nil
	}
	build := func(f *cmdutil.Factory) *cobra.Command {
		c := &cobra.Command{Use: "fabric"}
		c.AddCommand(
			NewCmdDiscover(f, func(o *DiscoverOptions) error { o.Source.MAD.DialIbsim = dial; return runDiscover(o) }),
			NewCmdPKeys(f, func(o *PKeysOptions) error { o.Source.MAD.DialIbsim = dial; return runPKeys(o) }),
			NewCmdCheck(f, func(o *CheckOptions) error { o.Source.MAD.DialIbsim = dial; return runCheck(o) }),
		)
		return c
	}
	for _, args := range [][]string{{"discover"}, {"pkeys"}, {"pkeys", "--key", "0x0001"}, {"check", "--ignore", "enforcement-off"}} {
		r := runWith(t, false, nil, build, append(append([]string{"fabric"}, args...), "--ibsim="+l.SockName, "--sim-node", l.from, "-o", "json")...)
		if r.Code != 4 || !strings.Contains(r.Stderr, `PortInfo reads failed: "Switch2"[0]: PortInfo: `) || !strings.Contains(r.Stderr, "nodes behind it may be missing") {
			t.Errorf("fabric %s: exit %d, want 4 naming Switch2's PortInfo reads and the nodes behind them\n%s", strings.Join(args, " "), r.Code, r.Stderr)
		}
		t.Logf("fabric %s: %s", strings.Join(args, " "), r.Stderr)
		if args[0] == "discover" {
			continue // the fabric file keeps its gaps where they are
		}
		if inc := incompleteOf(t, r); len(inc) == 0 || inc[0].Kind != cmdutil.IncompleteUnreadNode {
			t.Errorf("fabric %s: incomplete %v", strings.Join(args, " "), inc)
		}
		// HcaD[2] is cabled to Switch2[2]: no route arrived on it because Switch2's links
		// were not probed, not because its link leads out of the subnet.
		if args[0] == "pkeys" && !strings.Contains(r.Stderr, `1 P_Key table not read: "HcaD"[2]: `) {
			t.Errorf("fabric %s: HcaD[2]'s table is not named as not read\n%s", strings.Join(args, " "), r.Stderr)
		}
		if args[0] == "check" && !strings.Contains(r.Stdout, `PortInfo of \"Switch2\"[1]: PortInfo: injected: no PortInfo (so its link was not probed`) {
			t.Errorf("fabric check: no not-read finding for Switch2[1]'s link\n%s", r.Stdout)
		}
	}
}

// TestLabDiffPartialSweep: HcaC stops answering after a sweep was saved. fabric diff
// against the sweep now, or against that partial sweep saved, does not report HcaC or
// its link as gone (it was not read) and exits 4 naming the partial side; the
// complete sweeps compare clean.
func TestLabDiffPartialSweep(t *testing.T) {
	l := startFabricLab(t, "small.net")
	if err := l.RunOpenSM(cliLabConf, false); err != nil {
		t.Fatal(err)
	}
	_, r := l.discoverFile(t)
	full := writeTemp(t, "full.json", r.Stdout)
	l.MustConsole(`Error "HcaC"[1] 100`)
	f, r := l.discoverFile(t, fastFail...)
	if r.Code != 4 || len(f.Unreachable) != 1 {
		t.Fatalf("HcaC not answering: exit %d, unreachable %v\n%s", r.Code, f.Unreachable, r.Stderr)
	}
	partial := writeTemp(t, "partial.json", r.Stdout)
	for _, tc := range []struct {
		args []string
		side string // named partial on stderr
	}{
		{append([]string{"fabric", "diff", full, "--ibsim=" + l.SockName, "--sim-node", l.from}, fastFail...), "partial sweep: 1 link with no answer"},
		{[]string{"fabric", "diff", full, partial}, partial + " is a partial sweep (1 link with no answer"},
		{[]string{"fabric", "diff", partial, full}, partial + " is a partial sweep (1 link with no answer"},
	} {
		r := runIbkey(t, false, nil, tc.args...)
		if r.Code != 4 || strings.Contains(r.Stdout, "HcaC") || !strings.Contains(r.Stderr, tc.side) {
			t.Errorf("%s: exit %d, want 4, nothing about HcaC, and %q\n%s%s", strings.Join(tc.args, " "), r.Code, tc.side, r.Stdout, r.Stderr)
		}
	}
	if r := runIbkey(t, false, nil, "fabric", "diff", full, full); r.Code != 0 {
		t.Errorf("full vs full: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// TestLabCheckPartialSweepErrors: HcaC stops answering (a dead link: a partial sweep)
// and the --partitions file gives every port a key no table holds (definite errors in
// what was read). fabric check exits 1 and its JSON still names the partial sweep in
// incomplete, as stderr does; until wave 11 the document had no incomplete on exit 1,
// so a script reading only the JSON took the sweep for complete.
func TestLabCheckPartialSweepErrors(t *testing.T) {
	l := startFabricLab(t, "small.net")
	if err := l.RunOpenSM(cliLabConf, false); err != nil {
		t.Fatal(err)
	}
	l.MustConsole(`Error "HcaC"[1] 100`)
	conf := writeTemp(t, "partitions.conf", cliLabConf+"extra=0x0009 : ALL=full ;\n")
	args := append([]string{"fabric", "check", "--ibsim=" + l.SockName, "--sim-node", l.from, "--partitions", conf, "--ignore", "enforcement-off", "-o", "json"}, fastFail...)
	r := runPartial(t, args...)
	inc := incompleteOf(t, r)
	if r.Code != 1 || !strings.Contains(r.Stdout, `"rule": "partitions-missing-key"`) || len(inc) == 0 || inc[0].Kind != cmdutil.IncompletePartialSweep ||
		!strings.Contains(inc[0].Message, "1 link with no answer") || !strings.Contains(r.Stderr, "ibkey: partial sweep: 1 link with no answer") {
		t.Errorf("fabric check on a partial sweep with errors: exit %d, incomplete %v; want 1, partitions-missing-key, and the link with no answer in incomplete and on stderr\n%s", r.Code, inc, r.Stderr)
	}
}
