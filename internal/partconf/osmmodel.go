package partconf

import (
	"cmp"
	"maps"
	"slices"

	"github.com/ibkey/ibkey/internal/check"
)

// Port is an end port of the fabric: a CA or router port, or a switch's port 0.
type Port struct {
	GUID check.GUID
	Type check.NodeType
	// TableSize is the port's P_Key table length (NodeInfo PartitionCap); 0 means
	// Options.TableSize.
	TableSize int
	// Peer is the switch port this port is cabled to, when it is one: OpenSM copies
	// the port's table there for partition enforcement (pkey_mgr_update_peer_port).
	Peer *SwitchPort
}

// SwitchPort is a switch's external port.
type SwitchPort struct {
	// EnforceCap is SwitchInfo PartitionEnforcementCap: its table length. 0: the
	// switch does not enforce partitions and OpenSM leaves the port alone.
	EnforceCap int
}

// Options are how OpenSM runs.
type Options struct {
	// AllowBoth mirrors opensm -W (allow_both_pkeys): `both` installs a full and a
	// limited entry. Without it `both` is full.
	AllowBoth bool
	// SMGUID is the port GUID of the SM's port: what SELF means.
	SMGUID check.GUID
	// TableSize is the default P_Key table length; 0 means unlimited. mlx5 HCAs have
	// 128 entries, the ibsim simulator 64, some switches 32.
	TableSize int
	// EnforceOff mirrors part_enforce off (-Z off): OpenSM clears the enforcement bits
	// of the switch ports facing CAs and routers and leaves their tables as they were.
	EnforceOff bool
	// Before are the tables the ports held when OpenSM read them, by port GUID, in
	// index order (0x0000 for empty entries). A port not listed held only 0xffff at
	// index 0: a fresh port, as on the simulator and after a reset. OpenSM keeps a key
	// that is already in the table at its index (osm_pkey_mgr.c).
	Before map[check.GUID][]check.PKey
	// PeerBefore are the tables of switch ports facing end ports, by end port GUID;
	// absent means 0xffff at index 0.
	PeerBefore map[check.GUID][]check.PKey
	// Memory is what a running OpenSM remembers from its earlier sweeps, when the
	// same process applies the file again (it re-reads it on SIGHUP and every heavy
	// sweep): the index it gave every key since it started, removed keys included
	// (osm_pkey_mgr.c's accum_pkeys and last_pkey_idx, kept while keep_pkey_indexes
	// is TRUE, the default). A new key then goes after the last index it ever used,
	// not after the last kept key, and a key put back gets its old index. Nil: a new
	// OpenSM process (started, restarted, or opensm -o), which remembers nothing.
	Memory *Memory
	// Remember keeps what this run leaves in OpenSM's memory (Model.Memory), for
	// the next run of the same process (Reconfigure).
	Remember bool
	// ForgetIndexes mirrors keep_pkey_indexes FALSE (opensm.conf only): before every
	// pass, the first run's and every later sweep's, osm_pkey_mgr_process clears each
	// end port's keys (what it read of the table), accum_pkeys and last_pkey_idx, so
	// every key is new and the table is rebuilt from index 0 in pending order (the
	// default or indx0 key at 0, the others from index 1): Before and Memory do not
	// count, a running OpenSM programs what a new one does, and no key waits for a
	// next pass (onePassFrom0x7fff). The switch ports facing end ports are programmed
	// from the end ports' new tables as always.
	ForgetIndexes bool
	// QoS mirrors opensm -Q (qos TRUE): a partition keeps its sl=, and with it its
	// IPoIB broadcast group and the mgid= groups that inherit it; without it
	// partition_create (osm_prtn_config.c) sets it to 0. Only the reading of the
	// file depends on it (ParseWith).
	QoS bool
}

// Memory is what one OpenSM process remembers about the ports it programmed (see
// Options.Memory), by port GUID.
type Memory struct {
	ports map[check.GUID]*portMemory
}

