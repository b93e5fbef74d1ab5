package fsread

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// Root is a directory tree that reads cannot leave: a --sysfs tree, a saved copy of
// /sys, a test fixture. Paths are slash-separated and relative to the root.
//
// Symlinks are followed while they resolve inside the root, as the kernel's sysfs links
// do (class/infiniband/rxe0 -> ../../devices/virtual/infiniband/rxe0; see
// Documentation/ABI/stable/sysfs-class-infiniband); one that leads out (to /etc/passwd,
// or ../../.. above the root) fails with an *Error wrapping ErrOutsideRoot, and nothing
// of the target is read. The check is openat2(2) with RESOLVE_BENEATH (Linux 5.6+) and,
// where the kernel lacks openat2, os.Root, which walks the path itself.
type Root struct {
	dir  string
	once sync.Once
	f    *os.File // the root directory; its finalizer closes the descriptor
	err  error
	// noOpenat2 is set once openat2 returned ENOSYS (kernels before 5.6); reads then
	// go through osRoot, opened once.
	noOpenat2 atomic.Bool
	osRoot    func() (*os.Root, error)
}

// NewRoot returns the tree rooted at dir. The directory is opened on first use, so a
// root that does not exist fails each read with the path it was asked for.
func NewRoot(dir string) *Root {
	return &Root{dir: dir, osRoot: sync.OnceValues(func() (*os.Root, error) { return os.OpenRoot(dir) })}
}

// Dir is the directory the root was made from.
func (r *Root) Dir() string { return r.dir }

func (r *Root) open() error {
	r.once.Do(func() {
		r.f, r.err = os.OpenFile(r.dir, os.O_RDONLY|unix.O_DIRECTORY, 0)
	})
	return r.err
}

// openat opens rel beneath the root with flags.
func (r *Root) openat(rel string, flags int) (int, error) {
	if err := r.open(); err != nil {
		// The root itself is missing: say so for the path asked for.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return -1, &fs.PathError{Op: "open", Path: rel, Err: err}
	}
	rel = path.Clean(rel)
	if !r.noOpenat2.Load() {
		for range 8 {
			fd, err := openBeneath(int(r.f.Fd()), rel, flags)
			runtime.KeepAlive(r.f)
			switch err {
			case nil:
				return fd, nil
			case unix.EAGAIN, unix.EINTR:
				// RESOLVE_BENEATH returns EAGAIN when a rename raced the lookup: retry.
				continue
			case unix.EXDEV:
				return -1, r.outside(rel)
			case unix.ENOSYS:
				r.noOpenat2.Store(true)
			default:
				return -1, openErr(int(r.f.Fd()), rel, rel, err)
			}
			break
		}
	}
	return r.openFallback(rel, flags)
}

func (r *Root) outside(rel string) error {
	return &Error{Path: rel, Problem: "a symlink on the way leads outside " + r.dir + " (refused: reads stay inside the tree)", Err: ErrOutsideRoot}
}

// openFallback opens rel with os.Root, which refuses symlinks that leave the root.
func (r *Root) openFallback(rel string, flags int) (int, error) {
	or, err := r.osRoot()
	if err != nil {
		return -1, &fs.PathError{Op: "open", Path: rel, Err: unwrapPath(err)}
	}
	// os.Root refuses O_NOFOLLOW's job itself only for links that leave the root;
	// a final-component symlink is checked here as openat(2) would.
	if flags&unix.O_NOFOLLOW != 0 {
		if fi, err := or.Lstat(rel); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return -1, &fs.PathError{Op: "open", Path: rel, Err: unix.ELOOP}
		}
	}
	f, err := or.OpenFile(rel, flags&^unix.O_NOFOLLOW, 0)
	if err != nil {
		// os.Root's error for a path leaving the root is unexported ("path escapes
		// from parent"); anything else keeps its errno.
		if e := unwrapPath(err); e != nil && strings.Contains(e.Error(), "escapes") {
			return -1, r.outside(rel)
		}
		return -1, &fs.PathError{Op: "open", Path: rel, Err: unwrapPath(err)}
	}
	defer f.Close()
	return unix.Dup(int(f.Fd()))
}

