package check

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/ibkey/ibkey/internal/textsafe"
)

// The can-talk rules (IBA vol. 1 §10.9 partitioning; Q_Keys as RDMAmojo describes them,
// http://www.rdmamojo.com/2013/11/29/queue-key-q_key/, and ibv_post_send(3)):
//
//   - P_Key: a packet is accepted only if its 15-bit key equals the receiver's and at least
//     one of the two P_Keys is a full member; limited-limited is rejected (IBA §10.9). Key 0
//     (0x0000, 0x8000) is the invalid P_Key of an empty table entry and matches nothing
//     (IBA §10.9; OpenSM never programs it, osm_pkey_mgr.c). The check
//     is the same in both directions.
//   - QP types must match: UD talks to UD, RC to RC, UC to UC.
//   - Q_Key, UD only (RDMAmojo above; ibv_post_send(3) wr.ud.remote_qkey): the sender puts its send request's Q_Key (wr_qkey) on the
//     wire, unless that has the top bit set, then its QP context's Q_Key; without wr_qkey
//     it is the QP context's. The receiver accepts only its own QP-context Q_Key. So the
//     two directions can differ.

// NoIndex is TableEntry.Index when the index is not known (a QP given by its P_Key value).
const NoIndex = -1

// TableEntry is one slot of a port's P_Key table, or the one P_Key a QP uses.
type TableEntry struct {
	Index int  // the table index; NoIndex when not known
	PKey  PKey // meaningful only when Readable
	// Readable is false when reading the entry failed (a hole in what was read).
	Readable bool
}

// FindPKeyIndex answers "which index should a QP use for this key": the entry whose 15-bit
// key equals key's, preferring a full-member entry and else the first limited one, as the
// kernel's ib_find_pkey does (drivers/infiniband/core/device.c). Unlike ib_find_pkey, invalid entries (key 0) never
// match, even when asked for key 0, and unreadable entries are skipped rather than failing
// the search. Among equal candidates the lowest index wins, whatever the order of entries.
func FindPKeyIndex(entries []TableEntry, key PKey) (index int, entry PKey, ok bool) {
	s, ok := Endpoint{Entries: entries}.SideOf(key.Partition()) // valid keys only: key 0 matches none
	if !ok {
		return NoIndex, 0, false
	}
	return s.Index, s.PKey, true
}

// Endpoint is one side of a can-talk question, resolved to P_Keys.
type Endpoint struct {
	Label string // how reasons name it, e.g. "mlx5_0/1"; "A" or "B" when empty
	// Port is true when Entries is a port's whole P_Key table: a QP on the port may use
	// any valid entry. Otherwise Entries holds the one P_Key a QP uses.
	Port    bool
	Entries []TableEntry
	QPType  QPType // QPAny when not known
	QKey    *QKey  // the QP context's Q_Key, nil when not known
	WRQKey  *QKey  // the send request's Q_Key, nil when not given
	// QKeyRule is how this endpoint's device picks the Q_Key it sends (qkey.go,
	// QKeyRuleFor); the zero value assumes the IBA rule.
	QKeyRule QKeyRule
	// QKeyRuleReason says why QKeyRule applies (QKeyRuleFor's reason); "" when nothing
	// is known about the device (the IBA rule is assumed).
	QKeyRuleReason string
	// Notes are passed through to the verdict's warnings (e.g. from resolving a spec).
	Notes []string
	// LinkLayer is the port's link layer ("InfiniBand", "Ethernet"), "" when not known
	// (a bare P_Key). Ports on different link layers share no fabric at all.
	LinkLayer string
	// LinkLayerMissing says why a port's link layer was not read (LinkLayer ""): the
	// kernel writes link_layer for every port (drivers/infiniband/core/sysfs.c), so it
	// is not known, never "the same as the other end's". "" when read or not a port.
	LinkLayerMissing string
	// TableNotRead says why the endpoint's port's P_Key table, which exists, was not
	// read (Entries empty): for a port (Port) every entry, for a QP on it (index=,
	// pkey=) the one it uses. EntryNotRead says why only the entry a QP uses was not
	// read (a pinned index= entry, or pkey= whose entry may be among those not read).
	// "" when read. The verdict depends on them (VerdictUnknown; NotCheckedTable,
	// NotCheckedEntries) unless a decided rule fails (a port not ACTIVE:
	// VerdictNotActive; different link layers or QP types): not read is never "no
	// P_Key".
	TableNotRead, EntryNotRead string
	// NoEntry says, in a sentence naming the end, why no QP on it can use what it
	// asks for (pkey= that its predicted table lacks: no entry, so no QP there): a no
	// whatever the other end holds or did not read. Entries is empty. "" otherwise.
	// A caller compares it with the endpoint under assumptions that were not checked
	// (query's alternatives); where none could give the key, the caller reports a
	// *ResolveError instead.
	NoEntry string
	// State is the port's PortInfo PortState (StateDown, StateInit, StateArmed,
	// StateActive), "" when not known (a P_Key value, a partitions.conf GUID). A port
	// that is not ACTIVE passes no data packets now (IBA 7.2, only SMPs in INIT/ARMED).
	State string
	// Subnet is the port's GID prefix and master SM LID, nil when not known. Ports with
	// different GID prefixes are on different subnets: only a router joins them.
	Subnet *SubnetID
	// Fabric and At place the port in a known fabric (a sweep or a fabric file): the
	// switch port cabled to it is checked with the switch-port rule the audit uses
	// (hop.go: JudgeHop, through HopFabric.CheckHop; an internal/fabric Fabric is
	// one). Both nil when the fabric is not known.
	Fabric HopFabric
	At     *PortID
}

// QPEndpoint is a QP using P_Key p at an unknown index.
func QPEndpoint(label string, p PKey, t QPType) Endpoint {
	return Endpoint{Label: label, Entries: []TableEntry{{Index: NoIndex, PKey: p, Readable: true}}, QPType: t}
}

// ResolveError says a spec asks for something the table it was resolved against lacks.
type ResolveError struct {
	Endpoint string // the spec, canonical form
	Problem  string
}

func (e *ResolveError) Error() string { return fmt.Sprintf("endpoint %s: %s", e.Endpoint, e.Problem) }

