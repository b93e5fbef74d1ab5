package cantalk

import (
	"cmp"
	"encoding/json"
	"fmt"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/query"
)

// The JSON of `can-talk -o json` (schemas/can-talk.schema.json), built from the
// verdict here rather than from tags on internal/check's types, so the document
// follows the command vocabulary (cmdutil/jsonschema.go) whatever the rules' types
// look like.

type verdictJSON struct {
	Schema cmdutil.SchemaVersion `json:"schema_version"`
	// Demo: an endpoint was read from the embedded demo host or its fabric, as
	// pkeys -o json says it.
	Demo bool `json:"demo,omitempty"`
	// CanTalk: the verdict is yes; null when it is not known (unknown,
	// different-subnets: exit 4), never a false that was not checked.
	CanTalk *bool `json:"can_talk"`
	// OneWay: the verdict is one-way; null when it is not known (exit 4, as
	// CanTalk), or its working direction is not confirmed (can-talk --sa: the Subnet
	// Manager does not confirm it, unconfirmedOneWay): a direction is dropped, the
	// other is only what the tables read, not known to work.
	OneWay *bool `json:"one_way"`
	// Verdict is yes, no, one-way, not-active, different-subnets or unknown (exit 4:
	// NotChecked says what was not read).
	Verdict    string   `json:"verdict"`
	NotChecked []string `json:"not_checked,omitempty"`
	Reasons    []string `json:"reasons"`
	Warnings   []string `json:"warnings"`
	// A to Shared are absent only for an endpoint that cannot be resolved
	// (Unresolved).
	A      endpointJSON  `json:"a,omitzero"`
	B      endpointJSON  `json:"b,omitzero"`
	AToB   directionJSON `json:"a_to_b,omitzero"`
	BToA   directionJSON `json:"b_to_a,omitzero"`
	Shared []sharedJSON  `json:"shared_partitions,omitzero"`
	// SharedComplete is false when entries or a table of an end were not read, so a
	// partition both share may be missing from Shared (a lower bound), whatever the
	// verdict: a yes that entries not read could not change has no incomplete
	// (nothing it asked about was not read), and says it here. False too when an
	// assumption not checked would give both ends one more (Verdict.SharedAssumed).
	// Absent with Shared.
	SharedComplete *bool     `json:"shared_partitions_complete,omitempty"`
	Hops           []hopJSON `json:"hops,omitempty"`
	// SA is the Subnet Manager's answer (--sa, sa.go).
	SA         *saJSON         `json:"sa,omitempty"`
	Unresolved *unresolvedJSON `json:"unresolved,omitempty"`
	// Incomplete is what the answer asked about and could not read or check: why the
	// command exits 4 (verdict unknown or different-subnets), or what a definite no
	// (exit 1) was found beside (noIncomplete); never on a yes.
	Incomplete []cmdutil.Incomplete `json:"incomplete,omitempty"`
}

type endpointJSON struct {
	Label string `json:"label"`
	// IsPort: the endpoint is a port (all its valid entries), not one P_Key.
	IsPort         bool    `json:"is_port"`
	QPType         string  `json:"qp_type"`
	QKey           *string `json:"qkey"`
	WRQKey         *string `json:"wr_qkey"`
	QKeyRule       string  `json:"qkey_rule"` // iba, verbatim or iba-assumed
	QKeyRuleReason string  `json:"qkey_rule_reason"`
}

// sideJSON is an end's entry for a shared partition; every field is null when the
// entry is not known (check.PartitionSide.NotKnown: an assumption not given would give
// the end another entry, or none).
type sideJSON struct {
	PKey       *string `json:"pkey"`
	Membership *string `json:"membership"`
	Index      *int    `json:"index"`
	Both       *bool   `json:"both_memberships"`
	OtherIndex *int    `json:"other_index"`
}

type sharedJSON struct {
	Key     string `json:"key"`
	Default bool   `json:"default"`
	// Works is null when a switch port cabled to an end was not checked for the
	// partition (hops says which; the reasons say what was not read), or an
	// assumption not checked or an entry not read would decide it otherwise (a
	// warning says which).
	Works *bool    `json:"works"`
	A     sideJSON `json:"a"`
	B     sideJSON `json:"b"`
}

// A direction's booleans are null when not known (check.RuleNotKnown; ok when the
// direction is unknown): never a true or false that was not checked.
type directionJSON struct {
	From         string    `json:"from"`
	To           string    `json:"to"`
	OK           *bool     `json:"ok"`
	LinkOK       *bool     `json:"link_ok"`
	QPTypeOK     bool      `json:"qp_type_ok"`
	PKeyOK       *bool     `json:"pkey_ok"`
	QKey         string    `json:"qkey_check"`
	WireQKey     *string   `json:"wire_qkey"`
	AcceptedQKey *string   `json:"accepted_qkey"`
	SwitchOK     *ruleJSON `json:"switch_ok,omitempty"` // written only when it does not pass: false, or null
	Unknown      bool      `json:"unknown,omitempty"`
	Reasons      []string  `json:"reasons"`
}

