package smlog

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/lab"
	"github.com/ibkey/ibkey/internal/query"
)

// The SA gives a path only along the route OpenSM's forwarding tables make: it walks
// the tables it computed (osm_sa_path_record.c pr_rcv_get_path_parms,
// osm_sa_multipath_record.c mpr_rcv_get_path_parms: osm_switch_get_route_by_lid reads
// the switch's new_lft) and refuses the path where the route breaks. OpenSM's own
// routing engines route every port of the lab's one switch, so here OpenSM takes its
// routes from a file: routing_engine file with lfts_file (osm_ucast_file.c
// do_ucast_file_load: a switch the file names starts with no port for any LID, then
// gets one per line), a table an administrator dumped and edited, or one left from
// another fabric.

// TestLabPathNoRoute makes the real daemon refuse paths for routing, each way
// pr_rcv_get_path_parms and mpr_rcv_get_path_parms can: Sw1's table first leaves out
// HcaC's LID (ERR 1F07 and 4516 on the way to it, 1F02 and 4514 from the switch
// itself), then leaves out the switch's own LID (1F03, 4515: a path to the switch),
// sends HcaC's LID out port 7, which has no link (1F05, 4505), and HcaD's out HcaC's
// port (1F06, 4503: the route ends at another port). Each is a path-no-route event
// with the ends the line names, resolved to the ports by the fabric swept, and a
// warning. With -update it saves the log (testdata/lab-noroute.log) for the sm
// command's tests.
func TestLabPathNoRoute(t *testing.T) {
	l := startLab(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Before an SM runs only directed routes work: the sweep finds the switch's GUID
	// for the file.
	tr := l.Dial(t, "HcaA", mad.Options{})
	f, err := query.Sweep(ctx, tr, query.SweepOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var sw *fabric.Node
	for _, n := range f.Nodes {
		if n.Type == check.NodeSwitch {
			sw = n
		}
	}
	if sw == nil || sw.Description != "Sw1" {
		t.Fatalf("no switch Sw1 in the sweep: %+v", f.Nodes)
	}
	swGUID := uint64(sw.GUID)
	lfts := filepath.Join(l.Dir, "lfts.dump")
	write := func(routes []lab.LFTRoute) {
		t.Helper()
		if err := os.WriteFile(lfts, []byte(lab.LFTDump(swGUID, lidSw, "Sw1", routes)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rA := lab.LFTRoute{LID: lidA, Port: 1, GUID: guidA, Desc: "HcaA"}
	rSw := lab.LFTRoute{LID: lidSw, Port: 0, GUID: swGUID, Desc: "Sw1", ToSwitch: true}
	rB := lab.LFTRoute{LID: lidB, Port: 2, GUID: guidB, Desc: "HcaB"}
	rC := lab.LFTRoute{LID: lidC, Port: 3, GUID: guidC, Desc: "HcaC"}
	rD := lab.LFTRoute{LID: lidD, Port: 4, GUID: guidD, Desc: "HcaD"}
	write([]lab.LFTRoute{rA, rSw, rB, rD})
	d := l.StartOpenSMDaemon(t, labConf, "routing_engine file", "lfts_file "+lfts)
	if !strings.Contains(d.LogText(), "file tables configured on all switches") {
		t.Fatalf("OpenSM did not route from the file:\n%s", tail(d.LogText(), 3000))
	}
	// The LIDs OpenSM gave, as the sweep now reads them.
	if f, err = query.Sweep(ctx, tr, query.SweepOptions{}); err != nil {
		t.Fatal(err)
	}
	r := NewResolver(f, nil)
	for lid, g := range map[uint16]uint64{lidA: guidA, lidSw: swGUID, lidB: guidB, lidC: guidC, lidD: guidD} {
		if id, ok := r.byLID[lid]; !ok || f.Port(id).GUID != check.GUID(g) {
			t.Fatalf("the lab's LIDs changed: LID %d is %v, want port %#x (update the constants)", lid, id, g)
		}
	}

	wait := func(what string, from int64) {
		t.Helper()
		if _, err := d.WaitLog(what, from, 10*time.Second); err != nil {
			t.Fatalf("%v\nlog:\n%s", err, tail(d.LogText(), 3000))
		}
	}
	// path asks for the PathRecord from slid to dlid (saquery: a GetTable, which the SA
	// answers with no record) and waits for code.
	path := func(slid, dlid uint16, code string) {
		t.Helper()
		from := d.LogSize()
		args := []string{"PR", "--slid", itoa(int(slid)), "--dlid", itoa(int(dlid))}
		if out, err := l.ToolAt("HcaA", "saquery", args...); err != nil || strings.TrimSpace(out) != "" {
			t.Fatalf("saquery %v: %q %v (want no path)", args, out, err)
		}
		wait("ERR "+code, from)
	}
	// multi asks for the MultiPathRecord from port src to dst and waits for code.
	multi := func(src, dst uint64, code string) {
		t.Helper()
		from := d.LogSize()
		if err := multiPath(ctx, l, "HcaA", lidA, src, dst, 0); err != nil {
			t.Fatal(err)
		}
		wait("ERR "+code, from)
	}
	path(lidB, lidC, "1F07")
	path(lidSw, lidC, "1F02")
	multi(guidB, guidC, "4516")
	multi(swGUID, guidC, "4514")

	rC.Port, rD.Port = 7, 3
	write([]lab.LFTRoute{rA, rB, rC, rD})
	if err := d.Resweep(20 * time.Second); err != nil {
		t.Fatal(err)
	}
	path(lidB, lidSw, "1F03")
	path(lidB, lidC, "1F05")
	path(lidB, lidD, "1F06")
	multi(guidB, swGUID, "4515")
	multi(guidB, guidC, "4505")
	multi(guidB, guidD, "4503")
	// A line after 4505's, whose format has no newline: the two share a line of the
	// log (glued), and the event's line is 4505's record alone.
	path(lidB, lidC, "1F05")
	log := d.LogText()
	if recording("lab-noroute.log") {
		if err := os.WriteFile(filepath.Join("testdata", "lab-noroute.log"), []byte(log), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	var evs []*Event
	a := NewAssembler(time.Now(), time.Local, func(e *Event) { evs = append(evs, e) })
	a.Unexplained = func(u *Unexplained) { t.Errorf("not explained: line %d: %s", u.Line, u.Message) }
	if err := Read(context.Background(), strings.NewReader(log), a); err != nil {
		t.Fatal(err)
	}
	x := &Explainer{R: r}
	// Each code: the LIDs its line names (0: none), the ends as the explanation names
	// them (resolved by the sweep where the line gives only a LID; 1F06 and 4503 name
	// the nodes by node GUID, HcaB's port GUID less one), and why the route broke.
	type want struct {
		from, to uint16
		ends     string
		why      string
		detail   string // in the message
	}
	var (
		deadEnd  = want{0, lidC, `from the source to "HcaC"[1]`, "a switch's forwarding table has no port for the destination LID", "switch Sw1 (GUID"}
		fromSw   = want{lidSw, lidC, `from "Sw1"[0] to "HcaC"[1]`, "a switch's forwarding table has no port for the destination LID", "switch Sw1 (GUID"}
		toSw     = want{lidB, lidSw, `from "HcaB"[1] to "Sw1"[0]`, "a switch's forwarding table has no port for the destination LID", "switch Sw1 (GUID"}
		noLink   = want{lidB, lidC, `from "HcaB"[1] to "HcaC"[1]`, "the route leaves a switch by a port with no link", "remote phys port of Sw1 (GUID"}
		wrongEnd = want{0, 0, `from "HcaB"[1] to "HcaD"[1]`, "the route ends at another port than the destination", "; ended at HcaC port 1"}
	)
	wants := map[string]want{
		"1F07": deadEnd, "4516": deadEnd, "1F02": fromSw, "4514": fromSw, "1F03": toSw, "4515": toSw,
		"1F05": noLink, "4505": noLink, "1F06": wrongEnd, "4503": wrongEnd,
	}
	got := map[string]int{}
	for _, e := range evs {
		if e.Kind != KindPathNoRoute {
			continue
		}
		got[e.Code]++
		ex := x.Explain(e)
		w, ok := wants[e.Code]
		if !ok || SeverityOf(e.Kind) != check.SeverityWarning || e.From.LID != w.from || e.To.LID != w.to ||
			!strings.Contains(ex.Rule, w.ends+" "+w.why+" (") || !strings.Contains(e.Detail, w.detail) || !strings.HasSuffix(e.Lines[0], e.Detail) {
			t.Errorf("%s: %s, from LID %d to %d, want %+v\nline: %s\nrule: %s", e.Code, SeverityOf(e.Kind), e.From.LID, e.To.LID, w, e.Lines, ex.Rule)
		}
		if w == wrongEnd && (e.From.NodeGUID != guidB-1 || e.From.NodeDesc != "HcaB" || e.From.Num != 1 || e.To.NodeGUID != guidD-1 || e.To.NodeDesc != "HcaD" || e.To.Num != 1) {
			t.Errorf("%s: from %+v to %+v", e.Code, e.From, e.To)
		}
	}
	for code := range wants {
		if got[code] == 0 {
			t.Errorf("no path-no-route event for ERR %s (events: %v)", code, got)
		}
	}
}

// TestLabPathLoop: forwarding tables that loop. On internal/lab's small.net (two
// switches joined by ports 7 and 8), each switch sends HcaC's LID out its port 7 to the
// other, and the SA's walk from HcaB gives up after 64 hops (MAX_HOPS): ERR 1F25 names
// both ends by port GUID, description and port, and 4520 (MultiPathRecord) without the
// ports ("needs more than 65 hops, max 64 hops allowed"). Each is a path-no-route
// warning whose cause is the loop.
func TestLabPathLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("lab: -short")
	}
	l := lab.Start(t, filepath.Join("..", "lab", "testdata", "small.net"), nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tr := l.Dial(t, "HcaA", mad.Options{})
	f, err := query.Sweep(ctx, tr, query.SweepOptions{})
	if err != nil {
		t.Fatal(err)
	}
	guid := map[string]uint64{} // switches by node GUID, HCAs by port 1's GUID
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p.Num == 0 || p.Num == 1 && n.Type == check.NodeCA {
				guid[n.Description] = uint64(p.GUID)
			}
		}
	}
	if guid["Switch1"] == 0 || guid["Switch2"] == 0 || guid["HcaB"] == 0 || guid["HcaC"] == 0 {
		t.Fatalf("small.net's nodes: %v", guid)
	}
	// Each route names the port GUID it leads to; remap_lid moves it to that port's
	// LID, whatever LID the line says.
	var dump strings.Builder
	rA := lab.LFTRoute{LID: 1, Port: 1, GUID: guid["HcaA"], Desc: "HcaA"}
	rB := lab.LFTRoute{LID: 1, Port: 2, GUID: guid["HcaB"], Desc: "HcaB"}
	rC := lab.LFTRoute{LID: 1, Port: 7, GUID: guid["HcaC"], Desc: "HcaC"}
	rSw1 := lab.LFTRoute{LID: 1, Port: 0, GUID: guid["Switch1"], Desc: "Switch1", ToSwitch: true}
	rSw2 := lab.LFTRoute{LID: 1, Port: 0, GUID: guid["Switch2"], Desc: "Switch2", ToSwitch: true}
	dump.WriteString(lab.LFTDump(guid["Switch1"], 0, "Switch1", []lab.LFTRoute{rA, rB, rSw1, rC}))
	rA.Port = 7
	dump.WriteString(lab.LFTDump(guid["Switch2"], 0, "Switch2", []lab.LFTRoute{rA, rSw2, rC}))
	lfts := filepath.Join(l.Dir, "lfts.dump")
	if err := os.WriteFile(lfts, []byte(dump.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	d := l.StartOpenSMDaemon(t, "Default=0x7fff : ALL=full;\n", "routing_engine file", "lfts_file "+lfts)
	if f, err = query.Sweep(ctx, tr, query.SweepOptions{}); err != nil {
		t.Fatal(err)
	}
	lid := map[uint64]uint16{}
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			lid[uint64(p.GUID)] = p.LID
		}
	}
	lidA, lidB, lidC := lid[guid["HcaA"]], lid[guid["HcaB"]], lid[guid["HcaC"]]
	from := d.LogSize()
	args := []string{"PR", "--slid", itoa(int(lidB)), "--dlid", itoa(int(lidC))}
	if out, err := l.ToolAt("HcaA", "saquery", args...); err != nil || strings.TrimSpace(out) != "" {
		t.Fatalf("saquery %v: %q %v (want no path)", args, out, err)
	}
	if _, err := d.WaitLog("ERR 1F25", from, 10*time.Second); err != nil {
		t.Fatalf("%v\n%s", err, tail(d.LogText(), 3000))
	}
	from = d.LogSize()
	if err := multiPath(ctx, l, "HcaA", lidA, guid["HcaB"], guid["HcaC"], 0); err != nil {
		t.Fatal(err)
	}
	if _, err := d.WaitLog("ERR 4520", from, 10*time.Second); err != nil {
		t.Fatalf("%v\n%s", err, tail(d.LogText(), 3000))
	}

	var evs []*Event
	a := NewAssembler(time.Now(), time.Local, func(e *Event) { evs = append(evs, e) })
	a.Unexplained = func(u *Unexplained) { t.Errorf("not explained: line %d: %s", u.Line, u.Message) }
	if err := Read(context.Background(), strings.NewReader(d.LogText()), a); err != nil {
		t.Fatal(err)
	}
	x := &Explainer{R: NewResolver(f, nil)}
	got := map[string]bool{}
	for _, e := range evs {
		if e.Kind != KindPathNoRoute {
			continue
		}
		got[e.Code] = true
		num := 1
		if e.Code == "4520" {
			num = -1 // the MultiPathRecord's line names no port
		}
		rule := x.Explain(e).Rule
		if SeverityOf(e.Kind) != check.SeverityWarning || e.From.GUID != check.GUID(guid["HcaB"]) || e.From.NodeDesc != "HcaB" || e.From.Num != num ||
			e.To.LID != lidC || e.To.GUID != check.GUID(guid["HcaC"]) || e.To.NodeDesc != "HcaC" || e.To.Num != num ||
			!strings.Contains(rule, "the route is longer than 64 hops: the forwarding tables loop") {
			t.Errorf("%s: %+v\n%s", e.Code, e, rule)
		}
	}
	if !got["1F25"] || !got["4520"] {
		t.Errorf("events %v in\n%s", got, tail(d.LogText(), 3000))
	}
}
