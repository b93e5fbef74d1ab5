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
)
