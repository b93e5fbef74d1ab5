package job

import (
	"fmt"
	"maps"
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
//     it when it is >= 0 and MV2_NUM_PORTS (atoi, default 1, cut to MAX_NUM_PORTS,
//     1 in the default build) is not above 1, and aborts when that port cannot be
//     queried or is not ACTIVE ("user specified port %d: fail to query or not
//     ACTIVE"): 0 or text always aborts. Otherwise rdma_iba_hca_init takes, on each
//     HCA it opens, the ACTIVE ports among 1..RDMA_DEFAULT_MAX_PORTS (2) in order,
//     and its rails use the first rdma_num_ports (1) of them: the first ACTIVE port
//     of 1 and 2. mv2Aborts has the host-wide aborts (an MV2_IBA_HCA name or
//     MV2_DEFAULT_PORT the host lacks).
//   - HCAs (rdma_open_hca): with the default policy (MV2_MRAIL_BINDING) a process
//     opens one usable HCA (by its local rank), so every usable HCA is used by some
//     rank and a failed set_pkey_index stops the ranks on that HCA. MV2_NUM_HCAS
//     (atoi, cut to MAX_NUM_HCAS 10; rdma_get_pm_parameters), MV2_IBA_HCA, and the
//     rail sharing settings (MV2_SM_SCHEDULING, MV2_RAIL_SHARING_POLICY,
//     MV2_SMALL_MSG_/MV2_MED_MSG_RAIL_SHARING_POLICY; rdma_get_control_parameters)
//     set MV2_MRAIL_SHARING: every process opens the usable HCAs in order until it
//     has rdma_num_req_hcas of them (MV2_NUM_HCAS, or the number of MV2_IBA_HCA
//     names, which replaces it; 0 or less: all), and set_pkey_index runs on every
//     rail (MRAILI_Init_vc, rdma_iba_hca_init: one QP per HCA and port), so a key
//     missing on one HCA aborts every process of the host. The usable HCAs come
//     fastest type first (rdma_find_network_type, by mv2_get_hca_type, which is not
//     read here), then in device order: which MV2_NUM_HCAS of more are opened is not
//     known here.
var MVAPICH2 = Library{
	ID: "mvapich2", Name: "MVAPICH2", Kind: ByValue,
	Vars:      []string{"MV2_DEFAULT_PKEY", "MV2_DEFAULT_PKEY_IX", "MV2_IBA_HCA", "MV2_DEFAULT_PORT", "MV2_NUM_PORTS", "MV2_NUM_HCAS", "MVP_DEFAULT_PKEY"},
	Modifiers: mv2SharingVars,
	Source:    "MVAPICH2 2.3.7 src/mpid/ch3/channels/mrail/src/gen2/ibv_param.c rdma_get_user_parameters (MV2_DEFAULT_PKEY, MV2_DEFAULT_PORT, MV2_NUM_PORTS), rdma_get_pm_parameters (MV2_NUM_HCAS, MV2_IBA_HCA), rdma_get_control_parameters (rail sharing), rdma_iba_priv.c set_pkey_index/get_pkey_index/rdma_open_hca/rdma_find_network_type/rdma_iba_hca_init, ibv_param.h PKEY_MASK, MAX_NUM_HCAS, MAX_NUM_PORTS",
	// The 2.3 series, whose last release (2.3.7) ibkey follows; MVAPICH 3 reads
	// MVP_ settings and files.
	releases: releases{oldest: "2.3", below: "2.4", span: "MVAPICH2 2.3 to 2.3.7, whose source ibkey follows; MVAPICH 3 reads MVP_ settings, which ibkey does not model"},
	configure: func(in Inputs, s *setup) {
		// A gate's export beats every file.
		f := in.MV2.without(in.exported)
		env := f.env(in.Env)
		key := check.PartitionKey(0)
		v, ok := env["MV2_DEFAULT_PKEY"]
		switch {
		case !ok:
			s.Setting = "MV2_DEFAULT_PKEY unset: index 0"
		default:
			key = check.PKey(parseC(v, 0).Value).Partition()
			where := f.where(in.Env, "MV2_DEFAULT_PKEY")
			s.Setting = fmt.Sprintf("MV2_DEFAULT_PKEY=%s%s: the first entry of partition %s, whatever its membership", v, where, key)
			if key == 0 {
				s.Setting = fmt.Sprintf("MV2_DEFAULT_PKEY=%s%s reads as key 0, which means unset: index 0", v, where)
			}
		}
		if v, ok := env["MVP_DEFAULT_PKEY"]; ok {
			// MVAPICH 3.0 renamed its settings MVP_ (MPI_T cvars, gen2/ibv_param.c).
			s.Unchecked = append(s.Unchecked, fmt.Sprintf("MVP_DEFAULT_PKEY=%s is MVAPICH 3's name of the setting, which ibkey does not interpret (this is MVAPICH2 2.x, which reads MV2_DEFAULT_PKEY)", v))
		}
		if f == nil {
			s.Assumptions = append(s.Assumptions, "MVAPICH2: only the settings given are read; ~/.mvapich2.conf (or MV2_USER_CONFIG) and /etc/mvapich2.conf, read only with settings from the environment, can also set its variables")
		} else {
			if f.Reject != "" {
				s.Reject = f.Reject
			}
			s.Unchecked = append(s.Unchecked, f.unchecked(in.Env)...)
			s.Assumptions = append(s.Assumptions, f.assumptions("MVAPICH2")...)
			for _, name := range slices.Sorted(maps.Keys(f.Values)) {
				if name != "MV2_DEFAULT_PKEY" && f.where(in.Env, name) != "" {
					s.Notes = append(s.Notes, fmt.Sprintf("%s=%s%s, from MVAPICH2's configuration files", name, f.Values[name].Value, f.where(in.Env, name)))
				}
			}
		}
		if ix, ok := env["MV2_DEFAULT_PKEY_IX"]; ok {
			s.Notes = append(s.Notes, fmt.Sprintf("MV2_DEFAULT_PKEY_IX=%s is not read: MVAPICH2 removed it before 1.2 (2008); without MV2_DEFAULT_PKEY it uses index 0", ix))
		}
		names := mv2HCANames(env["MV2_IBA_HCA"])
		port, hasPort := env["MV2_DEFAULT_PORT"]
		portNum := atoi(port)
		if nports, ok := env["MV2_NUM_PORTS"]; ok && atoi(nports) > mv2MaxNumPorts {
			s.Notes = append(s.Notes, fmt.Sprintf("MV2_NUM_PORTS=%s is cut to %d: MAX_NUM_PORTS is %d in MVAPICH2's default build (\"Warning, max ports per hca is %d\"), so one port per HCA is used", nports, mv2MaxNumPorts, mv2MaxNumPorts, mv2MaxNumPorts))
			s.Assumptions = append(s.Assumptions, "MVAPICH2: built with the default MAX_NUM_PORTS (1)")
		}
		// MV2_NUM_PORTS is at most MAX_NUM_PORTS (1): the port is fixed whenever
		// MV2_DEFAULT_PORT is not negative.
		fixed := hasPort && portNum >= 0
		for _, v := range slices.Concat([]string{"MV2_NUM_HCAS", "MV2_IBA_HCA"}, mv2SharingVars) {
			if _, ok := env[v]; ok {
				// Every process opens every HCA it selects (MV2_MRAIL_SHARING).
				s.allPorts = true
				break
			}
		}
		if nh, ok := env["MV2_NUM_HCAS"]; ok {
			n := atoi(nh)
			switch {
			case len(names) > 0:
				s.Notes = append(s.Notes, fmt.Sprintf("MV2_NUM_HCAS=%s is not used: MV2_IBA_HCA names the HCAs each process opens", nh))
			case n > mv2MaxNumHCAs:
				s.Notes = append(s.Notes, fmt.Sprintf("MV2_NUM_HCAS=%s is cut to %d (MAX_NUM_HCAS: \"Warning, max hca is %d\")", nh, mv2MaxNumHCAs, mv2MaxNumHCAs))
				n = mv2MaxNumHCAs
			}
			if len(names) == 0 && n > 0 {
				s.opens = n
				s.opensWhy = "the fastest HCA type first, then in device order (rdma_find_network_type; the HCA type is not read here)"
				s.Setting += fmt.Sprintf("; MV2_NUM_HCAS=%s: each process opens the first %d usable HCAs", nh, n)
			} else if len(names) == 0 {
				s.Setting += fmt.Sprintf("; MV2_NUM_HCAS=%s: each process opens every usable HCA", nh)
			}
		}
		if fixed && portNum == 0 {
			s.Reject = fmt.Sprintf("MVAPICH2 aborts: MV2_DEFAULT_PORT=%s reads as port 0 (atoi): \"user specified port 0: fail to query or not ACTIVE\"", port)
		}
		if len(names) == 0 {
			s.Assumptions = append(s.Assumptions, "MVAPICH2: without MV2_IBA_HCA every HCA with an ACTIVE port 1 or 2 may be used, on the first of them (a process takes one by its local rank, or with rail sharing all); MVAPICH2 leaves out HCAs slower than the fastest or on a subnet with fewer HCAs (rdma_find_network_type), which is not read here: all are checked")
		}
		if len(names) > 1 {
			s.Assumptions = append(s.Assumptions, "MVAPICH2: of MV2_IBA_HCA's names, rdma_open_hca looks for as many as the host has usable HCAs (it leaves out slower ones unless named); a later name that is not on the host is taken as not looked for")
		}
		s.allows = func(host []*Port, dev string, num int) (bool, string) {
			if len(names) > 0 && !slices.ContainsFunc(names, func(n string) bool { return mv2HCAMatch(n, dev) }) {
				return false, "not in MV2_IBA_HCA=" + env["MV2_IBA_HCA"]
			}
			if fixed && portNum != 0 && portNum != num { // port 0: s.Reject
				return false, "not MV2_DEFAULT_PORT=" + port
			}
			if !fixed && num > mv2MaxPorts {
				return false, "MVAPICH2 looks for ACTIVE ports among 1 and 2 only (RDMA_DEFAULT_MAX_PORTS)"
			}
			if first := mv2FirstActive(host, dev); !fixed && first != 0 && first < num {
				return false, fmt.Sprintf("MVAPICH2 uses one port of an HCA (MAX_NUM_PORTS 1): the first ACTIVE of 1 and 2, %s/%d", dev, first)
			}
			return true, "ACTIVE"
		}
		s.notActive = func(p *Port) (bool, string) {
			if fixed && p.Num == portNum && !p.Fabric {
				return false, fmt.Sprintf("MV2_DEFAULT_PORT=%s, not ACTIVE (%s): MVAPICH2 aborts if it opens %s", port, p.State, p.Device)
			}
			return false, "not ACTIVE (" + p.State + ")"
		}
		s.aborts = func(host []*Port, _ []PortResult) []Abort { return mv2Aborts(host, names, fixed, portNum) }
		s.value = int(key)
	},
	lookup: func(v int, p *Port) Pick {
		// set_pkey_index: ibv_error_abort(GEN_EXIT_ERR, "Can't find PKEY INDEX ...").
		return pickFirst(p, check.PartitionKey(v), "MVAPICH2's", Pick{Outcome: Fails, Index: -1, Abort: true, Problem: fmt.Sprintf("MVAPICH2 aborts: \"Can't find PKEY INDEX according to given PKEY\" (partition %s is not in the %s table)", check.PartitionKey(v), p.Label())})
	},
}

// MVAPICH2's limits (ibv_param.h): RDMA_DEFAULT_MAX_PORTS, the ports 1..2 it looks
// for an ACTIVE one on; MAX_NUM_PORTS, what MV2_NUM_PORTS is cut to (its default
// build); MAX_NUM_HCAS, what MV2_NUM_HCAS is cut to; the 32 bytes of an
// rdma_iba_hcas entry.
const (
	mv2MaxPorts    = 2
	mv2MaxNumPorts = 1
	mv2MaxNumHCAs  = 10
	mv2HCANameLen  = 32
)

// mv2SharingVars set MVAPICH2's rail sharing policy (MV2_MRAIL_SHARING) without
// naming HCAs (rdma_get_control_parameters, ibv_param.c).
var mv2SharingVars = []string{"MV2_SM_SCHEDULING", "MV2_RAIL_SHARING_POLICY", "MV2_SMALL_MSG_RAIL_SHARING_POLICY", "MV2_MED_MSG_RAIL_SHARING_POLICY"}

// mv2FirstActive is the first ACTIVE port among 1..RDMA_DEFAULT_MAX_PORTS of device
// dev of host, the one port of it MVAPICH2 uses (0: none).
func mv2FirstActive(host []*Port, dev string) int {
	first := 0
	for _, p := range host {
		if p.Device == dev && p.Active() && p.Num >= 1 && p.Num <= mv2MaxPorts && (first == 0 || p.Num < first) {
			first = p.Num
		}
	}
	return first
}

// mv2HCANames is MV2_IBA_HCA as rdma_get_user_parameters (ibv_param.c) reads it:
// strtok(value, ":"), so empty names are skipped, each copied with strncpy into a
// 32-byte rdma_iba_hcas entry (a longer name keeps its first 32 bytes). Unset or
// empty: none (the entries stay RDMA_IBA_NULL_HCA, "no HCA named").
func mv2HCANames(v string) []string {
	var out []string
	for _, n := range strings.Split(v, ":") {
		if n != "" {
			out = append(out, n[:min(len(n), mv2HCANameLen)])
		}
	}
	return out
}

// mv2HCAMatch is rdma_open_hca's strncmp(device name, rdma_iba_hcas[j], 32) == 0: the
// names are compared on their first 32 bytes, so a 33-byte device name matches a
// name that shares its first 32. An entry reading RDMA_IBA_NULL_HCA ("nohca") names
// no HCA: rdma_open_hca takes the next usable one, so it matches any device.
func mv2HCAMatch(name, dev string) bool {
	return name == mv2NullHCA || name[:min(len(name), mv2HCANameLen)] == dev[:min(len(dev), mv2HCANameLen)]
}

// mv2NullHCA is RDMA_IBA_NULL_HCA (ibv_param.h), the value of an entry no name set.
const mv2NullHCA = "nohca"

// mv2Aborts is where MVAPICH2 stops the process before using a port of host
// (rdma_iba_priv.c, MVAPICH2 2.3.7):
//   - rdma_find_network_type counts as usable the devices with an ACTIVE port among
//     1..RDMA_DEFAULT_MAX_PORTS (rdma_find_active_port); with none, rdma_open_hca
//     fails with "No IB device found";
//   - with MV2_IBA_HCA, rdma_open_hca looks up its names in order, one per usable
//     HCA, among the usable devices; a name that matches none fails with "The HCA
//     (%s) the user requested for is not available on the system" ("Requested IB
//     device not found");
//   - with MV2_DEFAULT_PORT, rdma_iba_hca_init queries that port on every HCA opened
//     and fails when it cannot be queried or is not ACTIVE ("user specified port %d:
//     fail to query or not ACTIVE"). Without MV2_IBA_HCA which HCA is opened depends
//     on the rank's placement: the abort is certain only when no usable HCA has the
//     port ACTIVE (otherwise the port that is not is said in its why).
func mv2Aborts(host []*Port, names []string, fixed bool, portNum int) []Abort {
	var devs []string // in host order
	ports := map[string]map[int]*Port{}
	for _, p := range host {
		if ports[p.Device] == nil {
			devs = append(devs, p.Device)
			ports[p.Device] = map[int]*Port{}
		}
		ports[p.Device][p.Num] = p
	}
	var usable []string
	for _, d := range devs {
		for n := 1; n <= mv2MaxPorts; n++ {
			if p := ports[d][n]; p != nil && p.Active() {
				usable = append(usable, d)
				break
			}
		}
	}
	if len(usable) == 0 {
		return []Abort{{Reason: "MVAPICH2 aborts: \"No IB device found\" (rdma_open_hca): no device has an ACTIVE port 1 or 2", Waits: slices.ContainsFunc(host, func(p *Port) bool { return p.Num <= mv2MaxPorts })}}
	}
	opened := usable
	if len(names) > 0 {
		// Every usable device a name matches is looked for (user-selected HCAs are
		// never left out as slower), so at least that many names are.
		named := 0
		for _, d := range usable {
			if slices.ContainsFunc(names, func(n string) bool { return mv2HCAMatch(n, d) }) {
				named++
			}
		}
		opened = nil
		for k, n := range names[:min(len(names), len(usable))] {
			i := slices.IndexFunc(usable, func(d string) bool { return mv2HCAMatch(n, d) })
			if i < 0 {
				if k >= max(named, 1) {
					break // looked for only if the host has that many usable HCAs
				}
				why := "no device of that name with an ACTIVE port 1 or 2 (devices: " + strings.Join(devs, ", ") + ")"
				if len(n) == mv2HCANameLen {
					why += "; names are compared on their first 32 bytes"
				}
				down := slices.ContainsFunc(devs, func(d string) bool { return mv2HCAMatch(n, d) })
				return []Abort{{Device: n, Reason: fmt.Sprintf("MVAPICH2 aborts: \"The HCA (%s) the user requested for is not available on the system\" (rdma_open_hca): %s", n, why), Waits: down}}
			}
			if !slices.Contains(opened, usable[i]) {
				opened = append(opened, usable[i])
			}
		}
	}
	if !fixed || portNum == 0 { // port 0: rejected on every host
		return nil
	}
	var bad []Abort
	for _, d := range opened {
		p := ports[d][portNum]
		switch {
		case p == nil:
			bad = append(bad, Abort{Device: d, Reason: fmt.Sprintf("MVAPICH2 aborts: \"user specified port %d: fail to query or not ACTIVE\" (rdma_iba_hca_init): %s has no port %d", portNum, d, portNum)})
		case !p.Active():
			bad = append(bad, Abort{Device: d, Reason: fmt.Sprintf("MVAPICH2 aborts: \"user specified port %d: fail to query or not ACTIVE\" (rdma_iba_hca_init): %s is %s", portNum, p.Label(), stateWord(p.State)), Waits: true})
		}
	}
	if len(names) == 0 && len(bad) < len(opened) {
		return nil // an HCA with the port ACTIVE may be the one opened
	}
	return bad
}

// Open MPI's openib BTL (open-mpi/ompi v4.x; removed in v5.0.0 by commit 8de786f5):
//
//   - btl_openib_pkey (synonym ib_pkey_val; environment OMPI_MCA_btl_openib_pkey) is a
//     P_Key *value*, decimal or hex, masked with 0x7fff (btl_openib_mca.c,
//     btl_openib_register_mca_params).
//   - init_one_device (btl_openib_component.c): 0 uses index 0; otherwise the first
//     index (0 .. max_pkeys-1) whose 15-bit key matches, whatever its membership; a
//     port without the key gets no BTL: Open MPI silently does not use it. Its
//     ports are every ACTIVE one, RoCE (link layer Ethernet) included.
//   - btl_openib_if_include / btl_openib_if_exclude choose devices (dev or dev:port).
//   - With pml ucx (Open MPI 4.0 and later on InfiniBand, and the only way in 5.x) the
//     openib BTL is not used and UCX_IB_PKEY applies. OMPI_MCA_pml and OMPI_MCA_btl
//     are component lists (ompiSelects): a BTL list without openib (or with ^openib)
//     does not open it, as Debian's /etc/openmpi/openmpi-mca-params.conf does
//     (btl = ^uct,openib,ofi; a real Open MPI 4.1.4 with btl_base_verbose shows it).
//   - From Open MPI 4.0.0 init_one_port (btl_openib_component.c) refuses an
//     InfiniBand port unless btl_openib_allow_ib (a bool, default false;
//     btl_openib_mca.c) is true: without it the openib BTL uses no InfiniBand port.
var OpenMPI = Library{
	ID: "openmpi", Name: "Open MPI (openib)", Kind: ByValue,
	Vars: []string{"OMPI_MCA_btl_openib_pkey", "OMPI_MCA_btl_openib_ib_pkey_val", "OMPI_MCA_btl_openib_if_include", "OMPI_MCA_btl_openib_if_exclude", "OMPI_MCA_pml", "OMPI_MCA_opal_btl_openib_pkey", "OMPI_MCA_ompi_btl_openib_ib_pkey_val", "OMPI_MCA_ompi_pml", "OMPI_MCA_opal_btl_openib_if_include", "OMPI_MCA_opal_btl_openib_if_exclude"},
	// btl_openib_allow_ib only says whether openib uses InfiniBand ports at all, btl
	// (long name opal_btl) whether the openib BTL is opened.
	Modifiers: []string{"OMPI_MCA_btl_openib_allow_ib", "OMPI_MCA_opal_btl_openib_allow_ib", "OMPI_MCA_btl", "OMPI_MCA_opal_btl"},
	Source:    "open-mpi/ompi v4.1 opal/mca/btl/openib/btl_openib_mca.c (pkey, masked 0x7fff) and btl_openib_component.c init_one_device; removed in v5.0.0",
	// allow_ib arrived in 4.0.0; openib was removed in 5.0.0 (a reading of its own).
	releases: releases{oldest: "4.0.0", span: "Open MPI 4.0.0, whose openib needs btl_openib_allow_ib for InfiniBand, and later"},
	configure: func(in Inputs, s *setup) {
		// fixed: Inactive or Reject comes from a value no MCA parameter file can
		// change (the environment, or the override file).
		fixed := false
		pmlChoice := "" // a PML list that leaves Open MPI a choice: said if openib would be used
		pml, hasPML := ompiGet(in, "OMPI_MCA_ompi_pml", "OMPI_MCA_pml")
		if hasPML {
			bad := ompiNoSuchComponent(pml.Value)
			switch picks, sure := ompiSelects(pml.Value, "ob1"); {
			case bad != "":
				s.Reject, fixed = fmt.Sprintf("Open MPI refuses %s: no PML is named %q (\"A requested component was not found\": MPI_Init fails)", pml, bad), pml.fixed(in)
			case !picks:
				s.Inactive, fixed = fmt.Sprintf("%s: the openib BTL is not used (pml ob1 is not selected; with pml ucx, UCX_IB_PKEY applies: see UCX)", pml), pml.fixed(in)
			case !sure:
				// ompi_pml_base_select takes the highest priority among the PMLs that
				// open (a real Open MPI 4.1.4 with pml ^ucx took cm, over libfabric).
				pmlChoice = fmt.Sprintf("%s lets Open MPI choose among several PMLs by priority (cm, ucx or ob1, by what the host has), which ibkey does not read: the openib BTL is used only under ob1", pml)
			}
		}
		// Every MPI_Init opens the BTL framework, whatever the PML, and before the PML
		// framework (ompi_mpi_init.c: mca_bml_base_open, then the pml): a BTL list Open
		// MPI refuses stops it under pml cm or ucx too, and is what it says first (a
		// real Open MPI 4.1.4).
		btl, hasBTL := ompiGet(in, "OMPI_MCA_opal_btl", "OMPI_MCA_btl")
		btlRefused := false
		btlPicks, _ := ompiSelects(btl.Value, "openib") // unset: every BTL
		if hasBTL {
			switch bad := ompiNoSuchComponent(btl.Value); {
			case strings.Contains(strings.TrimLeft(btl.Value, "^"), "^"):
				// mca_base_component_parse_requested: "framework-param:too-many-negates".
				s.Inactive, s.Reject, fixed, btlRefused = "", fmt.Sprintf("Open MPI refuses %s: '^' may only start the list (MPI_Init fails)", btl), btl.fixed(in), true
			case bad != "":
				s.Inactive, s.Reject, fixed, btlRefused = "", fmt.Sprintf("Open MPI refuses %s: no BTL is named %q (\"A requested component was not found\": MPI_Init fails)", btl, bad), btl.fixed(in), true
			case !btlPicks && s.Inactive == "" && s.Reject == "":
				s.Inactive, fixed = fmt.Sprintf("%s: the openib BTL is not opened (Open MPI selects BTLs by this list)", btl), btl.fixed(in)
			}
		}
		// btl_openib_pkey is registered (and read) before its synonym ib_pkey_val, which
		// therefore wins when both are set; each is looked up under its long name
		// (project_framework_component_name) first (mca_base_var.c register_variable,
		// var_set_initial, var_set_from_env). A refused value leaves the variable as it
		// was, and a refused btl_openib_pkey fails its registration, so the synonym is
		// then not registered nor read.
		key, from := uint32(0), ompiSet{}
		pkeyVars := [][2]string{{"OMPI_MCA_opal_btl_openib_pkey", "OMPI_MCA_btl_openib_pkey"}, {"OMPI_MCA_ompi_btl_openib_ib_pkey_val", "OMPI_MCA_btl_openib_ib_pkey_val"}}
		s.beatsExport = func(part check.PartitionKey) string {
			// The job's environment with the export added: whatever Open MPI then
			// takes instead of it beats it (the override file, the long name, or
			// the synonym from anywhere).
			want := Inputs{Env: Env{}, MCA: in.MCA}
			maps.Copy(want.Env, in.Env)
			want.Env["OMPI_MCA_btl_openib_pkey"] = part.String()
			var won ompiSet
			ompiResolve(want, pkeyVars, func(o ompiSet) bool {
				u, valid := ompiUint(o.Value)
				if valid {
					won = o
					if check.PartitionKey(u&0x7fff) == part {
						won = ompiSet{} // it puts the library in part too
					}
				}
				return valid
			})
			if won.Name == "" || won.File == "" && won.Name == "OMPI_MCA_btl_openib_pkey" {
				return ""
			}
			return fmt.Sprintf("exporting OMPI_MCA_btl_openib_pkey does not apply: Open MPI takes %s instead (mca_base_var.c var_set_initial); set partition %s there", won, part)
		}
		ompiResolve(in, pkeyVars, func(o ompiSet) bool {
			u, valid := ompiUint(o.Value)
			if !valid {
				s.Notes = append(s.Notes, fmt.Sprintf("Open MPI refuses %s (\"An invalid value was supplied for an MCA variable\": more than 32 bits) and keeps the value it had (key %s)", o, check.PartitionKey(key)))
				return false
			}
			key, from = u&0x7fff, o
			return true
		})
		if key == 0 {
			s.Setting = "btl_openib_pkey unset (0): index 0"
			if from.Name != "" {
				s.Setting = fmt.Sprintf("%s reads as key 0 (unset): index 0", from)
			}
		} else {
			s.Setting = fmt.Sprintf("%s: the first entry of partition %s, whatever its membership; ports without it are not used", from, check.PartitionKey(key))
		}
		incSet, hasInc := ompiGet(in, "OMPI_MCA_opal_btl_openib_if_include", "OMPI_MCA_btl_openib_if_include")
		excSet, hasExc := ompiGet(in, "OMPI_MCA_opal_btl_openib_if_exclude", "OMPI_MCA_btl_openib_if_exclude")
		inc, exc := incSet.Value, excSet.Value
		// listed is get_port_list: whether btl_openib_if_include and _if_exclude let
		// openib use port num of dev, and why not.
		listed := func(dev string, num int) (bool, string) {
			spec := func(list string) bool {
				fields := strings.Split(list, ",")
				return slices.Contains(fields, dev) || slices.Contains(fields, fmt.Sprintf("%s:%d", dev, num))
			}
			// An empty string variable is no value (mca_base_var.c var_set_string
			// stores NULL), so no list: every port (it still counts as set for the
			// mutually exclusive check below, which looks at where it came from).
			if hasInc && inc != "" && !spec(inc) {
				return false, "not in btl_openib_if_include=" + inc
			}
			if hasExc && exc != "" && spec(exc) {
				return false, "in btl_openib_if_exclude=" + exc
			}
			return true, "ACTIVE"
		}
		// ibOff, without allow_ib, is why openib refuses InfiniBand ports
		// (init_one_port: OPAL_ERR_NOT_FOUND). It still runs on RoCE ones, unless an
		// ACTIVE InfiniBand port it lists reaches init_one_port (key 0, or its lookup
		// finds the key): init_one_device then stops at it (its port loop breaks) and,
		// with no BTL made on that device yet, returns the error, on which
		// btl_openib_component_init gives up every device ("error in device init";
		// no_btls). Whether openib made a RoCE BTL before it reached that device is
		// the order of dev_sorted, by NUMA distance, which is not read here. So it is
		// not applicable to a job without an ACTIVE RoCE port it lists (iWARP ones
		// have no P_Keys), runs on the RoCE ports of one without such an InfiniBand
		// port, and is not checked with both. A gate's export (--want) has nothing to
		// put in a partition on RoCE: not applicable. A refused list stops MPI_Init
		// whatever openib would do (resolveOne judges an Inactive library not
		// applicable before it looks at Reject).
		ibOff := ""
		if allow, why, from := ompiAllowIB(in); !allow && s.Inactive == "" && s.Reject == "" {
			ibOff = why + ": Open MPI 4.x's openib BTL uses no InfiniBand port (init_one_port; set OMPI_MCA_btl_openib_allow_ib=1 to use it, or pml ucx, where UCX_IB_PKEY applies)"
			// stops: a listed ACTIVE InfiniBand port that reaches init_one_port; roce:
			// a listed ACTIVE port that may be RoCE; roceBTL: one of those where the
			// lookup finds the key (or key 0, or a table not read), so that openib
			// may make a BTL there. A port whose link layer was not read may be
			// either (its pick is then not checked).
			var stops []string
			roce, roceBTL := false, false
			for _, p := range in.ports {
				if ok, _ := listed(p.Device, p.Num); !ok || !p.Active() {
					continue
				}
				finds := key == 0 || pickFirst(p, check.PartitionKey(key), "", Pick{Outcome: Skips}).Outcome != Skips
				if (p.LinkLayer == "InfiniBand" || linkLayerUnread(p)) && finds {
					stops = append(stops, p.Label())
				}
				if (p.Ethernet() || linkLayerUnread(p)) && !noPKeys(p) {
					roce, roceBTL = true, roceBTL || finds
				}
			}
			switch {
			case in.exported != "" || !roce:
				s.Inactive, fixed = ibOff, from.fixed(in)
			case len(stops) > 0 && !roceBTL:
				// No RoCE BTL can come first: the refusal gives up every device.
				s.Inactive, fixed = fmt.Sprintf("%s; the job's RoCE ports do not hold the key, so it makes no BTL there, and init_one_port's refusal at %s makes it give up every device (\"error in device init\")", ibOff, strings.Join(stops, ", ")), from.fixed(in)
			case len(stops) > 0:
				// Either way no port is in a partition it should not be: the RoCE
				// ports below are what it uses where it runs at all, as for any
				// library the job may not use.
				s.Notes = append(s.Notes, fmt.Sprintf("%s; it runs on the job's RoCE ports only if it made a BTL there before it reached %s, where init_one_port's refusal makes it give up every device (\"error in device init\"): which device comes first is by NUMA distance, not read here; where it runs, it uses the RoCE entries shown", ibOff, strings.Join(stops, ", ")))
			default:
				s.Notes = append(s.Notes, ibOff+"; it runs on the job's RoCE ports")
			}
		}
		if pmlChoice != "" && s.Inactive == "" && s.Reject == "" {
			// Only where openib would otherwise be used does the PML choice decide
			// (Debian's own file sets pml = ^ucx beside btl = ^uct,openib,ofi).
			s.Unchecked = append(s.Unchecked, pmlChoice)
		}
		// Debian's /etc/openmpi/openmpi-mca-params.conf sets btl = ^uct,openib,ofi.
		note := ompiFilesNote(in.MCA)
		switch lv := in.version(s.Library); lv.reading("5.0.0") {
		case 0: // no openib (ompi5): nothing is applied to it
			note = strings.Replace(note, ompiApplies, "", 1)
		case 1:
			note = strings.Replace(note, "Open MPI 4.x", lv.String(), 1)
		}
		s.Assumptions = append(s.Assumptions, note)
		if hasInc && hasExc && !btlRefused {
			// btl_openib_component_open (v4.1.x) refuses to open the component when both
			// are set (mca_base_var_check_exclusive: "Two mutually-exclusive MCA
			// variables were specified"), before any device is looked at. A BTL list
			// that names openib then stops MPI_Init ("A requested component was not
			// found, or was unable to be opened"); any other leaves openib out (a real
			// Open MPI 4.1.4).
			const both = "btl_openib_if_include and btl_openib_if_exclude are both set: the openib BTL does not open (\"Two mutually-exclusive MCA variables were specified\")"
			// Named: an include list (not empty, not '^') that opens openib.
			switch named := btlPicks && btl.Value != "" && btl.Value[0] != '^'; {
			case named: // in the BTL framework's open, before the PML's
				s.Inactive, s.Reject = "", fmt.Sprintf("Open MPI refuses its openib settings: %s, and %s names it (\"A requested component was not found, or was unable to be opened\": MPI_Init fails)", both, btl)
			case s.Inactive == "" && s.Reject == "":
				s.Inactive = both
			}
		}
		s.allows = func(host []*Port, dev string, num int) (bool, string) {
			if ok, why := listed(dev, num); !ok || ibOff == "" {
				return ok, why
			}
			if slices.ContainsFunc(host, func(q *Port) bool { return q.Device == dev && q.Num == num && q.LinkLayer == "InfiniBand" }) {
				return false, "InfiniBand: " + ibOff
			}
			return true, "ACTIVE"
		}
		// init_one_port refuses only InfiniBand ports without allow_ib: an ACTIVE
		// RoCE port is used, after the same P_Key lookup (init_one_device).
		s.roce = true
		s.value = int(key)
		switch m := in.MCA; {
		case m != nil && m.Crash != "":
			// Before any framework opens, before any file is read.
			s.Inactive, s.Reject = "", "Open MPI does not start: "+m.Crash
		case m != nil && len(m.Unread) > 0:
			// What could not be read may set any of these (a synonym in a file beats
			// its primary from the environment; the override file beats both).
			what := "Open MPI's MCA parameter files may set btl_openib_pkey, btl_openib_allow_ib, btl or pml in what could not be read (" + strings.Join(m.Unread, "; ") + ")"
			// Whatever leaves openib unused, a btl or pml list such a file sets may be
			// refused when MPI_Init opens its framework, and the job then does not
			// start: "not used" stands only when neither list can come from it.
			listsFixed := pml.fixed(in) && btl.fixed(in)
			switch {
			case s.Reject != "" && fixed && !m.OverrideUnread, s.Inactive != "" && fixed && listsFixed && !m.OverrideUnread:
				s.Notes = append(s.Notes, what+", which cannot change that")
			default:
				s.Inactive, s.Reject, ibOff = "", "", ""
				s.Unchecked = append(s.Unchecked, what)
				s.unknown = "Open MPI's settings are not known (an MCA parameter file could not be read)"
			}
		}
		ompi5(in, s, pmlChoice)
	},
	lookup: func(v int, p *Port) Pick {
		return pickFirst(p, check.PartitionKey(v), "Open MPI's", Pick{Outcome: Skips, Index: -1, Problem: fmt.Sprintf("partition %s is not in the %s table: Open MPI's openib BTL silently does not use this port", check.PartitionKey(v), p.Label())})
	},
}

// ompi5 is Open MPI 5.0.0 and later, the job's version given (--lib-version): the
// openib BTL was removed (8de786f5), so a BTL list naming it stops MPI_Init ("A
// requested component was not found", as for any name that is no component:
// ompiNoSuchComponent), and otherwise it is not used (pml ucx, where UCX_IB_PKEY
// applies). What a refusal or an unread file already decides stays.
func ompi5(in Inputs, s *setup, pmlChoice string) {
	lv := in.version(s.Library)
	if gone, _ := lv.since("5.0.0"); !gone || s.Reject != "" || s.unknown != "" {
		return
	}
	s.Unchecked = slices.DeleteFunc(s.Unchecked, func(u string) bool { return u == pmlChoice })
	btl, _ := ompiGet(in, "OMPI_MCA_opal_btl", "OMPI_MCA_btl")
	if picks, _ := ompiSelects(btl.Value, "openib"); picks && btl.Value != "" && btl.Value[0] != '^' {
		s.Inactive, s.Reject = "", fmt.Sprintf("Open MPI refuses %s: %s has no openib BTL (removed in 5.0.0), and no BTL is named \"openib\" (\"A requested component was not found\": MPI_Init fails)", btl, lv)
		return
	}
	s.Inactive = lv.String() + " has no openib BTL (removed in 5.0.0): its InfiniBand traffic goes through pml ucx, where UCX_IB_PKEY applies (see UCX)"
}

// ompiSelects says whether a framework's component list (OMPI_MCA_btl, _pml) lets
// Open MPI open the component name, as mca_base_component_parse_requested
// (opal/mca/base/mca_base_component_find.c, v4.1.x) reads it: empty is every
// component; leading '^'s exclude the names, else only the names are included;
// names are split on ',' with empty ones dropped (opal_argv_split), not trimmed.
// sure is false when other components may be chosen too (an exclude list, or more
// than one name), where the framework's own selection decides.
func ompiSelects(list, name string) (picks, sure bool) {
	if list == "" {
		return true, false
	}
	exclude := list[0] == '^'
	names := strings.Split(strings.TrimLeft(list, "^"), ",")
	in := slices.Contains(names, name)
	if exclude {
		return !in, in
	}
	names = slices.DeleteFunc(names, func(n string) bool { return n == "" })
	return in, !in || len(names) == 1
}

// ompiNoSuchComponent is the first name of an include list (not starting with '^')
// that no component can have, "" when there is none. Names are not trimmed
// (ompiSelects), so a space after a comma, or the CR a file saved with CRLF line ends
// leaves at the end of its value, is part of the name; a component's name is the C
// identifier in its symbol (mca_btl_openib_component), and a name that is not one is
// never found. Open MPI then stops at MPI_Init ("A requested component was not
// found", mca_base_component_find.c component_find_check; a real Open MPI 4.1.4 with
// btl "self, vader", "self,vader\r" or pml " ob1"). An excluded name that is not one
// excludes nothing (btl "^vader\r" opens vader), as ompiSelects reads it.
func ompiNoSuchComponent(list string) string {
	if list == "" || list[0] == '^' {
		return ""
	}
	for n := range strings.SplitSeq(list, ",") {
		if strings.ContainsFunc(n, func(r rune) bool {
			return !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
		}) {
			return n
		}
	}
	return ""
}

// ompiAllowIB reads btl_openib_allow_ib (ompiGet) as Open MPI 4.x sets a bool MCA
// variable (ompiBool); a refused value leaves the default, false. why says how it
// reads when false, from where it was set (unset: Name "").
func ompiAllowIB(in Inputs) (allow bool, why string, from ompiSet) {
	var refused []ompiSet
	from, ok := ompiResolveOne(in, "OMPI_MCA_opal_btl_openib_allow_ib", "OMPI_MCA_btl_openib_allow_ib", func(o ompiSet) bool {
		if _, valid := ompiBool(o.Value); !valid {
			refused = append(refused, o)
			return false
		}
		return true
	})
	switch {
	case ok:
		allow, _ = ompiBool(from.Value)
		return allow, fmt.Sprintf("%s reads false", from), from
	case len(refused) > 0:
		r := refused[len(refused)-1]
		return false, fmt.Sprintf("%s is refused (not a bool), so it stays false", r), r
	}
	return false, "btl_openib_allow_ib unset (false)", ompiSet{}
}

// ompiBool is how Open MPI 4.x sets a bool MCA variable (mca_base_var_enum_bool_vfs,
// mca_base_var_enum.c): white space skipped, then strtol base 10 with nothing after
// it (non-zero is true; empty is 0), or exactly true/t/enabled/yes/y or
// false/f/disabled/no/n; anything else is refused (valid false).
func ompiBool(v string) (value, valid bool) {
	t := strings.TrimLeft(v, cSpace)
	if c := parseC(t, 10); c.Digits && c.Rest == "" { // strtol saturates: still non-zero
		return c.Value != 0, true
	}
	switch t {
	case "true", "t", "enabled", "yes", "y":
		return true, true
	case "", "false", "f", "disabled", "no", "n":
		return false, true
	}
	return false, false
}

// ompiSet is an MCA variable's value and where it was set: the environment (File
// ""; Name the environment variable) or a parameter file (Name as written there).
type ompiSet struct {
	Name, Value string
	File        string
	Line        int
	Override    bool // from the override file
}

func (o ompiSet) String() string {
	if o.File == "" {
		return o.Name + "=" + o.Value
	}
	return fmt.Sprintf("%s=%s (%s line %d)", o.Name, o.Value, o.File, o.Line)
}

// fixed says whether no MCA parameter file that could not be read can change the
// value: it came from the environment or the override file (a variable without
// synonyms: its value from the environment beats every file but the override one).
func (o ompiSet) fixed(in Inputs) bool {
	return o.Name != "" && (o.File == "" || o.Override)
}

// ompiGet is the value Open MPI 4.1 gives a string MCA variable without synonyms,
// by its environment names (long, short): ompiResolveOne accepting every value.
func ompiGet(in Inputs, long, short string) (ompiSet, bool) {
	return ompiResolveOne(in, long, short, func(ompiSet) bool { return true })
}

// ompiResolveOne is ompiResolve for a variable without synonyms: the value it was
// given, if any.
func ompiResolveOne(in Inputs, long, short string, valid func(ompiSet) bool) (got ompiSet, ok bool) {
	ompiResolve(in, [][2]string{{long, short}}, func(o ompiSet) bool {
		if !valid(o) {
			return false
		}
		got, ok = o, true
		return true
	})
	return got, ok
}

// ompiResolve gives an MCA variable and its synonyms (vars: each one's environment
// names, long and short; the variable first) their values as Open MPI 4.1 does
// (mca_base_var.c var_set_initial, run for the variable when registered and then
// for each synonym): from the override file, where a value the variable takes
// makes the environment and the files ignored for it and its synonyms
// ("overridden-param-set"); else from the environment (long name first, then the
// short one); else from the parameter files (the first of either name in their
// list). Each value found is given to set, which says whether Open MPI accepts it
// (var_set_from_string): a later one found replaces an earlier one, so a synonym
// set anywhere beats the variable from the environment. A refused value leaves the
// one before; refused in the environment or a file, it stops that variable's
// lookup, and for the variable itself its registration, so the synonyms are not
// read.
func ompiResolve(in Inputs, vars [][2]string, set func(ompiSet) bool) {
	override := false
	for i, names := range vars {
		long, short := strings.TrimPrefix(names[0], "OMPI_MCA_"), strings.TrimPrefix(names[1], "OMPI_MCA_")
		if in.MCA != nil && !override {
			if v, ok := mcaFind(in.MCA.Override, long, short); ok {
				v.Override = true
				override = set(v) && i == 0
			}
		}
		if n, v, ok := ompiVar(in.Env, names[0], names[1]); ok {
			if !override && !set(ompiSet{Name: n, Value: v}) && i == 0 {
				return
			}
			continue
		}
		if in.MCA != nil && !override {
			v, ok := mcaFind(in.MCA.Values, long, short)
			if !ok {
				v, ok = mcaFind(in.MCA.Later, long, short)
			}
			if ok && !set(v) && i == 0 {
				return
			}
		}
	}
}

// mcaFind is var_set_from_file's lookup: the first value in list named either name.
func mcaFind(list []MCAValue, long, short string) (ompiSet, bool) {
	for _, v := range list {
		if v.Name == long || v.Name == short {
			return ompiSet{Name: v.Name, Value: v.Value, File: v.File, Line: v.Line}, true
		}
	}
	return ompiSet{}, false
}

// ompiApplies is what Open MPI's answers assume of its version, unless it is given.
const ompiApplies = "applies to the openib BTL of Open MPI 4.x (pml ob1); "

// ompiFilesNote is Open MPI's assumption note: what was read (m nil: the MCA
// parameter files were not read, the settings not coming from the environment).
func ompiFilesNote(m *MCAFiles) string {
	const head = "Open MPI: " + ompiApplies
	if m == nil {
		return head + "only the settings given are read: MCA parameter files (~/.openmpi/mca-params.conf, openmpi-mca-params.conf, which in Debian's package excludes openib, and openmpi-mca-params-override.conf, which beats the environment) are read only with settings from the environment; mpirun --mca is not read"
	}
	var parts []string
	if len(m.Read) > 0 {
		parts = append(parts, "MCA parameter files read on this host: "+strings.Join(m.Read, ", "))
	}
	if len(m.Missing) > 0 {
		parts = append(parts, "not present (Open MPI skips them too): "+strings.Join(m.Missing, ", "))
	}
	if len(m.NotLocated) > 0 {
		parts = append(parts, "not located, so not read: "+strings.Join(m.NotLocated, ", "))
	}
	// read_files opens a relative name as it is (mca_base_var.c: only aggregate
	// parameter sets are looked up along mca_base_param_file_path), so in each MPI
	// process's working directory; here, in ibkey's.
	if rel := m.relative("Open MPI"); rel != "" {
		parts = append(parts, rel)
	}
	if len(parts) == 0 {
		parts = append(parts, "no MCA parameter file (mca_base_param_files=none)")
	}
	return head + "the environment and " + strings.Join(parts, "; ") + "; mpirun --mca is not read"
}

// ompiVar is an MCA variable from the environment under its long name
// (project_framework_component_name) if set, else its short one, as Open MPI 4.x
// looks it up (mca_base_var.c var_set_from_env): the name found and its value.
func ompiVar(env Env, long, short string) (name, value string, ok bool) {
	if v, ok := env[long]; ok {
		return long, v, true
	}
	v, ok := env[short]
	return short, v, ok
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
