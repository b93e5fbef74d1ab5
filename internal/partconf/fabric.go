package partconf

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
)

// Rules of CompareFabric's findings (all errors: the fabric is not what the file says).
const (
	RuleMissingKey      = "partitions-missing-key"
	RuleExtraKey        = "partitions-extra-key"
	RuleWrongMembership = "partitions-wrong-membership"
	RuleTableOverflow   = "partitions-table-overflow"
	RuleFileRejected    = "partitions-file-rejected"
	// RuleNextPass (a warning): the port holds what OpenSM programs from the file in
	// one pass, and its next pass adds a key (osmmodel.go, onePassFrom0x7fff).
	RuleNextPass = "partitions-next-pass"
)

// FabricPorts returns the fabric's end ports as NewModel takes them (CA and router
// ports with a GUID, each switch's port 0 with the switch's port GUID) and the port
// GUID of the master SM: the end port whose LID is the SM LID the ports report (0 when
// none is found; SELF then names nobody).
func FabricPorts(f *fabric.Fabric) (ports []Port, smGUID check.GUID) {
	byLID := map[uint16]check.GUID{}
	smLIDs := map[uint16]int{}
	for _, n := range f.Nodes {
		typ := check.NodeCA
		if n.Type == check.NodeSwitch || n.Type == check.NodeRouter {
			typ = n.Type
		}
		for _, p := range n.Ports {
			if !n.IsEndPort(p) || p.GUID == 0 || !f.InSubnet(check.PortID{Node: n.GUID, Port: p.Num}) {
				continue // another subnet's port, or one no SM manages: not OpenSM's here
			}
			port := Port{GUID: p.GUID, Type: typ, TableSize: cmp.Or(p.TableSize, n.PartitionCap)}
			if typ != check.NodeSwitch && p.Peer != nil {
				if sw := f.Node(p.Peer.Node); sw != nil && sw.Type == check.NodeSwitch {
					capy := sw.PartitionEnforcementCap
					if sp := f.Port(*p.Peer); sp != nil && sp.TableSize > 0 && capy == 0 {
						capy = sp.TableSize
					}
					port.Peer = &SwitchPort{EnforceCap: capy}
				}
			}
			ports = append(ports, port)
			if p.LID != 0 {
				byLID[p.LID] = p.GUID
			}
			if p.SMLID != 0 {
				smLIDs[p.SMLID]++
			}
		}
	}
	best := 0
	for lid, count := range smLIDs {
		if g, ok := byLID[lid]; ok && count > best {
			smGUID, best = g, count
		}
	}
	return ports, smGUID
}

// NewFabricModel is NewModel for the end ports of a sweep, with SELF the master SM's
// port when opt.SMGUID is 0. When opt.Before is nil the tables of the sweep are the
// tables before: the model is what OpenSM programs when it runs again on this fabric.
// OpenSM is at a fixed point after a run (a key in a table keeps its index), so a
// fabric OpenSM has programmed from c matches this model, also after a
// reconfiguration (kept keys in their old slots, holes, new keys dropped when the table
// is full, ERR 0512), where a model of fresh ports would call kept keys extra.
func NewFabricModel(c *Config, f *fabric.Fabric, opt Options) *Model {
	ports, sm := FabricPorts(f)
	opt.SMGUID = cmp.Or(opt.SMGUID, sm)
	if opt.Before == nil {
		opt.Before, opt.PeerBefore = map[check.GUID][]check.PKey{}, map[check.GUID][]check.PKey{}
		for _, n := range f.Nodes {
			for _, p := range n.Ports {
				if p.PKeys == nil || !n.IsEndPort(p) || p.GUID == 0 {
					continue
				}
				opt.Before[p.GUID] = p.PKeys
				if n.Type != check.NodeSwitch && p.Peer != nil {
					if sp := f.Port(*p.Peer); sp != nil && sp.PKeys != nil {
						opt.PeerBefore[p.GUID] = sp.PKeys
					}
				}
			}
		}
	}
	return NewModel(c, ports, opt)
}

