package fsread

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// specialFiles makes one of each file type a user could point ibkey at.
func specialFiles(t *testing.T) (dir string, files map[string]string) {
	t.Helper()
	dir = t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	sub := filepath.Join(dir, "dir")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir, map[string]string{
		fifo:        "is a FIFO (named pipe), not a regular file",
		"/dev/zero": "is a character device, not a regular file",
		"/dev/null": "is a character device, not a regular file",
		sock:        "is a socket, not a regular file",
		sub:         "is a directory, not a regular file",
	}
}

func TestOpenRefusesSpecialFiles(t *testing.T) {
	_, files := specialFiles(t)
	for name, want := range files {
		for what, read := range map[string]func() error{
			"ReadFile": func() error { _, err := ReadFile(name, 1<<20, "a test file"); return err },
			"ReadAttr": func() error { _, err := ReadAttr(name); return err },
		} {
			err := read()
			var fe *Error
			if !errors.As(err, &fe) || !errors.Is(err, ErrNotRegular) {
				t.Errorf("%s(%s) = %v, want an *Error wrapping ErrNotRegular", what, name, err)
				continue
			}
			if err.Error() != name+": "+want || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s(%s) = %q, want %q", what, name, err, name+": "+want)
			}
		}
	}
}

func TestReadFileBounds(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{0, 1, 63, 64, 65, 4095, 4096, 4097, 1 << 16} {
		name := filepath.Join(dir, "f")
		data := bytes.Repeat([]byte{'x'}, n)
		if err := os.WriteFile(name, data, 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := ReadFile(name, 1<<16, "a test file")
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("ReadFile of %d bytes (limit 64 KiB) = %d bytes, %v", n, len(got), err)
		}
		got, err = ReadAttr(name)
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("ReadAttr of %d bytes = %d bytes, %v", n, len(got), err)
		}
		if n > 0 {
			_, err := ReadFile(name, int64(n-1), "a test file")
			if !errors.Is(err, ErrTooLarge) || err.Error() != name+": larger than "+Size(int64(n-1))+": too large for a test file" {
				t.Errorf("ReadFile of %d bytes with limit %d = %v", n, n-1, err)
			}
		}
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, make([]byte, AttrMax+1), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadAttr(big); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ReadAttr past AttrMax = %v", err)
	}
}

