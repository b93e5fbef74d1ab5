package mad_test

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/lab"
)

// within runs fn and fails the test when it has not returned after limit: the
// guard against a hang, generous enough for a loaded machine.
func noHang(t *testing.T, limit time.Duration, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(limit):
		t.Fatalf("%s did not return within %v: hung on a stopped ibsim", what, limit)
	}
}

// waitDetached waits until ibsim lists no attached client (it frees a slot when it
// handles the DISCONNECT queued while it was stopped).
func waitDetached(t *testing.T, l *lab.Lab) {
	t.Helper()
	var clients []string
	for range 100 {
		var err error
		if clients, err = l.Attached(); err != nil {
			t.Fatalf("ibsim after SIGCONT: %v (stderr: %s)", err, l.Stderr())
		}
		if len(clients) == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("ibsim client slots leaked after SIGCONT:\n%s", strings.Join(clients, "\n"))
}

// TestLabStalledIbsim stops ibsim (SIGSTOP) under a transport with MADs in flight
// and more queued: the send queue fills, and every send and receive still ends at
// its deadline; a cancelled context ends a batch at once; Close and a new Dial give
// up instead of hanging. After SIGCONT ibsim is alive, holds no slot of ours, and
// answers a new client.
func TestLabStalledIbsim(t *testing.T) {
	l := lab.Start(t, smallNet, nil)
	tr, err := mad.DialIbsim(context.Background(), mad.IbsimOptions{SockName: l.SockName, Options: mad.Options{Timeout: 50 * time.Millisecond, Retries: 1}})
	if err != nil {
		t.Fatal(err)
	}
	get := mad.Request{Addr: mad.DirectedRoute(), Class: mad.ClassSubnLID, Method: mad.MethodGet, Attr: mad.AttrNodeInfo}
	if _, err := tr.Do(context.Background(), get); err != nil {
		t.Fatalf("before SIGSTOP: %v", err)
	}
	if err := l.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := true
	defer func() {
		if stopped {
			l.Signal(syscall.SIGCONT)
		}
	}()

	// 100 requests, retried once: far more datagrams than a unix socket queues
	// (net.unix.max_dgram_qlen, 10), so sends meet a full queue.
	calls := make([]mad.Call, 100)
	for i := range calls {
		calls[i].Req = get
	}
	noHang(t, 60*time.Second, "Exchange", func() {
		if err := tr.Exchange(context.Background(), calls); err != nil {
			t.Errorf("Exchange: %v", err)
		}
	})
	for i, c := range calls {
		if !errors.Is(c.Err, mad.ErrTimeout) {
			t.Fatalf("call %d: err = %v, want a timeout", i, c.Err)
		}
	}
	if st := tr.Stats(); st.Timeouts < 100 || st.Sent >= 200 {
		t.Errorf("stats %+v: want 100 timeouts and fewer than 200 sends (the queue was full)", st)
	}

	// A cancelled context ends a batch whose attempts would wait an hour.
	slow, err := mad.DialIbsim(context.Background(), mad.IbsimOptions{SockName: l.SockName})
	if err == nil {
		slow.Close()
		t.Fatal("DialIbsim attached to a stopped ibsim")
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	noHang(t, 10*time.Second, "Exchange after cancel", func() {
		if err := tr.Exchange(ctx, calls[:20]); !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled Exchange: %v, want context.Canceled", err)
		}
	})

	// Dial gives up at its context's deadline without asking for a slot.
	dctx, dcancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer dcancel()
	noHang(t, 10*time.Second, "DialIbsim", func() {
		if tr2, err := mad.DialIbsim(dctx, mad.IbsimOptions{SockName: l.SockName}); err == nil {
			tr2.Close()
			t.Error("DialIbsim attached to a stopped ibsim")
		} else if !strings.Contains(err.Error(), "stopped") {
			t.Errorf("DialIbsim: %v, want it to suggest ibsim is stopped", err)
		}
	})
	// Close leaves its DISCONNECT queued and returns.
	noHang(t, 10*time.Second, "Close", func() { tr.Close() })

	if err := l.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	stopped = false
	waitDetached(t, l)
	if l.Exited() {
		t.Fatalf("ibsim died after SIGCONT: %s", l.Stderr())
	}
	tr3 := l.Dial(t, "", labOpts)
	if _, err := tr3.Do(context.Background(), get); err != nil {
		t.Fatalf("after SIGCONT: %v", err)
	}
}
