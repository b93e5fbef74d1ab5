package smlog

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/partconf"
	"github.com/ibkey/ibkey/internal/query"
	"github.com/ibkey/ibkey/internal/textsafe"
)

// Explainer says, for each event, which rule failed (in the words can-talk uses) and
// what to change: with a partitions file, the line to edit.
type Explainer struct {
	R *Resolver
	// Parts is --partitions FILE, nil when not given; PartsText its text, for the
	// lines a fix quotes.
	Parts     *query.Partitions
	PartsText string
}

// Explanation is what an event means.
type Explanation struct {
	From, To, Reporter, Switch *End
	// Rule is the rule that failed; Fix what to change, FixAt the file position it
	// names ("" when none).
	Rule, Fix, FixAt string
	// Notes are what could not be resolved or is worth knowing.
	Notes []string
}

// ExplainGroup explains a group by its first event (and, where the group collects
// several keys, all of them).
func (x *Explainer) ExplainGroup(g *Group) Explanation {
	ex := x.Explain(g.First)
	if g.First.Kind == KindTableFull && len(g.Keys) > 1 {
		var keys []string
		for _, k := range g.Keys {
			keys = append(keys, check.PKey(k).Partition().String())
		}
		if g.MoreKeys > 0 {
			keys = append(keys, fmt.Sprintf("and %d more", g.MoreKeys))
		}
		ex.Rule = tableFullRule(ex.From, "partitions "+strings.Join(keys, ", "))
	}
	return ex
}

