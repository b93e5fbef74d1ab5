package partconf

import (
	"maps"
	"runtime"
	"slices"
	"sort"
	"sync"

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
	Switch check.GUID // the switch's node GUID
	Num    int
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
	// op is DecidedBy's index in the applied Config's Members plus one, 0 when there
	// is none (an empty entry, or a key the port held before): what the model stores.
	op int32
}

// slot is an Entry as the model stores it: 6 bytes instead of 32 (a million of them at
// 100,000 ports). The index is its place in the port's run, the partition its item's,
// and Entry.op is opHi<<16 | opLo (two halves: an int32 would align the slot to 8).
type slot struct {
	opLo, opHi uint16
	pkey       check.PKey
}

func (s slot) op() int32 { return int32(s.opHi)<<16 | int32(s.opLo) }

// slotChunk is how many slots one array of the store holds: a port's table has at most
// 0xffff entries, so its run always fits in one.
const slotChunk = 1 << 16

// PeerTable is what OpenSM programs on the switch port facing an end port.
type PeerTable struct {
	Port SwitchPort
	// Managed is false when OpenSM does not write the table (part_enforce off, or the
	// switch has no enforcement capability): it keeps what it held (Table is then
	// that, from Options.PeerBefore).
	Managed bool
	// Table in index order, 0x0000 for empty entries.
	Table []check.PKey
	// Enforced: OpenSM sets PartitionEnforcementInbound/Outbound on the port. It clears
	// them when enforcement is off or the end port's entries do not fit.
	Enforced bool
}

// Model is what OpenSM programs for a set of ports from a Config.
type Model struct {
	Config  *Config // the applied configuration (the fallback when the file is rejected)
	Source  *Config // the configuration as given
	Ports   []Port
	Options Options

	// byFile: Ports begin with src's GUIDs in order, so a port's place is its
	// GUIDIndex there; index has the places of the others (a second map of 100,000
	// GUIDs was 3 MB).
	byFile *Config
	index  map[check.GUID]int
	// Every port's table, index order, PKey 0 for empty entries: port i's slots are
	// chunks[at[i]/slotChunk][at[i]%slotChunk:][:n[i]] (a run never crosses chunks).
	// One Entry slice per port held 28 MB at 100,000 ports and 1.1 million entries;
	// the store holds 7.
	chunks  [][]slot
	at      []uint32
	n       []uint16
	dropped map[int][]Entry    // by port: entries that did not fit (ERR 0512)
	peers   map[int]*PeerTable // by port: the switch port facing it
	memory  *Memory            // Options.Remember: what OpenSM remembers after this run
	members []int              // per partition (Config.Partitions order): ports with an entry
	ops     []Member           // the applied Config's Members: what slot.op indexes
}

