package partconf

import (
	"cmp"
	"fmt"
	"iter"
	"net/netip"
	"slices"
	"strings"

	"github.com/ibkey/ibkey/internal/check"
)

// LintOptions are how the linted file will be used.
type LintOptions struct {
	// AllowBoth: OpenSM runs with -W (allow_both_pkeys).
	AllowBoth bool
	// TableSize is the smallest P_Key table among the ports (PartitionCap): 128 on mlx5,
	// 64 in ibsim, 32 on some switches. 0 means 128.
	TableSize int
}

// Findings are a file's lint findings in file order (the headline first). Each is kept
// as a small record of what it is about and made into a Finding, its words formatted,
// only when read: a file of a million definitions has millions of findings, which as
// Finding values held 1.2 GB where their records hold 50 MB, and a command that
// prints a few of each rule never formats the rest.
type Findings struct {
	c        *Config
	opt      LintOptions
	head     []check.Finding // the rejection or uncertainty headline
	recs     []lintRec       // the others, in file order
	made     []check.Finding // findings made at once (the parser's, rare rules): kindMade's a
	errs     int
	warnings int
}

// lintKind is the rule of a lintRec whose Finding is made when read.
type lintKind uint8

const (
	kindMade         lintKind = iota // made[a]
	kindDuplicateKey                 // partition a, definition b of it, c its first
	kindTwoNames                     // partition a, definition b of it, c its first
	kindGeneratedKey                 // partition a, definition b
	kindBothDef                      // partition a, definition b: defmember=both without -W
	kindBothItem                     // partition a, member b: =both without -W
	kindConflicting                  // partition a, member b, an earlier member c naming the port
	kindNoFull                       // partition a, at definition b
	kindSMLimited                    // partition a, member b
	kindOctal                        // partition a, member b
	kindDecimal                      // partition a, member b
	kindPortOverflow                 // port c.GUIDs[a] needs b entries
)

// lintRec is one finding before it is made: where, its rule and severity, and the
// indexes it is about (lintKind says which).
type lintRec struct {
	line, col int32
	kind      lintKind
	sev       check.Severity
	a, b, c   int32
}

// Len is how many findings there are.
func (f *Findings) Len() int { return len(f.head) + len(f.recs) }

// Errors and Warnings count the findings of each severity (none is made).
func (f *Findings) Errors() int   { return f.errs }
func (f *Findings) Warnings() int { return f.warnings }

// At is finding i, made now.
func (f *Findings) At(i int) check.Finding {
	if i < len(f.head) {
		return f.head[i]
	}
	return f.make(&f.recs[i-len(f.head)])
}

// All yields every finding in order, each made as it is yielded.
func (f *Findings) All() iter.Seq[check.Finding] {
	return func(yield func(check.Finding) bool) {
		for _, h := range f.head {
			if !yield(h) {
				return
			}
		}
		for i := range f.recs {
			if !yield(f.make(&f.recs[i])) {
				return
			}
		}
	}
}