// Explain explains ev.
func (x *Explainer) Explain(ev *Event) Explanation {
	var ex Explanation
	res := func(p Port) *End {
		if p.LID == 0 && p.GUID == 0 && p.NodeGUID == 0 && p.NodeDesc == "" && !p.QPKnown {
			return nil
		}
		return new(x.R.Resolve(p, &ex.Notes))
	}
	ex.From, ex.To, ex.Reporter = res(ev.From), res(ev.To), res(ev.Reporter)
	if e := ex.From; e != nil && e.QPKnown && e.QPLow12 { // only QP1 is cut (assemble.go trapDetail)
		ex.Notes = append(ex.Notes, fmt.Sprintf("QP1 is known only in its low 12 bits (0x%03x): OpenSM's error-level trap line cuts it (osm_trap_rcv.c log_trap_info) and %s", e.QP, noReport))
	}
	for _, e := range []*End{ex.From, ex.To, ex.Reporter} {
		if e != nil && e.From == "" && e.LID != 0 && !multicastLID(e.LID) {
			n := fmt.Sprintf("LID %d is not resolved: the log does not name it; give --fabric-file, or a fabric transport (--ibsim, --ca) to sweep now", e.LID)
			if f := x.R.Fabric; f != nil {
				n = fmt.Sprintf("LID %d is not resolved: neither the log nor the fabric read (swept through %s) has it: LIDs were reassigned since, or that port is gone", e.LID, cmp.Or(f.Source, "an unnamed transport"))
			}
			if !slices.Contains(ex.Notes, n) {
				ex.Notes = append(ex.Notes, n)
			}
		}
	}
	switch ev.Kind {
	case KindBadPKey, KindBadQKey:
		if ev.KeyType == "" {
			// The header alone: osm_trap_rcv.c log_trap_info writes the key and the
			// packet's ends on the next line, at once.
			ex.Rule = fmt.Sprintf("%s reported trap %d (a packet dropped for its key), but the log read ends after the trap's first line: the key and the packet's ends are not known", labelOr(ex.Reporter, "a port"), ev.Trap)
			ex.Fix = "read the log again once OpenSM has written the trap's next line"
			break
		}
		if ev.Kind == KindBadQKey {
			x.badQKey(ev, &ex)
			break
		}
		x.badPKey(ev, &ex)
	case KindBadSwitchPKey:
		x.badSwitchPKey(ev, &ex)
	case KindBadMKey:
		// opensm(8) "MKey Protection Levels" (IBA 14.2.4.1): a Get is refused only
		// at levels 2 and 3; an M_Key of 0 disables the check.
		ex.Rule = "a port with a non-zero M_Key accepts a Set, and at protection level 2 or 3 a Get, only with that M_Key (IBA 14.2.4.1): "
		if ev.KeyType == "" {
			// The header alone (osm_trap_rcv.c log_trap_info): the M_Key and the SMP
			// are only in the report (osm_inform.c log_notice).
			ex.Rule += fmt.Sprintf("%s refused an SMP for its M_Key; the SMP and the M_Key it carried are not known: %s", labelOr(ex.Reporter, "the port"), noReport)
		} else {
			ex.Rule += fmt.Sprintf("%s refused M_Key 0x%016x (%s)", labelOr(ex.Reporter, "the port"), ev.Key, ev.Detail)
		}
		ex.Fix = "give the SM the ports' M_Key (opensm.conf m_key), or find who sends SMPs with a wrong M_Key"
	case KindPathRefused:
		x.pathRefused(ev, &ex)
	case KindPathNoPartition:
		k := check.PKey(ev.Key)
		ex.Rule = fmt.Sprintf("both ports hold P_Key %s, but OpenSM's configuration has no partition %s: the tables hold a key the partitions file no longer defines (left from an earlier configuration, or not set by this SM); the SA answered with the default SL %d", k, k.Partition(), ev.SL)
		ex.Fix, ex.FixAt = x.fixDefine(k.Partition(), "define partition "+k.Partition().String()+" in the partitions file if the ports are to use it; else a heavy sweep (SIGHUP to OpenSM) reprograms the tables without it")
	case KindPathNoRoute:
		// osm_sa_path_record.c, osm_sa_multipath_record.c pr_rcv_get_path_parms,
		// mpr_rcv_get_path_parms walk the route along the forwarding tables OpenSM
		// computed (osm_switch_get_route_by_lid) before any partition check, and
		// refuse the path where it breaks.
		why := "a switch's forwarding table has no port for the destination LID"
		switch ev.Code {
		case "1F05", "4505":
			why = "the route leaves a switch by a port with no link"
		case "1F06", "4503":
			why = "the route ends at another port than the destination"
		case "1F25", "4520":
			why = "the route is longer than 64 hops: the forwarding tables loop"
		}
		ex.Rule = fmt.Sprintf("the SA gives a path only along the route OpenSM's forwarding tables make, and checks partitions only after: from %s to %s %s (%s), so the path was refused for routing, not for a partition or a key", labelOr(ex.From, "the source"), labelOr(ex.To, "the destination"), why, ev.Detail)
		ex.Fix = "check the links on the way and the switches' forwarding tables (ibtracert FROM_LID TO_LID; ibroute on the switch OpenSM names); OpenSM routes again at its next heavy sweep (a link change, or SIGHUP to OpenSM), and the SA answers from those routes"
	case KindJoinRefused:
		x.joinRefused(ev, &ex)
	case KindUntrusted:
		if strings.HasPrefix(ev.Detail, "InformInfo") {
			ex.Rule = fmt.Sprintf("OpenSM takes subscriptions to the security traps (256-259: bad M_Key, P_Key, Q_Key) only from a trusted requester, whose SA request carries its SM_Key (opensm.conf sa_key, default 0x0000000000000001); this one carried 0x%016x (osm_sa_informinfo.c): it was refused with ERR_REQ_INVALID", ev.Key)
			ex.Fix = "subscribe with the SM's key (the SA request's SM_Key)"
			break
		}
		ex.Rule = fmt.Sprintf("OpenSM answers %s requests only from a trusted requester, whose SA request carries its SM_Key (opensm.conf sa_key, default 0x0000000000000001); this one carried 0x%016x (osm_sa_pkey_record.c): it was refused with ERR_REQ_INVALID", ev.Detail, ev.Key)
		ex.Fix = "ask with the SM's key: saquery --smkey KEY PKTR, ibkey fabric check --sa --sm-key KEY"
	case KindBadSMKey:
		ex.Rule = fmt.Sprintf("OpenSM drops, unanswered, every SA request whose SM_Key is neither 0 nor its sa_key (osm_sa_mad_ctrl.c): a %s request with SM_Key 0x%016x got no answer at all, which the asker saw as a timeout", ev.Detail, ev.Key)
		ex.Fix = "ask with SM_Key 0 (untrusted) or with the SM's sa_key (opensm.conf)"
	case KindSMKeyMismatch:
		at := ev.Detail
		if !strings.HasPrefix(at, "LID ") {
			// osm_sminfo_rcv.c prints a directed route's ports ("0,1,2": from this
			// SM's port out of port 1, then out of the switch's port 2) when it
			// asked by directed route.
			at = "directed route " + at + " (from this SM's port)"
		}
		// The lab (TestLabSMKeyMismatch): each SM ignores the other's SMInfo, and
		// the second one enters MASTER state as well.
		ex.Rule = fmt.Sprintf("an SM takes part in electing the master only with SMs whose sm_key matches its own: OpenSM ignored the SMInfo of the SM at %s, whose sm_key is 0x%016x (osm_sminfo_rcv.c), so neither defers to the other and both may run as master, each programming the subnet (the lab: the second SM entered MASTER state, and the first's next heavy sweep did not finish)", at, ev.Key)
		ex.Fix = "give every SM of the subnet the same sm_key (opensm.conf)"
	case KindGetTimeout:
		// osm_sm_mad_ctrl.c logs ERR 3120 for any SubnGet the vendor layer gave up on
		// after opensm.conf's transaction_retries; opensm(8) "MKey Protection
		// Levels" (IBA 14.2.4.1): at levels 2 and 3 a Get with the wrong M_Key is
		// dropped unanswered. The MAD's directed route is logged only at the verbose
		// level (osm_dump_dr_smp_v2).
		ex.Rule = fmt.Sprintf("OpenSM's Get of %s got no answer after its retries; OpenSM suggests a wrong M_Key, since a port at M_Key protection level 2 or 3 drops a Get with the wrong M_Key unanswered (IBA 14.2.4.1) and then sends trap 256 (a bad-mkey event), but a port that does not answer at all (a node rebooting, a link going down during the sweep, a lost MAD) times out the same; the line does not name the port", ev.Detail)
		ex.Fix = "look for bad-mkey events (trap 256) in the same log, which name the port and the M_Key it refused; without them, check that the ports answer now (ibkey fabric check, smpquery portinfo); OpenSM's verbose log (-V) names the directed route of each Get that timed out"
	case KindConfigRejected, KindConfigMissing:
		x.configRejected(ev, &ex)
	case KindConfigWarning:
		x.configWarning(ev, &ex)
	case KindQoSRejected:
		qosRejected(ev, &ex)
	case KindTableFull:
		x.tableFull(ev, &ex)
	case KindEnforcementOff:
		ex.Switch = ex.From
		ex.Rule = fmt.Sprintf("a switch port facing a CA holds the CA's partitions to enforce them (osm_pkey_mgr.c pkey_mgr_update_peer_port); %s cannot hold them all (%s), so OpenSM switched its partition enforcement off: packets of every partition pass that switch port", labelOr(ex.From, "the switch port"), ev.Detail)
		ex.Fix = "put the CA behind that switch port in fewer partitions, so its table fits the switch port's (SwitchInfo PartitionEnforcementCap)"
	case KindProgramFailed:
		ex.Rule = fmt.Sprintf("OpenSM could not program %s: %s; the table or enforcement bits there may still be the previous ones", labelOr(ex.From, "a port"), ev.Detail)
		ex.Fix = "read the port's table now (ibkey fabric check, ibkey fabric pkeys); a heavy sweep (SIGHUP to OpenSM) tries again"
		if ev.Code == "0510" {
			// osm_pkey_mgr.c osm_pkey_mgr_process returns before programming any
			// port when osm_prtn_make_partitions fails (osm_prtn.c: the Default
			// partition could not be made, an allocation failure).
			ex.Rule = "OpenSM could not build its partitions (osm_prtn_make_partitions failed): it programmed no P_Key table and no enforcement bit in this sweep, so every port keeps the tables of the last sweep that succeeded"
			ex.Fix = "read the tables now (ibkey fabric check, ibkey fabric pkeys); look at OpenSM's memory (the failure is an allocation's); a heavy sweep (SIGHUP to OpenSM) tries again"
		}
	case KindTableShrunk:
		ex.Rule = fmt.Sprintf("the P_Key table of %s is smaller than OpenSM planned (%s): partitions past the end do not fit", labelOr(ex.From, "a port"), ev.Detail)
		ex.Fix = "put the port in fewer partitions if ERR 0512 follows"
	case KindNoticeNotForwarded:
		if ev.Code == "1A06" {
			// osm_sa_informinfo.c keeps the subscription request's address
			// (report_addr), P_Key index included, and osm_inform.c send_report
			// sends the notice there waiting for a ReportResp; osm_drop_mgr.c drops a
			// gone port's subscriptions only with drop_event_subscriptions (default
			// off, osm_subnet.c).
			ex.Rule = fmt.Sprintf("OpenSM forwards a notice to each subscriber as a SubnAdmReport and waits for its answer: %s did not answer (%s). The subscriber is gone (its host or process: OpenSM keeps a gone port's subscriptions unless drop_event_subscriptions is set), or its port dropped the report, which goes with the P_Key the subscription request came with, because it no longer holds that P_Key", labelOr(ex.To, "the subscriber"), ev.Detail)
			ex.Fix = "if the subscriber's host and process are up, check that its port still holds the P_Key it subscribed with (ibkey pkeys on that host) and subscribe again; if it is gone, nothing (drop_event_subscriptions in opensm.conf drops a gone port's subscriptions)"
			break
		}
		if ev.Detail == subscriptionRemoved {
			// The lab: TestLabSubscriptionRemoved.
			ex.Rule = "OpenSM forwards a notice only to a subscriber that shares a partition (one of them a full member) with the notice's source (IBA o13-17.1.1), and deletes a subscription to a range of LIDs when a notice comes from a port of the range that it no longer shares one with (o13-17.1.2; osm_inform.c is_access_permitted): a subscriber lost its subscription, and gets no more of these notices (the line names neither the subscriber nor the source; the partitions changed since it subscribed)"
			ex.Fix = "if the subscriber must see those ports' notices, make it share a partition with them (one of the two a full member), then subscribe again: OpenSM refuses the subscription until they share one"
			break
		}
		ex.Rule = fmt.Sprintf("OpenSM forwards a multicast group's notices only to subscribers in the group's partition (IBA o13-17.1.1): %s does not share the partition of group %s", labelOr(ex.To, "a subscriber"), ev.MGID)
		ex.Fix = "nothing, unless the subscriber must see the group: then make it a member of the group's partition"
	}
	return ex
}