// NewModel predicts the tables OpenSM 3.3.23 programs on ports from c. c may be a
// rejected Config: the model then is OpenSM's fallback (everyone a full member of the
// default partition), after the side effects of the definitions it read before the
// error (an indx0 item there still moves the default entry off index 0).
func NewModel(c *Config, ports []Port, opt Options) *Model {
	src := c
	applied := c.Applied()
	m := &Model{Config: applied, Source: src, Ports: ports, Options: opt}
	rest := ports
	if n := len(src.GUIDs); n > 0 && len(ports) >= n && src.guidIndex != nil {
		m.byFile = src
		for i, g := range src.GUIDs {
			if ports[i].GUID != g {
				m.byFile = nil
				break
			}
		}
		if m.byFile != nil {
			rest = ports[n:]
		}
	}
	m.index = make(map[check.GUID]int, len(rest))
	for i, p := range rest {
		if _, ok := m.portOf(p.GUID); !ok {
			m.index[p.GUID] = len(ports) - len(rest) + i
		}
	}
	m.at = make([]uint32, len(ports))
	m.n = make([]uint16, len(ports))
	m.members = make([]int, len(applied.Partitions))
	m.ops = applied.Members

	// Partition order: OpenSM's prtn_pkey_tbl (map order), which is the Config's
	// (Partition.index); the items of a rejected file count after the applied ones.
	for _, c := range []*Config{applied, src} {
		for i, p := range c.Partitions {
			if p.index != int32(i) {
				p.index = int32(i) // only a Config not made by the parser
			}
		}
	}
	fileOps := &src.byGUID // Ports begin with the file's GUIDs, in order
	if m.byFile == nil {
		fileOps = newOpIndex(src.Members, m, len(ports))
	}
	var fallbackOps *opIndex
	if src.Rejected {
		fallbackOps = newOpIndex(applied.Members, m, len(ports))
	}
	srcBase := len(applied.Partitions)
	build := func(bd *builder) {
		st := newPortState(len(applied.Partitions) + len(src.Partitions) + 1)
		for ip := bd.lo; ip < bd.hi; ip++ {
			p := ports[ip]
			st.reset(ip)
			// The items of a GUID listed twice in ports are under one place (portOf).
			i, _ := m.portOf(p.GUID)
			if src.Rejected {
				// osm_prtn_make_partitions: the file's items ran before the error, then
				// "retrying with default config" clears the memberships but not the
				// port's indx0_pkey.
				fileOps.replay(i, p, opt, func(op int32, mem *Member, full bool) {
					st.add(srcBase+int(mem.Def.Partition.index), op, mem, full, opt.AllowBoth)
				}, st)
				st.clearMembers()
				fallbackOps.replay(i, p, opt, func(op int32, mem *Member, full bool) {
					st.add(int(mem.Def.Partition.index), op, mem, full, opt.AllowBoth)
				}, st)
			} else {
				fileOps.replay(i, p, opt, func(op int32, mem *Member, full bool) {
					st.add(int(mem.Def.Partition.index), op, mem, full, opt.AllowBoth)
				}, st)
			}
			bd.program(ip, p, st, applied.Partitions)
		}
	}
	// A port's table depends only on the items that name it: the ports are shared out
	// in ranges among up to buildWorkers goroutines, each with its own store, and the
	// stores are joined in port order.
	workers := min(buildWorkers(), max(1, len(ports)/buildRange))
	bds := make([]builder, workers)
	var wg sync.WaitGroup
	for w := range bds {
		bds[w] = builder{m: m, sc: &mgrScratch{}, members: make([]int, len(applied.Partitions)),
			lo: w * len(ports) / workers, hi: (w + 1) * len(ports) / workers}
		if w == workers-1 {
			build(&bds[w])
			continue
		}
		wg.Add(1)
		go func() { defer wg.Done(); build(&bds[w]) }()
	}
	wg.Wait()
	for w := range bds {
		bd := &bds[w]
		if base := uint32(len(m.chunks) * slotChunk); base > 0 {
			for i := bd.lo; i < bd.hi; i++ {
				m.at[i] += base
			}
		}
		m.chunks = append(m.chunks, bd.chunks...)
		for pi, n := range bd.members {
			m.members[pi] += n
		}
		for i, d := range bd.dropped {
			if m.dropped == nil {
				m.dropped = map[int][]Entry{}
			}
			m.dropped[i] = d
		}
		for i, pt := range bd.peers {
			if m.peers == nil {
				m.peers = map[int]*PeerTable{}
			}
			m.peers[i] = pt
		}
		if opt.Remember {
			if m.memory == nil {
				m.memory = &Memory{ports: map[check.GUID]*portMemory{}}
			}
			for g, pm := range bd.memory {
				m.memory.ports[g] = pm
			}
		}
	}
	return m
}

// buildWorkers bounds the goroutines NewModel builds tables with (and GOMAXPROCS);
// buildRange is the fewest ports worth one. Variables for the tests.
var (
	buildWorkers = func() int { return min(runtime.GOMAXPROCS(0), 4) }
	buildRange   = 4096
)

// builder builds the tables of a range of ports: its own working memory, store and
// counts, joined into the Model when every range is built.
type builder struct {
	m       *Model
	lo, hi  int // its ports: Ports[lo:hi]
	sc      *mgrScratch
	chunks  [][]slot
	members []int // per partition: ports with an entry
	dropped map[int][]Entry
	peers   map[int]*PeerTable
	memory  map[check.GUID]*portMemory // Options.Remember
}

