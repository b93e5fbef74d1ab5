package job

import (
	"fmt"
	"strings"
)

// NCCL, as of NVIDIA/nccl v2.30 (src/transport/net_ib/, src/misc/):
//
//   - NCCL_IB_PKEY is a P_Key table *index*, default 0: NCCL_PARAM(IbPkey, "IB_PKEY", 0)
//     in src/transport/net_ib/connect.cc; ncclIbQpInit puts it unchanged into
//     ibv_qp_attr.pkey_index for ibv_modify_qp(RESET->INIT); the GIN GDAKI path
//     (gdaki/gin_host_gdaki.cc) gives the same value to doca_verbs_qp_attr_set_pkey_index.
//     NCCL never reads the table.
//   - The value is parsed by ncclLoadParam (src/misc/param.cc): strtoll(str, NULL, 0),
//     so 0x8001 is index 32769 and 010 is index 8 (octal); an empty value or an
//     overflow (errno) keeps the default; anything after the digits is ignored. The
//     field is an int (struct ncclIbQpInitAttr), stored in the 16-bit pkey_index.
//   - NCCL also reads NCCL_CONF_FILE, ~/.nccl.conf and /etc/nccl.conf (initEnvFunc,
//     setEnvFile); the environment wins (setenv with overwrite 0). From NCCL 2.28.7
//     ncclGetEnv asks an env plugin (src/plugin/env.cc: NCCL_ENV_PLUGIN, else
//     libnccl-env.so if it loads; the built-in one is getenv), which may answer
//     anything.
//   - Ports: ncclIbInitDevices (src/transport/net_ib/init.cc) uses every ACTIVE port
//     with link layer InfiniBand or Ethernet that NCCL_IB_HCA selects: a leading '^'
//     excludes, then a leading '=' asks for exact names, then a comma list of
//     name[:port[:rail[:plane]]] (parseStringList, src/misc/utils.cc); names match by
//     prefix unless '=' (matchIf), a missing or empty port matches any port
//     (matchPort). An empty list selects every port, and "^" alone none.
//     Each entry is cut to 63 bytes (snprintf into netIf.prefix[64], src/include/
//     utils.h) and its port read with atoi.
//   - NCCL_IB_GID_INDEX does not change the partition (the P_Key comes from the index
//     alone). From NCCL 2.22.3 ncclIbGetGidIndex (connect.cc) ignores it on InfiniBand
//     ports (GID 0, or the routable FLID GID); before, it was the source GID index
//     there too (an index beyond the GID table fails the connection: not checked).
//   - The network: ncclNetInit (src/plugin/net.cc) tries the external net plugins
//     (NCCL_NET_PLUGIN, else libnccl-net.so when it loads), then its own IB transport
//     ("IB"), then sockets ("Socket"), and takes the first that initializes with a
//     device. NCCL_NET (read by ncclGetEnv in src/init.cc) keeps only the one whose
//     name it is (strcasecmp); naming none, even set empty, fails ("Failed to
//     initialize any NET plugin"). NCCL_IB_DISABLE (NCCL_PARAM IbDisable,
//     src/transport/net_ib/init.cc; ncclLoadParam) not 0 makes the IB transport
//     fail to initialize, so NCCL goes on to sockets. A plugin's use of P_Keys is the
//     plugin's: not modelled.
//   - NCCL_IB_PKEY_VALUE is read by newer NCCL (listed among NCCL 2.31.2's
//     variables; not in the master ibkey follows): a P_Key value, whose lookup and
//     precedence over NCCL_IB_PKEY are not modelled here, so it is not checked.
var NCCL = Library{
	ID: "nccl", Name: "NCCL", Kind: ByIndex,
	Vars:      []string{"NCCL_IB_PKEY", "NCCL_IB_HCA", "NCCL_IB_GID_INDEX", "NCCL_IB_PKEY_VALUE"},
	Modifiers: []string{"NCCL_IB_DISABLE", "NCCL_NET"},
	Source:    "NVIDIA/nccl src/transport/net_ib/connect.cc (NCCL_PARAM IbPkey, ncclIbQpInit), src/misc/param.cc ncclLoadParam, src/transport/net_ib/init.cc ncclIbInitDevices, src/misc/utils.cc parseStringList/matchIfList, src/plugin/net.cc ncclNetInit",
	// NCCL_IB_PKEY arrived in 2.8.3 (src/transport/net_ib.cc NCCL_PARAM IbPkey), whose
	// setEnvFile (src/include/param.h) is 2.18.3's; no NCCL 3 is known.
	releases: releases{oldest: "2.8.3", below: "3.0", span: "NCCL 2.8.3, the first to read NCCL_IB_PKEY, to 2.x"},
	configure: func(in Inputs, s *setup) {
		// The job's NCCL version reads the files one way (ncclReadings), else
		// where readings differ it is said (split). A gate's export beats every file.
		lv := in.version(s.Library)
		f, reading := ncclFiles(in, lv)
		if reading >= 0 && f != nil {
			// Each split the version decides, as it reads the files.
			for _, u := range in.NCCL.without(in.exported).split {
				for _, name := range u.vars {
					if _, set := in.Env[name]; !set {
						s.Notes = append(s.Notes, fmt.Sprintf("%s from NCCL's files: %s, as %s reads them (%s)", name, in.NCCL.readings[reading][name].describe(), lv, ncclReadings[reading].versions))
					}
				}
			}
			if reading == 0 {
				c := *f
				c.Assumption = "" // the password database's home: before 2.30 only
				f = &c
			}
		}
		env := f.env(in.Env)
		// What NCCL's files leave open (not read, or read otherwise by older NCCL).
		files := f.unchecked(in.Env)
		s.Unchecked = append(s.Unchecked, files...)
		// inactive says the settings route NCCL away from its IB transport, unless
		// what the files leave open may change that: then no port is decided.
		inactive := func(why string) bool {
			if len(files) == 0 {
				s.Inactive = why
				return true
			}
			if reading >= 0 {
				s.Notes = append(s.Notes, why+", as "+lv.String()+" reads its files")
			} else {
				s.Notes = append(s.Notes, why+", as NCCL 2.30 and later read its files")
			}
			s.unknown = "whether NCCL uses its IB transport is not known (see what its files leave open)"
			return false
		}
		disabled := ncclInt(env["NCCL_IB_DISABLE"], 0) != 0
		if net, ok := env["NCCL_NET"]; ok {
			where := f.where(in.Env, "NCCL_NET")
			switch {
			case strings.EqualFold(net, "IB") && disabled:
				s.Reject = fmt.Sprintf("NCCL_NET=IB%s with NCCL_IB_DISABLE=%s: the one network NCCL may use does not initialize, and NCCL fails (\"Failed to initialize any NET plugin\")", where, env["NCCL_IB_DISABLE"])
			case strings.EqualFold(net, "IB"):
			case strings.EqualFold(net, "Socket"):
				if inactive(fmt.Sprintf("NCCL_NET=%s%s: NCCL uses sockets, not InfiniBand or RoCE (P_Keys do not apply)", net, where)) {
					return
				}
			case net == "":
				s.Reject = "NCCL_NET is set but empty" + where + ": it names no network (strcasecmp matches none), and NCCL fails (\"Failed to initialize any NET plugin\")"
			default:
				s.Unchecked = append(s.Unchecked, fmt.Sprintf("NCCL_NET=%s%s names a network plugin, not NCCL's own IB transport: which P_Key it uses is the plugin's (and NCCL fails if no plugin has that name)", net, where))
				s.unknown = "NCCL_NET=" + net + ": which entry the plugin uses is not known"
			}
		}
		if disabled && s.Reject == "" && inactive(fmt.Sprintf("NCCL_IB_DISABLE=%s%s: NCCL's IB transport does not initialize, and NCCL uses sockets (or a net plugin), not these P_Keys", env["NCCL_IB_DISABLE"], f.where(in.Env, "NCCL_IB_DISABLE"))) {
			return
		}
		idx, setting := ncclIndex(env, f.where(in.Env, "NCCL_IB_PKEY"))
		s.Setting = setting
		hca, hasHCA := env["NCCL_IB_HCA"]
		filter := parseNCCLHCA(hca)
		if hasHCA {
			s.Setting += fmt.Sprintf(", NCCL_IB_HCA=%s%s", hca, f.where(in.Env, "NCCL_IB_HCA"))
			if filter.none() {
				s.Notes = append(s.Notes, `NCCL_IB_HCA="^" with an empty list excludes every port: NCCL uses no InfiniBand port (it falls back to sockets)`)
			}
		}
		if g, ok := env["NCCL_IB_GID_INDEX"]; ok {
			s.Notes = append(s.Notes, fmt.Sprintf("NCCL_IB_GID_INDEX=%s%s does not change the partition: from NCCL 2.22.3 InfiniBand ports use GID 0 (or the routable FLID GID) whatever it says (before, it was their source GID index: not checked); it selects the GID on RoCE ports, whose one P_Key is 0xffff", g, f.where(in.Env, "NCCL_IB_GID_INDEX")))
		}
		if v, ok := env["NCCL_IB_PKEY_VALUE"]; ok {
			if read, known := lv.since("2.31"); known && !read {
				// Not in NCCL's source up to v2.30.7-1.
				s.Notes = append(s.Notes, fmt.Sprintf("NCCL_IB_PKEY_VALUE=%s%s is not read by %s (newer NCCL, 2.31, reads it)", v, f.where(in.Env, "NCCL_IB_PKEY_VALUE"), lv))
			} else {
				s.Unchecked = append(s.Unchecked, fmt.Sprintf("NCCL_IB_PKEY_VALUE=%s%s is a P_Key value newer NCCL reads (2.31), which ibkey does not interpret: the entry NCCL uses may come from it rather than from NCCL_IB_PKEY", v, f.where(in.Env, "NCCL_IB_PKEY_VALUE")))
			}
		}
		if f == nil {
			s.Assumptions = append(s.Assumptions, "NCCL: only the settings given are read; NCCL_CONF_FILE, ~/.nccl.conf and /etc/nccl.conf (read only with settings from the environment) can also set NCCL_IB_PKEY")
		} else {
			s.Assumptions = append(s.Assumptions, f.assumptions("NCCL")...)
		}
		if env, known := lv.since("2.28.7"); known && !env {
			// src/plugin/env.cc arrived in 2.28.7 (not in v2.28.3-1).
			s.Assumptions = append(s.Assumptions, "NCCL: no net plugin (NCCL_NET_PLUGIN, libnccl-net.so: tried before NCCL's own IB transport), which could read these settings otherwise")
		} else {
			s.Assumptions = append(s.Assumptions, "NCCL: no net plugin (NCCL_NET_PLUGIN, libnccl-net.so: tried before NCCL's own IB transport) and no env plugin (NCCL 2.28 and later: NCCL_ENV_PLUGIN, libnccl-env.so), which could read these settings otherwise")
		}
		s.roce = true
		s.allows = func(_ []*Port, dev string, num int) (bool, string) {
			switch {
			case !filter.match(dev, num):
				return false, "not selected by NCCL_IB_HCA=" + hca
			case hasHCA:
				return true, "ACTIVE, selected by NCCL_IB_HCA"
			}
			return true, "ACTIVE"
		}
		s.value = idx
	},
	lookup: ncclPick,
}

