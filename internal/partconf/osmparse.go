package partconf

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/ibkey/ibkey/internal/check"
)

// This file is a byte-for-byte emulation of OpenSM 3.3.23's partitions.conf reader,
// opensm/osm_prtn_config.c: osm_prtn_config_parse_file, parse_part_conf,
// parse_name_token, partition_add_flag, parse_group_flag, partition_create,
// partition_add_port, mgroup_create, parse_mgroup_flags, and of the key rules of
// opensm/osm_prtn.c (osm_prtn_make_new, generate_pkey, osm_prtn_find_by_name,
// osm_prtn_new). OpenSM parses in place in one char line[4096] that every fgets call
// reuses: it writes NULs into it and, in some cases, steps past the NUL that ends the
// current line and reads what earlier lines left in the buffer. The emulation keeps
// that buffer, so those cases come out as OpenSM has them. Bytes no fgets call ever
// wrote are uninitialised stack memory in OpenSM: reading one makes the outcome
// uncertain (Config.Uncertain), never a guess.

const lineSize = 4096 // char line[4096] in osm_prtn_config_parse_file

// cbuf is OpenSM's line buffer.
type cbuf struct {
	b [lineSize]byte
	// Bytes below high were written by fgets (every fgets writes from index 0 up, so
	// the ones below the longest piece so far); known marks bytes above it that the
	// parser wrote.
	high  int
	known [lineSize]bool
	// unknownAt is the first index read that was never written (-1: none).
	unknownAt int
}

func (c *cbuf) at(i int) byte {
	if uint(i) < uint(c.high) {
		return c.b[i]
	}
	if i < 0 || i >= lineSize || !c.known[i] {
		if c.unknownAt < 0 {
			c.unknownAt = i
		}
		return 0
	}
	return c.b[i]
}

func (c *cbuf) set(i int, v byte) {
	if i < 0 || i >= lineSize {
		if c.unknownAt < 0 {
			c.unknownAt = i
		}
		return
	}
	c.b[i] = v
	if i >= c.high {
		c.known[i] = true
	}
}

// fgets writes piece and its terminating NUL at index 0 (len(piece) < lineSize).
func (c *cbuf) fgets(piece string) {
	n := copy(c.b[:], piece)
	c.b[n] = 0
	c.high = max(c.high, n+1)
}

func (c *cbuf) strlen(i int) int {
	n := 0
	for c.at(i+n) != 0 {
		n++
	}
	return n
}

// strchr returns the index of ch in the C string at i, or -1. It reads what C's
// strchr reads, up to ch or the NUL, so an unwritten byte past them is not read.
func (c *cbuf) strchr(i int, ch byte) int {
	for ; ; i++ {
		switch c.at(i) {
		case ch:
			return i
		case 0:
			return -1
		}
	}
}

func (c *cbuf) str(i int) string { return string(c.bytes(i)) }

// bytes is the C string at i in the buffer (not a copy).
func (c *cbuf) bytes(i int) []byte {
	if i < 0 {
		return nil
	}
	n := c.strlen(i)
	if i >= lineSize {
		return nil
	}
	return c.b[i : i+n]
}

// isBlank is what STRIP_HEAD_SPACES and parse_name_token skip: space, tab, newline
// (not '\r': a CRLF file keeps a '\r' at the end of its last item).
func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\n' }

// partConf is struct part_conf: the state of the definition being read.
type partConf struct {
	def        *Definition
	isIPoIB    bool
	flags      groupFlags
	membership MemberFlag
	indx0      bool
}

// groupFlags is struct group_flags.
type groupFlags struct {
	MTU, Rate, SL, ScopeMask uint32
	QKey                     uint32
}

// OpenSM's defaults (include/opensm/osm_base.h).
const (
	defaultMgrpMTU   = 4      // OSM_DEFAULT_MGRP_MTU: 2048
	defaultMgrpRate  = 3      // OSM_DEFAULT_MGRP_RATE: 10 Gb/s
	defaultMgrpScope = 2      // OSM_DEFAULT_MGRP_SCOPE: link-local
	ipoibQKey        = 0x0b1b // OSM_IPOIB_BROADCAST_MGRP_QKEY
)

// newPartConf is new_part_conf.
func newPartConf() *partConf {
	return &partConf{flags: groupFlags{Rate: defaultMgrpRate, MTU: defaultMgrpMTU}, membership: FlagLimited}
}

type emu struct {
	c    *Config
	buf  cbuf
	conf *partConf
	// place of the current fgets piece: physical line, column offset, OpenSM's lineno
	line, col0, lineno, pieceLen int
	dead                         bool                  // after the first abort: keep finding errors, change nothing
	names                        map[string]*Partition // by stored name: the first in map order (orderKey)
	off                          int                   // where the current piece starts in the file
	refused                      []refusedGroup        // IPoIB groups refused for want of their broadcast group
	// hashAt is where the current piece's '#' was (OpenSM writes a NUL there), -1
	// when it has none: what OpenSM reads past it is the comment's text.
	hashAt int
	// items holds the current definition's items while they are read; at its end
	// they are copied to an array of their size (Definition.Members) and items is
	// reused for the next, so a large file's item lists leave no garbage behind.
	items []Member
}

// str is the C string at buffer index at: the part of the file's text that holds it
// when the current piece has it as written there (so a large file's member items share
// the file's memory instead of each holding a copy), else a copy.
func (e *emu) str(at int) string {
	s := e.buf.bytes(at)
	if o := e.off + at; at >= 0 && at+len(s) <= e.pieceLen && e.c.text[o:o+len(s)] == string(s) {
		return e.c.text[o : o+len(s)]
	}
	return string(s)
}

// joined is name + "=" + flag, the part of the file's text that holds it when it is
// written so there (str).
func (e *emu) joined(nameAt int, name string, flagAt int, flag string) string {
	if o := e.off + nameAt; nameAt >= 0 && flagAt == nameAt+len(name)+1 && flagAt+len(flag) <= e.pieceLen &&
		e.c.text[o+len(name)] == '=' && e.c.text[o+len(name)+1:o+len(name)+1+len(flag)] == flag {
		return e.c.text[o : o+len(name)+1+len(flag)]
	}
	return name + "=" + flag
}

