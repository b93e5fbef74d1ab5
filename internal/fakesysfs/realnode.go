package fakesysfs

// What real machines write (issue 24, items 6-10), from saved sysfs trees of real nodes.

const (
	mlx4GUID  = 0x0002c90300f1e2a0
	cxgb4GUID = 0x0007430000a1b200
)

// mlx4Port is a ConnectX-3 port (mlx4_ib): 128-entry table, 4X FDR.
func mlx4Port(num int, lid string, table []string) Port {
	p := ibPort(num, mlx4GUID+uint64(num), lid, "0x1", table)
	p.Rate, p.CapMask = "56 Gb/sec (4X FDR)", "0x02514868"
	return p
}

// Dangling is a compute node whose saved tree has one device entry without its
// target: class/infiniband/scif0 (the Xeon Phi SCIF device of Intel's MPSS) links to
// devices/virtual/infiniband/scif0, which was not captured. The rest reads:
//   - mlx4_0/1: ACTIVE InfiniBand, 0xffff, 0x8001 and 0x0002 (limited), IPoIB ib0 and
//     ib0.8001; mlx4_0/2: DOWN, no cable.
func Dangling() Host {
	p1 := mlx4Port(1, "0x2a", Table(128, "0xffff", "0x8001", "0x0002"))
	p1.Counters = IBCounters(map[string]string{"port_rcv_constraint_errors": "5"})
	p2 := mlx4Port(2, "0x0", Table(128, "0xffff"))
	p2.State, p2.PhysState, p2.SMLID = "1: DOWN", "2: Polling", "0x0"
	mlx4 := ca("mlx4_0", "0000:81:00.0", mlx4GUID, "c401-101 HCA-1", "2.42.5000", "MT4099", p1, p2)
	mlx4.BoardID, mlx4.HWRev = "MT_1090120019", "0"
	return Host{
		Devices:  []Device{mlx4},
		Dangling: []string{"scif0"},
		Net: []NetIf{
			ipoib("ib0", "mlx4_0", 0x80000048, mlx4GUID+1, "0xffff", "", "up"),
			ipoib("ib0.8001", "mlx4_0", 0x8000004a, mlx4GUID+1, "0x8001", "ib0", "up"),
		},
	}
}

// Odd is a node whose saved tree holds what drivers and older kernels really write:
//   - mlx4_0/1: ACTIVE InfiniBand whose link_layer is "InfiniBand" and two newlines
//     (the trailing white space is not part of the value);
//   - mlx4_0/2: ACTIVE InfiniBand without gids/ and without pkeys/ (the saved tree
//     lost them; the kernel writes both for every InfiniBand port);
//   - cxgb4_0/1: an iWARP port (Chelsio T5, node type RNIC) with no pkeys/ (iWARP has
//     no P_Key table) and counters/ files holding the kernel's "N/A (no PMA)" (older
//     kernels, drivers/infiniband/core/sysfs.c show_pma_counter, wrote it for a
//     device without a performance management agent).
func Odd() Host {
	p1 := mlx4Port(1, "0x2b", Table(128, "0xffff", "0x8001"))
	p1.LinkLayer = "InfiniBand\n"
	p2 := mlx4Port(2, "0x2c", nil)
	p2.GIDs = nil
	noPMA := map[string]string{}
	for n := range IBCounters(nil) {
		noPMA[n] = "N/A (no PMA)"
	}
	iw := ethPort("0x00000000", "10 Gb/sec (4X SDR)", "0007:4300:00a1:b200:0000:0000:0000:0000")
	iw.Counters = noPMA
	return Host{Devices: []Device{
		{Name: "cxgb4_0", PCI: "0000:06:00.4", NodeType: "4: RNIC", NodeGUID: GUID(cxgb4GUID),
			SysImageGUID: GUID(cxgb4GUID), NodeDesc: "c401-102", FWVer: "1.26.4.0", HCAType: "T580-CR",
			BoardID: "T580-CR", HWRev: "0x0", Ports: []Port{iw}},
		ca("mlx4_0", "0000:81:00.0", mlx4GUID, "c401-102 HCA-1", "2.42.5000", "MT4099", p1, p2),
	}}
}
