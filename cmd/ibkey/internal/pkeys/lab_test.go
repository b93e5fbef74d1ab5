package pkeys

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
	"github.com/ibkey/ibkey/internal/lab"
)

// TestLabGUID: --guid (-G) reads the same port as the directed route to it: the
// GUID is found by a sweep of the simulated fabric (issue 12 item 9).
func TestLabGUID(t *testing.T) {
	l := lab.Start(t, "../../../../internal/lab/testdata/small.net", nil)
	ibsim := "--ibsim=" + l.SockName
	for _, dr := range []string{"0,1", "0"} {
		byDR := cmdtest.Run(t, root, false, nil, "pkeys", ibsim, "--dr", dr, "-o", "json", "--mad-retries", "1")
		if byDR.Code != 0 {
			t.Fatalf("--dr %s: %+v", dr, byDR)
		}
		var doc struct {
			Ports []struct {
				NodeGUID string `json:"node_guid"`
			} `json:"ports"`
		}
		if err := json.Unmarshal([]byte(byDR.Stdout), &doc); err != nil || len(doc.Ports) != 1 {
			t.Fatalf("--dr %s: %v\n%s", dr, err, byDR.Stdout)
		}
		g := doc.Ports[0].NodeGUID
		t.Logf("--dr %s: node %s", dr, g)
		byGUID := cmdtest.Run(t, root, false, nil, "pkeys", ibsim, "-G", g, "-o", "json", "--mad-retries", "1")
		if byGUID.Code != 0 || !strings.Contains(byGUID.Stderr, "GUID "+g+" is ") {
			t.Fatalf("-G %s: %+v", g, byGUID)
		}
		// The address read through differs (LID or route); the table does not.
		strip := func(s string) string {
			var out []string
			for _, line := range strings.Split(s, "\n") {
				if !strings.Contains(line, `"address"`) {
					out = append(out, line)
				}
			}
			return strings.Join(out, "\n")
		}
		if strip(byGUID.Stdout) != strip(byDR.Stdout) {
			t.Errorf("-G %s:\n%s\n--dr %s:\n%s", g, byGUID.Stdout, dr, byDR.Stdout)
		}
	}
	r := cmdtest.Run(t, root, false, nil, "pkeys", ibsim, "--guid", "0x0123456789abcdef", "--mad-retries", "1")
	if r.Code != 3 || !strings.Contains(r.Stderr, "no port or node with GUID 0x0123456789abcdef in the fabric") {
		t.Errorf("unknown GUID: %+v", r)
	}
}
