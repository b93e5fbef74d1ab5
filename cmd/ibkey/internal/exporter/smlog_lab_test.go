package exporter

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/demo"
	"github.com/ibkey/ibkey/internal/exporter"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/lab"
	"github.com/ibkey/ibkey/internal/query"
)

// TestSMLogLab: the exporter follows the log of the lab's own OpenSM while traps are
// sent through ibsim, across a rotation done as logrotate does it with OpenSM (the log
// renamed, then SIGUSR1: OpenSM opens a new file).
func TestSMLogLab(t *testing.T) {
	lab.Require(t)
	l := lab.StartPartconf(t)
	d := l.StartOpenSMDaemon(t, "Default=0x7fff : ALL=full;\np1=0x0001 : ALL;\n")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	dir := t.TempDir()
	o := &Options{Deps: Deps{Out: io.Discard, ErrOut: io.Discard, Ctx: ctx,
		Host: func() *query.Host { return &query.Host{Sys: demo.LiveSysfs(time.Now)} }},
		Listen: []string{"127.0.0.1:0"}, MaxConnections: 1, Textfile: dir, Interval: 50 * time.Millisecond,
		TableInterval: time.Minute, SweepInterval: time.Minute, SMLog: d.Log}
	done := make(chan error, 1)
	go func() { done <- Run(o) }()
	// HcaC (LID 4) drops a packet with P_Key 0x0001 from HcaD (LID 5): both are
	// limited members of p1. OpenSM runs at HcaA, LID 1.
	var zero mad.GID
	trap := lab.BadKeyTrap(true, 4, 5, 4, 0x0001, 0, 0x012345, 0x06789a, zero, zero)
	series := regexp.MustCompile(`(?m)^ibkey_sm_events_total\{key="0x0001",kind="bad-pkey"\} (\d+)$`)
	send := func(want string) {
		t.Helper()
		from := d.LogSize()
		if err := l.SendTrap(ctx, "HcaC", 1, trap); err != nil {
			t.Fatal(err)
		}
		if _, err := d.WaitLog("Reporting Security Notice", from, 10*time.Second); err != nil {
			t.Fatal(err)
		}
		last := ""
		for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			b, _ := os.ReadFile(filepath.Join(dir, exporter.TextfileName))
			if m := series.FindSubmatch(b); m != nil {
				if last = string(m[1]); last == want {
					return
				}
			}
		}
		t.Fatalf("bad-pkey 0x0001: %q, want %s\nlog:\n%s", last, want, d.LogText())
	}
	send("1")
	send("2")
	if err := os.Rename(d.Log, d.Log+".1"); err != nil {
		t.Fatal(err)
	}
	if err := d.ReopenLog(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(d.Log); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("OpenSM did not open a new log after SIGUSR1")
		}
	}
	send("3")
	cancel()
	<-done
}