// noReport says why a trap's event lacks what only its info-level report says
// (osm_trap_rcv.c trap_rcv_process_request: the report of a trap had 10 times
// already, each within OSM_DEFAULT_TRAP_SUPPRESSION_TIMEOUT of the last, is skipped).
const noReport = "no info-level report of this trap was logged (OpenSM skips it for a trap repeated 10 times within its aging window)"

func labelOr(e *End, or string) string {
	if e == nil {
		return or
	}
	return e.Label()
}

// portEndpoint is e as a can-talk endpoint: its whole table when the fabric has it.
func portEndpoint(e *End) (check.Endpoint, bool) {
	if e.port == nil || e.port.PKeys == nil {
		return check.Endpoint{}, false
	}
	return check.Endpoint{Label: e.Label(), Port: true, Entries: e.port.Entries()}, true
}

// pkeyReasons is what can-talk says of a and b, P_Key reasons only.
func pkeyReasons(a, b check.Endpoint) (check.Verdict, string) {
	v := check.CanTalk(a, b)
	var out []string
	for _, r := range v.Reasons {
		if strings.HasPrefix(r, "Q_Key send rule") {
			continue
		}
		out = append(out, r)
	}
	return v, strings.Join(out, "; ")
}

// multicastLID reports whether lid is a multicast LID (IBA 4.1.3: 0xC000-0xFFFE;
// 0xFFFF, the permissive LID, goes with them: no port holds it).
func multicastLID(lid uint16) bool { return lid >= 0xc000 }

// dropper is the port that dropped a trap 257 or 258's packet: the trap's reporter
// (IBA 14.3.1: the port that detected the bad key sends it). That is LID2's port for
// a unicast packet; for a packet to a multicast LID (the lab sends one: LID2 0xc001,
// QP2 0xffffff) it is the reporter alone, LID2 being the group's.
func dropper(ev *Event, ex *Explanation) *End {
	if ex.Reporter == nil || ex.To == nil {
		return ex.To
	}
	if multicastLID(ev.To.LID) || ev.To.LID != ev.Reporter.LID && (ex.To.GUID == 0 || ex.To.GUID != ex.Reporter.GUID) {
		return ex.Reporter
	}
	return ex.To
}

// toGroup is the note for a packet to a multicast LID.
func toGroup(ev *Event, recv *End) string {
	return fmt.Sprintf("LID2 %d (0x%04x) is a multicast LID: the packet went to a multicast group, and %s, the trap's reporter, is the member port that dropped it (the log does not say which group)", ev.To.LID, ev.To.LID, labelOr(recv, "the reporter"))
}

func (x *Explainer) badPKey(ev *Event, ex *Explanation) {
	k := check.PKey(ev.Key)
	recvEnd := dropper(ev, ex)
	from, to := labelOr(ex.From, "the sender"), labelOr(recvEnd, "the receiver")
	if multicastLID(ev.To.LID) {
		ex.Notes = append(ex.Notes, toGroup(ev, recvEnd))
	}
	base := fmt.Sprintf("a port accepts a packet only when its P_Key table holds the packet's partition and one of the two P_Keys is a full member (IBA 10.9.3): %s dropped a packet from %s with P_Key %s (partition %s, %s member)", to, from, k, k.Partition(), k.Membership())
	ex.Rule = base
	if recvEnd != nil {
		if recv, ok := portEndpoint(recvEnd); ok {
			v, why := pkeyReasons(check.QPEndpoint(from, k, check.QPAny), recv)
			if !v.CanTalk() {
				ex.Rule = fmt.Sprintf("%s dropped a packet from %s with P_Key %s: %s", to, from, k, why)
			} else {
				ex.Notes = append(ex.Notes, fmt.Sprintf("%s's table as read now accepts %s (%s): it was different when the trap was sent", to, k, why))
			}
		}
	}
	x.fixPair(k.Partition(), []*End{recvEnd, ex.From}, !k.IsFull(), ex,
		fmt.Sprintf("if they must not talk, %s's application uses the wrong P_Key (a QP holds a P_Key table index: check the index it was given)", from))
}

func (x *Explainer) badQKey(ev *Event, ex *Explanation) {
	recvEnd := dropper(ev, ex)
	from, to := labelOr(ex.From, "the sender"), labelOr(recvEnd, "the receiver")
	qk := check.QKey(ev.Key)
	fromQP, toQP := "", ""
	if ex.From != nil && ex.From.QPKnown {
		fromQP = fmt.Sprintf(" QP 0x%06x", ex.From.QP)
	}
	switch {
	case multicastLID(ev.To.LID):
		// QP2 is the packet's destination QP: 0xFFFFFF for multicast (IBA 10.5.2.2),
		// not the QP of the member that dropped it.
		ex.Notes = append(ex.Notes, toGroup(ev, recvEnd))
		toQP = "'s QP attached to the group"
	case ex.To != nil && ex.To.QPKnown:
		toQP = fmt.Sprintf(" QP 0x%06x", ex.To.QP)
	}
	ex.Rule = fmt.Sprintf("a UD QP accepts only datagrams that carry its own Q_Key (IBA 10.2.4; can-talk's Q_Key rule): %s%s sent Q_Key %s but %s%s accepts only its own qkey: the packets are dropped", from, fromQP, qk, to, toQP)
	if qk.Controlled() {
		ex.Notes = append(ex.Notes, fmt.Sprintf("%s has the top bit set: a controlled Q_Key, which only a privileged process may set in a QP context", qk))
	}
	ex.Fix = fmt.Sprintf("use the same Q_Key on both: the Q_Key %s sends (wr.ud.remote_qkey, or its QP context's when that has the top bit set) must be the one %s's QP was given (ibv_modify_qp qkey)", from, to)
}

