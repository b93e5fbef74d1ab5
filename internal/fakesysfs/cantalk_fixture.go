package fakesysfs

import "fmt"

// CanTalk is the can-talk fixture (testdata/sysfs/cantalk): port pairs the main fixture
// lacks. Every port is an ACTIVE InfiniBand port with a 32-entry table.
//   - hca0/1: 0xffff, 0x8001, 0x0002 (a usual compute node);
//   - hca1/1: 0xffff, 0x8003: shares only the default partition with hca0/1;
//   - hca2/1: 0x8004, 0x0005 and no default partition: shares nothing with hca1/1;
//   - hca3/1 and hca4/1: 0x7fff, 0x0002, only limited entries: they share two partitions
//     and neither works between them.
func CanTalk() Host {
	const base = 0x0002c90300c0ff00
	dev := func(n int, table ...string) Device {
		guid := uint64(base) + uint64(n)<<4
		name := fmt.Sprintf("hca%d", n)
		return ca(name, fmt.Sprintf("0000:%02x:00.0", 0x20+n), guid, "cantalk "+name, "20.31.1014", "MT4123",
			ibPort(1, guid+1, fmt.Sprintf("0x%x", 0x10+n), "0x1", Table(32, table...)))
	}
	return Host{Devices: []Device{
		dev(0, "0xffff", "0x8001", "0x0002"),
		dev(1, "0xffff", "0x8003"),
		dev(2, "0x8004", "0x0005"),
		dev(3, "0x7fff", "0x0002"),
		dev(4, "0x7fff", "0x0002"),
	}}
}