// pos maps a buffer index to the file: inside the current piece it is a line and
// column; past it the byte is a leftover of an earlier, longer line (Col 0).
func (e *emu) pos(i int) check.FilePos {
	if i >= 0 && i <= e.pieceLen { // the piece's own terminator is just past its end
		return check.FilePos{File: e.c.File, Line: e.line, Col: e.col0 + i + 1}
	}
	return check.FilePos{File: e.c.File, Line: e.line}
}

// place is pos for what the model keeps (a definition, an item, a group): a byte
// past the current piece is placed at column 1 of the line.
func (e *emu) place(i int) check.FilePos {
	p := e.pos(i)
	p.Col = max(p.Col, 1)
	return p
}

func (e *emu) finding(sev check.Severity, at int, rule, msg, hint string) {
	p := e.pos(at)
	if p.Col == 0 {
		msg += " (OpenSM read this from what an earlier, longer line left in its 4096-byte line buffer)"
		p.Col = 1
	}
	e.c.Findings = append(e.c.Findings, check.Finding{Severity: sev, Pos: p, Rule: rule, Message: msg, Action: hint})
}

// abort is a PARSE ERROR that makes osm_prtn_config_parse_file return 1: OpenSM drops
// the file and programs its fallback.
func (e *emu) abort(at int, osmMsg, msg, hint string) {
	e.finding(check.SeverityError, at, "opensm-rejects", msg, hint)
	if !e.dead && !e.c.Rejected {
		e.c.Rejected = true
		e.c.RejectedAt = e.c.Findings[len(e.c.Findings)-1].Pos
		// What OpenSM logs: "PARSE ERROR: line N: ..." (N counts 4094-byte pieces).
		e.c.RejectReason = fmt.Sprintf("PARSE ERROR: line %d: %s (%s)", e.lineno, osmMsg, msg)
	}
}

// RejectedWhy says why OpenSM rejects the file, as its log shows it: "PARSE ERROR at
// " and where, for a line it could not parse; "it holds no definition" for a file with
// nothing to parse (empty, blank or only comments), for which OpenSM logs no PARSE
// ERROR, only "Partition configuration in error; retrying with default config"
// (osm_prtn_config.c; seen in the lab).
func (c *Config) RejectedWhy(at string) string {
	if strings.HasPrefix(c.RejectReason, "PARSE ERROR") {
		return "PARSE ERROR at " + at
	}
	return "it holds no definition"
}

// Parse reads a partitions.conf held in data exactly as OpenSM 3.3.23 does. It never
// fails: what OpenSM rejects or logs is in Findings, Rejected says whether OpenSM
// drops the file, and Uncertain whether its outcome depends on memory the file does
// not determine.
func Parse(file string, data []byte) *Config {
	return ParseWith(file, data, Options{})
}

// ParseWith is Parse by an OpenSM that runs with opt: of the options only QoS
// changes how the file is read.
func ParseWith(file string, data []byte, opt Options) *Config {
	return parse(file, string(data), nil, opt.QoS)
}

// reparseRunning is c's file parsed again by the OpenSM process that applied prev
// before (it re-reads the file on SIGHUP and at every heavy sweep). That process keeps
// its partitions from run to run: osm_prtn_make_partitions clears their members, not
// the partitions, and deletes only those left without a member in the fabric. So a
// definition without a key finds a partition of the earlier run by its name (lab:
// after x3=0x00e1, `x3 : ...` is 0x00e1 again, where a new process generates 0x0001),
// generated keys skip the earlier run's keys, and a key defined again keeps the name
// it had.
func (c *Config) reparseRunning(prev *Model) *Config {
	var kept []keptPartition
	for i, p := range prev.Config.Partitions {
		if prev.hasMember(i) {
			kept = append(kept, keptPartition{p.Key, p.Name})
		}
	}
	return parse(c.File, c.text, kept, c.QoS)
}

// keptPartition is a partition an earlier run of the same OpenSM process left in its
// partition map (prtn_pkey_tbl): its key and stored name.
type keptPartition struct {
	key  check.PartitionKey
	name string
}

// parse is Parse by an OpenSM process whose partition map holds kept from an earlier
// run (nil: a new process), with QoS on or off (Options.QoS).
func parse(file string, data string, kept []keptPartition, qos bool) *Config {
	c := newConfig(file)
	c.Exists, c.QoS = true, qos
	c.text = data
	c.implicitDefault(FlagLimited)
	e := &emu{c: c, line: 1, names: map[string]*Partition{}}
	e.buf.unknownAt = -1
	e.buf.set(0, 0) // line[0] = '\0'
	e.names["Default"] = c.byKey[check.DefaultPartition]
	for _, k := range kept {
		if k.key == check.DefaultPartition {
			continue // prtn_make_default's, the same partition
		}
		part := &Partition{Key: k.key, Name: k.name, kept: true}
		c.byKey[k.key] = part
		e.name(part)
	}
	parsed := 0 // is_parse_success
	for off := 0; off < len(data); {
		// fgets(line, sizeof(line) - 1, file): at most 4094 bytes, through '\n'.
		end := off
		for end < len(data) && end-off < lineSize-2 {
			end++
			if data[end-1] == '\n' {
				break
			}
		}
		piece := data[off:end]
		if e.col0 == 0 && len(piece) == lineSize-2 && piece[len(piece)-1] != '\n' {
			e.finding(check.SeverityWarning, 0, "long-line",
				"line longer than 4094 bytes: OpenSM reads it in 4094-byte pieces, each counted as a line, so a name, key or GUID at a piece boundary is cut in two",
				"break the member list over several lines after a comma")
		}
		e.buf.fgets(piece)
		e.pieceLen = len(piece)
		e.lineno++
		if r := e.parseLine(); r < 0 {
			if !e.dead {
				parsed = -1
			}
			e.dead = true
			e.conf = nil
		} else if r > 0 && !e.dead {
			parsed = 1
		}
		if e.buf.unknownAt >= 0 && c.Uncertain == "" && !e.dead {
			c.Uncertain = fmt.Sprintf("line %d: OpenSM reads past the end of the line into bytes of its line buffer that no line of this file wrote (uninitialised memory): what it does with this file cannot be predicted", e.line)
			c.UncertainAt = check.FilePos{File: file, Line: e.line, Col: 1}
		}
		if piece[len(piece)-1] == '\n' {
			e.line++
			e.col0 = 0
		} else {
			e.col0 += len(piece)
		}
		off = end
		e.off = off
	}
	if e.conf != nil && e.conf.def != nil && !e.dead {
		c.Findings = append(c.Findings, check.Finding{Severity: check.SeverityWarning, Pos: e.conf.def.Pos, Rule: "missing-semicolon",
			Message: "the last definition has no ';': OpenSM applies it anyway at end of file", Action: "end the member list with ';'"})
	}
	if parsed == 0 && !c.Rejected {
		// osm_prtn_config_parse_file returns 1 when nothing was parsed: OpenSM logs
		// "Partition configuration in error; retrying with default config".
		c.Rejected = true
		c.RejectedAt = check.FilePos{File: file, Line: 1, Col: 1}
		c.RejectReason = "the file holds no definition (empty, blank or only comments): OpenSM treats that as a configuration error"
		c.Findings = append(c.Findings, check.Finding{Severity: check.SeverityError, Pos: c.RejectedAt, Rule: "opensm-rejects",
			Message: c.RejectReason + " and programs its fallback Default=0x7fff, ipoib : ALL=full",
			Action:  "add at least `Default=0x7fff, ipoib : ALL=full;`, or remove the file (OpenSM then uses the same fallback without an error)"})
	}
	e.laterBroadcast()
	c.finish()
	return c
}

