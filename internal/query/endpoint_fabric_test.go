package query

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
)

const smallFabricFile = "../../cmd/ibkey/testdata/fabric/small.json"

func readSmall(t *testing.T) *fabric.Fabric {
	t.Helper()
	f, err := ReadFabricFile(smallFabricFile)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// findIn resolves one spec in f as can-talk does.
func findIn(t *testing.T, f *fabric.Fabric, spec string) (*fabric.Node, *fabric.Port, error) {
	t.Helper()
	_, n, p, err := findSwept(f, nil, specs(t, spec)[0])
	return n, p, err
}

// TestFindSweptSwitchExternalPort: a switch's external port is no endpoint (no QP
// is there), by node= or lid= with port=: bad input naming the port and port 0; the
// switch's port 0 resolves. Every switch port of the sweep is tried.
func TestFindSweptSwitchExternalPort(t *testing.T) {
	f := readSmall(t)
	switches := 0
	for _, n := range f.Nodes {
		if n.Type != check.NodeSwitch {
			continue
		}
		switches++
		lid := n.Port(0).LID
		for _, p := range n.Ports {
			for _, spec := range []string{
				fmt.Sprintf("node=%s,port=%d", n.Description, p.Num),
				fmt.Sprintf("lid=%d,port=%d", lid, p.Num),
				fmt.Sprintf("%s,port=%d", n.GUID, p.Num),
			} {
				gn, gp, err := findIn(t, f, spec)
				if p.Num == 0 {
					if err != nil || gn != n || gp != p {
						t.Errorf("%s: %v, %v, %v; want the switch's port 0", spec, gn, gp, err)
					}
					continue
				}
				var usage *UsageError
				if !errors.As(err, &usage) || !strings.Contains(err.Error(), "is an external port: no QP is there") ||
					!strings.Contains(err.Error(), "port="+strconv.Itoa(p.Num)) {
					t.Errorf("%s: %T %v; want a *UsageError saying port %d is an external port", spec, err, err, p.Num)
				}
			}
		}
	}
	if switches == 0 {
		t.Fatal("no switch in the fixture")
	}
}

// TestFindSweptPortGUIDOtherPort: a port GUID names its port; port= naming another
// port of its node is bad input (it resolved to that other port, labelled with the
// GUID of the first); port= naming the same port resolves to it. Every CA port with a
// GUID in the sweep is tried against every port number of its node.
func TestFindSweptPortGUIDOtherPort(t *testing.T) {
	f := readSmall(t)
	tried := 0
	for _, n := range f.Nodes {
		if n.Type != check.NodeCA {
			continue
		}
		for _, own := range n.Ports {
			if own.GUID == 0 {
				continue
			}
			for _, q := range n.Ports {
				tried++
				spec := fmt.Sprintf("%s,port=%d", own.GUID, q.Num)
				_, gp, err := findIn(t, f, spec)
				if q == own {
					if err != nil || gp != own {
						t.Errorf("%s: %v, %v; want port %d", spec, gp, err, own.Num)
					}
					continue
				}
				var usage *UsageError
				if !errors.As(err, &usage) || !strings.Contains(err.Error(), "is the port GUID of") {
					t.Errorf("%s: %T %v (port %v); want a *UsageError: the GUID is port %d's", spec, err, err, gp, own.Num)
				}
			}
		}
	}
	if tried == 0 {
		t.Fatal("no CA port with a GUID in the fixture")
	}
}

// TestFindLIDTwice: a LID two end ports of the subnet hold (the same LID, or LMC
// ranges that overlap) names neither: bad input naming both, never the first found.
// Each CA port of the sweep is given, in turn, the LID of another end port.
func TestFindLIDTwice(t *testing.T) {
	type holder struct {
		n *fabric.Node
		p *fabric.Port
	}
	var ends []holder
	for _, n := range readSmall(t).Nodes {
		for _, p := range n.Ports {
			if n.IsEndPort(p) && p.LID != 0 {
				ends = append(ends, holder{n, p})
			}
		}
	}
	if len(ends) < 2 {
		t.Fatal("fewer than two end ports with LIDs in the fixture")
	}
	for i, a := range ends {
		for j, b := range ends {
			if i == j || a.n.Type != check.NodeCA {
				continue
			}
			for _, lmc := range []uint8{0, 2} {
				f := readSmall(t)
				pa := f.Node(a.n.GUID).Port(a.p.Num)
				lid := b.p.LID
				// The same LID, or (LMC 2) a range starting below it that holds it.
				pa.LID, pa.LMC = lid-min(lid-1, uint16(lmc)), lmc
				_, _, err := FindLID(f, lid)
				var usage *UsageError
				if !errors.As(err, &usage) || !strings.Contains(err.Error(), fmt.Sprintf("LID %d is held by 2 ports", lid)) ||
					!strings.Contains(err.Error(), f.Label(check.PortID{Node: a.n.GUID, Port: a.p.Num})) ||
					!strings.Contains(err.Error(), f.Label(check.PortID{Node: b.n.GUID, Port: b.p.Num})) {
					t.Errorf("%s LID %d LMC %d beside %s LID %d: %v; want a *UsageError naming both",
						a.n.Description, pa.LID, lmc, b.n.Description, lid, err)
				}
				if _, _, err := findIn(t, f, fmt.Sprintf("lid=%d", lid)); !errors.As(err, &usage) || !strings.HasSuffix(err.Error(), "name the port by node= or its port GUID") {
					t.Errorf("lid=%d held twice: %T %v; want a *UsageError", lid, err, err)
				}
			}
		}
	}
	// Each LID held once still resolves to its port.
	f := readSmall(t)
	for _, e := range ends {
		n, p, err := FindLID(f, e.p.LID)
		if err != nil || n.GUID != e.n.GUID || p.Num != e.p.Num {
			t.Errorf("LID %d: %v %v %v; want %s[%d]", e.p.LID, n, p, err, e.n.Description, e.p.Num)
		}
	}
}
