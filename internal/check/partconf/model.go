package partconf

import (
	"fmt"
	"sort"

	"github.com/ibkey/ibkey/internal/check"
)

// NodeType is the type of the node a port belongs to (NodeInfo NodeType).
type NodeType uint8

const (
	CA NodeType = iota + 1
	Switch
	Router
)

func (t NodeType) String() string {
	switch t {
	case CA:
		return "CA"
	case Switch:
		return "switch"
	case Router:
		return "router"
	}
	return "unknown"
}

// Port is an end port of the fabric: a CA or router port, or a switch's port 0.
type Port struct {
	GUID uint64
	Type NodeType
	// TableSize is the port's P_Key table length (NodeInfo PartitionCap); 0 means
	// Options.TableSize.
	TableSize int
}

// Options are how OpenSM runs.
type Options struct {
	// AllowBoth mirrors opensm -W (allow_both_pkeys): `both` installs a full and a
	// limited entry. Without it `both` is full.
	AllowBoth bool
	// SMGUID is the port GUID of the SM's port: what SELF means.
	SMGUID uint64
	// TableSize is the default P_Key table length; 0 means unlimited. mlx5 HCAs have
	// 128 entries, the ibsim simulator 64, some switches 32.
	TableSize int
}

// Entry is one P_Key table entry the model predicts.
type Entry struct {
	PKey      check.PKey
	Partition *Partition
	// DecidedBy is the member item that gave the port this membership (the last one
	// that named it: OpenSM lets the last item win).
	DecidedBy *Member
}

// Model is what OpenSM programs for a set of ports from a Config.
type Model struct {
	Config  *Config // the applied configuration (the fallback when the file is rejected)
	Source  *Config // the configuration as given
	Ports   []Port
	Options Options

	index map[uint64]int      // GUID -> index in Ports
	state []map[int]portState // per partition (Config.Partitions order): port -> membership
	// tables per port, in the order OpenSM fills them.
	tables [][]Entry
	// Dropped counts entries that did not fit the port's table, per port index.
	dropped []int
}

type portState struct {
	m   MemberFlag
	who *Member
}

// NewModel resolves members to ports. c may be a rejected Config: the model then is
// OpenSM's fallback (everyone a full member of the default partition).
func NewModel(c *Config, ports []Port, opt Options) *Model {
	src := c
	c = c.Applied()
	m := &Model{Config: c, Source: src, Ports: ports, Options: opt, index: make(map[uint64]int, len(ports))}
	for i, p := range ports {
		m.index[p.GUID] = i
	}
	self, hasSelf := m.index[opt.SMGUID]
	m.state = make([]map[int]portState, len(c.Partitions))
	for pi, part := range c.Partitions {
		st := make(map[int]portState)
		for _, mem := range part.Members {
			ms := mem.Membership
			if ms == FlagBoth && !opt.AllowBoth {
				ms = FlagFull
			}
			set := func(i int) { st[i] = portState{ms, mem} }
			switch mem.Kind {
			case KindGUID:
				if i, ok := m.index[mem.GUID]; ok {
					set(i)
				}
			case KindSelf:
				if hasSelf {
					set(self)
				}
			default:
				for i, p := range ports {
					if mem.Kind == KindAll || (mem.Kind == KindAllCAs && p.Type == CA) ||
						(mem.Kind == KindAllSwitches && p.Type == Switch) || (mem.Kind == KindAllRouters && p.Type == Router) {
						set(i)
					}
				}
			}
		}
		m.state[pi] = st
	}
	m.buildTables()
	return m
}

func (m *Model) tableSize(i int) int {
	if n := m.Ports[i].TableSize; n > 0 {
		return n
	}
	return m.Options.TableSize
}

