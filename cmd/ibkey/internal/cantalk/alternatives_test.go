package cantalk

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

	"github.com/ibkey/ibkey/internal/check"
)

// The generated test of can-talk --partitions against its own alternatives: a file
// without --sm-guid leaves open which port SELF is (osm_prtn_config.c puts any SELF
// key on the SM's port), and without --router whether an end is a router port
// (ALL_ROUTERS, not ALL_CAS). The answer without them (query.CanTalk with its
// alternatives) must say as known (non-null) only what every way of giving them says
// alike, and every field on which they differ must be null, with exit 4 when the
// verdicts differ. Each way of giving them is a run of the command itself with
// --sm-guid (an end, or a third port) and --router (none, either end, both): OpenSM
// runs on a CA port, so an end that is the SM's port is not a router port, and one
// SM at a time.

// altGUIDs are the ports a drawn file names (the last one is never named).
var altGUIDs = []string{"0x0002c90300000a01", "0x0002c90300000a02", "0x0002c90300000a03", "0x0002c90300000a04"}

// altOther is the SM's port when it is neither end.
const altOther = "0x0002c903000009ff"

// altFile draws a partitions file: maybe a Default line (ALL or ALL_CAS limited or
// full, maybe SELF), one to four partitions of ALL, ALL_CAS, ALL_SWITCHES,
// ALL_ROUTERS, SELF and the GUIDs but the last, with every membership.
func altFile(rng *rand.Rand, guids []string) string {
	mship := func() string {
		return []string{"", "=full", "=limited", "=both", "=limited", "=full"}[rng.IntN(6)]
	}
	item := func() string {
		if rng.IntN(5) < 2 {
			return []string{"ALL", "ALL_CAS", "ALL_SWITCHES", "ALL_ROUTERS", "SELF", "SELF", "ALL_ROUTERS"}[rng.IntN(7)] + mship()
		}
		return guids[rng.IntN(len(guids)-1)] + mship()
	}
	var b strings.Builder
	switch rng.IntN(4) {
	case 0: // none: OpenSM's "Default=0x7fff : ALL=limited, SELF=full"
	case 1:
		fmt.Fprintf(&b, "Default=0x7fff : %s%s ;\n", []string{"ALL", "ALL_CAS"}[rng.IntN(2)], mship())
	default:
		fmt.Fprintf(&b, "Default=0x7fff : %s%s, SELF=full ;\n", []string{"ALL", "ALL_CAS"}[rng.IntN(2)], []string{"=limited", "=full", ""}[rng.IntN(3)])
	}
	for i := range 1 + rng.IntN(4) {
		var items []string
		for range 1 + rng.IntN(4) {
			items = append(items, item())
		}
		fmt.Fprintf(&b, "p%d=0x%04x : %s ;\n", i, 1+rng.IntN(3), strings.Join(items, ", "))
	}
	return b.String()
}

// altEndpoint draws an end: a GUID (maybe not in the file), maybe pkey= (either
// membership) and qp=/qkey=, or now and then a P_Key value.
func altEndpoint(rng *rand.Rand, not string) string {
	opts := ""
	if rng.IntN(6) == 0 {
		opts += ",qp=ud,qkey=0x11"
		if rng.IntN(2) == 0 {
			opts += fmt.Sprintf(",wr_qkey=0x%x", []int{0x11, 0x22, 0x80000000}[rng.IntN(3)])
		}
	}
	if rng.IntN(8) == 0 {
		return fmt.Sprintf("0x%04x", []int{0x8001, 0x0002, 0xffff, 0x7fff}[rng.IntN(4)]) + opts
	}
	if rng.IntN(3) == 0 {
		opts = fmt.Sprintf(",pkey=0x%04x", []int{0, 0x8000}[rng.IntN(2)]|[]int{1, 2, 3, 0x7fff}[rng.IntN(4)]) + opts
	}
	for {
		if g := altGUIDs[rng.IntN(len(altGUIDs))]; g != not {
			return g + opts
		}
	}
}

