package job

import (
	"fmt"
	"strings"
)

// NVSHMEM (NVIDIA/nvshmem):
//
//   - Before 3.7.0 the IB transports hard-code P_Key index 0: attr.pkey_index = 0 in
//     ep_create of src/modules/transport/ibrc/ibrc.cpp, ib_qp_attr.pkey_index = 0 in
//     ibgda.cpp, primary_address_path.pkey_index 0 in ibdevx.cpp (v3.4.5; NVIDIA/nvshmem
//     issue 82, "Fixed in 3.7.0").
//   - From 3.7.0, NVSHMEM_IB_PKEY_INDEX (int, default 0; docs "Environment Variables",
//     Transport options) is the index; ep_create in ibrc.cpp refuses an index < 0 or
//     >= pkey_tbl_len ("Invalid NVSHMEM_IB_PKEY_INDEX").
//   - Int variables are read by nvshmemi_getenv_int (src/include/bootstrap_host_transport/
//     env_defs_internal.h): (int)strtol(value, &end, 0), so 0x10 is 16 and 010 is 8;
//     text after the number is ignored; no digit or an overflow prints "Environment
//     variable conversion failed" and the value is used anyway (0, or the saturated
//     strtol cut to int). A set but empty variable is "provided" and reads 0.
//   - From 3.6.5 /etc/nvshmem.conf, ~/.nvshmem.conf and NVSHMEM_CONF_FILE are read
//     too, and beat the environment (nvshmemconf.go).
//   - NVSHMEM_REMOTE_TRANSPORT=ucx hands InfiniBand to UCX (UCX_IB_PKEY applies);
//     libfabric and none use no verbs QP of NVSHMEM's own.
//   - Ports: the transports (ibrc.cpp, ibgda.cpp, ibdevx.cpp init) use the ACTIVE
//     InfiniBand or Ethernet ports that NVSHMEM_HCA_LIST allows (a leading '^'
//     excludes; names match exactly, a port of -1 or none matches every port), or,
//     without a list, those NVSHMEM_HCA_PE_MAPPING names; both are parsed by
//     nvshmemt_parse_hca_list (transport_common.cpp: name[:port[:count]] entries,
//     atoi, at most MAX_NUM_HCAS 48 entries in the list and MAX_NUM_PES_PER_NODE 32
//     in the mapping; a name over 63 bytes overruns char name[64]); an empty list
//     allows every port. Each PE then
//     uses the NIC closest to its GPU, or one by NVSHMEM_ENABLE_NIC_PE_MAPPING; ibkey
//     cannot see GPU placement, so every allowed ACTIVE port is a candidate.
var NVSHMEM = Library{
	ID: "nvshmem", Name: "NVSHMEM", Kind: ByIndex,
	Vars:   nvshmemVars,
	Source: "NVIDIA/nvshmem src/modules/transport/ibrc/ibrc.cpp ep_create (3.7.0: NVSHMEM_IB_PKEY_INDEX; before: pkey_index = 0), ibgda.cpp, ibdevx.cpp; NVSHMEM docs Environment Variables",
	// NVSHMEM's releases are 1.x to 3.x; the index is 0 before 3.7.0 in each.
	releases: releases{oldest: "1.0", below: "4.0", span: "NVSHMEM 1.0 to 3.x"},
	configure: func(in Inputs, s *setup) {
		lv := in.version(s.Library)
		env, files, open := nvshmemEnv(in, lv, s)
		honoured, known := lv.since("3.7.0")
		if known {
			s.wantNote = ""
		}
		const pkeyIndex = "NVSHMEM_IB_PKEY_INDEX"
		where := files.where(env, pkeyIndex)
		switch {
		case known && !honoured:
			s.pinned = fmt.Sprintf("%s does not read NVSHMEM_IB_PKEY_INDEX (3.7.0 and later do) and uses index 0", lv)
		case !files.known(pkeyIndex):
			s.unknown = "NVSHMEM_IB_PKEY_INDEX is not known: a configuration file NVSHMEM takes over the environment could not be read"
		case where != "" && in.exported == pkeyIndex:
			// The gate's export is in the environment, which the file beats.
			s.pinnedIndex, s.pinnedNote = parseC(env[pkeyIndex], 0).Int(), true
			s.pinned = fmt.Sprintf("NVSHMEM_IB_PKEY_INDEX=%s%s: NVSHMEM takes its files over the environment, so an export is not used and it uses index %d (change the file to change it)", env[pkeyIndex], where, s.pinnedIndex)
		}
		const transport = "NVSHMEM_REMOTE_TRANSPORT"
		t, ok := env[transport]
		if why := nvshmemInactive(t, ok); why != "" {
			s.Inactive = fmt.Sprintf("%s=%s%s: %s", transport, t, files.where(env, transport), why)
		}
		if open[transport] {
			// What its files leave open may route NVSHMEM either way.
			if s.Inactive != "" {
				s.Notes = append(s.Notes, s.Inactive+", as NVSHMEM 3.6.5 and later read its files")
			}
			s.Inactive = ""
			s.unknown = "whether NVSHMEM uses its own InfiniBand transports is not known (see what its files leave open)"
		}
		idx := 0
		if v, set := env["NVSHMEM_IB_PKEY_INDEX"]; !set {
			s.Setting = "NVSHMEM_IB_PKEY_INDEX unset: index 0 (every NVSHMEM version)"
		} else {
			if e, ok := in.Env[pkeyIndex]; ok && where != "" && e != v {
				where = fmt.Sprintf("%s, which beats the environment's %q)", strings.TrimSuffix(where, ")"), e)
			}
			n := parseC(v, 0)
			idx = n.Int()
			var how []string
			switch {
			case !n.Digits || n.Overflow:
				how = append(how, fmt.Sprintf("NVSHMEM prints \"Environment variable conversion failed (%s)\" and uses %d", v, idx))
			case n.Rest != "":
				how = append(how, fmt.Sprintf("%q after the number is ignored", n.Rest))
			}
			if n.Digits && n.Base == 8 && n.Value != 0 {
				how = append(how, "a leading 0 makes it octal")
			}
			if int64(idx) != n.Value && !n.Overflow {
				how = append(how, fmt.Sprintf("cut to a 32-bit int: %d", idx))
			}
			switch {
			case known && !honoured:
				idx = 0
				s.Setting = fmt.Sprintf("NVSHMEM_IB_PKEY_INDEX=%s%s: not read: %s", v, where, s.pinned)
			case known:
				how = append(how, lv.String()+" reads it (3.7.0 and later)")
				s.Setting = fmt.Sprintf("NVSHMEM_IB_PKEY_INDEX=%s%s: index %d (%s)", v, where, idx, strings.Join(how, "; "))
			default:
				how = append(how, "NVSHMEM 3.7.0 and later; earlier versions ignore it and use index 0")
				s.Setting = fmt.Sprintf("NVSHMEM_IB_PKEY_INDEX=%s%s: index %d (%s)", v, where, idx, strings.Join(how, "; "))
				s.Assumptions = append(s.Assumptions, "NVSHMEM: NVSHMEM_IB_PKEY_INDEX is honoured (NVSHMEM 3.7.0 or later); older NVSHMEM always uses index 0")
			}
		}
		filter, name := nvshmemFilter(env)
		// nvshmemt_parse_hca_list copies a name into char name[64] without a bound: a
		// longer one writes over the entry's port and the next entries.
		for _, e := range filter.entries {
			if len(e.name) > 63 {
				s.Unchecked = append(s.Unchecked, fmt.Sprintf("%s: the name %.20q... is %d bytes, more than NVSHMEM's 63-byte name buffer (nvshmemt_parse_hca_list writes past it), so which ports it allows is not known", name, e.name, len(e.name)))
				break
			}
		}
		s.Assumptions = append(s.Assumptions, "NVSHMEM: each PE uses the NIC closest to its GPU, which ibkey cannot see; every ACTIVE port is checked")
		s.roce = true
		allows := func(f hcaFilter, name, dev string, num int) (bool, string) {
			if len(f.entries) == 0 {
				return true, "ACTIVE"
			}
			if f.match(dev, num) {
				return true, "ACTIVE, allowed by " + name
			}
			return false, "not allowed by " + name
		}
		s.allows = func(_ []*Port, dev string, num int) (bool, string) {
			return allows(filter, name, dev, num)
		}
		if open["NVSHMEM_HCA_LIST"] || open["NVSHMEM_HCA_PE_MAPPING"] {
			// Which ports: what its files leave open may decide. Every port a reading
			// may allow is taken, its pick not checked.
			older, olderName := nvshmemFilter(in.Env)
			sure := files.known("NVSHMEM_HCA_LIST") && files.known("NVSHMEM_HCA_PE_MAPPING")
			s.allows = func(_ []*Port, dev string, num int) (bool, string) {
				ok, why := allows(filter, name, dev, num)
				switch old, _ := allows(older, olderName, dev, num); {
				case !sure:
					return true, "ACTIVE; which ports NVSHMEM's files allow is not known"
				case ok != old:
					return true, fmt.Sprintf("%s as NVSHMEM 3.6.5 and later read its files; %s for older versions", why, olderName)
				}
				return ok, why
			}
			if s.unknown == "" {
				s.unknown = "which ports NVSHMEM uses is not known (see what its files leave open)"
			}
		}
		s.value = idx
	},
	lookup:   nvshmemPick,
	wantNote: "NVSHMEM_IB_PKEY_INDEX needs NVSHMEM 3.7.0 or later: older versions always use index 0",
}

