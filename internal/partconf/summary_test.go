package partconf

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/partconf/partgen"
)

// summaryReference is Summary as it was written first (a list of members per
// partition, a map per port), kept as the reference the faster Summary must equal.
// It computes per-partition pair counts arithmetically, per-port reach, and the
// isolation groups from the predicted tables (entries OpenSM drops do not count), in
// time linear in the number of table entries.
func (m *Model) summaryReference() *Summary {
	s := &Summary{}
	n := len(m.Ports)
	parts := m.Config.Partitions
	pidx := make(map[check.PartitionKey]int, len(parts))
	for i, p := range parts {
		pidx[p.Key] = i
	}
	// per partition: member ports (ascending) and whether each is full
	type mem struct {
		port int32
		full bool
	}
	members := make([][]mem, len(parts))
	s.memberOf = make([]uint16, n)
	for i := 0; i < n; i++ {
		var seen map[check.PartitionKey]int // key -> position in members, for both/duplicate entries
		slots := m.appendSlots(nil, i)
		for _, e := range slots {
			if !e.PKey.Valid() {
				continue
			}
			pi, ok := pidx[e.PKey.Partition()]
			if !ok {
				continue
			}
			if seen == nil {
				seen = make(map[check.PartitionKey]int, len(slots))
			}
			if j, dup := seen[e.PKey.Partition()]; dup {
				if e.PKey.IsFull() {
					members[pi][j].full = true
				}
				continue
			}
			seen[e.PKey.Partition()] = len(members[pi])
			members[pi] = append(members[pi], mem{int32(i), e.PKey.IsFull()})
		}
		s.memberOf[i] = uint16(len(seen))
	}
	reach := make([][]check.PartitionKey, n)
	all := newUnionFind(n)
	noDef := newUnionFind(n)
	for pi, part := range parts {
		full, lim := 0, 0
		firstFull := -1
		for _, x := range members[pi] {
			if x.full {
				full++
				if firstFull < 0 {
					firstFull = int(x.port)
				}
			} else {
				lim++
			}
		}
		if full+lim == 0 && !part.IsDefault() {
			continue // OpenSM deletes partitions without members
		}
		s.Partitions = append(s.Partitions, PartitionReach{Key: part.Key, Name: part.Name, Full: full, Limited: lim,
			Pairs: int64(full)*int64(full-1)/2 + int64(full)*int64(lim)})
		if full == 0 {
			continue
		}
		for _, x := range members[pi] {
			i := int(x.port)
			talks := (x.full && full+lim > 1) || (!x.full && full > 0)
			if talks {
				reach[i] = append(reach[i], part.Key)
			}
			all.union(firstFull, i)
			if !part.IsDefault() {
				noDef.union(firstFull, i)
			}
		}
	}
	s.ports = m.Ports
	s.reachAt = make([]int32, n+1)
	total := 0
	for _, r := range reach {
		total += len(r)
	}
	s.reach = make([]check.PartitionKey, 0, total)
	for i, p := range m.Ports {
		r := reach[i]
		sort.Slice(r, func(a, b int) bool { return r[a] < r[b] })
		s.reach = append(s.reach, r...)
		s.reachAt[i+1] = int32(len(s.reach))
		only := true
		for _, k := range r {
			if k != 0x7fff {
				only = false
			}
		}
		if only {
			s.OnlyDefault = append(s.OnlyDefault, p.GUID)
		}
	}
	s.Groups = all.groupsReference(m.Ports)
	s.GroupsWithoutDefault = noDef.groupsReference(m.Ports)
	return s
}

// groupsReference is groups with a list per root in a map: what groups did before it
// counted the groups into one array.
func (u *unionFind) groupsReference(ports []Port) [][]check.GUID {
	byRoot := map[int][]check.GUID{}
	var roots []int
	for i, p := range ports {
		r := u.find(i)
		if _, ok := byRoot[r]; !ok {
			roots = append(roots, r)
		}
		byRoot[r] = append(byRoot[r], p.GUID)
	}
	var out [][]check.GUID
	for _, r := range roots {
		if g := byRoot[r]; len(g) > 1 {
			out = append(out, g)
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return len(out[a]) > len(out[b]) })
	return out
}

