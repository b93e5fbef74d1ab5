package exporter

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"testing"
)

// TestAlertRules checks the sample rules with promtool (syntax, then the unit tests in
// ibkey-rules_test.yml) and that every metric they use is one the exporter writes.
func TestAlertRules(t *testing.T) {
	const dir = "../../contrib/prometheus"
	rules, err := os.ReadFile(dir + "/ibkey-rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, m := range Catalog() {
		known[m.Name] = true
	}
	for _, name := range regexp.MustCompile(`\bibkey_[a-z_]+`).FindAllString(string(rules), -1) {
		if !known[name] {
			t.Errorf("ibkey-rules.yml uses %s, which the exporter does not write", name)
		}
	}
	promtool := requireTool(t, "promtool")
	for _, args := range [][]string{
		{"check", "rules", "ibkey-rules.yml"},
		{"test", "rules", "ibkey-rules_test.yml"},
	} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %v: %v\n%s", args, err, out)
		}
	}
}

// TestCatalogNames: every metric is described once, and the names follow the
// Prometheus conventions the exporter promises (no _total on a gauge); a series of
// something not read (a name ending in _unreadable or _unread) says why in a reason
// label, as ibkey_device_unreadable does.
func TestCatalogNames(t *testing.T) {
	seen := map[string]bool{}
	name := regexp.MustCompile(`^ibkey_(fabric_)?[a-z_]+$`)
	for _, m := range Catalog() {
		if seen[m.Name] {
			t.Errorf("%s twice in Catalog", m.Name)
		}
		seen[m.Name] = true
		if !name.MatchString(m.Name) {
			t.Errorf("bad name %s", m.Name)
		}
		// portSeries makes a port's four label pairs once and gives them to every
		// series of the port as its first labels.
		if m.Mode == ModeFabric && slices.Contains(m.Labels, "node_guid") && !slices.Equal(m.Labels[:4], []string{"node_guid", "node_name", "port", "lid"}) {
			t.Errorf("%s: a fabric port's labels are node_guid, node_name, port, lid first, not %v", m.Name, m.Labels)
		}
		if regexp.MustCompile(`_unread(able)?$`).MatchString(m.Name) && !slices.Contains(m.Labels, "reason") {
			t.Errorf("%s: something not read with no reason label", m.Name)
		}
		if m.Name != "ibkey_fabric_sweeps_total" && m.Name != "ibkey_sm_events_total" && m.Name != "ibkey_sm_log_lines_total" && regexp.MustCompile(`_total$`).MatchString(m.Name) {
			t.Errorf("%s: only real counters end in _total", m.Name)
		}
	}
}
