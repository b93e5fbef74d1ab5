package query_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/lab"
	"github.com/ibkey/ibkey/internal/query"
)

// heldBatch holds the sweep's third batch of MADs until a progress snapshot has shown
// it in flight, so the test sees a batch in flight without depending on timing.
type heldBatch struct {
	*mad.Ibsim
	batches atomic.Int32
	seen    chan struct{} // closed by Progress when it saw MADs in flight
}

func (h *heldBatch) Exchange(ctx context.Context, calls []mad.Call) error {
	if h.batches.Add(1) == 3 {
		select {
		case <-h.seen:
		case <-time.After(time.Minute):
			return context.DeadlineExceeded // the test reports it
		}
	}
	return h.Ibsim.Exchange(ctx, calls)
}

// TestLabSweepProgress: with SweepOptions.Progress the sweep is sampled from another
// goroutine: a first snapshot at once, MADs in flight while a batch is out, counts
// that never go back, and no call after Sweep returned.
func TestLabSweepProgress(t *testing.T) {
	l := lab.Start(t, smallNet, nil)
	tr := &heldBatch{Ibsim: l.Dial(t, "", labMAD), seen: make(chan struct{})}
	var (
		mu       sync.Mutex
		snaps    []query.SweepProgress
		returned atomic.Bool
		late     atomic.Int32
		once     sync.Once
	)
	opts := query.SweepOptions{Progress: func(p query.SweepProgress) {
		if returned.Load() {
			late.Add(1)
		}
		mu.Lock()
		snaps = append(snaps, p)
		mu.Unlock()
		if p.InFlight > 0 {
			once.Do(func() { close(tr.seen) })
		}
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	f, err := query.Sweep(ctx, tr, opts)
	returned.Store(true)
	if err != nil {
		t.Fatalf("Sweep: %v (the held batch was never seen in flight?)", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(snaps) == 0 {
		t.Fatal("Progress never called")
	}
	var prev query.SweepProgress
	inFlight := false
	for i, p := range snaps {
		if p.Nodes < prev.Nodes || p.Sent < prev.Sent || p.Elapsed < prev.Elapsed {
			t.Errorf("snapshot %d %+v goes back from %+v", i, p, prev)
		}
		if p.InFlight > p.Sent {
			t.Errorf("snapshot %d: %d in flight of %d sent", i, p.InFlight, p.Sent)
		}
		inFlight = inFlight || p.InFlight > 0
		prev = p
	}
	if !inFlight {
		t.Error("no snapshot showed MADs in flight")
	}
	if prev.Nodes > len(f.Nodes) {
		t.Errorf("last snapshot says %d nodes, the sweep found %d", prev.Nodes, len(f.Nodes))
	}
	if n := late.Load(); n > 0 {
		t.Errorf("Progress called %d times after Sweep returned", n)
	}
}
