package query

import (
	"fmt"
	"strings"

	"github.com/ibkey/ibkey/internal/check"
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
	// If says the assumption: "0x0002c90300000201 is the port OpenSM runs on".
	If string
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
		opt := parts.Options
		opt.SMGUID = r.Spec.GUID
		alt := &Partitions{Path: parts.Path, Config: parts.Config, Options: opt, FileGUIDs: parts.FileGUIDs, Types: parts.Types}
		m := alt.ModelOf(r.Spec.GUID)
		if samePKeys(GUIDTable(m, r.Spec.GUID), GUIDTable(r.Model, r.Spec.GUID)) {
			continue
		}
		e, err := resolveGUID(r.Spec, labels[i], m)
		if err != nil {
			// As the SM's port it would not have the pinned key: that is a different
			// answer too, one the verdict below cannot express; say so.
			e = check.Endpoint{Label: labels[i]}
		}
		e.QKeyRule, e.QKeyRuleReason = r.Endpoint.QKeyRule, r.Endpoint.QKeyRuleReason
		r.Alternatives = append(r.Alternatives, Alternative{Endpoint: e,
			If: fmt.Sprintf("%s is the port OpenSM runs on (SELF in %s%s; give --sm-guid)", r.Spec.GUID, parts.Config.File, implicitSelf(parts))})
	}
}

// implicitSelf notes a SELF that the file does not write: its missing Default line.
func implicitSelf(parts *Partitions) string {
	if p := parts.Config.Partition(check.DefaultPartition); p != nil && len(p.Defs) == 1 && p.Defs[0].Implicit {
		return ", implied by its missing Default line"
	}
	return ""
}

func samePKeys(a, b []check.TableEntry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].PKey != b[i].PKey {
			return false
		}
	}
	return true
}

// CanTalk is check.CanTalk for resolved endpoints: when an endpoint has alternatives
// (an assumption that was not checked) and the verdict with one of them differs, the
// verdict is unknown and says on what.
func CanTalk(a, b ResolvedEndpoint) check.Verdict {
	v := check.CanTalk(a.Endpoint, b.Endpoint)
	var ifs []string
	for _, alt := range a.Alternatives {
		if w := check.CanTalk(alt.Endpoint, b.Endpoint); w.Kind != v.Kind {
			ifs = append(ifs, fmt.Sprintf("if %s, the answer is %s", alt.If, w.Kind))
		}
	}
	for _, alt := range b.Alternatives {
		if w := check.CanTalk(a.Endpoint, alt.Endpoint); w.Kind != v.Kind {
			ifs = append(ifs, fmt.Sprintf("if %s, the answer is %s", alt.If, w.Kind))
		}
	}
	if len(ifs) > 0 {
		v.DependsOn(check.NotChecked{Cause: check.NotCheckedAssumption,
			Sentence: fmt.Sprintf("taking neither end for the port OpenSM runs on, the answer is %s; %s", v.Kind, strings.Join(ifs, "; "))})
	}
	return v
}
