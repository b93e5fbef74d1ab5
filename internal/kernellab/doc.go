// Package kernellab runs commands on a real Linux RDMA stack for tests: QEMU (TCG)
// boots Debian's own kernel with the host's root file system shared read-only into the
// guest, loads the kernel's software RoCE driver (rdma_rxe) on a dummy netdev, runs a
// list of commands in one boot and brings each command's stdout, stderr and exit
// status back through a shared writable 9p directory. scripts/kernel-lab installs
// and boots; harness_test.go plans a boot and reads its results, and the tests read
// from that one boot. The package has no non-test code: the program the guest runs
// to exercise ibkey's packages (the probe) is this package's test binary.
//
// TCG is slow, so a test builds everything it wants to run first (host binaries are
// visible in the guest at the same paths) and asks for one boot with many commands.
package kernellab