// LintFindings returns every finding for c: what OpenSM rejects (errors, line and
// column), and the mistakes it accepts silently (osm_prtn_config.c accepts them; this
// file's table says why each matters). The first finding is the rejection headline when
// OpenSM would drop the file. Each finding is kept as a record until it is read.
func LintFindings(c *Config, opt LintOptions) *Findings {
	if opt.TableSize <= 0 {
		opt.TableSize = 128
	}
	f := &Findings{c: c, opt: opt}
	for _, fd := range c.Findings {
		f.addMade(fd)
	}
	if c.Exists {
		// A rejected file is replaced by the fallback, whose Default is ALL=full: the
		// missing Default line then adds nothing.
		if !c.HasDefault && !c.Rejected {
			named := ""
			if i := slices.IndexFunc(c.Definitions, func(d *Definition) bool { return !d.Implicit && strings.EqualFold(d.Name, "Default") }); i >= 0 {
				// `Default=0x10` or `default : ...`: a partition of its own
				// (osm_prtn_make_new finds a partition by key, or by the exact name
				// when no key is written, strncmp).
				d := c.Definitions[i]
				named = fmt.Sprintf(" (the definition named %q at %s is partition %s, not the default partition: that is key 0x7fff, and a definition without a key finds it by the exact name Default)", d.Name, d.Pos, d.Key)
			}
			f.warn(check.FilePos{File: c.File, Line: 1, Col: 1}, "no-default",
				"no Default partition line"+named+": OpenSM adds Default=0x7fff : ALL=limited, SELF=full, so every port except the SM's is a limited member of the default partition and they cannot talk to each other in it (0x7fff), and it makes no IPoIB broadcast group for it, so every host's ib0 stays without carrier",
				"add `Default=0x7fff, ipoib : ALL=full ;` (or ALL=limited on purpose, with SELF=full)")
		}
		if c.HasDefault && !c.Rejected {
			f.lintDefaultIPoIB(c.Partition(check.DefaultPartition))
		}
		byGUID := map[check.GUID]seenMember{} // one map for every partition, cleared for each
		for pi, p := range c.Partitions {
			clear(byGUID)
			f.lintPartition(int32(pi), p, byGUID)
		}
		f.lintNames()
		f.lintTables()
		f.lintValues()
	}
	sortByPos(f.recs)
	if c.Uncertain != "" {
		what := "; in the lab OpenSM usually rejected such files (fallback Default=0x7fff, ipoib : ALL=full)"
		fix := "end the mgid line with a group flag before ';' (mgid=GID,sl=0;) or put ';' on a line of its own after a member"
		if c.crash {
			what, fix = ": after a crash it programs no table (the subnet keeps what it had, or no SM runs)", "fix the mgid-crash finding"
		}
		f.head = append(f.head, check.Finding{Severity: check.SeverityError, Pos: c.UncertainAt, Rule: "opensm-uncertain",
			Message: "WHAT OPENSM DOES WITH THIS FILE CANNOT BE PREDICTED: " + c.Uncertain + what, Action: fix})
		f.errs++
	}
	if c.Rejected {
		f.head = append([]check.Finding{{Severity: check.SeverityError, Pos: c.RejectedAt, Rule: "file-rejected",
			Message: "OpenSM REJECTS THIS FILE (" + c.RejectedWhy("this line") + ") and applies Default=0x7fff, ipoib : ALL=full instead: every port becomes a full member of the default partition, no other partition exists, ALL ISOLATION IS LOST",
			Action:  "fix the errors below; `opensm` logs \"Partition configuration in error; retrying with default config\""}}, f.head...)
		f.errs++
	}
	return f
}

// lintDefaultIPoIB warns when the file makes no IPoIB broadcast group for the default
// partition. OpenSM makes ff12:401b:ffff::ffff:ffff itself only when it reads no file
// (osm_prtn.c prtn_make_default: `if (no_config)`); with a file, only the ipoib flag
// on a Default line (osm_prtn_config.c partition_create) or an mgid= line makes it.
// The kernel's IPoIB join cannot create it (ipoib_multicast.c ipoib_mcast_join: no
// Q_Key or MTU; OpenSM ERR 1B11, SA status 0x0600, which ib_sa reports as -EINVAL),
// so ib0 on every host, whose P_Key is 0xffff, never gets carrier. The lab shows all
// three (smlog's TestLabIPoIBDefaultBroadcast). A fabric without IPoIB does not care,
// hence a warning. Other partitions without ipoib get none: the file cannot say
// whether a host runs IPoIB on them (storage and MPI partitions need no group), while
// every host's ib0 runs on the default partition unless IPoIB is unloaded.
func (f *Findings) lintDefaultIPoIB(p *Partition) {
	bc := netip.AddrFrom16(broadcastMGID(check.DefaultPartition))
	if slices.ContainsFunc(p.Groups, func(g *MGroup) bool { return g.MGID == bc }) {
		return
	}
	d := p.Defs[slices.IndexFunc(p.Defs, func(d *Definition) bool { return !d.Implicit })]
	f.warn(d.Pos, "default-no-ipoib",
		"the Default partition has no ipoib flag, so OpenSM makes no IPoIB broadcast group for it (only without a partitions file does it make one: osm_prtn.c prtn_make_default; with a file the ipoib flag does, osm_prtn_config.c), and the kernel's IPoIB join cannot create the group (ipoib_multicast.c; OpenSM logs ERR 1B11): every host's ib0 (P_Key 0xffff) stays without carrier, kernel log \"ib0: multicast join failed for ff12:401b:ffff:0000:0000:0000:ffff:ffff, status -22\"; a running OpenSM that already made the group keeps it until it restarts. Harmless on a fabric without IPoIB",
		"`Default=0x7fff, ipoib : ALL=full;` (add `, ipoib` to this line), then SIGHUP OpenSM")
}

