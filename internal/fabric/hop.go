package fabric

import "github.com/ibkey/ibkey/internal/check"

// The switch-port rule (check.JudgeHop) applied in a swept fabric, shared by the audit
// (AuditFabric: hca-key-not-on-switch) and can-talk over a known fabric (check.CanTalk
// with Endpoint.Fabric), so the two cannot disagree.

// FirstHop returns the switch port cabled to an end port; ok is false when the end
// port is not cabled to a switch (back to back, or not in the fabric).
func (f *Fabric) FirstHop(end check.PortID) (sw check.PortID, ok bool) {
	p := f.Port(end)
	if p == nil || p.Peer == nil {
		return check.PortID{}, false
	}
	n := f.Node(p.Peer.Node)
	if n == nil || n.Type != check.NodeSwitch {
		return check.PortID{}, false
	}
	return *p.Peer, true
}

// CheckHop applies the switch-port rule to key at the switch port cabled to end. ok is
// false when end is not cabled to a switch port (nothing to check).
func (f *Fabric) CheckHop(end check.PortID, key check.PartitionKey) (h check.HopCheck, ok bool) {
	swID, ok := f.FirstHop(end)
	if !ok {
		return check.HopCheck{}, false
	}
	sw := f.Port(swID)
	return check.JudgeHop(end, swID, key, sw.PKeys, sw.Enforcement), true
}
