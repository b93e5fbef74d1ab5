package query

import (
	"errors"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
)

// TestAddPortTypes: --router names router ports, "none" says there are none (alone),
// and without --router or a sweep the types are not complete.
func TestAddPortTypes(t *testing.T) {
	types := map[check.GUID]check.NodeType{}
	if complete, err := AddPortTypes(types, nil, nil); complete || err != nil || len(types) != 0 {
		t.Errorf("nothing given: complete %v, err %v, %v", complete, err, types)
	}
	if complete, err := AddPortTypes(types, []string{"none"}, nil); !complete || err != nil || len(types) != 0 {
		t.Errorf("none: complete %v, err %v, %v", complete, err, types)
	}
	if complete, err := AddPortTypes(types, []string{"guid=0x0002c90300000001"}, nil); !complete || err != nil || types[0x0002c90300000001] != check.NodeRouter {
		t.Errorf("a router: complete %v, err %v, %v", complete, err, types)
	}
	var ue *UsageError
	if _, err := AddPortTypes(types, []string{"none", "0x1"}, nil); !errors.As(err, &ue) {
		t.Errorf("none with a GUID: %v, want a usage error", err)
	}
	if _, err := AddPortTypes(types, []string{"bogus"}, nil); err == nil {
		t.Error("a bad GUID is accepted")
	}
}
