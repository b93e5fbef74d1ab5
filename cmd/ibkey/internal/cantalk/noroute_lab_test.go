package cantalk

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/lab"
	"github.com/ibkey/ibkey/internal/query"
)

// TestLabCanTalkSARouting: the SA refuses a path for routing, not for a partition: OpenSM
// routes Sw1 from an LFT file (routing_engine file, osm_ucast_file.c) that has no port
// for HcaC's LID, and its SA walks that route before any partition check
// (osm_sa_path_record.c pr_rcv_get_path_parms, ERR 1F07). can-talk --sa --sm-log
// quotes that line, matched by the LIDs asked, and says the refusal was for routing:
// it neither confirms the tables' yes (exit 4) nor agrees with their no (exit 1, the
// SM's answer not compared); it is neither "the SM's view of the tables is stale" nor
// "refuses a path in the partition too".
func TestLabCanTalkSARouting(t *testing.T) {
	lab.Require(t)
	if testing.Short() {
		t.Skip("lab: -short")
	}
	l := lab.StartPartconf(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Before an SM runs only directed routes work: the sweep finds Sw1's GUID.
	f, err := query.Sweep(ctx, l.Dial(t, "HcaA", mad.Options{}), query.SweepOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var sw check.GUID
	for _, n := range f.Nodes {
		if n.Type == check.NodeSwitch {
			sw = n.GUID
		}
	}
	// Sw1's routes, in the format of OpenSM's own dump (osm_dump.c dump_ucast_lfts),
	// each line moved to the LID OpenSM gave the port GUID it names (osm_ucast_file.c
	// remap_lid): HcaA, Sw1, HcaB, HcaD, not HcaC.
	lfts := lab.LFTDump(uint64(sw), 0, "Sw1", []lab.LFTRoute{
		{LID: 1, Port: 1, GUID: 0x0002c90300000201, Desc: "HcaA"}, {LID: 1, Port: 0, GUID: uint64(sw), Desc: "Sw1", ToSwitch: true},
		{LID: 1, Port: 2, GUID: 0x0002c90300000211, Desc: "HcaB"}, {LID: 1, Port: 4, GUID: 0x0002c90300000231, Desc: "HcaD"},
	})
	file := filepath.Join(l.Dir, "lfts.dump")
	if err := os.WriteFile(file, []byte(lfts), 0o644); err != nil {
		t.Fatal(err)
	}
	d := l.StartOpenSMDaemon(t, saLabConf, "routing_engine file", "lfts_file "+file)
	// The routes the file gives hold: HcaB to HcaD has a path.
	if out, err := l.ToolAt("HcaA", "saquery", "PR", "--slid", "3", "--dlid", "5"); err != nil || !strings.Contains(out, "PathRecord dump") {
		t.Fatalf("saquery PR from LID 3 to 5: %q %v (want a path)", out, err)
	}
	attach := []string{"--ibsim=" + l.SockName, "--sim-node", "HcaA"}
	deadEnd := fmt.Sprintf("ERR 1F07: Dead end path on switch Sw1 (GUID: 0x%016x) to LID 4", uint64(sw))
	for _, c := range []struct {
		a, b string
		code int
		head string
	}{
		// The tables say yes (Default, both full): the SM does not confirm it.
		{"lid=3,pkey=0x7fff", "lid=4,pkey=0x7fff", 4, "UNKNOWN: the tables read say lid=3 and lid=4 can talk; the Subnet Manager does not confirm it\n"},
		// The tables say no (p2, HcaD and HcaC both limited): the SM's refusal,
		// for routing, neither agrees nor disagrees.
		{"lid=5,pkey=0x0002", "lid=4,pkey=0x0002", 1, "NO: "},
	} {
		args := append([]string{"can-talk", c.a, c.b, "--sa", "--sm-log", d.Log}, attach...)
		r := runIbkey(t, args...)
		text := strings.Join(strings.Fields(r.Stdout), " ")
		if r.Code != c.code || !strings.HasPrefix(r.Stdout, c.head) || !strings.Contains(text, "for routing, not for a partition") ||
			!strings.Contains(r.Stdout, "\n  SM log: ") || !strings.Contains(r.Stdout, deadEnd) || strings.Contains(text, "its view of the tables") || strings.Contains(text, " too (") {
			t.Errorf("ibkey %s: exit %d, want %d\n%s%s", strings.Join(args, " "), r.Code, c.code, r.Stdout, r.Stderr)
		}
		args = append(args, "-o", "json")
		r = runIbkey(t, args...)
		var doc saDoc
		if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || r.Code != c.code || doc.SA.Path || doc.SA.Agrees != nil || !doc.SA.Unknown ||
			!strings.Contains(doc.SA.Reason, "for routing") || !strings.HasSuffix(doc.SA.LogLine, deadEnd) {
			t.Errorf("ibkey %s: exit %d, %v\n%s%s", strings.Join(args, " "), r.Code, err, r.Stdout, r.Stderr)
		}
	}
}
