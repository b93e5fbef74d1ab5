package query

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ibkey/ibkey/internal/ibverbs/mad"
)

// SweepProgress is a snapshot of a running sweep, for a progress display.
type SweepProgress struct {
	Nodes    int           // nodes found so far
	InFlight int           // MADs of the batch being exchanged now (sent, not all answered)
	Sent     int           // MADs sent so far
	Elapsed  time.Duration // since the sweep started
}

// progressEvery is how often Progress is called: ten times a second, as often as a
// person reads a changing line.
const progressEvery = 100 * time.Millisecond

// sweepCounters are what the sweep counts for Progress. The sweep only adds to them
// (a few atomic adds per batch of MADs, never per MAD); a sampler goroutine reads them.
type sweepCounters struct {
	nodes, inFlight, sent atomic.Int64
}

// exchange sends a batch through the transport, counting it for Progress.
func (s *sweeper) exchange(ctx context.Context, calls []mad.Call) {
	if len(calls) == 0 {
		return
	}
	s.count.inFlight.Store(int64(len(calls)))
	s.count.sent.Add(int64(len(calls)))
	mad.Exchange(ctx, s.t, calls)
	s.count.inFlight.Store(0)
}

// startProgress calls opts.Progress with a snapshot at once and then every
// progressEvery, from its own goroutine, so the sweep never waits for the
// display. The returned stop ends the sampling and returns after the last call:
// Progress is never called after Sweep returns.
func (s *sweeper) startProgress(ctx context.Context, start time.Time) (stop func()) {
	if s.opts.Progress == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	sample := func() {
		s.opts.Progress(SweepProgress{
			Nodes:    int(s.count.nodes.Load()),
			InFlight: int(s.count.inFlight.Load()),
			Sent:     int(s.count.sent.Load()),
			Elapsed:  s.opts.Now().Sub(start),
		})
	}
	wg.Go(func() {
		sample()
		tick := time.NewTicker(progressEvery)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				sample()
			}
		}
	})
	return func() { cancel(); wg.Wait() }
}
