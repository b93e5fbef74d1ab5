package job

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ibkey/ibkey/internal/check"
)

// GASNet ibv-conduit (BerkeleyLab/gasnet ibv-conduit/gasnet_core.c):
//
//   - GASNET_IBV_PKEY is a P_Key *value*: get_pkey reads it with
//     gasnett_getenv_int_withdefault("GASNET_IBV_PKEY", -1, 0), strips the membership
//     bit and refuses a key below 2 or above 0x7fff ("Invalid GASNET_IBV_PKEY").
//   - gasnetc_probe_ports: unset, every port uses index 0; set, the first index
//     (0 .. max_pkeys-1) whose 15-bit key matches, whatever its membership; a failed
//     ibv_query_pkey is fatal, and no match is fatal ("Failed to locate index of
//     requested pkey").
//   - Ports: GASNET_IBV_PORTS filters ("hca[:port,port]+hca", README "Connection
//     settings"); each HCA contributes its first ACTIVE port with a non-zero LID, and
//     with GASNET_IBV_PORTS each entry one port (a listed port, or for "hca" alone
//     the next: gasnetClaims); the default build opens one HCA (GASNETC_IB_MAX_HCAS
//     without --enable-ibv-multirail). An empty GASNET_IBV_PORTS is the default
//     (GASNETC_DEFAULT_IBV_PORTS ""). No port at all fails gasnetc_init ("unable to
//     open any HCA ports"): gasnetAborts.
var GASNet = Library{
	ID: "gasnet", Name: "GASNet (ibv)", Kind: ByValue,
	Vars:      []string{"GASNET_IBV_PKEY", "GASNET_IBV_PORTS"},
	Modifiers: []string{"GASNET_DISABLE_ENVDECODE"},
	Source:    "BerkeleyLab/gasnet ibv-conduit/gasnet_core.c get_pkey and gasnetc_probe_ports, ibv-conduit/README",
	configure: func(in Inputs, s *setup) {
		env := in.Env
		key, unknown := check.PartitionKey(0), "" // unset
		v, set := gasnetEnv(env, "GASNET_IBV_PKEY")
		if set {
			n, fatal, undefined := gasnetParseInt(v)
			switch {
			case fatal:
				s.Reject = fmt.Sprintf("GASNet: \"Format error in numerical string: %s\" (a '.' in a hex value)", v)
			case undefined:
				unknown = "a fraction of 2^63 or more, whose conversion to an integer is undefined in C: the key GASNet uses is not known"
			case n == -1:
			default:
				n &^= 0x8000
				if n > 0x7fff || n < 2 {
					s.Reject = fmt.Sprintf("GASNet: \"Invalid GASNET_IBV_PKEY '%s'\" (after removing the membership bit the key must be 0x0002-0x7fff)", v)
				}
				key = check.PartitionKey(n)
			}
		}
		switch {
		case unknown != "":
			s.Setting = "GASNET_IBV_PKEY=" + v + ": " + unknown
		case key == 0:
			s.Setting = "GASNET_IBV_PKEY unset: index 0"
		default:
			s.Setting = fmt.Sprintf("GASNET_IBV_PKEY=%s: the first entry of partition %s, whatever its membership", v, key)
		}
		s.Assumptions = append(s.Assumptions, "GASNet: GASNET_IBV_PKEY is read as decimal or 0x hex; devices in name order; one HCA (the default build, without --enable-ibv-multirail)")
		// An empty GASNET_IBV_PORTS is its default (GASNETC_DEFAULT_IBV_PORTS "",
		// gasnet_core.h): gasnetc_parse_ports makes no list, so no filter.
		ports, _ := gasnetEnv(env, "GASNET_IBV_PORTS")
		hasPorts := ports != ""
		filter, perr := parseGASNetPorts(ports)
		s.scope = firstOfOneHCA
		s.allows = func(_ []*Port, dev string, num int) (bool, string) { return gasnetAllows(filter, hasPorts, dev, num) }
		s.claims = func() func(string, int) (bool, string) { return gasnetClaims(filter, hasPorts) }
		s.aborts = func(_ []*Port, sel []PortResult) []Abort { return gasnetAborts(sel, ports, perr) }
		s.value = int(key)
		if unknown != "" {
			s.unknown = "GASNET_IBV_PKEY is " + unknown
		}
	},
	lookup: func(v int, p *Port) Pick {
		key := check.PartitionKey(v)
		pk := pickFirst(p, key, "GASNet's default", Pick{Outcome: Fails, Index: -1, Abort: true, AbortHost: true, Problem: fmt.Sprintf("GASNet: \"Failed to locate index of requested pkey %s\" on %s", key, p.Label())})
		if key != 0 && p.Table != nil && pk.Outcome == NotChecked { // an entry before the match was not read
			pk.Problem += " (GASNet stops with a fatal error when it cannot query an entry)"
		}
		return pk
	},
	wantMin: 2,
}

