package fabric

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/textsafe"
)

// Finding rules, stable identifiers for scripts.
const (
	// Errors: the tables of the two ends of a cable disagree.
	RuleHCAKeyNotOnSwitch = "hca-key-not-on-switch"
	RuleSwitchKeyNotOnHCA = "switch-key-not-on-hca"
	// Warnings: policy.
	RuleEnforcementOff  = "enforcement-off"
	RuleLimitedOnly     = "limited-only-partition"
	RuleTableFull       = "table-full"
	RulePortNotActive   = "port-not-active"
	RuleNotRead         = "not-read"
	RuleSweepIncomplete = "sweep-incomplete"
	// RuleDefaultNotIndex0: a CA or router port whose index 0 does not hold the
	// default partition: IPoIB's parent interface takes its P_Key from index 0.
	RuleDefaultNotIndex0 = "default-not-at-index-0"
	// RuleEnforcingBetweenSwitches: a switch port cabled to another switch that
	// enforces partitions, which OpenSM never leaves so.
	RuleEnforcingBetweenSwitches = "enforcing-between-switches"
)

// FindingPort returns the port for a finding.
func (f *Fabric) FindingPort(id check.PortID) check.FindingPort {
	fp := check.FindingPort{PortID: id}
	if n := f.Node(id.Node); n != nil {
		fp.Description = n.Description
	}
	return fp
}

// actionRestart is how to make OpenSM rewrite a table changed behind its back: a
// running OpenSM reads a port's P_Key table only when the port is new to it or comes
// back in INIT (a reset), or when it sweeps as a new master (osm_port_info_rcv.c,
// need_update), so kill -HUP (a heavy sweep that re-reads partitions.conf) compares
// with the tables it remembers writing and sends nothing (seen with OpenSM 3.3.23).
const actionRestart = "restart the Subnet Manager or reset the port's link so the SM reads the table again and rewrites it " +
	"(a running OpenSM re-reads a port's table only then: kill -HUP re-reads partitions.conf, not the tables)"

const actionResweep = "make the Subnet Manager reprogram both ends: " + actionRestart + "; " +
	"if the tables still differ, look for P_Key table errors on these ports in the SM's log"

// AuditOptions say what the audit assumes about the Subnet Manager.
type AuditOptions struct {
	// PartEnforce is the SM's partition enforcement (OpenSM part_enforce, -Z;
	// opensm.conf, osm_subnet.c): "" or both, in, out, off.
	//   - off: OpenSM leaves the tables of switch ports facing end ports as they were
	//     and turns their enforcement off (osm_pkey_mgr.c pkey_mgr_update_peer_port),
	//     so enforcement being off, and keys that differ where it is off, are not
	//     findings; a port whose bits as read still enforce drops the CA's keys its
	//     table lacks, and that is;
	//   - in, out: on those ports OpenSM sets only inbound (0x8) or only outbound
	//     (0x4) enforcement (pkey_mgr_enforce_partition), so the other direction off
	//     is what it was told, not a finding.
	PartEnforce string
}

// AuditResult is an audit of one sweep: the findings, the ports it did not audit
// because they are outside the subnet, and what it could not check.
type AuditResult struct {
	Findings []check.Finding
	// Outside are ports with a link that are not in the swept subnet (subnet.go): not
	// audited, and not a gap.
	Outside []OutsidePort
	// NotChecked is what the audit needed and the sweep did not read: the audit is
	// incomplete (exit 4) when it is not empty.
	NotChecked []NotChecked
	// TablesChecked counts the P_Key tables of the subnet that were read and audited.
	TablesChecked int
}

// NotChecked is one thing the audit could not check, and why: one of what the sweep
// did not read (Fabric.NotRead), or an SA record fabric check --sa did not get.
type NotChecked struct {
	// Port is the port concerned (port 0 for a node); zero for the sweep as a whole.
	Port check.FindingPort
	// Kind is the kind of gap; What names the thing not read (NotRead's NotRead*
	// constants, or "SA P_KeyTableRecord", "SA MCMemberRecord" from fabric check --sa).
	Kind   NotCheckedKind
	What   string
	Reason string

	// example names the item in a line (NotCheckedLines), finding says it in the
	// audit's finding; hides: the item is a link the sweep may have missed nodes
	// behind (MissedLinks). Set by NotRead.
	example, finding string
	hides            bool
}

