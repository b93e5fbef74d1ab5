//go:build !linux

package fsread

import "golang.org/x/sys/unix"

// oPath: without O_PATH a plain read-only open serves Stat.
const oPath = unix.O_RDONLY

// openBeneath reports ENOSYS where there is no openat2(2); Root then uses os.Root.
func openBeneath(int, string, int) (int, error) { return -1, unix.ENOSYS }