// ncclFiles are NCCL's files as the job's NCCL version lv reads them (reading:
// its ncclReadings index, -1 when not known: every reading, the splits said),
// without what a gate exports, which beats every file.
func ncclFiles(in Inputs, lv libVersion) (f *ConfFiles, reading int) {
	reading = lv.reading(ncclReadings[0].since, ncclReadings[1].since)
	return in.NCCL.at(reading).without(in.exported), reading
}

// ncclIndex is the index NCCL puts in its QPs, and how it came about.
// where, when not empty, says which file set it (" (FILE:LINE)").
func ncclIndex(env Env, where string) (int, string) {
	v, set := env["NCCL_IB_PKEY"]
	if v == "" {
		if set {
			return 0, "NCCL_IB_PKEY empty" + where + ": NCCL keeps the default, index 0"
		}
		return 0, "NCCL_IB_PKEY unset: index 0"
	}
	n := parseC(v, 0)
	if n.Overflow {
		return 0, fmt.Sprintf("NCCL_IB_PKEY=%s%s overflows: NCCL keeps the default, index 0", v, where)
	}
	idx := int(uint16(n.Value)) // int pkeyIndex stored in the 16-bit ibv_qp_attr.pkey_index
	var how []string
	if !n.Digits {
		how = append(how, "not a number: strtoll reads 0")
	} else if n.Rest != "" {
		how = append(how, fmt.Sprintf("%q after the number is ignored", n.Rest))
	}
	if n.Digits && n.Base == 8 && n.Value != 0 {
		how = append(how, "a leading 0 makes it octal")
	}
	if n.Base == 16 && n.Value > 0x7f {
		how = append(how, "NCCL_IB_PKEY is an index, not a P_Key value")
	}
	if int64(idx) != n.Value {
		how = append(how, fmt.Sprintf("truncated to 16 bits: %d", idx))
	}
	s := fmt.Sprintf("NCCL_IB_PKEY=%s%s: index %d", v, where, idx)
	if len(how) > 0 {
		s += " (" + strings.Join(how, "; ") + ")"
	}
	return idx, s
}

