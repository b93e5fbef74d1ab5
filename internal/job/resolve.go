package job

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ibkey/ibkey/internal/check"
)

// Verdict is a library's answer for the job.
type Verdict uint8

const (
	// Works: every host's port resolves to a usable entry and, across hosts, every
	// pair of them can talk (same partition, at least one full member).
	Works Verdict = iota
	// DoesNotWork: a definite problem (the library fails, an empty entry, hosts in
	// different partitions, limited members only).
	DoesNotWork
	// Incomplete: the answer depends on something not read or not interpreted.
	Incomplete
	// NotApplicable: the settings hand the library's traffic to another one.
	NotApplicable
)

func (v Verdict) String() string {
	return [...]string{"works", "does-not-work", "not-checked", "not-applicable"}[v]
}

// MarshalText encodes the verdict as its String.
func (v Verdict) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// verdict is the answer from what was found: a definite problem decides, then what
// was not checked.
func verdict(findings, unchecked []string) Verdict {
	switch {
	case len(findings) > 0:
		return DoesNotWork
	case len(unchecked) > 0:
		return Incomplete
	}
	return Works
}

// PortResult is whether a library uses a port, why, and what it does there (the Pick
// of a used port, with the setting it needs in WantPartition, which lists only used
// ports).
type PortResult struct {
	Port *Port
	Used bool
	Why  string
	Pick
}

// Result is one library resolved against the job's ports: with the job's settings
// (Resolve) or for a wanted partition (WantPartition).
type Result struct {
	Library *Library
	// Setting says how the library chooses its partition (Resolve), or what to set
	// for the wanted one (WantPartition: Summary).
	Setting  string
	Inactive string
	// Version is the library's version given (--lib-version), "" when none was.
	Version   string
	Ports     []PortResult
	Verdict   Verdict
	Findings  []string // definite problems
	Unchecked []string // what the answer depends on and was not read or interpreted
	Fixes     []string // settings that make it work (Resolve)
	Notes     []string
	// Assumptions are what the answer takes for granted (Resolve).
	Assumptions []string
	// Peers is false when only one host was given: the answer is then about this
	// host's entries, not about reaching the job's other ranks.
	Peers bool
	// Same is the one setting that works on every port, "" when they differ
	// (WantPartition).
	Same string
	// sameUnknown says, when Same is "" for an index setting, why one index for
	// every port may still exist: an entry not read may hold the partition where
	// the other ports do (commonIndex).
	sameUnknown string
	// Idle are the InfiniBand ports, not ACTIVE, of hosts where the library uses no
	// port, that it would use once up: a gate waits for them (WantPartition).
	Idle []*Port
	// Aborts are the hosts where the library stops the process at start-up (a
	// setting the host cannot satisfy): each is also a finding, and the host's ports
	// are listed as not used.
	Aborts []Abort
	// unsure are aborts that may not happen (a device or port of the host that could
	// not be read may be what the library asks for): a gate waits on them.
	unsure []Abort
	// chosen are the devices and ports of the job's hosts, not read, that the
	// library could choose (onHost): whether one matters is decided there, once, and
	// read by the host states, Choosers (the command) and UnreadPending (a gate). A
	// set: the command asks it of every device not read, and there may be 20,000.
	chosen map[Unread]bool
	// limited are the ports using a limited entry when they are on limitedHosts > 1
	// hosts (limitedApart; WantPartition).
	limited      []PortResult
	limitedHosts int
}

// mayChoose adds us to r.chosen.
func (r *Result) mayChoose(us []Unread) {
	for _, u := range us {
		if r.chosen == nil {
			r.chosen = map[Unread]bool{}
		}
		r.chosen[u] = true
	}
}

// Resolve resolves each library's settings against the ports (all hosts' ports, in
// host order; ports of a host adjacent or not).
func Resolve(libs []*Library, in Inputs, ports []*Port) []*Result {
	in.ports = ports
	hosts := groupHosts(ports, in.Unread)
	out := make([]*Result, 0, len(libs))
	for _, l := range libs {
		out = append(out, resolveOne(l, in, hosts))
	}
	return out
}

// hostPorts are the ports of one host.
type hostPorts struct {
	name  string
	ports []*Port
}

// Hosts counts the job's hosts, those of the ports read and those of which nothing
// was read, as Resolve and WantPartition group them.
func Hosts(ports []*Port, unread []Unread) int { return len(groupHosts(ports, unread)) }

