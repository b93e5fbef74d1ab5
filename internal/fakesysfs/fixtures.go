package fakesysfs

import (
	"fmt"
	"strconv"
)

// The committed trees under testdata/sysfs and the embedded demo host are written from
// these specs by `make fixtures` (go run ./internal/tools/mkhost).

const (
	mlx5NodeGUID = 0x0002c90300a1b2c0
	mlx51GUID    = 0x0002c90300a1b3d0
	roceGUID     = 0x0002c90300a1b4e0
)

// ca is a channel adapter (node type 1) whose system image GUID is its node GUID, as
// on a single-adapter card.
func ca(name, pci string, guid uint64, desc, fw, hcaType string, ports ...Port) Device {
	return Device{Name: name, PCI: pci, NodeType: "1: CA", NodeGUID: GUID(guid), SysImageGUID: GUID(guid),
		NodeDesc: desc, FWVer: fw, HCAType: hcaType, Ports: ports}
}

func ibPort(num int, guid uint64, lid, sm string, table []string) Port {
	return Port{
		Num: num, State: "4: ACTIVE", PhysState: "5: LinkUp", LID: lid, SMLID: sm,
		LMC: "0", SMSL: "0", CapMask: "0x2651e848", Rate: "100 Gb/sec (4X EDR)",
		LinkLayer: "InfiniBand", GIDs: []string{GID0(guid)}, PKeys: table,
		Counters: IBCounters(nil),
	}
}

// ethPort is port 1 of a device whose link layer is Ethernet (RoCE, iWARP): ACTIVE,
// no LIDs, one GID.
func ethPort(capMask, rate, gid string) Port {
	return Port{Num: 1, State: "4: ACTIVE", PhysState: "5: LinkUp", LID: "0x0", SMLID: "0x0",
		LMC: "0", SMSL: "0", CapMask: capMask, Rate: rate, LinkLayer: "Ethernet", GIDs: []string{gid}}
}

// ipoib is the IPoIB interface name on device's port whose GUID is portGUID, with
// queue pair qpn, its P_Key and parent ("" for a parent interface).
func ipoib(name, device string, qpn uint32, portGUID uint64, pkey, parent, operState string) NetIf {
	return NetIf{Name: name, Device: device, Type: "32", Address: IPoIBAddress(qpn, portGUID), PKey: pkey,
		Parent: parent, DevPort: "0", OperState: operState}
}