func (x *Explainer) badSwitchPKey(ev *Event, ex *Explanation) {
	if ev.SwitchPort < 0 {
		// The header alone (osm_trap_rcv.c log_trap_info): the port, the packet's
		// ends and its P_Key are only in the report (osm_inform.c log_notice).
		ex.Rule = fmt.Sprintf("%s dropped a packet at one of its ports for its P_Key (partition enforcement); the port, the packet's ends and its P_Key are not known: %s", labelOr(ex.Reporter, "a switch"), noReport)
		ex.Fix = "read the switch ports' tables and enforcement bits: ibkey fabric check"
		return
	}
	port := fmt.Sprintf("port %d of the switch", ev.SwitchPort)
	if sw := ex.Reporter; sw != nil {
		s := *sw
		s.Num = ev.SwitchPort
		ex.Switch = &s
		port = s.Label()
		if s.NodeDesc == "" {
			port = fmt.Sprintf("%s port %d", sw.Label(), ev.SwitchPort)
		}
	}
	from, to := labelOr(ex.From, "the sender"), labelOr(ex.To, "the receiver")
	if ev.KeyType != KeyPKey {
		ex.Rule = fmt.Sprintf("%s dropped a packet from %s to %s for its P_Key (partition enforcement), but the trap does not carry the P_Key (%s: not valid)", port, from, to, ev.Detail)
		ex.Fix = "read the switch port's table and enforcement bits: ibkey fabric check"
		return
	}
	k := check.PKey(ev.Key)
	ex.Rule = fmt.Sprintf("a switch port that enforces partitions passes only the partitions in its own table, which OpenSM copies from the CA it faces (IBA 10.9.4; osm_pkey_mgr.c pkey_mgr_update_peer_port): %s dropped a packet from %s to %s with P_Key %s (partition %s), so its table lacked that partition",
		port, from, to, k, k.Partition())
	// The CA behind the switch port: in the fabric, the port cabled to it.
	var ca *End
	if f := x.R.Fabric; f != nil && ex.Switch != nil && ex.Switch.ID != nil {
		if p := f.Port(check.PortID{Node: ex.Switch.ID.Node, Port: ev.SwitchPort}); p != nil && p.Peer != nil {
			ca = new(x.R.Resolve(Port{NodeGUID: p.Peer.Node, Num: p.Peer.Port}, &ex.Notes))
			dir := "the packet entered the switch from it (inbound enforcement)"
			switch {
			case ex.To != nil && ex.To.ID != nil && *ex.To.ID == *p.Peer:
				dir = "the packet was leaving the switch for it (outbound enforcement)"
			case ex.From == nil || ex.From.ID == nil || *ex.From.ID != *p.Peer:
				dir = "it is neither the packet's source nor its destination as the trap names them"
			}
			ex.Rule = fmt.Sprintf("a switch port that enforces partitions passes only the partitions in its own table, which OpenSM copies from the CA it faces (IBA 10.9.4; osm_pkey_mgr.c pkey_mgr_update_peer_port): %s faces %s, which is not a member of partition %s; %s dropped a packet from %s to %s with P_Key %s: %s",
				port, ca.Label(), k.Partition(), port, from, to, k, dir)
			if h, ok := f.CheckHop(*p.Peer, k.Partition()); ok {
				switch {
				case h.TableRead && h.OnSwitch:
					ex.Notes = append(ex.Notes, fmt.Sprintf("as read now %s holds partition %s: its table was different when it sent the trap", port, k.Partition()))
				case h.Enforcement != nil && !h.Enforcement.Inbound && !h.Enforcement.Outbound:
					ex.Notes = append(ex.Notes, fmt.Sprintf("as read now %s does not enforce partitions (PortInfo PartitionEnforcementInbound/Outbound are 0): it did when it sent the trap, or the bits read are not what it applies (ibsim does not keep them)", port))
				}
			}
		}
	}
	if ca == nil {
		ex.Fix = fmt.Sprintf("the CA cabled to %s must be a member of partition %s for that partition's packets to pass (give --fabric-file or a fabric transport to name it); if it must not be, the sender uses the wrong P_Key", port, k.Partition())
		return
	}
	x.fixPair(k.Partition(), []*End{ca}, false, ex,
		fmt.Sprintf("if %s must not be in partition %s, the sender uses the wrong P_Key", ca.Label(), k.Partition()))
}

func (x *Explainer) pathRefused(ev *Event, ex *Explanation) {
	a, b := labelOr(ex.From, "the source"), labelOr(ex.To, "the destination")
	if ev.QoSLevel != "" {
		if ev.KeyType == KeyPKey {
			ex.Rule = fmt.Sprintf("the SA gives a path only in a partition the path's QoS level allows (qos-policy.conf): the level %q applies to %s and %s, and P_Key %s is not among the P_Keys it lists", ev.QoSLevel, a, b, check.PKey(ev.Key))
			ex.Fix = fmt.Sprintf("add the partition to QoS level %q's pkey list in qos-policy.conf, or ask for a path in a partition it lists", ev.QoSLevel)
			return
		}
		// ERR 1F1E, 451D: no P_Key asked; the SA looks for one of the level's P_Keys
		// the two share, one of them as a full member (osm_qos_policy.c
		// osm_qos_level_get_shared_pkey, osm_physp_share_this_pkey).
		ex.Rule = fmt.Sprintf("the SA gives a path only in a partition the path's QoS level allows (qos-policy.conf): the level %q applies to %s and %s, and they share none of the partitions it lists (both members, one of them full)", ev.QoSLevel, a, b)
		ex.Fix = fmt.Sprintf("add to QoS level %q's pkey list a partition both are in, or make them members of one it lists (one of them a full member)", ev.QoSLevel)
		return
	}
	if ev.KeyType != KeyPKey {
		ex.Rule = fmt.Sprintf("the SA gives a path only between ports that share a partition in which at least one is a full member (osm_pkey.c osm_physp_find_common_pkey): %s and %s share none", a, b)
		if ex.From != nil && ex.To != nil {
			if ea, ok := portEndpoint(ex.From); ok {
				if eb, ok := portEndpoint(ex.To); ok {
					if v, why := pkeyReasons(ea, eb); !v.CanTalk() {
						ex.Rule = fmt.Sprintf("the SA gives a path only between ports that share a partition in which one is a full member: %s", why)
					}
				}
			}
		}
		ex.Fix = fmt.Sprintf("make %s and %s members of one partition, one of them a full member (--partitions FILE names the lines)", a, b)
		if x.Parts != nil {
			ex.Fix = fmt.Sprintf("make %s and %s members of one partition of %s, one of them a full member", a, b, x.Parts.Path)
		}
		return
	}
	k := check.PKey(ev.Key)
	ex.Rule = fmt.Sprintf("the SA gives a path in a partition only between two ports that both hold it, one of them as a full member (the P_Key rule, on the SM's view of the tables: osm_pkey.c osm_physp_share_this_pkey): %s and %s do not share partition %s", a, b, k.Partition())
	if ex.From != nil && ex.To != nil {
		ea, okA := portEndpoint(ex.From)
		eb, okB := portEndpoint(ex.To)
		if okA && okB {
			var lacking []string
			for _, e := range []check.Endpoint{ea, eb} {
				if len(keyOnly(e, k.Partition()).Entries) == 0 {
					lacking = append(lacking, e.Label)
				}
			}
			v, why := pkeyReasons(keyOnly(ea, k.Partition()), keyOnly(eb, k.Partition()))
			if len(lacking) > 0 {
				why = fmt.Sprintf("%s %s no P_Key of partition %s", strings.Join(lacking, " and "), map[bool]string{true: "hold", false: "holds"}[len(lacking) > 1], k.Partition())
			}
			if len(lacking) > 0 || !v.CanTalk() {
				ex.Rule = fmt.Sprintf("the SA gives a path in partition %s only between two ports that both hold it, one of them as a full member: %s", k.Partition(), why)
			} else {
				ex.Notes = append(ex.Notes, fmt.Sprintf("the tables as read now share partition %s (%s): they were different when the SA refused", k.Partition(), why))
			}
		}
	}
	x.fixPair(k.Partition(), []*End{ex.From, ex.To}, true, ex, "")
}

// keyOnly is e restricted to key's entries (the partition asked for).
func keyOnly(e check.Endpoint, key check.PartitionKey) check.Endpoint {
	out := []check.TableEntry{}
	for _, t := range e.Entries {
		if t.PKey.Partition() == key {
			out = append(out, t)
		}
	}
	e.Entries = out
	return e
}

