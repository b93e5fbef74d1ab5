//go:build !linux

package fsread

import (
	"os"

	"golang.org/x/sys/unix"
)

// oPath: without O_PATH a plain read-only open serves Stat.
const oPath = unix.O_RDONLY

// openBeneath reports ENOSYS where there is no openat2(2); Root then uses os.Root.
func openBeneath(int, string, int) (int, error) { return -1, unix.ENOSYS }

// scanDir lists f with os.File.ReadDir where there is no getdents64(2).
func scanDir(f *os.File, fn func(name []byte, kind Kind)) error {
	ents, err := f.ReadDir(-1)
	if err != nil {
		return err
	}
	for _, e := range ents {
		kind := KindOther
		if e.Type().IsRegular() {
			kind = KindRegular
		}
		fn([]byte(e.Name()), kind)
	}
	return nil
}