// CompareFabric lists every difference between the tables OpenSM would program from
// m's configuration and the tables in the sweep:
//   - end ports (CA and router ports, switch port 0) against the model of their GUID
//     (OpenSM gives a switch's port 0 every partition that names it: ALL, ALL_SWITCHES,
//     its GUID);
//   - a switch's external port facing a CA against the model of that CA port: OpenSM
//     copies the CA port's keys there for switch partition enforcement. When the switch
//     port holds the same keys as the CA port, it is added to the CA port's findings
//     instead of repeating them. Ports between switches are not compared.
//
// The enforcement bits are not consulted: on ibsim, OpenSM 3.3.23 copies the tables but
// PortInfo shows enforcement off on every port (lab_test in internal/query).
//
// Per port and 15-bit key: a key the file gives that the table lacks (missing), a key the
// table holds that the file does not give (extra), and the same key with another
// membership (wrong membership). Ports whose table was not read are skipped (the audit
// reports them). On end ports, a key at another index than OpenSM gives it
// (partitions-index-moved, fabric_index.go).
func CompareFabric(f *fabric.Fabric, m *Model) []check.Finding {
	var out []check.Finding
	if m.Source.Rejected {
		out = append(out, check.Finding{Severity: check.SeverityError, Rule: RuleFileRejected,
			Message: fmt.Sprintf("OpenSM rejects %s (%s) and programs Default=0x7fff, ipoib : ALL=full instead; the fabric is compared with that fallback", m.Source.File, m.Source.RejectedWhy(m.Source.RejectedAt.String())),
			Action:  "fix the file (ibkey partitions check " + m.Source.File + ")"})
	}
	byPort := map[check.PortID][]int{} // an end port's findings, by index in out
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p.PKeys == nil || !n.IsEndPort(p) || p.GUID == 0 || !f.InSubnet(check.PortID{Node: n.GUID, Port: p.Num}) {
				continue
			}
			id := check.PortID{Node: n.GUID, Port: p.Num}
			for _, fd := range compareTable(f, m, id, p, id, m.Table(p.GUID), m.Dropped(p.GUID), "") {
				if m.table(p.GUID).onePass && fd.Rule == RuleWrongMembership && fd.PKeys[0] == check.DefaultFull {
					out = append(out, nextPass(f, m, id, p.GUID, fd))
					continue
				}
				byPort[id] = append(byPort[id], len(out))
				out = append(out, fd)
			}
			out = append(out, compareIndexes(f, m, id, p)...)
		}
	}
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p.PKeys == nil || n.IsEndPort(p) || p.Peer == nil {
				continue
			}
			peerNode, peer := f.Node(p.Peer.Node), f.Port(*p.Peer)
			if peerNode == nil || peer == nil || peerNode.Type == check.NodeSwitch || peer.GUID == 0 || !f.InSubnet(*p.Peer) {
				continue
			}
			pt := m.Peer(peer.GUID)
			if pt == nil || !pt.Managed {
				// part_enforce off (or no enforcement capability): OpenSM does not
				// write this table, whatever it holds is not OpenSM's doing.
				continue
			}
			id := check.PortID{Node: n.GUID, Port: p.Num}
			want := make([]Entry, 0, len(pt.Table))
			for _, k := range pt.Table {
				if k.Valid() {
					want = append(want, entryFor(m, peer.GUID, k))
				}
			}
			// Enforcement off: OpenSM with part_enforce off (or after ERR 0507, a CA
			// port with more keys than this port holds) turns it off and leaves the
			// table as it was, and a port that does not enforce drops nothing, so a
			// difference is not an error (the model assumes part_enforce on unless
			// --opensm-conf says otherwise).
			off := p.Enforcement != nil && !p.Enforcement.Inbound && !p.Enforcement.Outbound
			if !off && peer.PKeys != nil && maps.Equal(holds(p.PKeys), holds(peer.PKeys)) &&
				slices.EqualFunc(want, m.Table(peer.GUID), func(x, y Entry) bool { return x.PKey == y.PKey }) {
				// The switch port mirrors the CA port exactly, as OpenSM programs it:
				// it shares the CA port's findings rather than repeating them.
				for _, i := range byPort[*p.Peer] {
					out[i].Ports = append(out[i].Ports, f.FindingPort(id))
					out[i].Message += fmt.Sprintf("; the same goes for %s, the switch port that mirrors it", f.Label(id))
				}
				continue
			}
			fds := compareTable(f, m, id, p, *p.Peer, want, 0, fmt.Sprintf(" (it mirrors %s, the CA port it faces)", f.Label(*p.Peer)))
			if off {
				for i := range fds {
					fds[i].Severity = check.SeverityWarning
					fds[i].Message += "; its partition enforcement is off, so this table decides nothing, and OpenSM does not write it when part_enforce is off (--opensm-conf FILE tells ibkey)"
				}
			}
			out = append(out, fds...)
		}
	}
	check.SortFindings(out)
	return out
}