// groupHosts groups the ports by host, in order, then adds the hosts of unread that
// have no port read (their libraries may use what was not read).
func groupHosts(ports []*Port, unread []Unread) []hostPorts {
	var hosts []hostPorts
	at := map[string]int{}
	add := func(host string) int {
		i, ok := at[host]
		if !ok {
			i = len(hosts)
			at[host] = i
			hosts = append(hosts, hostPorts{name: host})
		}
		return i
	}
	for _, p := range ports {
		i := add(p.Host)
		hosts[i].ports = append(hosts[i].ports, p)
	}
	for _, u := range unread {
		add(u.Host)
	}
	return hosts
}

// HostName names a port's host: "this host" for the local one ("").
func HostName(h string) string { return cmp.Or(h, "this host") }

// hostState is what a library does on one host before any P_Key lookup.
type hostState uint8

const (
	// hostUses: it uses some of the host's ports.
	hostUses hostState = iota
	// hostAborts: it stops the process at start-up (hostUse.aborts).
	hostAborts
	// hostMayAbort: it would abort, unless what it asks for is what could not be read
	// (hostUse.unread): not checked.
	hostMayAbort
	// hostUsesNone: it uses none of the host's ports: a finding.
	hostUsesNone
	// hostMayUseUnread: it uses none of the ports that were read, but it may use what
	// could not be read (hostUse.unread): not checked.
	hostMayUseUnread
)

// noneRead says that library l may use what of a host of which no port was read
// could not be read (hostMayUseUnread). The reason it was not read is in the
// warning and the JSON's incomplete: here it is only named.
func (u hostUse) noneRead(l string) string {
	if u.silent() {
		return "not read: " + l + " may use its ports"
	}
	return fmt.Sprintf("no port was read: %s may use what could not be read (%s)", l, u.unread)
}

// silent: nothing of the host was read, and the host is what was not read (a --lid
// that did not answer, a node not in a sweep): silentHosts names such hosts together.
func (u hostUse) silent() bool {
	return u.state == hostMayUseUnread && len(u.ports) == 0 && u.unread == HostName(u.name)
}

// silentHosts is the one line saying that library l may use the ports of the hosts
// of which nothing was read (hostUse.silent), us their first unread parts: a --lid
// range that did not answer is one line ("lid 10-40: not read: NCCL may use their
// ports"), not one a LID.
func silentHosts(l string, us []Unread) string {
	if len(us) == 1 {
		return Names(us) + ": not read: " + l + " may use its ports"
	}
	return Names(us) + ": not read: " + l + " may use their ports"
}

// hostUse is one library on one host before any P_Key lookup: the one evaluation of
// a host that Resolve and WantPartition both read, so that what makes a host abort
// or use none of its ports, and when what was not read leaves that open, is decided
// once.
type hostUse struct {
	hostPorts
	state hostState
	// sel is selectPorts' answer; on a host where the library aborts (or may), every
	// port is not used, saying so.
	sel []PortResult
	// aborts are the host-wide aborts (Host set), for hostAborts and hostMayAbort.
	aborts []Abort
	// chosen are the host's devices and ports not read that the library could
	// choose (unreadChosen); unread names the first, for hostMayAbort and
	// hostMayUseUnread.
	chosen []Unread
	unread string
}

// onHost evaluates the library on host h. judgeAborts false leaves the host-wide
// aborts out (Resolve, when the library rejects its settings on every port); so
// does a host read over the fabric whose device names are not known (the abort
// checks are about device names and port numbers), and a host of which no port was
// read while the library could choose what was not. An abort, or no port used, is
// not checked when the library could choose a device or port of the host that
// could not be read (unreadChosen): what it asks for, or uses, may be that one.
func (s *setup) onHost(in Inputs, h hostPorts, judgeAborts bool) hostUse {
	u := hostUse{hostPorts: h, sel: s.selectPorts(h.ports), chosen: s.unreadChosen(in, h)}
	if len(u.chosen) > 0 {
		u.unread = u.chosen[0].Name
	}
	var ab []Abort
	// A host of which no port was read, with something the library could choose not
	// read, is not judged for aborts: each would rest only on what was not read.
	noneRead := len(h.ports) == 0 && u.unread != ""
	if judgeAborts && !noneRead && s.aborts != nil && !slices.ContainsFunc(h.ports, func(p *Port) bool { return p.Fabric && !p.DeviceKnown }) {
		ab = s.aborts(h.ports, u.sel)
	}
	switch {
	case len(ab) > 0:
		u.state = hostAborts
		why := s.Library.Name + " aborts on this host before it uses a port"
		if u.unread != "" {
			u.state, why = hostMayAbort, s.Library.Name+" may abort on this host (not checked)"
		}
		for _, a := range ab {
			a.Host = h.name
			u.aborts = append(u.aborts, a)
		}
		for i := range u.sel {
			u.sel[i].Used, u.sel[i].Why = false, why
		}
	case !slices.ContainsFunc(u.sel, func(pr PortResult) bool { return pr.Used }):
		u.state = hostUsesNone
		if u.unread != "" {
			u.state = hostMayUseUnread
		}
	}
	return u
}

