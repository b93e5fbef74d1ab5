package fsread

import "golang.org/x/sys/unix"

// oPath opens a path only to stat it (open(2): O_PATH).
const oPath = unix.O_PATH

// openBeneath is openat2(2) with RESOLVE_BENEATH: the lookup fails with EXDEV if it
// would leave dirfd's tree, and magic links (/proc/self/fd/N) are refused.
func openBeneath(dirfd int, rel string, flags int) (int, error) {
	how := unix.OpenHow{Flags: uint64(flags), Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS}
	return unix.Openat2(dirfd, rel, &how)
}
