package cantalk

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
		if got, routing := scanRefusal(path, 0, refusalEnds{la: c.la, lb: c.lb}, 0x8001); got != c.want || routing != (c.want != "") {
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
		if got, routing := scanRefusal(path, 0, ends, 0x8001); got != c.want || routing != c.routing {
			t.Errorf("%s: %q (routing %v), want %q (routing %v)", c.name, got, routing, c.want, c.routing)
		}
	}
}