func resolveOne(l *Library, in Inputs, hosts []hostPorts) *Result {
	s := l.setup(in)
	r := &s.Result
	r.Peers = len(hosts) > 1
	if s.Inactive != "" {
		r.Verdict = NotApplicable
		return r
	}
	if s.Reject != "" {
		r.Findings = append(r.Findings, s.Reject)
	}
	var usable []PortResult // used, a valid entry, InfiniBand
	var silent []Unread     // hostUse.silent: one line (silentHosts)
	for _, h := range hosts {
		u := s.onHost(in, h, s.Reject == "")
		r.mayChoose(u.chosen)
		if u.state == hostAborts || u.state == hostMayAbort {
			r.abort(u)
			r.Ports = append(r.Ports, u.sel...)
			continue
		}
		var why []string
		for i := range u.sel {
			pr := &u.sel[i]
			switch {
			case !pr.Used:
				why = append(why, pr.Port.Label()+": "+pr.Why)
			case s.Reject != "":
				pr.Pick = Pick{Outcome: Fails, Index: -1, Problem: s.Reject}
			default:
				pr.Pick = s.pick(pr.Port)
			}
		}
		s.settle(u.sel)
		r.Ports = append(r.Ports, u.sel...)
		if len(h.ports) == 0 {
			why = append(why, "none was read, and its settings leave out what was not")
		}
		none := fmt.Sprintf("%s: %s uses none of its ports (%s)", HostName(h.name), l.Name, strings.Join(why, "; "))
		switch {
		case u.silent():
			silent = append(silent, u.chosen[0])
		case u.state == hostMayUseUnread && len(h.ports) == 0:
			r.Unchecked = append(r.Unchecked, HostName(h.name)+": "+u.noneRead(l.Name))
		case u.state == hostMayUseUnread:
			r.Unchecked = append(r.Unchecked, none+", but it may use what could not be read ("+u.unread+")")
		case u.state == hostUsesNone:
			r.Findings = append(r.Findings, none)
		}
	}
	if len(silent) > 0 {
		r.Unchecked = append(r.Unchecked, silentHosts(l.Name, silent))
	}
	skipsOnly := map[string]int{}
	usedOn := map[string]int{}
	for _, pr := range r.Ports {
		if !pr.Used {
			continue
		}
		usedOn[pr.Port.Host]++
		pk := pr.Pick
		for _, n := range pk.Notes {
			r.Notes = append(r.Notes, pr.Port.Label()+": "+n)
		}
		switch pk.Outcome {
		case Uses:
			if !pr.Port.Ethernet() { // RoCE ports share no partition with InfiniBand ones
				usable = append(usable, pr)
			}
			if !r.Peers && !pk.PKey.IsFull() {
				r.Notes = append(r.Notes, fmt.Sprintf("%s: index %d holds %s, a limited member of partition %s: it reaches only full members (%s) of it", pr.Port.Label(), pk.Index, pk.PKey, pk.PKey.Partition().String(), pk.PKey.WithMembership(check.Full)))
			}
		case EmptyEntry, Fails:
			if s.Reject == "" {
				r.Findings = append(r.Findings, pr.Port.Label()+": "+pk.Problem)
				if pk.Abort {
					r.Aborts = append(r.Aborts, Abort{Host: pr.Port.Host, Device: pr.Port.Device, Port: pr.Port.Num, Reason: pk.Problem})
				}
			}
		case Skips:
			skipsOnly[pr.Port.Host]++
			r.Notes = append(r.Notes, pr.Port.Label()+": "+pk.Problem)
		case NotChecked:
			r.Unchecked = append(r.Unchecked, pr.Port.Label()+": "+pk.Problem)
		}
	}
	for _, h := range hosts { // in host order, not the map's
		if n := skipsOnly[h.name]; n > 0 && n == usedOn[h.name] {
			r.Findings = append(r.Findings, fmt.Sprintf("%s: %s leaves every port out (the partition is in none of their tables)", HostName(h.name), l.Name))
		}
	}
	// Across hosts: every pair of ranks on different hosts must share the partition
	// with at least one full member (the P_Key rule of check.CanTalk).
	if r.Peers && len(usable) > 1 {
		byKey := map[check.PartitionKey][]PortResult{}
		var keys []check.PartitionKey
		for _, u := range usable {
			k := u.Pick.PKey.Partition()
			if _, ok := byKey[k]; !ok {
				keys = append(keys, k)
			}
			byKey[k] = append(byKey[k], u)
		}
		if len(keys) > 1 {
			var parts []string
			for _, k := range keys {
				var ps []string
				for _, u := range byKey[k] {
					idx := "index " + strconv.Itoa(u.Pick.Index)
					if u.Pick.Index < 0 {
						idx = "index not known" // UCX: a full match not read before the one read
					}
					ps = append(ps, u.Port.Label()+" "+idx)
				}
				parts = append(parts, fmt.Sprintf("partition %s on %s", k, strings.Join(ps, ", ")))
			}
			r.Findings = append(r.Findings, "the hosts land in different partitions, which cannot talk to each other: "+strings.Join(parts, "; "))
		} else {
			_, first := limitedApart(usable)
			var names []string
			for _, u := range first {
				names = append(names, fmt.Sprintf("%s (index %d, %s)", u.Port.Label(), u.Pick.Index, u.Pick.PKey))
			}
			if n := len(first); n > 1 {
				r.Findings = append(r.Findings, fmt.Sprintf("limited members of partition %s cannot talk to each other: %s", keys[0], strings.Join(names, ", ")))
			} else if n == 1 {
				r.Notes = append(r.Notes, fmt.Sprintf("%s is a limited member: it talks only to the full members, which every other host here is", names[0]))
			}
		}
	}
	// A refusal no partition setting lifts has no partition fix.
	if r.Verdict = verdict(r.Findings, r.Unchecked); r.Verdict == DoesNotWork && s.settledReject(in) == "" {
		r.Fixes = fixes(s, r)
	}
	return r
}