// name records p under its stored name: osm_prtn_find_by_name finds the first
// partition of a name in map order (orderKey).
func (e *emu) name(p *Partition) {
	if o, ok := e.names[p.Name]; !ok || orderKey(uint16(p.Key)) < orderKey(uint16(o.Key)) {
		e.names[p.Name] = p
	}
}

// refusedGroup is an IPoIB group refused for want of its broadcast group (ERR 1B1B):
// the finding at index at, for MGID mg.
type refusedGroup struct {
	at int
	mg [16]byte
}

// laterBroadcast says of each refused IPoIB group whose broadcast group a later line
// creates that a running OpenSM creates it at its next heavy sweep: it reads the file
// again then, and the broadcast group, kept from the first read, exists (lab: ERR
// 1B1B at the first read, the group there after a SIGHUP).
func (e *emu) laterBroadcast() {
	for _, r := range e.refused {
		bc := broadcastOf(r.mg)
		g, ok := e.c.groupByMGID[bc]
		if !ok {
			continue
		}
		fd := &e.c.Findings[r.at]
		fd.Message = fmt.Sprintf("OpenSM's SA refuses to create multicast group %s when OpenSM reads this line: its IPoIB broadcast group %s is made only further down, at line %d (ERR 1B1B); a running OpenSM creates the group at its next heavy sweep (SIGHUP, a fabric change), a one-shot run (-o) never",
			netip.AddrFrom16(r.mg), netip.AddrFrom16(bc), g.Pos.Line)
		fd.Action = fmt.Sprintf("put the broadcast group's mgid line (line %d) before this one", g.Pos.Line)
	}
}

// parseLine is the body of the fgets loop: it returns -1 when OpenSM stops with an
// error, 1 when something was parsed, 0 when the line was blank.
func (e *emu) parseLine() int {
	b := &e.buf
	res := 0
	p := 0
	e.hashAt = b.strchr(p, '#')
	if e.hashAt >= 0 {
		b.set(e.hashAt, 0)
	}
	for {
		for isBlank(b.at(p)) {
			p++
		}
		if b.at(p) == 0 {
			break
		}
		if e.conf == nil {
			e.conf = newPartConf()
		}
		q := b.strchr(p, ';')
		if q >= 0 {
			b.set(q, 0)
		}
		n := e.parsePartConf(p)
		if n < 0 {
			return -1
		}
		res = 1
		p += n
		if q < 0 {
			break
		}
		if d := e.conf.def; d != nil {
			// The definition's items end here: they are kept in an array of their
			// size, not in what appending left (most of a large file's memory).
			read := d.Members
			d.Members = slices.Clip(slices.Clone(read))
			e.items = read[:0]
		}
		e.conf = nil // flush_part_conf
		if p >= lineSize {
			b.at(p) // past the buffer: uncertain
			break
		}
	}
	return res
}

// nameToken is parse_name_token: it splits the C string at str at its first '=',
// strips blanks around both parts (writing NULs), and returns the name, the value (-1
// when there is no '=') and the length OpenSM advances by.
func (e *emu) nameToken(str int) (name, val, n int) {
	b := &e.buf
	p := str
	for isBlank(b.at(p)) {
		p++
	}
	q := b.strchr(p, '=')
	if q >= 0 {
		b.set(q, 0)
		q++
	}
	n = b.strlen(str) + 1
	s := q
	t := p + b.strlen(p)
	for t != p && (b.at(t) == 0 || isBlank(b.at(t))) {
		b.set(t, 0)
		t--
	}
	name, val = p, -1
	if s < 0 {
		return
	}
	p = s
	for isBlank(b.at(p)) {
		p++
	}
	t = p + b.strlen(p)
	n += t - s + 1
	for t != p && (b.at(t) == 0 || isBlank(b.at(t))) {
		b.set(t, 0)
		t--
	}
	val = p
	return
}

// parsePartConf is parse_part_conf on the string at str; it returns the length
// OpenSM advances by, or -1 on a PARSE ERROR.
func (e *emu) parsePartConf(str int) int {
	b := &e.buf
	p := str
	if v := b.at(p); v == '\t' || v == 0 || v == '\n' {
		p++
	}
	n := p - str
	str = p
	if e.conf.def == nil {
		q := b.strchr(p, ':')
		if q < 0 {
			hint := "join the line with the next one so that ':' follows the definition, or end the previous member list with ';'"
			msg := fmt.Sprintf("no ':' in %q: OpenSM needs the definition (name, key, flags) and its ':' on one line", short(b.str(p)))
			if strings.HasSuffix(b.str(p), "\r") {
				hint = "convert the file to Unix line ends (dos2unix): OpenSM does not skip '\\r'"
			}
			e.abort(p, "no partition definition found", msg, hint)
			return -1
		}
		b.set(q, 0)
		str = q + 1
		defAt := p
		q = b.strchr(p, ',')
		if q >= 0 {
			b.set(q, 0)
		}
		nameAt, idAt, r := e.nameToken(p)
		p += r
		n += r
		var flags []Flag
		for q >= 0 {
			q = b.strchr(p, ',')
			if q >= 0 {
				b.set(q, 0)
				q++
			}
			fAt, vAt, r := e.nameToken(p)
			p += r
			n += r
			flags = append(flags, e.partitionFlag(fAt, vAt))
		}
		if p != str {
			e.abort(defAt, "bad partition definition", "the definition does not end where OpenSM expects its ':'", "write `name=key[,flag...] : members ;`")
			return -1
		}
		if !e.partitionCreate(defAt, nameAt, idAt, flags) {
			return -1
		}
	}
	// skip_header: the members.
	for {
		q := b.strchr(p, ',')
		if q >= 0 {
			b.set(q, 0)
			q++
		}
		nameAt, flagAt, r := e.nameToken(p)
		n += r
		if b.str(nameAt) == "mgid" {
			// "We're done: this consumes the line": the flags start after this token,
			// which is past the NUL that ends the line when the token is the last.
			n += e.mgroupCreate(p+r, nameAt, flagAt)
			return n
		}
		if !e.addPort(nameAt, flagAt) {
			return -1
		}
		p += r
		if q < 0 {
			break
		}
	}
	return n
}

