package job

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ibkey/ibkey/internal/check"
)

// MVAPICH2 (OFA-IB-CH3, src/mpid/ch3/channels/mrail/src/gen2/; checked against
// MVAPICH2 2.3.7, kumattau/mvapich2):
//
//   - MV2_DEFAULT_PKEY is a P_Key *value*: rdma_get_user_parameters (ibv_param.c) reads
//     it as (uint16_t)strtol(value, NULL, 0) & PKEY_MASK (0x7fff, ibv_param.h).
//   - set_pkey_index (rdma_iba_priv.c): a key of 0 (unset, RDMA_DEFAULT_PKEY) uses
//     rdma_default_pkey_ix, RDMA_DEFAULT_PKEY_IX 0; otherwise get_pkey_index takes the
//     first index (0 .. max_pkeys-1) whose 15-bit key matches, whatever its membership,
//     ignoring ibv_query_pkey errors; no match aborts ("Can't find PKEY INDEX according
//     to given PKEY"). MV2_DEFAULT_PKEY_IX was read ((uint16_t)atoi, only without
//     MV2_DEFAULT_PKEY) until svn r3103 (Oct 2008, before 1.2) removed it.
//   - Ports: MV2_IBA_HCA names the HCA(s) (':'-separated). MV2_DEFAULT_PORT is
//     atoi(value) (rdma_get_user_parameters); rdma_iba_hca_init (rdma_iba_priv.c) uses
//     it when it is >= 0 and MV2_NUM_PORTS (atoi, default 1) is not above 1, and aborts
//     when that port cannot be queried or is not ACTIVE ("user specified port %d: fail
//     to query or not ACTIVE"): 0 or text always aborts. Otherwise MVAPICH2 chooses
//     among the ACTIVE ports 1..RDMA_DEFAULT_MAX_PORTS (2) (all are checked here).
var MVAPICH2 = Library{
	ID: "mvapich2", Name: "MVAPICH2", Kind: ByValue,
	Vars:   []string{"MV2_DEFAULT_PKEY", "MV2_DEFAULT_PKEY_IX", "MV2_IBA_HCA", "MV2_DEFAULT_PORT", "MV2_NUM_PORTS"},
	Source: "MVAPICH2 2.3.7 src/mpid/ch3/channels/mrail/src/gen2/ibv_param.c rdma_get_user_parameters (MV2_DEFAULT_PKEY, MV2_DEFAULT_PORT, MV2_NUM_PORTS), rdma_iba_priv.c set_pkey_index/get_pkey_index/rdma_iba_hca_init, ibv_param.h PKEY_MASK",
	configure: func(in Inputs, s *setup) {
		env := in.Env
		key := check.PartitionKey(0)
		v, ok := env["MV2_DEFAULT_PKEY"]
		switch {
		case !ok:
			s.Setting = "MV2_DEFAULT_PKEY unset: index 0"
		default:
			key = check.PKey(parseC(v, 0).Value).Partition()
			s.Setting = fmt.Sprintf("MV2_DEFAULT_PKEY=%s: the first entry of partition %s, whatever its membership", v, key)
			if key == 0 {
				s.Setting = fmt.Sprintf("MV2_DEFAULT_PKEY=%s reads as key 0, which means unset: index 0", v)
			}
		}
		if ix, ok := env["MV2_DEFAULT_PKEY_IX"]; ok {
			s.Notes = append(s.Notes, fmt.Sprintf("MV2_DEFAULT_PKEY_IX=%s is not read: MVAPICH2 removed it before 1.2 (2008); without MV2_DEFAULT_PKEY it uses index 0", ix))
		}
		hcas, hasHCA := env["MV2_IBA_HCA"]
		port, hasPort := env["MV2_DEFAULT_PORT"]
		portNum := atoi(port)
		nports, hasN := env["MV2_NUM_PORTS"]
		fixed := hasPort && portNum >= 0 && (!hasN || atoi(nports) <= 1)
		if hasPort && !fixed && portNum >= 0 {
			s.Notes = append(s.Notes, fmt.Sprintf("MV2_DEFAULT_PORT=%s is not used: with MV2_NUM_PORTS=%s MVAPICH2 uses the ACTIVE ports", port, nports))
		}
		if fixed && portNum == 0 {
			s.Reject = fmt.Sprintf("MVAPICH2 aborts: MV2_DEFAULT_PORT=%s reads as port 0 (atoi): \"user specified port 0: fail to query or not ACTIVE\"", port)
		}
		s.Assumptions = append(s.Assumptions, "MVAPICH2: without MV2_IBA_HCA every ACTIVE InfiniBand port may be used (MVAPICH2 picks by topology); all are checked")
		s.selectPorts = func(host []*Port) []PortResult {
			out := selectActive(host, false, func(p *Port) (bool, string) {
				if hasHCA && !slices.Contains(strings.Split(hcas, ":"), p.Device) {
					return false, "not in MV2_IBA_HCA=" + hcas
				}
				if fixed && portNum != 0 && portNum != p.Num { // port 0: s.Reject
					return false, "not MV2_DEFAULT_PORT=" + port
				}
				if !fixed && p.Num > 2 {
					return false, "MVAPICH2 looks for ACTIVE ports among 1 and 2 only (RDMA_DEFAULT_MAX_PORTS)"
				}
				return true, "ACTIVE"
			})
			for i, pr := range out {
				if p := pr.Port; fixed && p.Num == portNum && !p.Active() && !p.Fabric {
					out[i].Why = fmt.Sprintf("MV2_DEFAULT_PORT=%s, not ACTIVE (%s): MVAPICH2 aborts if it opens %s", port, p.State, p.Device)
					if hasHCA && slices.Contains(strings.Split(hcas, ":"), p.Device) {
						out[i].Used, out[i].Why = true, fmt.Sprintf("MV2_IBA_HCA and MV2_DEFAULT_PORT=%s, not ACTIVE (%s)", port, p.State)
					}
				}
			}
			return out
		}
		s.pick = func(p *Port) Pick {
			if fixed && !p.Active() && !p.Fabric {
				return Pick{Outcome: Fails, Index: -1, Problem: fmt.Sprintf("MVAPICH2 aborts: \"user specified port %d: fail to query or not ACTIVE\" (%s is %s)", portNum, p.Label(), p.State)}
			}
			return mv2Pick(key, p)
		}
	},
	want: func(key check.PKey, p *Port) Pick { return wantValue(key, p, "MV2_DEFAULT_PKEY", mv2Pick) },
}

