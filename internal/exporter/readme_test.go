package exporter

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/demo"
	"github.com/ibkey/ibkey/internal/query"
)

// TestReadmeMetrics: docs/exporter.md names every metric of the catalog, and its
// `--once` example is what the collector writes on the demo host.
func TestReadmeMetrics(t *testing.T) {
	data, err := os.ReadFile("../../docs/exporter.md")
	if err != nil {
		t.Fatal(err)
	}
	sec := string(data)
	for _, m := range Catalog() {
		if !strings.Contains(sec, "`"+m.Name+"`") {
			t.Errorf("docs/exporter.md does not name %s", m.Name)
		}
	}
	_, ex, ok := strings.Cut(sec, "$ ibkey --demo exporter --once")
	if !ok {
		t.Fatal("docs/exporter.md has no --once example")
	}
	_, ex, _ = strings.Cut(ex, "\n")
	ex, _, _ = strings.Cut(ex, "```")
	start := time.Unix(1e9, 0)
	c := NewHostCollector(HostOptions{Host: &query.Host{Sys: demo.LiveSysfs(func() time.Time { return start })}, TableMaxAge: time.Minute,
		Now: func() time.Time { return start }})
	out := gatherText(t, c)
	lines := strings.Split(strings.TrimSpace(ex), "\n")
	if len(lines) < 10 {
		t.Fatalf("the example has %d lines", len(lines))
	}
	for _, l := range lines {
		if !strings.Contains(out, l+"\n") {
			t.Errorf("docs/exporter.md example line not in the demo host's metrics: %s", l)
		}
	}
}
