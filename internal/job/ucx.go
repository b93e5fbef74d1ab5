package job

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ibkey/ibkey/internal/check"
)

// UCX, as of openucx/ucx master (2026), checked against Debian 12's UCX 1.13.1 on
// rdma_rxe in the kernel lab (internal/kernellab/ucx_kernel_test.go):
//
//   - UCX_IB_PKEY is a P_Key *value* (15 bits), default "auto": "PKEY" in
//     uct_ib_iface_config_table (src/uct/ib/base/ib_iface.c), type UCS_CONFIG_TYPE_HEX,
//     parsed by ucs_config_sscanf_hex (src/ucs/config/parser.c): "auto" (any case) or
//     0x followed by hex digits; anything else ("8001", " 0x7fff") is a configuration
//     error ("Invalid value for PKEY", then "Failed to read iface config"): every IB
//     interface reads it when it opens (uct_md_iface_config_read), RoCE too, so
//     ucp_worker_create fails on a host where UCX selects any RDMA port; where it
//     selects none, UCX only warns "unused env variable".
//   - uct_ib_iface_init_pkey (ib_iface.c): RoCE ports use index 0 (0xffff) without
//     reading the table or checking the value (UCX 1.12.0 and later, ucx 656d82d01a:
//     UCX_IB_PKEY=0x8001 works there; before 1.12.0 RoCE ports were looked up like
//     InfiniBand ones). On InfiniBand a value above 0x7fff is an error ("requested
//     pkey 0x8001 is invalid"); otherwise indexes are scanned in order, an entry
//     that cannot be queried is skipped, 0x0000 is skipped (only 0x0000: 0x8000 is
//     not), and the first entry matching (any entry for auto, else the same 15-bit
//     key) with full membership wins; without one, the first limited match; without
//     any, an error ("unable to find specified pkey", "there is no valid pkey to
//     use"). An error fails ucp_worker_create on that host:
//     ucp_worker_add_resource_ifaces (src/ucp/core/ucp_worker.c) opens an interface
//     on every selected port and gives up at the first that fails, since UCX 1.8.0
//     (then a plain return; from 1.12.0 err_close_ifaces). A device UCX_NET_DEVICES
//     names that the host lacks, or a port that is not ACTIVE, is only warned about
//     ("network device 'mlx5_0:1' is not available", ucp_report_unavailable,
//     ucp_context.c).
//   - An entry ibkey could not read may hold anything (UCX may read it, or skip it
//     as one it cannot query): before the entry UCX would take it leaves the pick
//     not checked, except that before a full match of a key given it can only be
//     taken if it is the same full P_Key (ucxPick: the index is then not known).
//   - Peers: uct_ib_iface_is_reachable (ib_iface.c) declares a peer unreachable unless
//     the 15-bit keys are equal and one side is full, so UCX reports an unreachable
//     peer rather than hanging.
//   - Ports: UCX_NET_DEVICES (ucp_config_table, src/ucp/core/ucp_context.c; parsed as
//     an allow list by ucs_config_sscanf_allow_list): "all" (default), or a comma list
//     of dev:port or dev (every port of dev), '^' negating the list
//     (ucp_is_resource_in_device_list); names are compared as they are (strcmp: no
//     white space or CR is trimmed, case matters), empty names are skipped; only
//     ACTIVE ports (uct_ib_device_port_check, src/uct/ib/base/ib_device.c).
//     parseUCXDevices says where UCX before 1.21 differs.
//   - Per-transport variables (ucs_config_apply_config_vars; ucx_info -c shows
//     UCX_RC_VERBS_PKEY inheriting UCX_RC_PKEY and UCX_IB_PKEY) override UCX_IB_PKEY
//     for the transports that read them; ibkey reports them as not interpreted,
//     except a value UCX cannot parse in one the verbs transports read
//     (ucxVerbsVars: they are opened on every RDMA port unless UCX_TLS leaves them
//     out), which fails like UCX_IB_PKEY's.
//   - UCX_TLS that names no InfiniBand transport opens no RDMA port (ucxTLS).
//   - Each variable the environment does not set may come from a ucx.conf file
//     (UCX 1.11 and later; ucxconf.go), parsed the same way; where another UCX
//     version's reading of the files answers otherwise, ucxVersions leaves the
//     answer not checked.
var UCX = Library{
	ID: "ucx", Name: "UCX", Kind: ByValue,
	Vars:      []string{"UCX_IB_PKEY", "UCX_NET_DEVICES"},
	Modifiers: []string{"UCX_TLS"},
	Source:    "openucx/ucx src/uct/ib/base/ib_iface.c uct_ib_iface_init_pkey and uct_ib_iface_is_reachable, src/ucp/core/ucp_worker.c ucp_worker_add_resource_ifaces, src/ucs/config/parser.c ucs_config_sscanf_hex, src/ucp/core/ucp_context.c ucp_is_resource_in_device_list",
	releases:  releases{oldest: "1.8.0", below: "2.0", span: "UCX 1.8.0, from which an interface that fails fails the worker, to 1.x"},
	configure: func(in Inputs, s *setup) {
		lv := in.version(s.Library)
		f, env, vals := ucxEnv(in, lv)
		ucxConfigure(env, lv, s)
		if f != nil {
			ucxVersions(in, f, env, vals, lv, s)
		}
		if roce, known := lv.since("1.12.0"); known {
			s.look = func(v int, p *Port) Pick {
				if !p.Ethernet() {
					return ucxLookup(v, p)
				}
				if roce {
					return Pick{Outcome: Uses, Index: 0, PKey: check.DefaultFull, Notes: []string{"RoCE port: " + lv.String() + " uses index 0, 0xffff, without reading the table"}}
				}
				pk := ucxLookup(v, p)
				pk.Notes = append(pk.Notes, "RoCE port: "+lv.String()+" looks the key up as on InfiniBand (1.12.0 and later use index 0)")
				return pk
			}
		}
		s.Assumptions = append(s.Assumptions, ucxFilesNote(in.UCX))
	},
	lookup: ucxPick,
}