func mv2Pick(key check.PartitionKey, p *Port) Pick {
	return pickFirst(p, key, 0, "MVAPICH2's", Pick{Outcome: Fails, Index: -1, Problem: fmt.Sprintf("MVAPICH2 aborts: \"Can't find PKEY INDEX according to given PKEY\" (partition %s is not in the %s table)", key, p.Label())})
}

// Open MPI's openib BTL (open-mpi/ompi v4.x; removed in v5.0.0 by commit 8de786f5):
//
//   - btl_openib_pkey (synonym ib_pkey_val; environment OMPI_MCA_btl_openib_pkey) is a
//     P_Key *value*, decimal or hex, masked with 0x7fff (btl_openib_mca.c,
//     btl_openib_register_mca_params).
//   - init_one_device (btl_openib_component.c): 0 uses index 0; otherwise the first
//     index (0 .. max_pkeys-1) whose 15-bit key matches, whatever its membership; a
//     port without the key gets no BTL: Open MPI silently does not use it.
//   - btl_openib_if_include / btl_openib_if_exclude choose devices (dev or dev:port).
//   - With pml ucx (Open MPI 4.0 and later on InfiniBand, and the only way in 5.x) the
//     openib BTL is not used and UCX_IB_PKEY applies.
var OpenMPI = Library{
	ID: "openmpi", Name: "Open MPI (openib)", Kind: ByValue,
	Vars:   []string{"OMPI_MCA_btl_openib_pkey", "OMPI_MCA_btl_openib_ib_pkey_val", "OMPI_MCA_btl_openib_if_include", "OMPI_MCA_btl_openib_if_exclude", "OMPI_MCA_pml", "OMPI_MCA_opal_btl_openib_pkey", "OMPI_MCA_ompi_btl_openib_ib_pkey_val"},
	Source: "open-mpi/ompi v4.1 opal/mca/btl/openib/btl_openib_mca.c (pkey, masked 0x7fff) and btl_openib_component.c init_one_device; removed in v5.0.0",
	configure: func(in Inputs, s *setup) {
		env := in.Env
		if pml, ok := env["OMPI_MCA_pml"]; ok && pml != "ob1" {
			s.Inactive = fmt.Sprintf("OMPI_MCA_pml=%s: the openib BTL is not used (with pml ucx, UCX_IB_PKEY applies: see UCX)", pml)
		}
		// btl_openib_pkey is registered (and read) before its synonym ib_pkey_val, which
		// therefore wins when both are set; each is looked up under its long name
		// (project_framework_component_name) first (mca_base_var.c register_variable,
		// var_set_initial, var_set_from_env). A refused value leaves the variable as it
		// was, and a refused btl_openib_pkey fails its registration, so the synonym is
		// then not registered nor read.
		key, name, v := uint32(0), "", ""
		for _, names := range [][]string{{"OMPI_MCA_opal_btl_openib_pkey", "OMPI_MCA_btl_openib_pkey"}, {"OMPI_MCA_ompi_btl_openib_ib_pkey_val", "OMPI_MCA_btl_openib_ib_pkey_val"}} {
			n := names[0]
			x, ok := env[n]
			if !ok {
				n = names[1]
				x, ok = env[n]
			}
			if !ok {
				continue
			}
			u, valid := ompiUint(x)
			if !valid {
				s.Notes = append(s.Notes, fmt.Sprintf("Open MPI refuses %s=%s (\"An invalid value was supplied for an MCA variable\": more than 32 bits) and keeps the value it had (key %s)", n, x, check.PartitionKey(key)))
				if names[1] == "OMPI_MCA_btl_openib_pkey" {
					break
				}
				continue
			}
			key, name, v = u&0x7fff, n, x
		}
		if key == 0 {
			s.Setting = "btl_openib_pkey unset (0): index 0"
			if name != "" {
				s.Setting = fmt.Sprintf("%s=%s reads as key 0 (unset): index 0", name, v)
			}
		} else {
			s.Setting = fmt.Sprintf("%s=%s: the first entry of partition %s, whatever its membership; ports without it are not used", name, v, check.PartitionKey(key))
		}
		s.Assumptions = append(s.Assumptions, "Open MPI: applies to the openib BTL of Open MPI 4.x (pml ob1); MCA parameters from mpirun --mca or mca-params.conf are not read")
		inc, hasInc := env["OMPI_MCA_btl_openib_if_include"]
		exc, hasExc := env["OMPI_MCA_btl_openib_if_exclude"]
		s.selectPorts = func(host []*Port) []PortResult {
			return selectActive(host, false, func(p *Port) (bool, string) {
				spec := func(list string) bool {
					fields := strings.Split(list, ",")
					return slices.Contains(fields, p.Device) || slices.Contains(fields, fmt.Sprintf("%s:%d", p.Device, p.Num))
				}
				if hasInc && !spec(inc) {
					return false, "not in btl_openib_if_include=" + inc
				}
				if hasExc && spec(exc) {
					return false, "in btl_openib_if_exclude=" + exc
				}
				return true, "ACTIVE"
			})
		}
		s.pick = func(p *Port) Pick { return ompiPick(check.PartitionKey(key), p) }
	},
	want: func(key check.PKey, p *Port) Pick { return wantValue(key, p, "OMPI_MCA_btl_openib_pkey", ompiPick) },
}

// ompiUint is how Open MPI 4.x sets an MCA variable of type unsigned int from a
// string (opal/mca/base/mca_base_var.c int_from_string, var_set_from_string): empty
// is 0, else strtoull(s, &end, 0), shifted left by 10, 20 or 30 when k, m or g
// follows the number (any other text after it is ignored; "x" reads 0); valid is
// false past 32 bits ("-1" is 2^64-1), which Open MPI refuses.
func ompiUint(s string) (v uint32, valid bool) {
	n := parseC(s, 0)
	u := n.Unsigned()
	if n.Digits && n.Rest != "" {
		switch n.Rest[0] {
		case 'G', 'g':
			u <<= 30
		case 'M', 'm':
			u <<= 20
		case 'K', 'k':
			u <<= 10
		}
	}
	return uint32(u), u <= math.MaxUint32
}

func ompiPick(key check.PartitionKey, p *Port) Pick {
	return pickFirst(p, key, 0, "Open MPI's", Pick{Outcome: Skips, Index: -1, Problem: fmt.Sprintf("partition %s is not in the %s table: Open MPI's openib BTL silently does not use this port", key, p.Label())})
}
