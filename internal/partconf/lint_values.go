package partconf

import (
	"cmp"
	"fmt"
	"maps"
	"net/netip"
	"slices"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
)

// What OpenSM reads differently from what the admin meant (issue: the lint was silent).
//
//   - GUIDs: partition_add_port reads a member with strtoull(name, NULL, 0), so a GUID
//     without 0x and with a leading 0 is octal (0000000000100004 is 0x8004), one
//     without 0x and without a leading 0 is decimal, and one with a '-' is negated.
//   - mtu= and rate= take IB codes (osm_prtn_config.c stores them as uint8; the codes
//     are not documented there, opensm issue 31): MTU 1-5 (256, 512, 1024, 2048, 4096
//     bytes, IBA 14.2.5.6 / 15.2.5.16 NeighborMTU), rate 2-22 (IBA Table 15.2.5.16
//     PathRecord Rate: 2 = 2.5 Gb/s, 3 = 10 Gb/s ... 22 = 600 Gb/s). A value in bytes
//     or Gb/s is a different code, or no code at all.

// rateGbps are the rate codes 2-22 in Gb/s, as OpenSM stores them in a group (IBA Vol 1
// 15.2.5.16 MCMemberRecord, the PathRecord encodings; OpenSM include/iba/ib_types.h
// IB_PATH_RECORD_RATE_*).
var rateGbps = [...]string{2: "2.5", 3: "10", 4: "30", 5: "5", 6: "20", 7: "40", 8: "60", 9: "80", 10: "120",
	11: "14", 12: "56", 13: "112", 14: "168", 15: "25", 16: "100", 17: "200", 18: "300", 19: "28", 20: "50", 21: "400", 22: "600"}

// MTUBytes is MTU code 1-5 in bytes (IB_MTU_LEN_256 ... IB_MTU_LEN_4096: 128 << code).
func MTUBytes(code uint8) (int, bool) {
	if code < 1 || code > 5 {
		return 0, false
	}
	return 128 << code, true
}

// RateGbps is rate code 2-22 in Gb/s.
func RateGbps(code uint8) (string, bool) {
	if int(code) >= len(rateGbps) || rateGbps[code] == "" {
		return "", false
	}
	return rateGbps[code], true
}

func (f *Findings) lintValues() {
	for pi, p := range f.c.Partitions {
		f.lintIPoIBScope(p)
		for mi := range p.Members {
			m := &p.Members[mi]
			if m.Kind != KindGUID || m.Def.Implicit {
				continue
			}
			switch {
			case m.Negative():
				f.warn(m.Pos(), "negative-guid", fmt.Sprintf("%s starts with '-': OpenSM's strtoull negates the number, port %s", m.Text(), m.GUID),
					"remove the '-': write the GUID in hex with 0x (as ibstat and ibnetdiscover print it)")
			case m.Octal():
				f.add(check.SeverityWarning, m.Pos(), kindOctal, int32(pi), int32(mi), 0)
			case m.Decimal():
				f.add(check.SeverityWarning, m.Pos(), kindDecimal, int32(pi), int32(mi), 0)
			}
		}
		for _, g := range p.Groups {
			if g.RawMTU < 1 || g.RawMTU > 5 {
				hint := "use an IB MTU code: 1=256, 2=512, 3=1024, 4=2048, 5=4096 bytes"
				for code := uint8(1); code <= 5; code++ {
					if bytes, _ := MTUBytes(code); uint32(bytes) == g.RawMTU {
						hint = fmt.Sprintf("for %d bytes write mtu=%d (IB MTU codes: 1=256 ... 5=4096)", bytes, code)
					}
				}
				f.warn(g.Pos, "mtu-code", fmt.Sprintf("multicast group %s: mtu=%d is not an IB MTU code (1-5); OpenSM stores %d and the group's MTU is not what was meant", g.MGID, g.RawMTU, g.MTU), hint)
			}
			// Rate is RawRate cut to 8 bits: a code only when nothing was cut.
			if _, ok := RateGbps(g.Rate); !ok || uint32(g.Rate) != g.RawRate {
				hint := "use an IB rate code, e.g. 3=10, 6=20, 7=40, 12=56, 16=100, 17=200, 21=400 Gb/s"
				for code, gbps := range rateGbps {
					if gbps != "" && gbps == fmt.Sprint(g.RawRate) {
						hint = fmt.Sprintf("for %s Gb/s write rate=%d (IB rate codes are not Gb/s)", gbps, code)
					}
				}
				f.warn(g.Pos, "rate-code", fmt.Sprintf("multicast group %s: rate=%d is not an IB rate code (2-22); OpenSM stores %d and the group's rate is not what was meant", g.MGID, g.RawRate, g.Rate), hint)
			}
		}
	}
}

