package job

import (
	"fmt"
	"strings"

	"github.com/ibkey/ibkey/internal/check"
)

// PortWant is the setting one port needs.
type PortWant struct {
	Port *Port
	Want Want
}

// WantResult is what one library needs so every port it uses is in one partition.
type WantResult struct {
	Library *Library
	Key     check.PKey
	// Inactive is set when the job's settings route the library elsewhere.
	Inactive string
	Ports    []PortWant
	Verdict  Verdict
	// Same is the one setting that works on every port, "" when they differ.
	Same      string
	Findings  []string
	Unchecked []string
	Notes     []string
	// Idle are the InfiniBand ports, not ACTIVE, of hosts where the library uses no
	// port: a gate waits for them to come up.
	Idle []*Port
	// limited are the ports using a limited entry when they are on limitedHosts > 1
	// hosts (limitedApart).
	limited      []PortResult
	limitedHosts int
}

// Summary says what to set: the one setting, or the setting per port.
func (w *WantResult) Summary() string {
	if w.Same != "" {
		return w.Same + " everywhere"
	}
	var parts []string
	for _, pw := range w.Ports {
		if pw.Want.Setting != "" {
			parts = append(parts, fmt.Sprintf("%s: %s", pw.Port.Label(), pw.Want.Setting))
		}
	}
	if len(parts) == 0 {
		return "no setting works"
	}
	return "no single value works; per port: " + strings.Join(parts, ", ")
}

// WantPartition gives, for each library, the settings that put the ports it would
// use (with the job's other settings: device filters, transports) in partition key.
func WantPartition(libs []*Library, in Inputs, key check.PKey, ports []*Port) []*WantResult {
	hosts := groupHosts(ports)
	out := make([]*WantResult, 0, len(libs))
	for _, l := range libs {
		s := l.setup(in)
		if s.Inactive != "" {
			out = append(out, &WantResult{Library: l, Key: key, Inactive: s.Inactive, Verdict: NotApplicable})
			continue
		}
		var used, idle []*Port
		var none []string
		for _, h := range hosts {
			n := 0
			for _, pr := range s.selectPorts(h.ports) {
				if pr.Used {
					used = append(used, pr.Port)
					n++
				}
			}
			if n == 0 {
				none = append(none, HostName(h.name))
				for _, p := range h.ports {
					if !p.Active() && !p.Ethernet() && !noPKeys(p) {
						idle = append(idle, p)
					}
				}
			}
		}
		w := wantOn(l, key, used)
		w.Idle = idle
		for _, h := range none {
			w.Findings = append(w.Findings, fmt.Sprintf("%s: %s uses none of its ports with these settings", h, l.Name))
		}
		w.Unchecked = append(w.Unchecked, s.Unchecked...)
		w.Verdict = verdict(w.Findings, w.Unchecked)
		out = append(out, w)
	}
	return out
}

// wantOn computes the settings on the given ports.
func wantOn(l *Library, key check.PKey, ports []*Port) *WantResult {
	w := &WantResult{Library: l, Key: key}
	same, first := "", true
	var ib []PortResult // the InfiniBand ports where the setting works
	for _, p := range ports {
		pw := PortWant{Port: p, Want: l.want(key, p)}
		w.Ports = append(w.Ports, pw)
		switch {
		case pw.Want.Problem != "" && (pw.Want.Gap == GapUnread || pw.Want.Pick.Outcome == NotChecked || hasUnreadable(p)):
			// The table, or an entry that may hold the key, was not read.
			w.Unchecked = append(w.Unchecked, p.Label()+": "+pw.Want.Problem)
		case pw.Want.Problem != "":
			w.Findings = append(w.Findings, p.Label()+": "+pw.Want.Problem)
		case pw.Want.Pick.Outcome == NotChecked:
			w.Unchecked = append(w.Unchecked, p.Label()+": "+pw.Want.Pick.Problem)
		case pw.Want.Pick.Outcome != Uses:
			w.Findings = append(w.Findings, p.Label()+": "+pw.Want.Pick.Problem)
		default:
			if !p.Ethernet() {
				ib = append(ib, PortResult{Port: p, Used: true, Pick: pw.Want.Pick})
			}
			for _, n := range pw.Want.Pick.Notes {
				w.Notes = append(w.Notes, p.Label()+": "+n)
			}
		}
		switch {
		case pw.Want.Setting == "":
			// nothing to set on this port (RoCE for a value setting), or nothing
			// works there (a finding)
		case first:
			same, first = pw.Want.Setting, false
		case pw.Want.Setting != same:
			same = ""
		}
	}
	w.Same = same
	if w.limited, w.limitedHosts = limitedApart(ib); w.limitedHosts > 1 {
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
