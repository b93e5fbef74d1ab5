package tui

import (
	"slices"
	"time"

	"github.com/ibkey/ibkey/internal/query"
)

// histLen is how many samples of each counter the screen remembers, so memory stays
// flat however long a watch runs.
const histLen = 60

// pointKind says what a sample of a counter tells.
type pointKind uint8

const (
	pointNone      pointKind = iota // no reading (n/a, error, the port gone): nothing known
	pointDelta                      // a delta over the interval
	pointReset                      // the counter went down (reset): the delta counts from 0
	pointSaturated                  // the counter is at its maximum: the count is unknown, not 0
)

// point is one sample of one counter, kept for the trend and the drill-down history.
type point struct {
	at       time.Time
	interval time.Duration // since the previous sample (the pause too, when there was one)
	// span is how long a delta covers: the interval, or longer when the counter was
	// not read in between (query.CounterDelta.Since); 0 without a delta.
	span  time.Duration
	kind  pointKind
	delta uint64 // a lower bound when saturated is set together with a delta
	rate  float64
}

type histKey struct {
	port query.PortRef
	name string
}

// history is every counter's recent samples, oldest first, at most histLen of each.
// It lives in the model (a map, shared like the Tracker) and is fed only by Update.
type history map[histKey][]point

// add records a snapshot; the first snapshot only sets the baseline (no interval).
func (h history) add(s *query.Snapshot) {
	if s.Interval <= 0 {
		return
	}
	for i := range s.Ports {
		p := &s.Ports[i]
		for j, c := range s.Counters {
			pt := point{at: s.Time, interval: s.Interval}
			if p.Err == "" && j < len(p.Counters) {
				cd := &p.Counters[j]
				if cd.HasDelta {
					pt.span = s.Time.Sub(cd.Since)
				}
				switch {
				case !cd.OK():
				case cd.Reset:
					pt.kind, pt.delta, pt.rate = pointReset, cd.Delta, cd.Rate
				case cd.Saturated && !cd.HasDelta:
					pt.kind = pointSaturated
				case cd.HasDelta:
					pt.kind, pt.delta, pt.rate = pointDelta, cd.Delta, cd.Rate
					if cd.Saturated {
						pt.kind = pointSaturated // reached the maximum in this interval: a lower bound
					}
				}
			}
			k := histKey{p.Ref, c.Name}
			if len(h[k]) == histLen {
				h[k] = slices.Delete(h[k], 0, 1)
			}
			h[k] = append(h[k], pt)
		}
	}
}

// sameInterval returns up to k most recent points taken at the latest point's interval
// (within a factor of 1.5: sampling jitters), oldest first. Points taken at another
// interval (before + or -, across a pause) are left out, so a trend never puts a
// delta over 100 ms next to one over 10 s.
func (h history) sameInterval(port query.PortRef, name string, k int) []point {
	pts := h[histKey{port, name}]
	pts = pts[max(len(pts)-k, 0):]
	i := len(pts) - 1
	for i > 0 && similar(pts[i-1].interval, pts[len(pts)-1].interval) {
		i--
	}
	return pts[max(i, 0):]
}

func similar(a, b time.Duration) bool { return a*2 <= b*3 && b*2 <= a*3 }
