package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
)

// The lab tests of more than one command: pkeys and devices failing over MADs, here;
// can-talk on a fabric discovered by fabric discover, in fabriccmd_lab_test.go. (pkeys
// and devices compared with smpquery: their packages.) They skip when ibsim, OpenSM or
// infiniband-diags are missing, and fail instead under CI (lab.Require). `make
// fabric-test` runs them with CI=true.

// fastFail makes an unanswered MAD fail fast in the lab's error tests (comparisons keep
// the default timeout: a busy machine may answer late, and a reply costs no waiting).
var fastFail = []string{"--mad-timeout", "200ms", "--mad-retries", "1"}

// TestLabFabricErrors: what cannot be answered fails with exit 3 and one clear line,
// within the MAD timeout, never a hang; and every run gives its ibsim slot back.
func TestLabFabricErrors(t *testing.T) {
	l := cmdtest.StartLab(t, "small.net", newRootCmd)
	targets := l.Targets(t)
	run := func(t *testing.T, stderr string, args ...string) {
		t.Helper()
		start := time.Now()
		r := l.Run(t, append(append([]string{}, fastFail...), args...)...)
		// 2 attempts x 200ms per MAD, and a few MADs in a row at most.
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("ibkey %s took %v", strings.Join(args, " "), d)
		}
		if r.Code != 3 || !strings.Contains(r.Stderr, stderr) || r.Stdout != "" {
			t.Errorf("ibkey %s: exit %d, stdout %q, stderr %q; want exit 3 and %q", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr, stderr)
		}
		if strings.Count(strings.TrimSpace(r.Stderr), "\n") > 0 {
			t.Errorf("ibkey %s: error spans several lines: %q", strings.Join(args, " "), r.Stderr)
		}
	}
	var hcaB *cmdtest.Target
	for _, tg := range targets {
		if tg.Node == "HcaB" {
			hcaB = tg
		}
	}

	t.Run("lid-before-sm", func(t *testing.T) {
		run(t, "no answer from lid 1", "pkeys", "--lid", "1")
	})
	t.Run("dr-dead-end", func(t *testing.T) {
		// Out of HcaA's unconnected port 2.
		run(t, "no answer from DR path 0,2", "devices", "--dr", "0,2")
	})
	t.Run("no-such-port", func(t *testing.T) {
		run(t, "no port 9 on the switch at DR path 0,1 (ports: 0-8)", "pkeys", "--dr", "0,1", "--port", "9")
		run(t, "no port 0 on the CA at DR path 0 (ports: 1-2)", "pkeys", "--dr", "0", "--port", "0")
	})
	if err := l.RunOpenSM(cmdtest.FabricConf(t), false); err != nil {
		t.Fatal(err)
	}
	l.ResolveLIDs(t, targets)
	t.Run("unassigned-lid", func(t *testing.T) {
		run(t, "no answer from lid 999", "pkeys", "--lid", "999")
	})
	t.Run("dropped", func(t *testing.T) {
		l.MustConsole(fmt.Sprintf(`Error "HcaB"[%d] 100`, hcaB.Port))
		defer l.MustConsole(fmt.Sprintf(`Error "HcaB"[%d] 0`, hcaB.Port))
		run(t, fmt.Sprintf("no answer from lid %d", hcaB.LID), "pkeys", "--lid", strconv.Itoa(hcaB.LID))
		run(t, fmt.Sprintf("no answer from DR path %s", hcaB.Path), "devices", "--dr", hcaB.Path)
	})
	t.Run("partial-list", func(t *testing.T) {
		// What answered is printed; the LIDs that did not are named; exit 3.
		r := l.Run(t, append(append([]string{}, fastFail...), "pkeys", "-o", "json", "--lid", fmt.Sprintf("%d,999", hcaB.LID))...)
		var doc struct {
			Ports []json.RawMessage `json:"ports"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || len(doc.Ports) != 1 {
			t.Errorf("stdout %q: %v", r.Stdout, err)
		}
		if r.Code != 3 || !strings.Contains(r.Stderr, "1 of 2 addresses failed: no answer from lid 999") {
			t.Errorf("exit %d, stderr %q", r.Code, r.Stderr)
		}
	})
	t.Run("slots", func(t *testing.T) {
		clients, err := l.Attached()
		if err != nil || len(clients) != 0 {
			t.Fatalf("attached after the runs: %v %v", clients, err)
		}
	})
	t.Run("killed", func(t *testing.T) {
		l.Kill()
		run(t, "no simulator listening on socket", "pkeys", "--lid", strconv.Itoa(hcaB.LID))
	})
}
