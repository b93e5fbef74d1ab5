package job

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ibkey/ibkey/internal/check"
)

// Summary says what to set: the one setting, or the setting per port.
func (w *Result) Summary() string {
	if w.Same != "" {
		// A port not checked has no setting: the one value is for the others.
		if slices.ContainsFunc(w.Ports, func(pw PortResult) bool { return pw.Used && pw.Outcome == NotChecked }) {
			return w.Same + " on every port checked"
		}
		return w.Same + " everywhere"
	}
	var parts []string
	for _, pw := range w.Ports {
		if pw.Setting != "" {
			parts = append(parts, fmt.Sprintf("%s: %s", pw.Port.Label(), pw.Setting))
		}
	}
	if len(parts) == 0 {
		return "no setting works"
	}
	return "no single value works; per port: " + strings.Join(parts, ", ")
}

// WantPartition gives, for each library, the settings that put the ports it would
// use (with the job's other settings: device filters, transports) in partition key.
func WantPartition(libs []*Library, in Inputs, key check.PKey, ports []*Port) []*Result {
	in.ports = ports
	hosts := groupHosts(ports, in.Unread)
	out := make([]*Result, 0, len(libs))
	for _, l := range libs {
		exporting := in
		exporting.exported = l.Vars[0]
		s := l.setup(exporting)
		if s.Inactive != "" {
			out = append(out, &Result{Library: l, Inactive: s.Inactive, Version: s.Version, Verdict: NotApplicable})
			continue
		}
		// What stops the library whatever its partition setting says (a component
		// list Open MPI refuses): no export puts it in the partition.
		if why := s.settledReject(in); why != "" {
			out = append(out, &Result{Library: l, Version: s.Version, Setting: "no setting works: " + why, Findings: []string{why}, Verdict: DoesNotWork})
			continue
		}
		var used, idle []*Port
		var none []string
		var silent []Unread // hostUse.silent: one line (silentHosts)
		aborted := &Result{Library: l}
		for _, h := range hosts {
			u := s.onHost(in, h, true)
			aborted.mayChoose(u.chosen)
			switch u.state {
			case hostUses:
				for _, pr := range u.sel {
					if pr.Used {
						used = append(used, pr.Port)
					}
				}
				continue
			case hostAborts, hostMayAbort:
				aborted.abort(u)
			case hostMayUseUnread:
				// What was not read may be the port it uses: not a finding.
				why := fmt.Sprintf("%s uses none of the ports that were read, but it may use what could not be read (%s)", l.Name, u.unread)
				if len(h.ports) == 0 {
					why = u.noneRead(l.Name)
				}
				if u.silent() {
					silent = append(silent, u.chosen[0])
				} else {
					aborted.Unchecked = append(aborted.Unchecked, HostName(h.name)+": "+why)
				}
				aborted.unsure = append(aborted.unsure, Abort{Host: h.name, Reason: why})
			case hostUsesNone:
				none = append(none, HostName(h.name))
			}
			for _, p := range h.ports {
				if !p.Active() && !p.Ethernet() && !noPKeys(p) && s.usesOnceUp(h.ports, p) {
					idle = append(idle, p)
				}
			}
		}
		if len(silent) > 0 {
			aborted.Unchecked = append(aborted.Unchecked, silentHosts(l.Name, silent))
		}
		w := wantOn(s, key, used)
		if len(used) == 0 && len(aborted.Aborts)+len(aborted.unsure) > 0 {
			w.Findings = nil // "no port is used": the aborts say why
			w.Setting = "no setting works: " + l.Name + " aborts at start-up"
			if len(aborted.Aborts) == 0 {
				w.Setting = "not checked: " + l.Name + " uses no port that was read"
			}
		}
		w.Idle, w.chosen, w.Version = idle, aborted.chosen, s.Version
		w.Aborts, w.unsure = aborted.Aborts, aborted.unsure
		w.Findings = append(w.Findings, aborted.Findings...)
		w.Unchecked = append(w.Unchecked, aborted.Unchecked...)
		for _, h := range none {
			w.Findings = append(w.Findings, fmt.Sprintf("%s: %s uses none of its ports with these settings", h, l.Name))
		}
		w.Unchecked = append(w.Unchecked, s.Unchecked...)
		if s.beatsExport != nil {
			if why := s.beatsExport(key.Partition()); why != "" {
				w.Findings = append(w.Findings, why)
			}
		}
		w.Verdict = verdict(w.Findings, w.Unchecked)
		if len(w.Ports) > 0 {
			w.Setting = w.Summary()
		}
		out = append(out, w)
	}
	return out
}

