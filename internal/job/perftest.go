package job

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/ibkey/ibkey/internal/check"
)

// perftest (linux-rdma/perftest, src/perftest_parameters.c):
//
//   - --pkey_index=N is a P_Key table *index*, default 0 (init_perftest_params);
//     parsed by CHECK_VALUE (perftest_parameters.h): (int)strtol(optarg, &end, 0),
//     refused when anything follows the number (" Pkey index argument 2x should be
//     int"); an empty value has nothing after it and reads 0.
//   - -i/--ib-port is CHECK_VALUE with type uint8_t ((uint8_t)strtol: 257 is port 1),
//     refused below MIN_IB_PORT 1 ("IB Port can't be less than 1").
//   - ctx_chk_pkey_index: an index above the device's max_pkeys-1 is changed to 0
//     with a warning ("Changing to 0"); it is applied only when the index is > 0, so
//     a negative index reaches ibv_modify_qp unchanged, as a 16-bit value
//     (perftestPick).
//   - With -R/--rdma_cm the QPs are connected by rdma_cm (perftest_resources.c
//     ctx_init: modify_qp_to_init only when work_rdma_cm is OFF), which takes the
//     P_Key from the resolved route, 0xffff on RoCE (perftestRDMACM): --pkey_index
//     is not used there, although ctx_chk_pkey_index still prints "Changing to 0".
//   - -d/--ib-dev chooses the device (default: the first of ibv_get_device_list,
//     ctx_find_dev in perftest_resources.c), -i/--ib-port the port (default 1,
//     DEF_IB_PORT).
var Perftest = Library{
	ID: "perftest", Name: "perftest", Kind: ByIndex,
	Vars:      []string{"--pkey_index", "-d/--ib-dev", "-i/--ib-port"},
	Source:    "linux-rdma/perftest src/perftest_parameters.c (--pkey_index, CHECK_VALUE, ctx_chk_pkey_index), src/perftest_resources.c ctx_find_dev",
	configure: configurePerftest,
	lookup:    perftestPick,
}

// perftestShort is perftest's getopt optstring (parser in perftest_parameters.c):
// a letter followed by ':' takes a value.
const perftestShort = "w:y:p:d:i:m:s:n:t:u:S:x:c:q:I:o:M:r:Q:A:l:D:f:B:T:L:E:J:j:K:k:X:W:aFegzRvhbNVCHUOZP"

// perftestLongOptions are perftest's long options (long_options[] in
// src/perftest_parameters.c, every one a build may have): a leading '+' marks one
// master (2026-07) has and 4.5-0.17 (Debian 12's 4.5+0.17) lacks, '-' the reverse;
// a trailing '=' one that takes a value.
const perftestLongOptions = `
	CPU-freq MGID= aes_block_size= aes_xts all atomic_type= bidirectional
	+bind_source_ip= burst_size= client comm_rdma_cm +congest_type= connection=
	+connectionless +cpu_id= cpu_util cq-mod= +cqe_poll= credentials_path=
	+cuda_mem_type= data_enc_key_app_path= data_enc_keys_number=
	+data_validation +data_validation_debug dest_ip= dest_mac= dest_port=
	+disable_dynamic_polling +disable_numa disable_pcie_relaxed dlid=
	dont_xchg_versions dualport duration= encrypt_on_tx ethertype= events
	flow_label= flows= flows_burst= force-link= gid-index= +gpu_touch= help
	hop_limit= ib-dev= ib-port= -inline_recv= inline_size= ipv6 +ipv6-addr
	iters= kek_path= latency_gap= limit_bw= limit_msgrate= local_ip= local_mac=
	local_port= log_active_dci_streams= log_dci_streams= mac_fwd margin= mcg
	mmap= mmap-offset= mr_per_qp mtu= noPeak +no_enhanced_reorder +no_lock
	+numa_node= odp +opencl_platform_id= out_json out_json_file= output= outs=
	+payload_file_path= perform_warm_up +ph= +pin_cores= pkey_index= port=
	post_list= promiscuous qp= qp-timeout= rate_limit= rate_limit_type=
	rate_units= raw_ipv6 raw_mcast rdma_cm recv_post_list= remote_ip=
	remote_mac= remote_port= reply_every= report-both report-counters=
	report-cycles report-histogrm report-per-port report-unsorted report_gbits
	retry_count= reversed run_infinitely rx-depth= +send_with_imm server
	sig_before +sig_offload size= sl= sniffer source_ip= source_mac=
	source_port= tclass= tcp tos= +tph_mem= tx-depth= typical_pkt_size=
	+unsolicited_write +use-null-mr use-srq use_cuda= use_cuda_bus_id=
	+use_cuda_dmabuf +use_cuda_pcie_mapping +use_data_direct +use_hl=
	use_hugepages +use_ib_dm_dmabuf= +use_mlu= +use_mlu_dmabuf +use_musa=
	+use_musa_bus_id= +use_musa_dmabuf +use_musa_pcie_mapping +use_neuron=
	+use_neuron_dmabuf use_old_post_send use_ooo +use_opencl= use_rocm=
	+use_rocm_dmabuf use_rss vector= version vlan_en vlan_pcp= wait_destroy=
	+write_with_imm
`