// portOf is the place in Ports of the port with this GUID: the first, should Ports
// list it twice.
func (m *Model) portOf(guid check.GUID) (int, bool) {
	if m.byFile != nil {
		if i, ok := m.byFile.guidIndex[guid]; ok {
			return int(i), true
		}
	}
	i, ok := m.index[guid]
	return i, ok
}

// opIndex finds the member items that name a port, in file order. The items naming
// port i are one run of one array, flat[starts[i]:starts[i+1]], found through the
// model's GUID index (a slice per GUID cost 23 MB at 100,000 ports, a map of runs and a
// run number per item another 15 MB).
type opIndex struct {
	ops      []Member
	starts   []int32
	flat     []int32
	keywords []int32 // ALL, ALL_CAS, ALL_SWITCHES, ALL_ROUTERS, SELF items
}

func newOpIndex(ops []Member, m *Model, ports int) *opIndex {
	group := make([]int32, len(ops)) // each item's port, -1: none
	for i := range ops {
		group[i] = -1
		if ops[i].Kind == KindGUID {
			if p, ok := m.portOf(ops[i].GUID); ok {
				group[i] = int32(p)
			}
		}
	}
	x := groupItems(ops, group, ports)
	return &x
}

// groupItems indexes ops by group: group[i] is item i's group (a port, or a GUID's
// place in Config.GUIDs), -1 for none; the items naming no GUID are the keywords.
// Each group's items are one run of flat, in file order (a counting sort).
func groupItems(ops []Member, group []int32, groups int) opIndex {
	x := opIndex{ops: ops, starts: make([]int32, groups+1)}
	for i, g := range group {
		if ops[i].Kind != KindGUID {
			x.keywords = append(x.keywords, int32(i))
		} else if g >= 0 {
			x.starts[g+1]++
		}
	}
	for g := range groups {
		x.starts[g+1] += x.starts[g]
	}
	x.flat = make([]int32, x.starts[groups])
	next := slices.Clone(x.starts[:groups]) // where each group's next item goes
	for i, g := range group {
		if g >= 0 {
			x.flat[next[g]] = int32(i)
			next[g]++
		}
	}
	return x
}

// byPort are the items that name port i by its GUID, in file order (none for a port
// past the index's).
func (x *opIndex) byPort(i int) []int32 {
	if i+1 >= len(x.starts) {
		return nil
	}
	return x.flat[x.starts[i]:x.starts[i+1]]
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

// replay applies, in file order, the items that name port p: partition_add_port and
// partition_add_all (osm_prtn_config.c) with manage_membership_change, then
// osm_prtn_add_port (osm_prtn.c) through add.
func (x *opIndex) replay(i int, p Port, opt Options, add func(int32, *Member, bool), st *portState) {
	g := x.byPort(i)
	k := x.keywords
	for len(g) > 0 || len(k) > 0 {
		var i int32
		if len(k) == 0 || (len(g) > 0 && g[0] < k[0]) {
			i, g = g[0], g[1:]
		} else {
			i, k = k[0], k[1:]
		}
		m := &x.ops[i]
		if !names(m, p, opt.SMGUID) {
			continue
		}
		ms := m.Membership
		if opt.AllowBoth && ms != FlagBoth {
			// manage_membership_change: =full drops the port's limited entry of this
			// partition, =limited its full entry. For the implicit SELF=full this is
			// prtn_make_default's cl_map_remove(&p->part_guid_tbl, sm_port_guid).
			st.drop(m.Def.Partition, ms == FlagLimited)
		}
		if ms != FlagLimited {
			add(i, m, true)
		}
		if ms == FlagLimited || (ms == FlagBoth && opt.AllowBoth) {
			add(i, m, false)
		}
	}
}

// portState is one port's memberships while the items are replayed: per partition
// (by index) whether it is in the full and the limited table, and who put it there
// (the item's index in its Config's Members, plus one; 0: not a member).
type portState struct {
	stamp   []int32
	cur     int32
	full    []int32
	limited []int32
	touched []int
	indx0   uint16 // osm_pkey_tbl_t.indx0_pkey
	byPart  map[*Partition]int
}

func newPortState(n int) *portState {
	return &portState{stamp: make([]int32, n), full: make([]int32, n), limited: make([]int32, n), byPart: map[*Partition]int{}}
}

func (s *portState) reset(i int) {
	s.cur = int32(i + 1)
	s.touched = s.touched[:0]
	s.indx0 = 0
}

func (s *portState) slot(pi int) {
	if s.stamp[pi] != s.cur {
		s.stamp[pi] = s.cur
		s.full[pi], s.limited[pi] = 0, 0
		s.touched = append(s.touched, pi)
	}
}

func (s *portState) clearMembers() {
	for _, pi := range s.touched {
		s.full[pi], s.limited[pi] = 0, 0
	}
	s.touched = s.touched[:0]
	s.cur = -s.cur
}

// drop is manage_membership_change for one port.
func (s *portState) drop(p *Partition, limitedItem bool) {
	pi, ok := s.byPart[p]
	if !ok || s.stamp[pi] != s.cur {
		return
	}
	if limitedItem {
		s.full[pi] = 0
	} else {
		s.limited[pi] = 0
	}
}

// add is osm_prtn_add_port for one port: the indx0 bookkeeping, then the port moves
// to the full or limited table (without -W out of the other one).
func (s *portState) add(pi int, op int32, m *Member, full, allowBoth bool) {
	if allowBoth {
		s.byPart[m.Def.Partition] = pi // for drop, which runs only with -W
	}
	s.slot(pi)
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
		s.full[pi], s.limited[pi] = 0, 0
	}
	if full {
		s.full[pi] = op + 1
	} else {
		s.limited[pi] = op + 1
	}
}

