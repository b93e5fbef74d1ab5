package partitions

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestMatrixSummaryGenerated: the summary of `partitions matrix -o json` without
// --sm-guid and --router (random files with SELF, ALL_ROUTERS, ALL_CAS, ALL_SWITCHES,
// every membership, a Default line or none) states a figure (a partition's full,
// limited and pairs, a port's member_of and reaches, the groups, only_default) only
// when every run with them (--sm-guid each port or another, --router any set of the
// others) states the same; every figure they differ on is null, or for reaches in
// reaches_not_known, and the exit is then 4. (The SM on a port the file does not
// name is a port of the matrix too, so it is the runs without --sm-guid, where SELF
// changes no port's table.)
func TestMatrixSummaryGenerated(t *testing.T) {
	guids := []string{"0x0002c90300000a01", "0x0002c90300000a02", "0x0002c90300000a03"}
	n := 120
	if testing.Short() {
		n = 30
	}
	if v, _ := strconv.Atoi(os.Getenv("IBKEY_ALTERNATIVES")); v > 0 {
		n = v
	}
	rng := rand.New(rand.NewPCG(14, 1))
	dir := t.TempDir()
	mship := func() string { return []string{"", "=full", "=limited", "=both"}[rng.IntN(4)] }
	unknownStats := map[string]int{}
	for c := range n {
		var b strings.Builder
		switch rng.IntN(3) {
		case 0: // none: SELF=full in the implied Default
		case 1:
			fmt.Fprintf(&b, "Default=0x7fff : %s%s ;\n", []string{"ALL", "ALL_CAS"}[rng.IntN(2)], mship())
		default:
			fmt.Fprintf(&b, "Default=0x7fff : ALL%s, SELF=full ;\n", []string{"=limited", "=full"}[rng.IntN(2)])
		}
		for i := range 1 + rng.IntN(4) {
			var items []string
			for range 1 + rng.IntN(3) {
				if rng.IntN(2) == 0 {
					items = append(items, []string{"ALL", "ALL_CAS", "ALL_SWITCHES", "ALL_ROUTERS", "SELF"}[rng.IntN(5)]+mship())
				} else {
					items = append(items, guids[rng.IntN(len(guids))]+mship())
				}
			}
			fmt.Fprintf(&b, "p%d=0x%04x : %s ;\n", i, 1+rng.IntN(4), strings.Join(items, ", "))
		}
		text := b.String()
		file := filepath.Join(dir, fmt.Sprintf("m%d.conf", c))
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		selfMatters := false
		run := func(flags ...string) (summaryDoc, int) {
			r := runIbkey(t, false, nil, append([]string{"partitions", "matrix", "--summary", "-o", "json", file}, flags...)...)
			var d struct {
				Ports   []string   `json:"ports"`
				Summary summaryDoc `json:"summary"`
			}
			if err := json.Unmarshal([]byte(r.Stdout), &d); err != nil {
				t.Fatalf("%s: %v\n%s%s", text, err, r.Stdout, r.Stderr)
			}
			d.Summary.ports = d.Ports
			if len(flags) == 0 {
				selfMatters = strings.Contains(r.Stderr, "for the port OpenSM runs on")
			}
			return d.Summary, r.Code
		}
		got, code := run()
		// The SM on a port the file does not name adds that port to the matrix: no
		// figure compares. Without SELF changing a port's table, the runs without
		// --sm-guid are the SM elsewhere.
		sms := slices.Clone(got.ports)
		if !selfMatters {
			sms = append(sms, "")
		}
		mine := got.fields()
		var problems []string
		differs := false
		for _, sm := range sms {
			var rest []string
			for _, g := range got.ports {
				if g != sm {
					rest = append(rest, g)
				}
			}
			for mask := range 1 << len(rest) {
				var routers []string
				for i, g := range rest {
					if mask&(1<<i) != 0 {
						routers = append(routers, g)
					}
				}
				r := "none"
				if len(routers) > 0 {
					r = strings.Join(routers, ",")
				}
				flags := []string{"--router", r}
				if sm != "" {
					flags = append(flags, "--sm-guid", sm)
				}
				alt, _ := run(flags...)
				theirs := alt.fields()
				for k, v := range mine {
					w, ok := theirs[k]
					if !ok && strings.Contains("full limited pairs", strings.SplitN(k, " ", 2)[0]) {
						w = "0" // not listed: no members
					}
					if w == "null" {
						continue // that run cannot say either (a router port may be the SM's: SELF)
					}
					if v != w {
						differs = true
					}
					if v != "null" && v != w && !strings.HasPrefix(k, "reach ") {
						problems = append(problems, fmt.Sprintf("%s is %s; with --sm-guid %s --router %s it is %s", k, v, sm, r, w))
					}
				}
				// reaches: those stated are reached; those not listed in either list
				// are not.
				for _, p := range alt.Ports {
					for _, q := range got.Ports {
						if q.PortGUID != p.PortGUID {
							continue
						}
						for _, k := range q.Reaches {
							if !slices.Contains(p.Reaches, k) && !slices.Contains(p.ReachesNotKnown, k) {
								problems = append(problems, fmt.Sprintf("%s reaches %s; with --sm-guid %s --router %s it does not", q.PortGUID, k, sm, r))
							}
						}
						for _, k := range p.Reaches {
							if !slices.Contains(q.Reaches, k) && !slices.Contains(q.ReachesNotKnown, k) {
								problems = append(problems, fmt.Sprintf("%s does not reach %s; with --sm-guid %s --router %s it does", q.PortGUID, k, sm, r))
							}
						}
					}
				}
				for _, pr := range alt.Partitions {
					if _, ok := mine["full "+pr.Key]; !ok && pr.Full != nil && *pr.Full+nz(pr.Limited) > 0 {
						problems = append(problems, fmt.Sprintf("partition %s is not listed; with --sm-guid %s --router %s it has members", pr.Key, sm, r))
					}
				}
			}
		}
		for k, v := range mine {
			if v == "null" {
				unknownStats[strings.SplitN(k, " ", 2)[0]]++
			}
		}
		if differs && code != 4 {
			problems = append(problems, fmt.Sprintf("some figure differs: exit %d, want 4", code))
		}
		if len(problems) > 0 {
			slices.Sort(problems)
			t.Errorf("case %d: partitions matrix --summary F (exit %d)\nF:\n%s%s", c, code, text, strings.Join(slices.Compact(problems), "\n"))
		}
	}
	t.Logf("%d files; figures not known: %v", n, unknownStats)
}