// hopJSON is a switch port at an end that lacks a working partition's key, or was
// not read. End, Switch and Enforcement keep the check types' own JSON (Enforcement
// null: not read; Switch null: the port cabled to the end was not read,
// check.HopCheck.PeerNotRead).
type hopJSON struct {
	End         check.PortID       `json:"end"`
	Switch      *check.PortID      `json:"switch_port"`
	Key         string             `json:"key"`
	TableRead   bool               `json:"table_read"`
	OnSwitch    bool               `json:"on_switch"`
	Enforcement *check.Enforcement `json:"enforcement"`
	FromEnd     string             `json:"from_end"`
	ToEnd       string             `json:"to_end"`
}

type unresolvedJSON struct {
	Endpoint string `json:"endpoint"` // "a" or "b"
	Spec     string `json:"spec"`
	Problem  string `json:"problem"`
}

func verdictToJSON(v check.Verdict, eps []query.ResolvedEndpoint) verdictJSON {
	var notChecked []string
	for _, nc := range v.NotChecked {
		notChecked = append(notChecked, nc.Sentence)
	}
	j := verdictJSON{CanTalk: new(v.CanTalk()), OneWay: new(v.OneWay()), Verdict: v.Kind.String(), NotChecked: notChecked,
		Reasons: cmdutil.List(v.Reasons), Warnings: cmdutil.List(v.Warnings), A: endpointToJSON(v.A), B: endpointToJSON(v.B),
		AToB: directionToJSON(v.AToB), BToA: directionToJSON(v.BToA), Shared: []sharedJSON{}}
	for _, p := range v.Shared {
		var works *bool
		if p.Switch != check.HopUnknown && !p.WorksNotKnown {
			works = new(p.WorksHere())
		}
		j.Shared = append(j.Shared, sharedJSON{Key: p.Key.String(), Default: p.Key == check.DefaultPartition, Works: works,
			A: sideToJSON(p.A), B: sideToJSON(p.B)})
	}
	for _, h := range v.Hops {
		if h.TableRead && h.OnSwitch {
			continue // only the hops that lack the key, or were not read, say something
		}
		hj := hopJSON{End: h.End, Key: h.Key.String(), TableRead: h.TableRead, OnSwitch: h.OnSwitch,
			Enforcement: h.Enforcement, FromEnd: h.FromEnd.String(), ToEnd: h.ToEnd.String()}
		if h.PeerNotRead == "" {
			hj.Switch = &h.Switch
		}
		j.Hops = append(j.Hops, hj)
	}
	if v.OneWay() && (v.AToB.Unknown || v.BToA.Unknown) {
		j.OneWay = nil
	}
	if v.Kind.ExitCode() == cmdutil.ExitIncomplete {
		j.CanTalk, j.OneWay = nil, nil
	}
	j.SharedComplete = new(!query.SharedMayBeShort(eps) && !v.SharedAssumed)
	j.Incomplete = verdictIncomplete(v)
	return j
}

// verdictIncomplete says why a verdict exits 4: the things check.CanTalk did not
// check (unread P_Key entries of the ends, switch port tables not read), or ports on
// different subnets.
func verdictIncomplete(v check.Verdict) []cmdutil.Incomplete {
	switch v.Kind {
	case check.VerdictDifferentSubnets:
		return []cmdutil.Incomplete{{Kind: cmdutil.IncompleteDifferentSubnets,
			Message: fmt.Sprintf("%s and %s are on different subnets: only a router, which is not checked, could join them", v.A.Label, v.B.Label)}}
	case check.VerdictUnknown:
		var out []cmdutil.Incomplete
		for _, nc := range v.NotChecked {
			out = append(out, cmdutil.Incomplete{Kind: incompleteKind(nc.Cause), Message: nc.Sentence})
		}
		return out
	}
	return nil
}