// Endpoint turns a parsed spec into a rules-engine endpoint. For EndpointPKey and
// EndpointOptions the table is ignored (the spec holds the P_Key). For a port, GUID or LID
// the caller passes that port's table (for a GUID: its partitions.conf memberships, with
// Index NoIndex); then index= pins that entry and pkey= picks the entry a QP on the port
// would use for that key (FindPKeyIndex). A label of "" becomes the spec's String().
// The error is a *ResolveError when index= or pkey= is not in the table; pkey= of a
// valid key whose entry may be among entries not read is an endpoint with
// EntryNotRead, an unknown verdict, never a definite no. query's resolvePort, the one
// caller with entries not read, then replaces it by the entries ib_find_pkey may pick
// (query's findEntry); a caller that does not still gets an unknown.
func (s EndpointSpec) Endpoint(label string, table []TableEntry) (Endpoint, error) {
	label = cmp.Or(label, s.String())
	e := Endpoint{Label: label, QPType: s.QPType, QKey: s.QKey, WRQKey: s.WRQKey}
	if s.Kind == EndpointPKey || s.Kind == EndpointOptions {
		idx := NoIndex
		if s.Index != nil {
			idx = *s.Index
		}
		var p PKey
		if s.PKey != nil {
			p = *s.PKey
		}
		e.Entries = []TableEntry{{Index: idx, PKey: p, Readable: true}}
		return e, nil
	}
	switch {
	case s.Index != nil:
		i := slices.IndexFunc(table, func(t TableEntry) bool { return t.Index == *s.Index })
		if i < 0 {
			return e, &ResolveError{Endpoint: s.String(), Problem: fmt.Sprintf("no P_Key table entry at index %d%s", *s.Index, indexRange(table))}
		}
		t := table[i]
		if s.PKey != nil && t.Readable && t.PKey.Partition() != s.PKey.Partition() {
			return e, &ResolveError{Endpoint: s.String(), Problem: fmt.Sprintf("index %d holds %s, not partition %s", t.Index, t.PKey, s.PKey.Partition().String())}
		}
		e.Entries = []TableEntry{t}
	case s.PKey != nil:
		idx, p, ok := FindPKeyIndex(table, *s.PKey)
		if !ok {
			// Key 0 (0x0000, 0x8000) is the invalid P_Key of an empty entry (IBA
			// 10.9): it matches nothing, so an entry not read cannot make it usable.
			if n := unreadEntries(Endpoint{Entries: table}); n > 0 && s.PKey.Valid() {
				e.EntryNotRead = fmt.Sprintf("no readable P_Key table entry for partition %s; %s could not be read and may hold it", s.PKey.Partition().String(), textsafe.Plural(n, "entry", "entries"))
				return e, nil
			}
			return e, &ResolveError{Endpoint: s.String(), Problem: fmt.Sprintf("no valid P_Key table entry for partition %s, so no QP there can use it", s.PKey.Partition().String())}
		}
		if p != *s.PKey {
			e.Notes = append(e.Notes, fmt.Sprintf("%s: asked for %s; a QP there uses the entry at index %d, %s (%s member)", label, *s.PKey, idx, p, p.Membership()))
		}
		e.Entries = []TableEntry{{Index: idx, PKey: p, Readable: true}}
	default:
		e.Port = true
		e.Entries = table
	}
	return e, nil
}

func indexRange(table []TableEntry) string {
	if len(table) == 0 {
		return " (the table is empty)"
	}
	lo, hi := table[0].Index, table[0].Index
	for _, t := range table {
		lo, hi = min(lo, t.Index), max(hi, t.Index)
	}
	return fmt.Sprintf(" (indexes %d-%d)", lo, hi)
}

// QKeyCheck is the outcome of the Q_Key rule in one direction.
type QKeyCheck string

const (
	QKeyNotApplicable QKeyCheck = "not_applicable" // not UD: Q_Keys are ignored
	QKeyNotChecked    QKeyCheck = "not_checked"    // UD, but a Q_Key needed was not given
	QKeyMatch         QKeyCheck = "match"
	QKeyMismatch      QKeyCheck = "mismatch"
)

// PartitionSide is one endpoint's entry for a shared partition: the one a QP should use
// (FindPKeyIndex's choice).
type PartitionSide struct {
	PKey  PKey
	Index int // NoIndex when not known
	// Both: the endpoint also holds the key with the other membership, at OtherIndex
	// (the lowest such index).
	Both       bool
	OtherIndex int
	// NotKnown: the entry is only what the verdict takes: an assumption not checked
	// (query.CanTalk's alternatives: SELF, a port type) would give this end another
	// entry for the partition, or none. The fields above are then what was taken.
	NotKnown bool
}

// SideOf is e's entry for partition k, as a shared partition lists it (the best
// entry, groupByKey); false when e holds no valid entry of k.
func (e Endpoint) SideOf(k PartitionKey) (PartitionSide, bool) {
	groups, _, _ := groupByKey(e.Entries)
	i := slices.IndexFunc(groups, func(s PartitionSide) bool { return s.PKey.Partition() == k })
	if i < 0 {
		return PartitionSide{}, false
	}
	return groups[i], true
}

// SharedPartition is a partition (15-bit key) both endpoints have a valid entry for.
type SharedPartition struct {
	Key   PartitionKey
	A, B  PartitionSide
	Works bool // at least one side is a full member
	// Switch: in a known fabric, what the switch ports cabled to the ends do with a
	// partition that Works, the worse of both ends and both ways (checkHops):
	// HopDrops, it does not work on that path; HopUnknown, it was not checked there
	// (a switch port's table or enforcement bits not read, or the port cabled to an
	// end not read). HopPasses when the fabric is not known or the partition does not
	// work.
	Switch HopResult
	// Links: a link between switches drops it, which the route may cross
	// (HopFabric.BetweenSwitches): Switch is then HopUnknown at least.
	Links bool
	// WorksNotKnown: whether it works is only what the verdict takes: an
	// assumption not checked or an entry not read (query.CanTalk's alternatives)
	// would decide it otherwise. Works and Switch are then what was taken.
	WorksNotKnown bool
}

// WorksHere: the partition works between the ends and the switch ports facing them
// pass it, as taken (WorksNotKnown says when that was not checked).
func (sp SharedPartition) WorksHere() bool { return sp.Works && sp.Switch == HopPasses }

// Rule is a direction's result for one rule. RuleNotKnown: what the rule needs was
// not read (entries or a table, a link layer, a switch port's table), or the verdict
// takes something for it that an assumption or an entry not read would change
// (query.CanTalk's alternatives). It is the zero value, so a rule nobody decided never
// reads as passed or failed.
type Rule uint8

const (
	RuleNotKnown Rule = iota
	RulePasses
	RuleFails
)

func ruleOf(ok bool) Rule {
	if ok {
		return RulePasses
	}
	return RuleFails
}

// Direction is the verdict for packets from one endpoint to the other.
type Direction struct {
	From, To string // labels
	OK       bool   // every rule that could be checked passed
	// LinkOK: both on the same link layer, or one end's is not a port's (a bare
	// P_Key); not known when a port's link layer was not read (LinkLayerMissing).
	LinkOK   Rule
	QPTypeOK bool
	// PKeyOK: the P_Key rule (checkPKeys); not known when the entry or table it needs
	// was not read, or (query.CanTalk) entries not read or an assumption not given
	// would change it.
	PKeyOK   Rule
	QKey     QKeyCheck
	WireQKey *QKey // the Q_Key From puts on the wire, when known (UD)
	// AcceptedQKey is the only Q_Key To accepts, when known (UD).
	AcceptedQKey *QKey
	// SwitchOK: no switch port at the ends drops every working partition (passes
	// when the fabric is not known); not known when none passes and a switch port
	// facing an end was not read for one.
	SwitchOK Rule
	// Unknown: the direction fails only for want of something not read.
	Unknown bool
	Reasons []string
}