// partitionFlag is partition_add_flag (with parse_group_flag first).
func (e *emu) partitionFlag(fAt, vAt int) Flag {
	b := &e.buf
	name, val := b.str(fAt), b.str(vAt)
	f := Flag{Text: name, Value: val}
	if vAt >= 0 {
		f.Text += "=" + val
	}
	if name == "" && vAt < 0 {
		// `, ,` or `, :`: parse_group_flag takes "" for mtu (a prefix of every flag,
		// mtu is tried first), without a value: it logs and changes nothing.
		e.finding(check.SeverityWarning, fAt, "bad-group-flag", "an empty flag (a comma with nothing before the next comma or ':'): OpenSM takes it for mtu without a value and logs \"flag 'mtu' requires valid value - skipped\"; nothing changes",
			"remove the extra comma")
		f.Name = "mtu"
		return f
	}
	if g := e.groupFlag(&e.conf.flags, fAt, vAt); g != "" {
		f.Name = g
		return f
	}
	// ipoib and indx0 take no value: partition_add_flag sets them whatever follows '='.
	valueIgnored := func(flag string) {
		if vAt >= 0 {
			e.finding(check.SeverityWarning, fAt, "bad-flag", fmt.Sprintf("%s takes no value: OpenSM ignores %q and sets %s anyway", flag, "="+val, flag),
				fmt.Sprintf("write %s alone, or remove it to leave it off", flag))
		}
	}
	switch {
	case prefixOf(name, "ipoib"):
		f.Name = "ipoib"
		e.conf.isIPoIB = true
		valueIgnored("ipoib")
	case prefixOf(name, "defmember"):
		f.Name = "defmember"
		ms, ok := membershipWord(val) // partition_add_flag matches as partition_add_port does
		if vAt < 0 || !ok {
			e.finding(check.SeverityWarning, fAt, "bad-flag", fmt.Sprintf("defmember needs full, limited or both, not %q: OpenSM ignores it (members default to limited)", val),
				"write defmember=full or defmember=limited")
			break
		}
		if val == "" {
			e.finding(check.SeverityWarning, fAt, "empty-membership", "defmember= has nothing after '=': OpenSM reads the empty word as full (a prefix of \"full\"): the members of this definition default to full",
				"write defmember=full or defmember=limited")
		}
		e.conf.membership = ms
	case name == "indx0":
		f.Name = "indx0"
		e.conf.indx0 = true
		valueIgnored("indx0")
	default:
		e.finding(check.SeverityWarning, fAt, "unknown-flag", fmt.Sprintf("unknown partition flag %q: OpenSM ignores it", f.Text),
			"flags: ipoib, indx0, defmember=, mtu=, rate=, sl=, scope=, Q_Key=, TClass=, FlowLabel=")
	}
	return f
}

// groupFlag is parse_group_flag: it returns the flag's name when it is one of the
// multicast group flags (matched by prefix in this order), "" if not. Every warning
// OpenSM logs for a group flag's value is a finding: mtu, rate, scope, Q_Key and
// TClass go through verify_val, which reads the number at the start of the value and
// logs text after it ("suspicious val"), then "requires valid value" when the number
// is 0 (TClass is stored as uint8_t, so 256 is 0) or out of range.
func (e *emu) groupFlag(g *groupFlags, fAt, vAt int) string {
	b := &e.buf
	name, val := b.str(fAt), b.str(vAt)
	invalid := func(flag, then string) {
		e.finding(check.SeverityWarning, fAt, "bad-group-flag", fmt.Sprintf("%s needs a valid value, not %q: OpenSM logs \"flag '%s' requires valid value - %s\"", flag, val, flag, then),
			"write a number, e.g. "+flag+"=4")
	}
	// verify_val, for a flag whose value (at vAt >= 0) OpenSM found valid: text after
	// the number is logged, not refused.
	suspicious := func(flag string) {
		if _, used := strtoull(val); used < len(val) {
			e.finding(check.SeverityWarning, vAt, "bad-group-flag", fmt.Sprintf("%s=%s: OpenSM reads the number at its start and ignores %q (it logs \"suspicious val=(%s) detected. flag=(%s)\")", flag, val, val[used:], val, name),
				"write the number alone, e.g. "+flag+"=4")
		}
	}
	code := func(flag string, dst *uint32) string { // mtu= and rate=: a non-zero number
		if vAt >= 0 {
			*dst = uint32(num(val))
		}
		if vAt < 0 || *dst == 0 {
			invalid(flag, "skipped")
		} else {
			suspicious(flag)
		}
		return flag
	}
	switch {
	case prefixOf(name, "mtu"):
		return code("mtu", &g.MTU)
	case prefixOf(name, "rate"):
		return code("rate", &g.Rate)
	case prefixOf(name, "scope"):
		if vAt < 0 {
			invalid("scope", "skipped")
			return "scope"
		}
		if s := uint32(num(val)); s == 0 || s > 0xf {
			invalid("scope", "skipped")
		} else {
			g.ScopeMask |= 1 << s
			suspicious("scope")
		}
		return "scope"
	case prefixOf(name, "Q_Key"):
		if vAt >= 0 {
			g.QKey = uint32(num(val))
		}
		if vAt < 0 || g.QKey == 0 {
			invalid("Q_Key", "using '0'")
		} else {
			suspicious("Q_Key")
		}
		return "Q_Key"
	case prefixOf(name, "TClass"):
		// The group's traffic class, which ibkey does not report.
		if vAt < 0 || uint8(num(val)) == 0 {
			invalid("TClass", "using '0'")
		} else {
			suspicious("TClass")
		}
		return "TClass"
	case prefixOf(name, "sl"):
		v, used := strtoull(val)
		if vAt < 0 || val == "" || uint32(v) > 15 || (used < len(val) && !isCSpace(val[used])) {
			invalid("sl", "skipped")
		} else {
			g.SL = uint32(v)
		}
		return "sl"
	case prefixOf(name, "FlowLabel"):
		v, used := strtoull(val)
		if vAt < 0 || val == "" || uint32(v) > 0xfffff || (used < len(val) && !isCSpace(val[used])) {
			invalid("FlowLabel", "skipped")
		}
		return "FlowLabel" // the group's flow label, which ibkey does not report
	default:
		return ""
	}
}