// altDoc is what the comparison reads of can-talk's JSON.
type altDoc struct {
	CanTalk    *bool           `json:"can_talk"`
	OneWay     *bool           `json:"one_way"`
	Verdict    string          `json:"verdict"`
	AToB       altDir          `json:"a_to_b"`
	BToA       altDir          `json:"b_to_a"`
	Shared     []altShared     `json:"shared_partitions"`
	Complete   *bool           `json:"shared_partitions_complete"`
	Reasons    []string        `json:"reasons"`
	Unresolved json.RawMessage `json:"unresolved"`
}

type altShared struct {
	Key   string  `json:"key"`
	Works *bool   `json:"works"`
	A     altSide `json:"a"`
	B     altSide `json:"b"`
}

// altSide is an end's entry for a shared partition (null: not known).
type altSide struct {
	PKey *string `json:"pkey"`
	Both *bool   `json:"both_memberships"`
}

type altDir struct {
	Reasons  []string        `json:"reasons"`
	OK       *bool           `json:"ok"`
	LinkOK   *bool           `json:"link_ok"`
	PKeyOK   *bool           `json:"pkey_ok"`
	SwitchOK json.RawMessage `json:"switch_ok"` // absent: passes
	QKey     string          `json:"qkey_check"`
}

// altFields are a document's fields by name, as the comparison sees them: "null" for
// not known, a shared partition not listed as not working ("false"), or not known
// when the list may miss one (shared_partitions_complete false); each listed
// partition's entry of each end ("entry a KEY": its P_Key and both_memberships).
func altFields(d altDoc, keys []string) map[string]string {
	b := func(p *bool) string {
		if p == nil {
			return "null"
		}
		return fmt.Sprint(*p)
	}
	verdict := d.Verdict
	if verdict == "unknown" {
		verdict = "null"
	}
	f := map[string]string{"can_talk": b(d.CanTalk), "one_way": b(d.OneWay), "verdict": verdict}
	for _, x := range []struct {
		name string
		d    altDir
	}{{"a_to_b", d.AToB}, {"b_to_a", d.BToA}} {
		if d.Unresolved != nil {
			// An end no QP can use (a pinned key its table lacks): no directions;
			// on a no the P_Key rule fails both ways.
			if d.Verdict == "no" {
				f[x.name+".ok"], f[x.name+".pkey_ok"] = "false", "false"
			}
			continue
		}
		sw := string(x.d.SwitchOK)
		if sw == "" {
			sw = "true"
		}
		f[x.name+".ok"], f[x.name+".link_ok"], f[x.name+".pkey_ok"], f[x.name+".switch_ok"], f[x.name+".qkey_check"] =
			b(x.d.OK), b(x.d.LinkOK), b(x.d.PKeyOK), sw, x.d.QKey
	}
	for _, k := range keys {
		// Not listed: not shared (an end's entry, if it has one, is not in the
		// document, so not compared).
		f["works "+k] = "false"
		if d.Complete != nil && !*d.Complete {
			f["works "+k], f["entry a "+k], f["entry b "+k] = "null", "null", "null" // the list may miss it
		}
	}
	for _, s := range d.Shared {
		f["works "+s.Key] = b(s.Works)
		for _, x := range []struct {
			end  string
			side altSide
		}{{"a", s.A}, {"b", s.B}} {
			if x.side.PKey == nil {
				f["entry "+x.end+" "+s.Key] = "null"
				continue
			}
			f["entry "+x.end+" "+s.Key] = fmt.Sprintf("%s both %v", *x.side.PKey, *x.side.Both)
		}
	}
	return f
}

