package cmdtest

// The shared fixtures, as paths from a command's package (cmd/ibkey/internal/NOUN, the
// directory its tests run in). They stay relative: they appear in the command lines of
// golden files.
const (
	// MLX5 is a host with mlx5_0 (one port), mlx5_1 (two ports, an unreadable P_Key
	// entry), mlx5_2 (RoCE), irdma0 (iWARP) and IPoIB interfaces (testdata/sysfs/mlx5).
	MLX5 = "../../../../testdata/sysfs/mlx5"
	// Dangling is a node whose class/infiniband/scif0 is a dangling link beside
	// mlx4_0 (testdata/sysfs/dangling); Odd one with what drivers and older kernels
	// write: link_layer with extra newlines, an InfiniBand port without gids/ and
	// pkeys/, an iWARP port whose counters hold "N/A (no PMA)" (testdata/sysfs/odd).
	Dangling = "../../../../testdata/sysfs/dangling"
	Odd      = "../../../../testdata/sysfs/odd"

	// The sample partitions.conf files of testdata/partitions.
	ClusterConf  = "../../../../testdata/partitions/cluster.conf"
	MistakesConf = "../../../../testdata/partitions/mistakes.conf"
	RejectedConf = "../../../../testdata/partitions/rejected.conf"
	ReconfAConf  = "../../../../testdata/partitions/reconf-a.conf"
	ReconfBConf  = "../../../../testdata/partitions/reconf-b.conf"
	// HeadNode is cluster.conf's management node (its SM port in the tests).
	HeadNode = "0x0002c90300001001"

	// SmallFabric is small.net swept after OpenSM applied cmd/ibkey/testdata/fabric/
	// partitions.conf; ChangedFabric the same with Switch1 port 2's table changed.
	SmallFabric   = "../../testdata/fabric/small.json"
	ChangedFabric = "../../testdata/fabric/small-changed.json"
)
