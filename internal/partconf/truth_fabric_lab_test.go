package partconf_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/lab"
	"github.com/ibkey/ibkey/internal/partconf"
	"github.com/ibkey/ibkey/internal/query"
)

// TestLabTruthFabric is the generator of TestLabTruth through the fabric commands'
// path (`make truth` only: IBKEY_TRUTH=N runs N topologies): after OpenSM (a new
// process per file) programs a random topology from random files, ibkey's sweep
// (query.Sweep) and `fabric check --partitions` (fabric.AuditFabric,
// partconf.CompareFabric) must agree with the fabric OpenSM manages:
//   - the sweep holds exactly the end ports OpenSM reaches (a CA does not forward
//     directed-route SMPs, so a port cabled back to back behind the local HCA's other
//     port is not part of the SM's subnet);
//   - each swept end port's table is what a direct Get P_KeyTable reads;
//   - fabric check on a fabric OpenSM has just programmed from the file reports no
//     partition difference with it (missing, extra, wrong membership, moved index) and
//     no hca-key-not-on-switch;
//   - a file OpenSM crashes on is one partitions check says it cannot predict;
//   - fabric check on the tables before a file predicts, index by index, the tables
//     OpenSM then programs from it (the model AuditFabric compares with).
//
// OpenSM reads its options from an opensm.conf (-F) that fabric check reads too
// (--opensm-conf): allow_both_pkeys, keep_pkey_indexes and part_enforce vary.
//
// It counts checks and agreements and fails on every disagreement. (Those are the
// fabric sweep's and fabric check's: internal/query and internal/fabric.)
func TestLabTruthFabric(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("IBKEY_TRUTH"))
	if n <= 0 {
		t.Skip("make truth only (IBKEY_TRUTH=N)")
	}
	lab.Require(t)
	checks, agree := map[string]int{}, map[string]int{}
	var problems []string
	count := func(kind string, ok bool, problem func() string) {
		checks[kind]++
		if ok {
			agree[kind]++
		} else {
			problems = append(problems, problem())
		}
	}
	runs, opts := 0, map[string]int{}
	for i := 0; i < n; i++ {
		// One subtest per topology: its simulator stops when it ends.
		t.Run(fmt.Sprint(5000+i), func(t *testing.T) { runs += truthFabricTopology(t, uint64(5000+i), count, opts) })
	}
	var by []string
	total, ok := 0, 0
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range checks {
			if !yield(k) {
				return
			}
		}
	}) {
		by = append(by, fmt.Sprintf("%s %d/%d", k, agree[k], checks[k]))
		total += checks[k]
		ok += agree[k]
	}
	var with []string
	for _, k := range slices.Sorted(maps.Keys(opts)) {
		with = append(with, fmt.Sprintf("%s %d", k, opts[k]))
	}
	summary := fmt.Sprintf("truth (fabric sweep and fabric check): %d/%d checks agree (%s) in %d OpenSM runs on %d topologies (opensm.conf with %s)",
		ok, total, strings.Join(by, ", "), runs, n, strings.Join(with, ", "))
	t.Log(summary)
	fmt.Println(summary)
	for _, p := range problems {
		t.Errorf("DISAGREE %s", p)
	}
}

