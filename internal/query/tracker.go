package query

import (
	"cmp"
	"time"
)

// Tracker turns successive samples into deltas and rates. It is pure computation (no
// I/O): the TUI keeps one in its model and feeds it the samples a tea.Cmd reads.
type Tracker struct {
	state map[trackKey]*counterState
	// Base is when the on-screen baseline was set (the first sample or ResetBaseline).
	Base time.Time
	// last is the previous sample's time, for the interval.
	last time.Time
	// unread counts, per port, the samples in which it could not be read at all
	// (lost).
	unread map[PortRef]int
}

type trackKey struct {
	port PortRef
	name string
}

type counterState struct {
	have      bool // a value was read before
	value     uint64
	at        time.Time // when value was read
	saturated bool
	total     uint64 // sum of deltas since the baseline
	totalLow  bool   // total is a lower bound (counts lost to saturation)
	unread    int    // the port's Tracker.unread when value was read
}

func NewTracker() *Tracker {
	return &Tracker{state: map[trackKey]*counterState{}, unread: map[PortRef]int{}}
}

// Snapshot is what a sample means given the ones before it.
type Snapshot struct {
	Time time.Time
	// Interval since the previous sample; 0 for the first.
	Interval time.Duration
	Counters []Counter
	Ports    []PortDelta
}

// PortDelta is one port in a snapshot.
type PortDelta struct {
	Ref     PortRef
	Address string // where a port read over the fabric is; "" locally
	State   string
	Err     string // the port could not be read this time (it went away)
	// Counters are parallel to Snapshot.Counters (empty when Err is set).
	Counters []CounterDelta
	// Moved: some counter went up in the last interval (or was reset).
	Moved bool
	// Activity is the sum of the known deltas of the last interval (for sorting).
	Activity uint64
}

// StateWord is the port's state, or why it has none: NOREPLY, a port on the fabric
// did not answer this time (it may again); GONE, a local port went away.
func (p *PortDelta) StateWord() string {
	switch {
	case p.Err == "":
		return p.State
	case p.Address != "":
		return "NOREPLY"
	}
	return "GONE"
}

// CounterDelta is one counter of one port in a snapshot.
type CounterDelta struct {
	Name   string
	Source string
	// Value is the counter's value now; meaningful when Err and Unavailable are "".
	Value       uint64
	Err         string
	Unavailable string
	// HasDelta: Delta and Rate are known. False on the first reading, on the first
	// after its port could not be read (it may come back reset), and while the
	// counter stays saturated (the real count is unknown).
	HasDelta bool
	Delta    uint64
	Rate     float64 // per second, over the time since the previous good reading
	// Since is when that previous reading was taken, with HasDelta: the previous
	// sample's time, or earlier when the counter was not read in between (a failed
	// read, a counter the screen did not sample).
	Since time.Time
	// Saturated: the counter is at its maximum (2^width-1). Error counters saturate
	// rather than wrap (IBA 16.1.3.5: PortCounters error
	// fields stop at their maximum value): from now on counts are lost, and a Delta
	// reported with it is a lower bound.
	Saturated bool
	// Reset: the value went down, so someone reset the counter; Delta counts from 0,
	// and it is a lower bound: what was counted between the previous reading and the
	// reset is lost (a read does not clear PortCounters, IBA 16.1.3.5; only a Set
	// does, as perfquery -R sends).
	Reset bool
	// Total is the sum of deltas since the on-screen baseline; TotalLowerBound when
	// counts were lost to saturation or to a reset, or the counter was first read
	// after the baseline.
	Total           uint64
	TotalLowerBound bool
}

func (c *CounterDelta) OK() bool { return c.Err == "" && c.Unavailable == "" }

// Add folds in the next sample.
func (t *Tracker) Add(s *Sample) *Snapshot {
	snap := &Snapshot{Time: s.Time, Counters: s.Counters, Ports: make([]PortDelta, len(s.Ports))}
	if !t.last.IsZero() {
		snap.Interval = s.Time.Sub(t.last)
	} else {
		t.Base = s.Time
	}
	t.last = s.Time
	for i := range s.Ports {
		ps := &s.Ports[i]
		pd := &snap.Ports[i]
		pd.Ref, pd.Address, pd.State, pd.Err = ps.Ref, ps.Address, ps.State, ps.Err
		if ps.Err != "" {
			t.unread[ps.Ref]++
			continue
		}
		pd.Counters = make([]CounterDelta, len(s.Counters))
		for j, c := range s.Counters {
			cd := &pd.Counters[j]
			*cd = t.observe(ps.Ref, c, ps.Readings[j], s.Time)
			if cd.HasDelta && cd.Delta > 0 || cd.Reset {
				pd.Moved = true
			}
			if cd.HasDelta {
				pd.Activity += cd.Delta
			}
		}
	}
	return snap
}

func (t *Tracker) observe(port PortRef, c Counter, r Reading, now time.Time) CounterDelta {
	cd := CounterDelta{Name: c.Name, Source: cmp.Or(r.Source, c.Source.Name()), Err: r.Err, Unavailable: r.Unavailable}
	if !cd.OK() {
		return cd
	}
	k := trackKey{port, c.Name}
	st := t.state[k]
	if st == nil {
		st = &counterState{}
		t.state[k] = st
	}
	if r.Restarted {
		st.have = false // a device opened again: see Reading.Restarted
	}
	if st.unread != t.unread[port] {
		// Its port could not be read at all since its last value: a local port that
		// went away was unregistered with its device, one over the fabric that did
		// not answer may have been restarting. Either may come back with its counters
		// reset and counting past that value (a software counter restarts at 0 with
		// its device: rdma_rxe keeps bad_pkey_cntr and qkey_viol_cntr in its port's
		// attributes, rxe_recv.c set_bad_pkey_cntr), so a delta from it would be given
		// as exact and be too small. This reading is a new first one.
		st.have, st.unread = false, t.unread[port]
	}
	v := r.Value
	cd.Value = v
	max := c.Max()
	atMax := max != 0 && v == max
	switch {
	case !st.have:
		// First reading: a baseline, no delta. Read after the baseline (not sampled
		// or not readable until now), its total misses what came before.
		st.totalLow = now.After(t.Base)
	case v < st.value:
		// Error counters only go down when reset (perfquery -R, a driver restart);
		// the counts since then are the new value, and the ones between the
		// previous reading and the reset are not known: the total is a lower bound.
		cd.Reset, cd.HasDelta, cd.Delta = true, true, v
		st.totalLow = true
	case atMax && st.saturated:
		// Still saturated: whatever happened is not counted.
	default:
		cd.HasDelta, cd.Delta = true, v-st.value
	}
	if cd.HasDelta {
		cd.Since = st.at
		if dt := now.Sub(st.at).Seconds(); dt > 0 {
			cd.Rate = float64(cd.Delta) / dt
		}
		st.total += cd.Delta
	} else if st.have {
		st.totalLow = true // saturated: counts lost
	}
	if atMax {
		cd.Saturated = true
		if st.have {
			st.totalLow = true // what went past the maximum was not counted
		}
	}
	st.have, st.value, st.at, st.saturated = true, v, now, atMax
	cd.Total, cd.TotalLowerBound = st.total, st.totalLow
	return cd
}

// ResetBaseline restarts the totals from now. It never touches the
// hardware counters.
func (t *Tracker) ResetBaseline(now time.Time) {
	t.Base = now
	for _, st := range t.state {
		st.total, st.totalLow = 0, false
	}
}
