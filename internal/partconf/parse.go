package partconf

import (
	"fmt"
	"io"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"unsafe"

	"github.com/ibkey/ibkey/internal/check"
)

// Severity is check.Severity, the one severity of lint, audit and comparison findings.
type Severity = check.Severity

// The two severities, as check names them.
const (
	Error   = check.SeverityError
	Warning = check.SeverityWarning
)

// Pos is a place in a partitions.conf file (check.FilePos). Line and Col are 1-based
// physical lines and byte columns (OpenSM's own "line N" counts 4094-byte pieces of
// longer lines).
type Pos = check.FilePos

// Finding is check.Finding: a parse or lint finding has a Pos and no Ports, and its
// Action says how to fix the line.
type Finding = check.Finding

// MemberFlag is the membership a member item asks for.
type MemberFlag uint8

const (
	FlagLimited MemberFlag = iota
	FlagFull
	// FlagBoth is a full and a limited entry with allow_both_pkeys (-W), else full.
	FlagBoth
)

func (m MemberFlag) String() string {
	return [...]string{"limited", "full", "both"}[m]
}

// MemberKind says what a member item names.
type MemberKind uint8

const (
	KindGUID MemberKind = iota
	KindAll
	KindAllCAs
	KindAllSwitches
	KindAllRouters
	KindSelf
)

func (k MemberKind) String() string {
	return [...]string{"GUID", "ALL", "ALL_CAS", "ALL_SWITCHES", "ALL_ROUTERS", "SELF"}[k]
}

// Member is one item of a member list. A large file has millions: a Member is 24
// bytes. Its text is not a string of its own but its place in the file (Text), its
// line and column come from that place (Pos), and what OpenSM's own items and the rare
// items not written verbatim in the file hold is kept in the file's side table.
type Member struct {
	GUID check.GUID  // KindGUID only
	Def  *Definition // the definition the item is written in
	// at is the item's byte offset in the file, or with memberInTable its index in
	// the side table (source.table).
	at uint32
	// bits are the text's length in the file (memberLenMask) and the flags below.
	bits       uint16
	Kind       MemberKind
	Membership MemberFlag
}

const (
	memberLenMask = 1<<12 - 1 // a text in the file lies within one 4094-byte piece
	// memberExplicit: the membership was written (=full...), not the definition's
	// default.
	memberExplicit = 1 << 12
	// memberIndx0: the definition has indx0: this P_Key goes to table index 0.
	memberIndx0 = 1 << 13
	// memberInTable: the text and position are in the side table (source.table).
	memberInTable = 1 << 14
)

// Text is the item as written, e.g. "ALL_C=limi".
func (m *Member) Text() string {
	s := m.Def.src
	if m.bits&memberInTable != 0 {
		return s.table[m.at].text
	}
	return s.text[m.at : m.at+uint32(m.bits&memberLenMask)]
}

// Explicit reports whether the membership was written (=full...), not the
// definition's default.
func (m *Member) Explicit() bool { return m.bits&memberExplicit != 0 }

// Indx0 reports whether the definition has indx0: this P_Key goes to table index 0.
func (m *Member) Indx0() bool { return m.bits&memberIndx0 != 0 }

// Octal reports whether the GUID was written without 0x and with a leading 0
// (OpenSM's strtoull reads it as octal).
func (m *Member) Octal() bool {
	t := m.Text()
	return m.Kind == KindGUID && len(t) > 1 && t[0] == '0' && t[1] != 'x' && t[1] != 'X'
}

// Decimal reports whether the GUID was written without 0x and without a leading 0
// (OpenSM's strtoull reads it as decimal).
func (m *Member) Decimal() bool {
	t := m.Text()
	return m.Kind == KindGUID && len(t) > 0 && t[0] >= '1' && t[0] <= '9'
}

// Pos is where the item is written: line and column in its definition's file (Line 0
// for OpenSM's own items, the implicit Default and the fallback).
func (m *Member) Pos() Pos {
	s := m.Def.src
	if m.bits&memberInTable != 0 {
		t := &s.table[m.at]
		return Pos{File: m.Def.Pos.File, Line: int(t.line), Col: int(t.col)}
	}
	l := s.lineOf(m.at)
	return Pos{File: m.Def.Pos.File, Line: l + 1, Col: int(m.at-s.lines[l]) + 1}
}

// line is Pos().Line.
func (m *Member) line() int {
	if m.bits&memberInTable != 0 {
		return int(m.Def.src.table[m.at].line)
	}
	return m.Def.src.lineOf(m.at) + 1
}

// source is the file members point into: its text, where its lines start, and the
// side table of the texts that are not in it as written.
type source struct {
	text string
	// lines are the byte offsets where lines start (lines[0] = 0 is line 1); block
	// says, for each 4 KiB of the file, the last line starting at or before it.
	lines []uint32
	block []uint32
	table []memberText
}