// abort records a host where the library aborts (hostAborts: each abort a finding)
// or may (hostMayAbort: not checked, kept in unsure for a gate).
func (r *Result) abort(u hostUse) {
	for _, a := range u.aborts {
		if u.state == hostMayAbort {
			r.Unchecked = append(r.Unchecked, fmt.Sprintf("%s: %s, unless what it asks for is what could not be read (%s)", HostName(u.name), a.Reason, u.unread))
			r.unsure = append(r.unsure, a)
			continue
		}
		r.Aborts = append(r.Aborts, a)
		r.Findings = append(r.Findings, HostName(u.name)+": "+a.Reason)
	}
}

// settle finishes the picks on used ports prs of any hosts (Resolve: one host's;
// WantPartition: all): what the processes that open them do together.
func (s *setup) settle(prs []PortResult) {
	s.someDevices(prs)
	stopsAt(s.Library, prs)
}

// someDevices: when a process opens only some of the devices the library selects
// on a host (opens), and which is not known, a device whose lookup fails is not
// checked while enough devices work for the process to open none of it; when
// fewer work, every choice opens a failing one, and the failures stand.
func (s *setup) someDevices(prs []PortResult) {
	if s.opens == 0 {
		return
	}
	type dev struct{ host, name string }
	bad := map[dev]bool{} // the devices used, and whether a lookup fails on one
	for _, pr := range prs {
		if pr.Used && !(pr.Port.Fabric && !pr.Port.DeviceKnown) {
			d := dev{pr.Port.Host, pr.Port.Device}
			bad[d] = bad[d] || pr.Outcome == Fails || pr.Outcome == EmptyEntry
		}
	}
	all, good := map[string]int{}, map[string]int{} // devices per host
	for d, b := range bad {
		all[d.host]++
		if !b {
			good[d.host]++
		}
	}
	for i, pr := range prs {
		d := dev{pr.Port.Host, pr.Port.Device}
		if pr.Used && bad[d] && all[d.host] > s.opens && good[d.host] >= s.opens {
			prs[i].Pick = Pick{Outcome: NotChecked, Index: -1, Gap: GapUnread, Notes: pr.Notes,
				Problem: fmt.Sprintf("%s, if %s opens it: %s of this host's %d HCAs it selects, %s", pr.Problem, s.Library.Name, strconv.Itoa(s.opens), all[d.host], s.opensWhy)}
		}
	}
}

