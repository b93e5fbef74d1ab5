package query

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/partconf"
)

// SELF in a partitions file names the port OpenSM runs on, and a file without a Default
// line gives that port a full default entry (OpenSM's fallback "Default=0x7fff :
// ALL=limited, SELF=full", osm_prtn_config.c). Without --sm-guid, which port that is
// was not given: a GUID endpoint is predicted as not the SM's port, and when the
// verdict would differ if it were, the answer is not known (seen in the lab: a file
// without a Default line, OpenSM at HcaA; the tables it programmed let HcaA talk to
// HcaB in the default partition, which a prediction taking HcaA for an ordinary port
// called "no").

// Alternative is an endpoint as it would be under an assumption that was not checked.
type Alternative struct {
	Endpoint check.Endpoint
	// Model predicts the endpoint's port under the assumption (SM, router); nil for
	// entries not read.
	Model *partconf.Model
	// If says the assumption: "0x0002c90300000201 is the port OpenSM runs on".
	If string
	// SM: the assumption is that this port is the SM's; two such cannot hold at once.
	SM bool
	// Why says, once for every alternative of its kind, why it matters and how to
	// settle it.
	Why string
	// Taking says what the verdict takes instead, for an alternative that stands for
	// entries not read (findEntry); "" for the SM and router assumptions,
	// whose words CanTalk has.
	Taking string
}

// selfAlternatives gives each GUID endpoint resolved from parts, when the SM's port is
// not known, the endpoint it would be as the SM's port, if its table would differ.
func selfAlternatives(parts *Partitions, out []ResolvedEndpoint, labels []string) {
	if parts == nil || parts.Options.SMGUID != 0 {
		return
	}
	for i := range out {
		r := &out[i]
		if r.Spec.Kind != check.EndpointGUID || r.Model == nil {
			continue
		}
		asSM := *parts
		asSM.Options.SMGUID = r.Spec.GUID
		m := asSM.ModelOf(r.Spec.GUID)
		if slices.EqualFunc(guidTable(m, r.Spec.GUID), guidTable(r.Model, r.Spec.GUID), func(a, b check.TableEntry) bool { return a.PKey == b.PKey }) {
			continue
		}
		r.addAlternative(labels[i], m, Alternative{SM: true,
			If: fmt.Sprintf("%s is the port OpenSM runs on (SELF in %s%s; give --sm-guid)", r.Spec.GUID, parts.Config.File, implicitSelf(parts))})
	}
}

// addAlternative adds r's GUID endpoint as m predicts its port, under the assumption
// alt says.
func (r *ResolvedEndpoint) addAlternative(label string, m *partconf.Model, alt Alternative) {
	e := resolveGUID(r.Spec, label, m) // NoEntry: the port would not have pkey='s key
	e.QKeyRule, e.QKeyRuleReason = r.Endpoint.QKeyRule, r.Endpoint.QKeyRuleReason
	alt.Endpoint, alt.Model = e, m
	r.Alternatives = append(r.Alternatives, alt)
}

// implicitSelf notes a SELF that the file does not write: its missing Default line.
func implicitSelf(parts *Partitions) string {
	if p := parts.Config.Partition(check.DefaultPartition); p != nil && len(p.Defs) == 1 && p.Defs[0].Implicit {
		return ", implied by its missing Default line"
	}
	return ""
}

