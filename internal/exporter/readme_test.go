package exporter

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/demo"
	"github.com/ibkey/ibkey/internal/query"
)

// TestReadmeMetrics: docs/exporter.md's "Metric names" section has every metric of the
// catalog with its labels and help, and its `--once` example is what the collector
// writes on the demo host.
func TestReadmeMetrics(t *testing.T) {
	data, err := os.ReadFile("../../docs/exporter.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	_, names, ok := strings.Cut(doc, "\n## Metric names\n")
	if !ok {
		t.Fatal("docs/exporter.md has no \"## Metric names\" section")
	}
	names, _, _ = strings.Cut(names, "\n## ")
	for _, m := range Catalog() {
		if !strings.Contains(names, "| `"+m.Name+"` | "+strings.Join(m.Labels, ", ")+" | "+m.Help+" |") {
			t.Errorf("docs/exporter.md's Metric names section has no row | `%s` | labels | help |, as the catalog says", m.Name)
		}
	}
	_, ex, ok := strings.Cut(doc, "$ ibkey --demo exporter --once")
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
		if strings.HasPrefix(l, "ibkey: ") || strings.HasPrefix(l, "# exit ") {
			continue // stderr and the exit code, which cmd/ibkey's TestDocs checks
		}
		if !strings.Contains(out, l+"\n") {
			t.Errorf("docs/exporter.md example line not in the demo host's metrics: %s", l)
		}
	}
}