// num is verify_val's number: strtoul(val, &end, 0), what follows it ignored.
func num(val string) uint64 {
	v, _ := strtoull(val)
	return v
}

func isCSpace(c byte) bool { return c == ' ' || (c >= '\t' && c <= '\r') }

// partitionCreate is partition_create + osm_prtn_make_new.
func (e *emu) partitionCreate(defAt, nameAt, idAt int, flags []Flag) bool {
	b := &e.buf
	name := b.str(nameAt)
	hasName := true
	d := &Definition{Pos: e.place(defAt), Name: name, Flags: flags, IPoIB: e.conf.isIPoIB, Scopes: uint16(e.conf.flags.ScopeMask), Indx0: e.conf.indx0, DefMember: e.conf.membership}
	id, keyAt := "", idAt // the key's text and its index in the buffer
	hasID := idAt >= 0
	if hasID {
		id = b.str(idAt)
	}
	if !hasID && name != "" && name[0] >= '0' && name[0] <= '9' {
		id, keyAt, hasID, hasName, d.Name = name, nameAt, true, false, ""
	}
	var key check.PartitionKey
	if hasID {
		d.KeyText = id
		v, used := strtoull(id)
		if used == 0 || used != len(id) {
			if !hasName {
				// partition_create: a name starting with a digit, without =key, is the key.
				e.abort(keyAt, "bad partition definition", fmt.Sprintf("%q starts with a digit and has no =key, so OpenSM reads it as the partition key, which is not a number: OpenSM rejects the definition", id),
					"start the name with a letter, or write name=key (e.g. "+id+"=0x0010)")
				return false
			}
			e.abort(keyAt, "bad partition definition", fmt.Sprintf("partition key %q is not a number: OpenSM rejects the definition", id), "write the key in hex, e.g. =0x0010")
			return false
		}
		key = check.PartitionKey(uint16(v) & 0x7fff) // cl_hton16((uint16_t)strtoul(id)), then & ~0x8000
		switch {
		case key == 0:
			e.finding(check.SeverityError, keyAt, "key-zero", fmt.Sprintf("key %s is 0 after OpenSM truncates it to 16 bits and drops the top bit: OpenSM silently generates a key instead", id),
				"choose a key between 0x0001 and 0x7ffe")
		case id[0] == '-':
			e.finding(check.SeverityError, keyAt, "key-too-large", fmt.Sprintf("key %s is negative: OpenSM's strtoul wraps it around 2^64 and keeps the low 15 bits, key %s", id, key),
				"write the 15-bit key, at most 0x7fff")
		case v > 0xffff:
			e.finding(check.SeverityError, keyAt, "key-too-large", fmt.Sprintf("key %s is wider than 16 bits: OpenSM truncates it to %s", id, key),
				"write the 15-bit key, at most 0x7fff")
		case v&0x8000 != 0:
			e.finding(check.SeverityWarning, keyAt, "key-top-bit", fmt.Sprintf("key %s has the membership bit set: OpenSM ignores it, the key is %s", id, key),
				fmt.Sprintf("write =%s; membership is set per member with =full/=limited", key))
		}
	}
	c := e.c
	var part *Partition
	if key == 0 {
		// osm_prtn_find_by_name: strncmp(p->name, name, 32) against names stored in
		// char name[32]: a name of 32 bytes or more is stored cut to 31 and never
		// found again. Of partitions with the same name it returns the first in
		// prtn_pkey_tbl's order (orderKey), not the first defined (names).
		if hasName && len(name) < 32 {
			part = e.names[name]
		}
		if part == nil {
			for c.counter < 0x7ffe { // generate_pkey
				c.counter++
				if c.byKey[check.PartitionKey(c.counter)] == nil {
					key = check.PartitionKey(c.counter)
					break
				}
			}
			d.Generated = true
			if key == 0 {
				e.abort(defAt, "bad partition definition", "no free P_Key left to generate (generate_pkey)", "give the partition a key")
				return false
			}
		}
	} else {
		part = c.byKey[key]
	}
	if part == nil && !e.dead {
		stored := name
		if len(stored) > 31 {
			stored = stored[:31] // strncpy(p->name, name, sizeof(p->name) - 1)
		}
		if !hasName || stored == "" {
			stored = fmt.Sprintf("%04x", uint16(key))
		}
		part = &Partition{Key: key, Name: stored}
		c.byKey[key] = part
		c.Partitions = append(c.Partitions, part)
		e.name(part)
	}
	if e.dead {
		e.conf.def = d
		return true
	}
	if part.kept {
		// A partition of the earlier run, defined again: listed from now on, under
		// the name it had.
		part.kept = false
		c.Partitions = append(c.Partitions, part)
	}
	d.Key = part.Key
	d.Partition = part
	part.Defs = append(part.Defs, d)
	part.IPoIB = part.IPoIB || d.IPoIB
	if part.Key == check.DefaultPartition {
		c.HasDefault = true
	}
	c.Definitions = append(c.Definitions, d)
	e.conf.def = d
	// partition_create: without QoS (p_subn->opt.qos, opensm -Q or qos TRUE) the SL
	// is forced to the default (0), logged only at debug level ("Overriding SL").
	if sl := e.conf.flags.SL; sl != 0 && !c.QoS {
		e.finding(check.SeverityWarning, defAt, "sl-without-qos", fmt.Sprintf("partition %s (%s) has sl=%d, but OpenSM without QoS (qos FALSE in opensm.conf, its default) sets a partition's SL to 0, and with it the SL of its IPoIB broadcast group and of the mgid= groups that inherit it; with qos TRUE it keeps sl=%d", part.Key, part.Name, sl, sl),
			fmt.Sprintf("run OpenSM with qos TRUE (-Q; --qos or --opensm-conf here), or give a group its SL on its mgid= line (mgid=GID,sl=%d), which OpenSM keeps", sl))
		e.conf.flags.SL = 0
	}
	if e.conf.isIPoIB {
		// The IPoIB broadcast group: ff12:401b:PKEY::ffff:ffff, with the partition's
		// mtu, rate, sl, Q_Key (0x0b1b when 0), TClass, FlowLabel, but not its scope
		// (broadcast_mgroup.flags is zeroed and scope_mask not copied).
		g := e.conf.flags
		g.ScopeMask = 0
		g.QKey = cmp.Or(g.QKey, ipoibQKey)
		gid := broadcastMGID(part.Key)
		e.createGroups(part, d, gid, g, d.Pos, true)
	}
	return true
}