// buildTables orders each port's entries as OpenSM 3.3.23 does on a port whose table
// holds only 0xffff at index 0 (the state of a fresh HCA and of ibsim), lab-verified:
//  1. the indx0 entry (the last indx0 partition in map order) goes to index 0;
//  2. an entry already in the table keeps its index if free: the default partition's
//     entry stays at index 0 (matched on the 15-bit key, or the exact value with -W);
//  3. the rest fill the lowest free indexes in map order: the 15-bit key with its bytes
//     swapped (0x0100 < 0x0201 < 0x0002); with -W the limited entry of a key comes
//     before its full entry (0x0010, 0x8010), and 0x8001 still before 0x0101.
func (m *Model) buildTables() {
	n := len(m.Ports)
	lists := make([][]Entry, n)
	for pi, part := range m.Config.Partitions {
		for i, st := range m.state[pi] {
			k := check.PKey(part.Key)
			switch st.m {
			case FlagFull:
				lists[i] = append(lists[i], Entry{k | check.MembershipBit, part, st.who})
			case FlagLimited:
				lists[i] = append(lists[i], Entry{k, part, st.who})
			case FlagBoth:
				lists[i] = append(lists[i], Entry{k, part, st.who}, Entry{k | check.MembershipBit, part, st.who})
			}
		}
	}
	m.tables = make([][]Entry, n)
	m.dropped = make([]int, n)
	for i, l := range lists {
		sort.Slice(l, func(a, b int) bool {
			ka, kb := orderKey(l[a].PKey.Key()), orderKey(l[b].PKey.Key())
			if ka != kb {
				return ka < kb
			}
			return !l[a].PKey.IsFull() && l[b].PKey.IsFull()
		})
		out := make([]Entry, 0, len(l))
		first := -1
		for j, e := range l { // the last indx0 in map order wins index 0
			if e.DecidedBy != nil && e.DecidedBy.Indx0 {
				first = j
			}
		}
		if first < 0 {
			for j, e := range l {
				if (m.Options.AllowBoth && e.PKey == check.DefaultFull) || (!m.Options.AllowBoth && e.PKey.IsDefault()) {
					first = j
					break
				}
			}
		}
		if first >= 0 {
			out = append(out, l[first])
		}
		for j, e := range l {
			if j != first {
				out = append(out, e)
			}
		}
		if size := m.tableSize(i); size > 0 && len(out) > size {
			m.dropped[i] = len(out) - size
			out = out[:size]
		}
		m.tables[i] = out
	}
}

// Table returns the P_Key entries of the port with this GUID in table order, or nil.
func (m *Model) Table(guid uint64) []Entry {
	i, ok := m.index[guid]
	if !ok {
		return nil
	}
	return m.tables[i]
}

// PKeys returns the table as values, for comparisons with a port's real table.
func (m *Model) PKeys(guid uint64) []check.PKey {
	var out []check.PKey
	for _, e := range m.Table(guid) {
		out = append(out, e.PKey)
	}
	return out
}

// Dropped is how many entries did not fit the port's table.
func (m *Model) Dropped(guid uint64) int {
	if i, ok := m.index[guid]; ok {
		return m.dropped[i]
	}
	return 0
}

