package cantalk

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/ibverbs/mad"
)

// TestRefusalForRouting: --sa --sm-log quotes the SM's line for a path it refused for
// routing (path-no-route: OpenSM walks the route before any partition check), not only
// one refused for a partition: by the LIDs of the PathRecord asked, source to
// destination (ERR 1F07 names only the destination), never another path's line, and
// says it is a refusal for routing.
func TestRefusalForRouting(t *testing.T) {
	const (
		deadEnd = "Nov 28 08:41:58 848998 [54B5A6C0] 0x01 -> pr_rcv_get_path_parms: ERR 1F07: Dead end path on switch Sw1 (GUID: 0x0000000000200000) to LID 5"
		noRoute = "Nov 28 08:41:59 848998 [54B5A6C0] 0x01 -> pr_rcv_get_path_parms: ERR 1F02: Cannot find routing from LID 3 to LID 6 on switch Sw1 (GUID: 0x0000000000200000)"
	)
	path := filepath.Join(t.TempDir(), "opensm.log")
	if err := os.WriteFile(path, []byte(deadEnd+"\n"+noRoute+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		la, lb uint16
		want   string
	}{
		{3, 5, deadEnd}, {4, 5, deadEnd}, {3, 6, noRoute},
		{4, 6, ""}, {5, 3, ""}, {6, 3, ""},
	} {
		r := scanRefusal(path, 0, refusalEnds{la: c.la, lb: c.lb}, 0x8001)
		if got, routing := r.Line, r.Routing; got != c.want || routing != (c.want != "") {
			t.Errorf("LID %d to %d: %q (routing %v), want %q", c.la, c.lb, got, routing, c.want)
		}
	}
}

// TestRefusalNamingBothEnds: a line that names both ends of the path asked is quoted
// before one that names only its destination (ERR 1F07), whatever their order: the
// dead end may be another requester's path to the same LID, refused in the same
// moments, while the SA refused this one for its partition (1F1A) or for a route it
// names from this source (1F02).
func TestRefusalNamingBothEnds(t *testing.T) {
	const (
		deadEnd   = "Nov 28 08:41:58 848998 [54B5A6C0] 0x01 -> pr_rcv_get_path_parms: ERR 1F07: Dead end path on switch Sw1 (GUID: 0x0000000000200000) to LID 5"
		partition = "Nov 28 08:41:58 900061 [7DDD96C0] 0x01 -> pr_rcv_get_path_parms: ERR 1F1A: Ports 0x0002c90300000221 (HcaC port 1) and 0x0002c90300000231 (HcaD port 1) do not share specified PKey 0x8001"
		noRoute   = "Nov 28 08:41:59 848998 [54B5A6C0] 0x01 -> pr_rcv_get_path_parms: ERR 1F02: Cannot find routing from LID 3 to LID 5 on switch Sw1 (GUID: 0x0000000000200000)"
	)
	ends := refusalEnds{ga: 0x0002c90300000221, gb: 0x0002c90300000231, la: 3, lb: 5}
	for _, c := range []struct {
		name    string
		lines   []string
		want    string
		routing bool
	}{
		{"partition after the dead end", []string{deadEnd, partition}, partition, false},
		{"partition before the dead end", []string{partition, deadEnd}, partition, false},
		{"route from this source before the dead end", []string{noRoute, deadEnd}, noRoute, true},
		{"the dead end alone", []string{deadEnd}, deadEnd, true},
	} {
		path := filepath.Join(t.TempDir(), "opensm.log")
		if err := os.WriteFile(path, []byte(strings.Join(c.lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		r := scanRefusal(path, 0, ends, 0x8001)
		if got, routing := r.Line, r.Routing; got != c.want || routing != c.routing {
			t.Errorf("%s: %q (routing %v), want %q (routing %v)", c.name, got, routing, c.want, c.routing)
		}
	}
}

// TestRefusalForQoS: a path the SM refused for its QoS policy (ERR 1F1D: the level
// does not list the P_Key asked) is quoted with the level's name, and is neither a
// refusal for routing nor one for the partition.
func TestRefusalForQoS(t *testing.T) {
	const qos = `Nov 28 20:29:27 865475 [5220A6C0] 0x01 -> pr_rcv_get_path_parms: ERR 1F1D: QoS level "QD" doesn't define specified PKey 0x0003 for ports 0x0002c90300000231 (HcaD port 1) and 0x0002c90300000221 (HcaC port 1)`
	path := filepath.Join(t.TempDir(), "opensm.log")
	if err := os.WriteFile(path, []byte(qos+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ends := refusalEnds{ga: 0x0002c90300000231, gb: 0x0002c90300000221, la: 5, lb: 4}
	if r := scanRefusal(path, 0, ends, 0x8003); r.Line != qos || r.Routing || r.QoSLevel != "QD" {
		t.Errorf("got %+v, want the line, QoS level QD", r)
	}
	if r := scanRefusal(path, 0, ends, 0x8002); r.Line != "" {
		t.Errorf("P_Key 0x8002: got %+v, want no line (the refusal is of 0x0003)", r)
	}
}

// TestUnaskedReason: an SA error status is an answer, neither a path nor a refusal
// (it said "could not be asked"); a timeout of the PathRecord query names what
// OpenSM does not answer; one before it (finding the SM) does not.
func TestUnaskedReason(t *testing.T) {
	sa := &mad.StatusError{Addr: mad.LIDAddress(1), Attr: mad.AttrPathRecord, Status: 0x0200, Class: mad.ClassSubnAdm}
	timeout := &mad.TimeoutError{Addr: mad.LIDAddress(1), Timeout: time.Second}
	for _, c := range []struct {
		err       error
		sent      bool
		want, not string
	}{
		{sa, true, "the Subnet Manager answered an error, neither a path nor a refusal: mad: lid 1: attribute 0x0035: status 0x0200 (ERR_REQ_INVALID)", "could not be asked"},
		{timeout, true, "could not be asked", ""},
		{timeout, false, "could not be asked", "OpenSM answers nothing"},
	} {
		got := unaskedReason(c.err, c.sent)
		if !strings.Contains(got, c.want) || c.not != "" && strings.Contains(got, c.not) {
			t.Errorf("%v (sent %v): %q, want %q without %q", c.err, c.sent, got, c.want, c.not)
		}
		if c.sent && c.err == timeout && !strings.Contains(got, "ERR 1F16") {
			t.Errorf("timeout of the query: %q names no cause", got)
		}
	}
}