// pending is an osm_pending_pkey_t with what the model knows about it.
type pending struct {
	pkey  uint16
	isNew bool
	index int
	entry Entry
}

func (m *Model) tableSize(i int) int {
	if n := m.Ports[i].TableSize; n > 0 {
		return n
	}
	if m.Options.TableSize > 0 {
		return m.Options.TableSize
	}
	return 0xffff
}

var freshTable = []check.PKey{check.DefaultFull}

// program builds port i's pending list (pkey_mgr_process_partition_table: partitions
// in map order, the limited table before the full one) and runs pkeyMgrUpdatePort.
func (bd *builder) program(i int, p Port, st *portState, parts []*Partition) {
	m, sc := bd.m, bd.sc
	touched := append(sc.touched[:0], st.touched...)
	sort.Ints(touched)
	sc.touched = touched
	list := sc.list[:0]
	for _, pi := range touched {
		if pi >= len(parts) {
			continue
		}
		part := parts[pi]
		k := check.PKey(part.Key)
		if op := st.limited[pi] - 1; op >= 0 {
			list = append(list, Entry{PKey: k, Partition: part, DecidedBy: &m.ops[op], op: op + 1})
		}
		if op := st.full[pi] - 1; op >= 0 {
			list = append(list, Entry{PKey: k | check.MembershipBit, Partition: part, DecidedBy: &m.ops[op], op: op + 1})
		}
		if st.limited[pi] != 0 || st.full[pi] != 0 {
			bd.members[pi]++
		}
	}
	before := freshTable
	if b, ok := m.Options.Before[p.GUID]; ok {
		before = b
	}
	sc.list = list
	size := m.tableSize(i)
	var start *portMemory
	if m.Options.Memory != nil {
		start = m.Options.Memory.ports[p.GUID]
	}
	slots, dropped := pkeyMgrUpdatePort(before, list, size, m.Options.AllowBoth, st.indx0, start, sc)
	if m.Options.Remember {
		if bd.memory == nil {
			bd.memory = map[check.GUID]*portMemory{}
		}
		bd.memory[p.GUID] = &portMemory{accum: maps.Clone(sc.accum), last: sc.last}
	}
	bd.store(i, slots)
	if len(dropped) > 0 {
		if bd.dropped == nil {
			bd.dropped = map[int][]Entry{}
		}
		bd.dropped[i] = dropped
	}
	if p.Type != check.NodeSwitch && p.Peer != nil {
		prev := freshTable
		if b, ok := m.Options.PeerBefore[p.GUID]; ok {
			prev = b
		}
		if bd.peers == nil {
			bd.peers = map[int]*PeerTable{}
		}
		bd.peers[i] = updatePeerPort(slots, *p.Peer, prev, m.Options.EnforceOff)
	}
}

