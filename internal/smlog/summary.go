package smlog

import (
	"slices"
	"time"

	"github.com/ibkey/ibkey/internal/check"
)

// Group is one problem and how often the log shows it: the events of one kind, code
// and trap between the same ends (by GUID, else LID), with the same key. QP numbers
// and SLs differ between repeats and are not part of it.
type Group struct {
	// First is the first event of the group (its log lines are kept).
	First   *Event
	Count   int
	FirstAt time.Time
	LastAt  time.Time
	// LastLine is the log line of the group's last event.
	LastLine int64
	// Keys are the distinct keys of a group that collects several (a port's P_Key
	// table overflows by several partitions, ERR 0512), up to maxKeys, and MoreKeys
	// how many more there were.
	Keys     []uint64
	MoreKeys int
	// Explanation is filled once by whoever explains the group.
	Explanation *Explanation
}

const maxKeys = 64

// groupKey is what events are counted under: comparable, so a map of it needs no
// string built per event (a trap storm is millions of events).
type groupKey struct {
	kind        Kind
	code        string
	trap        int
	keyType     KeyType
	key         uint64
	from, to    endKey
	reporter    endKey
	switchPort  int
	mgid, qos   string
	confLine    int
	detail      string
	keyWildcard bool
}

// endKey names a port in a group key: by GUID, else node GUID and port, else
// description and port, else LID.
type endKey struct {
	guid check.GUID
	num  int
	desc string
	lid  uint16
}

func endKeyOf(p Port) endKey {
	switch {
	case p.GUID != 0:
		return endKey{guid: p.GUID}
	case p.NodeGUID != 0:
		return endKey{guid: p.NodeGUID, num: p.Num + 1}
	case p.NodeDesc != "":
		return endKey{desc: p.NodeDesc, num: p.Num + 1}
	}
	return endKey{lid: p.LID}
}

// of sets k to ev's group key (in place: the key is large, and Add reads one per
// event).
func (k *groupKey) of(ev *Event) {
	*k = groupKey{kind: ev.Kind, code: ev.Code, trap: ev.Trap, keyType: ev.KeyType, key: ev.Key, from: endKeyOf(ev.From), to: endKeyOf(ev.To),
		switchPort: ev.SwitchPort, mgid: ev.MGID, qos: ev.QoSLevel, confLine: ev.ConfLine, detail: ev.Detail}
	if ev.Kind == KindTableFull {
		k.key, k.keyWildcard = 0, true // one group per port: the keys that did not fit are listed in it
	}
	if ev.Kind == KindBadSwitchPKey || ev.Kind == KindBadMKey {
		k.reporter = endKeyOf(ev.Reporter)
	}
}

// Summary counts events by group, in the order their groups first appear. Its size
// grows with the number of distinct problems, not with the log.
type Summary struct {
	Groups []*Group
	Events int
	byKey  map[groupKey]*Group
	// last is the group of the previous event: repeats come in runs (a trap storm),
	// and comparing with it spares hashing the key.
	lastKey groupKey
	last    *Group
}

// NewSummary returns an empty summary.
func NewSummary() *Summary { return &Summary{byKey: map[groupKey]*Group{}} }

// Add counts ev and returns its group.
func (s *Summary) Add(ev *Event) *Group {
	s.Events++
	var k groupKey
	k.of(ev)
	g := s.last
	if g == nil || k != s.lastKey {
		g = s.byKey[k]
	}
	if g == nil {
		g = &Group{First: ev, FirstAt: ev.Time}
		s.byKey[k] = g
		s.Groups = append(s.Groups, g)
	}
	if g != s.last {
		s.last, s.lastKey = g, k
	}
	g.Count++
	g.LastAt, g.LastLine = ev.Time, ev.Line
	if ev.Kind == KindTableFull {
		switch {
		case slices.Contains(g.Keys, ev.Key):
		case len(g.Keys) < maxKeys:
			g.Keys = append(g.Keys, ev.Key)
		default:
			g.MoreKeys++
		}
	}
	return g
}
