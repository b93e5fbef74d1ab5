package fsread

import (
	"io/fs"
	"os"
	"sort"
	"sync"
	"syscall"
)

// Root is a directory tree that reads cannot leave: a --sysfs tree, a saved copy of
// /sys, a test fixture. Paths are slash-separated and relative to the root.
//
// Reads go through os.Root: symlinks are followed while they resolve inside the root, as
// the kernel's sysfs links do (class/infiniband/rxe0 -> ../../devices/virtual/infiniband/rxe0;
// Documentation/ABI/stable/sysfs-class-infiniband); one that leads out (to /etc/passwd,
// or ../../.. above the root) fails with an *Error wrapping ErrOutsideRoot, and nothing
// of the target is read.
type Root struct {
	dir  string
	root func() (*os.Root, error)
}

// NewRoot returns the tree rooted at dir. The directory is opened on first use, so a
// root that does not exist fails each read with the path it was asked for.
func NewRoot(dir string) *Root {
	return &Root{dir: dir, root: sync.OnceValues(func() (*os.Root, error) { return os.OpenRoot(dir) })}
}

// Dir is the directory the root was made from.
func (r *Root) Dir() string { return r.dir }

// errEscapes is the text of os.Root's error for a path that leaves the root: the error
// itself is unexported (os.errPathEscapes, "path escapes from parent").
const errEscapes = "path escapes from parent"

// do runs op on the os.Root and gives its error the form callers match: an *Error
// wrapping ErrOutsideRoot for a path that leaves the root, an *Error wrapping
// ErrNotRegular for a socket (whose open fails with ENXIO), else an *fs.PathError
// with the errno and rel.
func do[T any](r *Root, opName, rel string, op func(*os.Root) (T, error)) (T, error) {
	var zero T
	or, err := r.root()
	if err != nil {
		return zero, &fs.PathError{Op: opName, Path: rel, Err: unwrap(err)}
	}
	v, err := op(or)
	if err == nil {
		return v, nil
	}
	if unwrap(err).Error() == errEscapes {
		return zero, r.outside(or, rel)
	}
	return zero, openErr(err, rel, func() (fs.FileInfo, error) { return or.Lstat(rel) })
}

// outside describes a path that leaves the root: a symlink as the last component is
// named with its target (it is what it is, not a loop); otherwise the path, or a link
// on the way, leads out.
func (r *Root) outside(or *os.Root, rel string) error {
	p := "leads outside " + r.dir
	if fi, err := or.Lstat(rel); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if target, err := or.Readlink(rel); err == nil {
			p = "is a symlink to " + target + ", outside " + r.dir
		}
	}
	return &Error{Path: rel, Problem: p + " (refused: reads stay inside the tree)", Err: ErrOutsideRoot}
}

// ReadFile reads the kernel attribute at rel, bounded by AttrMax. Only a regular file
// is read.
func (r *Root) ReadFile(rel string) ([]byte, error) {
	f, err := do(r, "open", rel, func(or *os.Root) (*os.File, error) { return or.OpenFile(rel, openFlags, 0) })
	if err != nil {
		return nil, err
	}
	return readAttr(f, rel)
}

// Stat returns the file information of rel (symlinks followed inside the root).
func (r *Root) Stat(rel string) (fs.FileInfo, error) {
	return do(r, "stat", rel, func(or *os.Root) (fs.FileInfo, error) { return or.Stat(rel) })
}

// Lstat returns the file information of rel itself, a symlink not followed.
func (r *Root) Lstat(rel string) (fs.FileInfo, error) {
	return do(r, "lstat", rel, func(or *os.Root) (fs.FileInfo, error) { return or.Lstat(rel) })
}

// ReadLink returns the target of the symlink rel, as written.
func (r *Root) ReadLink(rel string) (string, error) {
	return do(r, "readlink", rel, func(or *os.Root) (string, error) { return or.Readlink(rel) })
}

// ReadDir lists the directory rel, sorted by name. The directory is opened without
// blocking (os.Root.OpenRoot would block on a FIFO where the directory belongs: it
// opens without O_DIRECTORY or O_NONBLOCK, Go 1.26).
func (r *Root) ReadDir(rel string) ([]fs.DirEntry, error) {
	f, err := do(r, "open", rel, func(or *os.Root) (*os.File, error) {
		return or.OpenFile(rel, openFlags|syscall.O_DIRECTORY, 0)
	})
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ents, err := f.ReadDir(-1)
	if err != nil {
		return nil, &fs.PathError{Op: "readdir", Path: rel, Err: unwrap(err)}
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	return ents, nil
}
