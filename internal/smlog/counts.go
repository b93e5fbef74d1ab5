package smlog

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/ibkey/ibkey/internal/check"
)

// Counts counts a log's events by kind and partition, for the exporter's
// ibkey_sm_events_total{kind,key}. It is safe for concurrent use: one goroutine
// follows the log (FollowCounts) while scrapes read it (Each).
type Counts struct {
	mu sync.Mutex
	m  map[CountKey]uint64
	// keys counts the distinct partitions seen per kind, to cap them (the P_Key of
	// a bad-pkey trap is whatever a packet carried: a label per value would let
	// any sender grow the exporter's series without bound).
	keys map[Kind]int
	// lines and records are how many lines were read and how many of them are in
	// OpenSM's format (Assembler.Lines, Records): none of many is not OpenSM's log.
	lines, records int64
	// notRead says why the log is not being read now ("" while it is): not there
	// yet, gone after a rotation, or a read that failed (SetNotRead).
	notRead string
}

// CountKey is a counted series: the event's kind, and the partition it is about
// ("0x0001"), "" when it has none (a Q_Key or M_Key event, partitions.conf), or
// OtherKey past MaxCountKeys partitions of one kind.
type CountKey struct {
	Kind Kind
	Key  string
}

// MaxCountKeys is how many partitions of one kind get their own series; the events
// of further ones are counted under OtherKey.
const MaxCountKeys = 256

// OtherKey is the key of the events past MaxCountKeys partitions of their kind.
const OtherKey = "other"

// NewCounts returns empty counts.
func NewCounts() *Counts { return &Counts{m: map[CountKey]uint64{}, keys: map[Kind]int{}} }

// Add counts one event.
func (c *Counts) Add(ev *Event) {
	k := CountKey{Kind: ev.Kind}
	if ev.KeyType == KeyPKey {
		k.Key = check.PKey(ev.Key).Partition().String()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[k]; !ok && k.Key != "" {
		if c.keys[k.Kind] >= MaxCountKeys {
			k.Key = OtherKey
		} else {
			c.keys[k.Kind]++
		}
	}
	c.m[k]++
}

// NotExplained is the kind Counts counts the lines about partitions or keys that no
// event holds under (Assembler.Unexplained), as sm log names them: a log of only
// such lines is not a quiet one. It is no event's kind.
const NotExplained Kind = "not-explained"

// NewAssembler returns an assembler for a log last written at ref, in loc, that
// counts into c every event and every line not explained it reads.
func (c *Counts) NewAssembler(ref time.Time, loc *time.Location) *Assembler {
	var a *Assembler
	a = NewAssembler(ref, loc, func(ev *Event) {
		c.Add(ev)
		a.Recycle(ev)
	})
	a.NoLines = true
	a.Unexplained = func(*Unexplained) { c.Add(&Event{Kind: NotExplained}) }
	return a
}

// SetLines records how many lines were read and how many are OpenSM's (the
// assembler's Lines and Records).
func (c *Counts) SetLines(lines, records int64) {
	c.mu.Lock()
	c.lines, c.records = lines, records
	c.mu.Unlock()
}

// Lines returns what SetLines recorded.
func (c *Counts) Lines() (lines, records int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lines, c.records
}

// SetNotRead records why the log is not being read now ("" when it is again).
func (c *Counts) SetNotRead(why string) {
	c.mu.Lock()
	c.notRead = why
	c.mu.Unlock()
}

// NotRead returns what SetNotRead recorded last.
func (c *Counts) NotRead() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.notRead
}

// Each calls fn for every series, sorted by kind then key.
func (c *Counts) Each(fn func(k CountKey, n uint64)) {
	c.mu.Lock()
	m := maps.Clone(c.m)
	c.mu.Unlock()
	keys := slices.SortedFunc(maps.Keys(m), func(a, b CountKey) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Key, b.Key))
	})
	for _, k := range keys {
		fn(k, m[k])
	}
}

// FollowCounts follows the log at path from its start as Follow does (waiting for
// it when it is not there yet, surviving rotation and truncation) and counts its
// events into c, until ctx ends. The events of a log rotated away stay counted: the
// counts only grow, as a Prometheus counter's must. While the log is not there (not
// yet, or gone after a rotation) c.NotRead says so.
func FollowCounts(ctx context.Context, path string, c *Counts, o FollowOptions) error {
	o.Wait = true
	a := c.NewAssembler(time.Now(), time.Local)
	// Counted on from what an earlier follow counted (the exporter follows again
	// after a read error): the counts only grow.
	lines, records := c.Lines()
	o.Read = func() { c.SetLines(lines+a.Lines(), records+a.Records()) }
	o.NotRead = c.SetNotRead
	return Follow(ctx, path, a, o)
}
