package check

import (
	"fmt"
	"slices"
)

// The switch-port rule, shared by the audit (internal/fabric AuditFabric:
// hca-key-not-on-switch) and
// can-talk over a known fabric (CanTalk with Endpoint.Fabric), so the two cannot
// disagree.
//
// A switch port with partition enforcement checks the P_Key of every packet against
// its own table (IBA 10.9.4, PortInfo PartitionEnforcementInbound/Outbound): inbound
// for packets arriving from the port it faces, outbound for packets it sends there. A
// packet whose 15-bit key the switch port's table lacks is dropped there. OpenSM copies
// the keys of the end port a switch port faces into that switch port (osm_pkey_mgr.c,
// pkey_mgr_update_peer_port), so on a fabric it programmed the two agree.

// HopResult is what a switch port does with one partition's packets in one direction,
// from best to worst: the worse of two is their max.
type HopResult uint8

const (
	// HopPasses: the switch port holds the key, or does not enforce in that direction.
	HopPasses HopResult = iota
	// HopUnknown: the switch port's table or enforcement bits were not read, or the port
	// cabled to the end was not read at all (HopCheck.PeerNotRead).
	HopUnknown
	// HopDrops: the switch port enforces in that direction and lacks the key.
	HopDrops
)

func (r HopResult) String() string {
	return [...]string{HopPasses: "passes", HopUnknown: "unknown", HopDrops: "drops"}[r]
}

// HopCheck is the rule applied at the switch port cabled to an end port, for one key.
type HopCheck struct {
	End, Switch PortID
	Key         PartitionKey
	// PeerNotRead says why the port cabled to End was not read although End's link
	// may be up (PeerNotReadHop): Switch is then not known (zero) and both ways are
	// HopUnknown, since a switch port there may enforce partitions and lack Key. ""
	// when Switch was found.
	PeerNotRead string
	// TableRead: the switch port's P_Key table was read; OnSwitch: it holds Key.
	TableRead, OnSwitch bool
	// Enforcement as read from the switch port's PortInfo; nil when not read.
	Enforcement *Enforcement
	// FromEnd is what happens to packets the end port sends (the switch's inbound
	// check), ToEnd to packets sent to it (the outbound check).
	FromEnd, ToEnd HopResult
}

// A HopFabric is a known fabric the switch-port rule is applied in (internal/fabric's
// Fabric, a sweep or a fabric file): it finds the switch port cabled to an end port and
// names ports for people.
type HopFabric interface {
	CheckHop(end PortID, key PartitionKey) (HopCheck, bool)
	Label(id PortID) string
	// BetweenSwitches says each link between switches that drops key's packets (its
	// port enforces partitions and lacks key) or may (its table or enforcement bits
	// not read), which a route may cross: routes are not read, so such a link makes
	// key not known to pass.
	BetweenSwitches(key PartitionKey) []string
}

// JudgeHop applies the switch-port rule to key at switch port sw cabled to end: table
// is the switch port's P_Key table as read (nil when not read), enf its enforcement
// bits (nil when not read).
func JudgeHop(end, sw PortID, key PartitionKey, table []PKey, enf *Enforcement) HopCheck {
	h := HopCheck{End: end, Switch: sw, Key: key, Enforcement: enf, TableRead: table != nil,
		OnSwitch: slices.ContainsFunc(table, func(k PKey) bool { return k.Valid() && k.Partition() == key })}
	judge := func(enforced func(*Enforcement) bool) HopResult {
		switch {
		case h.TableRead && h.OnSwitch:
			return HopPasses
		case h.Enforcement != nil && !enforced(h.Enforcement):
			return HopPasses
		case !h.TableRead || h.Enforcement == nil:
			return HopUnknown
		}
		return HopDrops
	}
	h.FromEnd = judge(func(e *Enforcement) bool { return e.Inbound })
	h.ToEnd = judge(func(e *Enforcement) bool { return e.Outbound })
	return h
}

// PeerNotReadHop is the hop at end when the port cabled to it was not read (why): the
// far end of a link that is up (PortState INIT, ARMED or ACTIVE, IBA 14.2.5.6) may be a
// switch port that enforces partitions and lacks key, so neither way is known to pass.
func PeerNotReadHop(end PortID, key PartitionKey, why string) HopCheck {
	return HopCheck{End: end, Key: key, PeerNotRead: why, FromEnd: HopUnknown, ToEnd: HopUnknown}
}

// Sentence says what the hop does with the key's packets, for reasons and findings.
func (h HopCheck) Sentence(f HopFabric) string {
	key := h.Key.String()
	if h.PeerNotRead != "" {
		return fmt.Sprintf("the far end of the link at %s was not read (%s): whether a switch port there passes partition %s is not known", f.Label(h.End), h.PeerNotRead, key)
	}
	sw, end := f.Label(h.Switch), f.Label(h.End)
	switch {
	case h.TableRead && h.OnSwitch:
		return fmt.Sprintf("%s, the switch port facing %s, holds partition %s", sw, end, key)
	case !h.TableRead:
		return fmt.Sprintf("the P_Key table of %s, the switch port facing %s, was not read: whether it passes partition %s is not known", sw, end, key)
	case h.Enforcement == nil:
		return fmt.Sprintf("%s, the switch port facing %s, lacks partition %s and its enforcement bits were not read: it drops those packets if it enforces partitions", sw, end, key)
	case h.FromEnd == HopDrops && h.ToEnd == HopDrops:
		return fmt.Sprintf("%s, the switch port facing %s, lacks partition %s and enforces partitions: it drops that partition's packets to and from %s", sw, end, key, end)
	case h.FromEnd == HopDrops:
		return fmt.Sprintf("%s, the switch port facing %s, lacks partition %s and enforces inbound: it drops that partition's packets from %s (outbound enforcement is off)", sw, end, key, end)
	case h.ToEnd == HopDrops:
		return fmt.Sprintf("%s, the switch port facing %s, lacks partition %s and enforces outbound: it drops that partition's packets to %s (inbound enforcement is off)", sw, end, key, end)
	}
	return fmt.Sprintf("%s, the switch port facing %s, lacks partition %s but does not enforce partitions, so it passes them (once enforcement is on it will drop them)", sw, end, key)
}
