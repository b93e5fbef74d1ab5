package job

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/textsafe"
)

// PendingKind is why a port is not (yet) ready for the wanted partition: the things
// the Subnet Manager can still change, which a launch gate waits for.
type PendingKind uint8

const (
	// PendingMissing: the port's table holds no entry of the key.
	PendingMissing PendingKind = iota
	// PendingLimited: the library uses a limited entry of the key on this port, and
	// so do ports of other hosts: limited members cannot talk to each other (IBA
	// 10.9.3), so one side of every pair must become full.
	PendingLimited
	// PendingIndex: the key sits at another index here than on the job's other
	// hosts, and the settings must be one index for every host (--emit env: one
	// environment for the job).
	PendingIndex
	// PendingUnread: the table, or an entry that may hold the key, was not read.
	PendingUnread
	// PendingNotActive: the port is not ACTIVE: its table's contents are defined only
	// once the SM has made it ARMED or ACTIVE (IBA 14.2.5.7, ibv_query_pkey(3)), and
	// no library uses a port that is not ACTIVE.
	PendingNotActive
	// PendingAbort: the library stops the process at start-up on this host (Result.
	// Aborts): a setting the host cannot satisfy. Only a port coming up can change
	// that (Abort.Waits; Hopeless lists the others).
	PendingAbort
)

// Pending is one port a gate still waits for.
type Pending struct {
	Host string // "" for the local host
	Port string // the port's label
	Kind PendingKind
	// Why says it in words: "no entry for partition 0x0042", "limited member (0x0042)".
	Why string
	// Final: waiting cannot change it (an abort no port coming up removes).
	Final bool
}

func (p Pending) String() string { return p.Port + ": " + p.Why }

// Definite reports whether the pending state is a definite "no" (the table was read
// and lacks what is needed), not a read that failed.
func (p Pending) Definite() bool { return p.Kind != PendingUnread }

// Gate lists the ports that keep the job out of partition key, from the libraries'
// WantPartition results: a port whose table lacks the key or was not read, a port the
// job uses that is not ACTIVE, limited members on more than one host (limited with
// limited does not talk), and, when oneIndex is set and the job has several hosts, a
// port whose index for an index-set library (NCCL_IB_PKEY, NVSHMEM_IB_PKEY_INDEX)
// differs from the index most of the job's ports have. Each port is listed once, with
// its first reason in that order. An empty list means the partition is ready.
func Gate(ws []*Result, key check.PKey, oneIndex bool) []Pending {
	var out []Pending
	seen := map[string]bool{}
	add := func(p *Port, kind PendingKind, why string) {
		if seen[p.Label()] {
			return
		}
		seen[p.Label()] = true
		out = append(out, Pending{Host: p.Host, Port: p.Label(), Kind: kind, Why: why})
	}
	part := key.Partition().String()
	hosts := map[string]bool{}
	for _, w := range ws {
		for _, pw := range w.Ports {
			hosts[pw.Port.Host] = true
		}
	}
	for _, w := range ws {
		if w.Verdict == NotApplicable {
			continue
		}
		for _, p := range w.Idle {
			add(p, PendingNotActive, fmt.Sprintf("port is %s, not ACTIVE, and %s uses no other port of this host", stateWord(p.State), w.Library.Name))
		}
		for _, pw := range w.Ports {
			p := pw.Port
			switch {
			case p.Ethernet():
			case !p.Active():
				add(p, PendingNotActive, fmt.Sprintf("port is %s, not ACTIVE: its P_Key table is defined only once the Subnet Manager brings it up", stateWord(p.State)))
			case pw.Gap == GapMissing:
				add(p, PendingMissing, "no entry for partition "+part)
			case pw.Gap == GapUnread:
				add(p, PendingUnread, "not read: "+pw.Problem)
			}
		}
	}
	for _, w := range ws {
		for _, a := range w.Aborts {
			out = append(out, Pending{Host: a.Host, Port: HostName(a.Host), Kind: PendingAbort, Why: a.Reason, Final: !a.Waits})
		}
		for _, a := range w.unsure {
			out = append(out, Pending{Host: a.Host, Port: HostName(a.Host), Kind: PendingUnread, Why: "not checked: " + a.Reason})
		}
	}
	for _, w := range ws {
		if w.limitedHosts > 1 {
			for _, u := range w.limited {
				add(u.Port, PendingLimited, fmt.Sprintf("holds partition %s only as a limited member (index %d, %s), as do %d other hosts of the job: limited members cannot talk to each other", part, u.Pick.Index, u.Pick.PKey, w.limitedHosts-1))
			}
		}
	}
	if oneIndex && len(hosts) > 1 {
		for _, w := range ws {
			if w.Verdict == NotApplicable || w.Library.Kind != ByIndex || w.Library.ID == Perftest.ID {
				continue
			}
			idx := map[int][]*Port{}
			for _, pw := range w.Ports {
				if pw.Port.Ethernet() || pw.Setting == "" || pw.Pick.Outcome != Uses {
					continue
				}
				idx[pw.Pick.Index] = append(idx[pw.Pick.Index], pw.Port)
			}
			if len(idx) < 2 {
				continue
			}
			// The index most ports have (the lowest on a tie) is the one the others
			// are measured against.
			indexes := slices.Sorted(maps.Keys(idx))
			common := slices.MaxFunc(indexes, func(a, b int) int { return cmp.Compare(len(idx[a]), len(idx[b])) })
			for _, i := range indexes {
				if i == common {
					continue
				}
				for _, p := range idx[i] {
					why := fmt.Sprintf("holds partition %s at index %d, the job's other hosts at index %d (%s): %s takes one index for every host", part, i, common, labels(idx[common]), w.Library.Name)
					if w.sameUnknown != "" {
						// An entry not read may give every host one index: not a "no".
						add(p, PendingUnread, why+"; not read: "+w.sameUnknown)
						continue
					}
					add(p, PendingIndex, why)
				}
			}
		}
	}
	return out
}

// UnreadPending lists the devices and ports of the job's hosts that could not be
// read (unread, the Inputs.Unread of ws) and that a library checked could choose
// with the job's settings (Choosers(ws)): the answer depends on them as on a table
// not read, so a gate waits for them (PendingUnread) rather than call the
// partition ready. A host of which no port was read is Gate's (its libraries'
// unsure results say so).
func UnreadPending(ws []*Result, unread []Unread, ports []*Port) []Pending {
	read := map[string]bool{}
	for _, p := range ports {
		read[p.Host] = true
	}
	var out []Pending
	for _, u := range unread {
		if !read[u.Host] {
			continue
		}
		if by := Choosers(ws, u); len(by) > 0 {
			label := u.Device
			switch {
			case label == "":
				label = HostName(u.Host)
			case u.Port >= 0:
				label += "/" + strconv.Itoa(u.Port)
			}
			out = append(out, Pending{Host: u.Host, Port: label, Kind: PendingUnread, Why: fmt.Sprintf("not read: %s (%s could use it)", u.What(), strings.Join(by, ", "))})
		}
	}
	return out
}

// Hopeless lists the aborts among pending that waiting cannot change (Final): no
// port coming up gives the library the device or port it asked for.
func Hopeless(pending []Pending) []Pending {
	var out []Pending
	for _, p := range pending {
		if p.Final {
			out = append(out, p)
		}
	}
	return out
}

func stateWord(s string) string { return cmp.Or(s, "in an unknown state") }

func labels(ps []*Port) string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Label())
	}
	return strings.Join(textsafe.Capped(out, 4), ", ")
}
