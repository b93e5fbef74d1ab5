package cantalk

// The fixtures of can-talk's tests, as paths from this package's directory. They stay
// relative: they appear in the command lines of golden files.
const (
	// The sample partitions.conf files of testdata/partitions.
	clusterConf  = "../../../../testdata/partitions/cluster.conf"
	mistakesConf = "../../../../testdata/partitions/mistakes.conf"
	rejectedConf = "../../../../testdata/partitions/rejected.conf"
	reconfAConf  = "../../../../testdata/partitions/reconf-a.conf"
	reconfBConf  = "../../../../testdata/partitions/reconf-b.conf"
	// headNode is cluster.conf's management node (its SM port in the tests).
	headNode = "0x0002c90300001001"

	// smallFabric is small.net swept after OpenSM applied cmd/ibkey/testdata/fabric/
	// partitions.conf.
	smallFabric = "../../testdata/fabric/small.json"
)