// portMemory is one port's osm_pkey_tbl_t accum_pkeys (P_Key value -> index + 1) and
// last_pkey_idx (an index + 1, which need not be the largest in accum_pkeys: OpenSM
// raises it when it places a key and lowers it only when it clears that index).
type portMemory struct {
	accum map[uint16]int
	last  int
}

// Entry is one P_Key table entry the model predicts.
type Entry struct {
	// Index in the port's table.
	Index     int32
	PKey      check.PKey
	Partition *Partition
	// DecidedBy is the member item that gave the port this membership (the last one
	// that named it: OpenSM lets the last item win).
	DecidedBy *Member
}

// PeerTable is what OpenSM programs on the switch port facing an end port.
type PeerTable struct {
	// Managed is false when OpenSM does not write the table (part_enforce off, or the
	// switch has no enforcement capability): it keeps what it held (Table is then
	// that, from Options.PeerBefore).
	Managed bool
	// Table in index order, 0x0000 for empty entries.
	Table []check.PKey
}

// Model is what OpenSM programs for a set of ports from a Config.
type Model struct {
	Config  *Config // the applied configuration (the fallback when the file is rejected)
	Source  *Config // the configuration as given
	Ports   []Port
	Options Options

	index   map[check.GUID]int // a port's place in Ports: the first, should Ports list it twice
	tables  []portTable        // by place in Ports
	members []uint64           // a bit per partition (Config.Partitions order): some port has an entry
	memory  *Memory            // Options.Remember: what OpenSM remembers after this run
}

// portTable is what OpenSM programs on one port.
type portTable struct {
	slots   []Entry    // index order through the last valid entry, PKey 0 for empty entries
	dropped []Entry    // the entries that did not fit (ERR 0512), in the order tried
	peer    *PeerTable // the switch port facing it, if any
	// onePass: the table before is what OpenSM itself programs from this file in
	// one pass over a table with 0x7fff at index 0 (see onePassFrom0x7fff), which
	// is not yet slots: OpenSM's next pass adds 0x7fff.
	onePass bool
}

// NewModel predicts the tables OpenSM 3.3.23 programs on ports from c. c may be a
// rejected Config: the model then is OpenSM's fallback (everyone a full member of the
// default partition), after the side effects of the definitions it read before the
// error (an indx0 item there still moves the default entry off index 0).
func NewModel(c *Config, ports []Port, opt Options) *Model {
	applied := c.Applied()
	m := &Model{Config: applied, Source: c, Ports: ports, Options: opt, index: make(map[check.GUID]int, len(ports)),
		tables: make([]portTable, len(ports)), members: make([]uint64, (len(applied.Partitions)+63)/64)}
	for i, p := range ports {
		if _, ok := m.index[p.GUID]; !ok {
			m.index[p.GUID] = i
		}
	}
	if opt.Remember {
		m.memory = &Memory{ports: map[check.GUID]*portMemory{}}
	}
	// Partition order: OpenSM's prtn_pkey_tbl (map order), which is the Config's
	// (Partition.index); the items of a rejected file count after the applied ones.
	for i, p := range ports {
		st := &portState{full: map[int]*Member{}, limited: map[int]*Member{}}
		if c.Rejected {
			// osm_prtn_make_partitions: the file's items ran before the error, then
			// "retrying with default config" clears the memberships but not the
			// port's indx0_pkey.
			c.replay(p, opt, st, len(applied.Partitions))
			clear(st.full)
			clear(st.limited)
			applied.replay(p, opt, st, 0)
		} else {
			c.replay(p, opt, st, 0)
		}
		m.tables[i] = m.program(p, st)
	}
	return m
}

// itemIndex finds the member items that name a port, in file order: those naming it
// by its GUID, and the keywords (ALL, ALL_CAS, ALL_SWITCHES, ALL_ROUTERS, SELF). One
// is built per Config, for all its models: a model of a few ports of a large file
// then replays their items only, not the file's.
type itemIndex struct {
	items    []*Member
	byGUID   [][]int32 // by the GUID's place in Config.GUIDs: indexes in items
	keywords []int32
}