// nvshmemEnv is the job's NVSHMEM variables as its version lv takes them, and the
// files it reads (nil: none, or not read): from 3.6.5 the files' before the
// environment's. Without a version the files are read as 3.6.5 and later read them,
// and where older versions would take another value it is said (not checked); a
// version between 3.5.21 and 3.6.5, which no source places, likewise. open are the
// variables the files leave not known (said in s.Unchecked).
func nvshmemEnv(in Inputs, lv libVersion, s *setup) (env Env, f *ConfFiles, open map[string]bool) {
	f, reading := in.NVSHMEM, lv.reading(nvshmemConfSince, nvshmemConfNone)
	switch {
	case reading == 2:
		if f != nil && len(f.Values)+len(f.unknown) > 0 {
			s.Notes = append(s.Notes, fmt.Sprintf("%s does not read NVSHMEM's configuration files (3.6.5 and later do): not used", lv))
		}
		return in.Env, nil, nil
	case f == nil:
		s.Assumptions = append(s.Assumptions, "NVSHMEM: only the settings given are read; /etc/nvshmem.conf, ~/.nvshmem.conf and NVSHMEM_CONF_FILE, which NVSHMEM 3.6.5 and later read and take over the environment, are read only with settings from the environment")
		return in.Env, nil, nil
	}
	open = map[string]bool{}
	for _, name := range nvshmemVars {
		open[name] = !f.known(name)
	}
	s.Unchecked = append(s.Unchecked, f.unchecked(in.Env)...)
	s.Assumptions = append(s.Assumptions, f.assumptions("NVSHMEM")...)
	env = f.env(in.Env)
	if reading == 0 {
		return env, f, open
	}
	var differ []string // what versions before 3.6.5 take otherwise
	for _, name := range nvshmemVars {
		was, wasSet := in.Env[name]
		now, set := env[name]
		switch name {
		case "NVSHMEM_IB_PKEY_INDEX", "NVSHMEM_ENABLE_NIC_PE_MAPPING":
			// The index is read from 3.7.0, which reads the files too (assumed without
			// a version); which NIC a PE takes ibkey does not model.
			continue
		case "NVSHMEM_REMOTE_TRANSPORT":
			if nvshmemInactive(now, set) == nvshmemInactive(was, wasSet) {
				continue
			}
		}
		if set == wasSet && now == was {
			continue
		}
		open[name] = true
		then := "unset"
		if wasSet {
			then = fmt.Sprintf("%q (the environment)", was)
		}
		differ = append(differ, fmt.Sprintf("%s=%q%s (before 3.6.5: %s)", name, env[name], f.where(env, name), then))
	}
	if len(differ) == 0 {
		return env, f, open
	}
	if reading == 1 {
		s.Unchecked = append(s.Unchecked, fmt.Sprintf("whether %s reads NVSHMEM's configuration files (3.6.5 and later do, 3.5.21 and older do not) is not known, and they set %s", lv, strings.Join(differ, ", ")))
	} else {
		s.Unchecked = append(s.Unchecked, fmt.Sprintf("from NVSHMEM's configuration files, which NVSHMEM 3.6.5 and later take over the environment and older versions do not read (--lib-version nvshmem=VERSION decides): %s", strings.Join(differ, ", ")))
	}
	return env, f, open
}