func TestAlternativesGenerated(t *testing.T) {
	n := 300
	if testing.Short() {
		n = 60
	}
	if v, _ := strconv.Atoi(os.Getenv("IBKEY_ALTERNATIVES")); v > 0 {
		n = v // a longer soak: IBKEY_ALTERNATIVES=5000
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(14, 0))
	stats := map[string]int{}
	for c := range n {
		text := altFile(rng, altGUIDs)
		file := filepath.Join(dir, fmt.Sprintf("f%d.conf", c))
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		a := altEndpoint(rng, "")
		b := altEndpoint(rng, strings.SplitN(a, ",", 2)[0])
		guidOf := func(e string) string {
			g := strings.SplitN(e, ",", 2)[0]
			if len(g) == 18 {
				return g
			}
			return ""
		}
		ga, gb := guidOf(a), guidOf(b)
		run := func(flags ...string) (altDoc, int, string) {
			return altRun(t, text, file, a, b, flags...)
		}
		got, code, out := run()
		// Every way of giving what was not given.
		type alt struct {
			name string
			doc  altDoc
			code int
			// gets: what the file gives each GUID end, item by item ("KEY (NAME)
			// from ITEM at POS"), read from the reasons of a run of the end with
			// itself, which list all of it.
			gets map[string][]string
		}
		var alts []alt
		ends := []string{}
		for _, g := range []string{ga, gb} {
			if g != "" {
				ends = append(ends, g)
			}
		}
		for _, sm := range append(slices.Clone(ends), altOther) {
			for mask := range 1 << len(ends) {
				var routers []string
				for i, g := range ends {
					if mask&(1<<i) != 0 {
						routers = append(routers, g)
					}
				}
				if slices.Contains(routers, sm) {
					continue // OpenSM runs on a CA port
				}
				r := "none"
				if len(routers) > 0 {
					r = strings.Join(routers, ",")
				}
				d, c, _ := run("--sm-guid", sm, "--router", r)
				gets := map[string][]string{}
				for _, g := range ends {
					self, _, _ := altRun(t, text, file, g, g, "--sm-guid", sm, "--router", r)
					for _, reason := range self.Reasons {
						if label, items, ok := altGets(reason); ok && label == "A ("+g+")" {
							gets[g] = items
						}
					}
				}
				alts = append(alts, alt{fmt.Sprintf("--sm-guid %s --router %s", sm, r), d, c, gets})
			}
		}
		var keys []string
		for _, x := range append([]alt{{doc: got}}, alts...) {
			for _, s := range x.doc.Shared {
				if !slices.Contains(keys, s.Key) {
					keys = append(keys, s.Key)
				}
			}
		}
		mine := altFields(got, keys)
		var problems []string
		differs := false
		for field, v := range mine {
			same, first := true, ""
			for _, x := range alts {
				w, ok := altFields(x.doc, keys)[field]
				if !ok {
					continue // an end no QP can use has no link, switch or Q_Key rule
				}
				if w != v && v != "null" {
					problems = append(problems, fmt.Sprintf("%s is %s; with %s it is %s", field, v, x.name, w))
				}
				if first == "" {
					first = w
				}
				same = same && w == first
			}
			if field == "verdict" && !same {
				differs = true
			}
			if !same {
				stats["differs "+strings.SplitN(field, " ", 2)[0]]++
			}
		}
		if differs && (code != 4 || got.Verdict != "unknown") {
			problems = append(problems, fmt.Sprintf("the verdicts differ: exit %d verdict %s, want 4 unknown", code, got.Verdict))
		}
		if !differs && got.Verdict != alts[0].doc.Verdict {
			stats["unknown though every alternative agrees"]++
			problems = append(problems, fmt.Sprintf("every alternative says %s (exit %d); without them: %s (exit %d)", alts[0].doc.Verdict, alts[0].code, got.Verdict, code))
		}
		// A reason is a fact, said by every alternative, unless it says what it
		// takes ("taking ...") or that the answer is not known.
		for _, x := range alts {
			for _, l := range []struct {
				name        string
				mine, yours []string
			}{{"reasons", got.Reasons, x.doc.Reasons}, {"a_to_b.reasons", got.AToB.Reasons, x.doc.AToB.Reasons}, {"b_to_a.reasons", got.BToA.Reasons, x.doc.BToA.Reasons}} {
				if x.doc.Unresolved != nil && l.name != "reasons" {
					continue
				}
				for _, r := range l.mine {
					// The partition they share, said without the others that work,
					// holds beside more (the notes name them).
					same := slices.ContainsFunc(l.yours, func(o string) bool { return o == r || strings.HasPrefix(o, r+check.OthersWork) })
					if strings.Contains(r, "taking ") || strings.Contains(r, "as taken") || strings.HasPrefix(r, "not known: ") || same ||
						x.doc.Unresolved != nil && strings.Contains(r, "Q_Key") { // an unresolved no says only its end's table
						continue
					}
					// What the file gives an end: each item is what it gives the
					// end under this alternative too (the items listed follow the
					// partitions shared, which differ).
					if label, items, ok := altGets(r); ok {
						for _, it := range items {
							if !slices.Contains(x.gets[strings.SplitN(label, " ", 2)[0]], it) {
								problems = append(problems, fmt.Sprintf("%s says %s gets %q; with %s it does not (it gets %q)", l.name, label, it, x.name, x.gets[label]))
							}
						}
						continue
					}
					problems = append(problems, fmt.Sprintf("%s says %q; with %s it does not", l.name, r, x.name))
				}
			}
		}
		// shared_partitions_complete: every partition an alternative lists is listed.
		if got.Complete != nil && *got.Complete {
			for _, x := range alts {
				for _, s := range x.doc.Shared {
					if !slices.ContainsFunc(got.Shared, func(o altShared) bool { return o.Key == s.Key }) {
						problems = append(problems, fmt.Sprintf("shared_partitions_complete is true; with %s they share %s too", x.name, s.Key))
					}
				}
			}
		}
		if differs {
			stats["verdicts differ"]++
		} else {
			stats["verdicts agree"]++
		}
		if len(problems) > 0 {
			slices.Sort(problems)
			t.Errorf("case %d: can-talk --partitions F %s %s (exit %d)\nF:\n%s%s\n%s", c, a, b, code, text, strings.Join(slices.Compact(problems), "\n"), out)
		}
	}
	t.Logf("%d cases: %v", n, stats)
}