// indexItems indexes c's items (its definitions' items, in file order).
func (c *Config) indexItems() *itemIndex {
	x := &itemIndex{byGUID: make([][]int32, len(c.GUIDs))}
	for _, d := range c.Definitions {
		for i := range d.Members {
			it := &d.Members[i]
			if it.Kind == KindGUID {
				x.byGUID[it.gi] = append(x.byGUID[it.gi], int32(len(x.items)))
			} else {
				x.keywords = append(x.keywords, int32(len(x.items)))
			}
			x.items = append(x.items, it)
		}
	}
	return x
}

func names(m *Member, p Port, sm check.GUID) bool {
	switch m.Kind {
	case KindGUID:
		return m.GUID == p.GUID
	case KindSelf:
		return sm != 0 && p.GUID == sm
	case KindAll:
		return true
	case KindAllCAs:
		return p.Type == check.NodeCA
	case KindAllSwitches:
		return p.Type == check.NodeSwitch
	case KindAllRouters:
		return p.Type == check.NodeRouter
	}
	return false
}

// replay applies, in file order, c's items that name port p: partition_add_port and
// partition_add_all (osm_prtn_config.c) with manage_membership_change, then
// osm_prtn_add_port (osm_prtn.c). An item's partition is base plus its index in c's
// Partitions.
func (c *Config) replay(p Port, opt Options, st *portState, base int) {
	x := c.items()
	var g []int32
	if at, ok := c.guidIndex[p.GUID]; ok {
		g = x.byGUID[at]
	}
	k := x.keywords
	for len(g) > 0 || len(k) > 0 {
		var i int32
		if len(k) == 0 || (len(g) > 0 && g[0] < k[0]) {
			i, g = g[0], g[1:]
		} else {
			i, k = k[0], k[1:]
		}
		m := x.items[i]
		if !names(m, p, opt.SMGUID) {
			continue
		}
		pi := base + m.Def.Partition.index
		ms := m.Membership
		if opt.AllowBoth && ms != FlagBoth {
			// manage_membership_change: =full drops the port's limited entry of this
			// partition, =limited its full entry. For the implicit SELF=full this is
			// prtn_make_default's cl_map_remove(&p->part_guid_tbl, sm_port_guid).
			if ms == FlagLimited {
				delete(st.full, pi)
			} else {
				delete(st.limited, pi)
			}
		}
		if ms != FlagLimited {
			st.add(pi, m, true, opt.AllowBoth)
		}
		if ms == FlagLimited || (ms == FlagBoth && opt.AllowBoth) {
			st.add(pi, m, false, opt.AllowBoth)
		}
	}
}

// portState is one port's memberships while the items are replayed: by partition
// index, the item that put it in the partition's full and limited table.
type portState struct {
	full, limited map[int]*Member
	indx0         uint16 // osm_pkey_tbl_t.indx0_pkey
}

// add is osm_prtn_add_port for one port: the indx0 bookkeeping, then the port moves
// to the full or limited table (without -W out of the other one).
func (s *portState) add(pi int, m *Member, full, allowBoth bool) {
	key := m.Def.Partition.Key
	if m.Indx0() {
		s.indx0 = uint16(key) // osm_pkey_tbl_set_indx0_pkey
		if full {
			s.indx0 |= 0x8000
		}
	} else if check.PartitionKey(s.indx0&0x7fff) == key {
		s.indx0 = 0
	}
	if !allowBoth {
		delete(s.full, pi)
		delete(s.limited, pi)
	}
	if full {
		s.full[pi] = m
	} else {
		s.limited[pi] = m
	}
}

// pending is an osm_pending_pkey_t with what the model knows about it.
type pending struct {
	pkey  uint16
	isNew bool
	index int
	entry Entry
}

func (m *Model) tableSize(p Port) int {
	if p.TableSize > 0 {
		return p.TableSize
	}
	if m.Options.TableSize > 0 {
		return m.Options.TableSize
	}
	return 0xffff
}

var freshTable = []check.PKey{check.DefaultFull}

// perBlock is how many P_Keys one block of a P_KeyTable holds.
const perBlock = 32