// lintIPoIBScope warns about an `ipoib` definition with a scope= other than
// link-local (2) whose broadcast group in that scope no mgid= line of the partition
// creates. partition-config.txt says the broadcast group is "created with the
// mgroup_flag flags given", but partition_create (osm_prtn_config.c, OpenSM 3.3.23
// and its master) copies mtu, rate, sl, Q_Key, TClass and FlowLabel, not scope_mask:
// the group is ff12:401b:PKEY::ffff:ffff whatever scope= says (seen in the lab:
// TestLabIPoIBScope). scope= applies to the partition's mgid= groups only.
//
// The kernel's IPoIB interface joins the broadcast group of its broadcast address
// (ipoib_main.c: 00:ff:ff:ff:ff:12:40:1b:PKEY:..., the scope nibble 2 unless set with
// `ip link ... broadcast`), and that join cannot create the group: ipoib_mcast_join
// (ipoib_multicast.c) gives the broadcast group no Q_Key, MTU, SL, FlowLabel or
// TClass, so OpenSM answers ERR_REQ_INSUFFICIENT_COMPONENTS ("ERR 1B11 ...
// insufficient components specified for implicit create"). The interface gets carrier
// only after that join (ipoib_mcast_join_complete), so one set to scope N stays down.
func (f *Findings) lintIPoIBScope(p *Partition) {
	bc := broadcastMGID(p.Key)
	for _, d := range p.Defs {
		for s := uint8(0); s < 16; s++ {
			mg := bc
			mg[1] = 0x10 | s
			if !d.IPoIB || s == defaultMgrpScope || d.Scopes&(1<<s) == 0 ||
				slices.ContainsFunc(p.Groups, func(g *MGroup) bool { return g.MGID.As16() == mg }) { // an mgid= line creates it
				continue
			}
			f.warn(d.Pos, "ipoib-scope", fmt.Sprintf("partition %s (%s) has ipoib and scope=%d, but OpenSM creates its IPoIB broadcast group in link-local scope only (%s; osm_prtn_config.c does not pass scope= to it): an IPoIB interface in scope %d (broadcast address 00:ff:ff:ff:ff:1%x:40:1b:%02x:%02x:...) joins %s, which does not exist and which its join cannot create (OpenSM ERR 1B11), so it never gets carrier; with the kernel's default broadcast address it comes up in link-local scope",
				p.Key, p.Name, s, netip.AddrFrom16(bc), s, s, bc[4], bc[5], netip.AddrFrom16(mg)),
				fmt.Sprintf("for link-local IPoIB (the kernel's default) remove scope=%d; for IPoIB in scope %d create the group: end the definition line at ':' and put `mgid=ff1%x:401b::ffff:ffff,sl=0` on the next line, the members after it (OpenSM fills in the P_Key)", s, s, s))
		}
	}
}

// RuleGUIDNotInFabric: a port GUID of the file that the swept fabric does not have.
const RuleGUIDNotInFabric = "guid-not-in-fabric"

// UnknownGUIDs lists the port GUIDs the file names that are not end ports of the
// fabric (`fabric check --partitions`): a typo, a replaced card, or a port of another
// subnet. OpenSM skips them silently (osm_prtn_config.c: the port is looked up when
// the partition is built, osm_prtn.c osm_prtn_add_port: "port ... not found"). The
// ports it manages are those it is modelled on (FabricPorts): a port the sweep holds
// outside the subnet (another SM's, or one no SM configured) is not one of them.
// Sorted by GUID, each with where the file names it first.
func UnknownGUIDs(c *Config, f *fabric.Fabric) []check.Finding {
	ports, _ := FabricPorts(f)
	known := make(map[check.GUID]bool, len(ports))
	for _, p := range ports {
		known[p.GUID] = true
	}
	first := map[check.GUID]*Member{}
	for _, p := range c.Partitions {
		for mi := range p.Members {
			m := &p.Members[mi]
			if m.Kind == KindGUID && !m.Def.Implicit && !known[m.GUID] {
				if _, ok := first[m.GUID]; !ok {
					first[m.GUID] = m
				}
			}
		}
	}
	// In file order (where each GUID first appears), as every other finding is listed.
	guids := slices.SortedFunc(maps.Keys(first), func(x, y check.GUID) int {
		a, b := first[x].Pos(), first[y].Pos()
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col), cmp.Compare(x, y))
	})
	out := make([]check.Finding, 0, len(guids))
	missed := f.MissedLinks() // the sweep may lack nodes (fabric.NotRead)
	for _, g := range guids {
		m := first[g]
		what := fmt.Sprintf("port %s (%s) is not in the fabric", g, m.Text())
		action := "check the GUID (ibstat, ibnetdiscover list port GUIDs), or remove the line if the card is gone"
		if ids := f.EndPorts(g); len(ids) > 0 {
			_, why := f.PortScope(ids[0])
			what = fmt.Sprintf("port %s (%s) is outside the swept subnet (%s)", g, m.Text(), why)
			action = "remove the item, or list the port in the partitions.conf of the Subnet Manager that manages it"
		} else {
			if n := f.Node(check.GUID(g)); n != nil {
				what = fmt.Sprintf("%s (%s) is the node GUID of %q, not a port GUID: OpenSM matches port GUIDs", g, m.Text(), n.Description)
			}
			if missed {
				what += " (as far as the sweep saw: it is partial, the port may be in the part not read)"
			}
		}
		out = append(out, check.Finding{Severity: check.SeverityWarning, Pos: m.Pos(), Rule: RuleGUIDNotInFabric,
			Message: what + ": OpenSM skips it, so the partition has one member fewer than the file says", Action: action})
	}
	return out
}