// Shared is one partition two ports both belong to.
type Shared struct {
	Key     uint16
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
func (m *Model) CanTalk(a, b uint64) Verdict {
	var v Verdict
	ia, okA := m.index[a]
	ib, okB := m.index[b]
	if !okA || !okB {
		for _, g := range []struct {
			ok   bool
			guid uint64
		}{{okA, a}, {okB, b}} {
			if !g.ok {
				v.Reasons = append(v.Reasons, fmt.Sprintf("port 0x%016x is not in the fabric", g.guid))
			}
		}
		return v
	}
	best := func(t []Entry) map[uint16]Entry {
		r := make(map[uint16]Entry, len(t))
		for _, e := range t {
			if o, ok := r[e.PKey.Key()]; !ok || (!o.PKey.IsFull() && e.PKey.IsFull()) {
				r[e.PKey.Key()] = e
			}
		}
		return r
	}
	ta, tb := best(m.tables[ia]), best(m.tables[ib])
	seen := map[uint16]bool{}
	for _, e := range m.tables[ia] {
		k := e.PKey.Key()
		ea, eb := ta[k], tb[k]
		if seen[k] || eb.Partition == nil {
			continue
		}
		seen[k] = true
		s := Shared{Key: k, Name: ea.Partition.Name, A: ea.PKey, B: eb.PKey,
			CanTalk: ea.PKey.IsFull() || eb.PKey.IsFull(), DecidedA: ea.DecidedBy.Pos, DecidedB: eb.DecidedBy.Pos}
		if s.CanTalk {
			s.Reason = fmt.Sprintf("partition %s (%s): %s and %s, at least one full member (%s, %s)",
				e.PKey.KeyString(), s.Name, ea.PKey, eb.PKey, s.DecidedA, s.DecidedB)
		} else {
			s.Reason = fmt.Sprintf("partition %s (%s): %s and %s are both limited members, which cannot talk to each other (%s, %s)",
				e.PKey.KeyString(), s.Name, ea.PKey, eb.PKey, s.DecidedA, s.DecidedB)
		}
		v.Shared = append(v.Shared, s)
		v.CanTalk = v.CanTalk || s.CanTalk
		v.Reasons = append(v.Reasons, s.Reason)
	}
	if len(v.Shared) == 0 {
		v.Reasons = append(v.Reasons, fmt.Sprintf("ports 0x%016x and 0x%016x share no partition", a, b))
	}
	if m.Source.Rejected {
		v.Reasons = append(v.Reasons, fmt.Sprintf("OpenSM rejects %s (first error at %s) and applies Default=0x7fff : ALL=full: every port is a full member of the default partition", m.Source.File, m.Source.RejectedAt))
	}
	return v
}

// PartitionReach is one partition's reachability in Summary.
type PartitionReach struct {
	Key     uint16
	Name    string
	Full    int // ports with a full entry (both counts as full)
	Limited int // ports with only a limited entry
	// Pairs is how many unordered port pairs can talk in it: full*(full-1)/2 + full*limited.
	Pairs int64
}

// PortReach is one port's reachability in Summary.
type PortReach struct {
	GUID uint64
	// Reaches are the keys of the partitions in which this port can talk to at least
	// one other port.
	Reaches []uint16
}

// Summary is the who-can-talk matrix in aggregate, for fabrics too large for pairs.
type Summary struct {
	Partitions []PartitionReach
	Ports      []PortReach
	// Groups are the connected components of ports linked by partitions where they can
	// talk (transitively), counting every partition. With the usual Default=ALL=full
	// this is one group.
	Groups [][]uint64
	// GroupsWithoutDefault ignores the default partition: the isolation the other
	// partitions provide.
	GroupsWithoutDefault [][]uint64
	// OnlyDefault are ports that can talk to nobody except through the default partition.
	OnlyDefault []uint64
}

// Summary computes per-partition pair counts arithmetically, per-port reach, and the
// isolation groups, in time linear in the number of memberships.
func (m *Model) Summary() *Summary {
	s := &Summary{}
	n := len(m.Ports)
	reach := make([][]uint16, n)
	all := newUnionFind(n)
	noDef := newUnionFind(n)
	for pi, part := range m.Config.Partitions {
		full, lim := 0, 0
		firstFull := -1
		members := make([]int, 0, len(m.state[pi]))
		for i := range m.state[pi] {
			members = append(members, i)
		}
		sort.Ints(members)
		for _, i := range members {
			if m.state[pi][i].m == FlagLimited {
				lim++
			} else {
				full++
				if firstFull < 0 {
					firstFull = i
				}
			}
		}
		s.Partitions = append(s.Partitions, PartitionReach{Key: part.Key, Name: part.Name, Full: full, Limited: lim,
			Pairs: int64(full)*int64(full-1)/2 + int64(full)*int64(lim)})
		if full == 0 {
			continue
		}
		for _, i := range members {
			st := m.state[pi][i]
			talks := (st.m != FlagLimited && full+lim > 1) || (st.m == FlagLimited && full > 0)
			if talks {
				reach[i] = append(reach[i], part.Key)
			}
			all.union(firstFull, i)
			if !part.IsDefault() {
				noDef.union(firstFull, i)
			}
		}
	}
	for i, p := range m.Ports {
		r := reach[i]
		sort.Slice(r, func(a, b int) bool { return r[a] < r[b] })
		s.Ports = append(s.Ports, PortReach{GUID: p.GUID, Reaches: r})
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
// out (they are isolated; see OnlyDefault and PortReach).
func (u *unionFind) groups(ports []Port) [][]uint64 {
	byRoot := map[int][]uint64{}
	var roots []int
	for i, p := range ports {
		r := u.find(i)
		if _, ok := byRoot[r]; !ok {
			roots = append(roots, r)
		}
		byRoot[r] = append(byRoot[r], p.GUID)
	}
	var out [][]uint64
	for _, r := range roots {
		if g := byRoot[r]; len(g) > 1 {
			out = append(out, g)
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return len(out[a]) > len(out[b]) })
	return out
}