// wantOn computes the settings on the given ports.
func wantOn(s *setup, key check.PKey, ports []*Port) *Result {
	l := s.Library
	w := &Result{Library: l}
	same, first := "", true
	var ib []PortResult // the InfiniBand ports where the setting works
	common, maybe := -1, ""
	if l.Kind == ByIndex {
		common, maybe = commonIndex(key, ports)
	}
	for _, p := range ports {
		w.Ports = append(w.Ports, PortResult{Port: p, Used: true, Pick: s.want(key, p, common)})
	}
	s.settle(w.Ports)
	// A RoCE port the library skips with the value (Open MPI's openib: its one
	// entry, 0xffff, is no other partition's) is left out, as in Resolve; a host
	// where that leaves no port is a finding.
	skipped, uses := map[string][]string{}, map[string]bool{}
	for _, pw := range w.Ports {
		p := pw.Port
		if !pw.Used {
			continue
		}
		uses[p.Host] = uses[p.Host] || pw.Outcome != Skips || !p.Ethernet()
		switch {
		case pw.Outcome != Uses && (pw.Outcome == NotChecked || pw.Gap == GapUnread || hasUnreadable(p)):
			// The table, or an entry that may hold the key, was not read.
			w.Unchecked = append(w.Unchecked, p.Label()+": "+pw.Problem)
		case pw.Outcome == Skips && p.Ethernet():
			skipped[p.Host] = append(skipped[p.Host], p.Label())
			w.Notes = append(w.Notes, p.Label()+": "+pw.Problem+" (RoCE: no partition but 0x7fff is there)")
		case pw.Outcome != Uses:
			w.Findings = append(w.Findings, p.Label()+": "+pw.Problem)
		default:
			if !p.Ethernet() {
				ib = append(ib, pw)
			}
			for _, n := range pw.Pick.Notes {
				w.Notes = append(w.Notes, p.Label()+": "+n)
			}
		}
		switch {
		case pw.Setting == "":
			// nothing to set on this port (RoCE for a value setting), or nothing
			// works there (a finding)
		case first:
			same, first = pw.Setting, false
		case pw.Setting != same:
			same = ""
		}
	}
	for _, h := range slices.Sorted(maps.Keys(skipped)) {
		if !uses[h] {
			w.Findings = append(w.Findings, fmt.Sprintf("%s: %s skips every port it would use (%s): it uses none with this setting", HostName(h), l.Name, strings.Join(skipped[h], ", ")))
		}
	}
	w.Same = same
	if same == "" && !first {
		w.sameUnknown = maybe
	}
	limited, firsts := limitedApart(ib)
	if w.limited, w.limitedHosts = limited, len(firsts); w.limitedHosts > 1 {
		var ls []string
		for _, u := range w.limited {
			ls = append(ls, fmt.Sprintf("%s (index %d, %s)", u.Port.Label(), u.Pick.Index, u.Pick.PKey))
		}
		w.Findings = append(w.Findings, fmt.Sprintf("limited members of partition %s cannot talk to each other: %s; the Subnet Manager must make one side full", key.Partition().String(), strings.Join(ls, ", ")))
	}
	if len(w.Ports) == 0 {
		w.Findings = append(w.Findings, "no port is used")
	}
	w.Verdict = verdict(w.Findings, w.Unchecked)
	return w
}

// commonIndex is the lowest index that holds one of the best entries (bestEntries)
// of every port given whose best entry is known (a RoCE port's is index 0), so that an index
// setting can be one value for the whole job; -1 when there is none. Then maybe
// says where an entry not read may still be one (an index every port holds a best
// entry at or did not read): "" when none may.
func commonIndex(key check.PKey, ports []*Port) (common int, maybe string) {
	var sure, may map[int]bool // indexes every port so far holds (may: or did not read)
	var unreadOn []string
	for _, p := range ports {
		best, known := bestEntries(p, key)
		switch {
		case p.Ethernet():
			best, known = []int{0}, true // RoCE: index 0, the one entry (want)
		case p.Table == nil || !known || len(best) == 0:
			continue // not a setting at all (a finding, or not checked)
		}
		s, m := map[int]bool{}, map[int]bool{}
		for _, i := range best {
			s[i], m[i] = true, true
		}
		for _, e := range p.Table {
			if !e.Readable && !p.Ethernet() {
				m[e.Index] = true
			}
		}
		if hasUnreadable(p) && !p.Ethernet() {
			unreadOn = append(unreadOn, p.Label())
		}
		if sure == nil {
			sure, may = s, m
			continue
		}
		maps.DeleteFunc(sure, func(i int, _ bool) bool { return !s[i] })
		maps.DeleteFunc(may, func(i int, _ bool) bool { return !m[i] })
	}
	if len(sure) > 0 {
		return slices.Min(slices.Collect(maps.Keys(sure))), ""
	}
	if len(may) > 0 {
		return -1, fmt.Sprintf("index %d may hold partition %s on every port: entries of %s could not be read", slices.Min(slices.Collect(maps.Keys(may))), key.Partition().String(), strings.Join(unreadOn, ", "))
	}
	return -1, ""
}
