package fabric

import (
	"fmt"
	"strings"

	"github.com/ibkey/ibkey/internal/check"
)

// The switch-port rule (check.JudgeHop) applied in a swept fabric, shared by the audit
// (AuditFabric: hca-key-not-on-switch) and can-talk over a known fabric (check.CanTalk
// with Endpoint.Fabric), so the two cannot disagree.

// CheckHop applies the switch-port rule to key at the switch port cabled to end. ok is
// false when end is not cabled to a switch port (back to back, no link, or not in the
// fabric) or that switch has no partition enforcement (Node.NoEnforcementCap): nothing
// to check. A link that may be up whose far end was not read (peerNotRead) is a hop
// not checked (check.PeerNotReadHop), not nothing.
func (f *Fabric) CheckHop(end check.PortID, key check.PartitionKey) (h check.HopCheck, ok bool) {
	n := f.Node(end.Node)
	if n == nil {
		return check.HopCheck{}, false
	}
	p := n.Port(end.Port)
	if p == nil {
		return check.HopCheck{}, false
	}
	if p.Peer == nil {
		if why := peerNotRead(n, p); why != "" {
			return check.PeerNotReadHop(end, key, why), true
		}
		return check.HopCheck{}, false
	}
	if n := f.Node(p.Peer.Node); n == nil || n.Type != check.NodeSwitch || n.NoEnforcementCap() {
		return check.HopCheck{}, false
	}
	sw := f.Port(*p.Peer)
	return check.JudgeHop(end, *p.Peer, key, sw.PKeys, sw.Enforcement), true
}

// links yields the switch ports of the subnet cabled to another switch of it that may
// enforce partitions: enforcement on, or its bits not read. In every pass of its P_Key
// manager OpenSM turns enforcement off on each such port, whatever part_enforce says
// ("clear partition enforcement on inter-switch links", osm_pkey_mgr.c
// osm_pkey_mgr_process): one found on was set after that pass or by something else,
// and it drops the packets crossing the link whose partition its table lacks (IBA
// 10.9.3). The audit (enforcing-between-switches) and can-talk (BetweenSwitches)
// judge them alike, through linkHop.
func (f *Fabric) links(yield func(check.PortID, *Port) bool) {
	for _, n := range f.Nodes {
		if n.Type != check.NodeSwitch || n.NoEnforcementCap() {
			continue
		}
		for _, p := range n.Ports {
			if p.Num == 0 || p.Peer == nil || p.Enforcement != nil && !p.Enforcement.Inbound && !p.Enforcement.Outbound {
				continue
			}
			if peer := f.Node(p.Peer.Node); peer == nil || peer.Type != check.NodeSwitch || !f.InSubnet(*p.Peer) {
				continue
			}
			if !yield(check.PortID{Node: n.GUID, Port: p.Num}, p) {
				return
			}
		}
	}
}

// linkHop is what the link port p (id) does with key's packets, the worse of both
// ways: the switch-port rule (check.JudgeHop), with the switch it faces as the end.
// HopUnknown when its table, or (the table lacking key) its enforcement bits, were
// not read.
func linkHop(id check.PortID, p *Port, key check.PartitionKey) (check.HopCheck, check.HopResult) {
	h := check.JudgeHop(*p.Peer, id, key, p.PKeys, p.Enforcement)
	return h, max(h.FromEnd, h.ToEnd)
}

func enforcingDirs(e *check.Enforcement) string {
	var dirs []string
	if e.Inbound {
		dirs = append(dirs, "inbound")
	}
	if e.Outbound {
		dirs = append(dirs, "outbound")
	}
	return strings.Join(dirs, ", ")
}

// BetweenSwitches implements check.HopFabric: a sentence for each link between
// switches whose port drops key's packets, or may (links, linkHop): routes are not
// read, so either makes key not known to pass.
func (f *Fabric) BetweenSwitches(key check.PartitionKey) []string {
	var out []string
	for id, p := range f.links {
		h, res := linkHop(id, p, key)
		where := fmt.Sprintf("%s, on a link to the switch port %s,", f.Label(id), f.Label(*p.Peer))
		switch {
		case res == check.HopDrops:
			out = append(out, fmt.Sprintf("%s lacks partition %s and enforces partitions (%s): it drops that partition's packets routed over the link, and which routes cross it was not read (OpenSM turns such enforcement off in every sweep)",
				where, key, enforcingDirs(p.Enforcement)))
		case res == check.HopUnknown && !h.TableRead:
			out = append(out, fmt.Sprintf("%s enforces partitions and its P_Key table was not read: whether it passes partition %s is not known, nor which routes cross it", where, key))
		case res == check.HopUnknown:
			out = append(out, fmt.Sprintf("%s lacks partition %s and its enforcement bits were not read: it drops that partition's packets routed over the link if it enforces partitions (OpenSM turns that off in every sweep), and which routes cross it was not read", where, key))
		}
	}
	return out
}
