package smlog

import (
	"fmt"
	"time"
)

// Group is one problem and how often the log shows it: the events of one kind, code
// and trap between the same ends (by GUID, else LID), with the same key. QP numbers
// and SLs differ between repeats and are not part of it.
type Group struct {
	Key string
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

// GroupKey is the key events are counted under.
func GroupKey(ev *Event) string {
	end := func(p Port) string {
		switch {
		case p.GUID != 0:
			return p.GUID.String()
		case p.NodeGUID != 0:
			return fmt.Sprintf("%s/%d", p.NodeGUID, p.Num)
		case p.NodeDesc != "":
			return fmt.Sprintf("%q/%d", p.NodeDesc, p.Num)
		case p.LID != 0:
			return fmt.Sprintf("lid%d", p.LID)
		}
		return "-"
	}
	key := fmt.Sprintf("%x", ev.Key)
	if ev.Kind == KindTableFull {
		key = "*" // one group per port: the keys that did not fit are listed in it
	}
	reporter := ""
	if ev.Kind == KindBadSwitchPKey || ev.Kind == KindBadMKey {
		reporter = end(ev.Reporter)
	}
	return fmt.Sprintf("%s|%s|%d|%s|%s|%s|%s|%s|%d|%s|%s|%d|%s", ev.Kind, ev.Code, ev.Trap, ev.KeyType, key,
		end(ev.From), end(ev.To), reporter, ev.SwitchPort, ev.MGID, ev.QoSLevel, ev.ConfLine, ev.Detail)
}

// Summary counts events by group, in the order their groups first appear. Its size
// grows with the number of distinct problems, not with the log.
type Summary struct {
	Groups []*Group
	Events int
	byKey  map[string]*Group
}

// NewSummary returns an empty summary.
func NewSummary() *Summary { return &Summary{byKey: map[string]*Group{}} }

// Add counts ev and returns its group.
func (s *Summary) Add(ev *Event) *Group {
	s.Events++
	k := GroupKey(ev)
	g := s.byKey[k]
	if g == nil {
		g = &Group{Key: k, First: ev, FirstAt: ev.Time}
		s.byKey[k] = g
		s.Groups = append(s.Groups, g)
	}
	g.Count++
	g.LastAt, g.LastLine = ev.Time, ev.Line
	if ev.Kind == KindTableFull {
		seen := false
		for _, k := range g.Keys {
			seen = seen || k == ev.Key
		}
		switch {
		case seen:
		case len(g.Keys) < maxKeys:
			g.Keys = append(g.Keys, ev.Key)
		default:
			g.MoreKeys++
		}
	}
	return g
}
