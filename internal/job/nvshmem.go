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
//   - Some releases also read /etc/nvshmem.conf, ~/.nvshmem.conf and NVSHMEM_CONF_FILE
//     (nvshmemi_conf_get, same header), whose values override the environment; 3.4.5
//     does not.
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
	Vars:   []string{"NVSHMEM_IB_PKEY_INDEX", "NVSHMEM_REMOTE_TRANSPORT", "NVSHMEM_HCA_LIST", "NVSHMEM_HCA_PE_MAPPING", "NVSHMEM_ENABLE_NIC_PE_MAPPING"},
	Source: "NVIDIA/nvshmem src/modules/transport/ibrc/ibrc.cpp ep_create (3.7.0: NVSHMEM_IB_PKEY_INDEX; before: pkey_index = 0), ibgda.cpp, ibdevx.cpp; NVSHMEM docs Environment Variables",
	// NVSHMEM's releases are 1.x to 3.x; the index is 0 before 3.7.0 in each.
	releases: releases{oldest: "1.0", below: "4.0", span: "NVSHMEM 1.0 to 3.x"},
	configure: func(in Inputs, s *setup) {
		env, lv := in.Env, in.version(s.Library)
		honoured, known := lv.since("3.7.0")
		if known {
			s.wantNote = ""
		}
		if known && !honoured {
			s.pinned = fmt.Sprintf("%s does not read NVSHMEM_IB_PKEY_INDEX (3.7.0 and later do) and uses index 0", lv)
		}
		if t, ok := env["NVSHMEM_REMOTE_TRANSPORT"]; ok && !strings.EqualFold(t, "ibrc") && !strings.EqualFold(t, "ibgda") && !strings.EqualFold(t, "ibdevx") && t != "" {
			if strings.EqualFold(t, "ucx") {
				s.Inactive = "NVSHMEM_REMOTE_TRANSPORT=ucx: NVSHMEM's InfiniBand traffic goes through UCX (see UCX)"
			} else {
				s.Inactive = fmt.Sprintf("NVSHMEM_REMOTE_TRANSPORT=%s: no InfiniBand QPs of NVSHMEM's own", t)
			}
		}
		idx := 0
		if v, set := env["NVSHMEM_IB_PKEY_INDEX"]; !set {
			s.Setting = "NVSHMEM_IB_PKEY_INDEX unset: index 0 (every NVSHMEM version)"
		} else {
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
				s.Setting = fmt.Sprintf("NVSHMEM_IB_PKEY_INDEX=%s: not read: %s", v, s.pinned)
			case known:
				how = append(how, lv.String()+" reads it (3.7.0 and later)")
				s.Setting = fmt.Sprintf("NVSHMEM_IB_PKEY_INDEX=%s: index %d (%s)", v, idx, strings.Join(how, "; "))
			default:
				how = append(how, "NVSHMEM 3.7.0 and later; earlier versions ignore it and use index 0")
				s.Setting = fmt.Sprintf("NVSHMEM_IB_PKEY_INDEX=%s: index %d (%s)", v, idx, strings.Join(how, "; "))
				s.Assumptions = append(s.Assumptions, "NVSHMEM: NVSHMEM_IB_PKEY_INDEX is honoured (NVSHMEM 3.7.0 or later); older NVSHMEM always uses index 0")
			}
		}
		s.Assumptions = append(s.Assumptions, "NVSHMEM: only the environment (and --env) is read; NVSHMEM releases that read /etc/nvshmem.conf, ~/.nvshmem.conf or NVSHMEM_CONF_FILE let those override it")
		filter, name := parseNVSHMEMHCAs(env["NVSHMEM_HCA_LIST"], nvshmemMaxHCAs), "NVSHMEM_HCA_LIST="+env["NVSHMEM_HCA_LIST"]
		if len(filter.entries) == 0 {
			filter, name = parseNVSHMEMHCAs(env["NVSHMEM_HCA_PE_MAPPING"], nvshmemMaxPEsPerNode), "NVSHMEM_HCA_PE_MAPPING="+env["NVSHMEM_HCA_PE_MAPPING"]
			filter.not = false
		}
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
		s.allows = func(_ []*Port, dev string, num int) (bool, string) {
			if len(filter.entries) == 0 {
				return true, "ACTIVE"
			}
			if filter.match(dev, num) {
				return true, "ACTIVE, allowed by " + name
			}
			return false, "not allowed by " + name
		}
		s.value = idx
	},
	lookup:   nvshmemPick,
	wantNote: "NVSHMEM_IB_PKEY_INDEX needs NVSHMEM 3.7.0 or later: older versions always use index 0",
}

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