// EndpointSummary repeats what the verdict was computed from.
type EndpointSummary struct {
	Label  string
	Port   bool
	QPType QPType
	QKey   *QKey
	WRQKey *QKey
	// QKeyRule is the Q_Key send rule applied to this endpoint, and why.
	QKeyRule       QKeyRule
	QKeyRuleReason string
}

// summary is what the verdict repeats of e; a rule with no reason is the one assumed
// when nothing is known about the device.
func summary(e Endpoint) EndpointSummary {
	why := e.QKeyRuleReason
	if why == "" {
		_, why = QKeyRuleFor(QKeyDevice{})
	}
	return EndpointSummary{Label: e.Label, Port: e.Port, QPType: e.QPType, QKey: e.QKey, WRQKey: e.WRQKey, QKeyRule: e.QKeyRule, QKeyRuleReason: why}
}

// VerdictKind is the kind of answer can-talk gives; each has its own exit code
// (ExitCode).
type VerdictKind uint8

const (
	// VerdictUnknown: the answer depends on something that was not read (unreadable
	// P_Key entries, a switch port's table or enforcement bits). It is the zero value,
	// so a verdict nobody decided is never read as a yes.
	VerdictUnknown VerdictKind = iota
	// VerdictYes: both directions pass every rule that could be checked.
	VerdictYes
	// VerdictNo: a rule drops the packets in both directions.
	VerdictNo
	// VerdictOneWay: one direction works, the other is dropped.
	VerdictOneWay
	// VerdictNotActive: a port is not ACTIVE, so it cannot talk now, whatever the
	// tables say.
	VerdictNotActive
	// VerdictDifferentSubnets: the ports are on different subnets (GID prefixes); they
	// can reach each other only through an InfiniBand router, which is not checked.
	VerdictDifferentSubnets
)

var verdictNames = [...]string{"unknown", "yes", "no", "one-way", "not-active", "different-subnets"}

func (k VerdictKind) String() string { return verdictNames[k] }

// ExitCode is the exit status for the verdict: 0 yes; 1 a definite no (no, one-way,
// not-active); 4 when the answer depends on what was not checked (unknown, and
// different-subnets: a router's partitions and routes are not checked).
func (k VerdictKind) ExitCode() int {
	switch k {
	case VerdictYes:
		return 0
	case VerdictUnknown, VerdictDifferentSubnets:
		return 4
	}
	return 1
}

// Verdict is the answer to "can A and B talk".
type Verdict struct {
	// Kind is the answer (CanTalk and OneWay say two of its values).
	Kind       VerdictKind
	A, B       EndpointSummary
	AToB, BToA Direction
	// Shared lists every partition both have a valid entry for, in key order.
	Shared []SharedPartition
	// SharedAssumed: an assumption not checked (query.CanTalk's alternatives: SELF,
	// a port type) would give both ends a partition Shared lacks: Shared is what the
	// ends as taken share, and may miss one.
	SharedAssumed bool
	// Reasons are the rules that decided the verdict, in words a user can act on.
	Reasons []string
	// Warnings are worth knowing but decide nothing.
	Warnings []string
	// Hops are the switch ports checked at the ends in a known fabric, for the
	// partitions that work between the end ports.
	Hops []HopCheck
	// NotChecked lists what the answer depends on and was not read; not empty only
	// when Kind is VerdictUnknown.
	NotChecked []NotChecked
}

// CanTalk: both directions pass every rule (Kind is yes). A rule that could not be
// decided (Q_Keys of UD QPs not given, a link layer not read) makes the verdict
// unknown (DependsOn), never a yes.
func (v Verdict) CanTalk() bool { return v.Kind == VerdictYes }

// OneWay: Kind is one-way: one direction is dropped, definitely, and the other works
// by every rule checked. A caller that learns the other is not confirmed (can-talk
// --sa: the Subnet Manager does not confirm it) keeps the kind (one direction is
// definitely dropped: exit 1) and marks that direction not OK and Unknown; can-talk's
// JSON then says one_way null, not true.
func (v Verdict) OneWay() bool { return v.Kind == VerdictOneWay }

// NotCheckedCause is what a verdict could not read, as a value: a command reports
// the cause (its kind of "incomplete") from it, never from the sentence.
type NotCheckedCause uint8

const (
	// NotCheckedEntries: P_Key table entries of an end could not be read, and a
	// partition the ends share may be in one of them.
	NotCheckedEntries NotCheckedCause = iota + 1
	// NotCheckedSwitchTable: the P_Key table of the switch port facing an end was not
	// read (HopCheck.TableRead false), or not even that port (HopCheck.PeerNotRead).
	NotCheckedSwitchTable
	// NotCheckedSwitchEnforcement: the switch port facing an end lacks the key and its
	// enforcement bits (PortInfo PartitionEnforcementInbound/Outbound) were not read.
	NotCheckedSwitchEnforcement
	// NotCheckedAssumption: an end's table was predicted under an assumption that was
	// not checked (which port a Subnet Manager runs on; whether a port is a CA or a
	// router port), and the answer differs without it (DependsOn).
	NotCheckedAssumption
	// NotCheckedLinkLayer: an end's link layer was not read, and the other end's is
	// known (or not read either): they may be on different fabrics.
	NotCheckedLinkLayer
	// NotCheckedQKeys: UD QPs whose Q_Keys were not given: the P_Keys allow the
	// direction, the Q_Key rule was not checked.
	NotCheckedQKeys
	// NotCheckedQKeySendRule: a sender's wr_qkey has the top bit set, its device's
	// Q_Key send rule is not known (QKeyRuleAssumedIBA), and the two rules a device
	// may follow give different answers (QKeyRuleDecides).
	NotCheckedQKeySendRule
	// NotCheckedTable: an end's P_Key table, which exists, was not read at all
	// (Endpoint.TableNotRead).
	NotCheckedTable
	// NotCheckedSubnetManager: the tables read say yes and the Subnet Manager, asked
	// for a path (can-talk --sa), does not confirm it: it refuses one, or could not
	// be asked.
	NotCheckedSubnetManager
	// NotCheckedFile: an end's table was predicted from a partitions file whose
	// outcome in OpenSM cannot be predicted (partconf.Config.Uncertain): the table
	// taken is that of the file as written.
	NotCheckedFile
	// NotCheckedRoute: a link between switches drops the partition, or may
	// (HopFabric.BetweenSwitches), and whether the route between the ends crosses it
	// was not read.
	NotCheckedRoute
	// NotCheckedSubnet: the ends report different master SM LIDs with the same GID
	// prefix: whether one Subnet Manager manages both (one subnet) is not known.
	NotCheckedSubnet
)

// DependsOn makes v unknown: the answer depends on nc, which was not checked (the
// verdict under another assumption differs). Its rules stay in Reasons, after the
// sentence that says so.
func (v *Verdict) DependsOn(nc NotChecked) {
	v.Kind = VerdictUnknown
	for _, d := range []*Direction{&v.AToB, &v.BToA} {
		d.OK, d.Unknown = false, true
	}
	v.NotChecked = append(v.NotChecked, nc)
	v.Reasons = append([]string{"not known: the answer depends on what could not be checked (" + nc.Sentence + ")"}, v.Reasons...)
}