func (f *Findings) count(sev check.Severity) {
	if sev == check.SeverityError {
		f.errs++
	} else {
		f.warnings++
	}
}

func (f *Findings) addMade(fd check.Finding) {
	f.count(fd.Severity)
	f.recs = append(f.recs, lintRec{line: int32(fd.Pos.Line), col: int32(fd.Pos.Col), kind: kindMade, sev: fd.Severity, a: int32(len(f.made))})
	f.made = append(f.made, fd)
}

// warn adds a warning made at once (a rare rule's).
func (f *Findings) warn(pos check.FilePos, rule, msg, hint string) {
	f.addMade(check.Finding{Severity: check.SeverityWarning, Pos: pos, Rule: rule, Message: msg, Action: hint})
}

func (f *Findings) add(sev check.Severity, pos check.FilePos, kind lintKind, a, b, c int32) {
	f.count(sev)
	f.recs = append(f.recs, lintRec{line: int32(pos.Line), col: int32(pos.Col), kind: kind, sev: sev, a: a, b: b, c: c})
}

// make is the Finding of r, in the words Lint always used.
func (f *Findings) make(r *lintRec) check.Finding {
	if r.kind == kindMade {
		return f.made[r.a]
	}
	c := f.c
	pos := check.FilePos{File: c.File, Line: int(r.line), Col: int(r.col)}
	fd := check.Finding{Severity: r.sev, Pos: pos}
	var p *Partition
	if r.kind != kindPortOverflow {
		p = c.Partitions[r.a]
	}
	switch r.kind {
	case kindDuplicateKey:
		first := p.Defs[r.c]
		fd.Rule, fd.Message, fd.Action = "duplicate-key", fmt.Sprintf("key %s is already defined at %s: OpenSM merges the definitions and keeps the name %q", p.Key, first.Pos, p.Name),
			"merge the member lists into one definition, or give this partition its own key"
	case kindTwoNames:
		d, first := p.Defs[r.b], p.Defs[r.c]
		fd.Rule, fd.Message, fd.Action = "two-names", fmt.Sprintf("key %s is named %q here but %q at %s: OpenSM keeps %q", p.Key, d.Name, p.Name, first.Pos, p.Name),
			"use one name per key"
	case kindGeneratedKey:
		d := p.Defs[r.b]
		fd.Rule, fd.Message, fd.Action = "generated-key", fmt.Sprintf("no key: OpenSM generates %s from the order of the definitions, and it changes when definitions are added or moved", p.Key),
			fmt.Sprintf("write the key: %s=%s", d.Name, p.Key)
	case kindBothDef:
		fd.Rule, fd.Message, fd.Action = "both-without-W", "defmember=both without OpenSM -W (allow_both_pkeys): members get only a full entry",
			"run opensm with -W / allow_both_pkeys TRUE, or write defmember=full"
	case kindBothItem:
		m := &p.Members[r.b]
		fd.Rule, fd.Message, fd.Action = "both-without-W", fmt.Sprintf("%s: `both` without OpenSM -W (allow_both_pkeys) gives only a full entry", m.Text()),
			"run opensm with -W / allow_both_pkeys TRUE, or write =full"
	case kindConflicting:
		m, prev := &p.Members[r.b], &p.Members[r.c]
		eff, was := m.Membership.Effective(f.opt.AllowBoth), prev.Membership.Effective(f.opt.AllowBoth)
		fd.Rule, fd.Message, fd.Action = "conflicting-membership", fmt.Sprintf("port %s is listed in partition %s as %s at %s and as %s here: OpenSM uses the last one (%s)", m.GUID, p.Key, was, prev.Pos(), eff, eff),
			"list the port once with the membership you want"
	case kindNoFull:
		fd.Rule, fd.Message, fd.Action = "no-full-member", fmt.Sprintf("every member of partition %s (%s) is limited: limited members cannot talk to each other, so nobody can talk in it", p.Key, p.Name),
			"make at least one port (a server, the storage target) =full, or use defmember=full"
	case kindSMLimited:
		fd.Rule, fd.Message, fd.Action = "sm-limited", "the SM's own port ends up a limited member of the default partition (lab: OpenSM programs 0x7fff on it): limited ports can no longer reach the SM/SA in the default partition",
			"add SELF=full after it"
	case kindOctal:
		m := &p.Members[r.b]
		fd.Rule, fd.Message, fd.Action = "octal-guid", fmt.Sprintf("%s has no 0x and starts with 0: OpenSM reads it as octal, port %s", m.Text(), m.GUID),
			fmt.Sprintf("write the GUID in hex with 0x: %s if that is the port you mean (GUIDs as ibstat prints them need 0x in front)", m.GUID)
	case kindDecimal:
		m := &p.Members[r.b]
		fd.Rule, fd.Message, fd.Action = "decimal-guid", fmt.Sprintf("%s has no 0x: OpenSM reads it as a decimal number, port %s", m.Text(), m.GUID),
			"write the GUID in hex with 0x (as ibstat and ibnetdiscover print it)"
	case kindPortOverflow:
		n, size := int(r.b), f.opt.TableSize
		fd.Rule, fd.Message, fd.Action = "table-overflow", fmt.Sprintf("port %s needs %d P_Key entries, more than a table of %d holds: OpenSM cannot program the last %d", c.GUIDs[r.a], n, size, n-size),
			"take the port out of some partitions, or check PartitionCap (`smpquery nodeinfo`)"
	}
	return fd
}