// NotCheckedKind is the kind of a NotChecked, named as a JSON document's incomplete
// kind names it (cmd/ibkey/internal/cmdutil's Incomplete* kinds).
type NotCheckedKind string

// The kinds of NotChecked.
const (
	// UnreadTable: a port's P_Key table was not read.
	UnreadTable NotCheckedKind = "unread-table"
	// UnreadNode: a node's attributes or a port's PortInfo were not read.
	UnreadNode NotCheckedKind = "unread-node"
	// PartialSweep: the sweep stopped early, or a link's far end did not answer.
	PartialSweep NotCheckedKind = "partial-sweep"
	// OtherNotChecked: anything else (an SA record).
	OtherNotChecked NotCheckedKind = "not-checked"
)

// Incomplete reports whether the audit depends on something not read.
func (r AuditResult) Incomplete() bool { return len(r.NotChecked) > 0 }

// NotCheckedLine is one line of what the audit could not check: one per thing not read
// (NotChecked.What), with its kind.
type NotCheckedLine struct {
	Kind NotCheckedKind
	// Text is "2 P_Key tables not read: \"HcaB\"[1]: P_KeyTable: timed out; ...",
	// "SA P_KeyTableRecord not checked: ..." (NotCheckedLines).
	Text string
}

// AuditFabric applies the fabric rules to one sweep:
//   - errors: a CA port's key that the switch port it is cabled to does not hold (with
//     enforcement on the switch drops that partition's packets), and the reverse;
//   - warnings: partition enforcement off on a switch port facing a CA, partitions whose
//     members are all limited, full tables, cabled ports that are not ACTIVE, and
//     whatever the sweep could not read.
//
// It also says what it did not audit (ports outside the subnet) and what it could not
// check (tables, ports and nodes not read: the audit is then incomplete). The
// partitions.conf comparison is in internal/partconf (CompareFabric).
func AuditFabric(f *Fabric, opt AuditOptions) AuditResult {
	var res AuditResult
	var out []check.Finding
	// warn adds a warning: the audit's errors are the switch ports' (auditSwitchPort).
	warn := func(rule string, keys []check.PKey, msg, action string, ports ...check.PortID) {
		fp := make([]check.FindingPort, len(ports))
		for i, p := range ports {
			fp[i] = f.FindingPort(p)
		}
		out = append(out, check.Finding{Severity: check.SeverityWarning, Rule: rule, Ports: fp, PKeys: keys, Message: msg, Action: action})
	}
	// What the sweep did not read (NotRead): each a not-read finding, but the tables
	// of a sweep without tables (--no-tables), which are one finding.
	res.NotChecked = f.NotRead(true)
	var noTables []check.PortID
	// End-port tables not read: a full member may sit in one of them.
	unreadEnds := 0
	for _, nc := range res.NotChecked {
		id := nc.Port.PortID
		if nc.What == NotReadTable || nc.What == NotReadNoTables {
			if n := f.Node(id.Node); n != nil && n.IsEndPort(n.Port(id.Port)) {
				unreadEnds++
			}
		}
		switch nc.What {
		case NotReadSweep:
			warn(RuleSweepIncomplete, nil, nc.finding, "run the sweep again with a longer timeout")
		case NotReadLink:
			warn(RuleNotRead, nil, nc.finding, "check the link and the node (ibportstate, the node's SMA); nodes behind it are not checked", id)
		case NotReadPeer:
			warn(RuleNotRead, nil, nc.finding, "sweep again (fabric discover, or fabric check on the live fabric): a sweep reads the far end of every link that is up; if it does not answer, check the link and the node behind it (ibportstate, the node's SMA)", id)
		case NotReadUnprobed:
			warn(RuleNotRead, nil, nc.finding, "sweep again from a port fewer hops away from that switch (a directed route holds at most 63 hops)", id)
		case NotReadNode:
			warn(RuleNotRead, nil, nc.finding, "re-run the sweep; if it persists check the node's SMA", id)
		case NotReadPortInfo, NotReadTable:
			warn(RuleNotRead, nil, nc.finding, "re-run the sweep; if it persists check the port", id)
		case NotReadNoTables:
			noTables = append(noTables, id)
		}
	}
	res.Outside = f.OutsidePorts()
	type keyUse struct {
		full, limited []check.PortID
	}
	keys := map[check.PartitionKey]*keyUse{}
	for _, n := range f.Nodes {
		noCap := n.NoEnforcementCap()
		for _, p := range n.Ports {
			id := check.PortID{Node: n.GUID, Port: p.Num}
			if !f.InSubnet(id) {
				continue // listed in res.Outside
			}
			// The external ports of a switch without enforcement have no table (the
			// sweep reads them as length 0): nothing there was checked.
			if p.PKeys != nil && (p.Peer != nil || n.IsEndPort(p)) && !(noCap && p.Num > 0) {
				res.TablesChecked++
			}
			if p.Peer != nil && p.State != "" && p.State != check.StateActive {
				peer := f.Label(*p.Peer)
				warn(RulePortNotActive, nil,
					fmt.Sprintf("%s is %s (physical state %s) although it is cabled to %s: no data passes until the Subnet Manager makes it ACTIVE", f.Label(id), p.State, p.PhysState, peer),
					"check that a Subnet Manager runs and sees the port (sminfo, the SM's log); a port that stays INIT or ARMED means no SM or an SM error", id)
			}
			if p.PKeys != nil && p.TableSize > 0 && (p.Peer != nil || n.IsEndPort(p)) {
				valid := 0
				for _, k := range p.PKeys {
					if k.Valid() {
						valid++
					}
				}
				if valid == p.TableSize {
					warn(RuleTableFull, nil,
						fmt.Sprintf("the P_Key table of %s is full (%d of %d entries hold a key): the Subnet Manager cannot add another partition to it (OpenSM logs \"Pkey table is full\")", f.Label(id), valid, p.TableSize),
						"take the port out of partitions it does not need in the SM's configuration (ibkey partitions check FILE lists ports in more partitions than their table holds)", id)
				}
			}
			if n.Type != check.NodeSwitch && len(p.PKeys) > 0 && !p.PKeys[0].IsDefault() {
				what := "is empty"
				if p.PKeys[0].Valid() {
					what = "holds " + p.PKeys[0].String() + " (partition " + p.PKeys[0].Partition().String() + ")"
				}
				where := ""
				if i := slices.IndexFunc(p.PKeys, check.PKey.IsDefault); i >= 0 {
					where = fmt.Sprintf("; the default partition is at index %d", i)
				}
				warn(RuleDefaultNotIndex0, []check.PKey{p.PKeys[0]},
					fmt.Sprintf("index 0 of %s %s, not the default partition 0x7fff%s: IPoIB's parent interface (ib0) takes its P_Key from index 0, and jobs that use index 0 (NCCL_IB_PKEY unset) use that entry", f.Label(id), what, where),
					"intended only if partitions.conf marks that partition indx0 (or OpenSM runs with allow_both_pkeys and the port is a limited member of the default partition); otherwise "+actionRestart, id)
			}
			if n.IsEndPort(p) && p.PKeys != nil {
				for k, s := range memberships(p.PKeys) {
					u := keys[k]
					if u == nil {
						u = &keyUse{}
						keys[k] = u
					}
					if s.full {
						u.full = append(u.full, id)
					} else {
						u.limited = append(u.limited, id)
					}
				}
			}
			// A switch without enforcement (NoEnforcementCap) filters nothing and OpenSM
			// leaves its ports alone: nothing to compare, no enforcement to turn on.
			if n.Type == check.NodeSwitch && p.Num > 0 && p.Peer != nil && !noCap {
				peerNode := f.Node(p.Peer.Node)
				if peerNode == nil || peerNode.Type == check.NodeSwitch || !f.InSubnet(*p.Peer) {
					continue
				}
				out = append(out, auditSwitchPort(f, n, p, peerNode, peerNode.Port(p.Peer.Port), opt.PartEnforce)...)
			}
		}
	}
	if len(noTables) > 0 {
		them := "them"
		if len(noTables) == 1 {
			them = "it"
		}
		warn(RuleNotRead, nil,
			fmt.Sprintf("%s not read: the sweep did not read tables (fabric discover --no-tables), so no partition rule was checked on %s (%s)",
				textsafe.Plural(len(noTables), "P_Key table was", "P_Key tables were"), them, f.labels(noTables)),
			"sweep again with the tables (fabric discover without --no-tables, or fabric check on the live fabric)", noTables...)
	}
	// A limited-only partition in a partial sweep: a full member may be in what was not
	// read, an end-port table or a node behind a link the sweep missed.
	var unread []string
	if unreadEnds > 0 {
		unread = append(unread, textsafe.Plural(unreadEnds, "end-port table was", "end-port tables were")+" not read")
	}
	if slices.ContainsFunc(res.NotChecked, func(nc NotChecked) bool { return nc.hides }) {
		unread = append(unread, "the nodes behind links the sweep missed were not read")
	}
	unreadNote := ""
	if len(unread) > 0 {
		unreadNote = " (among the tables read: " + strings.Join(unread, " and ") + ", a full member may be there)"
	}
	// Links between switches (Fabric.links) that drop a partition end ports hold:
	// which routes cross one is not read, hence a warning. A link whose table or bits
	// were not read is a not-read finding already (NotRead).
	for id, p := range f.links {
		var lacks []check.PKey
		for _, k := range slices.Sorted(maps.Keys(keys)) {
			if _, res := linkHop(id, p, k); res == check.HopDrops {
				lacks = append(lacks, check.PKey(k))
			}
		}
		if len(lacks) == 0 {
			continue
		}
		names := make([]string, len(lacks))
		for i, k := range lacks {
			names[i] = k.Partition().String()
		}
		warn(RuleEnforcingBetweenSwitches, lacks,
			fmt.Sprintf("%s enforces partitions (%s) on its link to the switch port %s, and its table lacks %s, which end ports hold: their packets routed over this link are dropped there (which routes cross it was not read)",
				f.Label(id), enforcingDirs(p.Enforcement), f.Label(*p.Peer), textsafe.Plural(len(lacks), "partition", "partitions")+" ("+strings.Join(textsafe.Capped(names, 8), ", ")+")"),
			"OpenSM turns enforcement off on links between switches in every sweep (osm_pkey_mgr.c): if OpenSM manages this subnet, make it sweep again (kill -HUP it); if the bits stay on, another Subnet Manager or tool sets them", id, *p.Peer)
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		u := keys[k]
		if len(u.full) > 0 {
			continue // a key is in keys only with a member, full or limited
		}
		sort.Slice(u.limited, func(i, j int) bool { return check.LessPortID(u.limited[i], u.limited[j]) })
		what := fmt.Sprintf("all %d member ports are limited members", len(u.limited))
		if len(u.limited) == 1 {
			what = "its only member port is a limited member"
		}
		warn(RuleLimitedOnly, []check.PKey{check.PKey(k)},
			fmt.Sprintf("partition %s: %s (%s): limited members cannot talk to each other, so nobody can talk in it%s", k, what, f.labels(u.limited), unreadNote),
			"make at least one member full (GUID=full in partitions.conf, e.g. the server the others use), or remove the partition", u.limited...)
	}
	check.SortFindings(out)
	res.Findings = out
	return res
}