// NotChecked is one thing a verdict depends on and could not check: its cause, and
// the sentence that says it to people.
type NotChecked struct {
	Cause    NotCheckedCause
	Sentence string
}

// groupByKey sorts the valid entries by key (full first, then by index) and keeps one
// side per key, its best entry (FindPKeyIndex's choice); it counts the entries not
// read and the invalid ones.
func groupByKey(entries []TableEntry) (groups []PartitionSide, unreadable, invalid int) {
	var valid []TableEntry
	for _, e := range entries {
		switch {
		case !e.Readable:
			unreadable++
		case !e.PKey.Valid():
			invalid++
		default:
			valid = append(valid, e)
		}
	}
	// By key; within a key full before limited, then the lower index first.
	slices.SortFunc(valid, func(a, b TableEntry) int {
		return cmp.Or(cmp.Compare(a.PKey.Partition(), b.PKey.Partition()),
			cmp.Compare(b.PKey&MembershipBit, a.PKey&MembershipBit), cmp.Compare(a.Index, b.Index))
	})
	for _, e := range valid {
		if n := len(groups); n > 0 && groups[n-1].PKey.Partition() == e.PKey.Partition() {
			// Sorted after the best entry: the other membership's lowest index.
			if g := &groups[n-1]; !g.Both && e.PKey.IsFull() != g.PKey.IsFull() {
				g.Both, g.OtherIndex = true, e.Index
			}
			continue
		}
		groups = append(groups, PartitionSide{PKey: e.PKey, Index: e.Index, OtherIndex: NoIndex})
	}
	return groups, unreadable, invalid
}

// CanTalk applies the rules to two endpoints.
func CanTalk(a, b Endpoint) Verdict {
	a.Label, b.Label = cmp.Or(a.Label, "A"), cmp.Or(b.Label, "B")
	v := Verdict{
		A:        summary(a),
		B:        summary(b),
		Reasons:  []string{},
		Warnings: []string{},
	}
	v.Warnings = append(v.Warnings, a.Notes...)
	v.Warnings = append(v.Warnings, b.Notes...)

	// Rules that fail both directions before any key is compared.
	var pre []string
	// The same fabric: an InfiniBand port and a RoCE (Ethernet) port exchange no packets,
	// whatever their tables say (the P_Key travels in the InfiniBand BTH, IBA §9.2,
	// and a RoCE port sits on an Ethernet network, not on an InfiniBand subnet).
	linkOK := a.LinkLayer == "" || b.LinkLayer == "" || a.LinkLayer == b.LinkLayer
	link := ruleOf(linkOK)
	if linkOK && linkNotRead(a, b) {
		link = RuleNotKnown
	}
	if !linkOK {
		pre = append(pre, fmt.Sprintf("%s is on %s and %s on %s: different link layers share no fabric, so no packet can pass between them (the P_Key tables do not matter)",
			a.Label, a.LinkLayer, b.Label, b.LinkLayer))
	}
	// QP types: a QP only accepts packets of its own transport service (IBA §9.2:
	// the top three bits of the BTH OpCode name the transport; ibv_create_qp(3)).
	typeOK := a.QPType == QPAny || b.QPType == QPAny || a.QPType == b.QPType
	if !typeOK {
		pre = append(pre, fmt.Sprintf("%s is %s QP and %s %s QP: QP types must match (%s talks only to %s)",
			a.Label, withArticle(a.QPType), b.Label, withArticle(b.QPType), upper(a.QPType), upper(a.QPType)))
	}
	v.Reasons = append(v.Reasons, pre...)

	// P_Keys: the receive check is symmetric, so one result serves both directions.
	pkeyOK, pkeyReasons, hops := v.checkPKeys(a, b)
	v.Reasons = append(v.Reasons, pkeyReasons...)

	// Q_Keys, per direction.
	// With different QP types the Q_Key rule has nothing to add.
	ud := v.qkeyScope(a, b) && typeOK
	var qa, qb string
	v.AToB, qa = direction(a, b, typeOK, pkeyOK, ud)
	v.BToA, qb = direction(b, a, typeOK, pkeyOK, ud)
	for _, x := range []struct {
		d *Direction
		q string
	}{{&v.AToB, qa}, {&v.BToA, qb}} {
		x.d.LinkOK = link
		x.d.OK = x.d.OK && linkOK
		x.d.Reasons = append(x.d.Reasons, pre...)
		x.d.Reasons = append(x.d.Reasons, pkeyReasons...)
		if x.q != "" {
			x.d.Reasons = append(x.d.Reasons, x.q)
			v.Reasons = append(v.Reasons, x.q)
		}
	}

	v.AToB.SwitchOK, v.BToA.SwitchOK = RulePasses, RulePasses
	if pkeyOK {
		v.applyHops(a, b, hops)
	} else if !Keyless(a) && !Keyless(b) {
		// The partition that would work may be in an entry or a table that was not read
		// (not beside an end without a valid key: nothing of the other end matches it).
		for _, e := range []Endpoint{a, b} {
			switch {
			case e.TableNotRead != "" && e.Port:
				v.NotChecked = append(v.NotChecked, NotChecked{Cause: NotCheckedTable,
					Sentence: fmt.Sprintf("%s: %s: a partition they share may be there", e.Label, e.TableNotRead)})
			case e.TableNotRead != "": // the table holding the entry a QP uses
				v.NotChecked = append(v.NotChecked, NotChecked{Cause: NotCheckedTable,
					Sentence: fmt.Sprintf("%s: %s: the answer depends on it", e.Label, e.TableNotRead)})
			case e.EntryNotRead != "":
				v.NotChecked = append(v.NotChecked, NotChecked{Cause: NotCheckedEntries,
					Sentence: fmt.Sprintf("%s: %s: the answer depends on it", e.Label, e.EntryNotRead)})
			}
		}
		if unread := unreadEntries(a) + unreadEntries(b); unread > 0 {
			v.NotChecked = append(v.NotChecked, NotChecked{Cause: NotCheckedEntries,
				Sentence: textsafe.Plural(unread, "P_Key table entry", "P_Key table entries") + " could not be read: a partition they share may be there"})
		}
		for _, d := range []*Direction{&v.AToB, &v.BToA} {
			d.Unknown = len(v.NotChecked) > 0
			if d.Unknown { // the P_Key rule was not decided: never "fails"
				d.PKeyOK = RuleNotKnown
			}
		}
	}
	for _, d := range []*Direction{&v.AToB, &v.BToA} {
		// A direction that fails on a rule that was decided is a definite no.
		if d.Unknown && (d.LinkOK == RuleFails || !d.QPTypeOK || d.QKey == QKeyMismatch) {
			d.Unknown = false
		}
	}

	oneWay := v.AToB.OK != v.BToA.OK
	if oneWay && !v.AToB.Unknown && !v.BToA.Unknown {
		ok, bad := v.AToB, v.BToA
		if !ok.OK {
			ok, bad = bad, ok
		}
		v.Reasons = append(v.Reasons, fmt.Sprintf("one way only: %s → %s works, %s → %s is dropped", ok.From, ok.To, bad.From, bad.To))
	}
	switch {
	case v.AToB.OK && v.BToA.OK:
		v.Kind = VerdictYes
	case v.AToB.Unknown && !v.BToA.OK || v.BToA.Unknown && !v.AToB.OK:
		v.Kind = VerdictUnknown
	case oneWay:
		v.Kind = VerdictOneWay
	default:
		v.Kind = VerdictNo
	}
	if v.Kind != VerdictUnknown {
		v.NotChecked = nil // only an unknown depends on what was not checked
	}
	v.applyPortRules(a, b)
	if v.Kind == VerdictUnknown { // a port not ACTIVE or on another subnet decides first
		var why []string
		for _, nc := range v.NotChecked {
			why = append(why, nc.Sentence)
		}
		v.Reasons = append(v.Reasons, "not known: the answer depends on what could not be read ("+strings.Join(why, "; ")+")")
	}
	v.qkeysNotGiven()
	v.linkLayerNotRead(a, b)
	v.smLIDsDiffer(a, b)
	return v
}

