// Package fsread reads the files ibkey is given or finds: partitions.conf, fabric files,
// sysfs attributes, the umad ibdev lookup. Every read is bounded by a size that fits the
// file's kind, opens without blocking and refuses what is not a regular file (a FIFO,
// /dev/zero, a socket, a directory), naming it in a one-line error. Kernel attributes
// (sysfs) are regular files to fstat(2), so they pass.
//
// A Root confines reads to a directory tree (a --sysfs tree): symlinks inside it are
// followed only while they stay inside (openat2(2) RESOLVE_BENEATH; os.Root on kernels
// before 5.6), which the kernel's own sysfs layout always does
// (class/infiniband/DEV -> ../../devices/...).
package fsread

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Size bounds for the kinds of files ibkey reads.
const (
	// AttrMax bounds one kernel attribute: sysfs show functions write at most a page
	// (Documentation/filesystems/sysfs.rst, "show() ... PAGE_SIZE"); 64 KiB allows the
	// largest page size in use (arm64/ppc64 64 KiB pages).
	AttrMax = 64 << 10
)

// Sentinels wrapped by *Error, for errors.Is.
var (
	ErrNotRegular  = errors.New("not a regular file")
	ErrTooLarge    = errors.New("file too large")
	ErrOutsideRoot = errors.New("symlink leads outside the root")
)

// Error is a file fsread refused: Path names it as the caller gave it, Problem says why
// in a few words ("is a FIFO (named pipe), not a regular file").
type Error struct {
	Path    string
	Problem string
	Err     error // ErrNotRegular, ErrTooLarge or ErrOutsideRoot
}

func (e *Error) Error() string { return e.Path + ": " + e.Problem }
func (e *Error) Unwrap() error { return e.Err }

// kindOf names a file type for messages.
func kindOf(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFIFO:
		return "a FIFO (named pipe)"
	case unix.S_IFCHR:
		return "a character device"
	case unix.S_IFBLK:
		return "a block device"
	case unix.S_IFSOCK:
		return "a socket"
	case unix.S_IFDIR:
		return "a directory"
	case unix.S_IFLNK:
		return "a symlink"
	}
	return "not a regular file"
}

func notRegular(name string, mode uint32) *Error {
	return &Error{Path: name, Problem: "is " + kindOf(mode) + ", not a regular file", Err: ErrNotRegular}
}

// TooLarge is the error for a file past its bound; what names the kind ("a partitions file").
func TooLarge(name string, limit int64, what string) *Error {
	p := "larger than " + Size(limit)
	if what != "" {
		p += ": too large for " + what
	}
	return &Error{Path: name, Problem: p, Err: ErrTooLarge}
}

