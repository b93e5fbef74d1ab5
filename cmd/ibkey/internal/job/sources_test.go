package job

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/demo"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/job"
	"github.com/ibkey/ibkey/internal/query"
)

// nodeInfosTo counts the NodeInfo SMPs sent to one LID.
type nodeInfosTo struct {
	mad.Transport
	lid uint16
	n   atomic.Int64
}

func (c *nodeInfosTo) Do(ctx context.Context, req mad.Request) (*mad.Packet, error) {
	if !req.Addr.Directed && req.Addr.LID == c.lid && req.Attr == mad.AttrNodeInfo {
		c.n.Add(1)
	}
	return c.Transport.Do(ctx, req)
}

// TestReadLIDsOnce: a --lid that does not answer is a port not read, named by its LID
// with its own error, taken from the read of all the LIDs (query.PartialError): it is
// asked once, never read a second time alone for its error. The others are read.
func TestReadLIDsOnce(t *testing.T) {
	tr, err := demo.OpenTransport("mlx5_0", 1, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	dead := &nodeInfosTo{Transport: tr, lid: 99}
	fab := &query.Fabric{T: dead, Via: demo.Via}
	sels := []query.FabricSelector{{Addr: mad.LIDAddress(9)}, {Addr: mad.LIDAddress(99)}, {Addr: mad.LIDAddress(4)}}
	ports, unread, err := readLIDs(context.Background(), fab, sels)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range ports {
		got = append(got, p.Label())
	}
	if len(ports) != 2 || ports[0].Device != "demo-node HCA-2" || ports[1].Device != "node02" {
		t.Errorf("ports %q, want demo-node HCA-2's and node02's", got)
	}
	if len(unread) != 1 || unread[0].Host != "lid 99" || unread[0].Port != -1 || !strings.HasPrefix(unread[0].What(), "lid 99: no answer via "+demo.Via) {
		t.Errorf("unread %+v, want lid 99 with its no-answer error", unread)
	}
	if n := dead.n.Load(); n != 1 {
		t.Errorf("%d NodeInfo SMPs sent to lid 99, want 1 (one read of every LID)", n)
	}
}

// TestReadPortsAnotherPort: a port found by a sweep whose address answers as another
// port now (the fabric changed since) is not read, naming what answers; never that
// other port taken for it.
func TestReadPortsAnotherPort(t *testing.T) {
	tr, err := demo.OpenTransport("mlx5_0", 1, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	fab := &query.Fabric{T: tr, Via: demo.Via}
	sels := []query.FabricSelector{{Addr: mad.LIDAddress(9)}, {Addr: mad.LIDAddress(4)}}
	want := []string{"demo-node HCA-2", "node03"} // the sweep's: node03 is at LID 5
	ports, unread, err := readPorts(context.Background(), fab, sels,
		func(i int, v *query.PortView) bool { return v.Device.Name == want[i] },
		func(_ int, v *query.PortView) *job.Port { return job.PortFromView(v.Device.Name, v) },
		func(i int, err error) job.Unread {
			return job.Unread{Host: want[i], Port: -1, Name: sels[i].String(), Why: err.Error()}
		})
	if err != nil {
		t.Fatal(err)
	}
	if len(ports) != 1 || ports[0].Device != "demo-node HCA-2" {
		t.Errorf("ports %+v, want demo-node HCA-2's alone", ports)
	}
	if len(unread) != 1 || unread[0].Host != "node03" || !strings.HasPrefix(unread[0].What(), "lid 4: answers as node02/1 (node 0x") {
		t.Errorf("unread %+v, want node03 not read: lid 4: answers as node02/1", unread)
	}
}

// TestFabricPortsLIDHeldTwice: --lid L, where two end ports of the sweep hold L, is
// bad input naming both (query.FindLID), never the first port found; each LID held
// once still picks its port.
func TestFabricPortsLIDHeldTwice(t *testing.T) {
	f, err := query.ReadFabricFile("../../testdata/fabric/small.json")
	if err != nil {
		t.Fatal(err)
	}
	hcaB := f.FindNodes("HcaB")[0].Port(1)
	ports, _, err := fabricPorts(f, []uint16{hcaB.LID}, nil)
	if err != nil || len(ports) != 1 || ports[0].Num != 1 {
		t.Fatalf("LID %d held once: %v, %v", hcaB.LID, ports, err)
	}
	lid := f.FindNodes("HcaA")[0].Port(1).LID
	hcaB.LID = lid
	_, _, err = fabricPorts(f, []uint16{lid}, nil)
	var usage *query.UsageError
	if !errors.As(err, &usage) || !strings.HasPrefix(err.Error(), "--lid: LID") || !strings.HasSuffix(err.Error(), "name the host with --node") ||
		!strings.Contains(err.Error(), `"HcaA"[1]`) || !strings.Contains(err.Error(), `"HcaB"[1]`) {
		t.Errorf("LID %d held by HcaA[1] and HcaB[1]: %T %v; want a *query.UsageError naming both", lid, err, err)
	}
}