func (x *Explainer) joinRefused(ev *Event, ex *Explanation) {
	port := labelOr(ex.From, "the port")
	if ev.Code == "1B11" || ev.Code == "1B1B" {
		x.ipoibBroadcastMissing(ev, ex, port)
		return
	}
	if ev.Code != "1B14" {
		ex.Rule = fmt.Sprintf("the SA refused a multicast join or query: %s", ev.Detail)
		switch ev.Code {
		case "1B31":
			ex.Rule = "a join with a P_Key needs a full member on one side, the request's or the group's: " + ev.Detail
		case "1B32":
			ex.Rule = "a join must name the group's own partition: " + ev.Detail
		case "1B30":
			ex.Rule = "a join must name the group's own Q_Key: " + ev.Detail
		}
		ex.Fix = "ask with the group's own P_Key and Q_Key (saquery MCMR lists them)"
		if ev.Code == "1B31" {
			// The group's P_Key is limited: a join that created it named a limited
			// P_Key (the lab: TestLabJoinLimitedGroup), and asking with it again is
			// refused again.
			k := check.PKey(ev.Key)
			full := k.WithMembership(check.Full)
			group := "the group"
			if ev.MGID != "" {
				group = "group " + ev.MGID
			}
			ex.Rule = fmt.Sprintf("OpenSM refuses a join whose P_Key and the group's are both limited (osm_sa_mcmember_record.c validate_other_comp_fields): %s has the limited P_Key %s, given by the join that created it, so only full members of partition %s receive its packets; %s", group, k, k.Partition(), ev.Detail)
			ex.Fix = fmt.Sprintf("join with the full P_Key %s from a port that is a full member of partition %s; for a group every member can use, have it created with %s (by a full member's join, or by an mgid= line in partitions.conf)", full, k.Partition(), full)
		}
		if strings.Contains(ev.Detail, broadcastComparedWith) {
			// ERR 1B1C after the field's error (osm_sa_mcmember_record.c
			// mcmr_rcv_create_new_mgrp): the group asked for does not exist yet.
			bc := "its partition's broadcast group"
			if k, scope, _, ok := ipoibMGID(ev.MGID); ok {
				bc = fmt.Sprintf("broadcast group ff1%x:401b:%04x::ffff:ffff", scope, uint16(k))
			}
			ex.Rule = fmt.Sprintf("a join that creates an IPoIB group must carry the Q_Key and P_Key of its partition's broadcast group, which the new group copies (osm_sa_mcmember_record.c mcmr_rcv_create_new_mgrp): the join would create group %s; %s", ev.MGID, ev.Detail)
			ex.Fix = fmt.Sprintf("ask with the Q_Key and P_Key of %s (saquery MCMR lists it)", bc)
		}
		if strings.HasPrefix(ev.Detail, "Port and requester") {
			ex.Rule = "a port may join another port to a group (a proxy join) only when the two share a partition (osm_sa_mcmember_record.c): they do not"
			ex.Fix = "join from the port itself, or from a port that shares a partition with it"
		}
		return
	}
	k, _, _, ok := ipoibMGID(ev.MGID)
	key := k.Partition()
	in := "the group's partition"
	if ok {
		in = "partition " + key.String()
	}
	ex.Rule = fmt.Sprintf("a port joins a multicast group only when its P_Key table holds the group's partition (osm_sa_mcmember_record.c, osm_physp_has_pkey): %s is not in %s of group %s", port, in, ev.MGID)
	if !ok {
		ex.Fix = fmt.Sprintf("make %s a member of the group's partition (saquery MCMR shows its P_Key), or join a group of a partition it is in", port)
		return
	}
	x.fixPair(key, []*End{ex.From}, false, ex, "or join a group of a partition the port is in")
}

// ipoibBroadcastMissing explains ERR 1B11 for an IPoIB broadcast group: an IPoIB
// interface gets carrier only once it has joined its partition's broadcast group
// (ipoib_multicast.c ipoib_mcast_join_complete), and its join names no Q_Key, MTU,
// SL, FlowLabel or TClass, so it cannot create the group (OpenSM needs them:
// REQUIRED_MC_CREATE_COMP_MASK): OpenSM must, for a partition with the ipoib flag,
// and it does so in link-local scope only (osm_prtn_config.c partition_create does
// not pass scope= to the group; the lab shows it: TestLabIPoIBBroadcastJoin).
func (x *Explainer) ipoibBroadcastMissing(ev *Event, ex *Explanation, port string) {
	k, scope, _, _ := ipoibMGID(ev.MGID)
	key := k.Partition()
	ex.Rule = fmt.Sprintf("an IPoIB interface comes up (gets carrier) only once it has joined its partition's broadcast group, which its join cannot create (ipoib_multicast.c gives it no Q_Key or MTU): the SM creates it for a partition with the ipoib flag; group %s (partition %s, scope %d) does not exist, so %s's IPoIB interface on P_Key %s stays down", ev.MGID, key, scope, port, k)
	if ev.Code == "1B1B" {
		// The lab: TestLabIPoIBGroupWithoutBroadcast.
		ex.Rule = fmt.Sprintf("OpenSM creates an IPoIB multicast group (an IPv4 or IPv6 group: MGID ff1S:401b or ff1S:601b with the P_Key) only when its partition's broadcast group in that scope exists, whose Q_Key, MTU and rate it copies (osm_sa_mcmember_record.c mcmr_rcv_create_new_mgrp; opensm.conf ipoib_mcgroup_creation_validation); group %s (partition %s, scope %d) does not exist, so a join that would create a group of partition %s was refused (the log names neither the port nor the group)", ev.MGID, key, scope, key)
	}
	addMGID := fmt.Sprintf("`mgid=ff1%x:401b::ffff:ffff,sl=0` on its own line after the definition's ':' (members after it)", scope)
	// The default partition's group (ib0's on every host): OpenSM makes it itself
	// only when it reads no partitions file (osm_prtn.c prtn_make_default, `if
	// (no_config)`); with a file only ipoib on the Default line does (lab:
	// TestLabIPoIBDefaultBroadcast).
	deflt := key == check.DefaultPartition && scope == 2
	const defaultLine = "`Default=0x7fff, ipoib : ALL=full;`"
	if deflt {
		ex.Rule += "; OpenSM makes the default partition's broadcast group itself only when it reads no partitions file (osm_prtn.c): with one, only the ipoib flag on the Default line makes it"
	}
	switch {
	case scope != 2:
		who := fmt.Sprintf("this interface uses scope %d (its broadcast address 00:ff:ff:ff:ff:1%x:40:1b:...)", scope, scope)
		if ev.Code == "1B1B" {
			who = fmt.Sprintf("the group asked for is in scope %d, as an interface with broadcast address 00:ff:ff:ff:ff:1%x:40:1b:... joins", scope, scope)
		}
		ex.Rule += "; OpenSM creates IPoIB broadcast groups in link-local scope (2) only, whatever scope= says, and " + who
		ex.Fix = fmt.Sprintf("set the interface's broadcast address back to scope 2 (the kernel's default, 00:ff:ff:ff:ff:12:40:1b:...), or create the group in partitions.conf: %s in partition %s", addMGID, key)
	case deflt:
		ex.Fix = "likely cause: partitions.conf's Default line has no ipoib flag (or there is no Default line); make it " + defaultLine + " (keep its members), then SIGHUP OpenSM; with --partitions FILE the line is named"
	default:
		ex.Fix = fmt.Sprintf("give partition %s the ipoib flag in partitions.conf (`NAME=%s, ipoib : ...`), then SIGHUP OpenSM", key, key)
	}
	if x.Parts == nil {
		return
	}
	c, path := x.Parts.Config, x.Parts.Path
	p := c.Partition(key)
	var def *partconf.Definition // the file's first definition of the partition
	if p != nil {
		if i := slices.IndexFunc(p.Defs, func(d *partconf.Definition) bool { return !d.Implicit }); i >= 0 {
			def = p.Defs[i]
		}
	}
	switch {
	case c.Rejected && deflt:
		ex.FixAt = c.RejectedAt.String()
		ex.Fix = fmt.Sprintf("OpenSM rejects %s (first error at %s) and its fallback, Default=0x7fff, ipoib : ALL=full, makes this group: OpenSM ran with another file, or has not swept since (SIGHUP it); fix that line, and keep ipoib on the Default line: %s", path, c.RejectedAt, defaultLine)
	case c.Rejected:
		ex.Fix = fmt.Sprintf("OpenSM rejects %s (first error at %s): none of its partitions exists; fix that line first", path, c.RejectedAt)
		ex.FixAt = c.RejectedAt.String()
	case def == nil && key == check.DefaultPartition:
		ex.FixAt = check.FilePos{File: path, Line: 1, Col: 1}.String()
		ex.Fix = fmt.Sprintf("%s has no Default line: OpenSM adds Default=0x7fff : ALL=limited, SELF=full, with no broadcast group; add %s, then SIGHUP OpenSM", path, defaultLine)
		if !deflt {
			ex.Fix = fmt.Sprintf("%s has no Default line: OpenSM adds Default=0x7fff : ALL=limited, SELF=full, with no broadcast group; set the interface's broadcast address back to scope 2 and add %s, or add a Default line with %s", path, defaultLine, addMGID)
		}
	case def == nil:
		ex.Fix = fmt.Sprintf("%s defines no partition %s, yet the port holds its P_Key: OpenSM ran with another file, or has not swept since (SIGHUP it); define it with the ipoib flag", path, key)
	case slices.ContainsFunc(p.Groups, func(g *partconf.MGroup) bool { return g.MGID.String() == ev.MGID }):
		ex.Fix = fmt.Sprintf("%s creates group %s (partition %s at %s): OpenSM ran with another file, or has not swept since (SIGHUP it)", path, ev.MGID, p.Name, def.Pos)
		ex.FixAt = def.Pos.String()
	case scope != 2 && p.IPoIB:
		ex.FixAt = def.Pos.String()
		ex.Fix = fmt.Sprintf("set the interface's broadcast address back to scope 2 (the kernel's default), or add %s to partition %s at %s", addMGID, p.Name, ex.FixAt)
	case scope != 2:
		ex.FixAt = def.Pos.String()
		ex.Fix = fmt.Sprintf("set the interface's broadcast address back to scope 2 and add `, ipoib` to partition %s at %s `%s`, or add %s", p.Name, ex.FixAt, lineText(x.PartsText, def.Pos.Line), addMGID)
	case deflt:
		ex.FixAt = def.Pos.String()
		ex.Fix = fmt.Sprintf("the Default line at %s `%s` has no ipoib flag: add `, ipoib` (%s), then SIGHUP OpenSM", ex.FixAt, lineText(x.PartsText, def.Pos.Line), defaultLine)
	default:
		ex.FixAt = def.Pos.String()
		ex.Fix = fmt.Sprintf("add `, ipoib` to the definition of partition %s at %s `%s`, then SIGHUP OpenSM", p.Name, ex.FixAt, lineText(x.PartsText, def.Pos.Line))
	}
}

