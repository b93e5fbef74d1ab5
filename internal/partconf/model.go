package partconf

import (
	"slices"
	"sort"

	"github.com/ibkey/ibkey/internal/check"
)

// PartitionReach is one partition's reachability in Summary.
type PartitionReach struct {
	Key     check.PartitionKey
	Name    string
	Full    int // ports with a full entry (both counts as full)
	Limited int // ports with only a limited entry
	// Pairs is how many unordered port pairs can talk in it: full*(full-1)/2 + full*limited.
	Pairs int64
}

// PortReach is one port's reachability in Summary.
type PortReach struct {
	GUID check.GUID
	// MemberOf is how many partitions the port is a member of (its table's keys that
	// OpenSM keeps, a full and a limited entry of one key counted once).
	MemberOf int
	// Reaches are the keys of the partitions in which this port can talk to at least
	// one other port.
	Reaches []check.PartitionKey
}

// Summary is the who-can-talk matrix in aggregate, for fabrics too large for pairs.
type Summary struct {
	Partitions []PartitionReach
	Ports      []PortReach // the model's ports, in order
	// Groups are the connected components of ports linked by partitions where they can
	// talk (transitively), counting every partition. With the usual Default=ALL=full
	// this is one group.
	Groups [][]check.GUID
	// GroupsWithoutDefault ignores the default partition: the isolation the other
	// partitions provide.
	GroupsWithoutDefault [][]check.GUID
	// OnlyDefault are ports that can talk to nobody except through the default partition.
	OnlyDefault []check.GUID
}

// Summary computes per-partition pair counts arithmetically, per-port reach, and the
// isolation groups from the predicted tables (entries OpenSM drops do not count), in
// time linear in the number of table entries.
func (m *Model) Summary() *Summary {
	s := &Summary{Ports: make([]PortReach, len(m.Ports))}
	parts := m.Config.Partitions
	// per partition: its member ports in port order, and whether each is full (a full
	// and a limited entry of one key, with -W, make it a full member)
	type member struct {
		port int
		full bool
	}
	members := make([][]member, len(parts))
	for i, p := range m.Ports {
		s.Ports[i].GUID = p.GUID
		for _, e := range m.tables[i].slots {
			if !e.PKey.Valid() {
				continue
			}
			pi := e.Partition.index // an entry of m.Config's (Model.program)
			if ms := members[pi]; len(ms) > 0 && ms[len(ms)-1].port == i {
				// The port's second entry of the key (-W)
				ms[len(ms)-1].full = ms[len(ms)-1].full || e.PKey.IsFull()
				continue
			}
			members[pi] = append(members[pi], member{i, e.PKey.IsFull()})
			s.Ports[i].MemberOf++
		}
	}
	// A port reaches the partitions where it is full and has another member, or is
	// limited and has a full one; it is linked to the partition's first full member.
	all := newUnionFind(len(m.Ports))
	noDef := newUnionFind(len(m.Ports))
	for pi, part := range parts {
		full, limited := 0, 0
		firstFull := -1
		for _, x := range members[pi] {
			if !x.full {
				limited++
				continue
			}
			full++
			if firstFull < 0 {
				firstFull = x.port
			}
		}
		if full+limited == 0 && !part.IsDefault() {
			continue // OpenSM deletes partitions without members
		}
		s.Partitions = append(s.Partitions, PartitionReach{Key: part.Key, Name: part.Name, Full: full, Limited: limited,
			Pairs: int64(full)*int64(full-1)/2 + int64(full)*int64(limited)})
		if full == 0 {
			continue
		}
		for _, x := range members[pi] {
			if !x.full || full+limited > 1 {
				s.Ports[x.port].Reaches = append(s.Ports[x.port].Reaches, part.Key)
			}
			all.union(firstFull, x.port)
			if !part.IsDefault() {
				noDef.union(firstFull, x.port)
			}
		}
	}
	for _, pr := range s.Ports {
		slices.Sort(pr.Reaches)
		if len(pr.Reaches) == 0 || (len(pr.Reaches) == 1 && pr.Reaches[0] == check.DefaultPartition) {
			s.OnlyDefault = append(s.OnlyDefault, pr.GUID)
		}
	}
	s.Groups = all.groups(m.Ports)
	s.GroupsWithoutDefault = noDef.groups(m.Ports)
	return s
}

type unionFind struct{ parent []int }

func newUnionFind(n int) *unionFind {
	u := &unionFind{parent: make([]int, n)}
	for i := range u.parent {
		u.parent[i] = i
	}
	return u
}

func (u *unionFind) find(i int) int {
	for u.parent[i] != i {
		u.parent[i] = u.parent[u.parent[i]]
		i = u.parent[i]
	}
	return i
}

// union joins the components of a and b; the root of the result is its first port.
func (u *unionFind) union(a, b int) {
	ra, rb := u.find(a), u.find(b)
	u.parent[max(ra, rb)] = min(ra, rb)
}

// groups lists components with more than one port, largest first, each in port order,
// groups of one size in the order of their first port; singletons are left out (they
// are isolated; see OnlyDefault and PortReach).
func (u *unionFind) groups(ports []Port) [][]check.GUID {
	byRoot := make([][]check.GUID, len(ports)) // in root order, the order of first ports
	for i, p := range ports {
		r := u.find(i)
		byRoot[r] = append(byRoot[r], p.GUID)
	}
	var out [][]check.GUID
	for _, g := range byRoot {
		if len(g) > 1 {
			out = append(out, g)
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return len(out[a]) > len(out[b]) })
	return out
}
