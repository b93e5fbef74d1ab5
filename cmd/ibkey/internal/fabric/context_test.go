package fabric

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
)

// blockingDial stands for a simulator that never answers: it returns only when the
// command's context ends, and records why.
type blockingDial struct{ ended chan error }

func (b *blockingDial) dial(ctx context.Context, o mad.IbsimOptions) (mad.Transport, string, error) {
	<-ctx.Done()
	b.ended <- ctx.Err()
	return nil, "", ctx.Err()
}

// discoverWith is `fabric` with discover's MAD transport replaced by dial.
func discoverWith(dial func(context.Context, mad.IbsimOptions) (mad.Transport, string, error)) func(*cmdutil.Factory) *cobra.Command {
	return func(f *cmdutil.Factory) *cobra.Command {
		c := &cobra.Command{Use: "fabric"}
		c.AddCommand(NewCmdDiscover(f, func(o *DiscoverOptions) error {
			o.Source.MAD.DialIbsim = dial
			return runDiscover(o)
		}))
		return c
	}
}

// bounded fails the test when run does not return within limit (a hang; generous).
func bounded(t *testing.T, limit time.Duration, run func() cmdtest.Result) cmdtest.Result {
	t.Helper()
	done := make(chan cmdtest.Result, 1)
	go func() { done <- run() }()
	select {
	case r := <-done:
		return r
	case <-time.After(limit):
		t.Fatalf("the command did not return within %v", limit)
		return cmdtest.Result{}
	}
}

// silentTransport stands for a fabric that never answers: every MAD waits until its
// context ends, and records why.
type silentTransport struct{ ended chan error }

func (s *silentTransport) Do(ctx context.Context, req mad.Request) (*mad.Packet, error) {
	<-ctx.Done()
	select {
	case s.ended <- ctx.Err():
	default:
	}
	return nil, ctx.Err()
}

func (s *silentTransport) Close() error { return nil }

// TestTimeoutBoundsTheWholeCommand: --timeout ends a command whose fabric never
// answers, and the exit is 4 (incomplete) as its help says.
func TestTimeoutBoundsTheWholeCommand(t *testing.T) {
	tr := &silentTransport{ended: make(chan error, 1)}
	dial := func(ctx context.Context, o mad.IbsimOptions) (mad.Transport, string, error) { return tr, "Node", nil }
	r := bounded(t, time.Minute, func() cmdtest.Result {
		return runWith(t, false, nil, discoverWith(dial), "fabric", "discover", "--ibsim=nowhere", "--timeout", "50ms")
	})
	if err := <-tr.ended; !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the transport saw %v, want the deadline", err)
	}
	if r.Code != 4 || !strings.Contains(r.Stderr, "--timeout 50ms expired before anything was read") {
		t.Errorf("exit %d, stderr %q; want exit 4 naming --timeout", r.Code, r.Stderr)
	}
	var help strings.Builder
	c := NewCmdDiscover(&cmdutil.Factory{IOStreams: &cmdutil.IOStreams{}}, nil)
	help.WriteString(c.Flags().Lookup("timeout").Usage)
	if !strings.Contains(help.String(), "exit 4") {
		t.Errorf("--timeout's help does not say exit 4: %q", help.String())
	}
}

// TestCommandContextReachesTheTransport: the command's context (main cancels it on a
// signal) is the one attaching gets: cancelled, the command ends at once.
func TestCommandContextReachesTheTransport(t *testing.T) {
	b := &blockingDial{ended: make(chan error, 1)}
	f := &cmdutil.Factory{IOStreams: &cmdutil.IOStreams{Out: &strings.Builder{}, ErrOut: &strings.Builder{}}, Getenv: func(string) string { return "" }}
	c := discoverWith(b.dial)(f)
	c.SilenceUsage, c.SilenceErrors = true, true
	c.SetArgs([]string{"discover", "--ibsim=nowhere"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // a signal arrived
	done := make(chan error, 1)
	go func() { done <- c.ExecuteContext(ctx) }()
	select {
	case err := <-done:
		if err == nil {
			t.Error("the command succeeded without a transport")
		}
	case <-time.After(time.Minute):
		t.Fatal("the command did not end after its context was cancelled")
	}
	if err := <-b.ended; !errors.Is(err, context.Canceled) {
		t.Errorf("the transport saw %v, want the command's cancellation", err)
	}
}