// ncclInt is an integer NCCL parameter as ncclLoadParam reads it: strtoll base 0,
// the default when empty or on overflow.
func ncclInt(v string, def int64) int64 {
	if v == "" {
		return def
	}
	n := parseC(v, 0)
	if n.Overflow {
		return def
	}
	return n.Value
}

func ncclPick(idx int, p *Port) Pick {
	if p.Table == nil {
		return Pick{Outcome: NotChecked, Index: idx, Problem: p.NoTable}
	}
	pk := usesIndex(p, idx, "NCCL_IB_PKEY")
	if pk.Outcome == Fails {
		pk.Problem += ": ibv_modify_qp(RESET->INIT) fails (EINVAL) and NCCL cannot connect"
	}
	return pk
}

// hcaFilter is a device list: NCCL_IB_HCA parsed as parseStringList and the '^'/'='
// prefixes do, or NVSHMEM's (parseNVSHMEMHCAs).
type hcaFilter struct {
	not, exact bool
	entries    []hcaEntry
}

// hcaEntry is one entry of a device list: a device name (NCCL: a prefix, unless the
// list starts with '=') and a port, -1 for any.
type hcaEntry struct {
	name string
	port int
}

// maxNCCLDevs is MAX_IB_DEVS: parseStringList keeps at most this many entries.
const maxNCCLDevs = 32

