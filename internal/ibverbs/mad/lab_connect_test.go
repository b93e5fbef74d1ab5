//go:build linux

package mad_test

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/lab"
)

// TestLabAbandonedConnect: a CONNECT left in the queue of a stopped ibsim by a client
// that is gone when ibsim resumes. Unpinned, ibsim calls IBPANIC on it (the
// reproduction: the test fails if this ever stops being true, so that the pinned case
// below keeps testing something). Pinned (as DialIbsim sends it), ibsim survives,
// holds the abandoned slot under the client's id (freed here through its console) and
// takes new clients.
func TestLabAbandonedConnect(t *testing.T) {
	for _, pin := range []bool{false, true} {
		l := lab.Start(t, smallNet, nil)
		if err := l.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		const id = 424242
		err := mad.AbandonConnect(l.SockName, id, pin)
		if serr := l.Signal(syscall.SIGCONT); serr != nil {
			t.Fatal(serr)
		}
		if err != nil {
			t.Fatalf("pin %v: %v", pin, err)
		}
		// ibsim handles the CONNECT, then (pinned) the pin; Attached is answered after
		// both, and fails if ibsim has exited.
		clients, aerr := l.Attached()
		if !pin {
			for range 100 {
				if l.Exited() {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			if !l.Exited() || !strings.Contains(l.Stderr(), "can't connect to in socket") {
				t.Fatalf("unpinned abandoned CONNECT: ibsim still runs (Attached: %v, %v); the reproduction of its IBPANIC no longer holds:\n%s", clients, aerr, l.Stderr())
			}
			l.Kill() // already gone; skips the lab's slot check
			continue
		}
		if aerr != nil || l.Exited() {
			t.Fatalf("pinned abandoned CONNECT: ibsim exited: %v\n%s", aerr, l.Stderr())
		}
		if len(clients) != 1 || !strings.Contains(clients[0], "pid 424242 ") {
			t.Fatalf("pinned abandoned CONNECT: Attached = %q, want the abandoned client (pid %d)", clients, id)
		}
		var slot int
		if _, err := fmt.Sscanf(clients[0], "Client %d:", &slot); err != nil {
			t.Fatal(err)
		}
		t.Logf("abandoned, pinned: ibsim runs and lists %q; unpinned it exited with IBPANIC", clients[0])
		l.MustConsole(fmt.Sprintf("X %d", slot))
		tr := l.Dial(t, "", labOpts)
		if err := tr.Close(); err != nil {
			t.Fatal(err)
		}
		waitDetached(t, l)
	}
}

// TestLabDialIsSilent (issue 25 item 13): attaching leaves nothing on ibsim's stderr.
// The liveness probe used to send a control message of type 0 (SIM_CTL_ERROR), which
// ibsim answers after printing "sim_ctl: bad ctl pkt type 0"; smpquery's attach
// (libumad2sim) prints nothing there, and neither does DialIbsim now.
func TestLabDialIsSilent(t *testing.T) {
	l := lab.Start(t, smallNet, nil)
	for range 3 {
		tr := l.Dial(t, "", labOpts)
		if err := tr.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.Tool("smpquery", "nodeinfo", "-D", "0"); err != nil {
		t.Fatal(err)
	}
	// ibsim's control handler (sim_ctl) names itself in what it prints; the
	// topology parser's warnings at start-up may come at any time and are not ours.
	for _, line := range strings.Split(l.Stderr(), "\n") {
		if strings.Contains(line, "sim_ctl") {
			t.Errorf("ibsim's control handler printed while clients attached: %s", line)
		}
	}
}
