package fabric

import "github.com/ibkey/ibkey/internal/check"

// The switch-port rule (check.JudgeHop) applied in a swept fabric, shared by the audit
// (AuditFabric: hca-key-not-on-switch) and can-talk over a known fabric (check.CanTalk
// with Endpoint.Fabric), so the two cannot disagree.

// CheckHop applies the switch-port rule to key at the switch port cabled to end. ok is
// false when end is not cabled to a switch port (back to back, or not in the fabric)
// or that switch has no partition enforcement (Node.NoEnforcementCap): nothing to check.
func (f *Fabric) CheckHop(end check.PortID, key check.PartitionKey) (h check.HopCheck, ok bool) {
	p := f.Port(end)
	if p == nil || p.Peer == nil {
		return check.HopCheck{}, false
	}
	if n := f.Node(p.Peer.Node); n == nil || n.Type != check.NodeSwitch || n.NoEnforcementCap() {
		return check.HopCheck{}, false
	}
	sw := f.Port(*p.Peer)
	return check.JudgeHop(end, *p.Peer, key, sw.PKeys, sw.Enforcement), true
}