func parseNCCLHCA(s string) hcaFilter {
	var f hcaFilter
	if strings.HasPrefix(s, "^") {
		f.not, s = true, s[1:]
	}
	if strings.HasPrefix(s, "=") {
		f.exact, s = true, s[1:]
	}
	// strtok_r(str, ","): empty tokens are skipped.
	for _, tok := range strings.Split(s, ",") {
		if tok == "" || len(f.entries) == maxNCCLDevs {
			continue
		}
		fields := strings.Split(tok, ":")
		if fields[0] == "" {
			continue
		}
		e := hcaEntry{name: fields[0][:min(len(fields[0]), 63)], port: -1}
		if len(fields) > 1 && fields[1] != "" {
			e.port = atoi(fields[1])
		}
		f.entries = append(f.entries, e)
	}
	return f
}

// none reports whether the filter excludes everything ("^" with an empty list:
// matchIfList's empty list matches, and '^' inverts it).
func (f hcaFilter) none() bool { return f.not && len(f.entries) == 0 }

func (f hcaFilter) match(dev string, port int) bool {
	m := len(f.entries) == 0
	for _, e := range f.entries {
		name := dev == e.name
		if !f.exact {
			name = strings.HasPrefix(dev, e.name)
		}
		if name && (e.port == -1 || e.port == port) {
			m = true
			break
		}
	}
	return m != f.not
}