// broadcastMGID is osm_ipoib_broadcast_mgid with the full P_Key at bytes 4-5.
func broadcastMGID(key check.PartitionKey) [16]byte {
	k := key.PKey(check.Full)
	return broadcastOf([16]byte{1: 0x12, 4: byte(k >> 8), 5: byte(k)})
}

// broadcastOf is the IPoIB broadcast group of IP MGID mg: its scope and P_Key.
func broadcastOf(mg [16]byte) [16]byte {
	return [16]byte{0xff, 0x10 | mg[1]&0x0f, 0x40, 0x1b, mg[4], mg[5], 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff}
}

// addPort is partition_add_port; false is "bad PortGUID".
func (e *emu) addPort(nameAt, flagAt int) bool {
	b := &e.buf
	name := e.str(nameAt)
	if name == "" || prefixOf(name, "NONE") {
		return true
	}
	d := e.conf.def
	m := &Member{Def: d, Membership: e.conf.membership, indx0: e.conf.indx0, text: name}
	p := e.place(nameAt)
	m.line, m.col = int32(p.Line), int32(p.Col)
	if flagAt >= 0 {
		flag := b.str(flagAt)
		m.text = e.joined(nameAt, name, flagAt, flag)
		m.explicit = true
		mf, ok := membershipWord(flag)
		if flag == "" {
			// strncmp(flag, "full", strlen(flag)): "" is a prefix of every word.
			e.finding(check.SeverityWarning, flagAt, "empty-membership", fmt.Sprintf("%s= has nothing after '=': OpenSM reads the empty word as full (a prefix of \"full\"), not limited as for an item without '='", name),
				"write =full, or drop the '=' for the definition's default (limited unless defmember=)")
		}
		if !ok {
			e.finding(check.SeverityWarning, flagAt, "unknown-membership", fmt.Sprintf("membership %q is not full, limited or both: OpenSM makes the port limited", flag),
				"write =full, =limited or =both (lower case)")
		}
		m.Membership = mf
	}
	kw := false
	for _, k := range memberKeywords {
		if prefixOf(name, k.word) {
			m.Kind, kw = k.kind, true
			break
		}
	}
	if !kw {
		v, used := strtoull(name)
		if used != len(name) || v == 0 {
			hint := "write a port GUID (0x0002c90300000201) or ALL, ALL_CAS, ALL_SWITCHES, ALL_ROUTERS, SELF (upper case)"
			if strings.ContainsAny(name, ":") {
				hint = "end the previous partition with ';' before the next definition; the ':' belongs on the definition line"
			}
			e.abort(nameAt, "bad PortGUID", fmt.Sprintf("%q is neither a port GUID nor a keyword", short(name)), hint)
			e.c.Findings[len(e.c.Findings)-1].Rule = "bad-member" // abort's finding
			return false
		}
		m.GUID = check.GUID(v)
	}
	if e.dead {
		return true
	}
	if len(d.Members) == 0 {
		d.Members = e.items[:0]
	}
	d.Members = append(d.Members, *m)
	return true
}