// ucxEnv is what the job's UCX, version lv, reads: the files (nil: not read)
// without what a gate exports, which beats them all; the variables env, the
// environment's and the files'; vals, what the files set as that version reads
// them (1.12.0 and later, also when the version is not known: ucxVersions says
// where older ones differ; 1.11; before 1.11 no file).
func ucxEnv(in Inputs, lv libVersion) (f *UCXFiles, env Env, vals map[string]UCXValue) {
	env, f = in.Env, in.UCX
	if f != nil && in.exported != "" {
		f = f.without(in.exported)
	}
	if f != nil {
		vals = [...]map[string]UCXValue{f.Values, f.Early, nil}[max(0, lv.reading(ucxReadings...))]
		env = ucxMerge(in.Env, vals)
	}
	return f, env, vals
}

// ucxConfigure is UCX configured by the variables env, which the environment and
// UCX's configuration files set.
func ucxConfigure(env Env, lv libVersion, s *setup) {
	v, set := env["UCX_IB_PKEY"]
	key, reject, notes := ucxParsePKey(v, set)
	tls, hasTLS := env["UCX_TLS"]
	ib, unsure := ucxTLS(tls, hasTLS)
	if !ib {
		// No InfiniBand interface opens, so none reads UCX_IB_PKEY: UCX warns
		// "unused env variable" and goes on.
		reject = ""
	}
	if unsure != "" {
		s.Unchecked = append(s.Unchecked, fmt.Sprintf("UCX_TLS=%s %s; ibkey does not interpret it", tls, unsure))
	}
	s.Reject, s.Notes = reject, append(s.Notes, notes...)
	if key == ucxAuto && set && !strings.EqualFold(v, "auto") && ib {
		// lv, when known, is 1.8.0 or later (UCX.releases).
		if _, known := lv.since("1.8.0"); known {
			s.Notes = append(s.Notes, "UCX_IB_PKEY="+v+" reads 0xfffe, which "+lv.String()+" takes as auto (UCS_HEXUNITS_AUTO: partition 0x7ffe is not looked for)")
		} else {
			s.Unchecked = append(s.Unchecked, "UCX_IB_PKEY="+v+" reads 0xfffe, which UCX 1.8.0 and later take as auto (UCS_HEXUNITS_AUTO: partition 0x7ffe is not looked for) and older UCX refuses; "+ucxVersionUnknown)
		}
	}
	switch {
	case !set:
		s.Setting = "UCX_IB_PKEY unset (auto): the first full-member entry, else the first limited one"
	case key == ucxAuto:
		s.Setting = "UCX_IB_PKEY=" + v + ": the first full-member entry, else the first limited one"
	case key == 0:
		s.Setting = "UCX_IB_PKEY=" + v + ": key 0, which no valid entry holds (UCX takes a 0x8000 entry, an empty one, if the table has one)"
	case key > 0x7fff:
		s.Setting = fmt.Sprintf("UCX_IB_PKEY=%s: 0x%x is above 0x7fff: UCX rejects it on InfiniBand ports (give UCX_IB_PKEY=0x%04x), not on RoCE ports", v, key, key&0x7fff)
	default:
		s.Setting = fmt.Sprintf("UCX_IB_PKEY=%s: partition 0x%04x, a full-member entry preferred", v, key)
	}
	switch {
	case hasTLS && strings.Trim(tls, "^,") == "":
		// ucs_config_sscanf_allow_list drops empty names; ucp_check_resource_config
		// (ucp_context.c) refuses a list left empty (Debian's 1.13.1 too).
		s.Reject, ib = fmt.Sprintf("UCX_TLS=%q names no transport: UCX refuses it (\"The TLs list is empty\", ucp_check_resource_config) and creates no worker", tls), false
	case !ib:
		// UCX runs over what UCX_TLS names (TCP, shared memory): no QP of its
		// own, so no partition, and the job does not stop for it.
		s.Setting = "UCX_TLS=" + tls + ": no InfiniBand transport, so no port's P_Key is looked up"
		s.Inactive = "UCX_TLS=" + tls + ": UCX opens no InfiniBand or RoCE transport (P_Keys do not apply to what it uses)"
	}
	devs, hasDevs := env["UCX_NET_DEVICES"]
	filter := parseUCXDevices(devs, hasDevs)
	if hasDevs {
		s.Setting += ", UCX_NET_DEVICES=" + devs
	}
	allowList, known := lv.since("1.21")
	switch {
	case known && !allowList:
		if filter.legacy != "" {
			s.Notes = append(s.Notes, fmt.Sprintf("UCX_NET_DEVICES=%s: %s %s", devs, lv, filter.legacy))
		}
		filter = parseUCXDevicesBefore121(devs, hasDevs)
	case known:
		if ranges, _ := lv.since("1.22"); !ranges {
			filter.ranges = false // an allow list without ranges: '[' is part of a name
		}
		if filter.invalid && s.Reject == "" {
			// ucp_config_read fails whatever UCX_TLS opens.
			s.Inactive, s.Reject = "", fmt.Sprintf("UCX_NET_DEVICES=%s: %s refuses it (\"Invalid value for NET_DEVICES\": \"all\" must be the only name) and does not start", devs, lv)
		}
	case filter.legacy != "":
		// Debian 12's UCX 1.13.1 (ucx_info -c) takes "all,x" and "^x" as they are.
		s.Unchecked = append(s.Unchecked, fmt.Sprintf("UCX_NET_DEVICES=%s: UCX 1.21 and later %s, but UCX before 1.21 %s; %s", devs, filter.reading(), filter.legacy, ucxVersionUnknown))
	}
	for _, name := range env.Names() {
		if name == "UCX_IB_PKEY" || !UCXPKeyVar(name) || !ib {
			continue
		}
		if _, bad, _ := ucxParsePKey(env[name], true); bad != "" && !hasTLS && ucxVerbsVars[name] && s.Reject == "" {
			s.Reject = strings.Replace(bad, "UCX_IB_PKEY", name, 1) + " (\"Invalid value for PKEY\": the verbs transport reading it fails to open)"
			continue
		}
		s.Unchecked = append(s.Unchecked, fmt.Sprintf("%s=%s overrides UCX_IB_PKEY for the UCX transports that read it; ibkey does not interpret it", name, env[name]))
	}
	if filter.ranges {
		s.Unchecked = append(s.Unchecked, fmt.Sprintf("UCX_NET_DEVICES=%s uses ranges ([...]), which ibkey does not expand", devs))
	}
	s.roce = true
	s.allows = func(_ []*Port, dev string, num int) (bool, string) {
		if !ib {
			return false, "UCX_TLS=" + tls + " names no InfiniBand transport"
		}
		if filter.match(dev, num) {
			return true, "ACTIVE"
		}
		return false, "not selected by UCX_NET_DEVICES=" + devs
	}
	s.value = key
}

