package fabric

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/partconf"
	"github.com/ibkey/ibkey/internal/query"
	"github.com/ibkey/ibkey/internal/textsafe"
)

// fabric check --sa: the Subnet Manager's own view, asked of its SA. OpenSM answers a
// P_KeyTableRecord with the table as it believes it to be (the blocks it last read or
// set, osm_sa_pkey_record.c), only to a trusted requester (its SM_Key) and only for
// ports that share a partition with the requester, one of the two a full member
// (osm_physp_share_pkey); it answers an MCMemberRecord by MGID only to a port in the
// group's partition, as a full or a limited member (osm_sa_mcmember_record.c
// mcmr_by_comp_mask, osm_physp_has_pkey).

// The rules of the SA comparison.
const (
	// RuleSATableDiffers: the SM believes a port's table holds something else than
	// the port answers to SMPs.
	RuleSATableDiffers = "sa-table-differs"
	// RuleSAViewNotFile: the SM's own view of a port's table is not what the
	// partitions file gives it.
	RuleSAViewNotFile = "sa-view-not-file"
	// RuleIPoIBGroupMissing: an ipoib partition with members has no IPoIB
	// broadcast group in the SA.
	RuleIPoIBGroupMissing = "ipoib-group-missing"
	// RuleIPoIBGroupDiffers: the broadcast group's Q_Key, MTU or rate is not the
	// file's.
	RuleIPoIBGroupDiffers = "ipoib-group-differs"
)

// saCheck is --sa and --sm-key.
type saCheck struct {
	Ask   bool
	SMKey uint64
	keyIn string
}

func addSACheckFlags(c *cobra.Command, s *saCheck) {
	c.Flags().BoolVar(&s.Ask, "sa", false, "also ask the Subnet Manager's SA for every port's P_Key table as it believes it (P_KeyTableRecord) and for the IPoIB broadcast groups, and compare them with what the ports hold and what --partitions gives")
	c.Flags().StringVar(&s.keyIn, "sm-key", "0x1", "with --sa: the SM_Key a P_KeyTableRecord query carries (OpenSM's sa_key; its default is 1)")
}

func (s *saCheck) validate() error {
	if !s.Ask {
		return nil
	}
	v, err := strconv.ParseUint(s.keyIn, 0, 64)
	if err != nil {
		return cmdutil.Usagef("invalid --sm-key %q (accepted: a 64-bit number, 0x1 or 1)", s.keyIn)
	}
	s.SMKey = v
	return nil
}

// saPort is one port whose table the SA is asked for.
type saPort struct {
	id    check.PortID
	lid   uint16 // the LID the record is asked by: the port's, a switch's port 0's
	port  uint8
	table []check.PKey
	end   bool // an end port: its view is compared with the file too
}

// saPorts are the ports whose table the SA is asked for: the end ports and the switch
// ports facing them (OpenSM programs those) of the swept subnet, by LID. A port
// outside it (fabric.Fabric.InSubnet: another SM's, or one no SM configured) is not
// this SA's: OpenSM answers a P_KeyTableRecord by LID (osm_sa_pkey_record.c,
// osm_get_port_by_lid), so for another subnet's LID it would answer with the table of
// one of its own ports.
func saPorts(fab *fabric.Fabric) []saPort {
	var ports []saPort
	for _, n := range fab.Nodes {
		var swLID uint16
		if n.Type == check.NodeSwitch {
			if p0 := n.Port(0); p0 != nil {
				swLID = p0.LID
			}
		}
		for _, p := range n.Ports {
			if p.PKeys == nil || p.TableSize == 0 {
				continue
			}
			id := check.PortID{Node: n.GUID, Port: p.Num}
			if !fab.InSubnet(id) {
				continue
			}
			lid := p.LID
			if n.Type == check.NodeSwitch {
				lid = swLID
				if p.Num != 0 && (p.Peer == nil || fab.Node(p.Peer.Node) == nil || fab.Node(p.Peer.Node).Type == check.NodeSwitch) {
					continue // OpenSM programs the switch ports that face end ports
				}
			}
			if lid == 0 {
				continue
			}
			ports = append(ports, saPort{id: id, lid: lid, port: uint8(p.Num), table: p.PKeys, end: n.IsEndPort(p)})
		}
	}
	return ports
}