// nvshmemInactive says why NVSHMEM uses no InfiniBand QPs of its own with
// NVSHMEM_REMOTE_TRANSPORT=t (set: ok), "" when it does.
func nvshmemInactive(t string, ok bool) string {
	switch {
	case !ok || t == "" || strings.EqualFold(t, "ibrc") || strings.EqualFold(t, "ibgda") || strings.EqualFold(t, "ibdevx"):
		return ""
	case strings.EqualFold(t, "ucx"):
		return "NVSHMEM's InfiniBand traffic goes through UCX (see UCX)"
	}
	return "no InfiniBand QPs of NVSHMEM's own"
}

// nvshmemFilter is the device filter of env and the setting it comes from:
// NVSHMEM_HCA_LIST, or without entries NVSHMEM_HCA_PE_MAPPING's names.
func nvshmemFilter(env Env) (hcaFilter, string) {
	filter, name := parseNVSHMEMHCAs(env["NVSHMEM_HCA_LIST"], nvshmemMaxHCAs), "NVSHMEM_HCA_LIST="+env["NVSHMEM_HCA_LIST"]
	if len(filter.entries) == 0 {
		filter, name = parseNVSHMEMHCAs(env["NVSHMEM_HCA_PE_MAPPING"], nvshmemMaxPEsPerNode), "NVSHMEM_HCA_PE_MAPPING="+env["NVSHMEM_HCA_PE_MAPPING"]
		filter.not = false
	}
	return filter, name
}