// perftestLong resolves --name as glibc's getopt_long (process_long_option) does
// against perftest 4.5-0.17's options and master's: the option of that exact name,
// else the one option it abbreviates. When both versions refuse it (no such option,
// or several it may abbreviate) the command line is refused; when they read it
// differently, the line is not checked (a.Unsure), and ibkey goes on with the reading
// of the version that has the option.
func perftestLong(a *PerftestArgs, name string) (opt string, takes, ok bool) {
	type reading struct {
		opt   string
		takes bool
		why   string
	}
	read := func(old bool) reading {
		var cands []reading
		for _, f := range strings.Fields(perftestLongOptions) {
			if f[0] == '+' && old || f[0] == '-' && !old {
				continue
			}
			f = strings.TrimLeft(f, "+-")
			o := reading{opt: strings.TrimSuffix(f, "="), takes: strings.HasSuffix(f, "=")}
			if o.opt == name {
				return o
			}
			if strings.HasPrefix(o.opt, name) {
				cands = append(cands, o)
			}
		}
		switch len(cands) {
		case 0:
			return reading{why: fmt.Sprintf("unrecognized option '--%s'", name)}
		case 1:
			return cands[0]
		}
		var names []string
		for _, c := range cands {
			names = append(names, "'--"+c.opt+"'")
		}
		return reading{why: fmt.Sprintf("option '--%s' is ambiguous; possibilities: %s", name, strings.Join(names, " "))}
	}
	o, n := read(true), read(false)
	switch {
	case o.why != "" && n.why != "":
		if a.BadValue == "" {
			a.BadValue = n.why
		}
		return "", false, false
	case o != n:
		say := func(r reading) string {
			if r.why != "" {
				return "refuses it (" + r.why + ")"
			}
			return "reads --" + r.opt
		}
		a.Unsure = append(a.Unsure, fmt.Sprintf("--%s: perftest 4.5-0.17 %s, perftest master %s; ibkey does not know the job's perftest version", name, say(o), say(n)))
	}
	if n.why != "" {
		n = o
	}
	return n.opt, n.takes, true
}

// PerftestArgs are a perftest command line's device, port and P_Key index options.
type PerftestArgs struct {
	Device   string // "" = the first device
	Port     int
	PKeyIdx  int
	Given    bool   // --pkey_index was given
	BadValue string // an option value perftest rejects ("" when all parse)
	// badPKey: BadValue is --pkey_index's, which the setting a fix or a gate
	// proposes replaces (settledReject).
	badPKey bool
	// Unsure are options perftest versions read differently (perftestLong).
	Unsure []string
	RDMACM bool // -R/--rdma_cm: rdma_cm connects the QPs, --pkey_index is not used
	// Port2 is -O/--dualport's second port (DEF_IB_PORT2, 2), 0 without -O: half
	// the QPs use it, with the same --pkey_index (ctx_modify_qp_to_init).
	Port2 int
}