// memberText is a member's text and position when the file does not hold it as written
// (OpenSM's own items, or bytes it read from what an earlier line left in its buffer).
type memberText struct {
	text      string
	line, col int32
}

const blockShift = 12

func newSource(text string) *source {
	s := &source{text: text, lines: make([]uint32, 1, strings.Count(text, "\n")+1)}
	for o := 0; ; {
		i := strings.IndexByte(text[o:], '\n')
		if i < 0 {
			break
		}
		o += i + 1
		s.lines = append(s.lines, uint32(o))
	}
	s.block = make([]uint32, len(text)>>blockShift+1)
	l := 0
	for b := range s.block {
		for l+1 < len(s.lines) && s.lines[l+1] <= uint32(b<<blockShift) {
			l++
		}
		s.block[b] = uint32(l)
	}
	return s
}

// lineOf is the 0-based line holding byte offset at.
func (s *source) lineOf(at uint32) int {
	b := int(at >> blockShift)
	lo, hi := int(s.block[b]), len(s.lines)
	if b+1 < len(s.block) {
		hi = int(s.block[b+1]) + 1
	}
	// The last line in [lo, hi) starting at or before at.
	for hi-lo > 1 {
		mid := int(uint(lo+hi) >> 1)
		if s.lines[mid] <= at {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// setText records the item's text and where it is written: its place in the file when
// the file holds it there, else in the side table.
func (m *Member) setText(s *source, text string, p Pos, at int) {
	if at >= 0 && len(text) <= memberLenMask && len(text) > 0 && at+len(text) <= len(s.text) &&
		unsafe.StringData(s.text[at:]) == unsafe.StringData(text) {
		m.at, m.bits = uint32(at), m.bits&^(memberLenMask|memberInTable)|uint16(len(text))
		return
	}
	m.at = uint32(len(s.table))
	m.bits = m.bits&^memberLenMask | memberInTable
	s.table = append(s.table, memberText{text: text, line: int32(p.Line), col: int32(p.Col)})
}

// MGID is a multicast group line (mgid=GID[,flag=value]*).
type MGID struct {
	GID   netip.Addr
	Flags []Flag
	Pos   Pos
}

// Flag is a name[=value] item of a definition or mgid line, with the name OpenSM matched.
type Flag struct {
	Text  string // as written
	Name  string // canonical name matched by prefix ("ipoib", "defmember", ...); "" if unknown
	Value string
	Pos   Pos
}

// Definition is one `[Name][=PKey][,flag]* : members ;` as written.
type Definition struct {
	Pos       Pos
	Name      string
	KeyText   string             // the key as written, "" when omitted
	Key       check.PartitionKey // the 15-bit key OpenSM uses (generated or merged when KeyText gives 0)
	Generated bool               // the key was generated by OpenSM
	Flags     []Flag
	IPoIB     bool
	Indx0     bool
	DefMember MemberFlag
	// Members are the definition's items: a window on its Config's Members.
	Members   []Member
	MGIDs     []MGID
	Partition *Partition
	Implicit  bool // the Default partition OpenSM creates before reading the file
	// NameTruncated: the name has 32 bytes or more; OpenSM stores 31 and never finds
	// the partition by this name again (osm_prtn_new, osm_prtn_find_by_name).
	NameTruncated bool

	src *source // the file its members' texts and positions point into
}

// Partition is a P_Key after merging every definition that names it.
type Partition struct {
	Key       check.PartitionKey
	Name      string // the first definition's name (OpenSM keeps it); "%04x" when unnamed
	Generated bool
	IPoIB     bool
	Defs      []*Definition
	// Members in the order OpenSM applies them: for the same port the last item wins.
	// With one definition, they are its Members.
	Members []Member
	// Groups are the multicast groups OpenSM creates for it (see MGroup).
	Groups []*MGroup

	index int32 // its place in its Config's Partitions
	// kept: a partition of an earlier run of the OpenSM process (reparseRunning) that
	// no definition has named yet: in the partition map, not in Partitions.
	kept bool
}

// IsDefault reports whether this is the default partition (key 0x7fff).
func (p *Partition) IsDefault() bool { return p.Key == check.DefaultPartition }

// Config is a parsed partitions.conf.
type Config struct {
	File string
	// Exists is false for NoFile: OpenSM found no file and uses Default=0x7fff : ALL=full.
	Exists bool
	// Definitions as written, in file order (the implicit Default first).
	Definitions []*Definition
	// Partitions in OpenSM's map order (see mapOrder).
	Partitions []*Partition
	// Findings from parsing (errors are what OpenSM rejects).
	Findings []Finding
	// Rejected: OpenSM stops at the first error, logs "PARSE ERROR: line N", and applies
	// its fallback Default=0x7fff : ALL=full (lab: "retrying with default config").
	Rejected   bool
	RejectedAt Pos
	// HasDefault: the file has a definition of the default partition (key 0x7fff or,
	// without a key, the name "Default").
	HasDefault bool
	// CRLF: the file has '\r' characters (OpenSM does not skip them).
	CRLF bool
	// RejectReason says why OpenSM drops the file (its log message).
	RejectReason string
	// Empty: the file holds no definition; OpenSM treats that as an error (Rejected).
	Empty bool
	// Uncertain is set when what OpenSM does with this file depends on something the
	// file does not determine (uninitialised memory, a crash): then neither the
	// tables nor Rejected can be predicted.
	Uncertain   string
	UncertainAt Pos
	// Members are every member item in file order (the implicit Default items first):
	// OpenSM applies them in this order, and some state (indx0) crosses partitions.
	// They are values in one array (a million items of a large file), which the
	// definitions' Members are windows on, so a *Member stays valid.
	Members []Member
	// GUIDs are the port GUIDs the definitions' items name, once each, in the order
	// they first appear.
	GUIDs     []check.GUID
	guidIndex map[check.GUID]int32 // a GUID's place in GUIDs
	// byGUID are the items that name GUIDs[g], as indexes in Members, in file order:
	// byGUID.flat[byGUID.starts[g]:byGUID.starts[g+1]]; byGUID.keywords are the
	// other items. What NewModel replays for each port, found here once.
	byGUID opIndex

	groupByMGID map[[16]byte]*MGroup
	src         *source

	byKey   map[check.PartitionKey]*Partition
	counter uint16 // OpenSM's global_pkey_counter
}

// GUIDIndex is the place of guid in GUIDs, or false when no item names it.
func (c *Config) GUIDIndex(guid check.GUID) (int, bool) {
	i, ok := c.guidIndex[guid]
	return int(i), ok
}

// indexGUIDs fills GUIDs, guidIndex and byGUID: one map of the file's port GUIDs that
// the commands, lint and the model share (each kept its own: 20 MB at 100,000 ports),
// and the items naming each (the model looked each item up twice more).
func (c *Config) indexGUIDs() {
	c.guidIndex = map[check.GUID]int32{}
	ord := make([]int32, len(c.Members)) // each item's GUID's place in GUIDs, -1: a keyword
	for i := range c.Members {
		m := &c.Members[i]
		if m.Kind != KindGUID {
			ord[i] = -1
			continue
		}
		g, ok := c.guidIndex[m.GUID]
		if !ok {
			g = int32(len(c.GUIDs))
			c.guidIndex[m.GUID] = g
			c.GUIDs = append(c.GUIDs, m.GUID)
		}
		ord[i] = g
	}
	c.GUIDs = slices.Clip(c.GUIDs)
	c.byGUID = groupItems(c.Members, ord, len(c.GUIDs))
}

// Partition returns the partition with this 15-bit key, or nil.
func (c *Config) Partition(key check.PartitionKey) *Partition {
	return c.byKey[key&check.PartitionKey(check.KeyMask)]
}

// Applied is what OpenSM programs: the file's partitions, or only the fallback default
// partition (Default=0x7fff : ALL=full) when it rejected the file.
func (c *Config) Applied() *Config {
	if c.Rejected {
		f := NoFile()
		f.File = c.File
		return f
	}
	return c
}

// NoFile is OpenSM without a partitions.conf: Default=0x7fff : ALL=full.
func NoFile() *Config {
	c := newConfig("(no file)", "")
	c.implicitDefault(FlagFull)
	c.sortPartitions()
	c.indexGUIDs()
	return c
}

func newConfig(file string, text string) *Config {
	return &Config{File: file, byKey: map[check.PartitionKey]*Partition{}, groupByMGID: map[[16]byte]*MGroup{}, src: newSource(text)}
}

// implicitDefault is prtn_make_default: ALL=full without a file, else ALL=limited, then
// SELF=full. Later definitions of the default partition are applied after these items,
// so `Default=0x7fff : ALL=limited;` makes even the SM's port limited (lab).
func (c *Config) implicitDefault(all MemberFlag) {
	d := &Definition{Pos: Pos{File: c.File}, Name: "Default", Key: check.DefaultPartition, Implicit: true, src: c.src}
	start := len(c.Members)
	c.Members = append(c.Members, // at d.Pos: line 0
		Member{Kind: KindAll, Membership: all, bits: memberExplicit, Def: d},
		Member{Kind: KindSelf, Membership: FlagFull, bits: memberExplicit, Def: d})
	d.Members = c.Members[start:len(c.Members):len(c.Members)]
	d.Members[0].setText(c.src, "ALL="+all.String(), Pos{}, -1)
	d.Members[1].setText(c.src, "SELF=full", Pos{}, -1)
	p := &Partition{Key: check.DefaultPartition, Name: "Default", Defs: []*Definition{d}, Members: d.Members}
	d.Partition = p
	if all == FlagFull {
		// prtn_make_default without a file also creates the IPv4 broadcast group.
		gid := broadcastMGID(check.DefaultPartition)
		g := &MGroup{MGID: netip.AddrFrom16(gid), QKey: ipoibQKey, MTU: defaultMgrpMTU, Rate: defaultMgrpRate, Scope: defaultMgrpScope,
			Broadcast: true, Partition: p, Pos: d.Pos, RawMTU: defaultMgrpMTU, RawRate: defaultMgrpRate}
		p.Groups = append(p.Groups, g)
		c.groupByMGID[gid] = g
	}
	c.byKey[check.DefaultPartition] = p
	c.Definitions = append(c.Definitions, d)
	c.Partitions = append(c.Partitions, p)
}

// MaxFileSize bounds a partitions.conf. OpenSM itself reads the file line by line with
// no limit (osm_prtn_config.c), but what it can program is bounded: 32,767 partition
// keys and at most 49,151 unicast-LID ports in a subnet (IBA 4.1.3). A file naming every
// port of the largest subnet once in each of ~200 partitions, at ~24 bytes per
// "0x0002c90300000001=full," entry, is ~230 MiB; anything larger is not a real
// configuration, and reading /dev/zero must end with an error, not with the memory of
// the machine.
const MaxFileSize = 256 << 20

// ReadConfig parses a partitions.conf from r; file names it in messages. More than
// MaxFileSize bytes is an error naming the bound.
func ReadConfig(file string, r io.Reader) (*Config, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("%s: larger than %d MiB: too large for a partitions file (OpenSM's partitions.conf)", file, MaxFileSize>>20)
	}
	return Parse(file, data), nil
}

var memberKeywords = []struct {
	word string
	kind MemberKind
}{
	{"ALL", KindAll}, {"ALL_CAS", KindAllCAs}, {"ALL_SWITCHES", KindAllSwitches},
	{"ALL_ROUTERS", KindAllRouters}, {"SELF", KindSelf},
}

// strtoull mimics C strtoull(s, &end, 0): leading isspace, optional sign, 0x/0 prefixes,
// wrap-around negation and saturation on overflow. It returns the value and how many
// bytes were consumed (0 if no digits).
func strtoull(s string) (uint64, int) {
	i := 0
	for i < len(s) && (s[i] == ' ' || (s[i] >= '\t' && s[i] <= '\r')) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	base := uint64(10)
	if i < len(s) && s[i] == '0' {
		if i+2 < len(s) && (s[i+1] == 'x' || s[i+1] == 'X') && isHex(s[i+2]) {
			base, i = 16, i+2
		} else {
			base = 8
		}
	}
	start := i
	var v uint64
	overflow := false
	// C's cutoff and cutlim: v*base+d overflows when v > cutoff, or v == cutoff and
	// d > cutlim (no division per digit: a million GUIDs in a large file).
	cutoff, cutlim := ^uint64(0)/base, ^uint64(0)%base
	for i < len(s) {
		d, ok := digitVal(s[i])
		if !ok || d >= base {
			break
		}
		if v > cutoff || (v == cutoff && d > cutlim) {
			overflow = true
		}
		v = v*base + d
		i++
	}
	if i == start {
		if base == 8 { // the "0" itself was the number
			return 0, start
		}
		return 0, 0
	}
	if overflow {
		return ^uint64(0), i
	}
	if neg {
		v = -v
	}
	return v, i
}

func isHex(c byte) bool { _, ok := digitVal(c); return ok }

func digitVal(c byte) (uint64, bool) {
	switch {
	case c >= '0' && c <= '9':
		return uint64(c - '0'), true
	case c >= 'a' && c <= 'f':
		return uint64(c-'a') + 10, true
	case c >= 'A' && c <= 'F':
		return uint64(c-'A') + 10, true
	}
	return 0, false
}

// orderKey is the key of OpenSM's partition and P_Key maps: the P_Key in network byte
// order read as a little-endian number, i.e. the bytes swapped (lab: 0x0100 < 0x0201 <
// 0x0002 < 0x0005). Default 0x7fff sorts last.
func orderKey(v uint16) uint16 { return v<<8 | v>>8 }

func (c *Config) mapOrder() []*Partition {
	out := append([]*Partition(nil), c.Partitions...)
	sort.Slice(out, func(i, j int) bool { return orderKey(uint16(out[i].Key)) < orderKey(uint16(out[j].Key)) })
	return out
}

// sortPartitions puts Partitions in map order and numbers them (Partition.index).
func (c *Config) sortPartitions() {
	c.Partitions = c.mapOrder()
	for i, p := range c.Partitions {
		p.index = int32(i)
	}
}