// ucxTLS reads UCX_TLS (ucp_config_table "TLS", an allow list like
// UCX_NET_DEVICES; its aliases are ucp_tl_aliases, src/ucp/core/ucp_context.c): ib
// is false when it names no InfiniBand transport, so that UCX opens no RDMA port
// (Debian's 1.13.1: UCX_TLS=tcp leaves rxe0 alone and "unused env variable:
// UCX_IB_PKEY"); unsure says why that is not known here. A list that names a verbs
// transport or an alias of one (rc_verbs and ud_verbs, which every RDMA device has:
// ib, rc, rc_v, ud, ud_v) opens one; one that names only mlx5 transports opens
// them only on mlx5 devices, which ibkey does not tell apart; a negated list
// ('^') that names an InfiniBand transport or alias leaves the rest to aliases and
// auxiliary transports, which ibkey does not follow.
func ucxTLS(v string, set bool) (ib bool, unsure string) {
	if !set {
		return true, ""
	}
	negate := strings.HasPrefix(v, "^")
	var names []string
	for _, n := range strings.Split(strings.TrimPrefix(v, "^"), ",") {
		if n != "" {
			names = append(names, n)
		}
	}
	verbs := map[string]bool{"ib": true, "rc": true, "rc_v": true, "ud": true, "ud_v": true, "rc_verbs": true, "ud_verbs": true}
	mlx5 := map[string]bool{"rc_x": true, "ud_x": true, "dc": true, "dc_x": true, "rc_mlx5": true, "ud_mlx5": true, "dc_mlx5": true, "gga": true, "gga_mlx5": true}
	other := map[string]bool{"tcp": true, "self": true, "sm": true, "shm": true, "mm": true, "posix": true, "sysv": true, "xpmem": true, "knem": true, "cma": true,
		"cuda": true, "cuda_copy": true, "cuda_ipc": true, "gdr_copy": true, "rocm": true, "rocm_copy": true, "rocm_ipc": true, "rocm_gdr": true, "ze": true, "ze_copy": true, "ze_ipc": true, "ze_gdr": true}
	switch {
	case len(names) == 1 && names[0] == "all" && !negate:
		return true, ""
	case slices.ContainsFunc(names, func(n string) bool { return !verbs[n] && !mlx5[n] && !other[n] }):
		return true, "names a transport ibkey does not know"
	case negate && slices.ContainsFunc(names, func(n string) bool { return verbs[n] || mlx5[n] }):
		return true, "leaves out InfiniBand transports"
	case negate || slices.ContainsFunc(names, func(n string) bool { return verbs[n] }):
		return true, ""
	case slices.ContainsFunc(names, func(n string) bool { return mlx5[n] }):
		return true, "names only UCX's mlx5 transports, which only mlx5 devices have"
	}
	return false, ""
}