// store keeps port i's slots (pkeyMgrUpdatePort's, which it reuses for the next port)
// at the end of the builder's last chunk, or in a new one when they do not fit there;
// Model.at[i] is their place in the builder's chunks until NewModel joins them.
func (bd *builder) store(i int, slots []Entry) {
	last := len(bd.chunks) - 1
	if last < 0 || len(bd.chunks[last])+len(slots) > slotChunk {
		// A chunk of 64 Ki slots is 384 KiB; a small model gets one of its size.
		n := slotChunk
		if len(bd.chunks) == 0 {
			n = min(slotChunk, max(64, 16*(len(bd.m.Ports)-i)))
		}
		bd.chunks = append(bd.chunks, make([]slot, 0, n))
		last++
	}
	c := bd.chunks[last]
	if len(c)+len(slots) > cap(c) {
		// Only the first chunk is ever smaller than slotChunk.
		c = slices.Grow(c, len(slots))
	}
	bd.m.at[i] = uint32(last*slotChunk + len(c))
	bd.m.n[i] = uint16(len(slots))
	for _, e := range slots {
		c = append(c, slot{opLo: uint16(e.op), opHi: uint16(e.op >> 16), pkey: e.PKey})
	}
	bd.chunks[last] = c
}

// stored is port i's run in the store.
func (m *Model) stored(i int) []slot {
	at := m.at[i]
	return m.chunks[at/slotChunk][at%slotChunk:][:m.n[i]]
}

// appendSlots appends port i's slots as Entries to dst.
func (m *Model) appendSlots(dst []Entry, i int) []Entry {
	for j, s := range m.stored(i) {
		e := Entry{Index: int32(j), PKey: s.pkey, op: s.op()}
		if e.op > 0 {
			e.DecidedBy = &m.ops[e.op-1]
			e.Partition = e.DecidedBy.Def.Partition
		}
		dst = append(dst, e)
	}
	return dst
}