// MLX5 is the main fixture: a host with
//   - mlx5_0/1: ACTIVE IB, 128 entries with holes, a key held as both full and limited,
//     an invalid 0x8000 entry, IPoIB parent and children (one whose key is missing);
//   - mlx5_1/1: ACTIVE IB with only limited entries and one unreadable entry;
//     mlx5_1/2: DOWN with stale entries;
//   - mlx5_2/1: RoCE (Ethernet link layer, one-entry table), no counters/;
//   - irdma0/1: iWARP (RNIC), no pkeys/ and no counters/;
//   - eth0: an Ethernet interface that is not IPoIB.
func MLX5() Host {
	p0 := ibPort(1, mlx5NodeGUID+1, "0x1", "0x1", Table(128,
		"0xffff", "0x8001", "0x0002", "0x0000", "0x8005", "0x0005", "0x8000", "0x0000", "0x8010"))
	p0.Counters = IBCounters(map[string]string{"port_rcv_constraint_errors": "17", "port_xmit_constraint_errors": "3", "symbol_error": "2"})
	p1 := ibPort(1, mlx51GUID+1, "0x7", "0x1", Table(128, "0x7fff", "0x0001", "0x0002", "0x0000", "0x0003"))
	p1.Unreadable = []int{3}
	p1.Counters = IBCounters(map[string]string{"port_rcv_constraint_errors": "255"})
	p2 := ibPort(2, mlx51GUID+2, "0x0", "0x0", Table(128, "0xffff", "0x8001"))
	p2.State, p2.PhysState, p2.Rate = "1: DOWN", "3: Disabled", "10 Gb/sec (4X SDR)"
	roce := ethPort("0x04010000", "100 Gb/sec (2X HDR)", "fe80:0000:0000:0000:0202:c9ff:fea1:b4e1")
	roce.PKeys = []string{"0xffff"}
	iw := ethPort("0x00000000", "25 Gb/sec (1X EDR)", "3cfd:fe9d:7c10:0000:0000:0000:0000:0000")
	mlx50 := ca("mlx5_0", "0000:03:00.0", mlx5NodeGUID, "node01 HCA-1", "20.31.1014", "MT4123", p0)
	mlx50.BoardID, mlx50.HWRev = "MT_0000000223", "0x0"
	return Host{
		Devices: []Device{
			mlx50,
			ca("mlx5_1", "0000:04:00.0", mlx51GUID, "node01 HCA-2", "20.31.1014", "MT4123", p1, p2),
			ca("mlx5_2", "0000:05:00.0", roceGUID, "node01 RoCE", "22.36.1010", "MT4125", roce),
			{Name: "irdma0", PCI: "0000:06:00.0", NodeType: "4: RNIC", NodeGUID: "3efd:fe9d:7c10:0000",
				SysImageGUID: "3efd:fe9d:7c10:0000", NodeDesc: "irdma", FWVer: "1.57", Ports: []Port{iw}},
		},
		Net: []NetIf{
			ipoib("ib0", "mlx5_0", 0x00001049, mlx5NodeGUID+1, "0xffff", "", "up"),
			ipoib("ib0.8001", "mlx5_0", 0x0000104b, mlx5NodeGUID+1, "0x8001", "ib0", "up"),
			// The table holds 0x0002 (limited): the child comes up as a limited member.
			ipoib("ib0.8002", "mlx5_0", 0x0000104d, mlx5NodeGUID+1, "0x8002", "ib0", "up"),
			// Key 0x0004 is not in the table: the kernel keeps it down ("PKEY is not assigned").
			ipoib("ib0.8004", "mlx5_0", 0x0000104f, mlx5NodeGUID+1, "0x8004", "ib0", "lowerlayerdown"),
			ipoib("ib1", "mlx5_1", 0x00001051, mlx51GUID+1, "0xffff", "", "up"),
			{Name: "eth0", Device: "mlx5_2", Type: "1", Address: "02:02:c9:a1:b4:e1", OperState: "up"},
		},
	}
}

// Simulator is a small tree the way a simulator writes it: no trailing newlines.
func Simulator() Host {
	p := ibPort(1, 0x0002c90300000201, "0x2", "0x1", Table(64, "0xffff", "0x8001", "0x0002"))
	p.Rate = "10 Gb/sec (4X)"
	p.Counters = IBCounters(map[string]string{"port_rcv_constraint_errors": "4"})
	return Host{NoNewline: true, Devices: []Device{ca("ibsim0", "0000:00:00.0", 0x0002c90300000200, "HcaA", "1.0", "", p)}}
}

// Large is the benchmark host: devices x ports x entries, every tenth entry valid.
func Large(devices, ports, entries int) Host {
	var h Host
	for d := 0; d < devices; d++ {
		guid := uint64(0x0002c90301000000) + uint64(d)<<8
		dev := ca("mlx5_"+strconv.Itoa(d), fmt.Sprintf("0000:%02x:00.0", d+16), guid, fmt.Sprintf("bench HCA-%d", d), "20.31.1014", "MT4123")
		for p := 1; p <= ports; p++ {
			t := Table(entries)
			t[0] = "0xffff"
			for i := 1; i < entries; i++ {
				if i%10 == 0 {
					t[i] = fmt.Sprintf("0x%04x", 0x8000|i)
				}
			}
			dev.Ports = append(dev.Ports, ibPort(p, guid+uint64(p), fmt.Sprintf("0x%x", d*ports+p), "0x1", t))
		}
		h.Devices = append(h.Devices, dev)
	}
	return h
}
