package query

import (
	"errors"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
)

// TestSetPortTypes: --router names router ports, "none" says there are none (alone),
// and without --router or a sweep the types are not complete.
func TestSetPortTypes(t *testing.T) {
	p := &Partitions{}
	if err := p.SetPortTypes(nil, nil); p.TypesComplete || err != nil || len(p.Types) != 0 {
		t.Errorf("nothing given: complete %v, err %v, %v", p.TypesComplete, err, p.Types)
	}
	if err := p.SetPortTypes([]string{"none"}, nil); !p.TypesComplete || err != nil || len(p.Types) != 0 {
		t.Errorf("none: complete %v, err %v, %v", p.TypesComplete, err, p.Types)
	}
	if err := p.SetPortTypes([]string{"guid=0x0002c90300000001"}, nil); !p.TypesComplete || err != nil || p.Types[0x0002c90300000001] != check.NodeRouter {
		t.Errorf("a router: complete %v, err %v, %v", p.TypesComplete, err, p.Types)
	}
	var ue *UsageError
	if err := p.SetPortTypes([]string{"none", "0x1"}, nil); !errors.As(err, &ue) {
		t.Errorf("none with a GUID: %v, want a usage error", err)
	}
	if err := p.SetPortTypes([]string{"bogus"}, nil); err == nil {
		t.Error("a bad GUID is accepted")
	}
}