// program builds port p's pending list (pkey_mgr_process_partition_table: partitions
// in map order, the limited table before the full one), runs pkeyMgrUpdatePort and
// updates the switch port facing it.
func (m *Model) program(p Port, st *portState) portTable {
	parts := m.Config.Partitions
	// The partitions the port is in, in map order.
	touched := slices.AppendSeq(slices.Collect(maps.Keys(st.full)), maps.Keys(st.limited))
	slices.Sort(touched)
	touched = slices.Compact(touched)
	var list []Entry
	for _, pi := range touched {
		if pi >= len(parts) {
			continue // a rejected file's partition
		}
		part := parts[pi]
		lim, full := st.limited[pi], st.full[pi]
		k := check.PKey(part.Key)
		if lim != nil {
			list = append(list, Entry{PKey: k, Partition: part, DecidedBy: lim})
		}
		if full != nil {
			list = append(list, Entry{PKey: k | check.MembershipBit, Partition: part, DecidedBy: full})
		}
		if lim != nil || full != nil {
			m.members[pi/64] |= 1 << (pi % 64)
		}
	}
	before := freshTable
	if b, ok := m.Options.Before[p.GUID]; ok {
		before = b
	}
	var start *portMemory
	if m.Options.Memory != nil {
		start = m.Options.Memory.ports[p.GUID]
	}
	if m.Options.ForgetIndexes {
		before, start = nil, nil
	}
	var t portTable
	var after *portMemory
	t.slots, t.dropped, after = pkeyMgrUpdatePort(before, list, m.tableSize(p), m.Options.AllowBoth, st.indx0, start)
	t.onePass = m.Options.AllowBoth && st.indx0 == 0 && onePassFrom0x7fff(before, list, m.tableSize(p), start)
	if m.memory != nil {
		m.memory.ports[p.GUID] = after
	}
	if p.Type != check.NodeSwitch && p.Peer != nil {
		prev := freshTable
		if b, ok := m.Options.PeerBefore[p.GUID]; ok {
			prev = b
		}
		t.peer = updatePeerPort(t.slots, *p.Peer, prev, m.Options.EnforceOff)
	}
	return t
}

// SameKey is how OpenSM matches a key it finds in a table with one it programs
// (osm_pkey_tbl_set, pkey_mgr_update_port): by the 15-bit key, or with
// allow_both_pkeys (-W) by the whole value, membership bit included.
func SameKey(a, b check.PKey, allowBoth bool) bool {
	if allowBoth {
		return a == b
	}
	return a.Partition() == b.Partition()
}

