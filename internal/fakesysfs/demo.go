package fakesysfs

// Demo is the embedded demo host (`ibkey --demo`): a made-up machine "demo-node" with
//   - mlx5_0/1: ACTIVE InfiniBand, full and limited entries, a key held both ways, a hole
//     left by a removed partition, IPoIB ib0 with children (ib0.8020's key is missing);
//   - mlx5_1/1: ACTIVE InfiniBand with only limited entries; mlx5_1/2: DOWN;
//   - mlx5_2/1: RoCE.
func Demo() Host {
	const g0, g1, g2 = 0x248a0703005e1a20, 0x248a0703005e1b30, 0x0c42a1030062c340
	p0 := ibPort(1, g0+1, "0x3", "0x1", Table(128,
		"0xffff", "0x8001", "0x0002", "0x8003", "0x0003", "0x0000", "0x8010"))
	p0.Counters = IBCounters(map[string]string{"port_rcv_constraint_errors": "12", "port_xmit_constraint_errors": "0"})
	p1 := ibPort(1, g1+1, "0x9", "0x1", Table(128, "0x7fff", "0x0001", "0x0002"))
	p1.Rate = "200 Gb/sec (4X HDR)"
	p2 := ibPort(2, g1+2, "0x0", "0x0", Table(128, "0xffff"))
	p2.State, p2.PhysState = "1: DOWN", "2: Polling"
	p2.Rate = "10 Gb/sec (4X SDR)"
	roce := ethPort("0x04010000", "100 Gb/sec (4X EDR)", "fe80:0000:0000:0000:0e42:a1ff:fe62:c341")
	roce.PKeys, roce.Counters = []string{"0xffff"}, IBCounters(nil)
	mlx50 := ca("mlx5_0", "0000:17:00.0", g0, "demo-node HCA-1", "20.39.1002", "MT4123", p0)
	mlx50.BoardID, mlx50.HWRev = "MT_0000000222", "0x0"
	mlx51 := ca("mlx5_1", "0000:31:00.0", g1, "demo-node HCA-2", "28.39.1002", "MT4129", p1, p2)
	mlx52 := ca("mlx5_2", "0000:4b:00.0", g2, "demo-node RoCE", "22.39.1002", "MT4125", roce)
	mlx50.Driver, mlx51.Driver, mlx52.Driver = "mlx5_core", "mlx5_core", "mlx5_core"
	return Host{
		NoSymlinks: true,
		Devices: []Device{
			mlx50, mlx51, mlx52,
		},
		Net: []NetIf{
			ipoib("ib0", "mlx5_0", 0x00001049, g0+1, "0xffff", "", "up"),
			ipoib("ib0.8001", "mlx5_0", 0x0000104b, g0+1, "0x8001", "ib0", "up"),
			ipoib("ib0.8002", "mlx5_0", 0x0000104d, g0+1, "0x8002", "ib0", "up"),
			ipoib("ib0.8020", "mlx5_0", 0x0000104f, g0+1, "0x8020", "ib0", "lowerlayerdown"),
			ipoib("ib1", "mlx5_1", 0x00001051, g1+1, "0xffff", "", "up"),
		},
	}
}