// ucxVerbsVars are the PKEY variables rc_verbs and ud_verbs read besides
// UCX_IB_PKEY (their tables' prefixes RC_VERBS_ and UD_VERBS_ and sub-tables RC_
// and UD_: rc_verbs_iface.c, ud_verbs.c, UCX 1.8.0 to master). Both are opened on
// every RDMA port UCX selects (their query_tl_devices), each reading its variables
// when it opens (uct_md_iface_config_read), the first that does not parse failing.
var ucxVerbsVars = map[string]bool{"UCX_RC_VERBS_PKEY": true, "UCX_RC_PKEY": true, "UCX_UD_VERBS_PKEY": true, "UCX_UD_PKEY": true}

// ucxVersionUnknown ends every reason ibkey gives for an answer that depends on the
// job's UCX version.
const ucxVersionUnknown = "ibkey does not know the job's UCX version"

// ucxAuto is UCX_IB_PKEY=auto (UCS_HEXUNITS_AUTO) as a setting of UCX.lookup.
const ucxAuto = -1

// ucxParsePKey is ucs_config_sscanf_hex (src/ucs/config/parser.c): "auto"
// (strcasecmp), else "0x" (strncasecmp) and
// what sscanf(buf+2, "%x", (unsigned int*)dest) converts: scanHex, so white space, a
// sign and a second 0x are taken and the value is cut to 32 bits (0x100000001 is key
// 1). auto is stored as UCS_HEXUNITS_AUTO, (uint16_t)-2 (src/ucs/sys/string.h), and
// uct_ib_iface_init_pkey compares the value with it, so a value reading 0xfffe is auto
// too (UCX 1.8.0 and later; before, 0xfffe was out of range). notes say how UCX reads
// a value that is not plain 0x and hex digits. A value above 0x7fff parses: only
// uct_ib_iface_init_pkey refuses it, and only on InfiniBand (ucxPick).
func ucxParsePKey(v string, set bool) (key int, reject string, notes []string) {
	if !set || strings.EqualFold(v, "auto") {
		return ucxAuto, "", nil
	}
	if len(v) < 2 || !strings.EqualFold(v[:2], "0x") {
		return 0, fmt.Sprintf("UCX rejects UCX_IB_PKEY=%s: the value must be auto or hexadecimal with 0x (e.g. 0x%s)", v, strings.TrimLeft(v, "0xX")), nil
	}
	k, ok := scanHex(v[2:])
	key = int(k)
	if !ok {
		return 0, fmt.Sprintf("UCX rejects UCX_IB_PKEY=%s: no hex digits after 0x", v), nil
	}
	if strings.TrimLeft(v[2:], "0123456789abcdefABCDEF") != "" || len(strings.TrimLeft(v[2:], "0")) > 8 {
		notes = append(notes, fmt.Sprintf("UCX reads UCX_IB_PKEY=%s as 0x%x: glibc's sscanf(\"%%x\") after the 0x takes white space, a sign and a second 0x, ignores what follows the digits and keeps 32 bits", v, key))
	}
	if key == 0xfffe {
		return ucxAuto, "", notes
	}
	return key, "", notes
}