// stopsAt: when a lookup on a port stops the process that uses every port the
// library selects on its host (Pick.AbortHost), that process uses none of the
// host's others: they are listed as not used, saying so, as on a host-wide abort.
// A host read over the fabric whose device names are not known is not judged, as
// in onHost: which of its ports the process opens is not known.
func stopsAt(l *Library, prs []PortResult) {
	at := map[string]string{}
	unknown := map[string]bool{}
	for _, pr := range prs {
		unknown[pr.Port.Host] = unknown[pr.Port.Host] || pr.Port.Fabric && !pr.Port.DeviceKnown
		if _, ok := at[pr.Port.Host]; !ok && pr.Used && pr.AbortHost {
			at[pr.Port.Host] = pr.Port.Label()
		}
	}
	for j, pr := range prs {
		if by, ok := at[pr.Port.Host]; ok && !unknown[pr.Port.Host] && pr.Used && !pr.AbortHost {
			prs[j] = PortResult{Port: pr.Port, Why: fmt.Sprintf("%s aborts on this host at %s's P_Key lookup before it uses this port", l.Name, by)}
		}
	}
}

// limitedApart returns, of ports that use entries of one partition (InfiniBand ports
// whose pick is Uses), those whose entry is limited, and the first of them on each
// host (len(first): on how many hosts they are).
// Limited members cannot talk to each other (IBA 10.9.3, check.CanTalk): limited ports
// on two or more hosts leave pairs of ranks on different hosts that cannot talk; the
// limited ports of one host reach the full members on every other. Resolve, WantPartition
// and Gate all judge limited members by this one rule.
func limitedApart(used []PortResult) (limited, first []PortResult) {
	seen := map[string]bool{}
	for _, u := range used {
		if u.Pick.PKey.IsFull() {
			continue
		}
		limited = append(limited, u)
		if !seen[u.Port.Host] {
			seen[u.Port.Host] = true
			first = append(first, u)
		}
	}
	return limited, first
}

// maxFixes bounds the partitions a fix lists.
const maxFixes = 3

// fixes proposes settings that make the library work: for each partition every used
// port holds, the setting per port (one line when it is the same everywhere).
func fixes(s *setup, r *Result) []string {
	var used, ib []*Port
	current := map[check.PartitionKey]int{}
	for _, pr := range r.Ports {
		if pr.Used {
			used = append(used, pr.Port)
			if !pr.Port.Ethernet() {
				ib = append(ib, pr.Port)
			}
			if pr.Pick.Outcome == Uses {
				current[pr.Pick.PKey.Partition()]++
			}
		}
	}
	if len(used) == 0 {
		return nil
	}
	// The partitions most ports use now first.
	keys := candidateKeys(ib)
	slices.SortStableFunc(keys, func(a, b check.PartitionKey) int { return current[b] - current[a] })
	var out, maybe []string
	unsure := slices.ContainsFunc(ib, hasUnreadable) // a key may be in what was not read
	for _, k := range keys {
		w := wantOn(s, check.PKey(k), used)
		if w.Verdict == Incomplete && len(maybe) < maxFixes {
			maybe = append(maybe, fmt.Sprintf("for partition %s, maybe: %s", k, w.Unchecked[0]))
		}
		if w.Verdict != Works {
			continue
		}
		out = append(out, fmt.Sprintf("for partition %s: %s", k, w.Summary()))
		if len(out) == maxFixes {
			break
		}
	}
	switch {
	case len(out) > 0:
	case len(maybe) > 0:
		// Settings that may work, and what was not read that decides it.
		out = maybe
	case !r.Peers:
	case unsure:
		// What was not read may hold the partition, or its full member, that works.
		out = append(out, "no setting is known to make this work: entries of the P_Key tables could not be read, and a partition held by every host with a full member may be among them")
	default:
		out = append(out, "no partition is held by every host with a full member among them: no setting can make this work; the Subnet Manager's partitions.conf must change")
	}
	return out
}

// candidateKeys are the keys every port holds (readable, valid), the default
// partition last, others in key order.
func candidateKeys(ports []*Port) []check.PartitionKey {
	count := map[check.PartitionKey]int{}
	for _, p := range ports {
		seen := map[check.PartitionKey]bool{}
		for _, e := range p.Table {
			if e.Readable && e.PKey.Valid() && !seen[e.PKey.Partition()] {
				seen[e.PKey.Partition()] = true
				count[e.PKey.Partition()]++
			}
		}
	}
	var keys []check.PartitionKey
	for k, n := range count {
		if n == len(ports) {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if (keys[i] == check.DefaultPartition) != (keys[j] == check.DefaultPartition) {
			return keys[j] == check.DefaultPartition
		}
		return keys[i] < keys[j]
	})
	return keys
}