// sortByPos sorts records by line and column, keeping the order of those at the same
// place (the order they were found in).
func sortByPos(recs []lintRec) {
	slices.SortStableFunc(recs, func(x, y lintRec) int {
		return cmp.Or(cmp.Compare(x.line, y.line), cmp.Compare(x.col, y.col))
	})
}

// lintNames warns about a definition without a key that names a partition when
// several have that name: OpenSM (osm_prtn_find_by_name) takes the first of them in
// its partition map, keys ordered by their bytes swapped, which need not be the first
// defined nor the one meant.
func (f *Findings) lintNames() {
	c := f.c
	byName := map[string][]*Partition(nil)
	for _, d := range c.Definitions {
		if d.Implicit || d.KeyText != "" || d.Generated || d.Partition == nil {
			continue
		}
		if byName == nil { // only files with a definition by name pay for the map
			byName = map[string][]*Partition{}
			for _, p := range c.Partitions {
				byName[p.Name] = append(byName[p.Name], p)
			}
		}
		var before []string
		for _, p := range byName[d.Partition.Name] {
			first := p.Defs[0]
			if first.Implicit && len(p.Defs) > 1 {
				first = p.Defs[1] // the file's own definition of the default partition
			}
			if f := first.Pos; f.Line < d.Pos.Line || (f.Line == d.Pos.Line && f.Col < d.Pos.Col) {
				before = append(before, fmt.Sprintf("%s at %s", p.Key, posOrImplicit(f)))
			}
		}
		if len(before) < 2 {
			continue
		}
		f.warn(d.Pos, "ambiguous-name", fmt.Sprintf("%d partitions are named %q (%s): OpenSM adds these members to %s, the first of them in its partition map (keys ordered by their bytes swapped), not necessarily the first defined",
			len(before), d.Partition.Name, strings.Join(before, ", "), d.Partition.Key),
			fmt.Sprintf("write the key (%s=%s), and give each partition a name of its own", d.Name, d.Partition.Key))
	}
}

// posOrImplicit is where a definition is written, or what OpenSM made without one.
func posOrImplicit(p check.FilePos) string {
	if p.Line == 0 {
		return "OpenSM's own Default=0x7fff"
	}
	return p.String()
}

// seenMember is the membership a partition's earlier item gave a port, and which item.
type seenMember struct {
	m  MemberFlag
	at int32 // its index in the partition's Members
}