// gasnetParseInt is gasneti_parse_int(s, 0) (gasnet_tools.c), GASNet's own integer
// reader, which never refuses: a sign only as the first character, then white space,
// 0x for hex, else decimal (no octal: 010 is 10); digits up to the first other
// character or the 80th, the rest ignored, summed in 64 bits (wrapping); empty or no
// digits is 0. A '.' in decimal makes a fraction, read with atof and truncated; in hex
// it is fatal ("Format error in numerical string"). undefined: a fraction of 2^63 or
// more, whose conversion to int64_t is undefined in C.
func gasnetParseInt(s string) (v int64, fatal, undefined bool) {
	neg := s != "" && s[0] == '-'
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	s = strings.TrimLeft(s, cSpace)
	base := 10
	if len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		base, s = 16, s[2:]
	}
	var val uint64
	frac, i := false, 0
digits:
	for ; i < len(s) && i < 80; i++ {
		switch d, ok := check.HexDigit(s[i]); {
		case s[i] == '.' && base == 16:
			return 0, true, false
		case s[i] == '.':
			frac = true
		case ok && int(d) < base:
			val = val*uint64(base) + uint64(d)
		default:
			break digits
		}
	}
	if frac {
		// atof takes digits, then '.' and digits: "1.5.3" is 1.5, "." is 0.
		digitsIn := func(t string) int { return len(t) - len(strings.TrimLeft(t, "0123456789")) }
		j := digitsIn(s[:i])
		if j < i {
			j += 1 + digitsIn(s[j+1:i])
		}
		f, _ := strconv.ParseFloat(s[:j], 64)
		if f >= 1<<63 {
			return 0, false, true
		}
		val = uint64(int64(f))
	}
	if neg {
		return -int64(val), false, false
	}
	return int64(val), false, false
}

// gasnetEnv is gasneti_getenv (gasnet_tools.c): a value holding "%0" is decoded
// (gasneti_decode_envval and gasneti_decodestr, gasnet_internal.c: "%0" and two hex
// digits is that byte) unless GASNET_DISABLE_ENVDECODE is set.
func gasnetEnv(env Env, name string) (string, bool) {
	v, ok := env[name]
	if _, off := env["GASNET_DISABLE_ENVDECODE"]; off || !strings.Contains(v, "%0") {
		return v, ok
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '%' && i+3 < len(v) && v[i+1] == '0' && isHex(v[i+2]) && isHex(v[i+3]) {
			hi, _ := check.HexDigit(v[i+2])
			lo, _ := check.HexDigit(v[i+3])
			b.WriteByte(hi<<4 | lo)
			i += 3
			continue
		}
		b.WriteByte(v[i])
	}
	return b.String(), ok
}

type gasnetPortSpec struct {
	hca   string
	ports []int // nil: the first active port
}

// parseGASNetPorts reads "mlx4_0+mlx4_1:1,2" as gasnetc_parse_ports (gasnet_core.c)
// does: '+' separates HCAs; after "hca:" each port is read with atoi from after the
// previous ','; a port reading 0 fails the whole list ("hca:" alone is every port).
func parseGASNetPorts(s string) ([]gasnetPortSpec, string) {
	var out []gasnetPortSpec
	for s != "" {
		spec, rest, _ := strings.Cut(s, "+")
		hca, list, _ := strings.Cut(spec, ":")
		ps := gasnetPortSpec{hca: hca}
		for list != "" {
			n, next, more := strings.Cut(list, ",")
			v := int(int32(parseC(n, 10).Value)) // atoi: (int)strtol(s, NULL, 10)
			if v == 0 {
				return nil, fmt.Sprintf("port %q is not a port number (GASNet fails to parse the list and probes no port)", n)
			}
			ps.ports = append(ps.ports, v)
			if !more {
				break
			}
			list = next
		}
		out = append(out, ps)
		s = rest
	}
	return out, ""
}

