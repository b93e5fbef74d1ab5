package exporter

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestSMLogOnceNotExplained: exporter --once --sm-log counts the log's lines about
// partitions or keys that no event holds (kind not-explained), as following does.
func TestSMLogOnceNotExplained(t *testing.T) {
	path := filepath.Join(t.TempDir(), "opensm.log")
	line := "Nov 28 10:00:00 000001 [AB12] 0x01 -> osm_pkey_rcv_process: ERR 4807: Got invalid port number 9\n"
	if err := os.WriteFile(path, []byte(line+line), 0o644); err != nil {
		t.Fatal(err)
	}
	o := &Options{SMLog: path, Once: true}
	c, _, err := o.smLogCollector(context.Background(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, mf := range mfs {
		if mf.GetName() != "ibkey_sm_events_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "kind" && l.GetValue() == "not-explained" && m.GetCounter().GetValue() == 2 {
					found = true
				}
			}
		}
	}
	if !found {
		t.Errorf("no ibkey_sm_events_total{kind=\"not-explained\"} 2 in %v", mfs)
	}
}