// pkeyMgrUpdatePort is pkey_mgr_process_physical_port for each entry followed by
// pkey_mgr_update_port (osm_pkey_mgr.c): a key already in the table keeps its index,
// the default key goes to index 0 unless an indx0 key claims it, new keys go after the
// last index OpenSM used, then into the first free entry from index 1; what does not
// fit is dropped ("ERR 0512 ... Pkey table is full"). start is what the process
// remembers from its earlier sweeps (accum_pkeys, last_pkey_idx; nil: a new process,
// whose memory starts empty); after is what it remembers after this one. The table
// is returned index by index through its last valid entry.
func pkeyMgrUpdatePort(before []check.PKey, list []Entry, maxPKeys int, allowBoth bool, indx0 uint16, start *portMemory) (table, dropped []Entry, after *portMemory) {
	base := func(k uint16) uint16 { return k & 0x7fff }
	match := func(a, b uint16) bool { return SameKey(check.PKey(a), check.PKey(b), allowBoth) }
	isDefault := func(k uint16) bool {
		if allowBoth {
			return k == 0xffff
		}
		return base(k) == 0x7fff
	}
	// keys: osm_pkey_tbl_set, the first valid entry of each key wins. (Its comment
	// says a full entry takes precedence over a limited one without -W, but
	// cl_map_insert keeps an existing key's item: lab, OpenSM 3.3.23, a table
	// 0xffff 0x0001 0x8001 left by a -W run puts 0x8001 at index 1 in a run
	// without -W.)
	keys := map[uint16]int{}
	for i, k := range before {
		if !k.Valid() {
			continue
		}
		kk := uint16(k)
		if !allowBoth {
			kk = base(kk)
		}
		if _, ok := keys[kk]; !ok {
			keys[kk] = i
		}
	}
	accum := map[uint16]int{} // pkey -> index + 1
	last := 0                 // last_pkey_idx
	if start != nil {
		maps.Copy(accum, start.accum)
		last = start.last
	}
	clearAccum := func(idx int) {
		// clear_accum_pkey_index: the first key in map order (bytes swapped) at idx.
		var hit []uint16
		for k, v := range accum {
			if v == idx+1 {
				hit = append(hit, k)
			}
		}
		if len(hit) == 0 {
			return
		}
		delete(accum, slices.MinFunc(hit, func(a, b uint16) int { return cmp.Compare(orderKey(a), orderKey(b)) }))
		if last == idx+1 {
			last = 0
			for _, v := range accum {
				last = max(last, v)
			}
		}
	}
	setAccum := func(k uint16, idx int) {
		if idx >= last {
			last = idx + 1
		}
		accum[k] = idx + 1
	}
	// pkey_mgr_process_physical_port: updated entries at the head (each inserted
	// there, so in reverse), new ones at the tail.
	var head, tail []pending
	for _, e := range list {
		pk := uint16(e.PKey)
		kk := pk
		if !allowBoth {
			kk = base(pk)
		}
		pd := pending{pkey: pk, entry: e}
		orig, ok := keys[kk]
		if !ok {
			pd.isNew = true
		} else {
			pd.index = orig
			if indx0 != 0 {
				if match(pk, indx0) && orig != 0 {
					pd.isNew = true
					clearAccum(orig)
				}
				if orig == 0 && !match(pk, indx0) {
					pd.isNew = true
					clearAccum(0)
				}
			} else if orig == 0 {
				if base(pk) != 0x7fff {
					pd.isNew = true
					clearAccum(0)
				}
			} else if isDefault(pk) {
				pd.isNew = true
				clearAccum(orig)
			}
		}
		if pd.isNew {
			tail = append(tail, pd)
		} else {
			head = append(head, pd) // reversed below: each went to the front
		}
	}
	slices.Reverse(head)
	queue := append(head, tail...)
	maxBlocks := (maxPKeys + perBlock - 1) / perBlock
	findFree := func() (int, bool) { // osm_pkey_find_next_free_entry from block 0 index 1
		for idx := 1; idx < maxBlocks*perBlock; idx++ {
			if idx >= len(table) || !table[idx].PKey.Valid() {
				return idx, true
			}
		}
		return 0, false
	}
	for q := 0; q < len(queue); q++ {
		pd := queue[q]
		idx, found, fromAccum := 0, false, false
		if !pd.isNew {
			idx, found = pd.index, true
		} else {
			if v, ok := accum[pd.pkey]; ok {
				fromAccum = true
				idx = v - 1
				if (indx0 != 0 && match(pd.pkey, indx0)) || (pd.pkey != indx0 && idx == 0) {
					clearAccum(idx)
					queue = append(queue, pd)
					continue
				}
				found = true
			}
			if !found {
				switch {
				case indx0 == 0 && isDefault(pd.pkey):
					idx = 0
				case indx0 != 0 && match(pd.pkey, indx0):
					idx = 0
				case last > 0:
					idx = last
				default:
					idx = 1
				}
				if idx >= maxPKeys {
					if !isDefault(pd.pkey) {
						idx, found = findFree()
						if found && idx >= maxPKeys {
							found = false
						}
						if found {
							clearAccum(idx)
						}
					}
					if !found {
						dropped = append(dropped, pd.entry)
					}
				} else {
					found = true
				}
			}
		}
		if !found {
			continue
		}
		for len(table) <= idx {
			table = append(table, Entry{Index: int32(len(table))})
		}
		table[idx] = pd.entry
		table[idx].Index = int32(idx)
		if !fromAccum {
			setAccum(pd.pkey, idx)
		}
	}
	for len(table) > 0 && !table[len(table)-1].PKey.Valid() {
		table = table[:len(table)-1]
	}
	return table, dropped, &portMemory{accum: accum, last: last}
}

