package query

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/ibverbs"
	"github.com/ibkey/ibkey/internal/partconf"
)

// ResolvedEndpoint is a can-talk endpoint ready for check.CanTalk.
type ResolvedEndpoint struct {
	Spec     check.EndpointSpec
	Endpoint check.Endpoint
	// View is the port a DEV/PORT endpoint names (its warnings say when its table cannot
	// be trusted); nil for an endpoint given by P_Key value.
	View *PortView
	// Model is the partitions.conf model a GUID endpoint was resolved from; nil otherwise.
	Model *partconf.Model
	// Resolved says which port a fabric endpoint (lid=, node=, a GUID in a sweep) turned
	// out to be and where it was read, for a note; "" otherwise.
	Resolved string
	// Alternatives are the endpoint under assumptions that were not checked (a GUID
	// of a partitions file that may be SELF, endpoint_self.go); CanTalk compares.
	Alternatives []Alternative
	// EntryNotKnown says why the entry a QP uses for pkey= is not known (findEntry:
	// entries not read may change the one the kernel picks); "" when it is known.
	EntryNotKnown string
}

// CheckResolvable returns a *UsageError wrapping an *EndpointSourceError for endpoint
// forms that cannot be resolved without more input: a GUID needs a partitions.conf or
// a fabric (a saved sweep, or fabric access); lid= and node= need a fabric. They are
// bad input (exit 2), not an environment problem: the command's message names the
// flags that make them work.
func CheckResolvable(token string, spec check.EndpointSpec) error {
	var need error
	switch spec.Kind {
	case check.EndpointGUID:
		need = ErrGUIDNeedsSource
	case check.EndpointLID:
		need = ErrLIDNeedsFabric
	case check.EndpointNode:
		need = ErrNodeNeedsSweep
	default:
		return nil
	}
	return endpointSourceError(token, spec, need)
}

func endpointSourceError(token string, spec check.EndpointSpec, need error) error {
	e := &EndpointSourceError{Token: token, Spec: spec, Need: need}
	return &UsageError{Msg: e.Error(), Err: e}
}

