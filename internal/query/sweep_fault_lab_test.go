package query_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/lab"
	"github.com/ibkey/ibkey/internal/query"
)

// faultAt runs fault just before the at-th batch of MADs the sweep sends.
type faultAt struct {
	*mad.Ibsim
	n     atomic.Int32
	at    int32
	fault func()
}

func (f *faultAt) Exchange(ctx context.Context, calls []mad.Call) error {
	if f.n.Add(1) == f.at {
		f.fault()
	}
	return f.Ibsim.Exchange(ctx, calls)
}

// sweepBounded runs Sweep and fails the test if it has not returned within limit
// (a hang), generous for a loaded machine.
func sweepBounded(t *testing.T, tr mad.Transport, opts query.SweepOptions, limit time.Duration) (*fabric.Fabric, error) {
	t.Helper()
	type result struct {
		f   *fabric.Fabric
		err error
	}
	done := make(chan result, 1)
	go func() {
		f, err := query.Sweep(context.Background(), tr, opts)
		done <- result{f, err}
	}()
	select {
	case r := <-done:
		return r.f, r.err
	case <-time.After(limit):
		t.Fatalf("Sweep did not return within %v", limit)
		return nil, nil
	}
}

// fatTree332 is the 332-node fabric of the fault report: 15 leaves of 21 CAs and
// 2 spines.
func fatTree332(t *testing.T) *lab.Lab {
	net := filepath.Join(t.TempDir(), "fattree332.net")
	if err := os.WriteFile(net, []byte(lab.FatTree(15, 2, 21)), 0o644); err != nil {
		t.Fatal(err)
	}
	return lab.Start(t, net, nil)
}

// checkGaps checks that a partial sweep's counts are counts of what they say: one
// unanswered link per port with a PeerError, failed reads no more than the ports
// there are, and no claim about a number of nodes.
func checkGaps(t *testing.T, f *fabric.Fabric, topo *lab.Topology) query.Gaps {
	t.Helper()
	g := query.FabricGaps(f)
	if !g.Partial() {
		t.Fatalf("the sweep is partial (%d of %d nodes) but FabricGaps says it is complete", len(f.Nodes), len(topo.Nodes))
	}
	ports, peerErrors := 0, 0
	for _, n := range f.Nodes {
		ports += len(n.Ports)
		for _, p := range n.Ports {
			if p.PeerError != "" {
				peerErrors++
			}
		}
	}
	if g.UnansweredLinks != peerErrors {
		t.Errorf("%d unanswered links counted, %d ports have a peer error", g.UnansweredLinks, peerErrors)
	}
	if g.PortReads > ports || g.TableReads > ports || g.NodeReads > 2*len(f.Nodes) {
		t.Errorf("gaps %+v exceed what %d nodes and %d ports allow", g, len(f.Nodes), ports)
	}
	if s := g.String(); s == "" || strings.Contains(s, "nodes did not answer") {
		t.Errorf("summary %q", s)
	}
	return g
}

// TestLabSweepIbsimKilled kills ibsim partway through a sweep of 332 nodes: the
// sweep ends (the sends fail at once), returns what it read, and its gaps count
// failed reads and unanswered links correctly.
func TestLabSweepIbsimKilled(t *testing.T) {
	l := fatTree332(t)
	tr, err := mad.DialIbsim(context.Background(), mad.IbsimOptions{SockName: l.SockName, Options: labMAD})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close() // ibsim is gone: the DISCONNECT fails, nothing to give back
	// Batch 8: the P_Key tables of level 2 (the spines and the first leaf's CAs).
	fa := &faultAt{Ibsim: tr, at: 8, fault: l.Kill}
	f, err := sweepBounded(t, fa, query.SweepOptions{}, 2*time.Minute)
	if f == nil {
		t.Fatalf("no fabric: %v", err)
	}
	if len(f.Nodes) >= len(l.Topology.Nodes) {
		t.Fatalf("%d nodes after ibsim was killed, the topology has %d", len(f.Nodes), len(l.Topology.Nodes))
	}
	g := checkGaps(t, f, l.Topology)
	if g.TableReads == 0 || g.UnansweredLinks == 0 {
		t.Errorf("gaps %+v: want failed tables and unanswered links", g)
	}
	t.Logf("%d of %d nodes; %s", len(f.Nodes), len(l.Topology.Nodes), g)
}

// TestLabSweepStalledIbsim stops ibsim (SIGSTOP) partway through a sweep: the
// sweep's Timeout bounds it, and it returns the partial fabric marked Incomplete
// with the deadline error. After SIGCONT the transport closes cleanly (the lab
// fails the test if a slot is left attached) and ibsim is alive.
func TestLabSweepStalledIbsim(t *testing.T) {
	l := fatTree332(t)
	// Each MAD of the stalled batch waits 2 s in all, longer than the sweep's
	// Timeout however many the transport keeps in flight at once.
	tr := l.Dial(t, "", mad.Options{Timeout: time.Second, Retries: 1})
	stopped := false
	fa := &faultAt{Ibsim: tr, at: 5, fault: func() {
		if err := l.Signal(syscall.SIGSTOP); err != nil {
			t.Error(err)
		}
		stopped = true
	}}
	defer func() {
		if stopped {
			l.Signal(syscall.SIGCONT)
		}
	}()
	f, err := sweepBounded(t, fa, query.SweepOptions{Timeout: time.Second}, time.Minute)
	if !errors.Is(err, context.DeadlineExceeded) || f == nil || f.Incomplete == "" {
		t.Fatalf("Sweep = %v, %v: want the partial fabric and the deadline", f != nil, err)
	}
	g := checkGaps(t, f, l.Topology)
	if g.Stopped == "" {
		t.Errorf("gaps %+v: Stopped not set", g)
	}
	if err := l.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	stopped = false
	if _, err := mad.GetNodeInfo(context.Background(), tr, mad.DirectedRoute()); err != nil {
		t.Errorf("after SIGCONT: %v", err)
	}
	if l.Exited() {
		t.Fatalf("ibsim died: %s", l.Stderr())
	}
}
