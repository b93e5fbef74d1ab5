package exporter

import (
	"bytes"
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/internal/demo"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/query"
)

// TestOnceLIDNotAnswering: exporter --lid --once over a LID that does not answer
// prints the ports that answered, names the LID (a node not read, as in a sweep) and
// exits 4. Before, the whole read failed (exit 3) and nothing was printed.
func TestOnceLIDNotAnswering(t *testing.T) {
	open := func(context.Context) (*query.Fabric, error) {
		tr, err := demo.OpenTransport("mlx5_0", 1, time.Now)
		return &query.Fabric{T: tr, Via: demo.Via}, err
	}
	var stdout, stderr bytes.Buffer
	o := onceOptions(&stdout, &stderr, nil, open)
	o.LID = "9,99"
	err := Run(o)
	if code := cmdutil.ExitCode(err); code != 4 || !strings.Contains(stderr.String(), "ibkey: partial sweep: node not checked: lid 99 (all ports): no answer via ") ||
		!strings.Contains(stdout.String(), `node_name="demo-node HCA-2"`) {
		t.Errorf("exit %d (%v), want 4 naming lid 99\n%s", code, err, stderr.String())
	}
}

// stallAfter answers n MADs through T, then waits for the caller's deadline: a
// subnet that stops answering partway through a sweep.
type stallAfter struct {
	mad.Transport
	n atomic.Int32
}

func (s *stallAfter) Do(ctx context.Context, req mad.Request) (*mad.Packet, error) {
	if s.n.Add(-1) < 0 {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return s.Transport.Do(ctx, req)
}

// TestOncePartialSweep: exporter --sweep --once whose sweep stops early (here its
// --sweep-timeout, the subnet having stopped answering after 3 MADs) reached the
// fabric: it exits 4, not 3 (a transport that cannot be reached), prints what a
// scrape would serve (no sweep yet: sweeps_total{result="partial"} 1, up 0) and says
// why on stderr. fabric pkeys exits 4 on such a sweep too.
func TestOncePartialSweep(t *testing.T) {
	open := func(context.Context) (*query.Fabric, error) {
		tr, err := demo.OpenTransport("mlx5_0", 1, time.Now)
		s := &stallAfter{Transport: tr}
		s.n.Store(3)
		return &query.Fabric{T: s, Via: demo.Via}, err
	}
	var stdout, stderr bytes.Buffer
	o := onceOptions(&stdout, &stderr, nil, open)
	o.Sweep, o.SweepTimeout = true, 200*time.Millisecond
	err := Run(o)
	if code := cmdutil.ExitCode(err); code != 4 || !strings.Contains(stderr.String(), "ibkey: fabric via "+demo.Via+": sweep partial: ") ||
		!strings.Contains(stdout.String(), `ibkey_fabric_sweeps_total{result="partial"} 1`) || !strings.Contains(stdout.String(), "ibkey_fabric_up 0") {
		t.Errorf("exit %d (%v), want 4\n%s--- stderr\n%s", code, err, stdout.String(), stderr.String())
	}
}