// onePassFrom0x7fff reports whether before, holding 0xffff at index 0 and no 0x7fff,
// is what one pass of OpenSM with -W (allow_both_pkeys) and no indx0 makes of list from
// the same table with 0x7fff at index 0, when list holds both 0x7fff and 0xffff (the
// default partition with `both`). In that pass (pkey_mgr_process_physical_port) the
// 0x7fff found at index 0 is kept there ("updated": index 0 keeps a key of the
// default partition) and 0xffff, not in the table, is new and goes to index 0 too
// (pkey_mgr_update_port: the default P_Key's index when no indx0 key claims it); it
// is written last, over 0x7fff, which that pass loses without an error. The next pass
// finds 0xffff at index 0 and adds 0x7fff as a new key (lab, OpenSM 3.3.23: a run
// without -W leaves 0x7fff at index 0, a run with -W and `Default=0x7fff,
// defmember=both : ALL` then leaves 0xffff only, and the run after it 0xffff 0x7fff;
// on a fresh table one run writes both).
func onePassFrom0x7fff(before []check.PKey, list []Entry, maxPKeys int, start *portMemory) bool {
	const limited = check.DefaultFull &^ check.MembershipBit
	if len(before) == 0 || before[0] != check.DefaultFull || slices.Contains(before, limited) ||
		!slices.ContainsFunc(list, func(e Entry) bool { return e.PKey == limited }) {
		return false
	}
	from := slices.Clone(before)
	from[0] = limited
	out, _, _ := pkeyMgrUpdatePort(from, list, maxPKeys, true, 0, start)
	return slices.EqualFunc(out, trimTable(before), func(e Entry, k check.PKey) bool { return e.PKey == k })
}

// trimTable is t through its last valid entry.
func trimTable(t []check.PKey) []check.PKey {
	end := 0
	for i, k := range t {
		if k.Valid() {
			end = i + 1
		}
	}
	return t[:end]
}

// updatePeerPort is pkey_mgr_update_peer_port: the end port's new entries, in index
// order, packed from index 0 into the switch port facing it, leaving out a limited
// entry when the full entry of the key is there too (with -W and `both` the switch
// port gets only the full one). With part_enforce off OpenSM only clears the
// enforcement bits and does not touch the table.
func updatePeerPort(slots []Entry, sp SwitchPort, prev []check.PKey, enforceOff bool) *PeerTable {
	pt := &PeerTable{}
	if sp.EnforceCap == 0 || enforceOff {
		pt.Table = append([]check.PKey(nil), prev...)
		return pt
	}
	pt.Managed = true
	full := map[check.PartitionKey]bool{}
	for _, e := range slots {
		if e.PKey.Valid() && e.PKey.IsFull() {
			full[e.PKey.Partition()] = true
		}
	}
	var packed []check.PKey
	for _, e := range slots {
		if !e.PKey.Valid() || (!e.PKey.IsFull() && full[e.PKey.Partition()]) {
			continue
		}
		packed = append(packed, e.PKey)
	}
	maxBlocks := (sp.EnforceCap + perBlock - 1) / perBlock
	if len(packed) > maxBlocks*perBlock {
		// The loop stops at the capacity (and OpenSM turns enforcement off).
		packed = packed[:maxBlocks*perBlock]
	}
	if len(packed) == 0 {
		// Nothing to copy: OpenSM writes no block (peer_block_idx wraps), the table
		// stays as it was.
		pt.Table = append([]check.PKey(nil), prev...)
		return pt
	}
	blocks := (len(packed) + perBlock - 1) / perBlock
	out := make([]check.PKey, max(len(prev), blocks*perBlock))
	copy(out, prev)
	for i := 0; i < blocks*perBlock; i++ {
		out[i] = 0
		if i < len(packed) {
			out[i] = packed[i]
		}
	}
	pt.Table = trimTable(out)
	return pt
}

// table is what the model predicts for the port with this GUID (zero when it has none).
func (m *Model) table(guid check.GUID) portTable {
	if i, ok := m.index[guid]; ok {
		return m.tables[i]
	}
	return portTable{}
}

