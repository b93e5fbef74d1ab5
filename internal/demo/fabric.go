package demo

import (
	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
)

// The demo fabric: the subnet the demo host's two InfiniBand ports are cabled to, so
// that the commands that read a fabric (fabric pkeys/check/discover/diff, can-talk
// lid= and node=, pkeys --lid, job --node, watch counters --lid, exporter --lid) run
// on it with --demo, through Transport, as they do on a real subnet.
//
//	                 leaf01 (LID 2) ======== leaf02 (LID 7)
//	 [1] sm01 (LID 1, the SM)                [1] node03 (LID 5)
//	 [2] demo-node HCA-1 (mlx5_0, LID 3)     [2] storage01 (LID 6)
//	 [3] node02 (LID 4)                      [3] gpu01 (LID 8)
//	 [4] demo-node HCA-2 (mlx5_1, LID 9)
//
// The tables are what OpenSM would program from a partitions.conf giving the
// default partition to every port (gpu01 and the demo host's mlx5_1 as limited
// members), storage (0x0001), compute (0x0002), gpu (0x0003, -W: both entries on
// mlx5_0) and backup (0x0010), with one thing wrong for fabric check to find:
// leaf02's port 2 lacks backup (0x0010), which storage01 holds, so the switch drops
// storage01's backup traffic.

// Demo host ports in the fabric: the GUIDs of the embedded sysfs tree.
const (
	hca1Node = check.GUID(0x248a0703005e1a20) // mlx5_0
	hca2Node = check.GUID(0x248a0703005e1b30) // mlx5_1
)

// gidPrefix is the subnet's GID prefix, fe80::/64 (the default, OpenSM's
// subnet_prefix).
const gidPrefix = check.GUID(0xfe80000000000000)

