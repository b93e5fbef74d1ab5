package exporter

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/internal/demo"
	"github.com/ibkey/ibkey/internal/exporter"
	"github.com/ibkey/ibkey/internal/query"
)

// TestSMLogFollowed: `exporter --textfile DIR --sm-log FILE` counts the events of a log
// that appears after the exporter starts, grows, and is rotated (renamed, then a new
// file) and truncated: each textfile has the counts so far, and they only grow.
func TestSMLogFollowed(t *testing.T) {
	lab, err := os.ReadFile("../../../../internal/smlog/testdata/lab.log")
	if err != nil {
		t.Fatal(err)
	}
	dir, logDir := t.TempDir(), t.TempDir()
	path := filepath.Join(logDir, "opensm.log")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o := &Options{Deps: Deps{Out: io.Discard, ErrOut: io.Discard, Ctx: ctx,
		Host: func() *query.Host { return &query.Host{Sys: demo.LiveSysfs(time.Now)} }},
		Listen: []string{"127.0.0.1:0"}, MaxConnections: 1, Textfile: dir, Interval: 50 * time.Millisecond,
		TableInterval: time.Minute, SweepInterval: time.Minute, SMLog: path}
	done := make(chan error, 1)
	go func() { done <- Run(o) }()
	badPKey := regexp.MustCompile(`(?m)^ibkey_sm_events_total\{key="0x0001",kind="bad-pkey"\} (\d+)$`)
	waitCount := func(want string) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		last := ""
		for time.Now().Before(deadline) {
			b, _ := os.ReadFile(filepath.Join(dir, exporter.TextfileName))
			if m := badPKey.FindSubmatch(b); m != nil {
				last = string(m[1])
				if last == want {
					return
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("bad-pkey 0x0001 count %q, want %s", last, want)
	}
	write := func(name string, flag int) {
		t.Helper()
		f, err := os.OpenFile(name, flag|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		f.Write(lab)
		f.Close()
	}
	// Started before the log exists: not read, and said so (the counts alone would
	// read as a quiet log's).
	notThere := `ibkey_sm_log_unreadable{reason="` + path + ` is not there yet: waiting for it"} 1` + "\n"
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile(filepath.Join(dir, exporter.TextfileName))
		if strings.Contains(string(b), notThere) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s in\n%s", notThere, b)
		}
	}
	write(path, os.O_CREATE)
	waitCount("13")
	if b, _ := os.ReadFile(filepath.Join(dir, exporter.TextfileName)); strings.Contains(string(b), "ibkey_sm_log_unreadable{") {
		t.Errorf("the log is read, yet:\n%s", b)
	}
	// The lines read, by format: the lab's log is OpenSM's, every line.
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile(filepath.Join(dir, exporter.TextfileName))
		if strings.Contains(string(b), "ibkey_sm_log_lines_total{format=\"opensm\"} 97\n") &&
			strings.Contains(string(b), "ibkey_sm_log_lines_total{format=\"other\"} 0\n") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no ibkey_sm_log_lines_total 97/0 in\n%s", b)
		}
	}
	write(path, 0)
	waitCount("26")
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	write(path+".1", 0) // the last lines of the old file
	write(path, os.O_CREATE)
	waitCount("52")
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	time.Sleep(600 * time.Millisecond)
	write(path, 0)
	waitCount("65")
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestSMLogOnce: with --once the log is read whole; a log that cannot be read is an
// environment error (exit 3).
func TestSMLogOnce(t *testing.T) {
	var out strings.Builder
	o := &Options{Deps: Deps{Out: &out, ErrOut: io.Discard, Ctx: context.Background(),
		Host: func() *query.Host { return &query.Host{Sys: demo.LiveSysfs(time.Now)} }},
		Listen: []string{"127.0.0.1:0"}, MaxConnections: 1, Once: true, Interval: time.Minute,
		TableInterval: time.Minute, SweepInterval: time.Minute, SMLog: "../../../../internal/smlog/testdata/lab.log"}
	// Exit 4: the demo host's violation counters are not read (no --portinfo).
	if err := Run(o); cmdutil.ExitCode(err) != cmdutil.ExitIncomplete {
		t.Fatal(err)
	}
	for _, want := range []string{`ibkey_sm_events_total{key="0x0001",kind="bad-pkey"} 13`, `ibkey_sm_events_total{key="",kind="bad-sm-key"} 1`, "ibkey_host_up 1"} {
		if !strings.Contains(out.String(), want+"\n") {
			t.Errorf("no %s in\n%s", want, out.String())
		}
	}
	// A file that is not OpenSM's log counts no event, as a quiet log does: the lines
	// by format tell them apart.
	if !strings.Contains(out.String(), "ibkey_sm_log_lines_total{format=\"opensm\"} 97\n") {
		t.Errorf("lab log: no ibkey_sm_log_lines_total{format=\"opensm\"} 97 in\n%s", out.String())
	}
	notOpenSM := filepath.Join(t.TempDir(), "messages")
	if err := os.WriteFile(notOpenSM, []byte("Nov 27 10:00:01 sm01 OpenSM[1234]: SUBNET UP\nNov 27 10:00:02 sm01 kernel: port 1 up\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	o.SMLog = notOpenSM
	if err := Run(o); cmdutil.ExitCode(err) != cmdutil.ExitIncomplete {
		t.Fatal(err)
	}
	if got := out.String(); !strings.Contains(got, "ibkey_sm_log_lines_total{format=\"opensm\"} 0\n") ||
		!strings.Contains(got, "ibkey_sm_log_lines_total{format=\"other\"} 2\n") || strings.Contains(got, "ibkey_sm_events_total{") {
		t.Errorf("not OpenSM's log:\n%s", got)
	}
	o.SMLog = filepath.Join(t.TempDir(), "missing.log")
	var env *query.EnvError
	if err := Run(o); !errors.As(err, &env) || !strings.Contains(err.Error(), "--sm-log") {
		t.Errorf("a missing log: %v", err)
	}
}
