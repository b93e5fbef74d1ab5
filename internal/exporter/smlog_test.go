package exporter

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/smlog"
)

// TestSMLogCollector: the events of the log the lab's OpenSM wrote, counted by kind
// and partition, are ibkey_sm_events_total counters.
func TestSMLogCollector(t *testing.T) {
	f, err := os.Open("../smlog/testdata/lab.log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	counts := smlog.NewCounts()
	a := smlog.NewAssembler(time.Now(), time.Local, counts.Add)
	if err := smlog.Read(context.Background(), f, a); err != nil {
		t.Fatal(err)
	}
	out := gatherText(t, NewSMLogCollector(counts))
	for _, want := range []string{
		"# TYPE ibkey_sm_events_total counter\n",
		`ibkey_sm_events_total{key="0x0001",kind="bad-pkey"} 13` + "\n",
		`ibkey_sm_events_total{key="0x0002",kind="bad-switch-pkey"} 1` + "\n",
		`ibkey_sm_events_total{key="0x0002",kind="path-refused"} 2` + "\n",
		`ibkey_sm_events_total{key="",kind="bad-qkey"} 1` + "\n",
		`ibkey_sm_events_total{key="",kind="partitions-rejected"} 3` + "\n",
		`ibkey_sm_events_total{key="0x013b",kind="pkey-table-full"} 1` + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	// Nothing counted yet: no series, the family described all the same.
	if out := gatherText(t, NewSMLogCollector(smlog.NewCounts())); strings.Contains(out, "ibkey_sm_events_total{") {
		t.Errorf("series without events:\n%s", out)
	}
}

// TestSMLogNotRead: while the log is not read, ibkey_sm_log_unreadable says why (its
// counts stand still: without it they would read as a quiet log's); absent while it
// is read.
func TestSMLogNotRead(t *testing.T) {
	counts := smlog.NewCounts()
	c := NewSMLogCollector(counts)
	const why = "/var/log/opensm.log is not there yet: waiting for it"
	for _, notRead := range []string{why, "", "reading it failed: permission denied"} {
		counts.SetNotRead(notRead)
		got := collect(t, c)
		if notRead == "" {
			if s := find(got, "ibkey_sm_log_unreadable"); len(s) != 0 {
				t.Errorf("read, yet %v", s)
			}
			continue
		}
		expect(t, got, 1, "ibkey_sm_log_unreadable", "reason", notRead)
	}
}