// gasnetListed is why GASNet uses a port GASNET_IBV_PORTS names.
const gasnetListed = "ACTIVE, listed in GASNET_IBV_PORTS"

// gasnetClaims is gasnetc_probe_ports' port choice on one HCA, for the candidate
// ports in order (ACTIVE, with a LID): without GASNET_IBV_PORTS the first of each HCA
// (the loop breaks); with it, each entry serves one port. gasnetc_add_port puts each
// entry at the head of the list and gasnetc_match_port marks the first unmatched
// entry of the HCA that names the port, or names no port (0, a wildcard), matched: so
// "mlx5_0+mlx5_0" takes two ports, and "mlx5_0:1+mlx5_0" one (port 1 takes the
// wildcard, listed last and so first, and the mlx5_0:1 entry is left), where
// "mlx5_0+mlx5_0:1" takes two.
func gasnetClaims(filter []gasnetPortSpec, hasFilter bool) func(string, int) (bool, string) {
	if !hasFilter {
		taken := map[string]bool{}
		return func(dev string, _ int) (bool, string) {
			if taken[dev] {
				return false, "GASNet uses the first ACTIVE port of each HCA"
			}
			taken[dev] = true
			return true, "the first ACTIVE port GASNet finds"
		}
	}
	type entry struct {
		hca     string
		port    int // 0: any
		matched bool
	}
	var list []*entry
	for _, f := range filter {
		ports := f.ports
		if ports == nil {
			ports = []int{0}
		}
		for _, p := range ports {
			list = append([]*entry{{hca: f.hca, port: p}}, list...)
		}
	}
	return func(dev string, num int) (bool, string) {
		for _, e := range list {
			if !e.matched && e.hca == dev && (e.port == 0 || e.port == num) {
				e.matched = true
				if e.port == 0 {
					return true, "the first ACTIVE port GASNet finds for GASNET_IBV_PORTS entry " + dev
				}
				return true, gasnetListed
			}
		}
		return false, "each GASNET_IBV_PORTS entry serves one port, and those for " + dev + " are taken"
	}
}

// gasnetAllows reports whether GASNET_IBV_PORTS lets GASNet use port num of dev at
// all: listed by number, or its HCA listed without ports (or no list); which such
// ports it takes, gasnetClaims says.
func gasnetAllows(filter []gasnetPortSpec, hasFilter bool, dev string, num int) (bool, string) {
	listed := !hasFilter
	for _, f := range filter {
		if f.hca != dev {
			continue
		}
		if slices.Contains(f.ports, num) {
			return true, gasnetListed
		}
		listed = listed || f.ports == nil
	}
	if !listed {
		return false, "not in GASNET_IBV_PORTS"
	}
	return true, "the first ACTIVE port GASNet finds"
}

// gasnetAborts is gasnetc_init (gasnet_core.c) after gasnetc_probe_ports: with no port
// found, gasnet_init fails with "unable to open any HCA ports" ("... given in
// GASNET_IBV_PORTS" when it is set), and the client stops. A GASNET_IBV_PORTS that
// gasnetc_parse_ports refuses leaves no port on any host. A listed port that is not
// ACTIVE, or has no LID yet, may still come up (Waits).
func gasnetAborts(sel []PortResult, ports, perr string) []Abort {
	if slices.ContainsFunc(sel, func(pr PortResult) bool { return pr.Used }) {
		return nil
	}
	msg, why := "unable to open any HCA ports", "no ACTIVE port with a LID"
	if ports != "" {
		msg += " given in GASNET_IBV_PORTS"
		why += " among GASNET_IBV_PORTS=" + ports
	}
	if perr != "" {
		why = "GASNET_IBV_PORTS=" + ports + ": " + perr
	}
	waits := perr == "" && slices.ContainsFunc(sel, func(pr PortResult) bool {
		return !pr.Port.Ethernet() && !noPKeys(pr.Port) && (!pr.Port.Active() || pr.Port.LID == 0) && !strings.HasPrefix(pr.Why, "not in GASNET_IBV_PORTS")
	})
	return []Abort{{Reason: fmt.Sprintf("GASNet: \"%s\" (gasnetc_init): %s", msg, why), Waits: waits}}
}
