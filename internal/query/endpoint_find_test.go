package query

import (
	"math/rand/v2"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/ibverbs"
)

// kernelFindPKey is ib_find_pkey (drivers/infiniband/core/device.c) transcribed: the
// first entry whose 15-bit key matches and that is a full member, else the first
// limited match, else -ENOENT (-1 here).
func kernelFindPKey(table []uint16, pkey uint16) int {
	partial := -1
	for i, tmp := range table {
		if pkey&0x7fff == tmp&0x7fff {
			if tmp&0x8000 != 0 {
				return i
			}
			if partial < 0 {
				partial = i
			}
		}
	}
	return partial
}

// TestFindPKeyKernelCompletions: on generated tables (full, limited, other and empty
// entries, some not read, the key present or not), FindPKey says Known exactly when
// ib_find_pkey picks the same entry on every completion of the entries not read, and
// then it is the entry FindPKey found (or none). A completion fills each entry not
// read with the full key, the limited key or another key: every value of an entry is
// one of those three for this question.
func TestFindPKeyKernelCompletions(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 23))
	const key = 0x8005
	kinds := []uint16{0x8005, 0x0005, 0xffff, 0x0000, 0x8006}
	for n := range 3000 {
		size := 1 + rng.IntN(7)
		table := &Table{}
		var unread []int
		for i := range size {
			if rng.IntN(4) == 0 {
				table.Entries = append(table.Entries, Entry{Index: i, Unreadable: "EIO"})
				unread = append(unread, i)
				continue
			}
			table.Entries = append(table.Entries, Entry{Index: i, PKey: check.PKey(kinds[rng.IntN(len(kinds))])})
		}
		v := &PortView{Device: &ibverbs.Device{Name: "mlx5_0"}, Port: &ibverbs.Port{Device: "mlx5_0", Num: 1}, Table: table}
		r := FindPKey(v, key)
		// Every completion: 3^len(unread).
		picks := map[int]bool{}
		fill := []uint16{0x8005, 0x0005, 0x8006}
		for c := 0; c < pow3(len(unread)); c++ {
			vals := make([]uint16, size)
			for i, e := range table.Entries {
				vals[i] = uint16(e.PKey)
			}
			x := c
			for _, i := range unread {
				vals[i] = fill[x%3]
				x /= 3
			}
			picks[kernelFindPKey(vals, key)] = true
		}
		agree := len(picks) == 1
		got := -1
		if r.Entry != nil {
			got = r.Entry.Index
		}
		if r.Known != agree {
			t.Fatalf("case %d %v: Known %v (%s, entry %d, %q), but the completions pick %v", n, table.Entries, r.Known, r.Outcome, got, r.Reason, picks)
		}
		if agree && !picks[got] {
			t.Fatalf("case %d %v: FindPKey picks %d, ib_find_pkey %v", n, table.Entries, got, picks)
		}
		if !r.Known && r.Reason == "" {
			t.Fatalf("case %d %v: not known, and no reason", n, table.Entries)
		}
		if len(unread) == 0 && r.Outcome != FindFound && r.Outcome != FindNotFound {
			t.Fatalf("case %d: everything read, outcome %s", n, r.Outcome)
		}
	}
}

func pow3(n int) int {
	p := 1
	for range n {
		p *= 3
	}
	return p
}

// TestFindEntryVerdictCompletions: can-talk's pkey= on generated tables with entries
// not read answers what every completion gives: the verdict check.CanTalk gives for
// the entry ib_find_pkey picks on each completion (a QP with no entry: no), when all
// agree, else unknown (query.CanTalk over findEntry's alternatives).
func TestFindEntryVerdictCompletions(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	const key = 0x8005
	kinds := []uint16{0x8005, 0x0005, 0xffff, 0x0000, 0x8006}
	others := []check.Endpoint{
		check.QPEndpoint("B", 0x8005, check.QPAny), check.QPEndpoint("B", 0x0005, check.QPAny),
		check.QPEndpoint("B", 0x8006, check.QPAny), check.QPEndpoint("B", 0xffff, check.QPAny),
		{Label: "B", Port: true, Entries: []check.TableEntry{{Index: 0, PKey: 0x0005, Readable: true}, {Index: 1, PKey: 0xffff, Readable: true}}},
	}
	spec, err := check.ParseEndpoint("mlx5_0/1,pkey=0x8005")
	if err != nil {
		t.Fatal(err)
	}
	for n := range 600 {
		size := 1 + rng.IntN(5)
		table := &Table{}
		var unread []int
		for i := range size {
			if rng.IntN(3) == 0 {
				table.Entries = append(table.Entries, Entry{Index: i, Unreadable: "EIO"})
				unread = append(unread, i)
				continue
			}
			table.Entries = append(table.Entries, Entry{Index: i, PKey: check.PKey(kinds[rng.IntN(len(kinds))])})
		}
		v := &PortView{Device: &ibverbs.Device{Name: "mlx5_0"}, Port: &ibverbs.Port{Device: "mlx5_0", Num: 1}, Table: table}
		e, err := resolvePort(spec, "A", v)
		if err != nil {
			continue // no entry and none unread: a resolve error, as before
		}
		r := ResolvedEndpoint{Spec: spec, Endpoint: e, View: v}
		r.findEntry(v)
		if fr := FindPKey(v, key); (r.EntryNotKnown == "") != fr.Known ||
			(!fr.Known && len(r.Endpoint.Entries) == 1 && r.Endpoint.Entries[0].Index != check.NoIndex) {
			t.Fatalf("case %d %v: entry not known %q, FindPKey Known %v, endpoint %+v: an entry not known has no index", n, table.Entries, r.EntryNotKnown, fr.Known, r.Endpoint.Entries)
		}
		for _, b := range others {
			kinds := map[check.VerdictKind]bool{}
			fill := []uint16{0x8005, 0x0005, 0x8006}
			for c := 0; c < pow3(len(unread)); c++ {
				vals := make([]uint16, size)
				for i, en := range table.Entries {
					vals[i] = uint16(en.PKey)
				}
				x := c
				for _, i := range unread {
					vals[i] = fill[x%3]
					x /= 3
				}
				a := check.Endpoint{Label: "A"}
				if i := kernelFindPKey(vals, key); i >= 0 {
					a = check.QPEndpoint("A", check.PKey(vals[i]), check.QPAny)
				}
				kinds[check.CanTalk(a, b).Kind] = true
			}
			want := check.VerdictUnknown
			if len(kinds) == 1 {
				for k := range kinds {
					want = k
				}
			}
			if got := CanTalk(r, ResolvedEndpoint{Endpoint: b}); got.Kind != want {
				t.Fatalf("case %d %v against %v: %s, want %s (completions give %v)\n%v", n, table.Entries, b.Entries, got.Kind, want, kinds, got.Reasons)
			}
		}
	}
}
