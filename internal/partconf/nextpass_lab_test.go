package partconf_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/lab"
	"github.com/ibkey/ibkey/internal/partconf"
	"github.com/ibkey/ibkey/internal/query"
)

// TestLabNextPass: with -W, a table holding 0x7fff at index 0 (left by a run without
// -W) and `Default=0x7fff, defmember=both : ALL` take OpenSM two passes: the first
// writes 0xffff over the 0x7fff it keeps at index 0, the second adds 0x7fff
// (onePassFrom0x7fff). The model of each run, from the tables before it, is what
// OpenSM programs; fabric check after the first pass says so (partitions-next-pass,
// a warning, and no wrong membership or moved index), and after the second finds
// nothing.
func TestLabNextPass(t *testing.T) {
	if testing.Short() {
		t.Skip("lab: -short")
	}
	net, err := filepath.Abs(filepath.Join("testdata", "lab", "net"))
	if err != nil {
		t.Fatal(err)
	}
	l := lab.Start(t, net, &lab.Options{ToolNode: "HcaA"})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tr := l.Dial(t, "HcaA", mad.Options{})
	sweep := func() *fabric.Fabric {
		t.Helper()
		f, err := query.Sweep(ctx, tr, query.SweepOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	const both = "Default=0x7fff, defmember=both : ALL, SELF=full ;\n"
	if err := l.RunOpenSM("Default=0x7fff : ALL, SELF=full ;\n", false); err != nil {
		t.Fatal(err)
	}
	conf := partconf.Parse("p.conf", []byte(both))
	opt := partconf.Options{AllowBoth: true}
	for pass, wantRules := range []string{"partitions-next-pass", ""} {
		before := partconf.NewFabricModel(conf, sweep(), opt) // what this pass programs
		if err := l.RunOpenSM(both, true); err != nil {
			t.Fatal(err)
		}
		f := sweep()
		ports, _ := partconf.FabricPorts(f)
		for _, p := range ports {
			var got []check.PKey
			for _, n := range f.Nodes {
				for _, q := range n.Ports {
					if q.GUID == p.GUID && n.IsEndPort(q) {
						got = trim(q.PKeys)
					}
				}
			}
			if want := before.TableValues(p.GUID); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("pass %d, port %s: model %v, OpenSM %v", pass+1, p.GUID, want, got)
			}
		}
		var rules []string
		for _, fd := range partconf.CompareFabric(f, partconf.NewFabricModel(conf, f, opt)) {
			rules = append(rules, fd.Rule)
			if fd.Rule != partconf.RuleNextPass {
				t.Errorf("pass %d: %s", pass+1, fd)
			}
		}
		// Three HCAs and the switch's port 0; the SM's port is a full member only
		// (SELF=full).
		if wantRules != "" && len(rules) != 4 {
			t.Errorf("pass %d: findings %v, want %s on 4 ports", pass+1, rules, wantRules)
		}
	}
}

// TestLabNextPassHUP follows partitions-next-pass's action on a running OpenSM: after
// its first pass (the daemon started with allow_both_pkeys, which kill -HUP does not
// re-read: osm_subnet.c opt_tbl) the finding is there on 4 ports; one kill -HUP, and
// fabric check finds nothing. OpenSM 3.3.23's second heavy sweep added 0x7fff, as a
// second run does.
func TestLabNextPassHUP(t *testing.T) {
	if testing.Short() {
		t.Skip("lab: -short")
	}
	net, err := filepath.Abs(filepath.Join("testdata", "lab", "net"))
	if err != nil {
		t.Fatal(err)
	}
	l := lab.Start(t, net, &lab.Options{ToolNode: "HcaA"})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tr := l.Dial(t, "HcaA", mad.Options{})
	const both = "Default=0x7fff, defmember=both : ALL, SELF=full ;\n"
	if err := l.RunOpenSM("Default=0x7fff : ALL, SELF=full ;\n", false); err != nil {
		t.Fatal(err)
	}
	conf := partconf.Parse("p.conf", []byte(both))
	findings := func() map[string]int {
		t.Helper()
		f, err := query.Sweep(ctx, tr, query.SweepOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rules := map[string]int{}
		for _, fd := range partconf.CompareFabric(f, partconf.NewFabricModel(conf, f, partconf.Options{AllowBoth: true})) {
			rules[fd.Rule]++
		}
		return rules
	}
	osm := l.StartOpenSMDaemon(t, both, "allow_both_pkeys TRUE")
	if got := findings(); len(got) != 1 || got[partconf.RuleNextPass] != 4 {
		t.Fatalf("after the daemon's first pass: %v, want %s on 4 ports", got, partconf.RuleNextPass)
	}
	if err := osm.Resweep(time.Minute); err != nil {
		t.Fatal(err)
	}
	if got := findings(); len(got) != 0 {
		t.Errorf("after kill -HUP: %v, want none", got)
	}
}
