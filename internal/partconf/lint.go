package partconf

import (
	"cmp"
	"fmt"
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

// Lint returns every finding for c: what OpenSM rejects (errors, line and column), and
// the mistakes it accepts silently (osm_prtn_config.c accepts them; lint.go's table
// says why each matters). The first
// finding is the rejection headline when OpenSM would drop the file.
func Lint(c *Config, opt LintOptions) []Finding {
	if opt.TableSize <= 0 {
		opt.TableSize = 128
	}
	var out []Finding
	add := func(sev Severity, pos Pos, rule, msg, hint string) {
		out = append(out, Finding{Severity: sev, Pos: pos, Rule: rule, Message: msg, Action: hint})
	}
	out = append(out, c.Findings...)
	if !c.Exists {
		return out
	}
	if !c.HasDefault {
		add(Warning, Pos{File: c.File, Line: 1, Col: 1}, "no-default",
			"no Default partition line: OpenSM adds Default=0x7fff : ALL=limited, SELF=full, so every port except the SM's is a limited member of the default partition and they cannot talk to each other in it (0x7fff; IPoIB on the default partition breaks)",
			"add `Default=0x7fff, ipoib : ALL=full ;` (or ALL=limited on purpose, with SELF=full)")
	}
	byGUID := map[check.GUID]seenMember{} // one map for every partition, cleared for each
	for _, p := range c.Partitions {
		clear(byGUID)
		lintPartition(c, p, opt, add, byGUID)
	}
	lintNames(c, add)
	lintTables(c, opt, add)
	lintValues(c, add)
	sortByPos(out)
	if c.Uncertain != "" {
		head := Finding{Severity: Error, Pos: c.UncertainAt, Rule: "opensm-uncertain",
			Message: "WHAT OPENSM DOES WITH THIS FILE CANNOT BE PREDICTED: " + c.Uncertain + "; in the lab OpenSM usually rejected such files (fallback Default=0x7fff : ALL=full)",
			Action:  "end the mgid line with a group flag before ';' (mgid=GID,sl=0;) or put ';' on a line of its own after a member"}
		out = append([]Finding{head}, out...)
	}
	if c.Rejected {
		head := Finding{Severity: Error, Pos: c.RejectedAt, Rule: "file-rejected",
			Message: "OpenSM REJECTS THIS FILE (PARSE ERROR at this line) and applies Default=0x7fff : ALL=full instead: every port becomes a full member of the default partition, no other partition exists, ALL ISOLATION IS LOST",
			Action:  "fix the errors below; `opensm` logs \"Partition configuration in error; retrying with default config\""}
		out = append([]Finding{head}, out...)
	}
	return out
}

// sortByPos sorts findings by line and column, keeping the order of findings at the
// same place. It sorts their indexes and then moves each finding once: a file of a
// million definitions has millions of findings, and a stable sort of the findings
// themselves moved them O(n log² n) times.
func sortByPos(fs []Finding) {
	type key struct{ line, col, i int }
	keys := make([]key, len(fs))
	for i := range fs {
		keys[i] = key{fs[i].Pos.Line, fs[i].Pos.Col, i}
	}
	slices.SortFunc(keys, func(a, b key) int {
		return cmp.Or(cmp.Compare(a.line, b.line), cmp.Compare(a.col, b.col), cmp.Compare(a.i, b.i))
	})
	// Position i takes finding keys[i].i: follow each cycle of the permutation.
	for start := range keys {
		if keys[start].i < 0 {
			continue
		}
		tmp := fs[start]
		j := start
		for {
			src := keys[j].i
			keys[j].i = -1
			if src == start {
				fs[j] = tmp
				break
			}
			fs[j] = fs[src]
			j = src
		}
	}
}

// lintNames warns about a definition without a key that names a partition when
// several have that name: OpenSM (osm_prtn_find_by_name) takes the first of them in
// its partition map, keys ordered by their bytes swapped, which need not be the first
// defined nor the one meant.
func lintNames(c *Config, add func(Severity, Pos, string, string, string)) {
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
		add(Warning, d.Pos, "ambiguous-name", fmt.Sprintf("%d partitions are named %q (%s): OpenSM adds these members to %s, the first of them in its partition map (keys ordered by their bytes swapped), not necessarily the first defined",
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

// seenMember is the membership a partition's earlier item gave a port, and where.
type seenMember struct {
	m  MemberFlag
	at *Member
}

// lintPartition lints one partition; byGUID is empty working memory.
func lintPartition(c *Config, p *Partition, opt LintOptions, add func(Severity, Pos, string, string, string), byGUID map[check.GUID]seenMember) {
	var first *Definition
	for _, d := range p.Defs {
		if d.Implicit {
			continue
		}
		if first == nil {
			first = d
		} else if d.KeyText != "" && d.Name != "" && d.Name != p.Name {
			// A key reused under another name. The same name and key again (or the key
			// alone) is the split partition-config.txt documents ("It is possible to
			// split partition configuration in more than one definition, but then PKey
			// should be explicitly specified"): OpenSM merges it (osm_prtn_make_new logs
			// "Duplicated partition definition ... Will use it") as meant.
			add(Warning, d.Pos, "duplicate-key", fmt.Sprintf("key %s is already defined at %s: OpenSM merges the definitions and keeps the name %q", p.Key, first.Pos, p.Name),
				"merge the member lists into one definition, or give this partition its own key")
		}
		if first != d && d.Name != "" && d.Name != p.Name {
			add(Warning, d.Pos, "two-names", fmt.Sprintf("key %s is named %q here but %q at %s: OpenSM keeps %q", p.Key, d.Name, p.Name, first.Pos, p.Name),
				"use one name per key")
		}
		if d.Generated {
			add(Warning, d.Pos, "generated-key", fmt.Sprintf("no key: OpenSM generates %s from the order of the definitions, and it changes when definitions are added or moved", p.Key),
				fmt.Sprintf("write the key: %s=%s", d.Name, p.Key))
		}
		if d.DefMember == FlagBoth && !opt.AllowBoth {
			add(Warning, d.Pos, "both-without-W", "defmember=both without OpenSM -W (allow_both_pkeys): members get only a full entry",
				"run opensm with -W / allow_both_pkeys TRUE, or write defmember=full")
		}
	}
	full := false
	for mi := range p.Members {
		m := &p.Members[mi]
		eff := m.Membership
		if eff == FlagBoth && !opt.AllowBoth {
			eff = FlagFull
			if m.Explicit() {
				add(Warning, m.Pos(), "both-without-W", fmt.Sprintf("%s: `both` without OpenSM -W (allow_both_pkeys) gives only a full entry", m.Text()),
					"run opensm with -W / allow_both_pkeys TRUE, or write =full")
			}
		}
		if eff != FlagLimited {
			full = true
		}
		if m.Kind == KindGUID && !m.Def.Implicit {
			if s, ok := byGUID[m.GUID]; ok && s.m != eff {
				add(Warning, m.Pos(), "conflicting-membership", fmt.Sprintf("port %s is listed in partition %s as %s at %s and as %s here: OpenSM uses the last one (%s)", m.GUID, p.Key, s.m, s.at.Pos(), eff, eff),
					"list the port once with the membership you want")
			}
			byGUID[m.GUID] = seenMember{eff, m}
		}
	}
	if !full && len(p.Members) > 0 {
		pos := p.Defs[0].Pos
		if first != nil {
			pos = first.Pos
		}
		add(Warning, pos, "no-full-member", fmt.Sprintf("every member of partition %s (%s) is limited: limited members cannot talk to each other, so nobody can talk in it", p.Key, p.Name),
			"make at least one port (a server, the storage target) =full, or use defmember=full")
	}
	if p.IsDefault() {
		// The SM's port is a CA: the last item naming SELF, ALL or ALL_CAS decides it.
		var last *Member
		for mi := range p.Members {
			m := &p.Members[mi]
			if m.Kind == KindSelf || m.Kind == KindAll || m.Kind == KindAllCAs {
				last = m
			}
		}
		if last != nil && last.Membership == FlagLimited && !last.Def.Implicit {
			add(Warning, last.Pos(), "sm-limited", "the SM's own port ends up a limited member of the default partition (lab: OpenSM programs 0x7fff on it): limited ports can no longer reach the SM/SA in the default partition",
				"add SELF=full after it")
		}
	}
}

// lintTables counts the entries each explicitly listed port needs. Keyword members (ALL,
// ALL_CAS) count for every port; ALL_SWITCHES and ALL_ROUTERS are assumed not to name
// the listed ports (they are usually HCAs).
func lintTables(c *Config, opt LintOptions, add func(Severity, Pos, string, string, string)) {
	entries := func(f MemberFlag) int {
		if f == FlagBoth && opt.AllowBoth {
			return 2
		}
		return 1
	}
	everyone := 0
	type acc struct {
		n  int32
		at *Member // the item on the last line naming the port
	}
	accs := make([]acc, len(c.GUIDs)) // by GUIDIndex
	guids := map[check.GUID]*Member{} // one map for every partition, cleared for each
	for _, p := range c.Partitions {
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
				guids[m.GUID] = m
			}
		}
		everyone += kw
		for g, m := range guids {
			gi, ok := c.guidIndex[g]
			if !ok {
				continue // not in a definition: cannot happen, Members are the definitions' items
			}
			a := &accs[gi]
			if kw == 0 {
				a.n += int32(entries(m.Membership))
			}
			if a.at == nil || a.at.line() < m.line() {
				a.at = m
			}
		}
	}
	if everyone > opt.TableSize {
		add(Warning, Pos{File: c.File, Line: 1, Col: 1}, "table-overflow",
			fmt.Sprintf("every port needs %d P_Key entries (ALL/ALL_CAS members), more than a table of %d holds: OpenSM cannot program the rest", everyone, opt.TableSize),
			"use fewer partitions per port, or check PartitionCap (`smpquery nodeinfo`)")
		return
	}
	order := make([]int32, 0, len(accs)) // the GUIDs a partition names, by GUID
	for i := range accs {
		if accs[i].at != nil {
			order = append(order, int32(i))
		}
	}
	slices.SortFunc(order, func(i, j int32) int { return cmp.Compare(c.GUIDs[i], c.GUIDs[j]) })
	for _, i := range order {
		a, g := accs[i], c.GUIDs[i]
		if n := int(a.n) + everyone; n > opt.TableSize {
			add(Warning, a.at.Pos(), "table-overflow",
				fmt.Sprintf("port %s needs %d P_Key entries, more than a table of %d holds: OpenSM cannot program the last %d", g, n, opt.TableSize, n-opt.TableSize),
				"take the port out of some partitions, or check PartitionCap (`smpquery nodeinfo`)")
		}
	}
}