// applyHow says how OpenSM comes to program what a file says: kill -HUP makes a running
// OpenSM re-read partitions.conf and rewrite the tables it computes differently, but it
// compares with the tables it remembers writing, so a table changed behind its back is
// read again only when the port is new or resets, or OpenSM starts (osm_port_info_rcv.c,
// need_update; seen with OpenSM 3.3.23: a Set behind its back survived kill -HUP and was
// undone by a restart).
const applyHow = "OpenSM: kill -HUP after editing it; a table changed behind its back only a restart of OpenSM, or a reset of the port, makes it rewrite"

// entryFor finds the model entry of the end port behind a switch port value.
func entryFor(m *Model, guid check.GUID, k check.PKey) Entry {
	for _, e := range m.Table(guid) {
		if e.PKey == k {
			return e
		}
	}
	return Entry{PKey: k, Partition: m.Config.Partition(k.Partition())}
}

func compareTable(f *fabric.Fabric, m *Model, id check.PortID, p *fabric.Port, modelPort check.PortID, table []Entry, dropped int, mirror string) []check.Finding {
	var out []check.Finding
	ports := []check.FindingPort{f.FindingPort(id)}
	if modelPort != id {
		ports = append(ports, f.FindingPort(modelPort))
	}
	name := f.Label(id)
	want, have := map[check.PartitionKey][2]bool{}, holds(p.PKeys) // full, limited
	first := map[check.PartitionKey]Entry{}                        // the model's first entry of a key
	for _, e := range table {
		if _, ok := first[e.PKey.Partition()]; !ok {
			first[e.PKey.Partition()] = e
		}
		hold(want, e.PKey)
	}
	both := maps.Clone(have) // the keys of either (only the keys are read)
	maps.Copy(both, want)
	keys := slices.Sorted(maps.Keys(both))
	ms := func(full, limited bool) string {
		switch {
		case full && limited:
			return "both full and limited"
		case full:
			return "full"
		}
		return "limited"
	}
	for _, k := range keys {
		w, h, e := want[k], have[k], first[k]
		pk := check.PKey(k)
		switch {
		case !w[0] && !w[1]:
			if h[0] {
				pk |= check.MembershipBit
			}
			out = append(out, check.Finding{Severity: check.SeverityError, Rule: RuleExtraKey, Ports: ports, PKeys: []check.PKey{pk},
				Message: fmt.Sprintf("%s holds %s (%s member of %s), which %s does not give it%s", name, pk, ms(h[0], h[1]), pk.Partition().String(), m.Source.File, mirror),
				Action:  "if the partition is wanted, add the port to it in the file; if not, make the SM apply the file (" + applyHow + ") and check that this is the file the SM reads"})
		case !h[0] && !h[1]:
			if w[0] {
				pk |= check.MembershipBit
			}
			out = append(out, check.Finding{Severity: check.SeverityError, Rule: RuleMissingKey, Ports: ports, PKeys: []check.PKey{pk},
				Message: fmt.Sprintf("%s lacks %s: %s makes it a %s member of partition %s (%s, %s)%s", name, pk, m.Source.File, ms(w[0], w[1]), e.Partition.Name, pk.Partition().String(), decided(e), mirror),
				Action:  "make the SM apply the file (" + applyHow + "; check its log for \"Pkey table is full\" and parse errors), or correct the file if the fabric is right"})
		case h != w:
			if h[0] {
				pk |= check.MembershipBit
			}
			out = append(out, check.Finding{Severity: check.SeverityError, Rule: RuleWrongMembership, Ports: ports, PKeys: []check.PKey{pk},
				Message: fmt.Sprintf("%s is a %s member of partition %s (%s) but %s makes it %s (%s)%s", name, ms(h[0], h[1]), e.Partition.Name, pk.Partition().String(), m.Source.File, ms(w[0], w[1]), decided(e), mirror),
				Action:  "make the SM apply the file (" + applyHow + "), or correct the membership in the file (=full / =limited) if the fabric is right"})
		}
	}
	if d := dropped; d > 0 && mirror == "" {
		out = append(out, check.Finding{Severity: check.SeverityError, Rule: RuleTableOverflow, Ports: ports,
			Message: fmt.Sprintf("%s gives %s %d more partition entries than its %d-entry table holds: OpenSM drops them (\"Pkey table is full\")", m.Source.File, name, d, p.TableSize),
			Action:  "take the port out of partitions it does not need"})
	}
	return out
}