// TestSummaryMatchesReference: Summary equals summaryReference on files drawn by partgen
// (every construct OpenSM accepts), with and without -W, with tables small enough to
// drop entries, and on the large benchmark fabric.
func TestSummaryMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 7))
	var ports []Port
	var guids []uint64
	for i := 0; i < 30; i++ {
		typ := check.NodeCA
		switch i % 10 {
		case 7:
			typ = check.NodeRouter
		case 9:
			typ = check.NodeSwitch
		}
		g := 0x0002c90300001001 + uint64(i)
		ports = append(ports, Port{GUID: check.GUID(g), Type: typ})
		guids = append(guids, g)
	}
	for i := 0; i < 300; i++ {
		c := Parse(fmt.Sprintf("gen%d.conf", i), []byte(partgen.Config(rng, partgen.Options{Ports: guids})))
		opt := Options{AllowBoth: i%2 == 0, TableSize: []int{0, 128, 4, 2}[i%4]}
		if i%3 == 0 {
			opt.SMGUID = check.GUID(guids[i%len(guids)])
		}
		m := NewModel(c, ports, opt)
		if got, want := m.Summary(), m.summaryReference(); !reflect.DeepEqual(got, want) {
			t.Fatalf("file %d: Summary\n%+v\nwant\n%+v", i, got, want)
		}
	}
	data, big := bigFabric()
	m := NewModel(Parse("big.conf", data), big, Options{SMGUID: big[0].GUID, TableSize: 128})
	if got, want := m.Summary(), m.summaryReference(); !reflect.DeepEqual(got, want) {
		t.Fatal("big fabric: Summary differs from the reference")
	}
}

// TestModelBuiltInRanges: a model built by several goroutines, each over a range of
// ports, is the model built by one, on files drawn by partgen (with and without -W,
// with tables small enough to drop entries, a rejected file now and then).
func TestModelBuiltInRanges(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 9))
	var ports []Port
	var guids []uint64
	for i := 0; i < 97; i++ {
		g := 0x0002c90300002001 + uint64(i)
		ports = append(ports, Port{GUID: check.GUID(g), Type: []check.NodeType{check.NodeCA, check.NodeRouter, check.NodeSwitch}[i%3]})
		guids = append(guids, g)
	}
	workers, rangeSize := buildWorkers, buildRange
	defer func() { buildWorkers, buildRange = workers, rangeSize }()
	for i := 0; i < 100; i++ {
		c := Parse(fmt.Sprintf("gen%d.conf", i), []byte(partgen.Config(rng, partgen.Options{Ports: guids})))
		opt := Options{AllowBoth: i%2 == 0, TableSize: []int{0, 128, 4, 2}[i%4], SMGUID: check.GUID(guids[i%len(guids)])}
		buildWorkers, buildRange = func() int { return 1 }, rangeSize
		one := NewModel(c, ports, opt)
		buildWorkers, buildRange = func() int { return 3 }, 10
		three := NewModel(c, ports, opt)
		for _, p := range ports {
			if a, b := one.Slots(p.GUID), three.Slots(p.GUID); !reflect.DeepEqual(a, b) {
				t.Fatalf("file %d, port %s: one builder\n%+v\nthree\n%+v", i, p.GUID, a, b)
			}
			if a, b := one.DroppedEntries(p.GUID), three.DroppedEntries(p.GUID); !reflect.DeepEqual(a, b) {
				t.Fatalf("file %d, port %s: dropped %+v, in ranges %+v", i, p.GUID, a, b)
			}
		}
		if !reflect.DeepEqual(one.members, three.members) || !reflect.DeepEqual(one.Summary(), three.Summary()) {
			t.Fatalf("file %d: partition member counts or summary differ", i)
		}
		// Ports that begin with the file's GUIDs in order use the file's own index of
		// items (Config.byGUID); the same ports in another order are looked up one by
		// one. The tables are the same.
		var inFile []Port
		for _, g := range c.GUIDs {
			inFile = append(inFile, Port{GUID: g, Type: []check.NodeType{check.NodeCA, check.NodeRouter}[g%2]})
		}
		for _, p := range ports[:5] { // and ports the file does not name
			if _, ok := c.GUIDIndex(p.GUID); !ok {
				inFile = append(inFile, p)
			}
		}
		byFile := NewModel(c, inFile, opt)
		reversed := slices.Clone(inFile)
		slices.Reverse(reversed)
		lookedUp := NewModel(c, reversed, opt)
		if len(c.GUIDs) > 0 && (byFile.byFile == nil || lookedUp.byFile != nil) {
			t.Fatalf("file %d: the file's index used %v, %v", i, byFile.byFile != nil, lookedUp.byFile != nil)
		}
		for _, p := range inFile {
			if a, b := byFile.Slots(p.GUID), lookedUp.Slots(p.GUID); !reflect.DeepEqual(a, b) {
				t.Fatalf("file %d, port %s: in file order\n%+v\nlooked up\n%+v", i, p.GUID, a, b)
			}
		}
	}
}