func quoteDesc(n *Node) string {
	if n.Description == "" {
		return n.GUID.String()
	}
	return fmt.Sprintf("%q", n.Description)
}

// auditSwitchPort checks a switch external port sw[p] cabled to a CA or router port.
func auditSwitchPort(f *Fabric, sw *Node, p *Port, caNode *Node, ca *Port, partEnforce string) []check.Finding {
	var out []check.Finding
	swID, caID := check.PortID{Node: sw.GUID, Port: p.Num}, check.PortID{Node: caNode.GUID, Port: ca.Num}
	ports := []check.FindingPort{f.FindingPort(caID), f.FindingPort(swID)}
	enforcing := ""
	if e := p.Enforcement; e != nil {
		var off, unasked []string // off, and off where the SM was told to enforce
		if !e.Inbound {
			off = append(off, "inbound")
			if partEnforce != "out" && partEnforce != "off" {
				unasked = append(unasked, "inbound")
			}
		}
		if !e.Outbound {
			off = append(off, "outbound")
			if partEnforce != "in" && partEnforce != "off" {
				unasked = append(unasked, "outbound")
			}
		}
		switch {
		case len(unasked) > 0:
			// OpenSM re-reads opensm.conf's part_enforce and no_partition_enforcement
			// (can_update in osm_subnet.c opt_tbl) in a heavy sweep only
			// (osm_state_mgr.c do_sweep, osm_subn_rescan_conf_files); kill -HUP runs one
			// (seen with OpenSM 3.3.23: it then wrote the CA's keys to the switch port).
			// Inbound checks what the CA sends into the switch, outbound what the
			// switch sends to the CA (IBA 10.9.4 switch partition enforcement);
			// part_enforce in and out leave one of them on.
			what := "packets of any partition pass the switch there, so isolation rests on the end ports alone"
			switch {
			case e.Inbound:
				what = "packets of any partition leave the switch toward it (what it sends is still checked), so in that direction isolation rests on its own P_Key check"
			case e.Outbound:
				what = "packets of any partition it sends enter the fabric (what the switch sends it is still checked), so in that direction isolation rests on the end ports that receive them"
			}
			out = append(out, check.Finding{Severity: check.SeverityWarning, Rule: RuleEnforcementOff, Ports: ports,
				Message: fmt.Sprintf("partition enforcement is off (%s) on %s, which faces %s: %s",
					strings.Join(unasked, ", "), f.Label(swID), f.Label(caID), what),
				Action: "turn switch enforcement on in the Subnet Manager (OpenSM: part_enforce both, no_partition_enforcement FALSE in opensm.conf), then kill -HUP it: a heavy sweep re-reads them, a light one does not; if it was started with -Z off or -N, restart it without them (a heavy sweep applies a value only when the file's changes: osm_subnet.c osm_subn_rescan_conf_files)"})
		}
		switch {
		case len(off) == 0:
			enforcing = "with enforcement on, the switch drops them"
		case e.Inbound || e.Outbound:
			enforcing = "with " + strings.Join(off, " ") + " enforcement off the switch still drops them in the other direction"
		}
	}
	if p.PKeys == nil || ca.PKeys == nil {
		return out
	}
	enforcing = cmp.Or(enforcing, "once enforcement is on, the switch will drop them")
	caKeys, swKeys := memberships(ca.PKeys), memberships(p.PKeys)
	// The CA's keys the switch port lacks, judged by the switch-port rule can-talk
	// applies too (hop.go, CheckHop): an error where the switch drops them (it enforces
	// in a direction), a warning where it passes them now (its enforcement is off: with
	// OpenSM's part_enforce off, or when a port has more keys than the switch port holds,
	// ERR 0507, OpenSM leaves that switch port's table as it was and turns enforcement
	// off, osm_pkey_mgr.c pkey_mgr_update_peer_port) or where its bits were not read.
	var drops, passes, unknown []check.PKey
	for k, s := range caKeys {
		h, ok := f.CheckHop(caID, k)
		if !ok || !h.TableRead || h.OnSwitch {
			continue
		}
		pk := k.PKey(s.membership())
		switch {
		case h.FromEnd == check.HopDrops || h.ToEnd == check.HopDrops:
			drops = append(drops, pk)
		case h.FromEnd == check.HopUnknown || h.ToEnd == check.HopUnknown:
			unknown = append(unknown, pk)
		default:
			passes = append(passes, pk)
		}
	}
	lacks := func(ks []check.PKey) string {
		return fmt.Sprintf("%s holds %s, which %s, the switch port it is cabled to, does not", f.Label(caID), pkeyList(ks), f.Label(swID))
	}
	those := func(ks []check.PKey) string {
		if len(ks) == 1 {
			return "that partition"
		}
		return "those partitions"
	}
	if ks := byKey(drops); len(ks) > 0 {
		action := actionResweep
		if partEnforce == "off" {
			action = "OpenSM with part_enforce off turns enforcement off on the switch ports facing CAs when it programs them (osm_pkey_mgr.c pkey_mgr_update_peer_port): " +
				actionRestart + "; if the bits stay on, OpenSM does not run with that opensm.conf or something else sets them"
		}
		out = append(out, check.Finding{Severity: check.SeverityError, Rule: RuleHCAKeyNotOnSwitch, Ports: ports, PKeys: ks,
			Message: fmt.Sprintf("%s: packets of %s to and from this port do not pass the switch (%s)", lacks(ks), those(ks), enforcing),
			Action:  action})
	}
	if partEnforce == "off" {
		// What passes, what is not known to be dropped and stale keys are what OpenSM
		// was told to leave (it neither rewrites these tables nor enforces here).
		return out
	}
	if ks := byKey(unknown); len(ks) > 0 {
		out = append(out, check.Finding{Severity: check.SeverityWarning, Rule: RuleHCAKeyNotOnSwitch, Ports: ports, PKeys: ks,
			Message: fmt.Sprintf("%s: if that switch port enforces partitions it drops %s packets (its enforcement bits were not read)", lacks(ks), those(ks)),
			Action:  actionResweep})
	}
	if ks := byKey(passes); len(ks) > 0 {
		out = append(out, check.Finding{Severity: check.SeverityWarning, Rule: RuleHCAKeyNotOnSwitch, Ports: ports, PKeys: ks,
			Message: fmt.Sprintf("%s: that switch port does not enforce partitions, so it passes them now; %s", lacks(ks), enforcing),
			Action:  "nothing is dropped while enforcement is off (a Subnet Manager that turns it on programs the switch port first: OpenSM copies the CA port's keys there); if enforcement should be on, see enforcement-off"})
	}
	// The switch port's keys the CA lacks: the switch passes that partition toward a
	// port that drops it anyway (a CA port checks the P_Key of every packet it receives
	// against its own table, IBA 10.9), so isolation holds; only the switch's filter
	// is wider than it needs to be. OpenSM itself leaves such keys: it rewrites a switch
	// port facing a CA only up to the last 32-entry block the CA's keys fill, so when a
	// port leaves enough partitions to need one block fewer, the old keys stay in the
	// block after (osm_pkey_mgr.c, pkey_mgr_update_peer_port; seen with OpenSM 3.3.23).
	var extra []check.PKey
	for k, s := range swKeys {
		if _, ok := caKeys[k]; !ok {
			extra = append(extra, k.PKey(s.membership()))
		}
	}
	if ks := byKey(extra); len(ks) > 0 {
		out = append(out, check.Finding{Severity: check.SeverityWarning, Rule: RuleSwitchKeyNotOnHCA, Ports: ports, PKeys: ks,
			Message: fmt.Sprintf("%s holds %s, which %s, the port it faces, does not: the switch lets %s through to a port that is not a member, which drops those packets itself (a stale entry, or the CA's table changed behind the SM's back)",
				f.Label(swID), pkeyList(ks), f.Label(caID), those(ks)),
			Action: "harmless to isolation; OpenSM 3.3.23 leaves keys in a switch port's table past the last 32-entry block the CA's keys fill. If the CA's table was changed behind the SM's back, " + actionRestart})
	}
	return out
}