// ParsePerftestArgs reads the options ibkey needs from a perftest command line
// ("ib_send_bw -d mlx5_0 -i 1 --pkey_index=2 host").
func ParsePerftestArgs(line string) PerftestArgs {
	a := PerftestArgs{Port: 1}
	f := strings.Fields(line)
	val := func(i *int, name, inline string, hasInline bool) string {
		if hasInline {
			return inline
		}
		if *i+1 < len(f) {
			*i++
			return f[*i]
		}
		if a.BadValue == "" {
			a.BadValue, a.badPKey = name+" needs a value", name == "--pkey_index"
		}
		return ""
	}
	// check is CHECK_VALUE: perftest stops at the first value it refuses.
	check := func(name, typ, s string) cNumber {
		n := parseC(s, 0)
		if n.Rest != "" && a.BadValue == "" {
			a.BadValue, a.badPKey = fmt.Sprintf("%s argument %s should be %s", name, s, typ), name == "Pkey index"
		}
		return n
	}
	// refuse is getopt's complaint, after which perftest prints "Invalid Command or
	// flag" and its usage and exits.
	refuse := func(why string) {
		if a.BadValue == "" {
			a.BadValue = why
		}
	}
	port := func(s string) {
		a.Port = int(uint8(check("IB Port", "uint8_t", s).Value))
		if a.Port < 1 && a.BadValue == "" {
			a.BadValue = fmt.Sprintf("-i %s: IB Port can't be less than 1", s)
		}
	}
	for i := 0; i < len(f); i++ {
		arg := f[i]
		switch {
		case arg == "--":
			return a // getopt: the end of the options
		case strings.HasPrefix(arg, "--"):
			// getopt_long: "--name=value" or "--name value", the name or a prefix of it
			// that no other perftest option shares ("--pk", "--ib-d", "--ib-p").
			name, inline, eq := strings.Cut(arg[2:], "=")
			opt, takes, ok := perftestLong(&a, name)
			switch {
			case !ok:
				continue
			case !takes && eq:
				refuse(fmt.Sprintf("option '--%s' doesn't allow an argument", opt))
				continue
			}
			v := ""
			if takes {
				v = val(&i, "--"+opt, inline, eq)
			}
			switch opt {
			case "pkey_index":
				a.PKeyIdx, a.Given = check("Pkey index", "int", v).Int(), true
			case "ib-dev":
				a.Device = v
			case "ib-port":
				port(v)
			case "rdma_cm":
				a.RDMACM = true
			case "dualport":
				a.Port, a.Port2 = 1, 2
			}
		case strings.HasPrefix(arg, "-") && len(arg) > 1:
			// A cluster of short options ("-ai1"): each letter until one that takes a
			// value, which is the rest of the word or the next word.
			for j := 1; j < len(arg); j++ {
				k := strings.IndexByte(perftestShort, arg[j])
				if k < 0 || arg[j] == ':' {
					refuse(fmt.Sprintf("invalid option -- '%c'", arg[j]))
					break
				}
				if k+1 == len(perftestShort) || perftestShort[k+1] != ':' {
					a.RDMACM = a.RDMACM || arg[j] == 'R'
					if arg[j] == 'O' {
						// -O sets ib_port to DEF_IB_PORT and ib_port2 to DEF_IB_PORT2; a
						// later -i changes ib_port only.
						a.Port, a.Port2 = 1, 2
					}
					continue
				}
				v := arg[j+1:]
				if v == "" {
					v = val(&i, "-"+arg[j:j+1], "", false)
				}
				switch arg[j] {
				case 'd':
					a.Device = v
				case 'i':
					port(v)
				}
				break
			}
		}
	}
	return a
}

// configurePerftest configures perftest from its command line (defaults without one).
func configurePerftest(in Inputs, s *setup) {
	a := PerftestArgs{Port: 1}
	if in.Perftest != nil {
		a = *in.Perftest
	}
	if a.BadValue != "" {
		s.Reject = "perftest rejects its command line: " + a.BadValue
	}
	for _, u := range a.Unsure {
		if lv := in.version(s.Library); lv.given {
			// Only two option tables are known, neither by a release ibkey can
			// order: a version given does not decide.
			u = strings.TrimSuffix(u, "ibkey does not know the job's perftest version") + "ibkey knows these two option tables, not which releases between them have which options (" + lv.String() + " does not decide it)"
		}
		s.Unchecked = append(s.Unchecked, u)
	}
	s.Setting = "--pkey_index not given: index 0"
	if a.Given {
		// ibv_qp_attr.pkey_index is a uint16_t: a negative index is its 16 bits (-1 is
		// 65535), as perftestPick looks it up.
		s.Setting = fmt.Sprintf("--pkey_index=%d: index %d", a.PKeyIdx, max(a.PKeyIdx, int(uint16(a.PKeyIdx))))
	}
	if a.Device == "" {
		s.Assumptions = append(s.Assumptions, "perftest: without -d, the first device in name order (ibv_get_device_list order is not guaranteed)")
	}
	if a.Port2 != 0 {
		s.Setting += fmt.Sprintf("; -O/--dualport: ports %d and %d", a.Port, a.Port2)
	}
	s.scope = namedPort
	s.allows = func(host []*Port, dev string, num int) (bool, string) {
		switch want := a.device(host, dev); {
		case dev != want:
			return false, "not the -d device " + want
		case num == a.Port:
		case num == a.Port2:
			return true, "the -O/--dualport second port"
		case a.Port2 != 0:
			return false, fmt.Sprintf("not the -i port %d nor the -O port %d", a.Port, a.Port2)
		default:
			return false, fmt.Sprintf("not the -i port %d", a.Port)
		}
		return true, "the -d/-i port"
	}
	s.notActive = func(p *Port) (bool, string) {
		return true, "the -d/-i port, but not ACTIVE (" + p.State + "): perftest will not connect"
	}
	s.aborts = func(host []*Port, _ []PortResult) []Abort {
		if ab := perftestAborts(host, a.device(host), a.Port); ab != nil || a.Port2 == 0 {
			return ab
		}
		// set_link_layer checks ib_port2 the same way after ib_port.
		return perftestAborts(host, a.device(host), a.Port2)
	}
	if a.RDMACM {
		s.Setting += "; -R/--rdma_cm: rdma_cm connects the QPs and --pkey_index is not used"
		s.unknown = "perftest -R: the QPs take the P_Key of the route rdma_cm resolves to the peer (the partition of the IPoIB interface holding the address), which is not read here"
		s.route = perftestRDMACM
	}
	s.value = a.PKeyIdx
}