// Fabric returns the demo fabric as a swept fabric would hold it (every table read,
// no source or time: the transport answers, a sweep records those).
func Fabric() *fabric.Fabric {
	var nodes []*fabric.Node
	link := func(a *fabric.Node, ap int, b *fabric.Node, bp int) {
		a.Port(ap).Peer = &check.PortID{Node: b.GUID, Port: bp}
		b.Port(bp).Peer = &check.PortID{Node: a.GUID, Port: ap}
	}
	table := func(size int, keys ...check.PKey) []check.PKey {
		t := make([]check.PKey, size)
		copy(t, keys)
		return t
	}
	// Every port starts DOWN (Polling, no link); cabling makes it ACTIVE.
	newNode := func(typ check.NodeType, guid check.GUID, desc string, ports, partCap int, device uint16) *fabric.Node {
		n := &fabric.Node{GUID: guid, Type: typ, Description: desc, SystemImageGUID: guid, VendorID: 0x02c9, DeviceID: device,
			NumPorts: ports, PartitionCap: partCap}
		first := 1
		if typ == check.NodeSwitch {
			first = 0
			n.PartitionEnforcementCap = 32
		}
		for p := first; p <= ports; p++ {
			port := &fabric.Port{Num: p, State: check.StateDown, PhysState: "Polling", TableSize: partCap}
			switch {
			case typ == check.NodeSwitch && p == 0:
				port.GUID, port.State, port.PhysState, port.GIDPrefix = guid, check.StateActive, "LinkUp", gidPrefix
				port.PKeys = table(partCap, 0xffff)
			case typ == check.NodeSwitch:
				// An uncabled switch port keeps the table it was reset to.
				port.TableSize = n.PartitionEnforcementCap
				port.Enforcement = &check.Enforcement{}
				port.PKeys = table(port.TableSize, 0xffff)
			default:
				port.GUID = guid + check.GUID(p)
				port.GIDPrefix = gidPrefix
			}
			n.Ports = append(n.Ports, port)
		}
		nodes = append(nodes, n)
		return n
	}
	ca := func(guid check.GUID, desc string, ports int, device uint16) *fabric.Node {
		return newNode(check.NodeCA, guid, desc, ports, 128, device)
	}
	// up cables port p of n, gives it a LID and a table; the SM is at LID 1.
	up := func(n *fabric.Node, p int, lid uint16, keys ...check.PKey) {
		port := n.Port(p)
		port.State, port.PhysState, port.SMLID = check.StateActive, "LinkUp", 1
		if n.Type != check.NodeSwitch || p == 0 {
			port.LID = lid
		}
		if keys != nil {
			port.PKeys = table(port.TableSize, keys...)
		}
	}

	leaf01 := newNode(check.NodeSwitch, 0x0002c90200400100, "leaf01", 8, 8, 0xcf08)
	leaf02 := newNode(check.NodeSwitch, 0x0002c90200400200, "leaf02", 8, 8, 0xcf08)
	up(leaf01, 0, 2)
	up(leaf02, 0, 7)

	sm := ca(0x0002c90300a00010, "sm01", 1, 0x101b)
	hca1 := ca(hca1Node, "demo-node HCA-1", 1, 0x101b)
	node02 := ca(0x0002c90300a00020, "node02", 1, 0x101b)
	hca2 := ca(hca2Node, "demo-node HCA-2", 2, 0x1021)
	node03 := ca(0x0002c90300a00030, "node03", 1, 0x101b)
	storage := ca(0x0002c90300a00040, "storage01", 1, 0x101b)
	gpu := ca(0x0002c90300a00050, "gpu01", 1, 0x1021)

	// The demo host's tables are its sysfs tree's (host/class/infiniband).
	up(sm, 1, 1, 0xffff, 0x8001, 0x8002, 0x8003, 0x8010)
	up(hca1, 1, 3, 0xffff, 0x8001, 0x0002, 0x8003, 0x0003, 0x0000, 0x8010)
	up(node02, 1, 4, 0xffff, 0x8001, 0x0002)
	up(hca2, 1, 9, 0x7fff, 0x0001, 0x0002)
	hca2.Port(2).PKeys = table(128, 0xffff) // DOWN: its table as the HCA keeps it
	up(node03, 1, 5, 0xffff, 0x0001, 0x8002)
	up(storage, 1, 6, 0xffff, 0x8001, 0x8010)
	up(gpu, 1, 8, 0x7fff, 0x0003)

	// Switch ports facing CAs hold the CA's keys (OpenSM's pkey_mgr_update_peer_port:
	// a limited key is left out where the full one is there) and enforce both ways.
	cable := func(sw *fabric.Node, p int, n *fabric.Node, np int) {
		link(sw, p, n, np)
		up(sw, p, 0)
		sp := sw.Port(p)
		sp.Enforcement = &check.Enforcement{Inbound: true, Outbound: true}
		var keys []check.PKey
		full := map[check.PartitionKey]bool{}
		for _, k := range n.Port(np).PKeys {
			if k.Valid() && k.IsFull() {
				full[k.Partition()] = true
			}
		}
		for _, k := range n.Port(np).PKeys {
			if k.Valid() && (k.IsFull() || !full[k.Partition()]) {
				keys = append(keys, k)
			}
		}
		sp.PKeys = table(sp.TableSize, keys...)
	}
	cable(leaf01, 1, sm, 1)
	cable(leaf01, 2, hca1, 1)
	cable(leaf01, 3, node02, 1)
	cable(leaf01, 4, hca2, 1)
	cable(leaf02, 1, node03, 1)
	cable(leaf02, 2, storage, 1)
	cable(leaf02, 3, gpu, 1)
	// The one thing wrong: leaf02[2] lost backup (0x8010), which storage01 holds.
	for i, k := range leaf02.Port(2).PKeys {
		if k == 0x8010 {
			leaf02.Port(2).PKeys[i] = 0
		}
	}
	// Two links between the leaves; their ports enforce nothing and hold the
	// default key only.
	for _, p := range []int{7, 8} {
		link(leaf01, p, leaf02, p)
		up(leaf01, p, 0, 0xffff)
		up(leaf02, p, 0, 0xffff)
	}

	f := &fabric.Fabric{Nodes: nodes, Local: check.PortID{Node: hca1Node, Port: 1}}
	f.Normalize()
	return f
}
