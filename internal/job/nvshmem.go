package job

import (
	"fmt"
	"strconv"
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
		v, set := env["NVSHMEM_IB_PKEY_INDEX"]
		switch {
		case !set:
			s.Setting = "NVSHMEM_IB_PKEY_INDEX unset: index 0 (every NVSHMEM version)"
		default:
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				s.Reject = fmt.Sprintf("NVSHMEM rejects NVSHMEM_IB_PKEY_INDEX=%s: not an integer", v)
				s.Setting = "NVSHMEM_IB_PKEY_INDEX=" + v
				break
			}
			idx = n
			s.Setting = fmt.Sprintf("NVSHMEM_IB_PKEY_INDEX=%s: index %d (NVSHMEM 3.7.0 and later; earlier versions ignore it and use index 0)", v, n)
			s.Assumptions = append(s.Assumptions, "NVSHMEM: NVSHMEM_IB_PKEY_INDEX is honoured (NVSHMEM 3.7.0 or later); older NVSHMEM always uses index 0")
		}
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