// device is the device perftest opens on a host with ports host (and devices
// others): -d, else the first in name order.
func (a PerftestArgs) device(host []*Port, others ...string) string {
	if a.Device != "" {
		return a.Device
	}
	for _, p := range host {
		others = append(others, p.Device)
	}
	if len(others) == 0 {
		return ""
	}
	return slices.Min(others)
}

// perftestPick is the entry perftest's QPs take on p with --pkey_index idx. Two
// steps decide it: ctx_chk_pkey_index changes an index above the device's max_pkeys-1
// (ibv_query_device) to 0, and only an index > 0; then ctx_modify_qp_to_init puts the
// int in ibv_qp_attr.pkey_index, a uint16_t (-1 is 65535, -2147483648 is 0), and what
// an index beyond the table does there is usesIndex's rule (InfiniBand drivers refuse
// it; on RoCE, the driver's).
//
// max_pkeys is read through verbs for this machine's devices (Port.MaxPKeys). Where
// it was not read, on an InfiniBand port it is the table's size (mlx5
// mlx5_query_max_pkeys: NodeInfo PartitionCap, the P_Key table's size, or
// pkey_table_size; mlx5 get_port_caps sets the port's pkey_tbl_len from it). On RoCE
// it is not: rdma_rxe's is 64 for a 1-entry table (rxe_param.h RXE_MAX_PKEYS; the
// kernel lab, Linux 6.1), so there it is not known, except that
// ibv_device_attr.max_pkeys is a uint16_t: only an index of 65535 or more is known to
// become 0.
func perftestPick(idx int, p *Port) Pick {
	if p.Table == nil {
		return Pick{Outcome: NotChecked, Index: idx, Problem: p.NoTable}
	}
	n := len(p.Table)
	maxPKeys, known := 0xffff, true
	switch {
	case p.MaxPKeysRead:
		maxPKeys = p.MaxPKeys
	case p.Fabric || p.LinkLayer == "InfiniBand":
		maxPKeys = n
	default:
		known = false
	}
	if idx > 0 && idx >= maxPKeys {
		why := fmt.Sprintf("beyond the table (max %d)", n-1)
		switch {
		case !known:
			why = "above 65534 (max_pkeys is a uint16_t)"
		case p.MaxPKeysRead:
			why = fmt.Sprintf("above %s's max_pkeys-1 (%d)", cmp.Or(p.Driver, p.Device), maxPKeys-1)
		}
		pk := usesIndex(p, 0, "perftest's")
		pk.Notes = append(pk.Notes, fmt.Sprintf("--pkey_index=%d is %s: perftest changes it to 0 (\"Changing to 0\")", idx, why))
		return pk
	}
	qp := int(uint16(idx)) // ibv_qp_attr.pkey_index
	if idx > 0 && qp >= n && !known {
		// 0 or idx: which one, max_pkeys says.
		return Pick{Outcome: NotChecked, Index: -1, Problem: fmt.Sprintf("--pkey_index=%d is beyond the %d-entry table: perftest changes it to 0 only above the device's max_pkeys-1 (%s)", idx, n, cmp.Or(p.MaxPKeysMissing, "max_pkeys not read"))}
	}
	pk := usesIndex(p, qp, "--pkey_index")
	if idx < 0 {
		pk.Notes = append(pk.Notes, fmt.Sprintf("--pkey_index=%d is negative: perftest skips its max_pkeys check and ibv_modify_qp gets index %d (a uint16_t)", idx, qp))
	}
	return pk
}