// ResolveEndpointsFrom turns parsed specs into rules-engine endpoints, from the
// sources EndpointSources describes. src.Host is called only when a spec names a local
// port, and each port is read once. With src.Partitions, a GUID resolves to the P_Keys
// OpenSM would program on that port from the file (every entry with Index NoIndex: the
// index depends on what the table held before); a GUID the file does not name gets what
// ALL / ALL_CAS give it. Errors:
//   - *UsageError for GUID, lid= and node= forms without their source (see
//     CheckResolvable), wrapping an *EndpointSourceError;
//   - *NotFoundError for a device or port that does not exist, with what does (exit 3),
//     and for a fabric endpoint that is not in a complete sweep; *UnknownError for one
//     not in a partial sweep (exit 4); a *UsageError for one that matches several;
//   - *EnvError for a port with no P_Key table (iWARP); a table that exists and was
//     not read (PortView.TableNotRead), local or swept, is no error, nor is an entry
//     index= pins that was not read, or one pkey= asks for that may be among those
//     not read: the endpoint carries it (check.Endpoint.TableNotRead, EntryNotRead) and
//     check.CanTalk decides from it;
//   - *check.ResolveError when index= or pkey= is not in the port's table, or index=
//     pins an empty (invalid) entry: no QP can use that entry to talk (a definite "no");
//     for a GUID's predicted table only when no assumption not checked (SELF, a
//     router port) gives it the key, else the endpoint carries check.Endpoint.NoEntry.
//
// Each endpoint is labelled as endpointLabels says.
func ResolveEndpointsFrom(src EndpointSources, specs ...check.EndpointSpec) ([]ResolvedEndpoint, error) {
	parts := src.Partitions
	var guids []check.GUID
	for _, s := range specs {
		switch {
		case s.Kind == check.EndpointGUID && parts != nil:
			if s.Index != nil || s.PortNum != nil {
				return nil, endpointSourceError(s.String(), s, ErrIndexNeedsSweep)
			}
			guids = append(guids, s.GUID)
		case src.Sweep != nil:
			// Found in the sweep.
		default:
			if err := CheckResolvable(s.String(), s); err != nil {
				return nil, err
			}
		}
	}
	var model *partconf.Model
	if len(guids) > 0 {
		model = parts.ModelOf(guids...)
	}
	sweep := sync.OnceValues(src.Sweep)
	labels := endpointLabels(specs...)
	var h *Host
	local := map[PortRef]*PortView{}
	out := make([]ResolvedEndpoint, len(specs))
	// A missing device on B is worth more than "not in the table" on A: resolution
	// errors wait until every port has been read, and each end's until its
	// alternatives are known.
	unresolved := make([]error, len(specs))
	for i, s := range specs {
		r := ResolvedEndpoint{Spec: s}
		if s.Kind == check.EndpointGUID && parts != nil {
			e := resolveGUID(s, labels[i], model)
			// A port of the partitions file: its device is not known from here.
			e.QKeyRule, e.QKeyRuleReason = check.QKeyRuleFor(check.QKeyDevice{Name: labels[i]})
			r.Endpoint, r.Model = e, model
			out[i] = r
			continue
		}
		// A P_Key value or options-only endpoint is answered from the values alone.
		if s.Kind != check.EndpointPort && s.Kind != check.EndpointLID && s.Kind != check.EndpointNode && s.Kind != check.EndpointGUID {
			e, err := s.Endpoint(labels[i], nil)
			if err != nil {
				return nil, err
			}
			r.Endpoint = e
			out[i] = r
			continue
		}
		// A port: local (each read once), or in a sweep.
		var (
			v   *PortView
			f   *fabric.Fabric // the sweep the port was found in
			n   *fabric.Node
			p   *fabric.Port
			err error
		)
		switch {
		case s.Kind == check.EndpointPort:
			ref := PortRef{Device: s.Device, Port: s.Port}
			if v = local[ref]; v == nil {
				if h == nil {
					h = src.Host()
				}
				loaded, err := h.Load(Selector{Device: s.Device, Port: s.Port, HasPort: true}, LoadOptions{Tables: true})
				if err != nil {
					return nil, err
				}
				v = loaded[0]
				local[ref] = v
			}
		default:
			f, err = sweep()
			if f, n, p, err = findSwept(f, err, s); err != nil {
				return nil, err
			}
			v = sweptPortView(n, p) // no read: the sweep holds it
			r.Resolved = describeSwept(f, s, n, p, "found in "+cmp.Or(src.SweepName, "the sweep"))
		}
		e, err := resolvePort(s, labels[i], v)
		if _, ok := errors.AsType[*check.ResolveError](err); ok {
			unresolved[i] = err
		} else if err != nil {
			return nil, err
		}
		if f != nil {
			placeSwept(&e, f, n, p)
			// A port of the fabric: its device is not known from here.
			e.QKeyRule, e.QKeyRuleReason = check.QKeyRuleFor(check.QKeyDevice{Name: labels[i]})
		} else {
			setPortRules(&e, v)
			// A local port: its device's Q_Key send rule (verbscounters.go, QKeyRuleOf).
			e.QKeyRule, e.QKeyRuleReason = QKeyRuleOf(h.Sys, v)
		}
		r.Endpoint, r.View = e, v
		r.findEntry(v)
		out[i] = r
	}
	selfAlternatives(parts, out, labels)
	routerAlternatives(parts, out, labels)
	for i, r := range out {
		if err := unresolved[i]; err != nil {
			return nil, err
		}
		// A GUID its predicted table gives no entry of pkey='s partition is a definite
		// no only when no assumption that was not checked (the SM's port, a router
		// port) would give it one: else CanTalk compares (a SELF=full entry made it
		// a no where OpenSM's own port could talk, until wave 12).
		if r.Endpoint.NoEntry != "" && !slices.ContainsFunc(r.Alternatives, func(a Alternative) bool { return a.Endpoint.NoEntry == "" }) {
			// What it gets is the port as taken when an assumption would give it
			// other entries (every alternative's table differs).
			var taking []string
			for _, a := range r.Alternatives {
				t := map[bool]string{true: "a port OpenSM does not run on", false: "a CA port"}[a.SM]
				if a.Model != nil && !slices.Contains(taking, t) {
					taking = append(taking, t)
				}
			}
			return nil, &check.ResolveError{Endpoint: r.Spec.String(), Problem: noEntry(r.Spec, r.Model, strings.Join(taking, " and "))}
		}
	}
	return out, nil
}