// CanTalk is check.CanTalk for resolved endpoints: when an endpoint has alternatives
// (an assumption that was not checked, or entries not read) and the verdict with one
// of them, or with one of each end's that can hold together, differs, the verdict is
// unknown and says on what.
func CanTalk(a, b ResolvedEndpoint) check.Verdict {
	v := check.CanTalk(a.Endpoint, b.Endpoint)
	// One sentence per cause: assumptions (SM, router) and entries not read.
	type group struct{ ifs, whys, taking []string }
	var assumed, unread group
	sm, router := false, false
	// asTaken: the reasons (of the verdict or a direction) an assumption not given
	// would not give: they describe the ends as taken, and say so (qualifyReasons).
	asTaken := map[string][2]bool{} // by reason: SM, router
	try := func(ea, eb check.Endpoint, alts ...Alternative) {
		w := check.CanTalk(ea, eb)
		unreadAlt := slices.ContainsFunc(alts, func(a Alternative) bool { return a.Taking != "" })
		if !unreadAlt {
			for _, x := range [][2][]string{{v.Reasons, w.Reasons}, {v.AToB.Reasons, w.AToB.Reasons}, {v.BToA.Reasons, w.BToA.Reasons}} {
				for _, r := range x[0] {
					// The same, or the same partition shared with more that work,
					// which the notes name: it holds there too.
					if slices.ContainsFunc(x[1], func(o string) bool { return o == r || strings.HasPrefix(o, r+check.OthersWork) }) {
						continue
					}
					t := asTaken[r]
					for _, alt := range alts {
						t[0] = t[0] || alt.SM
						t[1] = t[1] || !alt.SM
					}
					asTaken[r] = t
				}
			}
		}
		// A rule the alternative decides otherwise was taken, not checked: not known
		// in the verdict, whatever its kind (a definite no from another rule keeps
		// the P_Key rule of an entry not read, or of a SELF port, not known).
		for _, d := range [][2]*check.Direction{{&v.AToB, &w.AToB}, {&v.BToA, &w.BToA}} {
			for _, r := range [][2]*check.Rule{{&d[0].PKeyOK, &d[1].PKeyOK}, {&d[0].LinkOK, &d[1].LinkOK}, {&d[0].SwitchOK, &d[1].SwitchOK}} {
				if *r[0] != *r[1] {
					*r[0] = check.RuleNotKnown
				}
			}
		}
		var conds []string
		for _, alt := range alts {
			conds = append(conds, alt.If)
		}
		// A partition listed whose working the alternative decides otherwise (a
		// partition it lacks does not work there), or an end's entry for it.
		for i := range v.Shared {
			sp := &v.Shared[i]
			for _, x := range []struct {
				side *check.PartitionSide
				e    check.Endpoint
			}{{&sp.A, ea}, {&sp.B, eb}} {
				if o, ok := x.e.SideOf(sp.Key); !ok || o.PKey != x.side.PKey || o.Both != x.side.Both {
					x.side.NotKnown = true
				}
			}
			j := slices.IndexFunc(w.Shared, func(o check.SharedPartition) bool { return o.Key == sp.Key })
			if j >= 0 && w.Shared[j].WorksHere() == sp.WorksHere() || j < 0 && !sp.WorksHere() {
				continue
			}
			sp.WorksNotKnown = true
			does := map[bool]string{true: "works", false: "does not work"}
			v.Warnings = append(v.Warnings, fmt.Sprintf("whether partition %s works for them is not known: as the verdict takes the ends it %s; if %s, it %s",
				sp.Key.String(), does[sp.WorksHere()], strings.Join(conds, " and "), does[!sp.WorksHere()]))
		}
		for _, o := range w.Shared {
			if !slices.ContainsFunc(v.Shared, func(sp check.SharedPartition) bool { return sp.Key == o.Key }) && !v.SharedAssumed && !unreadAlt {
				v.SharedAssumed = true
				v.Warnings = append(v.Warnings, fmt.Sprintf("the shared partitions listed are those of the ends as the verdict takes them: if %s, they share partition %s too",
					strings.Join(conds, " and "), o.Key.String()))
			}
		}
		if w.Kind == v.Kind {
			return
		}
		g := &assumed
		for _, alt := range alts {
			if alt.Taking != "" {
				g = &unread
				if !slices.Contains(g.taking, alt.Taking) {
					g.taking = append(g.taking, alt.Taking)
				}
			} else {
				sm, router = sm || alt.SM, router || !alt.SM
			}
			if alt.Why != "" && !slices.Contains(g.whys, alt.Why) {
				g.whys = append(g.whys, alt.Why)
			}
		}
		g.ifs = append(g.ifs, fmt.Sprintf("if %s, the answer is %s", strings.Join(conds, " and "), w.Kind))
	}
	for _, alt := range a.Alternatives {
		try(alt.Endpoint, b.Endpoint, alt)
	}
	for _, alt := range b.Alternatives {
		try(a.Endpoint, alt.Endpoint, alt)
	}
	for _, x := range a.Alternatives {
		for _, y := range b.Alternatives {
			if !(x.SM && y.SM) { // one SM port at a time
				try(x.Endpoint, y.Endpoint, x, y)
			}
		}
	}
	qualifyReasons(&v, asTaken)
	for _, r := range []ResolvedEndpoint{a, b} {
		if r.entryTaken() {
			// Shared lists what the entries read hold: none holds this end's key.
			v.Shared = nil
		}
	}
	if len(unread.ifs) == 0 {
		// Entries not read may change the entry a pkey= end uses, but not the answer.
		for _, r := range []ResolvedEndpoint{a, b} {
			if r.EntryNotKnown != "" {
				same := fmt.Sprintf("the answer is %s whichever the kernel picks (ib_find_pkey)", v.Kind)
				if v.Kind == check.VerdictUnknown { // for another cause, which says so
					same = "whichever the kernel picks (ib_find_pkey), the answer stays unknown for what else was not read"
				}
				why := fmt.Sprintf("%s: the entry a QP there uses for partition %s is not known (%s); %s",
					r.Endpoint.Label, r.Spec.PKey.Partition().String(), r.EntryNotKnown, same)
				if i := slices.IndexFunc(r.Alternatives, func(a Alternative) bool { return a.Taking != "" }); i >= 0 && r.entryTaken() {
					// The reasons are the taken entry's (they share it, a switch port
					// drops it): said first, so that none reads as what was read.
					v.Reasons = append([]string{why + "; the reasons below take " + r.Alternatives[i].Taking}, v.Reasons...)
					continue
				}
				v.Reasons = append(v.Reasons, why)
			}
		}
	}
	assumed.taking = append(assumed.taking, takingEnds(sm, router)...)
	kind := v.Kind
	for _, g := range []struct {
		group
		cause check.NotCheckedCause
	}{{assumed, check.NotCheckedAssumption}, {unread, check.NotCheckedEntries}} {
		if len(g.ifs) == 0 {
			continue
		}
		why := ""
		if len(g.whys) > 0 {
			why = " (" + strings.Join(g.whys, "; ") + ")"
		}
		v.DependsOn(check.NotChecked{Cause: g.cause,
			Sentence: fmt.Sprintf("taking %s, the answer is %s; %s%s", strings.Join(g.taking, " and "), kind, strings.Join(g.ifs, "; "), why)})
	}
	return v
}

// qualifyReasons says, after each reason of v that an assumption not given would not
// give (asTaken: under the SM's, a router port's), that it describes the ends as the
// verdict takes them: a sentence true of one choice only is not a fact.
func qualifyReasons(v *check.Verdict, asTaken map[string][2]bool) {
	for _, list := range [][]string{v.Reasons, v.AToB.Reasons, v.BToA.Reasons} {
		for i, r := range list {
			q, ok := asTaken[r]
			if !ok {
				continue
			}
			list[i] = r + " (taking " + strings.Join(takingEnds(q[0], q[1]), " and ") + ")"
		}
	}
}

// takingEnds says how the verdict takes the ends when an assumption not given (the
// SM's port, a router port) would change it.
func takingEnds(sm, router bool) []string {
	var taking []string
	if sm {
		taking = append(taking, "neither end for the port OpenSM runs on")
	}
	if router {
		taking = append(taking, "both ends for CA ports")
	}
	return taking
}