// saFindings asks the SA and compares. notChecked receives what could not be asked
// or was not answered.
func (o *CheckOptions) saFindings(fab *fabric.Fabric, conf *partconf.Config, model *partconf.Model) (findings []check.Finding, notChecked []fabric.NotChecked, err error) {
	ports := saPorts(fab)
	err = o.Source.MAD.With(o.Ctx, func(ctx context.Context, qf *query.Fabric) error {
		sm, err := mad.FindSA(ctx, qf.T)
		if err != nil {
			return err
		}
		requester := "the asking port"
		var reqTable []check.PKey
		if ni, err := mad.GetNodeInfo(ctx, qf.T, mad.DirectedRoute()); err == nil {
			requester = fmt.Sprintf("the asking port %s", check.GUID(ni.PortGUID))
			// With a repeated port GUID, the last port's table.
			if ids := fab.EndPorts(check.GUID(ni.PortGUID)); len(ids) > 0 {
				reqTable = fab.Port(ids[len(ids)-1]).PKeys
			}
		}
		tables := 0
		for _, sp := range ports {
			view := make([]check.PKey, len(sp.table))
			complete := true
			for b := 0; b*mad.PKeysPerBlock < len(sp.table); b++ {
				r, err := mad.GetPKeyTableRecord(ctx, qf.T, sm, o.SA.SMKey, sp.lid, sp.port, uint16(b))
				if st, ok := mad.SAStatus(err); ok && st == mad.SAStatusNoRecords {
					notChecked = append(notChecked, fabric.NotChecked{Port: fab.FindingPort(sp.id), Kind: fabric.OtherNotChecked, What: "SA P_KeyTableRecord",
						Reason: fmt.Sprintf("the SA answered no record: OpenSM answers only for a port that shares a partition with %s, one of the two a full member, as it believes their tables (osm_sa_pkey_record.c, osm_pkey.c osm_physp_share_pkey), and for none whose LID it does not know (ERR 460B in its log); ask from a full member of a partition every port holds, such as the SM's port in the default partition", requester)})
					complete = false
					break
				}
				if err != nil {
					if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
						return err
					}
					if st, ok := mad.SAStatus(err); ok && st == mad.SAStatusReqInvalid {
						return fmt.Errorf("the SA refused P_KeyTableRecords with SM_Key 0x%016x (ERR_REQ_INVALID): give its sa_key with --sm-key", o.SA.SMKey)
					}
					notChecked = append(notChecked, fabric.NotChecked{Port: fab.FindingPort(sp.id), Kind: fabric.OtherNotChecked, What: "SA P_KeyTableRecord", Reason: err.Error()})
					complete = false
					break
				}
				for i, k := range r.PKeys {
					if at := b*mad.PKeysPerBlock + i; at < len(view) {
						view[at] = check.PKey(k)
					}
				}
			}
			if !complete {
				continue
			}
			tables++
			findings = append(findings, compareView(fab, sp, view)...)
			if model != nil && sp.end {
				findings = append(findings, compareViewModel(fab, sp, view, model)...)
			}
		}
		groups := 0
		if conf != nil && model != nil {
			f, nc, n := groupFindings(ctx, qf.T, sm, conf, model, requester, reqTable)
			findings = append(findings, f...)
			notChecked = append(notChecked, nc...)
			groups = n
		}
		o.Notices.Note(fmt.Sprintf("--sa: the SA at LID %d answered %s for %s and %s", sm, requester,
			textsafe.Plural(tables, "P_Key table", "P_Key tables"), textsafe.Plural(groups, "IPoIB broadcast group", "IPoIB broadcast groups")))
		return nil
	})
	return findings, notChecked, err
}