// perftestRDMACM is the entry perftest -R's QPs take on a RoCE port p of this host,
// and false where that is not decided here (InfiniBand: the P_Key of the IPoIB
// interface the route resolves to). rdma_cm, not perftest, gives a QP its index
// (perftest_resources.c: rdma_create_qp, no ibv_modify_qp with --pkey_index): on a
// RoCE port it asks for P_Key 0xffff (drivers/infiniband/core/cma.c
// cma_ib_init_qp_attr: rdma_cap_eth_ah), and ib_find_cached_pkey (core/cache.c)
// takes the first full entry of that key, else the last limited one; with neither
// it fails (EINVAL), and so does perftest's connection.
func perftestRDMACM(p *Port) (Pick, bool) {
	if !p.Ethernet() || p.Fabric || p.Table == nil {
		return Pick{}, false
	}
	limited := -1
	for _, e := range p.Table {
		switch {
		case !e.Readable:
			// It may be 0xffff, before any full one (or a later limited one).
			return Pick{Outcome: NotChecked, Index: -1, Problem: fmt.Sprintf("perftest -R: rdma_cm takes the entry of 0xffff on RoCE, and entry %d of %s could not be read", e.Index, p.Label())}, true
		case e.PKey == check.DefaultFull:
			return rdmaCMUses(e.Index, e.PKey), true
		case e.PKey == check.DefaultLimited:
			limited = e.Index
		}
	}
	if limited >= 0 {
		return rdmaCMUses(limited, p.Table[limited].PKey), true
	}
	return Pick{Outcome: Fails, Index: -1, Problem: fmt.Sprintf("perftest -R: rdma_cm asks for P_Key 0xffff on RoCE (cma_ib_init_qp_attr) and %s has no entry of it: its QPs cannot be set up (ib_find_cached_pkey: EINVAL)", p.Label())}, true
}

// rdmaCMUses is perftest -R's QPs on the entry rdma_cm finds for 0xffff on RoCE.
func rdmaCMUses(i int, k check.PKey) Pick {
	return Pick{Outcome: Uses, Index: i, PKey: k, Notes: []string{fmt.Sprintf("perftest -R: rdma_cm uses P_Key 0xffff on RoCE (cma_ib_init_qp_attr), the entry at index %d; --pkey_index is not used", i)}}
}

// perftestAborts is where perftest exits before it makes a QP on host: the -d device
// is not in ibv_get_device_list ("IB device %s not found", ctx_find_dev in
// perftest_resources.c), or the -i port of the device cannot be queried or is not
// ACTIVE (set_link_layer in perftest_parameters.c: " Unable to query port %d
// attributes", " Port number %d state is %s").
func perftestAborts(host []*Port, dev string, num int) []Abort {
	if len(host) == 0 {
		return nil
	}
	i := slices.IndexFunc(host, func(p *Port) bool { return p.Device == dev })
	if i < 0 {
		return []Abort{{Device: dev, Reason: fmt.Sprintf("perftest exits: \"IB device %s not found\" (ctx_find_dev)", dev)}}
	}
	i = slices.IndexFunc(host, func(p *Port) bool { return p.Device == dev && p.Num == num })
	switch {
	case i < 0:
		return []Abort{{Device: dev, Reason: fmt.Sprintf("perftest exits: \" Unable to query port %d attributes\" (set_link_layer): %s has no port %d", num, dev, num)}}
	case !host[i].Active():
		return []Abort{{Device: dev, Reason: fmt.Sprintf("perftest exits: \" Port number %d state is %s\" (set_link_layer)", num, perftestState(host[i].State)), Waits: true}}
	}
	return nil
}

// perftestState is a port state as perftest's portStates names it.
func perftestState(s string) string {
	if w, ok := map[string]string{"NOP": "Nop", "DOWN": "Down", "INIT": "Init", "ARMED": "Armed", "ACTIVE_DEFER": "Active Defer"}[s]; ok {
		return w
	}
	return stateWord(s)
}
