package exporter

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/demo"
	"github.com/ibkey/ibkey/internal/query"
)

// TestReadmeMetrics: the README's "Metrics" section names every metric of the
// catalog, and its `--once` example is what the collector writes on the demo host.
func TestReadmeMetrics(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(data), "\n## Metrics: ")
	if !ok {
		t.Fatal("README has no \"## Metrics: \" section")
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	for _, m := range Catalog() {
		if !strings.Contains(sec, "`"+m.Name+"`") {
			t.Errorf("README's Metrics section does not name %s", m.Name)
		}
	}
	_, ex, ok := strings.Cut(sec, "$ ibkey --demo exporter --once")
	if !ok {
		t.Fatal("README's Metrics section has no --once example")
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
			t.Errorf("README example line not in the demo host's metrics: %s", l)
		}
	}
}