// compareView: the SM's view against the table the port answers.
func compareView(fab *fabric.Fabric, sp saPort, view []check.PKey) []check.Finding {
	var diffs []string
	for i := range view {
		if view[i] != sp.table[i] && (view[i].Valid() || sp.table[i].Valid()) {
			if len(diffs) == 4 {
				diffs = append(diffs, "...")
				break
			}
			diffs = append(diffs, fmt.Sprintf("index %d: the SM %s, the port %s", i, view[i], sp.table[i]))
		}
	}
	if len(diffs) == 0 {
		return nil
	}
	return []check.Finding{{Severity: check.SeverityError, Rule: RuleSATableDiffers, Ports: []check.FindingPort{fab.FindingPort(sp.id)},
		Message: fmt.Sprintf("the Subnet Manager believes %s's P_Key table is not what the port holds (%s): its answers (paths, joins) follow its own view", fab.Label(sp.id), strings.Join(diffs, "; ")),
		Action:  "restart the Subnet Manager or reset the port's link so the SM reads the table again and rewrites it (a running OpenSM re-reads a port's table only then: kill -HUP re-reads partitions.conf, not the tables); if it changes again, something else sets it"}}
}

// compareViewModel: the SM's view against what the partitions file gives the port.
// kill -HUP alone settles it only when OpenSM read an older version of the file: a
// file it rejects it rejects again (seen with OpenSM 3.3.23, TestLabAdviceSAViewNotFile).
func compareViewModel(fab *fabric.Fabric, sp saPort, view []check.PKey, model *partconf.Model) []check.Finding {
	p := fab.Port(sp.id)
	if p == nil || p.GUID == 0 {
		return nil
	}
	want := map[check.PKey]bool{}
	for _, e := range model.Table(p.GUID) {
		want[e.PKey] = true
	}
	have := map[check.PKey]bool{}
	for _, k := range view {
		if k.Valid() {
			have[k] = true
		}
	}
	var missing, extra []string
	for k := range want {
		if !have[k] {
			missing = append(missing, k.String())
		}
	}
	for k := range have {
		if !want[k] {
			extra = append(extra, k.String())
		}
	}
	if len(missing)+len(extra) == 0 {
		return nil
	}
	slices.Sort(missing)
	slices.Sort(extra)
	var parts []string
	if len(missing) > 0 {
		parts = append(parts, "lacks "+strings.Join(missing, ", "))
	}
	if len(extra) > 0 {
		parts = append(parts, "has "+strings.Join(extra, ", ")+" besides")
	}
	return []check.Finding{{Severity: check.SeverityError, Rule: RuleSAViewNotFile, Ports: []check.FindingPort{fab.FindingPort(sp.id)},
		Message: fmt.Sprintf("the Subnet Manager's own view of %s's table %s what %s gives it: the SM did not apply the file there (a table too small, ERR 0512; a parse error; another file)", fab.Label(sp.id), strings.Join(parts, " and "), model.Source.File),
		Action:  "read OpenSM's log about it (ibkey sm log): fix the file if OpenSM rejected it, or point OpenSM at this file if it reads another (opensm -P, partition_config_file); then kill -HUP OpenSM"}}
}