// truthFabricTopology runs three files on one random topology; it returns how many
// OpenSM runs it compared, and counts their options other than the defaults in opts.
func truthFabricTopology(t *testing.T, seed uint64, count func(kind string, ok bool, problem func() string), opts map[string]int) int {
	runs := 0
	{
		rng := rand.New(rand.NewPCG(seed, 0xfab))
		topo := partconf.RandomTopology(rng)
		dir := t.TempDir()
		net := filepath.Join(dir, "net")
		if err := os.WriteFile(net, []byte(topo.Net()), 0o644); err != nil {
			t.Fatal(err)
		}
		l := lab.Start(t, net, &lab.Options{ToolNode: "Hca1"}) // OpenSM runs at the first CA, Hca1 too
		for _, c := range topo.RouterConsole() {
			l.MustConsole(c)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		tr, err := mad.DialIbsim(ctx, mad.IbsimOptions{SockName: l.SockName, Node: "Hca1"})
		if err != nil {
			t.Fatal(err)
		}
		managed := map[check.GUID]partconf.GenPort{}
		var guids []uint64
		for _, gp := range topo.EndPorts() {
			g := gp.Node.GUID + uint64(gp.Num)
			if gp.Node.Type == lab.Switch {
				g = gp.Node.GUID
			}
			if gp.Managed {
				managed[check.GUID(g)] = gp
			}
			guids = append(guids, g)
		}
		gopt := partconf.GenOptions{Ports: guids}
		file := partconf.NewGenFile(rng, gopt)
		// OpenSM's options come from a generator of their own (a seed runs the same
		// files as before they were drawn), in an opensm.conf that OpenSM reads (-F) and
		// fabric check reads (--opensm-conf: partconf.ParseOpenSMConf, AuditFabric):
		// keep_pkey_indexes FALSE in a third of the runs, part_enforce in, out and off
		// in one each in eight.
		orng := rand.New(rand.NewPCG(seed, 0x0c0f))
		osmConf := filepath.Join(dir, "opensm.conf")
		var last *fabric.Fabric // the sweep of the tables OpenSM left, nil if it ran since
		for k := 0; k < 3; k++ {
			if k > 0 {
				file = partconf.MutateGenFile(rng, file, gopt)
			}
			text := file.String()
			allowBoth := rng.IntN(2) == 0
			confText := fmt.Sprintf("allow_both_pkeys %s\nkeep_pkey_indexes %s\npart_enforce %s\n", strings.ToUpper(fmt.Sprint(allowBoth)),
				[...]string{"FALSE", "TRUE", "TRUE"}[orng.IntN(3)], [...]string{"both", "both", "both", "both", "both", "in", "out", "off"}[orng.IntN(8)])
			if err := os.WriteFile(osmConf, []byte(confText), 0o644); err != nil {
				t.Fatal(err)
			}
			where := func() string {
				return fmt.Sprintf("seed %d file %d\n--- opensm.conf:\n%s--- net:\n%s--- file:\n%s", seed, k+1, confText, topo.Net(), text)
			}
			// What fabric check --opensm-conf says OpenSM programs from the new file on
			// the tables the last one left (where a key goes with keep_pkey_indexes TRUE
			// or FALSE: partitions-index-moved).
			conf := partconf.Parse("p.conf", []byte(text))
			osm := partconf.ParseOpenSMConf(osmConf, []byte(confText))
			var predicted *partconf.Model
			if last != nil && conf.Uncertain == "" {
				_, predicted = partconf.AuditFabric(last, conf, osm, false)
			}
			last = nil
			if err := l.RunOpenSMArgs(text, "-F", osmConf); err != nil {
				t.Logf("OpenSM FAILED, %s:\n%v", where(), err) // the lab freed its ibsim slot
				if strings.Contains(err.Error(), "segmentation fault") {
					// A file OpenSM crashes on is one partitions check says it cannot
					// predict (a group in two partitions, or uninitialised memory).
					u := partconf.Parse("p.conf", []byte(text)).Uncertain
					count("crash-predicted", u != "", func() string {
						return fmt.Sprintf("OpenSM crashed on a file ibkey predicts, %s", where())
					})
				}
				break
			}
			runs++
			for _, line := range strings.Split(strings.TrimSpace(confText), "\n") {
				if line != "allow_both_pkeys FALSE" && line != "keep_pkey_indexes TRUE" && line != "part_enforce both" {
					opts[line]++
				}
			}
			f, err := query.Sweep(ctx, tr, query.SweepOptions{})
			if err != nil {
				t.Fatalf("seed %d: sweep: %v", seed, err)
			}
			last = f
			swept := map[check.GUID]*fabric.Port{}
			for _, nd := range f.Nodes {
				for _, p := range nd.Ports {
					if nd.IsEndPort(p) && p.GUID != 0 {
						swept[p.GUID] = p
					}
				}
			}
			for g, gp := range managed {
				_, ok := swept[g]
				count("sweep-ports", ok, func() string {
					return fmt.Sprintf("the sweep misses %s port %d (%s), which OpenSM manages: %s", gp.Node.Name, gp.Num, g, where())
				})
			}
			for g := range swept {
				_, ok := managed[g]
				count("sweep-ports", ok, func() string {
					return fmt.Sprintf("the sweep holds port %s, which OpenSM does not manage (not in the SM's subnet): %s", g, where())
				})
			}
			for g, p := range swept {
				gp, ok := managed[g]
				if !ok || p.PKeys == nil {
					continue
				}
				want := readTrimmed(ctx, t, tr, gp, p.TableSize)
				ok = slices.Equal(trim(p.PKeys), want)
				count("sweep-tables", ok, func() string {
					return fmt.Sprintf("port %s: the sweep read %v, Get P_KeyTable %v: %s", g, trim(p.PKeys), want, where())
				})
			}
			for g, p := range swept {
				if _, ok := managed[g]; !ok || p.PKeys == nil || predicted == nil {
					continue
				}
				want := predicted.TableValues(g)
				count("fabric-check-before", fmt.Sprint(trim(p.PKeys)) == fmt.Sprint(want), func() string {
					return fmt.Sprintf("port %s: fabric check on the tables before the file says OpenSM programs %v, OpenSM %v: %s", g, want, trim(p.PKeys), where())
				})
			}
			if conf.Uncertain != "" {
				continue
			}
			res, model := partconf.AuditFabric(f, conf, osm, false)
			var wrong []string
			nextPass := false
			for _, fd := range res.Findings {
				nextPass = nextPass || fd.Rule == partconf.RuleNextPass
				switch fd.Rule {
				case partconf.RuleMissingKey, partconf.RuleExtraKey, partconf.RuleWrongMembership, partconf.RuleIndexMoved, fabric.RuleHCAKeyNotOnSwitch:
					wrong = append(wrong, fd.String())
				}
			}
			count("fabric-check", len(wrong) == 0, func() string {
				return fmt.Sprintf("fabric check --partitions right after OpenSM programmed the file:\n  %s\n%s", strings.Join(wrong, "\n  "), where())
			})
			if !nextPass {
				continue
			}
			// partitions-next-pass says OpenSM's next pass adds a key: run it.
			last = nil
			if err := l.RunOpenSMArgs(text, "-F", osmConf); err != nil {
				t.Fatalf("seed %d: the next pass: %v", seed, err)
			}
			for g, gp := range managed {
				p, ok := swept[g]
				if !ok || p.PKeys == nil {
					continue
				}
				got := readTrimmed(ctx, t, tr, gp, p.TableSize)
				want := model.TableValues(g)
				count("next-pass", fmt.Sprint(got) == fmt.Sprint(want), func() string {
					return fmt.Sprintf("port %s after the next pass: model %v, OpenSM %v: %s", g, want, got, where())
				})
			}
		}
		tr.Close()
		cancel()
	}
	return runs
}

// readTrimmed reads the port's table with Get P_KeyTable, through its last valid entry.
func readTrimmed(ctx context.Context, t *testing.T, tr mad.Transport, gp partconf.GenPort, size int) []check.PKey {
	t.Helper()
	raw, err := mad.GetPKeyTable(ctx, tr, mad.DirectedRoute(gp.Route...), 0, size)
	if err != nil {
		t.Fatalf("P_KeyTable %s port %d: %v", gp.Node.Name, gp.Num, err)
	}
	out := make([]check.PKey, len(raw))
	for j, v := range raw {
		out[j] = check.PKey(v)
	}
	return trim(out)
}

func trim(t []check.PKey) []check.PKey {
	end := 0
	for i, v := range t {
		if v.Valid() {
			end = i + 1
		}
	}
	return t[:end]
}
