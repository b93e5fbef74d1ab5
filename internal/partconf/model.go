package partconf

import (
	"fmt"
	"slices"
	"sort"

	"github.com/ibkey/ibkey/internal/check"
)

// Shared is one partition two ports both belong to.
type Shared struct {
	Key     check.PartitionKey
	Name    string
	A, B    check.PKey // the best entry of each side (full preferred)
	CanTalk bool
	// Decided are the definitions that gave each side its membership.
	DecidedA, DecidedB Pos
	Reason             string
}

// Verdict answers "can these two ports talk?" under the P_Key rule.
type Verdict struct {
	CanTalk bool
	Shared  []Shared
	Reasons []string
}

// CanTalk applies the P_Key rule (same 15-bit key, at least one side full) to the two
// ports' predicted tables.
func (m *Model) CanTalk(a, b check.GUID) Verdict {
	var v Verdict
	ia, okA := m.portOf(a)
	ib, okB := m.portOf(b)
	if !okA || !okB {
		for _, g := range []struct {
			ok   bool
			guid check.GUID
		}{{okA, a}, {okB, b}} {
			if !g.ok {
				v.Reasons = append(v.Reasons, fmt.Sprintf("port %s is not in the fabric", g.guid))
			}
		}
		return v
	}
	best := func(t []Entry) map[check.PartitionKey]Entry {
		r := make(map[check.PartitionKey]Entry, len(t))
		for _, e := range t {
			if o, ok := r[e.PKey.Partition()]; !ok || (!o.PKey.IsFull() && e.PKey.IsFull()) {
				r[e.PKey.Partition()] = e
			}
		}
		return r
	}
	sa := m.appendSlots(nil, ia)
	ta, tb := best(sa), best(m.appendSlots(nil, ib))
	seen := map[check.PartitionKey]bool{}
	for _, e := range sa {
		if !e.PKey.Valid() {
			continue
		}
		k := e.PKey.Partition()
		ea, eb := ta[k], tb[k]
		if seen[k] || eb.Partition == nil {
			continue
		}
		seen[k] = true
		s := Shared{Key: k, Name: ea.Partition.Name, A: ea.PKey, B: eb.PKey,
			CanTalk: ea.PKey.IsFull() || eb.PKey.IsFull(), DecidedA: ea.DecidedBy.Pos(), DecidedB: eb.DecidedBy.Pos()}
		if s.CanTalk {
			s.Reason = fmt.Sprintf("partition %s (%s): %s and %s, at least one full member (%s, %s)",
				e.PKey.Partition().String(), s.Name, ea.PKey, eb.PKey, s.DecidedA, s.DecidedB)
		} else {
			s.Reason = fmt.Sprintf("partition %s (%s): %s and %s are both limited members, which cannot talk to each other (%s, %s)",
				e.PKey.Partition().String(), s.Name, ea.PKey, eb.PKey, s.DecidedA, s.DecidedB)
		}
		v.Shared = append(v.Shared, s)
		v.CanTalk = v.CanTalk || s.CanTalk
		v.Reasons = append(v.Reasons, s.Reason)
	}
	if len(v.Shared) == 0 {
		v.Reasons = append(v.Reasons, fmt.Sprintf("ports %s and %s share no partition", a, b))
	}
	if m.Source.Rejected {
		v.Reasons = append(v.Reasons, fmt.Sprintf("OpenSM rejects %s (first error at %s) and applies Default=0x7fff : ALL=full: every port is a full member of the default partition", m.Source.File, m.Source.RejectedAt))
	}
	return v
}

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
	// Port i's Reaches are reach[reachAt[i]:reachAt[i+1]]: one array of keys, not a
	// PortReach per port (3 MB at 100,000 ports). See Port.
	ports    []Port
	memberOf []uint16 // PortReach.MemberOf (a table has at most 0xffff entries)
	reach    []check.PartitionKey
	reachAt  []int32
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

// NumPorts is how many ports the summary has: the model's.
func (s *Summary) NumPorts() int { return len(s.ports) }

// Port is the reach of the model's port i.
func (s *Summary) Port(i int) PortReach {
	r := s.reach[s.reachAt[i]:s.reachAt[i+1]:s.reachAt[i+1]]
	if len(r) == 0 {
		r = nil
	}
	return PortReach{GUID: s.ports[i].GUID, MemberOf: int(s.memberOf[i]), Reaches: r}
}