// nextPass is the finding of a port that lacks 0x7fff because OpenSM's pass over its
// table wrote 0xffff over it (onePassFrom0x7fff), in place of wrong, the finding of
// wrong membership: full only where the file gives `both`.
func nextPass(f *fabric.Fabric, m *Model, id check.PortID, guid check.GUID, wrong check.Finding) check.Finding {
	at := slices.IndexFunc(m.Slots(guid), func(e Entry) bool { return e.PKey == check.DefaultFull&^check.MembershipBit })
	e := m.Slots(guid)[at]
	return check.Finding{Severity: check.SeverityWarning, Rule: RuleNextPass, Ports: wrong.Ports, PKeys: wrong.PKeys,
		Message: fmt.Sprintf("%s holds 0xffff at index 0 but not 0x7fff, which %s also gives it (both, -W; %s): that is what OpenSM programs in one pass from a table with 0x7fff at index 0 (it keeps 0x7fff there and puts the new 0xffff there too, last); its next pass adds 0x7fff at index %d",
			f.Label(id), m.Source.File, decided(e), at),
		Action: "membership is right (a full member needs no limited entry to talk); to settle the table let OpenSM pass again (kill -HUP a running OpenSM, or run it again)"}
}

func decided(e Entry) string {
	if e.DecidedBy == nil {
		return "implicit"
	}
	s := e.DecidedBy.Pos().String()
	if t := strings.TrimSpace(e.DecidedBy.Text()); t != "" {
		s += " " + t
	}
	return s
}

// holds is what table t holds, by partition: its full entry, its limited one.
func holds(t []check.PKey) map[check.PartitionKey][2]bool {
	m := map[check.PartitionKey][2]bool{}
	for _, k := range t {
		if k.Valid() {
			hold(m, k)
		}
	}
	return m
}

// hold marks in m that a table holds k: its partition's full entry, or its limited one.
func hold(m map[check.PartitionKey][2]bool, k check.PKey) {
	h := m[k.Partition()]
	if k.IsFull() {
		h[0] = true
	} else {
		h[1] = true
	}
	m[k.Partition()] = h
}