// ucxPick is uct_ib_iface_init_pkey on p. A RoCE port takes index 0 (0xffff)
// whatever the value (UCX 1.12.0 and later); UCX before 1.12.0 looked it up like an
// InfiniBand port's, so where that lookup gives another answer, the answer hangs on
// the job's UCX version.
func ucxPick(key int, p *Port) Pick {
	if !p.Ethernet() {
		return ucxLookup(key, p)
	}
	old := ucxLookup(key, p)
	if old.Outcome == Uses && old.Index == 0 && old.PKey == check.DefaultFull {
		return Pick{Outcome: Uses, Index: 0, PKey: check.DefaultFull, Notes: []string{"RoCE port: UCX uses index 0, 0xffff, without reading the table"}}
	}
	was := old.Problem
	switch old.Outcome {
	case Uses, EmptyEntry:
		was = fmt.Sprintf("index %d, %s", old.Index, old.PKey)
	case Fails:
		was, _, _ = strings.Cut(strings.TrimPrefix(old.Problem, "UCX: "), "; ")
		was += ", and its worker fails"
	}
	return Pick{Outcome: NotChecked, Index: -1, Problem: fmt.Sprintf("RoCE port: UCX 1.12.0 and later use index 0, 0xffff, whatever UCX_IB_PKEY says; UCX before 1.12.0 looks the key up as on InfiniBand: %s; %s", was, ucxVersionUnknown)}
}

