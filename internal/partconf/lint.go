package partconf

import (
	"cmp"
	"fmt"
	"iter"
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

// Findings are a file's lint findings in file order (the headline first).
type Findings struct {
	c        *Config
	opt      LintOptions
	head     []Finding // the rejection or uncertainty headline
	list     []Finding // the others, in file order
	errs     int
	warnings int
}

// Len is how many findings there are.
func (f *Findings) Len() int { return len(f.head) + len(f.list) }

// Errors and Warnings count the findings of each severity.
func (f *Findings) Errors() int   { return f.errs }
func (f *Findings) Warnings() int { return f.warnings }

// At is finding i.
func (f *Findings) At(i int) Finding {
	if i < len(f.head) {
		return f.head[i]
	}
	return f.list[i-len(f.head)]
}

// All yields every finding in order.
func (f *Findings) All() iter.Seq[Finding] {
	return func(yield func(Finding) bool) {
		for i := range f.Len() {
			if !yield(f.At(i)) {
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
		f.add(fd)
	}
	if c.Exists {
		if !c.HasDefault {
			f.warn(Pos{File: c.File, Line: 1, Col: 1}, "no-default",
				"no Default partition line: OpenSM adds Default=0x7fff : ALL=limited, SELF=full, so every port except the SM's is a limited member of the default partition and they cannot talk to each other in it (0x7fff; IPoIB on the default partition breaks)",
				"add `Default=0x7fff, ipoib : ALL=full ;` (or ALL=limited on purpose, with SELF=full)")
		}
		byGUID := map[check.GUID]seenMember{} // one map for every partition, cleared for each
		for _, p := range c.Partitions {
			clear(byGUID)
			f.lintPartition(p, byGUID)
		}
		f.lintNames()
		f.lintTables()
		f.lintValues()
	}
	// By line and column, keeping the order of those at the same place (the order
	// they were found in).
	slices.SortStableFunc(f.list, func(x, y Finding) int {
		return cmp.Or(cmp.Compare(x.Pos.Line, y.Pos.Line), cmp.Compare(x.Pos.Col, y.Pos.Col))
	})
	if c.Uncertain != "" {
		what := "; in the lab OpenSM usually rejected such files (fallback Default=0x7fff : ALL=full)"
		fix := "end the mgid line with a group flag before ';' (mgid=GID,sl=0;) or put ';' on a line of its own after a member"
		if c.crash {
			what, fix = ": after a crash it programs no table (the subnet keeps what it had, or no SM runs)", "fix the mgid-crash finding"
		}
		f.head = append(f.head, Finding{Severity: Error, Pos: c.UncertainAt, Rule: "opensm-uncertain",
			Message: "WHAT OPENSM DOES WITH THIS FILE CANNOT BE PREDICTED: " + c.Uncertain + what, Action: fix})
		f.errs++
	}
	if c.Rejected {
		f.head = append([]Finding{{Severity: Error, Pos: c.RejectedAt, Rule: "file-rejected",
			Message: "OpenSM REJECTS THIS FILE (PARSE ERROR at this line) and applies Default=0x7fff : ALL=full instead: every port becomes a full member of the default partition, no other partition exists, ALL ISOLATION IS LOST",
			Action:  "fix the errors below; `opensm` logs \"Partition configuration in error; retrying with default config\""}}, f.head...)
		f.errs++
	}
	return f
}

func (f *Findings) add(fd Finding) {
	if fd.Severity == Error {
		f.errs++
	} else {
		f.warnings++
	}
	f.list = append(f.list, fd)
}

func (f *Findings) warn(pos Pos, rule, msg, hint string) {
	f.add(Finding{Severity: Warning, Pos: pos, Rule: rule, Message: msg, Action: hint})
}

// effective is what an item's membership gives: both is full without -W.
func (f *Findings) effective(m MemberFlag) MemberFlag {
	if m == FlagBoth && !f.opt.AllowBoth {
		return FlagFull
	}
	return m
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
func posOrImplicit(p Pos) string {
	if p.Line == 0 {
		return "OpenSM's own Default=0x7fff"
	}
	return p.String()
}

// seenMember is the membership a partition's earlier item gave a port, and which item.
type seenMember struct {
	m  MemberFlag
	at int // its index in the partition's Members
}

// lintPartition lints partition p; byGUID is empty working memory.
func (f *Findings) lintPartition(p *Partition, byGUID map[check.GUID]seenMember) {
	opt := f.opt
	first := -1
	for di, d := range p.Defs {
		if d.Implicit {
			continue
		}
		if first < 0 {
			first = di
		} else if d.KeyText != "" && d.Name != "" && d.Name != p.Name {
			// A key reused under another name. The same name and key again (or the key
			// alone) is the split partition-config.txt documents ("It is possible to
			// split partition configuration in more than one definition, but then PKey
			// should be explicitly specified"): OpenSM merges it (osm_prtn_make_new logs
			// "Duplicated partition definition ... Will use it") as meant.
			f.warn(d.Pos, "duplicate-key", fmt.Sprintf("key %s is already defined at %s: OpenSM merges the definitions and keeps the name %q", p.Key, p.Defs[first].Pos, p.Name),
				"merge the member lists into one definition, or give this partition its own key")
		}
		if first != di && d.Name != "" && d.Name != p.Name {
			f.warn(d.Pos, "two-names", fmt.Sprintf("key %s is named %q here but %q at %s: OpenSM keeps %q", p.Key, d.Name, p.Name, p.Defs[first].Pos, p.Name),
				"use one name per key")
		}
		if d.Generated {
			f.warn(d.Pos, "generated-key", fmt.Sprintf("no key: OpenSM generates %s from the order of the definitions, and it changes when definitions are added or moved", p.Key),
				fmt.Sprintf("write the key: %s=%s", d.Name, p.Key))
		}
		if d.DefMember == FlagBoth && !opt.AllowBoth {
			f.warn(d.Pos, "both-without-W", "defmember=both without OpenSM -W (allow_both_pkeys): members get only a full entry",
				"run opensm with -W / allow_both_pkeys TRUE, or write defmember=full")
		}
	}
	full := false
	for mi := range p.Members {
		m := &p.Members[mi]
		eff := f.effective(m.Membership)
		if m.Membership == FlagBoth && !opt.AllowBoth && m.Explicit() {
			f.warn(m.Pos(), "both-without-W", fmt.Sprintf("%s: `both` without OpenSM -W (allow_both_pkeys) gives only a full entry", m.Text()),
				"run opensm with -W / allow_both_pkeys TRUE, or write =full")
		}
		if eff != FlagLimited {
			full = true
		}
		if m.Kind == KindGUID && !m.Def.Implicit {
			if s, ok := byGUID[m.GUID]; ok && s.m != eff {
				prev := &p.Members[s.at]
				f.warn(m.Pos(), "conflicting-membership", fmt.Sprintf("port %s is listed in partition %s as %s at %s and as %s here: OpenSM uses the last one (%s)", m.GUID, p.Key, s.m, prev.Pos(), eff, eff),
					"list the port once with the membership you want")
			}
			byGUID[m.GUID] = seenMember{eff, mi}
		}
	}
	if !full && len(p.Members) > 0 {
		pos := p.Defs[0].Pos
		if first >= 0 {
			pos = p.Defs[first].Pos
		}
		f.warn(pos, "no-full-member", fmt.Sprintf("every member of partition %s (%s) is limited: limited members cannot talk to each other, so nobody can talk in it", p.Key, p.Name),
			"make at least one port (a server, the storage target) =full, or use defmember=full")
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
			f.warn(p.Members[last].Pos(), "sm-limited", "the SM's own port ends up a limited member of the default partition (lab: OpenSM programs 0x7fff on it): limited ports can no longer reach the SM/SA in the default partition",
				"add SELF=full after it")
		}
	}
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
		n      int
		pi, mi int // the item on the last line naming the port: Partitions[pi].Members[mi]
		seen   bool
	}
	accs := make([]acc, len(c.GUIDs)) // by GUIDIndex
	guids := map[check.GUID]int{}     // one map for every partition, cleared for each
	for pi, p := range c.Partitions {
		kw := 0
		clear(guids)
		for mi := range p.Members {
			m := &p.Members[mi]
			switch m.Kind {
			case KindAll, KindAllCAs:
				if e := entries(m.Membership); e > kw {
					kw = e
				}
			case KindGUID:
				guids[m.GUID] = mi
			}
		}
		everyone += kw
		for g, mi := range guids {
			a := &accs[c.guidIndex[g]] // Members are the definitions' items: every GUID has one
			m := &p.Members[mi]
			if kw == 0 {
				a.n += entries(m.Membership)
			}
			if !a.seen || c.Partitions[a.pi].Members[a.mi].line < m.line {
				a.pi, a.mi, a.seen = pi, mi, true
			}
		}
	}
	if everyone > opt.TableSize {
		f.warn(Pos{File: c.File, Line: 1, Col: 1}, "table-overflow",
			fmt.Sprintf("every port needs %d P_Key entries (ALL/ALL_CAS members), more than a table of %d holds: OpenSM cannot program the rest", everyone, opt.TableSize),
			"use fewer partitions per port, or check PartitionCap (`smpquery nodeinfo`)")
		return
	}
	order := make([]int, 0, len(accs)) // the GUIDs a partition names, by GUID
	for i := range accs {
		if accs[i].seen {
			order = append(order, i)
		}
	}
	slices.SortFunc(order, func(i, j int) int { return cmp.Compare(c.GUIDs[i], c.GUIDs[j]) })
	for _, i := range order {
		a := accs[i]
		if n := a.n + everyone; n > opt.TableSize {
			f.warn(c.Partitions[a.pi].Members[a.mi].Pos(), "table-overflow", fmt.Sprintf("port %s needs %d P_Key entries, more than a table of %d holds: OpenSM cannot program the last %d", c.GUIDs[i], n, opt.TableSize, n-opt.TableSize),
				"take the port out of some partitions, or check PartitionCap (`smpquery nodeinfo`)")
		}
	}
}
