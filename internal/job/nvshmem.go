package job

import (
	"fmt"
	"strings"

	"github.com/ibkey/ibkey/internal/check"
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
//   - Ports: each PE uses the NIC closest to its GPU unless NVSHMEM_ENABLE_NIC_PE_MAPPING=1,
//     then NVSHMEM_HCA_LIST (hca:port entries, '^' excludes) or round robin; ibkey
//     cannot see GPU placement, so every ACTIVE port is a candidate.
var NVSHMEM = Library{
	ID: "nvshmem", Name: "NVSHMEM", Kind: ByIndex,
	Vars:   []string{"NVSHMEM_IB_PKEY_INDEX", "NVSHMEM_REMOTE_TRANSPORT", "NVSHMEM_HCA_LIST", "NVSHMEM_ENABLE_NIC_PE_MAPPING"},
	Source: "NVIDIA/nvshmem src/modules/transport/ibrc/ibrc.cpp ep_create (3.7.0: NVSHMEM_IB_PKEY_INDEX; before: pkey_index = 0), ibgda.cpp, ibdevx.cpp; NVSHMEM docs Environment Variables",
	configure: func(in Inputs, s *setup) {
		env := in.Env
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
			how = append(how, "NVSHMEM 3.7.0 and later; earlier versions ignore it and use index 0")
			s.Setting = fmt.Sprintf("NVSHMEM_IB_PKEY_INDEX=%s: index %d (%s)", v, idx, strings.Join(how, "; "))
			s.Assumptions = append(s.Assumptions, "NVSHMEM: NVSHMEM_IB_PKEY_INDEX is honoured (NVSHMEM 3.7.0 or later); older NVSHMEM always uses index 0")
		}
		s.Assumptions = append(s.Assumptions, "NVSHMEM: only the environment (and --env) is read; NVSHMEM releases that read /etc/nvshmem.conf, ~/.nvshmem.conf or NVSHMEM_CONF_FILE let those override it")
		if m, ok := env["NVSHMEM_ENABLE_NIC_PE_MAPPING"]; ok && m == "1" {
			if l, ok := env["NVSHMEM_HCA_LIST"]; ok {
				s.Unchecked = append(s.Unchecked, fmt.Sprintf("NVSHMEM_HCA_LIST=%s: which ports NVSHMEM's PEs map to is not interpreted; every ACTIVE port is checked", l))
			}
		}
		s.Assumptions = append(s.Assumptions, "NVSHMEM: each PE uses the NIC closest to its GPU, which ibkey cannot see; every ACTIVE port is checked")
		s.selectPorts = func(host []*Port) []PortResult { return selectActive(host, true, nil) }
		s.pick = func(p *Port) Pick { return nvshmemPick(idx, p) }
	},
	want: func(key check.PKey, p *Port) Pick {
		w := wantIndex(key, p, "NVSHMEM_IB_PKEY_INDEX", nvshmemPick)
		if w.Setting != "" && w.Setting != "NVSHMEM_IB_PKEY_INDEX=0" {
			w.Notes = append(w.Notes, "NVSHMEM_IB_PKEY_INDEX needs NVSHMEM 3.7.0 or later: older versions always use index 0")
		}
		return w
	},
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
