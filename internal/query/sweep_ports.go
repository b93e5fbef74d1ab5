package query

import (
	"context"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"

	"github.com/ibkey/ibkey/internal/ibverbs/mad"
)

// The other ports of a multi-port CA.
//
// A CA answers P_KeyTable (and reports its port GUID in NodeInfo) only for the port a
// directed-route SMP arrives on (IBA 14.2.5.7). The sweep reaches a CA port by probing
// from the switch cabled to it, except for the ports of the local CA: the local node
// probes its own cabled ports itself, which makes the link known from the local side,
// so the switch at the far end never probes back and no route ever arrives on the
// local CA's second port. ibnetdiscover reports that port with its GUID (the route
// back through the switch); so does OpenSM, which programs its table.

// otherPortProbes returns one NodeInfo probe per CA port whose cable leads to a switch
// already read but that no route has arrived on: the switch's route plus the switch
// port facing the CA, which arrives on that CA port. tried holds the routes already
// probed, so a CA that answers on some other port is not probed forever.
func (s *sweeper) otherPortProbes(tried map[string]bool) []probe {
	var probes []probe
	for _, n := range s.order {
		if n.info.NodeType == mad.NodeSwitch {
			continue
		}
		for _, p := range n.node.Ports {
			if _, reached := n.caPaths[p.Num]; reached || p.Peer == nil {
				continue
			}
			sw := s.nodes[p.Peer.Node]
			if sw == nil || sw.info.NodeType != mad.NodeSwitch || len(sw.path) >= mad.MaxHops {
				continue
			}
			path := append(append(make([]uint8, 0, len(sw.path)+1), sw.path...), uint8(p.Peer.Port))
			key := string(path)
			if tried[key] {
				continue
			}
			tried[key] = true
			probes = append(probes, probe{from: sw, port: p.Peer.Port, path: path})
		}
	}
	return probes
}

// sendProbes sends a NodeInfo Get through each probe's route and records the replies.
func (s *sweeper) sendProbes(ctx context.Context, probes []probe) {
	calls := make([]mad.Call, len(probes))
	for i, pr := range probes {
		calls[i] = mad.Call{Req: mad.Request{Addr: mad.Address{Directed: true, Path: pr.path}, Class: mad.ClassSubnLID, Method: mad.MethodGet, Attr: mad.AttrNodeInfo}}
	}
	mad.Exchange(ctx, s.t, calls)
	for i := range probes {
		if err := calls[i].Err; err != nil {
			probes[i].err = err
			continue
		}
		probes[i].info, probes[i].err = mad.ParseNodeInfo(calls[i].Data())
	}
}

// outsideSubnet: a port past a subnet boundary (fabric.Fabric.PortScope); its table not
// being read is not a gap of this subnet's sweep.
func outsideSubnet(f *fabric.Fabric, n *fabric.Node, p *fabric.Port) bool {
	s, _ := f.PortScope(check.PortID{Node: n.GUID, Port: p.Num})
	return s == fabric.ScopeUnmanaged || s == fabric.ScopeOtherSubnet
}