// altRun runs can-talk --partitions file -o json with flags for a and b.
func altRun(t *testing.T, text, file, a, b string, flags ...string) (altDoc, int, string) {
	t.Helper()
	args := append([]string{"can-talk", "--partitions", file, "-o", "json"}, flags...)
	r := runIbkey(t, append(args, a, b)...)
	var d altDoc
	if err := json.Unmarshal([]byte(r.Stdout), &d); err != nil {
		t.Fatalf("%s\n%s: %v\n%s%s", text, strings.Join(append(args, a, b), " "), err, r.Stdout, r.Stderr)
	}
	return d, r.Code, r.Stdout
}

// altGets reads a reason "LABEL gets ITEM; ITEM (taking ...)": the label and each
// item's entry, "KEY (NAME)" ("and N more" left out).
func altGets(reason string) (string, []string, bool) {
	label, rest, ok := strings.Cut(reason, " gets ")
	if !ok || strings.Contains(rest, "gets no entry") || strings.HasPrefix(rest, "no entry") {
		return "", nil, false
	}
	rest, _, _ = strings.Cut(rest, " (taking ")
	var items []string
	for _, it := range strings.Split(rest, "; ") {
		if !strings.HasPrefix(it, "and ") {
			// The key and partition: which of several items that give the same
			// entry the model names may change with the port (SELF=full beside
			// ALL=full), and both are true.
			key, _, _ := strings.Cut(it, " from ")
			items = append(items, key)
		}
	}
	return label, items, true
}