// pkeyMgrUpdatePort is pkey_mgr_process_physical_port for each entry followed by
// pkey_mgr_update_port (osm_pkey_mgr.c): a key already in the table keeps its index,
// the default key goes to index 0 unless an indx0 key claims it, new keys go after the
// last index OpenSM used, then into the first free entry from index 1; what does not
// fit is dropped ("ERR 0512 ... Pkey table is full"). start is what the process
// remembers from its earlier sweeps (accum_pkeys, last_pkey_idx; nil: a new process,
// whose memory starts empty); what it remembers after this one is left in sc.accum
// and sc.last.
//
// sc holds the working memory, reused from port to port (nil: allocate it): the
// returned slots are sc's until the next call, dropped are the caller's.
func pkeyMgrUpdatePort(before []check.PKey, list []Entry, maxPKeys int, allowBoth bool, indx0 uint16, start *portMemory, sc *mgrScratch) (slots []Entry, dropped []Entry) {
	if sc == nil {
		sc = &mgrScratch{}
	}
	base := func(k uint16) uint16 { return k & 0x7fff }
	match := func(a, b uint16) bool {
		if allowBoth {
			return a == b
		}
		return base(a) == base(b)
	}
	isDefault := func(k uint16) bool {
		if allowBoth {
			return k == 0xffff
		}
		return base(k) == 0x7fff
	}
	// keys: osm_pkey_tbl_set, the first valid entry of each key wins.
	keys := sc.keysMap()
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
	accum := sc.accumMap() // pkey -> index + 1
	last := 0              // last_pkey_idx
	if start != nil {
		maps.Copy(accum, start.accum)
		last = start.last
	}
	defer func() { sc.last = last }()
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
		sort.Slice(hit, func(a, b int) bool { return orderKey(hit[a]) < orderKey(hit[b]) })
		delete(accum, hit[0])
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
	head, tail := sc.head[:0], sc.tail[:0]
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
	queue := append(append(sc.queue[:0], head...), tail...)
	sc.head, sc.tail = head, tail
	const perBlock = 32
	maxBlocks := (maxPKeys + perBlock - 1) / perBlock
	table, placed := sc.tables(maxBlocks * perBlock)
	defer sc.clearTables()
	used := 0
	findFree := func() (int, bool) { // osm_pkey_find_next_free_entry from block 0 index 1
		for idx := 1; idx < maxBlocks*perBlock; idx++ {
			if table[idx]&0x7fff == 0 {
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
		table[idx] = pd.pkey
		placed[idx] = pd.entry
		placed[idx].Index = int32(idx)
		sc.written = max(sc.written, idx+1)
		used = max(used, idx/perBlock+1)
		if !fromAccum {
			setAccum(pd.pkey, idx)
		}
	}
	sc.queue = queue
	end := 0
	for i, k := range table[:sc.written] {
		if k&0x7fff != 0 {
			end = i + 1
		}
	}
	if cap(sc.slots) < end {
		sc.slots = make([]Entry, end)
	}
	slots = sc.slots[:end]
	for i := 0; i < end; i++ {
		if placed[i].Partition != nil && table[i]&0x7fff != 0 {
			slots[i] = placed[i]
		} else {
			slots[i] = Entry{Index: int32(i), PKey: check.PKey(table[i])}
		}
	}
	return slots, dropped
}

// mgrScratch is pkeyMgrUpdatePort's working memory, kept from one port to the next
// (NewModel's loop over 100,000 ports allocated it 100,000 times).
type mgrScratch struct {
	touched           []int
	list              []Entry
	head, tail, queue []pending
	keys, accum       map[uint16]int
	last              int // last_pkey_idx after the last call
	table             []uint16
	placed            []Entry // Partition nil: nothing placed
	written           int     // table and placed are zero from here on
	slots             []Entry // what pkeyMgrUpdatePort returns
}

func (sc *mgrScratch) keysMap() map[uint16]int {
	if sc.keys == nil {
		sc.keys = map[uint16]int{}
	}
	clear(sc.keys)
	return sc.keys
}

func (sc *mgrScratch) accumMap() map[uint16]int {
	if sc.accum == nil {
		sc.accum = map[uint16]int{}
	}
	clear(sc.accum)
	return sc.accum
}

// tables returns the zeroed table and placed entries of n slots.
func (sc *mgrScratch) tables(n int) ([]uint16, []Entry) {
	if cap(sc.table) < n {
		sc.table, sc.placed = make([]uint16, n), make([]Entry, n)
		sc.written = 0
	}
	return sc.table[:n], sc.placed[:n]
}

func (sc *mgrScratch) clearTables() {
	clear(sc.table[:sc.written])
	clear(sc.placed[:sc.written])
	sc.written = 0
}

// updatePeerPort is pkey_mgr_update_peer_port: the end port's new entries, in index
// order, packed from index 0 into the switch port facing it, leaving out a limited
// entry when the full entry of the key is there too (with -W and `both` the switch
// port gets only the full one). With part_enforce off OpenSM only clears the
// enforcement bits and does not touch the table.
func updatePeerPort(slots []Entry, sp SwitchPort, prev []check.PKey, enforceOff bool) *PeerTable {
	pt := &PeerTable{Port: sp}
	if sp.EnforceCap == 0 {
		pt.Table = append([]check.PKey(nil), prev...)
		return pt
	}
	if enforceOff {
		pt.Table = append([]check.PKey(nil), prev...)
		return pt
	}
	pt.Managed, pt.Enforced = true, true
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
	const perBlock = 32
	maxBlocks := (sp.EnforceCap + perBlock - 1) / perBlock
	if len(packed) > maxBlocks*perBlock {
		// The loop stops at the capacity and enforcement is turned off.
		packed = packed[:maxBlocks*perBlock]
		pt.Enforced = false
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
	end := 0
	for i, k := range out {
		if k.Valid() {
			end = i + 1
		}
	}
	pt.Table = out[:end]
	return pt
}

// Table returns the valid P_Key entries of the port with this GUID in index order, or
// nil.
func (m *Model) Table(guid check.GUID) []Entry {
	i, ok := m.portOf(guid)
	if !ok {
		return nil
	}
	out := make([]Entry, 0, m.n[i])
	for _, e := range m.appendSlots(nil, i) {
		if e.PKey.Valid() {
			out = append(out, e)
		}
	}
	return out
}

// Slots returns the port's table index by index through its last valid entry, empty
// entries (0x0000) included, or nil.
func (m *Model) Slots(guid check.GUID) []Entry { return m.AppendSlots(nil, guid) }

// AppendSlots appends Slots(guid) to dst: a caller printing every port's table reuses
// one array.
func (m *Model) AppendSlots(dst []Entry, guid check.GUID) []Entry {
	if i, ok := m.portOf(guid); ok {
		return m.appendSlots(dst, i)
	}
	return dst
}

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
	i, ok := m.portOf(guid)
	if !ok {
		return nil
	}
	st := m.stored(i)
	out := make([]check.PKey, len(st))
	for j, s := range st {
		out[j] = s.pkey
	}
	return out
}

// Dropped is how many entries did not fit the port's table.
func (m *Model) Dropped(guid check.GUID) int { return len(m.DroppedEntries(guid)) }

// DroppedEntries are the entries OpenSM could not place ("ERR 0512 ... Pkey table is
// full"), in the order it tried them.
func (m *Model) DroppedEntries(guid check.GUID) []Entry {
	if i, ok := m.portOf(guid); ok {
		return m.dropped[i]
	}
	return nil
}

// Peer returns what OpenSM programs on the switch port facing this end port, or nil
// when the port has no switch peer (Port.Peer) or is a switch's port 0.
func (m *Model) Peer(guid check.GUID) *PeerTable {
	if i, ok := m.portOf(guid); ok {
		return m.peers[i]
	}
	return nil
}

// Exists reports whether OpenSM keeps the partition: it deletes a partition none of
// whose members is in the fabric (osm_prtn_make_partitions), and its multicast
// groups with it.
func (m *Model) Exists(p *Partition) bool {
	for i, q := range m.Config.Partitions {
		if q == p {
			return m.members[i] > 0
		}
	}
	return false
}

// Tables returns every port's predicted table (index order, 0x0000 for empty
// entries), by port GUID: the Options.Before of the next run, to predict a
// reconfiguration.
func (m *Model) Tables() map[check.GUID][]check.PKey {
	out := make(map[check.GUID][]check.PKey, len(m.Ports))
	for _, p := range m.Ports {
		out[p.GUID] = m.TableValues(p.GUID)
	}
	return out
}

// PeerTables is Tables for the switch ports facing end ports (Options.PeerBefore).
func (m *Model) PeerTables() map[check.GUID][]check.PKey {
	out := map[check.GUID][]check.PKey{}
	for i, pt := range m.peers {
		out[m.Ports[i].GUID] = pt.Table
	}
	return out
}

// Memory is what OpenSM remembers after this run (Options.Remember), or nil.
func (m *Model) Memory() *Memory { return m.memory }

// Reconfigure predicts what OpenSM programs when it applies c to a fabric whose ports
// hold what prev predicted: keys kept keep their index, removed ones leave holes, and
// new ones that do not fit are dropped (ERR 0512) while kept ones stay. running says
// it is the OpenSM process that applied prev, re-reading its file (SIGHUP, a heavy
// sweep; prev must have been built with Options.Remember): it remembers the index it
// gave every key, so a new key goes after removed ones instead of into their holes
// (lab: after a=0x10 b=0x20 c=0x30, removing c and adding d=0x40 puts d at index 4 in
// a running OpenSM, at index 3 in a new one), and it keeps its partitions, so a
// definition without a key finds the earlier run's partition by name (Running). Otherwise it is a new process (opensm
// restarted, or -o), which remembers nothing. The result remembers, for the next step.
func Reconfigure(prev *Model, c *Config, running bool) *Model {
	opt := prev.Options
	opt.Before, opt.PeerBefore = prev.Tables(), prev.PeerTables()
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

// Running is c as the OpenSM process that applied prev before reads it (see
// Reconfigure): it keeps the partitions of its earlier run.
func (c *Config) Running(prev *Model) *Config { return c.reparseRunning(prev) }