// noIncomplete is what a definite no (exit 1: no, one-way, not-active) was decided
// beside: what of the ends was not read (check.CanTalk keeps NotChecked only for an
// unknown, as a no does not depend on it), so a script reading the JSON sees that
// pkey_ok and the shared partitions rest on a partial read. The ends' tables or
// entries not read (a port's by query.NotRead, the rule of every view; for a QP the
// one entry it uses), the switch ports facing them not read, a link layer not read; with
// --sa, the Subnet Manager's answer when it could not be asked (saReason: one it gave
// that disagrees was read, and sa and warnings say so). Empty for any other verdict,
// and for a no from a complete read.
func noIncomplete(v check.Verdict, eps []query.ResolvedEndpoint, saReason string) []cmdutil.Incomplete {
	if v.Kind.ExitCode() != cmdutil.ExitNo {
		return nil
	}
	var out []cmdutil.Incomplete
	ends := make([]check.Endpoint, len(eps))
	for i, r := range eps {
		e := r.Endpoint
		ends[i] = e
		// The port's table, or its entries, not read: the rule of every view
		// (query.NotRead), named by the endpoint. A QP uses one entry of them, which
		// EntryNotKnown or EntryNotRead names.
		// A DOWN port's table over the fabric is no gap (query.PortView.DownTableNotRead):
		// the verdict is NOT ACTIVE whatever it holds.
		if r.View != nil && !r.View.DownTableNotRead() {
			unread, _ := query.NotRead([]*query.PortView{r.View}, nil)
			for _, u := range unread {
				if u.Entries && !e.Port {
					continue
				}
				kind := cmdutil.IncompleteUnreadEntries
				if u.Table {
					kind = cmdutil.IncompleteUnreadTable
				}
				out = append(out, cmdutil.Incomplete{Kind: kind, Message: e.Label + ": " + u.Err.Error()})
			}
		}
		// pkey='s entry, which entries not read may change, else the entry a QP uses.
		if why := cmp.Or(r.EntryNotKnown, e.EntryNotRead); why != "" {
			out = append(out, cmdutil.Incomplete{Kind: cmdutil.IncompleteUnreadEntries, Message: fmt.Sprintf("%s: %s", e.Label, why)})
		}
		if e.LinkLayerMissing != "" {
			out = append(out, cmdutil.Incomplete{Kind: cmdutil.IncompleteNotChecked, Message: fmt.Sprintf("%s: link layer not read (%s)", e.Label, e.LinkLayerMissing)})
		}
	}
	for _, h := range v.Hops {
		if h.FromEnd != check.HopUnknown && h.ToEnd != check.HopUnknown {
			continue
		}
		for _, e := range ends {
			if e.Fabric != nil && e.At != nil && *e.At == h.End {
				out = append(out, cmdutil.Incomplete{Kind: cmdutil.IncompleteUnreadTable, Message: h.Sentence(e.Fabric)})
				break
			}
		}
	}
	if saReason != "" {
		out = append(out, cmdutil.Incomplete{Kind: cmdutil.IncompleteNotChecked, Message: saReason})
	}
	return out
}

// incompleteKind is the kind of incomplete a cause of check's verdict is reported as.
// A switch port facing an end whose enforcement bits were not read (its table lacks
// the key) is unread-table too: what was not read is that switch port's partition
// state, as when its table was not read.
func incompleteKind(c check.NotCheckedCause) string {
	switch c {
	case check.NotCheckedEntries:
		return cmdutil.IncompleteUnreadEntries
	case check.NotCheckedTable, check.NotCheckedSwitchTable, check.NotCheckedSwitchEnforcement:
		return cmdutil.IncompleteUnreadTable
	case check.NotCheckedSubnetManager, check.NotCheckedFile, check.NotCheckedRoute, check.NotCheckedSubnet:
		return cmdutil.IncompleteNotChecked
	}
	return cmdutil.IncompleteNotChecked // a cause this command does not know yet
}

func endpointToJSON(s check.EndpointSummary) endpointJSON {
	rule, _ := s.QKeyRule.MarshalText()
	return endpointJSON{Label: s.Label, IsPort: s.Port, QPType: s.QPType.String(), QKey: qkeyString(s.QKey), WRQKey: qkeyString(s.WRQKey),
		QKeyRule: string(rule), QKeyRuleReason: s.QKeyRuleReason}
}

func sideToJSON(s check.PartitionSide) sideJSON {
	if s.NotKnown {
		return sideJSON{}
	}
	return sideJSON{PKey: new(s.PKey.String()), Membership: new(s.PKey.Membership().String()), Index: indexOrNull(s.Index), Both: &s.Both,
		OtherIndex: indexOrNull(s.OtherIndex)}
}

func directionToJSON(d check.Direction) directionJSON {
	j := directionJSON{From: d.From, To: d.To, LinkOK: ruleJSON(d.LinkOK).ptr(), QPTypeOK: d.QPTypeOK, PKeyOK: ruleJSON(d.PKeyOK).ptr(), QKey: string(d.QKey),
		WireQKey: qkeyString(d.WireQKey), AcceptedQKey: qkeyString(d.AcceptedQKey), Unknown: d.Unknown, Reasons: cmdutil.List(d.Reasons)}
	if !d.Unknown {
		j.OK = &d.OK
	}
	if d.SwitchOK != check.RulePasses {
		j.SwitchOK = new(ruleJSON(d.SwitchOK))
	}
	return j
}

// ruleJSON is a rule's result in JSON: true, false, or null when not known.
type ruleJSON check.Rule

func (r ruleJSON) ptr() *bool {
	if check.Rule(r) == check.RuleNotKnown {
		return nil
	}
	return new(check.Rule(r) == check.RulePasses)
}

func (r ruleJSON) MarshalJSON() ([]byte, error) { return json.Marshal(r.ptr()) }

func qkeyString(q *check.QKey) *string {
	if q == nil {
		return nil
	}
	return new(q.String())
}

func indexOrNull(i int) *int {
	if i == check.NoIndex {
		return nil
	}
	return &i
}