// Summary computes per-partition pair counts arithmetically, per-port reach, and the
// isolation groups from the predicted tables (entries OpenSM drops do not count), in
// time linear in the number of table entries and with memory for one key per entry
// (two passes over the tables instead of a list of members per partition).
func (m *Model) Summary() *Summary {
	s := &Summary{}
	n := len(m.Ports)
	parts := m.Config.Partitions
	var pidx [0x8000]int32 // 15-bit key -> partition index + 1
	for i, p := range parts {
		pidx[p.Key&check.PartitionKey(check.KeyMask)] = int32(i + 1)
	}
	type member struct {
		part int32
		full bool
	}
	// memberships are port i's partitions, once each (a full and a limited entry of
	// one key, with -W, make it a full member), in table order.
	var scratch []member
	memberships := func(i int) []member {
		scratch = scratch[:0]
	entries:
		for _, e := range m.stored(i) {
			if !e.pkey.Valid() {
				continue
			}
			pi := pidx[e.pkey.Partition()] - 1
			if pi < 0 {
				continue
			}
			for j := range scratch {
				if scratch[j].part == pi {
					scratch[j].full = scratch[j].full || e.pkey.IsFull()
					continue entries
				}
			}
			scratch = append(scratch, member{pi, e.pkey.IsFull()})
		}
		return scratch
	}
	full := make([]int32, len(parts))
	limited := make([]int32, len(parts))
	firstFull := make([]int32, len(parts)) // the lowest port index with a full entry
	for i := range firstFull {
		firstFull[i] = -1
	}
	total := 0
	s.memberOf = make([]uint16, n)
	for i := 0; i < n; i++ {
		ms := memberships(i)
		s.memberOf[i] = uint16(len(ms))
		for _, x := range ms {
			total++
			if !x.full {
				limited[x.part]++
				continue
			}
			full[x.part]++
			if firstFull[x.part] < 0 {
				firstFull[x.part] = int32(i)
			}
		}
	}
	s.Partitions = make([]PartitionReach, 0, len(parts))
	for pi, part := range parts {
		f, l := int64(full[pi]), int64(limited[pi])
		if f+l == 0 && !part.IsDefault() {
			continue // OpenSM deletes partitions without members
		}
		s.Partitions = append(s.Partitions, PartitionReach{Key: part.Key, Name: part.Name, Full: int(f), Limited: int(l),
			Pairs: f*(f-1)/2 + f*l})
	}
	// A port reaches the partitions where it is full and has another member, or is
	// limited and has a full one; it is linked to the partition's first full member.
	reach := make([]check.PartitionKey, 0, total) // every port's Reaches, one after the other
	all := newUnionFind(n)
	noDef := newUnionFind(n)
	s.ports = m.Ports
	s.reachAt = make([]int32, n+1)
	for i, p := range m.Ports {
		start := len(reach)
		for _, x := range memberships(i) {
			f, l := full[x.part], limited[x.part]
			if f == 0 {
				continue
			}
			if (x.full && f+l > 1) || !x.full {
				reach = append(reach, parts[x.part].Key)
			}
			all.union(int(firstFull[x.part]), i)
			if !parts[x.part].IsDefault() {
				noDef.union(int(firstFull[x.part]), i)
			}
		}
		r := reach[start:len(reach):len(reach)]
		slices.Sort(r)
		s.reachAt[i+1] = int32(len(reach))
		only := true
		for _, k := range r {
			if k != check.DefaultPartition {
				only = false
			}
		}
		if only {
			s.OnlyDefault = append(s.OnlyDefault, p.GUID)
		}
	}
	s.reach = reach
	s.Groups = all.groups(m.Ports)
	s.GroupsWithoutDefault = noDef.groups(m.Ports)
	return s
}

type unionFind struct{ parent []int32 }

func newUnionFind(n int) *unionFind {
	u := &unionFind{parent: make([]int32, n)}
	for i := range u.parent {
		u.parent[i] = int32(i)
	}
	return u
}

func (u *unionFind) find(i int) int {
	for int(u.parent[i]) != i {
		u.parent[i] = u.parent[u.parent[i]]
		i = int(u.parent[i])
	}
	return i
}

func (u *unionFind) union(a, b int) {
	ra, rb := u.find(a), u.find(b)
	if ra != rb {
		if ra < rb {
			u.parent[rb] = int32(ra)
		} else {
			u.parent[ra] = int32(rb)
		}
	}
}

// groups lists components with more than one port, largest first; singletons are left
// out (they are isolated; see OnlyDefault and PortReach). The groups' GUIDs are one
// array, each group in port order, groups in the order of their first port.
func (u *unionFind) groups(ports []Port) [][]check.GUID {
	// size[r]: the ports of root r; once its group is placed, the group's number in
	// out, negated.
	size := make([]int32, len(ports))
	for i := range ports {
		size[u.find(i)]++
	}
	in := 0
	for _, n := range size {
		if n > 1 {
			in += int(n)
		}
	}
	all := make([]check.GUID, in)
	var out [][]check.GUID
	at := 0
	for i := range ports {
		if r := u.find(i); r == i && size[r] > 1 { // a root is its group's first port
			n := int(size[r])
			out = append(out, all[at:at:at+n])
			size[r] = -int32(len(out)) // its group's number, negated
			at += n
		}
	}
	for i, p := range ports {
		if r := u.find(i); size[r] < 0 {
			g := &out[-size[r]-1]
			*g = append(*g, p.GUID)
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return len(out[a]) > len(out[b]) })
	return out
}