// ipoibMGID reads an IPoIB MGID (RFC 4391: ff1S:401b or 601b, then the P_Key): its
// P_Key, its scope, and whether it is its partition's broadcast group
// (ff1S:401b:PKEY::ffff:ffff, the kernel's ipv4_bcast_addr with the P_Key).
func ipoibMGID(mgid string) (k check.PKey, scope uint8, broadcast, ok bool) {
	a, err := netip.ParseAddr(mgid)
	if err != nil || !a.Is6() {
		return 0, 0, false, false
	}
	b := a.As16()
	if b[0] != 0xff || !(b[2] == 0x40 || b[2] == 0x60) || b[3] != 0x1b {
		return 0, 0, false, false
	}
	bc := [16]byte{0xff, 0x10 | b[1]&0x0f, 0x40, 0x1b, b[4], b[5], 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff}
	return check.PKey(uint16(b[4])<<8 | uint16(b[5])), b[1] & 0x0f, b == bc, true
}

// parseErrorWords says in plain words what each of osm_prtn_config.c's parse errors
// means.
var parseErrorWords = map[string]string{
	"no partition definition found":  "the text before ';' has no ':': a member list without its `Name=KEY :` header (a line break before ':', or a ';' that ended the definition early)",
	"bad partition flags":            "an empty flag between the name and ':' (two commas, or a trailing comma)",
	"bad partition definition":       "the key is not a number, or something other than flags stands between the name and ':'",
	"bad PortGUID":                   "a member is neither a keyword (ALL, ALL_CAS, ALL_SWITCHES, ALL_ROUTERS, SELF) nor a non-zero number",
	"internal: cannot create config": "OpenSM could not allocate its parser state",
}

