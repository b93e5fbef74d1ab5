package query

import (
	"errors"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
)

// TestGUIDSelector: a CA port GUID is reached through its LID, a switch's (port 0)
// through the switch's directed route, a node GUID through its route with --port
// kept; an unknown GUID is an environment error naming the sweep.
func TestGUIDSelector(t *testing.T) {
	f, err := ReadFabricFile("../../cmd/ibkey/testdata/fabric/small.json")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		guid check.GUID
		base FabricSelector
		want string
	}{
		{0x10000a, FabricSelector{}, "lid 6"},
		{0x10000b, FabricSelector{}, "lid 7"},
		{0x200001, FabricSelector{}, "DR path 0,1,7 port 0"},
		{0x200001, FabricSelector{AllPorts: true}, "DR path 0,1,7 (all ports)"},
		{0x100009, FabricSelector{}, "DR path 0,1,3"},
		{0x100009, FabricSelector{Port: 2, HasPort: true}, "DR path 0,1,3 port 2"},
	}
	for _, tc := range cases {
		sel, err := GUIDSelector(f, tc.guid, tc.base)
		if err != nil || sel.String() != tc.want {
			t.Errorf("GUID %s: %q, %v; want %q", tc.guid, sel.String(), err, tc.want)
		}
	}
	_, err = GUIDSelector(f, 0x123, FabricSelector{})
	var env *EnvError
	if !errors.As(err, &env) || !strings.Contains(err.Error(), "no port or node with GUID 0x0000000000000123 in the fabric") {
		t.Errorf("unknown GUID: %v", err)
	}
}