// ucxLookup is uct_ib_iface_init_pkey on an InfiniBand port.
func ucxLookup(key int, p *Port) Pick {
	if key > 0x7fff {
		return Pick{Outcome: Fails, Index: -1, Abort: true, AbortHost: true, Problem: fmt.Sprintf("UCX: \"requested pkey 0x%x is invalid, should be in the range 0..0x7fff\" on %s; ucp_worker_create fails, so UCX uses no port of this host; give the 15-bit key without the membership bit: UCX_IB_PKEY=0x%04x (UCX prefers the full-member entry by itself)", key, p.Label(), key&0x7fff)}
	}
	if p.Table == nil {
		return Pick{Outcome: NotChecked, Index: -1, Problem: p.NoTable}
	}
	limited := -1
	unreadable := -1
	for i, e := range p.Table {
		if !e.Readable {
			if unreadable < 0 {
				unreadable = i
			}
			continue
		}
		if e.PKey == 0 {
			continue
		}
		if key != ucxAuto && int(e.PKey.Partition()) != key {
			continue
		}
		if e.PKey.IsFull() {
			if unreadable >= 0 && (key == ucxAuto || !e.PKey.Valid()) {
				return Pick{Outcome: NotChecked, Index: -1, Problem: fmt.Sprintf("entry %d of %s could not be read; UCX would take it if it holds a full match before index %d", unreadable, p.Label(), e.Index)}
			}
			if unreadable >= 0 {
				// A full match of the key not read before it is the same P_Key: the
				// entry UCX takes holds e.PKey either way; only its index is not known.
				return Pick{Outcome: Uses, Index: -1, PKey: e.PKey, Notes: []string{fmt.Sprintf("UCX takes the first full-member entry of partition 0x%04x, %s: index %d, or an entry before it that could not be read (from %d) if it holds %s too", key, e.PKey, e.Index, unreadable, e.PKey)}}
			}
			pk := usesIndex(p, e.Index, "UCX_IB_PKEY resolves to")
			if pk.Outcome == EmptyEntry {
				pk.Problem = fmt.Sprintf("UCX takes index %d, %s (it skips only 0x0000): key 0 matches no partition", e.Index, e.PKey)
			}
			return pk
		}
		if limited < 0 {
			limited = i
		}
	}
	if unreadable >= 0 {
		return Pick{Outcome: NotChecked, Index: -1, Problem: fmt.Sprintf("entry %d of %s could not be read; UCX might take it", unreadable, p.Label())}
	}
	if limited >= 0 {
		pk := usesIndex(p, p.Table[limited].Index, "UCX_IB_PKEY resolves to")
		pk.Notes = append(pk.Notes, "no full-member entry matches: UCX uses the first limited one")
		return pk
	}
	// uct_ib_iface_init_pkey fails the interface, and with it ucp_worker_create:
	// ucp_worker_add_resource_ifaces (src/ucp/core/ucp_worker.c) opens an interface
	// on every port selected and stops at the first that fails (UCX 1.8.0 to master).
	why := fmt.Sprintf("\"unable to find specified pkey 0x%x on %s\": the table holds no entry for partition 0x%04x", key, p.Label(), key)
	if key == ucxAuto {
		why = fmt.Sprintf("\"there is no valid pkey to use on %s\"", p.Label())
	}
	return Pick{Outcome: Fails, Index: -1, Abort: true, AbortHost: true, Problem: "UCX: " + why + "; ucp_worker_create fails (it opens an interface on every port UCX selects), so UCX uses no port of this host"}
}