func (x *Explainer) configRejected(ev *Event, ex *Explanation) {
	fallback := "OpenSM then applies Default=0x7fff, ipoib : ALL=full (osm_prtn.c): every port is a full member of the default partition only, every partition of the file is gone, and so is isolation"
	// "not accessible" is stat() failing on the path OpenSM reads (osm_prtn.c
	// osm_prtn_make_partitions; opensm -P, partition_config_file): it read no file,
	// so no partition of any file exists, and those of an earlier read are removed.
	file, why := missingFile(ev)
	switch {
	case ev.Kind == KindConfigMissing:
		ex.Rule = fmt.Sprintf("OpenSM cannot read its partitions file %s (%s), so it reads none: it applies Default=0x7fff, ipoib : ALL=full (osm_prtn.c): every port is a full member of the default partition only, no other partition exists (those of an earlier read are deleted): the ports are not isolated", file, why)
	case ev.ConfLine > 0:
		why := ev.Detail
		if w, ok := parseErrorWords[ev.Detail]; ok {
			why = fmt.Sprintf("%s: %s", ev.Detail, w)
		}
		ex.Rule = fmt.Sprintf("OpenSM stops at the first line of partitions.conf it cannot parse, line %d (%s); %s", ev.ConfLine, why, fallback)
	default:
		ex.Rule = fmt.Sprintf("OpenSM read no partition definition from partitions.conf (%s: an empty file, or one of only comments, is an error too); %s", ev.Detail, fallback)
	}
	if !ev.Fallback && ev.Kind == KindConfigRejected {
		ex.Notes = append(ex.Notes, "the log does not show the fallback line after the parse error (it may be cut off)")
	}
	if x.Parts == nil {
		switch {
		case ev.Kind == KindConfigMissing:
			ex.Fix = fmt.Sprintf("put the partitions file at %s (the path OpenSM reads: opensm -P FILE, partition_config_file in opensm.conf), readable by OpenSM, then SIGHUP it", file)
		case ev.ConfLine > 0:
			ex.Fix = fmt.Sprintf("fix line %d of OpenSM's partitions.conf (give --partitions FILE to see it), then SIGHUP OpenSM", ev.ConfLine)
		default:
			ex.Fix = "give OpenSM a partitions.conf with the partitions (opensm -P FILE, partition_config_file), then SIGHUP it"
		}
		return
	}
	c := x.Parts.Config
	switch {
	case ev.Kind == KindConfigMissing:
		ex.Fix = fmt.Sprintf("install %s as %s (the path OpenSM reads), readable by OpenSM, then SIGHUP OpenSM", x.Parts.Path, file)
	case !c.Rejected:
		ex.Fix = fmt.Sprintf("%s parses as OpenSM parses it now: OpenSM read another version of the file; SIGHUP OpenSM to read it again", x.Parts.Path)
		if ev.ConfLine > 0 {
			ex.Fix = fmt.Sprintf("%s parses now (line %d is fine): OpenSM read another version of the file; SIGHUP OpenSM to read it again", x.Parts.Path, ev.ConfLine)
		}
	case ev.ConfLine > 0 && c.RejectedAt.Line != ev.ConfLine:
		ex.Fix = fmt.Sprintf("%s is rejected at %s (%s), not at line %d as the log says: OpenSM read another version of the file; fix %s and SIGHUP OpenSM", x.Parts.Path, c.RejectedAt, c.RejectReason, ev.ConfLine, c.RejectedAt)
		ex.FixAt = c.RejectedAt.String()
	default:
		ex.FixAt = c.RejectedAt.String()
		line := lineText(x.PartsText, c.RejectedAt.Line)
		ex.Fix = fmt.Sprintf("fix %s `%s`", ex.FixAt, line)
		if i := slices.IndexFunc(c.Findings, func(f check.Finding) bool {
			return f.Severity == check.SeverityError && f.Pos.Line == c.RejectedAt.Line
		}); i >= 0 && c.Findings[i].Action != "" {
			ex.Fix += ": " + c.Findings[i].Action
		}
		ex.Fix += "; then SIGHUP OpenSM (ibkey partitions check shows every problem)"
	}
}

// qosRejected explains a QoS policy file OpenSM could not use. Without a policy
// (osm_qos_parser_y.y osm_qos_parse_policy_file leaves p_qos_policy NULL) the SA looks
// up no qos-level for a path (osm_sa_path_record.c pr_rcv_get_path_parms,
// osm_sa_multipath_record.c mpr_rcv_get_path_parms), so none of the policy's limits
// apply: its P_Keys, and its SL, MTU, rate and packet life. The lab
// (TestLabQoSPolicyRejected): the paths its qos-levels refused (ERR 1F1D, 1F1E) are
// given after the error, and refused again once a heavy sweep reads a good file.
func qosRejected(ev *Event, ex *Explanation) {
	file, what := "", ev.Detail
	if ev.Fallback {
		file, what, _ = strings.Cut(ev.Detail, ": ")
	}
	if what == "" {
		what = "the line with the error is not in the log"
	}
	named := cmp.Or(file, "its QoS policy file")
	ex.Rule = fmt.Sprintf("OpenSM could not use %s: %s; it runs without a QoS policy until a heavy sweep reads a file it accepts: no qos-level applies to a path, so the P_Keys the levels list no longer limit which paths the SA gives in which partition (paths they refused, ERR 1F1D, 1F1E, 451C, 451D, are given), nor do their SL, MTU, rate and packet life apply", named, what)
	if !ev.Fallback {
		ex.Notes = append(ex.Notes, "the log does not show OpenSM's ERR AC03 or AC04 after the error (it may be cut off); OpenSM 3.3.23 logs it after every such error, and has no policy then")
	}
	again := "then SIGHUP OpenSM: it reads the QoS policy file again at every heavy sweep (osm_qos.c osm_qos_setup)"
	switch {
	case ev.Code == "AC01":
		ex.Fix = fmt.Sprintf("put the QoS policy file at %s, readable by OpenSM (qos_policy_file in opensm.conf names it), %s", file, again)
	case ev.ConfLine > 0:
		if file != "" {
			ex.FixAt = fmt.Sprintf("%s:%d", file, ev.ConfLine)
		}
		ex.Fix = fmt.Sprintf("fix line %d of %s, %s", ev.ConfLine, named, again)
	case ev.Code == "AC03" || ev.Code == "AC04":
		ex.Fix = fmt.Sprintf("find the error in %s (OpenSM prints it on its standard error too) and fix it, %s", named, again)
	default:
		ex.Fix = fmt.Sprintf("fix %s as the error says, %s", named, again)
	}
}

// missingFile is the path and the reason of a partitions-missing event (its Detail is
// "FILE: strerror", and no strerror text holds ": ").
func missingFile(ev *Event) (file, why string) {
	i := strings.LastIndex(ev.Detail, ": ")
	if i < 0 {
		return ev.Detail, "not accessible"
	}
	return ev.Detail[:i], ev.Detail[i+2:]
}

// lineText is line n of the file (1-based), trimmed and shortened.
func lineText(text string, n int) string {
	t := text
	for i := 1; i < n; i++ {
		j := strings.IndexByte(t, '\n')
		if j < 0 {
			return ""
		}
		t = t[j+1:]
	}
	if j := strings.IndexByte(t, '\n'); j >= 0 {
		t = t[:j]
	}
	t = strings.TrimSpace(t)
	if len(t) > 60 {
		t = t[:57] + "..."
	}
	return t
}

func (x *Explainer) configWarning(ev *Event, ex *Explanation) {
	where := "partitions.conf"
	if ev.ConfLine > 0 {
		where = fmt.Sprintf("line %d of partitions.conf", ev.ConfLine)
	}
	switch {
	case ev.MGID != "" && strings.Contains(ev.Detail, "multicast"):
		ex.Rule = fmt.Sprintf("an mgid= group needs a multicast GID (ff..): OpenSM skipped the group %s at %s and kept the rest of the file", ev.MGID, where)
	case ev.MGID != "":
		ex.Rule = fmt.Sprintf("an IP multicast group of a partition must use the partition's P_Key, rate and MTU: OpenSM did not create %s (%s)", ev.MGID, ev.Detail)
	case strings.HasPrefix(ev.Detail, "Duplicated partition"):
		var name, prev string
		var key uint64
		if !scanf([]byte(ev.Detail), dupFormat, &name, &key, &prev) {
			ex.Rule = "a definition of a key OpenSM already has a partition for: it adds the members to that partition (osm_prtn.c): " + ev.Detail
			break
		}
		// The lab: a second definition in the file, and a file that renamed a
		// partition since the last sweep, both log this, and both leave the members
		// in the partition under its first name.
		ex.Rule = fmt.Sprintf("OpenSM already had partition 0x%04x as %q when it read the definition %q: the file defines the key twice, or renamed the partition since an earlier sweep (OpenSM keeps its partitions between sweeps, osm_prtn.c osm_prtn_make_new); either way it adds the members of %q to %q and keeps the name %q", key, prev, name, name, prev, prev)
		ex.Fix = fmt.Sprintf("define key 0x%04x once (ibkey partitions check names both definitions); a renamed partition keeps its old name until a sweep leaves it without members, or OpenSM restarts", key)
		return
	default:
		ex.Rule = fmt.Sprintf("OpenSM read %s differently from what it says: %s", where, ev.Detail)
	}
	ex.Fix = fmt.Sprintf("fix %s (ibkey partitions check explains every warning)", where)
	if x.Parts != nil && ev.ConfLine > 0 {
		if n := strings.Count(x.PartsText, "\n") + 1; ev.ConfLine > n || strings.HasSuffix(x.PartsText, "\n") && ev.ConfLine >= n {
			ex.Fix = fmt.Sprintf("%s has no line %d: OpenSM read another version of the file", x.Parts.Path, ev.ConfLine)
			return
		}
		ex.FixAt = fmt.Sprintf("%s:%d", x.Parts.Path, ev.ConfLine)
		ex.Fix = fmt.Sprintf("fix %s `%s` (ibkey partitions check %s explains it)", ex.FixAt, lineText(x.PartsText, ev.ConfLine), x.Parts.Path)
	}
}