// TestReadStopsAtBound reads a file that grows past its fstat size (as /proc files
// and anything being written do): the bound holds on the bytes read, not the size.
func TestReadStopsAtBound(t *testing.T) {
	name := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(name, make([]byte, 100), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Open(name, 150, "a test file")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := os.WriteFile(name, make([]byte, 1000), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(f)
	if !errors.Is(err, ErrTooLarge) || len(b) != 150 {
		t.Errorf("read %d bytes, %v; want 150 and ErrTooLarge", len(b), err)
	}
}

func TestOpenMissing(t *testing.T) {
	_, err := ReadFile("/nonexistent/x", 10, "")
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// kernelTree builds a tree shaped like /sys with an escape added: class/infiniband/rxe0
// is the kernel's relative link into devices/, evil links to /etc/passwd, up climbs
// above the root.
func kernelTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	dev := filepath.Join(root, "devices/virtual/infiniband/rxe0")
	mk := func(p, data string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mk(filepath.Join(dev, "node_type"), "1: CA\n")
	mk(filepath.Join(root, "outside-secret"), "")
	ln := func(target, name string) {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, name); err != nil {
			t.Fatal(err)
		}
	}
	ln("../../devices/virtual/infiniband/rxe0", filepath.Join(root, "class/infiniband/rxe0"))
	ln("/etc/passwd", filepath.Join(dev, "node_desc"))
	ln("/etc", filepath.Join(root, "class/infiniband/etc"))
	ln("../../../../../../../../../../etc", filepath.Join(root, "class/infiniband/up"))
	ln("self", filepath.Join(dev, "self"))
	return root
}

func TestRootConfinesSymlinks(t *testing.T) {
	r := NewRoot(kernelTree(t))
	b, err := r.ReadFile("class/infiniband/rxe0/node_type")
	if err != nil || string(b) != "1: CA\n" {
		t.Errorf("the kernel's own link must resolve: %q, %v", b, err)
	}
	if ents, err := r.ReadDir("class/infiniband"); err != nil || len(ents) != 3 {
		t.Errorf("ReadDir = %v, %v", ents, err)
	}
	if fi, err := r.Stat("class/infiniband/rxe0"); err != nil || !fi.IsDir() {
		t.Errorf("Stat through the kernel's link = %v, %v", fi, err)
	}
	for _, p := range []string{"class/infiniband/etc/passwd", "class/infiniband/up/passwd", "../outside", "/etc/passwd"} {
		b, err := r.ReadFile(p)
		if !errors.Is(err, ErrOutsideRoot) || len(b) != 0 {
			t.Errorf("ReadFile(%s) = %q, %v; want ErrOutsideRoot", p, b, err)
		}
		if _, err := r.ReadDir(strings.TrimSuffix(p, "/passwd")); err == nil {
			t.Errorf("ReadDir(%s) listed a directory outside the root", p)
		}
	}
	// A symlink as the attribute itself that leads out is refused, and said to be
	// what it is (issue 28: it was "too many levels of symbolic links").
	b, err = r.ReadFile("class/infiniband/rxe0/node_desc")
	if err == nil || len(b) != 0 {
		t.Errorf("a final symlink to /etc/passwd was read: %q", b)
	}
	if !errors.Is(err, ErrOutsideRoot) || !strings.Contains(err.Error(), "is a symlink to /etc/passwd, outside ") || errors.Is(err, syscall.ELOOP) {
		t.Errorf("a final symlink to /etc/passwd: %v", err)
	}
	if _, err := r.ReadFile("class/infiniband/rxe0/self"); !errors.Is(err, syscall.ELOOP) {
		t.Errorf("a link to itself = %v, want ELOOP", err)
	}
}

func TestRootSpecialFiles(t *testing.T) {
	dir, _ := specialFiles(t)
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero")); err != nil {
		t.Fatal(err)
	}
	r := NewRoot(dir)
	// zero links out of the root to /dev/zero: refused as leaving the root (it was
	// refused as ELOOP before issue 28 asked for what it is).
	for name, want := range map[string]error{"fifo": ErrNotRegular, "sock": ErrNotRegular, "dir": ErrNotRegular, "zero": ErrOutsideRoot} {
		if _, err := r.ReadFile(name); !errors.Is(err, want) {
			t.Errorf("ReadFile(%s) = %v, want %v", name, err, want)
		}
	}
}

func TestRootMissing(t *testing.T) {
	r := NewRoot(filepath.Join(t.TempDir(), "none"))
	_, err := r.ReadDir("class/infiniband")
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "class/infiniband") {
		t.Errorf("a missing root: %v", err)
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{10: "10 bytes", 1024: "1 KiB", 65536: "64 KiB", 16 << 20: "16 MiB", 1 << 30: "1 GiB", 1500: "1500 bytes"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestRootReadDir: ReadDir lists every entry once with its kind, sorted, and ReadFile
// reads the regular ones. A listing of many entries spans several getdents64 buffers.
func TestRootReadDir(t *testing.T) {
	dir, _ := specialFiles(t)
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero")); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"fifo": false, "sock": false, "dir": false, "zero": false}
	for i := range 700 {
		name := strings.Repeat("x", i%40) + strconv.Itoa(i)
		if err := os.WriteFile(filepath.Join(dir, name), []byte("0x"+strconv.Itoa(i)+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		want[name] = true
	}
	r := NewRoot(dir)
	ents, err := r.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for i, e := range ents {
		if _, dup := got[e.Name()]; dup {
			t.Errorf("%q listed twice", e.Name())
		}
		if i > 0 && ents[i-1].Name() >= e.Name() {
			t.Errorf("not sorted: %q before %q", ents[i-1].Name(), e.Name())
		}
		got[e.Name()] = e.Type().IsRegular()
	}
	if len(got) != len(want) {
		t.Errorf("ReadDir listed %d entries, want %d", len(got), len(want))
	}
	for name, regular := range want {
		if got[name] != regular {
			t.Errorf("%s: regular %v, want %v", name, got[name], regular)
		}
		if !regular {
			continue
		}
		b, err := r.ReadFile(name)
		if err != nil || string(b) != "0x"+strings.TrimLeft(name, "x")+"\n" {
			t.Errorf("ReadFile(%s) = %q, %v", name, b, err)
		}
	}
	// A listed name that is a symlink out of the root is refused, not followed.
	if _, err := r.ReadFile("zero"); !errors.Is(err, ErrOutsideRoot) {
		t.Errorf("ReadFile(zero) = %v, want ErrOutsideRoot", err)
	}
}

// TestReadDirFIFO: a FIFO where a directory belongs (a device's ports/) is refused at
// once, not waited on (os.Root.OpenRoot would block there).
func TestReadDirFIFO(t *testing.T) {
	dir, _ := specialFiles(t)
	r := NewRoot(dir)
	if _, err := r.ReadDir("fifo"); !errors.Is(err, syscall.ENOTDIR) {
		t.Errorf("ReadDir(fifo) = %v, want ENOTDIR", err)
	}
	if _, err := r.ReadDir("fifo/x"); err == nil {
		t.Error("ReadDir below a FIFO succeeded")
	}
	if _, err := r.ReadFile("fifo/x"); err == nil {
		t.Error("ReadFile below a FIFO succeeded")
	}
}