// Table returns the valid P_Key entries of the port with this GUID in index order, or
// nil.
func (m *Model) Table(guid check.GUID) []Entry {
	var out []Entry
	for _, e := range m.table(guid).slots {
		if e.PKey.Valid() {
			out = append(out, e)
		}
	}
	return out
}

// Slots returns the port's table index by index through its last valid entry, empty
// entries (0x0000) included, or nil. The caller must not modify it.
func (m *Model) Slots(guid check.GUID) []Entry { return m.table(guid).slots }

// PKeys returns the valid entries as values in index order, for comparisons with a
// port's real table.
func (m *Model) PKeys(guid check.GUID) []check.PKey {
	var out []check.PKey
	for _, e := range m.Table(guid) {
		out = append(out, e.PKey)
	}
	return out
}

// TableValues is the port's table index by index through its last valid entry, 0x0000
// for empty entries (what smpquery pkeys reads), or nil.
func (m *Model) TableValues(guid check.GUID) []check.PKey {
	var out []check.PKey
	for _, e := range m.Slots(guid) {
		out = append(out, e.PKey)
	}
	return out
}

// Dropped is how many entries did not fit the port's table.
func (m *Model) Dropped(guid check.GUID) int { return len(m.DroppedEntries(guid)) }

// DroppedEntries are the entries OpenSM could not place ("ERR 0512 ... Pkey table is
// full"), in the order it tried them.
func (m *Model) DroppedEntries(guid check.GUID) []Entry { return m.table(guid).dropped }

// Peer returns what OpenSM programs on the switch port facing this end port, or nil
// when the port has no switch peer (Port.Peer) or is a switch's port 0.
func (m *Model) Peer(guid check.GUID) *PeerTable { return m.table(guid).peer }

// Exists reports whether OpenSM keeps the partition: it deletes a partition none of
// whose members is in the fabric (osm_prtn_make_partitions), and its multicast
// groups with it.
func (m *Model) Exists(p *Partition) bool {
	parts := m.Config.Partitions
	return p.index < len(parts) && parts[p.index] == p && m.hasMember(p.index)
}

// hasMember reports whether some port modelled has an entry of partition i (its place
// in Config.Partitions).
func (m *Model) hasMember(i int) bool { return m.members[i/64]&(1<<(i%64)) != 0 }

// Reconfigure predicts what OpenSM programs when it applies c to a fabric whose ports
// hold what prev predicted: keys kept keep their index, removed ones leave holes, and
// new ones that do not fit are dropped (ERR 0512) while kept ones stay. running says
// it is the OpenSM process that applied prev, re-reading its file (SIGHUP, a heavy
// sweep; prev must have been built with Options.Remember): it remembers the index it
// gave every key, so a new key goes after removed ones instead of into their holes
// (lab: after a=0x10 b=0x20 c=0x30, removing c and adding d=0x40 puts d at index 4 in
// a running OpenSM, at index 3 in a new one), and it keeps its partitions, so a
// definition without a key finds the earlier run's partition by name (reparseRunning).
// Otherwise it is a new process (opensm restarted, or -o), which remembers nothing. The
// result remembers, for the next step.
func Reconfigure(prev *Model, c *Config, running bool) *Model {
	opt := prev.Options
	// The tables before are prev's predictions, end ports' and their switch peers'.
	opt.Before, opt.PeerBefore = map[check.GUID][]check.PKey{}, map[check.GUID][]check.PKey{}
	for i, p := range prev.Ports {
		opt.Before[p.GUID] = prev.TableValues(p.GUID)
		if t := prev.tables[i].peer; t != nil {
			opt.PeerBefore[p.GUID] = t.Table
		}
	}
	opt.Memory, opt.Remember = nil, true
	if running {
		if prev.memory == nil {
			panic("partconf.Reconfigure: running, but prev was built without Options.Remember")
		}
		opt.Memory = prev.memory
		c = c.reparseRunning(prev)
	}
	return NewModel(c, prev.Ports, opt)
}
