package cantalk

import (
	"os"
	"path/filepath"
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