// byKey sorts keys by partition.
func byKey(ks []check.PKey) []check.PKey {
	slices.SortFunc(ks, func(a, b check.PKey) int { return cmp.Compare(a.Partition(), b.Partition()) })
	return ks
}

func pkeyList(ks []check.PKey) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = k.String()
	}
	if len(s) == 1 {
		return "P_Key " + s[0]
	}
	return "P_Keys " + strings.Join(s, ", ")
}

// Member is one port holding a partition's key, for `ibkey fabric pkeys --key`.
type Member struct {
	check.FindingPort
	Type check.NodeType `json:"type"`
	// EndPort is false for a switch's external port, which only mirrors the port it
	// faces.
	EndPort bool `json:"end_port"`
	// Membership is full, limited or both (a full and a limited entry).
	Membership string `json:"membership"`
	// Indexes of the entries holding the key.
	Indexes []int `json:"indexes"`
}

// Members lists the ports whose table holds the 15-bit key of p, in node GUID and port
// order.
func (f *Fabric) Members(p check.PKey) []Member {
	var out []Member
	for _, n := range f.Nodes {
		for _, port := range n.Ports {
			var s membershipSet
			var idx []int
			for i, k := range port.PKeys {
				if k.Valid() && k.Partition() == p.Partition() {
					idx = append(idx, i)
					s.add(k)
				}
			}
			if len(idx) == 0 {
				continue
			}
			out = append(out, Member{FindingPort: f.FindingPort(check.PortID{Node: n.GUID, Port: port.Num}), Type: n.Type,
				EndPort: n.IsEndPort(port), Membership: s.String(), Indexes: idx})
		}
	}
	return out
}

// maxListed bounds port lists in findings; a fabric of thousands would drown the sentence.
const maxListed = 8

// labels names the ports, at most maxListed of them, then "and N more".
func (f *Fabric) labels(ids []check.PortID) string {
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = f.Label(id)
	}
	return strings.Join(textsafe.Capped(names, maxListed), ", ")
}