// Size prints a byte count the way limits are given: 64 KiB, 16 MiB, 1 GiB.
func Size(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return strconv.FormatInt(n>>30, 10) + " GiB"
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// openFlags: never block on open (a FIFO without a writer), never become the
// controlling terminal, never leak into children.
const openFlags = unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOCTTY | unix.O_NONBLOCK

// checkFD refuses a descriptor that is not a regular file. It returns the file's size.
func checkFD(fd int, name string) (int64, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, &fs.PathError{Op: "fstat", Path: name, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return 0, notRegular(name, uint32(st.Mode))
	}
	return st.Size, nil
}

// openErr describes a failed open. Opening a socket fails with ENXIO, and O_NOFOLLOW on a
// symlink with ELOOP: both are named by what the path is, not the errno.
func openErr(dirfd int, rel, name string, err error) error {
	if err == unix.ENXIO || err == unix.ELOOP {
		var st unix.Stat_t
		if unix.Fstatat(dirfd, rel, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT != unix.S_IFREG {
			if st.Mode&unix.S_IFMT == unix.S_IFLNK {
				// A symlink where a kernel attribute belongs (sysfs has none there), or a
				// link to itself.
				return &fs.PathError{Op: "open", Path: name, Err: err}
			}
			return notRegular(name, uint32(st.Mode))
		}
	}
	return &fs.PathError{Op: "open", Path: name, Err: err}
}

// File is an open regular file whose reads stop with an *Error past its bound.
type File struct {
	f     *os.File
	name  string
	limit int64
	what  string
	n     int64
	size  int64
}

// Open opens a file the user named (a partitions file, a fabric file) for a streaming
// parser: symlinks are followed (the user chose the path), the open does not block, and
// anything but a regular file is refused with an *Error. Reading more than limit bytes
// fails with an *Error wrapping ErrTooLarge; what names the kind in that message
// ("a partitions file"). A file whose size already exceeds limit is refused at once.
func Open(name string, limit int64, what string) (*File, error) {
	fd, err := unix.Open(name, openFlags, 0)
	if err != nil {
		return nil, openErr(unix.AT_FDCWD, name, name, err)
	}
	size, err := checkFD(fd, name)
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	if size > limit {
		unix.Close(fd)
		return nil, TooLarge(name, limit, what)
	}
	return &File{f: os.NewFile(uintptr(fd), name), name: name, limit: limit, what: what, size: size}, nil
}

// Read reads up to the bound; the byte after it is an error, not a silent truncation.
func (f *File) Read(p []byte) (int, error) {
	if f.n > f.limit {
		return 0, TooLarge(f.name, f.limit, f.what)
	}
	if int64(len(p)) > f.limit+1-f.n {
		p = p[:f.limit+1-f.n]
	}
	n, err := f.f.Read(p)
	f.n += int64(n)
	if f.n > f.limit {
		return n - int(f.n-f.limit), TooLarge(f.name, f.limit, f.what)
	}
	return n, err
}

// Size is the size fstat reported at open (0 for most kernel attributes).
func (f *File) Size() int64 { return f.size }

// Name is the path as given to Open.
func (f *File) Name() string { return f.name }

// Close closes the file.
func (f *File) Close() error { return f.f.Close() }

// ReadFile reads a whole file the user named, as Open does, into memory.
func ReadFile(name string, limit int64, what string) ([]byte, error) {
	f, err := Open(name, limit, what)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, 0, min(f.size, limit)+512)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// ReadAttr reads one kernel attribute outside any Root: the umad ibdev lookup
// (/sys/class/infiniband_mad/umadN/ibdev) and the like. Bounded by AttrMax; symlinks
// in the last component are refused (sysfs attributes are never links).
func ReadAttr(name string) ([]byte, error) {
	return readAt(unix.AT_FDCWD, "", name, nil, true, true)
}

// readAt opens rel under dirfd (openat(2)), refuses a non-regular file, and reads at
// most AttrMax bytes into buf (grown as needed). A sysfs attribute is produced whole by
// one read of a large enough buffer (rdma-core's ibv_read_sysfs_file relies on the
// same); a full buffer is grown and read again, so ordinary files read correctly too.
//
// Messages name the file dir/rel (rel alone when dir is ""), built only on error: a
// P_Key table is read one file at a time and must not pay for it.
//
// checkKind false skips the fstat(2) that refuses a non-regular file, for a file a
// directory listing already showed as regular (Dir.Scan).
func readAt(dirfd int, dir, rel string, buf []byte, nofollow, checkKind bool) ([]byte, error) {
	flags := openFlags
	if nofollow {
		flags |= unix.O_NOFOLLOW
	}
	fd, err := unix.Openat(dirfd, rel, flags, 0)
	if err != nil {
		return nil, openErr(dirfd, rel, joinName(dir, rel), err)
	}
	return readFD(fd, dir, rel, buf, checkKind)
}

func joinName(dir, rel string) string {
	if dir == "" {
		return rel
	}
	return dir + "/" + rel
}

// readFD reads and closes fd, the file dir/rel; with checkKind, only if it is a regular
// file.
func readFD(fd int, dir, rel string, buf []byte, checkKind bool) ([]byte, error) {
	defer unix.Close(fd)
	if checkKind {
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return nil, &fs.PathError{Op: "fstat", Path: joinName(dir, rel), Err: err}
		}
		if st.Mode&unix.S_IFMT != unix.S_IFREG {
			return nil, notRegular(joinName(dir, rel), uint32(st.Mode))
		}
	}
	if cap(buf) < 64 {
		buf = make([]byte, 0, 64)
	}
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			if cap(buf) > AttrMax {
				return nil, TooLarge(joinName(dir, rel), AttrMax, "a kernel attribute")
			}
			buf = append(buf, make([]byte, cap(buf))...)[:len(buf)]
		}
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: joinName(dir, rel), Err: err}
		}
		buf = buf[:len(buf)+n]
		if n == 0 || len(buf) < cap(buf) {
			if len(buf) > AttrMax {
				return nil, TooLarge(joinName(dir, rel), AttrMax, "a kernel attribute")
			}
			return buf, nil
		}
	}
}