// resolveGUID is a GUID endpoint: the port's predicted table, or with pkey= the entry a
// QP there would use for that partition (a full one preferred, as for a local port),
// or none (NoEntry: ResolveEndpointsFrom makes it a *check.ResolveError unless an
// assumption not checked would give the port the key). index= was refused before.
func resolveGUID(s check.EndpointSpec, label string, m *partconf.Model) check.Endpoint {
	table := guidTable(m, s.GUID)
	if s.PKey == nil {
		e, _ := s.Endpoint(label, table) // a port: every entry, no error
		e.LinkLayer = "InfiniBand"       // OpenSM manages InfiniBand ports
		return e
	}
	_, p, ok := check.FindPKeyIndex(table, *s.PKey)
	if !ok {
		return check.Endpoint{Label: label, QPType: s.QPType, QKey: s.QKey, WRQKey: s.WRQKey, LinkLayer: "InfiniBand", NoEntry: noEntry(s, m, "")}
	}
	e := check.QPEndpoint(label, p, s.QPType)
	e.QKey, e.WRQKey, e.LinkLayer = s.QKey, s.WRQKey, "InfiniBand"
	if p != *s.PKey {
		e.Notes = append(e.Notes, fmt.Sprintf("%s: asked for %s; %s gives it %s (%s member), the entry a QP there uses",
			label, *s.PKey, m.Source.File, p, p.Membership()))
	}
	return e
}

// noEntry says that the port of s gets no entry of pkey='s partition from m, and what
// it gets, taking it for what taking says ("" when nothing is taken).
func noEntry(s check.EndpointSpec, m *partconf.Model, taking string) string {
	gets := pkeyList(guidTable(m, s.GUID))
	if taking != "" {
		gets += ", taking it for " + taking
	}
	return fmt.Sprintf("%s gets no entry for partition %s from %s (it gets %s), so no QP there can use it",
		s.GUID.String(), s.PKey.Partition().String(), m.Source.File, gets)
}

// pkeyList lists a predicted table's P_Keys, at most 8.
func pkeyList(t []check.TableEntry) string {
	if len(t) == 0 {
		return "no P_Key at all"
	}
	var keys []string
	for _, e := range t {
		keys = append(keys, e.PKey.String())
	}
	return someOf(keys, 8)
}

// someOf joins items with ", ", at most most of them, and counts the others:
// "a, b and 3 more".
func someOf(items []string, most int) string {
	if len(items) > most {
		return strings.Join(items[:most], ", ") + fmt.Sprintf(" and %d more", len(items)-most)
	}
	return strings.Join(items, ", ")
}

func resolvePort(s check.EndpointSpec, label string, v *PortView) (check.Endpoint, error) {
	// What the endpoint stands for exists and was not read (the table, for a port or
	// a QP on it; a pinned entry): check.CanTalk decides from it, as from entries not read:
	// unknown (exit 4), unless a decided rule fails (a port not ACTIVE:
	// VerdictNotActive, known whatever its table holds; a CA's DOWN port is where a
	// sweep reads no table). One verdict in every format, never an error without a
	// document.
	notRead := check.Endpoint{Label: label, Port: s.Index == nil && s.PKey == nil, QPType: s.QPType, QKey: s.QKey, WRQKey: s.WRQKey, LinkLayer: v.LinkLayer()}
	if why := v.TableNotRead(); why != "" {
		notRead.TableNotRead = why
		return notRead, nil
	}
	if v.Table == nil {
		return check.Endpoint{}, &EnvError{Msg: fmt.Sprintf("%s: %s", v.Ref(), v.TableMissing)}
	}
	if s.Index != nil {
		// check.EndpointSpec.Endpoint pins any entry; an empty or unreadable one is
		// better said here, where the table's meaning is known.
		for _, e := range v.Table.Entries {
			if e.Index != *s.Index {
				continue
			}
			switch {
			case e.Unreadable != "":
				notRead.EntryNotRead = fmt.Sprintf("P_Key table entry %d could not be read (%s)", e.Index, e.Unreadable)
				return notRead, nil
			case !e.Valid():
				what := "an empty entry"
				if e.Hole {
					what = "an empty entry (a hole, typically left by a removed partition)"
				}
				return check.Endpoint{}, &check.ResolveError{Endpoint: s.String(), Problem: fmt.Sprintf(
					"index %d holds %s, %s: a QP using it sends key 0, which matches nothing (valid entries: %s)",
					e.Index, e.PKey, what, validEntries(v.Table))}
			}
		}
	}
	e, err := s.Endpoint(label, v.Table.checkEntries())
	e.LinkLayer = v.LinkLayer()
	if !v.Port.LinkLayer.OK() {
		e.LinkLayerMissing = v.Port.LinkLayer.Missing
	}
	return e, err
}

