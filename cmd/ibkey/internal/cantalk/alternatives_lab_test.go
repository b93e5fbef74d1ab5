package cantalk

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/lab"
)

// TestLabAlternativesGenerated: can-talk --partitions without --sm-guid and --router
// against OpenSM itself. Random files (altFile: SELF, ALL_ROUTERS, ALL_CAS,
// ALL_SWITCHES, every membership, a Default line or none) over the partitions lab's
// HCAs; OpenSM runs at HcaA, so HcaA is the SM's port, and there are no router ports:
// one of the alternatives can-talk weighs is the truth. For every pair of HCAs, as
// ports and with pkey= for every key of either table, a definite answer (exit 0 or 1)
// must be the P_Key rule on the tables OpenSM programmed (read back with smpquery),
// and so must each shared partition's works and each end's entry where the JSON
// states them; UNKNOWN (exit 4) is counted. IBKEY_ALTERNATIVES_LAB=N runs N files (default 4).
func TestLabAlternativesGenerated(t *testing.T) {
	lab.Require(t)
	if testing.Short() {
		t.Skip("lab: -short")
	}
	n := 4
	if v, _ := strconv.Atoi(os.Getenv("IBKEY_ALTERNATIVES_LAB")); v > 0 {
		n = v
	}
	var guids []string
	for _, h := range lab.PartconfHCAs {
		guids = append(guids, check.GUID(h.GUID).String())
	}
	rng := rand.New(rand.NewPCG(14, 2))
	dir := t.TempDir()
	counts := map[int]int{}
	for c := range n {
		text := altFile(rng, guids)
		file := filepath.Join(dir, fmt.Sprintf("lab%d.conf", c))
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		// A lab a file (stopped with its subtest): OpenSM's outcome depends on what
		// the tables held before.
		var real map[uint64][]check.PKey
		t.Run(fmt.Sprint(c), func(t *testing.T) { real = lab.StartPartconf(t).ProgramFile(t, file, false) })
		if real == nil {
			continue
		}
		for i, a := range lab.PartconfHCAs {
			for _, b := range lab.PartconfHCAs[i+1:] {
				ta, tb := real[a.GUID], real[b.GUID]
				keys := map[check.PartitionKey]bool{}
				want := false
				for _, v := range append(append([]check.PKey(nil), ta...), tb...) {
					if v.Valid() {
						keys[v.Partition()] = true
						want = want || keyRule(ta, tb, v.Partition())
					}
				}
				pairs := [][3]string{{check.GUID(a.GUID).String(), check.GUID(b.GUID).String(), fmt.Sprint(want)}}
				for k := range keys {
					pairs = append(pairs, [3]string{fmt.Sprintf("%s,pkey=%s", check.GUID(a.GUID), k), fmt.Sprintf("%s,pkey=%s", check.GUID(b.GUID), k), fmt.Sprint(keyRule(ta, tb, k))})
				}
				for _, p := range pairs {
					r := runIbkey(t, "can-talk", "--partitions", file, "--table-size", "64", p[0], p[1])
					counts[r.Code]++
					if (r.Code == 0 || r.Code == 1) && fmt.Sprint(r.Code == 0) != p[2] {
						t.Errorf("can-talk --partitions F %s %s: exit %d; OpenSM at HcaA programmed %v / %v: the P_Key rule says %s\nF:\n%s%s%s", p[0], p[1], r.Code, ta, tb, p[2], text, r.Stdout, r.Stderr)
					}
					if r.Code != 0 && r.Code != 1 && r.Code != 4 {
						t.Errorf("can-talk --partitions F %s %s: exit %d\n%s%s", p[0], p[1], r.Code, r.Stdout, r.Stderr)
					}
					// What the JSON states of each shared partition: its works, and each
					// end's entry, as OpenSM programmed them.
					d, _, out := altRun(t, text, file, p[0], p[1], "--table-size", "64")
					for _, sp := range d.Shared {
						k, err := check.ParsePKey(sp.Key)
						if err != nil {
							t.Fatal(err)
						}
						if sp.Works != nil && *sp.Works != keyRule(ta, tb, k.Partition()) {
							t.Errorf("can-talk --partitions F %s %s: partition %s works %v; on the programmed tables %v / %v it does not\nF:\n%s%s", p[0], p[1], sp.Key, *sp.Works, ta, tb, text, out)
						}
						for _, x := range []struct {
							side  altSide
							table []check.PKey
						}{{sp.A, ta}, {sp.B, tb}} {
							if x.side.PKey == nil {
								continue
							}
							v, err := check.ParsePKey(*x.side.PKey)
							if err != nil {
								t.Fatal(err)
							}
							if !slices.Contains(x.table, v) {
								t.Errorf("can-talk --partitions F %s %s: partition %s: an end's entry is %s; OpenSM programmed %v\nF:\n%s%s", p[0], p[1], sp.Key, v, x.table, text, out)
							}
						}
					}
				}
			}
		}
	}
	t.Logf("%d files: exits %v (4: UNKNOWN, the assumption not given decides)", n, counts)
	if counts[0]+counts[1] == 0 {
		t.Error("no definite answer: nothing was compared with OpenSM")
	}
}