// mgroupCreate is mgroup_create: the mgid value at valAt, the flags from p (which may
// be past the end of the line). It returns the length OpenSM adds.
func (e *emu) mgroupCreate(p, nameAt, valAt int) int {
	b := &e.buf
	d := e.conf.def
	if valAt < 0 {
		// inet_pton(AF_INET6, NULL, ...): OpenSM dereferences a NULL pointer.
		e.finding(check.SeverityError, nameAt, "mgid-crash", "`mgid` without '=GID': OpenSM 3.3.23 passes a NULL pointer to inet_pton and crashes (segmentation fault)",
			"write mgid=GID, e.g. mgid=ff12:401b::1")
		e.crashes("OpenSM crashes on `mgid` without a value", e.place(nameAt))
		return 0
	}
	text := b.str(valAt)
	addr, err := netip.ParseAddr(text)
	if err != nil || !addr.Is6() || addr.Zone() != "" || addr.As16()[0] != 0xff {
		// Logged as a PARSE ERROR but mgroup_create returns 0: the file is kept,
		// only this group is not created.
		e.finding(check.SeverityWarning, valAt, "mgid-not-multicast",
			fmt.Sprintf("mgid %q is not a multicast GID: OpenSM logs \"PARSE ERROR ... gid is not multicast\" and creates no group, but keeps the file", short(text)),
			"write an IPv6-style multicast GID starting with ff, e.g. ff12:401b::1")
		return 0
	}
	g := e.conf.flags // inherit partition flags
	n := 0
	for { // parse_mgroup_flags
		q := b.strchr(p, ',')
		if q >= 0 {
			b.set(q, 0)
			q++
		}
		fAt, vAt, r := e.nameToken(p)
		text := b.str(fAt)
		if vAt >= 0 {
			text += "=" + b.str(vAt)
		}
		// parse_part_conf hands mgroup_create the bytes after the mgid value's
		// terminator: when the value ends the line's items, that terminator is the
		// NUL written over '#', so the comment is parsed as flags (lab: "unrecognized
		// mgroup flag 'IGMP' - ignored" for partition-config.txt's own
		// `mgid=ff12:401b::16    # IGMP`; `# mtu=2` sets the mtu).
		inComment := e.hashAt >= 0 && fAt > e.hashAt && fAt <= e.pieceLen
		name := ""
		switch {
		case inComment && b.at(fAt) == 0:
			// An empty flag: parse_group_flag takes it for mtu (every name is a prefix
			// of "mtu") without a value, which changes nothing.
			e.commentFlag(fAt, text, "")
		case inComment:
			name = e.groupFlag(&g, fAt, vAt)
			e.commentFlag(fAt, text, name)
		default:
			name = e.groupFlag(&g, fAt, vAt)
		}
		if name == "" && text != "" && !inComment {
			e.finding(check.SeverityWarning, fAt, "mgid-swallows", fmt.Sprintf("%q after mgid= is read as a group flag, not a member: OpenSM ignores it", short(text)),
				"put members on their own line after the mgid line")
		}
		p += r
		n += r
		if q < 0 {
			break
		}
	}
	if e.dead || d.Partition == nil {
		return n
	}
	gid := addr.As16()
	if isIPMGID(gid) {
		pk := check.PKey(gid[4])<<8 | check.PKey(gid[5])
		full := d.Partition.Key.PKey(check.Full)
		switch {
		case gid != broadcastMGID(d.Partition.Key) && pk != 0 && pk != full:
			e.finding(check.SeverityWarning, nameAt, "mgid-pkey", fmt.Sprintf("IP multicast group %s carries P_Key %s but partition %s is %s: OpenSM logs an error and does not create it", addr, pk, d.Partition.Name, full),
				fmt.Sprintf("write %s or 0000 in bytes 4-5 of the MGID (OpenSM fills in the partition's key for 0000)", full))
			return n
		case g.Rate != e.conf.flags.Rate:
			e.finding(check.SeverityWarning, nameAt, "mgid-rate", fmt.Sprintf("IP multicast group %s has rate %d but the partition's broadcast group has %d: OpenSM logs an error and does not create it", addr, g.Rate, e.conf.flags.Rate),
				"give IP groups the partition's rate (set rate= on the partition, not the mgid line)")
			return n
		case g.MTU != e.conf.flags.MTU:
			e.finding(check.SeverityWarning, nameAt, "mgid-mtu", fmt.Sprintf("IP multicast group %s has mtu %d but the partition's broadcast group has %d: OpenSM logs an error and does not create it", addr, g.MTU, e.conf.flags.MTU),
				"give IP groups the partition's mtu (set mtu= on the partition, not the mgid line)")
			return n
		}
		gid[4], gid[5] = byte(full>>8), byte(full)
		g.QKey = cmp.Or(g.QKey, ipoibQKey)
	}
	e.createGroups(d.Partition, d, gid, g, e.place(nameAt), false)
	return n
}

// commentFlag reports a flag OpenSM parsed out of the comment after an mgid value: the
// flag at fAt, as written (text: name=value), and the group flag it set ("" for none).
// An unknown word is logged and ignored, a known flag changes the group.
func (e *emu) commentFlag(fAt int, text, flag string) {
	name := e.buf.str(fAt)
	const how = "OpenSM reads the comment after this mgid= as group flags (when the mgid value ends the line's items, its parser goes on past the '#')"
	const fix = "move the comment to a line of its own, or end the mgid with one of its flags before the '#' (mgid=GID,sl=0 # ...): OpenSM stops there"
	switch {
	case name == "":
		e.finding(check.SeverityWarning, fAt, "mgid-comment", how+": an empty one here, which it takes for mtu without a value (it logs \"flag 'mtu' requires valid value - skipped\"); the group is not changed", fix)
	case flag == "":
		e.finding(check.SeverityWarning, fAt, "mgid-comment", fmt.Sprintf("%s: %q is not a flag, it logs \"unrecognized mgroup flag '%s' - ignored\"", how, short(text), short(name)), fix)
	default:
		e.finding(check.SeverityWarning, fAt, "mgid-comment", fmt.Sprintf("%s: %q sets the group's %s, and it is not ignored", how, short(text), flag), fix)
	}
}

// refuseGroup is validate_requested_mgid in mcmr_rcv_create_new_mgrp
// (osm_sa_mcmember_record.c, ipoib_mcgroup_creation_validation on by default): an
// IPoIB group other than the broadcast group needs the broadcast group of its P_Key
// and scope ("ERR 1B1B: Broadcast group ... not found", seen in the lab); other MGIDs
// must not use the reserved flag bits (ERR 1B28) nor the 0xA01B signature with
// link-local scope (ERR 1B24).
func (c *Config) refuseGroup(mg [16]byte) string {
	if isIPMGID(mg) {
		bc := broadcastOf(mg)
		if _, ok := c.groupByMGID[bc]; !ok && bc != mg {
			return fmt.Sprintf("its IPoIB broadcast group %s does not exist (ERR 1B1B)", netip.AddrFrom16(bc))
		}
		return ""
	}
	if mg[1]&0xe0 != 0 {
		return "the MGID uses reserved flag bits (ERR 1B28)"
	}
	if mg[2] == 0xa0 && mg[3] == 0x1b && mg[1]&0x0f == 2 {
		return "the SA-assigned signature 0xA01B with link-local scope (ERR 1B24)"
	}
	return ""
}

// isIPMGID reports an IPoIB MGID: signature 0x401B (IPv4) or 0x601B (IPv6).
func isIPMGID(gid [16]byte) bool {
	sig := uint16(gid[2])<<8 | uint16(gid[3])
	return sig == 0x401b || sig == 0x601b
}