// setPortRules gives a port endpoint its state and subnet (check.Endpoint State and
// Subnet), so check.CanTalk answers VerdictNotActive for a port that is not ACTIVE and
// VerdictDifferentSubnets for ports with different GID prefixes.
func setPortRules(e *check.Endpoint, v *PortView) {
	e.State = portStateName(v.Port.State.Num)
	if e.LinkLayer != "Ethernet" && v.Port.GID0.OK() {
		// An InfiniBand port's GID prefix names its subnet (a RoCE GID's does not).
		sub := check.SubnetID{GIDPrefix: check.GUID(binary.BigEndian.Uint64(v.Port.GID0.Value[:8]))}
		if v.Port.SMLID.OK() {
			sub.SMLID = v.Port.SMLID.Value
		}
		e.Subnet = &sub
	}
}

// placeSwept puts an endpoint resolved from a sweep in its fabric, for can-talk's
// switch-port rule (the switch port cabled to it), with its state and subnet as swept
// (setPortRules).
func placeSwept(e *check.Endpoint, f *fabric.Fabric, n *fabric.Node, p *fabric.Port) {
	e.Fabric, e.At = f, new(check.PortID{Node: n.GUID, Port: p.Num})
	e.State = p.State
	if p.GIDPrefix != 0 {
		e.Subnet = &check.SubnetID{SMLID: p.SMLID, GIDPrefix: p.GIDPrefix}
	}
}

// portStateName maps a sysfs/PortInfo state number to check's names; "" when unknown.
func portStateName(n int) string {
	switch n {
	case ibverbs.StateDown:
		return check.StateDown
	case ibverbs.StateInit:
		return check.StateInit
	case ibverbs.StateArmed:
		return check.StateArmed
	case ibverbs.StateActive, ibverbs.StateActiveDefer:
		return check.StateActive
	}
	return ""
}

// validEntries lists a table's valid entries as INDEX:PKEY, at most 8 of them.
func validEntries(t *Table) string {
	var out []string
	for _, e := range t.Entries {
		if e.Valid() {
			out = append(out, fmt.Sprintf("%d:%s", e.Index, e.PKey))
		}
	}
	if len(out) == 0 {
		return "none"
	}
	return someOf(out, 8)
}

// endpointLabels names endpoints in reasons by their base, the part a user recognizes:
// DEV/PORT, the GUID or the P_Key (pkey= of an options-only endpoint), not the whole spec, which
// repeated in every per-direction sentence drowns it. Bases that occur more than once
// get their position: "A (0x0001)", "B (0x0001)".
func endpointLabels(specs ...check.EndpointSpec) []string {
	labels := make([]string, len(specs))
	count := map[string]int{}
	for i, s := range specs {
		switch {
		case s.Kind == check.EndpointPort:
			labels[i] = PortRef{Device: s.Device, Port: s.Port}.String()
		case s.Kind == check.EndpointGUID:
			labels[i] = s.GUID.String()
		case s.Kind == check.EndpointLID || s.Kind == check.EndpointNode:
			base := check.EndpointSpec{Kind: s.Kind, LID: s.LID, Node: s.Node, PortNum: s.PortNum}
			labels[i] = base.String()
		case (s.Kind == check.EndpointPKey || s.Kind == check.EndpointOptions) && s.PKey != nil:
			labels[i] = s.PKey.String()
		default:
			labels[i] = s.String()
		}
		count[labels[i]]++
	}
	for i := range labels {
		if count[labels[i]] > 1 && i < 26 {
			labels[i] = fmt.Sprintf("%c (%s)", 'A'+i, labels[i])
		}
	}
	return labels
}