// lintPartition lints partition pi; byGUID is empty working memory.
func (f *Findings) lintPartition(pi int32, p *Partition, byGUID map[check.GUID]seenMember) {
	opt := f.opt
	first := int32(-1)
	for di, d := range p.Defs {
		if d.Implicit {
			continue
		}
		if first < 0 {
			first = int32(di)
		} else if d.KeyText != "" && d.Name != "" && d.Name != p.Name {
			// A key reused under another name. The same name and key again (or the key
			// alone) is the split partition-config.txt documents ("It is possible to
			// split partition configuration in more than one definition, but then PKey
			// should be explicitly specified"): OpenSM merges it (osm_prtn_make_new logs
			// "Duplicated partition definition ... Will use it") as meant.
			f.add(check.SeverityWarning, d.Pos, kindDuplicateKey, pi, int32(di), first)
		}
		if first != int32(di) && d.Name != "" && d.Name != p.Name {
			f.add(check.SeverityWarning, d.Pos, kindTwoNames, pi, int32(di), first)
		}
		if d.Generated {
			f.add(check.SeverityWarning, d.Pos, kindGeneratedKey, pi, int32(di), 0)
		}
		if d.DefMember == FlagBoth && !opt.AllowBoth {
			f.add(check.SeverityWarning, d.Pos, kindBothDef, pi, int32(di), 0)
		}
	}
	full := false
	for mi := range p.Members {
		m := &p.Members[mi]
		eff := m.Membership.Effective(opt.AllowBoth)
		if m.Membership == FlagBoth && !opt.AllowBoth && m.Explicit() {
			f.add(check.SeverityWarning, m.Pos(), kindBothItem, pi, int32(mi), 0)
		}
		if (m.Kind == KindAll || m.Kind == KindAllCAs) && !m.Def.Implicit {
			f.lintOverridden(p, m, eff, byGUID)
		}
		if m.Kind == KindAll && eff == FlagLimited {
			// ALL names every port, and the last item naming a port wins: the full
			// items before it are limited now (osm_prtn_add_port replaces a port's
			// membership; with -W manage_membership_change empties the full table).
			full = false
		}
		if eff != FlagLimited {
			full = true
		}
		if m.Kind == KindGUID && !m.Def.Implicit {
			if s, ok := byGUID[m.GUID]; ok && s.m != eff {
				f.add(check.SeverityWarning, m.Pos(), kindConflicting, pi, int32(mi), s.at)
			}
			byGUID[m.GUID] = seenMember{eff, int32(mi)}
		}
	}
	if len(p.Members) == 0 && first >= 0 {
		// osm_prtn_make_partitions deletes every partition without a member once the
		// file is read, and osm_prtn_delete its multicast groups.
		groups := ""
		if len(p.Groups) > 0 {
			groups = ", and with it the multicast groups it makes"
		}
		f.warn(p.Defs[first].Pos, "no-members", fmt.Sprintf("partition %s (%s) has no member: OpenSM deletes it after reading the file%s; no port gets its key", p.Key, p.Name, groups),
			"list its ports after ':' (a port GUID, ALL, ALL_CAS, ALL_SWITCHES, ALL_ROUTERS or SELF), or remove the definition")
	}
	if !full && len(p.Members) > 0 {
		pos := p.Defs[0].Pos
		if first >= 0 {
			pos = p.Defs[first].Pos
		}
		f.add(check.SeverityWarning, pos, kindNoFull, pi, 0, 0)
	}
	if p.IsDefault() {
		// The SM's port is a CA: the last item naming SELF, ALL or ALL_CAS decides it.
		last := -1
		for mi := range p.Members {
			m := &p.Members[mi]
			if m.Kind == KindSelf || m.Kind == KindAll || m.Kind == KindAllCAs {
				last = mi
			}
		}
		if last >= 0 && p.Members[last].Membership == FlagLimited && !p.Members[last].Def.Implicit {
			f.add(check.SeverityWarning, p.Members[last].Pos(), kindSMLimited, pi, int32(last), 0)
		}
	}
}