// smLIDsDiffer: ports with the same GID prefix whose master SM LIDs differ are on
// different subnets if two Subnet Managers manage them (OpenSM's subnet_prefix
// defaults to 0xfe80000000000000, IB_DEFAULT_SUBNET_PREFIX, on every subnet), which
// only a router joins, or on one whose new master SM has not yet reached both. A yes
// depends on which (NotCheckedSubnet); any other answer holds either way, and warns.
func (v *Verdict) smLIDsDiffer(a, b Endpoint) {
	if v.Kind == VerdictNotActive || v.Kind == VerdictDifferentSubnets || a.Subnet == nil || b.Subnet == nil ||
		a.Subnet.SMLID == 0 || b.Subnet.SMLID == 0 || a.Subnet.SMLID == b.Subnet.SMLID {
		return
	}
	s := fmt.Sprintf("%s reports master SM LID %d and %s LID %d, with the same GID prefix: if two Subnet Managers manage them, they are on different subnets, which only a router joins (not checked)",
		a.Label, a.Subnet.SMLID, b.Label, b.Subnet.SMLID)
	if v.Kind == VerdictYes {
		v.DependsOn(NotChecked{Cause: NotCheckedSubnet, Sentence: s})
		return
	}
	v.Warnings = append(v.Warnings, s)
}

// qkeysNotGiven: between UD QPs the Q_Key rule decides delivery (IBA 10.2.5), so a
// direction the other rules pass whose Q_Keys were not given is not known to work.
func (v *Verdict) qkeysNotGiven() {
	if v.Kind != VerdictYes && v.Kind != VerdictOneWay {
		return
	}
	for _, x := range []struct {
		d    Direction
		s, r EndpointSummary
	}{{v.AToB, v.A, v.B}, {v.BToA, v.B, v.A}} {
		s, r := x.s, x.r
		if x.d.OK && x.d.QKey == QKeyNotChecked && QKeyRuleDecides(s.QKeyRule, s.QKey, s.WRQKey, r.QKey) {
			v.DependsOn(NotChecked{Cause: NotCheckedQKeySendRule, Sentence: qkeyRuleSentence(s.Label, r.Label, s.Port, *s.QKey, *s.WRQKey, *r.QKey)})
			return
		}
	}
	for _, d := range []Direction{v.AToB, v.BToA} {
		if d.OK && d.QKey == QKeyNotChecked {
			v.DependsOn(NotChecked{Cause: NotCheckedQKeys, Sentence: "the P_Keys allow it; the Q_Keys were not given (UD QPs deliver only when the Q_Key sent is the one the receiver's QP holds, IBA 10.2.5)"})
			return
		}
	}
}

// linkLayerNotRead: a port whose link layer was not read may be on another fabric
// than the other end's, so an answer that is not a definite no depends on it.
func (v *Verdict) linkLayerNotRead(a, b Endpoint) {
	if v.Kind == VerdictNo || v.Kind == VerdictNotActive {
		return
	}
	for _, x := range [][2]Endpoint{{a, b}, {b, a}} {
		e, o := x[0], x[1]
		if !linkNotRead(e, o) {
			continue
		}
		other := o.Label + "'s is not read either"
		if o.LinkLayer != "" {
			other = o.Label + " is on " + o.LinkLayer
		}
		v.DependsOn(NotChecked{Cause: NotCheckedLinkLayer, Sentence: fmt.Sprintf(
			"link layer of %s not read (%s), and %s: ports on different link layers share no fabric", e.Label, e.LinkLayerMissing, other)})
		return
	}
}

// linkNotRead: e's link layer was not read and o is a port (its link layer read or
// not): they may be on different fabrics.
func linkNotRead(e, o Endpoint) bool {
	return e.LinkLayerMissing != "" && (o.LinkLayer != "" || o.LinkLayerMissing != "")
}

// Keyless: e has no valid P_Key and nothing of it was not read (NoEntry; a QP using
// key 0, which matches nothing, IBA §10.9; a table of empty entries or none), so no
// entry or table of the other end that was not read can make them share a partition.
func Keyless(e Endpoint) bool {
	groups, unread, _ := groupByKey(e.Entries)
	return e.NoEntry != "" || len(groups) == 0 && unread == 0 && e.TableNotRead == "" && e.EntryNotRead == ""
}

func unreadEntries(e Endpoint) int {
	n := 0
	for _, t := range e.Entries {
		if !t.Readable {
			n++
		}
	}
	return n
}

// applyPortRules: a port that is not ACTIVE cannot talk now, and ports on different
// subnets need a router; both override what the tables say.
func (v *Verdict) applyPortRules(a, b Endpoint) {
	var inactive []string
	for _, e := range []Endpoint{a, b} {
		if e.State != "" && e.State != StateActive {
			inactive = append(inactive, fmt.Sprintf("%s is %s: a port that is not ACTIVE passes no data packets (the Subnet Manager makes it ACTIVE; DOWN means no link)", e.Label, e.State))
		}
	}
	diff := a.Subnet != nil && b.Subnet != nil && a.Subnet.GIDPrefix != 0 && b.Subnet.GIDPrefix != 0 && a.Subnet.GIDPrefix != b.Subnet.GIDPrefix
	if len(inactive) == 0 && !diff {
		return
	}
	fail := func(reason string) {
		v.Reasons = append([]string{reason}, v.Reasons...)
		for _, d := range []*Direction{&v.AToB, &v.BToA} {
			d.OK, d.Unknown = false, false
			d.Reasons = append([]string{reason}, d.Reasons...)
		}
	}
	v.NotChecked = nil
	if diff {
		v.Kind = VerdictDifferentSubnets
		fail(fmt.Sprintf("%s is on subnet %s and %s on subnet %s (GID prefixes): ports of different subnets reach each other only through an InfiniBand router, whose partitions and routes are not checked here; the tables compared below are each subnet's own",
			a.Label, FormatGIDPrefix(a.Subnet.GIDPrefix), b.Label, FormatGIDPrefix(b.Subnet.GIDPrefix)))
	}
	if len(inactive) > 0 {
		v.Kind = VerdictNotActive
		for i := len(inactive) - 1; i >= 0; i-- {
			fail(inactive[i])
		}
	}
}

