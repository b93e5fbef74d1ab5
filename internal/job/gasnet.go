package job

import (
	"fmt"
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
//     settings"); each HCA contributes its first ACTIVE port with a non-zero LID (all
//     listed ports when GASNET_IBV_PORTS names them), and the default build opens one
//     HCA (GASNETC_IB_MAX_HCAS without --enable-ibv-multirail).
var GASNet = Library{
	ID: "gasnet", Name: "GASNet (ibv)", Kind: ByValue,
	Vars:   []string{"GASNET_IBV_PKEY", "GASNET_IBV_PORTS"},
	Source: "BerkeleyLab/gasnet ibv-conduit/gasnet_core.c get_pkey and gasnetc_probe_ports, ibv-conduit/README",
	configure: func(in Inputs, s *setup) {
		env := in.Env
		key := check.PartitionKey(0) // unset
		v, set := env["GASNET_IBV_PKEY"]
		if set {
			// Decimal or 0x hexadecimal.
			n, err := strconv.ParseInt(strings.TrimSpace(v), 0, 64)
			switch {
			case err != nil:
				s.Reject = fmt.Sprintf("GASNet rejects GASNET_IBV_PKEY=%s: not an integer", v)
			case n == -1:
			default:
				n &^= 0x8000
				if n > 0x7fff || n < 2 {
					s.Reject = fmt.Sprintf("GASNet: \"Invalid GASNET_IBV_PKEY '%s'\" (after removing the membership bit the key must be 0x0002-0x7fff)", v)
				}
				key = check.PartitionKey(n)
			}
		}
		if key == 0 {
			s.Setting = "GASNET_IBV_PKEY unset: index 0"
		} else {
			s.Setting = fmt.Sprintf("GASNET_IBV_PKEY=%s: the first entry of partition %s, whatever its membership", v, key)
		}
		s.Assumptions = append(s.Assumptions, "GASNet: GASNET_IBV_PKEY is read as decimal or 0x hex; devices in name order; one HCA (the default build, without --enable-ibv-multirail)")
		ports, hasPorts := env["GASNET_IBV_PORTS"]
		filter, perr := parseGASNetPorts(ports)
		if perr != "" {
			s.Unchecked = append(s.Unchecked, fmt.Sprintf("GASNET_IBV_PORTS=%s: %s", ports, perr))
		}
		s.selectPorts = func(host []*Port) []PortResult { return gasnetSelect(host, filter, hasPorts) }
		s.pick = func(p *Port) Pick { return gasnetPick(key, p) }
	},
	want: func(key check.PKey, p *Port) Pick {
		if key.Partition() < 2 {
			return noSetting(fmt.Sprintf("GASNet refuses partition %s: GASNET_IBV_PKEY must be 0x0002-0x7fff", key.Partition().String()), NoGap)
		}
		return wantValue(key, p, "GASNET_IBV_PKEY", gasnetPick)
	},
}

func gasnetPick(key check.PartitionKey, p *Port) Pick {
	pk := pickFirst(p, key, 0, "GASNet's default", Pick{Outcome: Fails, Index: -1, Problem: fmt.Sprintf("GASNet: \"Failed to locate index of requested pkey %s\" on %s", key, p.Label())})
	if key != 0 && p.Table != nil && pk.Outcome == NotChecked { // an entry before the match was not read
		pk.Problem += " (GASNet stops with a fatal error when it cannot query an entry)"
	}
	return pk
}

type gasnetPortSpec struct {
	hca   string
	ports []int // nil: the first active port
}

// parseGASNetPorts reads "mlx4_0+mlx4_1:1,2" (gasnetc_parse_ports).
func parseGASNetPorts(s string) ([]gasnetPortSpec, string) {
	var out []gasnetPortSpec
	if s == "" {
		return nil, ""
	}
	for _, spec := range strings.Split(s, "+") {
		if spec == "" {
			continue
		}
		hca, list, hasList := strings.Cut(spec, ":")
		ps := gasnetPortSpec{hca: hca}
		if hasList {
			for _, n := range strings.Split(list, ",") {
				v, err := strconv.Atoi(n)
				if err != nil || v <= 0 {
					return nil, fmt.Sprintf("port %q is not a port number (GASNet fails to parse the list and probes no port)", n)
				}
				ps.ports = append(ps.ports, v)
			}
		}
		out = append(out, ps)
	}
	return out, ""
}

func gasnetSelect(host []*Port, filter []gasnetPortSpec, hasFilter bool) []PortResult {
	out := make([]PortResult, 0, len(host))
	hcaUsed := ""
	taken := map[string]bool{}
	for _, p := range host {
		s := PortResult{Port: p}
		listed, explicit := !hasFilter, false
		for _, f := range filter {
			if f.hca != p.Device {
				continue
			}
			if f.ports == nil {
				listed = true
			}
			for _, n := range f.ports {
				if n == p.Num {
					listed, explicit = true, true
				}
			}
		}
		switch {
		case p.Fabric && !p.DeviceKnown:
			s.Used, s.Why = true, "given (device filters do not apply to a port read over the fabric)"
		case !listed:
			s.Why = "not in GASNET_IBV_PORTS"
		case !p.Active():
			s.Why = "not ACTIVE (" + p.State + ")"
		case p.LID == 0:
			s.Why = "LID is 0"
		case hcaUsed != "" && hcaUsed != p.Device:
			s.Why = "GASNet opens one HCA (default build): " + hcaUsed + " comes first"
		case taken[p.Device] && !explicit:
			s.Why = "GASNet uses the first ACTIVE port of each HCA"
		default:
			s.Used, s.Why = true, "the first ACTIVE port GASNet finds"
			if explicit {
				s.Why = "ACTIVE, listed in GASNET_IBV_PORTS"
			}
			hcaUsed = p.Device
			taken[p.Device] = true
		}
		out = append(out, s)
	}
	return out
}
