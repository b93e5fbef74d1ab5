package fabric

import (
	"testing"

	"github.com/ibkey/ibkey/internal/check"
)

// TestNodeLabelIsLabel: the audit's label of a node in hand is Label's, whatever the
// description holds (quotes, escapes, bytes that are not UTF-8, nothing).
func TestNodeLabelIsLabel(t *testing.T) {
	for i, desc := range []string{"", "HcaA", `sw "core" 1`, "tab\there", "bad\xff\xfebytes", "ünï", "back\\slash", "\x00nul"} {
		n := &Node{GUID: check.GUID(0x1000 + i), Description: desc}
		f := &Fabric{Nodes: []*Node{n}}
		for _, port := range []int{0, 1, 36, 255} {
			id := check.PortID{Node: n.GUID, Port: port}
			if got, want := nodeLabel(n, port), f.Label(id); got != want {
				t.Errorf("%q port %d: nodeLabel %q, Label %q", desc, port, got, want)
			}
		}
	}
}