// summaryDoc is the summary of partitions matrix -o json.
type summaryDoc struct {
	ports      []string
	Partitions []struct {
		Key           string `json:"key"`
		Full, Limited *int
		Pairs         *int64
	} `json:"partitions"`
	Ports []struct {
		PortGUID        string   `json:"port_guid"`
		MemberOf        *int     `json:"member_of"`
		Reaches         []string `json:"reaches"`
		ReachesNotKnown []string `json:"reaches_not_known"`
	} `json:"ports"`
	Groups               [][]string `json:"groups"`
	GroupsWithoutDefault [][]string `json:"groups_without_default"`
	OnlyDefault          []string   `json:"only_default"`
}

func nz(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// fields are the summary's figures by name ("null": not known); a partition not
// listed has no members.
func (d summaryDoc) fields() map[string]string {
	f := map[string]string{}
	val := func(p any) string {
		b, _ := json.Marshal(p)
		return string(b)
	}
	for _, pr := range d.Partitions {
		f["full "+pr.Key], f["limited "+pr.Key], f["pairs "+pr.Key] = val(pr.Full), val(pr.Limited), val(pr.Pairs)
	}
	for _, p := range d.Ports {
		f["member_of "+p.PortGUID] = val(p.MemberOf)
	}
	sorted := func(gs [][]string) string {
		if gs == nil {
			return "null"
		}
		var out []string
		for _, g := range gs {
			out = append(out, strings.Join(g, ","))
		}
		slices.Sort(out)
		return strings.Join(out, " ")
	}
	f["groups"], f["groups_without_default"] = sorted(d.Groups), sorted(d.GroupsWithoutDefault)
	f["only_default"] = val(d.OnlyDefault)
	return f
}