// ReadFile reads the kernel attribute at rel, bounded by AttrMax, into buf (scratch
// space reused across calls; may be nil). The last component must not be a symlink
// (kernel attributes never are) and must be a regular file.
func (r *Root) ReadFile(rel string, buf []byte) ([]byte, error) {
	fd, err := r.openat(rel, openFlags|unix.O_NOFOLLOW)
	if err != nil {
		return nil, err
	}
	return readFD(fd, "", rel, buf, true)
}

// Stat returns the file information of rel (symlinks followed inside the root).
func (r *Root) Stat(rel string) (fs.FileInfo, error) {
	if r.noOpenat2.Load() {
		or, err := r.osRoot()
		if err != nil {
			return nil, &fs.PathError{Op: "stat", Path: rel, Err: unwrapPath(err)}
		}
		fi, err := or.Stat(rel)
		if err != nil && strings.Contains(unwrapPath(err).Error(), "escapes") {
			return nil, r.outside(rel)
		}
		return fi, err
	}
	fd, err := r.openat(rel, oPath|unix.O_CLOEXEC)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), path.Join(r.dir, rel))
	defer f.Close()
	return f.Stat()
}

// ReadDir lists the directory rel, sorted by name.
func (r *Root) ReadDir(rel string) ([]fs.DirEntry, error) {
	d, err := r.OpenDir(rel)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.ReadDir()
}

// Dir is an open directory under a Root: its entries are read with one openat(2) each,
// not a walk of the full path (a P_Key table is 128 or more files).
type Dir struct {
	f   *os.File
	rel string
}

// OpenDir opens the directory rel.
func (r *Root) OpenDir(rel string) (*Dir, error) {
	fd, err := r.openat(rel, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC)
	if err != nil {
		return nil, err
	}
	return &Dir{f: os.NewFile(uintptr(fd), path.Join(r.dir, rel)), rel: rel}, nil
}

// ReadDir lists the directory, sorted by name.
func (d *Dir) ReadDir() ([]fs.DirEntry, error) {
	ents, err := d.f.ReadDir(-1)
	if err != nil {
		return nil, &fs.PathError{Op: "readdir", Path: d.rel, Err: unwrapPath(err)}
	}
	sortEntries(ents)
	return ents, nil
}

// ReadFile reads the attribute name (one path component) in the directory, as
// Root.ReadFile does.
func (d *Dir) ReadFile(name string, buf []byte) ([]byte, error) {
	b, err := readAt(int(d.f.Fd()), d.rel, name, buf, true, true)
	runtime.KeepAlive(d.f)
	return b, err
}

// Kind is what a directory listing says an entry is.
type Kind uint8

const (
	// KindUnknown: the file system does not say (DT_UNKNOWN); read with ReadFile.
	KindUnknown Kind = iota
	// KindRegular: a regular file; ReadListed may read it.
	KindRegular
	// KindOther: a directory, symlink, FIFO, device or socket.
	KindOther
)

// ReadListed reads the attribute name, which Scan listed as KindRegular, as ReadFile
// does but without ReadFile's fstat(2): the listing already told its kind (a P_Key
// table is 128 or more files, and the fstat was a fifth of each one's system calls).
// A file replaced by another kind in between still cannot block or run unbounded: the
// open does not block, the read stops past AttrMax, and a symlink is refused.
func (d *Dir) ReadListed(name string, buf []byte) ([]byte, error) {
	b, err := readAt(int(d.f.Fd()), d.rel, name, buf, true, false)
	runtime.KeepAlive(d.f)
	return b, err
}

// Scan calls fn with each entry's name and kind, in directory order ("." and ".."
// left out); name is only valid during the call. It reads the directory once: call
// either Scan or ReadDir on a Dir, once.
func (d *Dir) Scan(fn func(name []byte, kind Kind)) error {
	err := scanDir(d.f, fn)
	if err != nil {
		return &fs.PathError{Op: "readdir", Path: d.rel, Err: unwrapPath(err)}
	}
	return nil
}

// Close closes the directory.
func (d *Dir) Close() error { return d.f.Close() }

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func sortEntries(ents []fs.DirEntry) {
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
}