// ucxDevices is UCX_NET_DEVICES as an allow list (UCX 1.21 and later). invalid is
// set when UCX 1.21 and later refuse the value ("all" followed by more names);
// legacy says how UCX before 1.21 reads it when that differs, else it is empty.
type ucxDevices struct {
	all, negate, ranges, invalid bool
	names                        map[string]bool
	legacy                       string
	// portsOnly: a name selects only the port it names, dev:port (before 1.21).
	portsOnly bool
}

// parseUCXDevices is ucs_config_sscanf_allow_list_impl (src/ucs/config/parser.c) for
// NET_DEVICES, a UCS_CONFIG_TYPE_ALLOW_LIST_WITH_RANGES from UCX 1.22 (an
// ALLOW_LIST in 1.21): a leading '^' negates, and ucs_config_sscanf_array_impl
// skips leading, repeated and trailing commas, so empty names never reach the
// list ("all," is all). A first name "all" allows every device (also after '^'),
// and fails the parse if more names follow ("Invalid value for NET_DEVICES",
// ucs_config_parser_parse_field): UCX does not start. A name without a port
// selects every port of the device (ucp_is_resource_in_device_list, ucp_context.c,
// ucx f3a1ae1a18).
//
// Before 1.21 (ucx v1.13.1 to v1.20.0) NET_DEVICES is a UCS_CONFIG_TYPE_STRING_ARRAY
// (ucp_context.c), with empty names skipped too: ucp_is_resource_in_device_list
// compares each name with the resource's dev:port name exactly (strcmp), and takes
// every device when any name is "all"; '^' is no negation (d7723f277b, 1.21), just
// part of a name. legacy says so where that reads the value differently.
func parseUCXDevices(s string, set bool) ucxDevices {
	d := ucxDevices{names: map[string]bool{}}
	if !set {
		d.all = true
		return d
	}
	if strings.HasPrefix(s, "^") {
		d.negate, s = true, s[1:]
	}
	var parts []string
	for _, n := range strings.Split(s, ",") {
		if n != "" {
			parts = append(parts, n)
		}
	}
	bare := slices.ContainsFunc(parts, func(n string) bool { return n != "all" && !strings.Contains(n, ":") })
	switch {
	case slices.Contains(parts, "all") && (d.negate || len(parts) > 1):
		d.legacy = "uses every device (\"all\" is among the names)"
	case d.negate:
		d.legacy = "has no '^' and matches no device named ^" + strings.Join(parts[:min(1, len(parts))], "")
	case bare:
		d.legacy = "matches only exact dev:port names, so a name without :port selects no port"
	}
	if len(parts) > 0 && parts[0] == "all" {
		d.all, d.invalid = true, len(parts) > 1
		return d
	}
	for _, n := range parts {
		d.ranges = d.ranges || strings.ContainsAny(n, "[]")
		d.names[n] = true
	}
	return d
}

// reading is how UCX 1.21 and later read the value.
func (d ucxDevices) reading() string {
	switch {
	case d.invalid:
		return "refuse it (\"Invalid value for NET_DEVICES\": \"all\" must be the only name)"
	case d.all:
		return "use every device"
	case d.negate:
		return "use every port not named"
	}
	return "use the ports named (a name without :port: every port of the device)"
}

// parseUCXDevicesBefore121 is NET_DEVICES as UCX before 1.21 reads it (a
// UCS_CONFIG_TYPE_STRING_ARRAY, empty names skipped; ucp_is_resource_in_device_list
// compares each name with the resource's dev:port, strcmp, and "all" anywhere takes
// every device): '^' and '[' are part of a name.
func parseUCXDevicesBefore121(s string, set bool) ucxDevices {
	d := ucxDevices{names: map[string]bool{}, portsOnly: true, all: !set}
	for _, n := range strings.Split(s, ",") {
		d.all = d.all || n == "all"
		d.names[n] = n != ""
	}
	return d
}

func (d ucxDevices) match(dev string, port int) bool {
	if d.all {
		return true
	}
	found := d.names[fmt.Sprintf("%s:%d", dev, port)] || d.names[dev] && !d.portsOnly
	return found != d.negate
}