// groupFindings: every ipoib partition OpenSM keeps has its IPoIB broadcast group in
// the SA, with the file's Q_Key, MTU and rate.
func groupFindings(ctx context.Context, t mad.Transport, sm uint16, conf *partconf.Config, model *partconf.Model, requester string, reqTable []check.PKey) ([]check.Finding, []fabric.NotChecked, int) {
	member := func(key check.PartitionKey) bool {
		return slices.ContainsFunc(reqTable, func(k check.PKey) bool { return k.Valid() && k.Partition() == key })
	}
	var out []check.Finding
	var nc []fabric.NotChecked
	compared := 0
	for _, p := range model.Config.Partitions {
		if !p.IPoIB || !model.Exists(p) {
			continue
		}
		for _, g := range p.Groups {
			if !g.Broadcast {
				continue
			}
			mgid := mad.GID(g.MGID.As16())
			r, err := mad.GetMCMemberRecord(ctx, t, sm, mgid)
			pos := check.FilePos{File: conf.File}
			if len(p.Defs) > 0 {
				pos = p.Defs[0].Pos
			}
			if st, ok := mad.SAStatus(err); ok && st == mad.SAStatusNoRecords && member(p.Key) {
				out = append(out, check.Finding{Severity: check.SeverityError, Rule: RuleIPoIBGroupMissing, Pos: pos,
					Message: fmt.Sprintf("%s (%s) is an ipoib partition with members, but the SA has no broadcast group %s, though %s is in the partition: IPoIB interfaces of the partition cannot join it and stay down", p.Name, p.Key, g.MGID, requester),
					Action:  "read OpenSM's log about the group (ibkey sm log --kind partitions-warning,pkey-program-failed,join-refused): an IP group line with another P_Key, rate or MTU, or a failed creation"})
				continue
			}
			if st, ok := mad.SAStatus(err); ok && st == mad.SAStatusNoRecords {
				// The SA answers only for groups of the asker's partitions: an
				// absent answer is a missing group only when the asker is in it.
				nc = append(nc, fabric.NotChecked{Kind: fabric.OtherNotChecked, What: "SA MCMemberRecord",
					Reason: fmt.Sprintf("no record for %s, the IPoIB group of %s (%s): the SA answers only for groups of partitions %s is in; ask from a member (the group is missing if a member gets no answer either)", g.MGID, p.Name, p.Key, requester)})
				continue
			}
			if err != nil {
				nc = append(nc, fabric.NotChecked{Kind: fabric.OtherNotChecked, What: "SA MCMemberRecord", Reason: fmt.Sprintf("%s: %v", g.MGID, err)})
				continue
			}
			compared++
			var diffs []string
			if r.QKey != g.QKey {
				diffs = append(diffs, fmt.Sprintf("Q_Key %s, the file %s", check.QKey(r.QKey), check.QKey(g.QKey)))
			}
			if r.MTUCode() != g.MTU&0x3f {
				diffs = append(diffs, fmt.Sprintf("MTU code %d, the file %d", r.MTUCode(), g.MTU&0x3f))
			}
			if r.RateCode() != g.Rate&0x3f {
				diffs = append(diffs, fmt.Sprintf("rate code %d, the file %d", r.RateCode(), g.Rate&0x3f))
			}
			if len(diffs) > 0 {
				// While the partition stays in the file, a running OpenSM finds the group
				// it made and keeps it as it is (osm_prtn.c osm_prtn_add_mcgroup,
				// osm_mcmr_rcv_find_or_create_new_mgrp), and such a group is "well
				// known" (track_mgrp_w_partition), which osm_mgrp_cleanup keeps when no
				// member is left (osm_multicast.c). Seen with OpenSM 3.3.23: a group
				// nobody joined kept its Q_Key and MTU through kill -HUP; a restart made
				// it anew.
				out = append(out, check.Finding{Severity: check.SeverityError, Rule: RuleIPoIBGroupDiffers, Pos: pos,
					Message: fmt.Sprintf("the IPoIB broadcast group of %s (%s), %s, has %s: OpenSM keeps a group it created before with its old values, and IPoIB interfaces join it as it is", p.Name, p.Key, g.MGID, strings.Join(diffs, "; ")),
					Action:  "restart OpenSM, which creates the group with the file's values; a running one keeps it as it is, also after kill -HUP and with no member left"})
			}
		}
	}
	return out, nc, compared
}