// nvshmemVars are NVSHMEM.Vars: the variables of NVSHMEM's that ibkey reads.
var nvshmemVars = []string{"NVSHMEM_IB_PKEY_INDEX", "NVSHMEM_REMOTE_TRANSPORT", "NVSHMEM_HCA_LIST", "NVSHMEM_HCA_PE_MAPPING", "NVSHMEM_ENABLE_NIC_PE_MAPPING"}

func nvshmemPick(idx int, p *Port) Pick {
	if p.Table == nil {
		return Pick{Outcome: NotChecked, Index: idx, Problem: p.NoTable}
	}
	if idx < 0 || idx >= len(p.Table) {
		return Pick{Outcome: Fails, Index: idx, Problem: fmt.Sprintf("NVSHMEM: \"Invalid NVSHMEM_IB_PKEY_INDEX %d ... expected 0 <= NVSHMEM_IB_PKEY_INDEX < pkey_tbl_len (%d)\" on %s", idx, len(p.Table), p.Label())}
	}
	return usesIndex(p, idx, "NVSHMEM's")
}

// The most entries nvshmemt_parse_hca_list keeps: the transports (ibrc.cpp, ibgda.cpp,
// ibdevx.cpp) pass MAX_NUM_HCAS for NVSHMEM_HCA_LIST and MAX_NUM_PES_PER_NODE for
// NVSHMEM_HCA_PE_MAPPING.
const (
	nvshmemMaxHCAs       = 48
	nvshmemMaxPEsPerNode = 32
)

// parseNVSHMEMHCAs is nvshmemt_parse_hca_list (src/modules/transport/common/
// transport_common.cpp, NVSHMEM 3.4.5): after an optional '^', a name runs to ':', ','
// or the end; ':' after a name gives its port (atoi, default -1) and a second ':' its
// count; whatever else follows a number up to the next ':' or ',' is skipped; empty
// names are dropped; at most max entries. Names match exactly.
func parseNVSHMEMHCAs(s string, max int) hcaFilter {
	s, not := strings.CutPrefix(s, "^")
	var out []hcaEntry
	name, afterPort := "", false
	for i := 0; i <= len(s) && len(out) < max; i++ {
		c := byte(0)
		if i < len(s) {
			c = s[i]
		}
		switch c {
		case ':':
			if !afterPort && name != "" {
				out = append(out, hcaEntry{name: name, port: atoi(s[i+1:])})
				name, afterPort = "", true
			} else if afterPort {
				afterPort = false // the count: not needed here
			}
			for i+1 < len(s) && s[i+1] != ',' && s[i+1] != ':' {
				i++
			}
		case ',', 0:
			if name != "" {
				out = append(out, hcaEntry{name: name, port: -1})
				name = ""
			}
			afterPort = false
		default:
			name += string(c)
		}
	}
	return hcaFilter{not: not, exact: true, entries: out}
}
