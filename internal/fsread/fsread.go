// Package fsread reads the files ibkey is given or finds: partitions.conf, fabric files,
// sysfs attributes, the umad ibdev lookup. Every read is bounded by a size that fits the
// file's kind, opens without blocking and refuses what is not a regular file (a FIFO,
// /dev/zero, a socket, a directory), naming it in a one-line error. Kernel attributes
// (sysfs) are regular files to fstat(2), so they pass.
//
// A Root confines reads to a directory tree (a --sysfs tree) through os.Root: symlinks
// inside it are followed while they stay inside, which the kernel's own sysfs layout
// always does (class/infiniband/DEV -> ../../devices/...).
package fsread

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"strconv"
	"syscall"
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
func kindOf(mode fs.FileMode) string {
	switch {
	case mode&fs.ModeNamedPipe != 0:
		return "a FIFO (named pipe)"
	case mode&fs.ModeCharDevice != 0:
		return "a character device"
	case mode&fs.ModeDevice != 0:
		return "a block device"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	case mode.IsDir():
		return "a directory"
	case mode&fs.ModeSymlink != 0:
		return "a symlink"
	}
	return "not a regular file"
}

func notRegular(name string, mode fs.FileMode) *Error {
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
// controlling terminal (os adds O_CLOEXEC).
const openFlags = os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOCTTY

// regular returns f's size, or refuses f (and closes it) when it is not a regular file.
func regular(f *os.File, name string) (int64, error) {
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = notRegular(name, fi.Mode())
	}
	if err != nil {
		f.Close()
		return 0, err
	}
	return fi.Size(), nil
}

// openErr describes a failed open. Opening a socket fails with ENXIO, and O_NOFOLLOW on a
// symlink with ELOOP: both are named by what the path is (lstat), not the errno.
func openErr(err error, name string, lstat func() (fs.FileInfo, error)) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	if err == syscall.ENXIO || err == syscall.ELOOP { // a symlink keeps ELOOP
		if fi, lerr := lstat(); lerr == nil && !fi.Mode().IsRegular() && fi.Mode()&fs.ModeSymlink == 0 {
			return notRegular(name, fi.Mode())
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
	if name == "" {
		// open(2) of "" fails with ENOENT; quoted, the message shows what was given
		// (`open "": ...`, not `open : ...`).
		return nil, &fs.PathError{Op: "open", Path: `""`, Err: syscall.ENOENT}
	}
	f, err := os.OpenFile(name, openFlags, 0)
	if err != nil {
		return nil, openErr(err, name, func() (fs.FileInfo, error) { return os.Lstat(name) })
	}
	size, err := regular(f, name)
	if err != nil {
		return nil, err
	}
	if size > limit {
		f.Close()
		return nil, TooLarge(name, limit, what)
	}
	return &File{f: f, name: name, limit: limit, what: what, size: size}, nil
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

// Close closes the file.
func (f *File) Close() error { return f.f.Close() }

// ReadFile reads a whole file the user named, as Open does, into memory.
func ReadFile(name string, limit int64, what string) ([]byte, error) {
	f, err := Open(name, limit, what)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(f, make([]byte, 0, min(f.size, limit)+512))
}

// ReadAttr reads one kernel attribute outside any Root: the umad ibdev lookup
// (/sys/class/infiniband_mad/umadN/ibdev) and the like. Bounded by AttrMax; symlinks
// in the last component are refused (sysfs attributes are never links).
func ReadAttr(name string) ([]byte, error) {
	f, err := os.OpenFile(name, openFlags|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, openErr(err, name, func() (fs.FileInfo, error) { return os.Lstat(name) })
	}
	return readAttr(f, name)
}

// readAttr reads the kernel attribute f (named name in messages), bounded by AttrMax,
// and closes it; only a regular file is read.
func readAttr(f *os.File, name string) ([]byte, error) {
	if _, err := regular(f, name); err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := readAll(&File{f: f, name: name, limit: AttrMax, what: "a kernel attribute"}, make([]byte, 0, 64))
	if err != nil {
		var fe *Error
		if !errors.As(err, &fe) {
			err = &fs.PathError{Op: "read", Path: name, Err: unwrap(err)}
		}
		return nil, err
	}
	return b, nil
}

// readAll reads f to its end into buf, growing it as needed. A sysfs attribute is
// produced whole by the first read of a large enough buffer (rdma-core's
// ibv_read_sysfs_file relies on the same); the next read returns 0.
func readAll(f *File, buf []byte) ([]byte, error) {
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

func unwrap(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