// partHops is the switch-port check of one shared partition that works: the hops at
// the ends (none when the fabric is not known) and the worse result each way.
type partHops struct {
	key    PartitionKey
	ab, ba HopResult
	hops   []HopCheck
	// links: the links between switches that drop the partition's packets, which the
	// route may cross (HopFabric.BetweenSwitches); each makes both ways unknown.
	links []string
}

// checkHops checks, in a known fabric, the switch ports cabled to the two ends for the
// partitions that work between the end ports (hop.go: the audit's rule), once per
// verdict: it fills v.Hops and each partition's Switch, which the listing reads, and
// returns what applyHops decides from.
func (v *Verdict) checkHops(a, b Endpoint) []partHops {
	var results []partHops
	for i := range v.Shared {
		sp := &v.Shared[i]
		if !sp.Works {
			continue
		}
		r := partHops{key: sp.Key}
		if h, ok := hop(a, sp.Key); ok {
			r.hops = append(r.hops, h)
			r.ab, r.ba = max(r.ab, h.FromEnd), max(r.ba, h.ToEnd)
		}
		if h, ok := hop(b, sp.Key); ok {
			r.hops = append(r.hops, h)
			r.ab, r.ba = max(r.ab, h.ToEnd), max(r.ba, h.FromEnd)
		}
		for _, f := range []HopFabric{a.Fabric, b.Fabric} {
			if f != nil {
				for _, l := range f.BetweenSwitches(sp.Key) {
					r.links = appendNew(r.links, l)
				}
			}
		}
		if len(r.links) > 0 {
			r.ab, r.ba = max(r.ab, HopUnknown), max(r.ba, HopUnknown)
		}
		sp.Switch, sp.Links = max(r.ab, r.ba), len(r.links) > 0
		v.Hops = append(v.Hops, r.hops...)
		results = append(results, r)
	}
	return results
}

// applyHops decides from the switch-port checks (checkHops). A QP pair uses one
// partition for both directions (a QP has one P_Key), so the pair can talk when one
// partition passes both switch ports both ways.
func (v *Verdict) applyHops(a, b Endpoint, results []partHops) {
	// fabricOf is the fabric a hop was checked in: that of the end whose At it is.
	fabricOf := func(h HopCheck) HopFabric {
		if a.At != nil && *a.At == h.End {
			return a.Fabric
		}
		return b.Fabric
	}
	// Worth knowing whatever the verdict: a key the switch passes only because it does
	// not enforce.
	for _, h := range v.Hops {
		if h.TableRead && !h.OnSwitch && h.FromEnd == HopPasses && h.ToEnd == HopPasses {
			v.Warnings = appendNew(v.Warnings, h.Sentence(fabricOf(h)))
		}
	}
	// sentences says the hops of r that do res one way or the other.
	sentences := func(r partHops, res HopResult) []string {
		var out []string
		for _, h := range r.hops {
			if h.FromEnd == res || h.ToEnd == res {
				out = append(out, h.Sentence(fabricOf(h)))
			}
		}
		return out
	}
	dropSentences := func(r partHops) []string { return sentences(r, HopDrops) }
	for _, r := range results {
		if r.ab == HopPasses && r.ba == HopPasses {
			// One partition works both ways: the others dropped, or not checked, are
			// side notes.
			for _, o := range results {
				how, hops := "does not pass", dropSentences(o)
				if len(hops) == 0 {
					how, hops = "is not known to pass", append(sentences(o, HopUnknown), o.links...)
				}
				for _, s := range hops {
					v.Reasons = appendNew(v.Reasons, fmt.Sprintf("partition %s %s: %s; partition %s does", o.key.String(), how, s, r.key.String()))
				}
			}
			return
		}
	}
	// No partition passes both ways.
	var unknown bool
	var ab, ba []PartitionKey
	for _, r := range results {
		for _, s := range dropSentences(r) {
			v.Reasons = appendNew(v.Reasons, s)
		}
		if r.ab == HopUnknown || r.ba == HopUnknown {
			if r.ab != HopDrops && r.ba != HopDrops {
				unknown = true
				for _, h := range r.hops {
					if h.FromEnd == HopUnknown || h.ToEnd == HopUnknown {
						// Not read: the switch port's table, or (read, lacking
						// the key) its enforcement bits.
						cause := NotCheckedSwitchEnforcement
						if !h.TableRead {
							cause = NotCheckedSwitchTable
						}
						v.NotChecked = appendNew(v.NotChecked, NotChecked{Cause: cause, Sentence: h.Sentence(fabricOf(h))})
					}
				}
				for _, l := range r.links {
					v.NotChecked = appendNew(v.NotChecked, NotChecked{Cause: NotCheckedRoute, Sentence: l})
				}
			}
		}
		if r.ab == HopPasses {
			ab = append(ab, r.key)
		}
		if r.ba == HopPasses {
			ba = append(ba, r.key)
		}
	}
	for _, x := range []struct {
		d    *Direction
		pass []PartitionKey
		way  func(partHops) HopResult
	}{{&v.AToB, ab, func(r partHops) HopResult { return r.ab }}, {&v.BToA, ba, func(r partHops) HopResult { return r.ba }}} {
		x.d.SwitchOK = ruleOf(len(x.pass) > 0)
		if len(x.pass) == 0 && slices.ContainsFunc(results, func(r partHops) bool { return x.way(r) == HopUnknown }) {
			x.d.SwitchOK = RuleNotKnown // a partition not checked that way may pass
		}
		if len(x.pass) == 0 {
			x.d.OK = false
			for _, r := range results {
				x.d.Reasons = append(x.d.Reasons, dropSentences(r)...)
			}
		}
		x.d.Unknown = unknown
	}
	if len(ab) > 0 && len(ba) > 0 {
		// Each direction in another partition: no QP pair can use one for both.
		v.AToB.OK, v.BToA.OK = false, false
		v.AToB.SwitchOK, v.BToA.SwitchOK = RuleFails, RuleFails
		if unknown {
			v.AToB.SwitchOK, v.BToA.SwitchOK = RuleNotKnown, RuleNotKnown
		}
		v.Reasons = append(v.Reasons, fmt.Sprintf("no partition passes the switch ports both ways: %s → %s only in %s, %s → %s only in %s; a QP pair uses one partition for both directions",
			a.Label, b.Label, keyList(ab), b.Label, a.Label, keyList(ba)))
	}
}

// hop is the switch-port check for key at e's cabled switch port; false when e's
// place in a fabric is not known.
func hop(e Endpoint, key PartitionKey) (HopCheck, bool) {
	if e.Fabric == nil || e.At == nil {
		return HopCheck{}, false
	}
	return e.Fabric.CheckHop(*e.At, key)
}

