package fsread

import (
	"bytes"
	"encoding/binary"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// oPath opens a path only to stat it (open(2): O_PATH).
const oPath = unix.O_PATH

// openBeneath is openat2(2) with RESOLVE_BENEATH: the lookup fails with EXDEV if it
// would leave dirfd's tree, and magic links (/proc/self/fd/N) are refused.
func openBeneath(dirfd int, rel string, flags int) (int, error) {
	how := unix.OpenHow{Flags: uint64(flags), Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS}
	return unix.Openat2(dirfd, rel, &how)
}

// scanDir lists f with getdents64(2), without a string or an fs.DirEntry per entry.
func scanDir(f *os.File, fn func(name []byte, kind Kind)) error {
	var buf [8192]byte
	fd := int(f.Fd())
	defer runtime.KeepAlive(f)
	for {
		n, err := unix.Getdents(fd, buf[:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n <= 0 {
			return nil
		}
		// struct linux_dirent64 (getdents64(2)): d_ino u64, d_off s64, d_reclen u16,
		// d_type u8, d_name NUL-terminated.
		for off := 0; off+19 < n; {
			reclen := int(binary.NativeEndian.Uint16(buf[off+16:]))
			if reclen < 20 || off+reclen > n {
				return unix.EIO
			}
			name := buf[off+19 : off+reclen]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			typ := buf[off+18]
			off += reclen
			if string(name) == "." || string(name) == ".." {
				continue
			}
			kind := KindOther
			switch typ {
			case unix.DT_REG:
				kind = KindRegular
			case unix.DT_UNKNOWN:
				kind = KindUnknown
			}
			fn(name, kind)
		}
	}
}
