package query

import "github.com/ibkey/ibkey/internal/fabric"

// The ports of a CA that no route arrives on.
//
// A CA answers P_KeyTable (and reports its port GUID in NodeInfo) only for the port a
// directed-route SMP arrives on (IBA 14.2.5.7), and it neither forwards an SMP from
// one of its ports to another (IBA C14-9:2) nor sends one out of a port other than the
// one it was sent from (C14-9:1). So the sweep reaches a CA port only from the switch
// cabled to it: the local CA's second port too, when a switch of the subnet faces it
// (that switch probes it like any port whose peer is unknown), as ibnetdiscover and
// OpenSM reach it.
//
// A CA port with a link that no route reached by the end of a whole sweep is not in
// the subnet swept: it is cabled to another CA (a back-to-back link), to a switch of
// another subnet, or to nothing the subnet's switches lead to. Its PortInfo (read
// through the port a route did reach) is kept; its table and its peer are not this
// subnet's, and not reading them is not a gap. A port that might sit behind a link
// that did not answer is not told apart: that link is counted as a gap already.

// notReachedYet is the PKeysError of a CA port no route has reached so far; at the end
// of a whole sweep it becomes notReached.
const notReachedYet = "not read yet: no directed route arrived on this port"

// notReached says why the table of a CA port outside the swept subnet was not read.
const notReached = fabric.NotReadPrefix + "no directed route from the swept subnet arrives on this port (a CA does not forward SMPs between its ports, IBA C14-9): its link leads out of the subnet"

// markNotReached marks the CA ports still not reached after a whole sweep.
func (s *sweeper) markNotReached() {
	for _, n := range s.order {
		for _, p := range n.node.Ports {
			if p.PKeys == nil && p.PKeysError == notReachedYet {
				p.PKeysError = notReached
			}
		}
	}
}