func appendNew[T comparable](list []T, s T) []T {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

func upper(t QPType) string { return strings.ToUpper(t.String()) }

func withArticle(t QPType) string {
	if t == QPRC {
		return "an RC"
	}
	return "a " + upper(t)
}

// qkeyScope decides whether the Q_Key rule applies and adds the warnings that go with it.
func (v *Verdict) qkeyScope(a, b Endpoint) bool {
	eff := a.QPType
	if eff == QPAny {
		eff = b.QPType
	}
	given := func(e Endpoint) bool { return e.QKey != nil || e.WRQKey != nil }
	anyQ := given(a) || given(b)
	ud := eff == QPUD || (eff == QPAny && anyQ)
	switch {
	case eff == QPAny && anyQ:
		v.Warnings = append(v.Warnings, "QP type not given: Q_Keys were checked as for UD QPs (add qp=ud to say so)")
	case eff == QPAny:
		v.Warnings = append(v.Warnings, "QP type not given: only the P_Key rule was checked; UD QPs must also agree on Q_Keys (qp=ud,qkey=...)")
	}
	for _, e := range []Endpoint{a, b} {
		t := e.QPType
		if t == QPAny {
			t = eff
		}
		if given(e) && (t == QPRC || t == QPUC) {
			v.Warnings = append(v.Warnings, fmt.Sprintf("%s's Q_Key is ignored: %s is %s, and only UD QPs check Q_Keys", e.Label, e.Label, upper(t)))
			continue
		}
		// Controlled Q_Keys (top bit set) need privilege in a QP context (RDMAmojo's
		// Q_Key page above); in a send request
		// the top bit is only a flag ("use the context's Q_Key"), so wr_qkey is fine.
		if ud && e.QKey != nil && e.QKey.Controlled() {
			v.Warnings = append(v.Warnings, fmt.Sprintf("%s's qkey %s is controlled (top bit set): an unprivileged process cannot set it in a QP context (Linux since 2023, unless `rdma system set privileged-qkey on`)", e.Label, *e.QKey))
		}
	}
	return ud
}

// direction applies the per-direction rules for packets from s to r. It returns the
// Q_Key sentence separately ("" when the Q_Key rule does not apply).
func direction(s, r Endpoint, typeOK, pkeyOK, ud bool) (Direction, string) {
	d := Direction{From: s.Label, To: r.Label, QPTypeOK: typeOK, PKeyOK: ruleOf(pkeyOK), QKey: QKeyNotApplicable, Reasons: []string{}}
	var sentence string
	if ud {
		d.QKey = QKeyNotChecked
		wire, how := s.QKeyRule.WireQKey(s.QKey, s.WRQKey)
		d.AcceptedQKey = r.QKey
		decides := QKeyRuleDecides(s.QKeyRule, s.QKey, s.WRQKey, r.QKey)
		if !decides { // else which Q_Key goes on the wire is what is not known
			d.WireQKey = wire
		}
		if d.WireQKey != nil && d.AcceptedQKey != nil {
			d.QKey = QKeyMismatch
			if *d.WireQKey == *d.AcceptedQKey {
				d.QKey = QKeyMatch
			}
		}
		sentence = qkeySentence(s, r, d, how, decides)
	}
	d.OK = typeOK && pkeyOK && d.QKey != QKeyMismatch
	return d, sentence
}

// qkeySentence says d's Q_Key rule; how and decides are what direction's WireQKey
// and QKeyRuleDecides gave.
func qkeySentence(s, r Endpoint, d Direction, how string, decides bool) string {
	arrow := s.Label + " → " + r.Label + ": "
	switch d.QKey {
	case QKeyMatch:
		return fmt.Sprintf("%s%s sends Q_Key %s (%s) and %s accepts %s", arrow, s.Label, *d.WireQKey, how, r.Label, *d.AcceptedQKey)
	case QKeyMismatch:
		return fmt.Sprintf("%s%s sends Q_Key %s (%s) but %s accepts only its own qkey %s: the packets are dropped; use the same Q_Key on both", arrow, s.Label, *d.WireQKey, how, r.Label, *d.AcceptedQKey)
	}
	if decides {
		return arrow + "Q_Key not known: " + qkeyRuleSentence(s.Label, r.Label, s.Port, *s.QKey, *s.WRQKey, *r.QKey)
	}
	var missing []string
	if d.WireQKey == nil {
		if s.WRQKey != nil {
			missing = append(missing, fmt.Sprintf("qkey= for %s (its wr_qkey has the top bit set, so it sends its QP-context Q_Key)", s.Label))
		} else {
			missing = append(missing, fmt.Sprintf("qkey= (or wr_qkey=) for %s, the Q_Key it sends", s.Label))
		}
	}
	if d.AcceptedQKey == nil {
		missing = append(missing, fmt.Sprintf("qkey= for %s, the only Q_Key it accepts", r.Label))
	}
	return arrow + "Q_Key not checked: give " + strings.Join(missing, " and ")
}

// checkPKeys fills v.Shared and returns whether some partition works, with the reasons
// and the switch-port checks of the partitions that work (checkHops).
func (v *Verdict) checkPKeys(a, b Endpoint) (bool, []string, []partHops) {
	ga, unA, invA := groupByKey(a.Entries)
	gb, unB, invB := groupByKey(b.Entries)
	var reasons []string
	for _, x := range []struct {
		e           Endpoint
		g           []PartitionSide
		unread, inv int
	}{{a, ga, unA, invA}, {b, gb, unB, invB}} {
		if x.unread > 0 && x.e.Port {
			them := "them"
			if x.unread == 1 {
				them = "it"
			}
			v.Warnings = append(v.Warnings, fmt.Sprintf("%s: %s could not be read; partitions in %s were not considered", x.e.Label, textsafe.Plural(x.unread, "P_Key table entry", "P_Key table entries"), them))
		}
		if len(x.g) > 0 {
			continue
		}
		switch {
		case x.e.NoEntry != "":
			reasons = append(reasons, x.e.NoEntry)
		case !x.e.Port && len(x.e.Entries) == 1 && !x.e.Entries[0].Readable:
			reasons = append(reasons, fmt.Sprintf("%s's P_Key could not be read", x.e.Label))
		case !x.e.Port && len(x.e.Entries) == 1:
			reasons = append(reasons, fmt.Sprintf("%s uses P_Key %s: key 0 is invalid (0x0000 and 0x8000 mark an empty table entry) and matches nothing", x.e.Label, x.e.Entries[0].PKey))
		case x.e.TableNotRead != "" || x.e.EntryNotRead != "":
			reasons = append(reasons, fmt.Sprintf("%s: %s", x.e.Label, cmp.Or(x.e.TableNotRead, x.e.EntryNotRead)))
		case len(x.e.Entries) == 0:
			reasons = append(reasons, fmt.Sprintf("%s has no P_Key (no table entries)", x.e.Label))
		default:
			reasons = append(reasons, fmt.Sprintf("%s has no valid P_Key entry (%d invalid, %d unreadable)", x.e.Label, x.inv, x.unread))
		}
	}
	if len(ga) == 0 || len(gb) == 0 {
		return false, reasons, nil
	}

	// Merge the two key-sorted lists.
	var shared []SharedPartition
	for i, j := 0, 0; i < len(ga) && j < len(gb); {
		switch {
		case ga[i].PKey.Partition() < gb[j].PKey.Partition():
			i++
		case ga[i].PKey.Partition() > gb[j].PKey.Partition():
			j++
		default:
			sa, sb := ga[i], gb[j]
			works := sa.PKey.IsFull() || sb.PKey.IsFull()
			shared = append(shared, SharedPartition{Key: sa.PKey.Partition(), A: sa, B: sb, Works: works})
			i++
			j++
		}
	}
	v.Shared = shared
	hops := v.checkHops(a, b)

	if len(shared) == 0 {
		if len(ga) == 1 && len(gb) == 1 {
			return false, append(reasons, fmt.Sprintf("%s is in partition %s (%s) and %s in partition %s (%s): different partitions never talk",
				a.Label, ga[0].PKey.Partition().String(), ga[0].PKey, b.Label, gb[0].PKey.Partition().String(), gb[0].PKey)), nil
		}
		return false, append(reasons, fmt.Sprintf("%s and %s share no partition (%s: %s; %s: %s)",
			a.Label, b.Label, a.Label, groupKeys(ga), b.Label, groupKeys(gb))), nil
	}

	var nWorking, unchecked int
	chosen := -1 // prefer an application partition over the default one for the headline
	var limited []PartitionKey
	for i := range shared {
		sp := &shared[i]
		if !sp.Works {
			limited = append(limited, sp.Key)
			continue
		}
		nWorking++
		if sp.Switch == HopUnknown {
			unchecked++
		}
		// The headline names a partition the switch ports pass where there is one,
		// else one not checked there, before one they drop.
		better := chosen < 0 || shared[chosen].Switch > sp.Switch ||
			(shared[chosen].Switch == sp.Switch && shared[chosen].Key == DefaultPartition && sp.Key != DefaultPartition)
		if better {
			chosen = i
		}
	}
	if nWorking == 0 {
		return false, append(reasons, limitedReason(limited, false)), nil
	}
	ch := shared[chosen]
	// "works" only where the switch ports pass it, and none was left unchecked there.
	onlyDefault := ch.Key == DefaultPartition && ch.Switch == HopPasses && unchecked == 0
	switch {
	case onlyDefault && len(shared) == 1:
		reasons = append(reasons, fmt.Sprintf("they share only the default partition 0x7fff: %s; it works, but they have no other partition in common", pairWords(a, b, ch)))
	case onlyDefault:
		reasons = append(reasons, fmt.Sprintf("only the default partition 0x7fff works for them: %s", pairWords(a, b, ch)))
	default:
		var others []PartitionKey
		for _, sp := range shared {
			if !sp.Works || sp.Switch != HopPasses || sp.Key == ch.Key {
				continue // a partition a switch drops, or not checked there, is said so by applyHops
			}
			others = append(others, sp.Key)
		}
		if len(others) == 0 {
			reasons = append(reasons, fmt.Sprintf("they share partition %s: %s", ch.Key.String(), pairWords(a, b, ch)))
			break
		}
		reasons = append(reasons, fmt.Sprintf("they share partition %s: %s%s%s",
			ch.Key.String(), pairWords(a, b, ch), OthersWork, keyList(others)))
	}
	if len(limited) > 0 {
		reasons = append(reasons, limitedReason(limited, true))
	}
	// IBA §10.9: a port may be a full and a limited member of the same partition; a QP
	// there must pick the full entry to reach a limited member.
	for _, x := range []struct {
		e     Endpoint
		s, o  PartitionSide
		other string
	}{{a, ch.A, ch.B, b.Label}, {b, ch.B, ch.A, a.Label}} {
		if !x.s.Both {
			continue
		}
		lead := fmt.Sprintf("%s has partition %s as both full (index %d) and limited (index %d)", x.e.Label, ch.Key.String(), x.s.Index, x.s.OtherIndex)
		if x.o.PKey.IsFull() {
			reasons = append(reasons, lead+fmt.Sprintf(": either works with %s's full member; index %d (full) is what ib_find_pkey picks", x.other, x.s.Index))
		} else {
			reasons = append(reasons, lead+fmt.Sprintf(": a QP on %s must use index %d (full) to reach %s's limited member", x.e.Label, x.s.Index, x.other))
		}
	}
	return true, reasons, hops
}

// OthersWork ends the reason that names the partition they share with the others that
// work: a reason without it, for the same partition, still holds when more work
// (query.CanTalk's alternatives compare them).
const OthersWork = "; other shared partitions that work: "

// pairWords says which entry each side uses for a working shared partition.
func pairWords(a, b Endpoint, sp SharedPartition) string {
	entry := func(e Endpoint, s PartitionSide) string {
		switch {
		case s.Index != NoIndex:
			return fmt.Sprintf("index %d on %s (%s, %s)", s.Index, e.Label, s.PKey, s.PKey.Membership())
		case e.Label == s.PKey.String():
			// The endpoint is named by its P_Key: "0x8001 with 0x8001" says it twice.
			return fmt.Sprintf("%s (%s)", s.PKey, s.PKey.Membership())
		}
		return fmt.Sprintf("%s with %s (%s)", e.Label, s.PKey, s.PKey.Membership())
	}
	return entry(a, sp.A) + " and " + entry(b, sp.B)
}

// limitedReason explains shared partitions (keys) where both ends are limited members.
// When another partition works (alsoWorking) it is a side note, not the blocker.
func limitedReason(keys []PartitionKey, alsoWorking bool) string {
	if len(keys) == 1 {
		k := keys[0]
		name := "partition " + k.String()
		if k == DefaultPartition {
			name = "the default partition 0x7fff"
		}
		if alsoWorking {
			return fmt.Sprintf("%s does not work for them: both ends are limited members of it", name)
		}
		return fmt.Sprintf("both ends are limited members of %s: at least one must be a full member (%s)", name, PKey(k).WithMembership(Full))
	}
	if alsoWorking {
		return fmt.Sprintf("partitions %s do not work for them: both ends are limited members of each", keyList(keys))
	}
	return fmt.Sprintf("both ends are only limited members of partitions %s: for each, at least one end must be a full member", keyList(keys))
}

// maxListed bounds key lists in reasons; a 128-entry table would drown the sentence.
const maxListed = 8

func groupKeys(g []PartitionSide) string {
	keys := make([]PartitionKey, len(g))
	for i := range g {
		keys[i] = g[i].PKey.Partition()
	}
	return keyList(keys)
}

// keyList prints keys, at most maxListed of them, then "and N more".
func keyList(keys []PartitionKey) string {
	listed := make([]string, min(len(keys), maxListed))
	for i := range listed {
		listed[i] = keys[i].String()
	}
	s := strings.Join(listed, ", ")
	if len(keys) > maxListed {
		s += fmt.Sprintf(" and %d more", len(keys)-maxListed)
	}
	return s
}