// createGroups is __create_mgrp + osm_prtn_add_mcgroup: one group per scope in the
// mask (the default scope, link-local, when none), its scope written into the MGID.
// A group whose MGID already exists is not created again (osm_get_mgrp_by_mgid in
// mgroup_create, find-or-create for the broadcast group): the first one wins.
func (e *emu) createGroups(p *Partition, d *Definition, gid [16]byte, g groupFlags, pos check.FilePos, broadcast bool) {
	if !broadcast {
		if old, dup := e.c.groupByMGID[gid]; dup {
			e.groupExists(old, g, pos)
			return
		}
	}
	scopes := []uint8{}
	for s := 0; s < 16; s++ {
		if g.ScopeMask&(1<<s) != 0 {
			scopes = append(scopes, uint8(s))
		}
	}
	if len(scopes) == 0 {
		scopes = []uint8{defaultMgrpScope}
	}
	for _, s := range scopes {
		mg := gid
		mg[1] = mg[1]&0xf0 | s
		if old, dup := e.c.groupByMGID[mg]; dup {
			if broadcast && old.Partition == p {
				e.groupExists(old, g, pos)
			}
			// The MGID as written is no group's (checked above), with its scope it
			// is: osm_prtn_add_mcgroup's find-or-create returns that group and
			// track_mgrp_w_partition adds it to this partition's list too. With a
			// group in two partitions' lists OpenSM 3.3.23 crashed (segmentation
			// fault) in every one-shot lab run (-o, at exit) and in some daemon runs
			// (before SUBNET UP), not in others: what it programs cannot be
			// predicted. In the same partition it is tracked once, and a written
			// MGID that already exists is skipped before (mgroup_create).
			if !broadcast && old.Partition != p {
				msg := fmt.Sprintf("multicast group %s (mgid=%s with scope %d) is already partition %s's (line %d): OpenSM 3.3.23 puts one group in two partitions and may crash (segmentation fault; in the lab every run with -o, some daemons)",
					netip.AddrFrom16(mg), netip.AddrFrom16(gid), s, old.Partition.Name, old.Pos.Line)
				e.c.Findings = append(e.c.Findings, check.Finding{Severity: check.SeverityError, Pos: pos, Rule: "mgid-crash", Message: msg,
					Action: "give each partition its own MGID"})
				e.crashes(fmt.Sprintf("OpenSM may crash on multicast group %s in two partitions", netip.AddrFrom16(mg)), pos)
			}
			continue
		}
		if why := e.c.refuseGroup(mg); why != "" {
			fix := "for IPoIB groups give the partition the ipoib flag (its broadcast group must exist first, in the same scope)"
			if p.IPoIB && s != defaultMgrpScope && isIPMGID(mg) {
				// The ipoib flag makes the broadcast group in link-local scope only.
				fix = fmt.Sprintf("the ipoib flag creates the broadcast group in link-local scope only: create it in scope %d first, with `mgid=ff1%x:401b::ffff:ffff,sl=0` on a line before this one", s, s)
			}
			if isIPMGID(mg) {
				e.refused = append(e.refused, refusedGroup{len(e.c.Findings), mg})
			}
			e.c.Findings = append(e.c.Findings, check.Finding{Severity: check.SeverityWarning, Pos: pos, Rule: "mgid-refused",
				Message: fmt.Sprintf("OpenSM's SA refuses to create multicast group %s: %s", netip.AddrFrom16(mg), why),
				Action:  fix})
			continue
		}
		grp := &MGroup{MGID: netip.AddrFrom16(mg), QKey: g.QKey, MTU: uint8(g.MTU), Rate: uint8(g.Rate), SL: uint8(g.SL), Scope: s,
			Broadcast: broadcast, Partition: p, Pos: pos, RawMTU: g.MTU, RawRate: g.Rate}
		e.c.groupByMGID[mg] = grp
		p.Groups = append(p.Groups, grp)
	}
}

// groupExists warns when a group is asked for again (a second ipoib definition of a
// partition, an mgid= line repeated) with other values than it was made with: OpenSM
// keeps the group as it is (mgroup_create skips an MGID that exists;
// osm_mcmr_rcv_find_or_create_new_mgrp returns it), so the later values are lost.
func (e *emu) groupExists(old *MGroup, g groupFlags, pos check.FilePos) {
	var differ []string
	for _, v := range []struct {
		name     string
		was, now uint32
	}{{"mtu", old.RawMTU, g.MTU}, {"rate", old.RawRate, g.Rate}, {"sl", uint32(old.SL), g.SL}, {"Q_Key", old.QKey, g.QKey}} {
		if v.was != v.now {
			differ = append(differ, fmt.Sprintf("%s %d, not %d", v.name, v.was, v.now))
		}
	}
	if len(differ) == 0 {
		return
	}
	e.c.Findings = append(e.c.Findings, check.Finding{Severity: check.SeverityWarning, Pos: pos, Rule: "group-exists",
		Message: fmt.Sprintf("multicast group %s already exists (made at %s): OpenSM keeps it as it was made, with %s", old.MGID, old.Pos, strings.Join(differ, ", ")),
		Action:  "give the group's flags once, where it is first made"})
}

// crashes records that OpenSM crashes (or may crash) on the file, the first cause:
// what it programs cannot be predicted (after a crash nothing; the tables stay as
// they were).
func (e *emu) crashes(why string, at check.FilePos) {
	if e.c.Uncertain == "" {
		e.c.Uncertain, e.c.UncertainAt, e.c.crash = why, at, true
	}
}

// MGroup is a multicast group OpenSM creates for a partition (osm_prtn_add_mcgroup):
// the IPoIB broadcast group of an `ipoib` partition and every valid mgid= line. It
// exists only while the partition has a member in the fabric (OpenSM deletes empty
// partitions and their groups).
type MGroup struct {
	MGID      netip.Addr // with the scope and, for IP groups, the P_Key filled in
	QKey      uint32
	MTU       uint8 // IB MTU code (1: 256 ... 5: 4096), as OpenSM stores it (truncated to 8 bits)
	Rate      uint8 // IB rate code (2: 2.5 Gb/s, 3: 10 Gb/s ... 22: 600 Gb/s)
	SL        uint8
	Scope     uint8
	Broadcast bool // the IPoIB broadcast group of an ipoib partition
	Partition *Partition
	Pos       check.FilePos
	// RawMTU and RawRate are the values as written (before the 8-bit truncation).
	RawMTU, RawRate uint32
}

// prefixOf is OpenSM's matching: strncmp(word, keyword, strlen(word)) == 0, that is
// word is a prefix of keyword (case-sensitive; the empty word matches everything).
func prefixOf(word, keyword string) bool { return strings.HasPrefix(keyword, word) }

// membershipWord is how partition_add_port reads an item's full/both/limited, and
// partition_add_flag defmember's: in that order, by prefix ("=" alone is full, "=b"
// both, "=limi" limited, "=FULL" unknown: limited).
func membershipWord(v string) (MemberFlag, bool) {
	switch {
	case prefixOf(v, "full"):
		return FlagFull, true
	case prefixOf(v, "both"):
		return FlagBoth, true
	case prefixOf(v, "limited"):
		return FlagLimited, true
	}
	return FlagLimited, false
}

func short(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}
