// Package fabrictest builds fabrics for tests, benchmarks and the development tools:
// nothing in the shipped binary imports it.
package fabrictest

import (
	"fmt"
	"time"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
)

// FatTree is what a sweep of internal/lab's FatTree(leaves, spines, hcas) returns
// in ibsim: single-port CAs (64-entry tables) under leaf switches, every leaf linked to
// every spine, every connected port's table read (64 entries, 8 on a switch's port 0),
// the unconnected ones not. FatTree(208, 12, 23) is the 5,004-node fabric of
// scripts/bench-sweep.
func FatTree(leaves, spines, hcas int) *fabric.Fabric {
	f := &fabric.Fabric{Source: `ibsim "bench" at Hca1`, SweptAt: time.Date(2026, 11, 22, 18, 0, 0, 123456789, time.UTC),
		Duration: 1234567 * time.Microsecond}
	guid := check.GUID(0x0002c90300000000)
	next := func() check.GUID { guid += 0x100; return guid }
	table := func(n int) fabric.PKeyTable {
		t := make(fabric.PKeyTable, n)
		t[0], t[1] = 0xffff, 0x8001
		return t
	}
	sw := func(desc string, ports int) *fabric.Node {
		n := &fabric.Node{GUID: next(), Type: check.NodeSwitch, Description: desc, VendorID: 0x2c9, DeviceID: 0xb924, NumPorts: ports,
			PartitionCap: 8, PartitionEnforcementCap: 64, Path: "0,1"}
		n.SystemImageGUID = n.GUID
		n.Ports = append(n.Ports, &fabric.Port{Num: 0, GUID: n.GUID, LID: uint16(guid >> 8), State: check.StateActive, PhysState: "LinkUp", TableSize: 8, PKeys: table(8)})
		for p := 1; p <= ports; p++ {
			n.Ports = append(n.Ports, &fabric.Port{Num: p, State: check.StateDown, PhysState: "Polling", TableSize: 64, Enforcement: &check.Enforcement{}})
		}
		f.Nodes = append(f.Nodes, n)
		return n
	}
	link := func(a *fabric.Node, ap int, b *fabric.Node, bp int) {
		pa, pb := a.Port(ap), b.Port(bp)
		pa.Peer, pb.Peer = &check.PortID{Node: b.GUID, Port: bp}, &check.PortID{Node: a.GUID, Port: ap}
		for _, p := range []*fabric.Port{pa, pb} {
			p.State, p.PhysState, p.PKeys = check.StateActive, "LinkUp", table(p.TableSize)
			if p.Enforcement != nil {
				*p.Enforcement = check.Enforcement{Inbound: true, Outbound: true}
			}
		}
	}
	var spineNodes []*fabric.Node
	for s := range spines {
		spineNodes = append(spineNodes, sw(fmt.Sprintf("Spine%d", s+1), leaves))
	}
	for l := range leaves {
		leaf := sw(fmt.Sprintf("Leaf%d", l+1), hcas+spines)
		for h := range hcas {
			ca := &fabric.Node{GUID: next(), Type: check.NodeCA, Description: fmt.Sprintf("Hca%d", l*hcas+h+1), VendorID: 0x2c9, DeviceID: 0x1017,
				NumPorts: 1, PartitionCap: 64, Path: "0,1,2"}
			ca.SystemImageGUID = ca.GUID
			ca.Ports = []*fabric.Port{{Num: 1, GUID: ca.GUID + 1, LID: uint16(guid >> 8), SMLID: 1, State: check.StateDown, PhysState: "Polling", TableSize: 64}}
			f.Nodes = append(f.Nodes, ca)
			link(leaf, h+1, ca, 1)
		}
		for s, sp := range spineNodes {
			link(leaf, hcas+s+1, sp, l+1)
		}
	}
	f.Normalize()
	return f
}