// lintOverridden warns when an ALL or ALL_CAS item gives ports that earlier items of
// the partition named another membership: ALL names every port, ALL_CAS every CA
// port (osm_prtn_add_all by node type), and the last item naming a port wins
// (osm_prtn_add_port; with -W manage_membership_change), so those items have no
// effect. byGUID (the earlier items by port) is then cleared: from here every port has
// the item's membership. A file does not say which GUIDs are CA ports: for ALL_CAS the
// warning says it holds for those that are (the lint takes listed ports for CA ports,
// as lintTables does).
func (f *Findings) lintOverridden(p *Partition, all *Member, eff MemberFlag, byGUID map[check.GUID]seenMember) {
	n, first := 0, int32(-1)
	for _, s := range byGUID {
		if s.m != eff {
			n++
			if first < 0 || s.at < first {
				first = s.at
			}
		}
	}
	clear(byGUID)
	if n == 0 {
		return
	}
	fm := &p.Members[first]
	items := "an earlier item"
	if n > 1 {
		items = fmt.Sprintf("%d earlier items", n)
	}
	keyword, every, which := "ALL", "every port", ""
	if all.Kind == KindAllCAs {
		keyword, every, which = "ALL_CAS", "every CA port", ", where the port is a CA port"
	}
	f.warn(all.Pos(), "conflicting-membership", fmt.Sprintf("%s makes %s a %s member of partition %s, overriding %s that named a port %s%s (first %s at %s): OpenSM uses the last item naming a port",
		all.Text(), every, eff, p.Key, items, fm.Membership.Effective(f.opt.AllowBoth), which, fm.Text(), fm.Pos()),
		fmt.Sprintf("put %s first and the ports that differ after it", keyword))
}

// lintTables counts the entries each explicitly listed port needs. Keyword members (ALL,
// ALL_CAS) count for every port; ALL_SWITCHES and ALL_ROUTERS are assumed not to name
// the listed ports (they are usually HCAs).
func (f *Findings) lintTables() {
	c, opt := f.c, f.opt
	entries := func(m MemberFlag) int {
		if m == FlagBoth && opt.AllowBoth {
			return 2
		}
		return 1
	}
	everyone := 0
	type acc struct {
		n, pi, mi int32 // entries; the item on the last line naming the port: Partitions[pi].Members[mi]
		line      int32 // that item's line
		seen      bool
	}
	accs := make([]acc, len(c.GUIDs)) // by GUIDIndex
	// A port named twice in one partition needs one entry, its last item's: last is
	// that item's index by GUIDIndex, in is 1 + the partition it was last named in,
	// named the GUIDs the partition names, once each. Slices, not maps: a large file's
	// GUIDs are looked up once per item (issue 23's partitions check budget).
	last, in := make([]int32, len(c.GUIDs)), make([]int32, len(c.GUIDs))
	var named []int32
	for pi, p := range c.Partitions {
		kw := 0
		named = named[:0]
		for mi := range p.Members {
			m := &p.Members[mi]
			switch m.Kind {
			case KindAll, KindAllCAs:
				if e := entries(m.Membership); e > kw {
					kw = e
				}
			case KindGUID:
				if in[m.gi] != int32(pi)+1 {
					in[m.gi] = int32(pi) + 1
					named = append(named, m.gi)
				}
				last[m.gi] = int32(mi)
			}
		}
		everyone += kw
		for _, gi := range named {
			a, mi := &accs[gi], last[gi]
			m := &p.Members[mi]
			if kw == 0 {
				a.n += int32(entries(m.Membership))
			}
			if !a.seen || a.line < m.line {
				a.pi, a.mi, a.line, a.seen = int32(pi), mi, m.line, true
			}
		}
	}
	if everyone > opt.TableSize {
		f.warn(check.FilePos{File: c.File, Line: 1, Col: 1}, "table-overflow",
			fmt.Sprintf("every port needs %d P_Key entries (ALL/ALL_CAS members), more than a table of %d holds: OpenSM cannot program the rest", everyone, opt.TableSize),
			"use fewer partitions per port, or check PartitionCap (`smpquery nodeinfo`)")
		return
	}
	order := make([]int32, 0, len(accs)) // the GUIDs a partition names, by GUID
	for i := range accs {
		if accs[i].seen {
			order = append(order, int32(i))
		}
	}
	slices.SortFunc(order, func(i, j int32) int { return cmp.Compare(c.GUIDs[i], c.GUIDs[j]) })
	for _, i := range order {
		a := accs[i]
		if n := int(a.n) + everyone; n > opt.TableSize {
			f.add(check.SeverityWarning, c.Partitions[a.pi].Members[a.mi].Pos(), kindPortOverflow, i, int32(n), 0)
		}
	}
}