func (x *Explainer) tableFull(ev *Event, ex *Explanation) {
	ex.Rule = tableFullRule(ex.From, "partition "+check.PKey(ev.Key).Partition().String())
	ex.Fix = fmt.Sprintf("put %s in fewer partitions, so they fit its table", labelOr(ex.From, "the port"))
	if x.Parts == nil || ex.From == nil || ex.From.GUID == 0 {
		return
	}
	var items []string
	for _, p := range x.Parts.Config.Partitions {
		if i := slices.IndexFunc(p.Members, func(m partconf.Member) bool {
			return m.Kind == partconf.KindGUID && m.GUID == ex.From.GUID
		}); i >= 0 {
			items = append(items, fmt.Sprintf("%s (%s)", p.Members[i].Pos(), p.Name))
		}
	}
	if len(items) > 0 {
		ex.Fix = fmt.Sprintf("put %s in fewer partitions, so they fit its table; %s names it at %s", labelOr(ex.From, "the port"), x.Parts.Path, strings.Join(textsafe.Capped(items, 8), ", "))
	}
}

// tableFullRule is the rule ERR 0512 breaks: from is not in parts ("partition K").
func tableFullRule(from *End, parts string) string {
	return fmt.Sprintf("a port's P_Key table holds PartitionCap entries; OpenSM places the partitions in its order and leaves out those that do not fit (osm_pkey_mgr.c): %s is not in %s", labelOr(from, "the port"), parts)
}

// fixDefine is the fix for a partition the file should define.
func (x *Explainer) fixDefine(key check.PartitionKey, or string) (string, string) {
	if x.Parts == nil {
		return or, ""
	}
	if p := x.Parts.Config.Partition(key); p != nil && len(p.Defs) > 0 && p.Defs[0].Pos.Line > 0 {
		return fmt.Sprintf("%s defines partition %s (%s) at %s: OpenSM ran with another file, or has not swept since; SIGHUP it", x.Parts.Path, key, p.Name, p.Defs[0].Pos), p.Defs[0].Pos.String()
	}
	return or, ""
}

// fixPair says what makes ends members of partition key, one of them a full member
// when needFull (the other end's entry is limited). alt is the fix when they must not
// talk.
func (x *Explainer) fixPair(key check.PartitionKey, ends []*End, needFull bool, ex *Explanation, alt string) {
	var names []string
	for _, e := range ends {
		if e != nil {
			names = append(names, e.Label())
		}
	}
	who := cmp.Or(strings.Join(names, " and "), "the ports")
	tail := ""
	if alt != "" {
		tail = "; " + alt
	}
	members := fmt.Sprintf("make %s members of partition %s, one of them a full member,", who, key)
	if len(names) == 1 {
		members = fmt.Sprintf("make %s a member of partition %s", who, key)
	}
	if x.Parts == nil {
		ex.Fix = fmt.Sprintf("to let them talk, %s in OpenSM's partitions.conf (--partitions FILE names the line)%s", members, tail)
		return
	}
	c := x.Parts.Config
	path := x.Parts.Path
	if c.Rejected {
		ex.Fix = fmt.Sprintf("OpenSM rejects %s (first error at %s): none of its partitions exists; fix that line first", path, c.RejectedAt)
		ex.FixAt = c.RejectedAt.String()
		return
	}
	part := c.Partition(key)
	var guids []check.GUID
	for _, e := range ends {
		if e == nil || e.GUID == 0 {
			ex.Fix = fmt.Sprintf("to let them talk, %s (the port GUIDs are not known: give --fabric-file or a fabric transport to name the lines of %s)%s", members, path, tail)
			if part != nil && len(part.Defs) > 0 {
				ex.FixAt = part.Defs[0].Pos.String()
			}
			return
		}
		guids = append(guids, e.GUID)
	}
	if part == nil {
		ex.Fix = fmt.Sprintf("%s defines no partition %s: to let them talk add a definition, e.g. `p%04x=%s : %s=full;`%s", path, key, uint16(key), key, guidList(guids), tail)
		return
	}
	def := part.Defs[0]
	m := x.Parts.ModelOf(guids...)
	var missing []*End
	var limited []partconf.Entry
	limitedEnd := map[check.GUID]*End{}
	for i, e := range ends {
		found := false
		for _, t := range m.Table(guids[i]) {
			if t.PKey.Partition() == key {
				found = true
				if !t.PKey.IsFull() {
					limited = append(limited, t)
					limitedEnd[guids[i]] = e
				}
			}
		}
		if !found {
			missing = append(missing, e)
		}
	}
	switch {
	case len(missing) > 0:
		var add []string
		for _, e := range missing {
			item := e.GUID.String()
			if needFull {
				item += "=full"
			}
			add = append(add, "`"+item+"`")
		}
		ex.FixAt = def.Pos.String()
		ex.Fix = fmt.Sprintf("to let them talk, add %s to partition %s (%s) at %s%s", strings.Join(add, " and "), part.Name, key, ex.FixAt, tail)
	case needFull || len(limited) == len(ends):
		if len(limited) == 0 {
			ex.Fix = fmt.Sprintf("%s already gives %s partition %s as a full member: OpenSM ran with another file, or has not swept since (SIGHUP it)%s", path, who, key, tail)
			return
		}
		t := limited[0]
		e := limitedEnd[t.DecidedBy.GUID]
		if e == nil {
			e = ends[0]
		}
		it := t.DecidedBy
		if it.Kind == partconf.KindGUID {
			ex.FixAt = it.Pos().String()
			ex.Fix = fmt.Sprintf("to let them talk, make one of them a full member: change `%s` at %s to `%s=full`%s", it.Text(), ex.FixAt, it.GUID, tail)
		} else {
			ex.FixAt = def.Pos.String()
			ex.Fix = fmt.Sprintf("to let them talk, make one of them a full member: %s is a limited member through `%s` at %s; add `%s=full` after it in partition %s%s", e.Label(), it.Text(), it.Pos(), e.GUID, part.Name, tail)
		}
	default:
		ex.Fix = fmt.Sprintf("%s gives %s partition %s: OpenSM ran with another file, or has not swept since (SIGHUP it)%s", path, who, key, tail)
	}
}

func guidList(gs []check.GUID) string {
	var s []string
	for _, g := range gs {
		s = append(s, g.String())
	}
	return strings.Join(s, ", ")
}
