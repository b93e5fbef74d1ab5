// Package ibverbs reads the outside world: the kernel's RDMA sysfs files (rooted at a
// configurable directory) and, in subpackages, management datagrams. It returns plain
// data; it does not decide what the data means.
package ibverbs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/ibkey/ibkey/internal/fsread"
	"github.com/ibkey/ibkey/internal/textsafe"
)

// Directories below the sysfs root (Documentation/ABI/stable/sysfs-class-infiniband).
const (
	ClassInfiniBand = "class/infiniband"
	ClassNet        = "class/net"
)

// Sysfs is a sysfs tree: the real /sys, a saved copy, a test fixture or the embedded
// demo host. Every read goes through fsys, so all of them are read the same way.
type Sysfs struct {
	fsys fs.FS
	// root is the tree on disk (nil when fsys is not the OS file system): reads then
	// stay inside it and take a fast path of openat2(2) + fstat(2) + one read(2).
	root *fsread.Root
	// Root names the tree in messages: "/sys", "testdata/sysfs/mlx5", "demo host".
	Root string
}

// Open returns the tree rooted at dir. Symlinks inside it (class/infiniband/DEV points
// into devices/) are followed while they stay inside dir, as every link of the kernel's
// sysfs layout does; one leading out is refused and nothing of its target is read
// (fsread.Root). Special files (FIFOs, devices, sockets) are refused by type.
func Open(dir string) *Sysfs {
	return &Sysfs{fsys: os.DirFS(dir), root: fsread.NewRoot(dir), Root: dir}
}

// FromFS returns a tree read from fsys, named root in messages.
func FromFS(fsys fs.FS, root string) *Sysfs { return &Sysfs{fsys: fsys, Root: root} }

// Opt is an optional value: present, or absent with the reason.
type Opt[T any] struct {
	Value T
	// Missing says why the value is absent ("" when present): the file does not
	// exist, cannot be read, or holds something unparsable.
	Missing string
}

// OK reports whether the value is present.
func (o Opt[T]) OK() bool { return o.Missing == "" }

// ErrBadName is returned for a device name that is not a single path component.
var ErrBadName = errors.New("not a device name")

// CheckDeviceName rejects names that could leave class/infiniband: device names are
// single path components (IB_DEVICE_NAME_MAX is 64 bytes).
func CheckDeviceName(name string) error {
	switch {
	case name == "", name == ".", name == "..":
		return fmt.Errorf("%q: %w", name, ErrBadName)
	case len(name) > 64:
		return fmt.Errorf("%q: %w (longer than 64 bytes)", name, ErrBadName)
	case strings.ContainsAny(name, "/\\\x00"):
		return fmt.Errorf("%q: %w (contains a path separator or NUL)", name, ErrBadName)
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("%q: %w (contains a control character)", name, ErrBadName)
		}
	}
	return nil
}

// PathError is a failed read of a required file or directory, with its path in the tree.
type PathError struct {
	Root string
	Path string
	Err  error
}

func (e *PathError) Error() string {
	return textsafe.String(fmt.Sprintf("%s: %s", path.Join(e.Root, e.Path), describeErr(e.Err)))
}

func (e *PathError) Unwrap() error { return e.Err }

// describeErr turns an fs error into a short reason without repeating the path.
func describeErr(err error) string {
	var fe *fsread.Error
	if errors.As(err, &fe) {
		return fe.Problem
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "does not exist"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	case errors.Is(err, syscall.EINVAL):
		return "read failed: invalid argument (EINVAL: the device refused the query)"
	case errors.Is(err, syscall.EIO):
		return "read failed: input/output error (EIO)"
	case errors.Is(err, syscall.EOPNOTSUPP):
		return "read failed: operation not supported"
	case errors.Is(err, syscall.ELOOP):
		return "read failed: too many levels of symbolic links"
	case errors.Is(err, syscall.EISDIR):
		return "read failed: is a directory"
	}
	return err.Error()
}

func (s *Sysfs) readFile(p string) (string, error) {
	v, err := s.readSmall(p, nil)
	if err != nil {
		return "", &PathError{Root: s.Root, Path: p, Err: err}
	}
	return v, nil
}

// optional reads an optional file and parses it; a missing, unreadable or unparsable
// file becomes absent with the reason (like prometheus/procfs, but never a silent zero).
func optional[T any](s *Sysfs, p string, parse func(string) (T, error)) Opt[T] {
	v, err := s.readFile(p)
	if err != nil {
		var pe *PathError
		if errors.As(err, &pe) {
			return Opt[T]{Missing: textsafe.String(path.Base(p) + ": " + describeErr(pe.Err))}
		}
		return Opt[T]{Missing: textsafe.String(err.Error())}
	}
	t, err := parse(v)
	if err != nil {
		return Opt[T]{Missing: textsafe.String(path.Base(p) + ": unparsable: " + err.Error())}
	}
	return Opt[T]{Value: t}
}

func asString(s string) (string, error) { return s, nil }

// DeviceNames lists class/infiniband. The entries are symlinks into devices/: they are
// not filtered by type (an Lstat-based "is a directory" check would miss every device).
func (s *Sysfs) DeviceNames() ([]string, error) {
	ents, err := s.readDir(ClassInfiniBand)
	if err != nil {
		return nil, &PathError{Root: s.Root, Path: ClassInfiniBand, Err: err}
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		if CheckDeviceName(e.Name()) == nil {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

// Device is one RDMA device, from class/infiniband/DEV/.
type Device struct {
	Name         string
	NodeType     Opt[Enum]   // node_type: `1: CA`, `2: switch`, `4: RNIC`
	NodeGUID     Opt[GUID]   // node_guid
	SysImageGUID Opt[GUID]   // sys_image_guid
	NodeDesc     Opt[string] // node_desc
	FWVer        Opt[string] // fw_ver
	HCAType      Opt[string] // hca_type (driver-specific, e.g. mlx5 `MT4123`)
	BoardID      Opt[string] // board_id (driver-specific)
	HWRev        Opt[string] // hw_rev (driver-specific)
	Ports        []int       // ports/N, numerically sorted
	// PortsNote says why Ports is empty: the kernel registers no device without
	// ports (ib_register_device, drivers/infiniband/core/device.c), so an empty
	// ports/ is a damaged or hand-made tree, never "no ports, nothing to show".
	PortsNote string
}

func (s *Sysfs) devPath(name string, rest ...string) string {
	return path.Join(append([]string{ClassInfiniBand, name}, rest...)...)
}

// Device reads a device's attributes and port numbers. The name is checked before
// any file is opened. A device that does not exist gives an error wrapping fs.ErrNotExist.
func (s *Sysfs) Device(name string) (*Device, error) {
	if err := CheckDeviceName(name); err != nil {
		return nil, err
	}
	ents, err := s.readDir(s.devPath(name, "ports"))
	if err != nil {
		if _, serr := s.stat(s.devPath(name)); serr != nil {
			return nil, &PathError{Root: s.Root, Path: s.devPath(name), Err: serr}
		}
		return nil, &PathError{Root: s.Root, Path: s.devPath(name, "ports"), Err: err}
	}
	d := &Device{Name: name}
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err == nil && n >= 0 && n <= 255 {
			d.Ports = append(d.Ports, n)
		}
	}
	sort.Ints(d.Ports)
	if len(d.Ports) == 0 {
		d.PortsNote = "ports/ is empty: no port could be read"
		if len(ents) > 0 {
			d.PortsNote = fmt.Sprintf("ports/ holds %d entries but none is a port number 0-255", len(ents))
		}
	}
	attr := s.attrs(s.devPath(name))
	defer attr.close()
	d.NodeType = optionalAttr(attr, "node_type", ParseEnum)
	d.NodeGUID = optionalAttr(attr, "node_guid", ParseGUID)
	d.SysImageGUID = optionalAttr(attr, "sys_image_guid", ParseGUID)
	d.NodeDesc = optionalAttr(attr, "node_desc", asString)
	d.FWVer = optionalAttr(attr, "fw_ver", asString)
	d.HCAType = optionalAttr(attr, "hca_type", asString)
	d.BoardID = optionalAttr(attr, "board_id", asString)
	d.HWRev = optionalAttr(attr, "hw_rev", asString)
	return d, nil
}

// Port is one port of a device, from class/infiniband/DEV/ports/N/.
type Port struct {
	Device    string
	Num       int
	State     Enum          // state (required): `4: ACTIVE`
	PhysState Opt[Enum]     // phys_state: `5: LinkUp`
	LID       Opt[uint16]   // lid: `0x1a`
	SMLID     Opt[uint16]   // sm_lid
	LMC       Opt[uint8]    // lid_mask_count (decimal)
	SMSL      Opt[uint8]    // sm_sl (decimal)
	CapMask   Opt[uint32]   // cap_mask: `0x%08x`
	Rate      Opt[Rate]     // rate: `100 Gb/sec (4X EDR)`
	LinkLayer Opt[string]   // link_layer: InfiniBand, Ethernet, Unknown
	GID0      Opt[GID]      // gids/0
	HasPKeys  bool          // pkeys/ exists (absent when the table length is 0, e.g. iWARP)
	Counters  Opt[[]string] // names in counters/ (absent without a PMA)
	HWCounter Opt[[]string] // names in hw_counters/
}

func parseU16Hex(s string) (uint16, error) { v, err := ParseHex(s, 16); return uint16(v), err }
func parseU32Hex(s string) (uint32, error) { v, err := ParseHex(s, 32); return uint32(v), err }
func parseU8Dec(s string) (uint8, error)   { v, err := ParseDec(s, 8); return uint8(v), err }

// Port reads a port's attributes (not its P_Key table or counter values).
func (s *Sysfs) Port(dev string, num int) (*Port, error) {
	if err := CheckDeviceName(dev); err != nil {
		return nil, err
	}
	pdir := s.devPath(dev, "ports", strconv.Itoa(num))
	attr := s.attrs(pdir)
	defer attr.close()
	st, err := attr.read("state")
	if err != nil {
		return nil, err
	}
	state, err := ParseEnum(st)
	if err != nil {
		return nil, &PathError{Root: s.Root, Path: path.Join(pdir, "state"), Err: err}
	}
	p := &Port{Device: dev, Num: num, State: state}
	p.PhysState = optionalAttr(attr, "phys_state", ParseEnum)
	p.LID = optionalAttr(attr, "lid", parseU16Hex)
	p.SMLID = optionalAttr(attr, "sm_lid", parseU16Hex)
	p.LMC = optionalAttr(attr, "lid_mask_count", parseU8Dec)
	p.SMSL = optionalAttr(attr, "sm_sl", parseU8Dec)
	p.CapMask = optionalAttr(attr, "cap_mask", parseU32Hex)
	p.Rate = optionalAttr(attr, "rate", ParseRate)
	p.LinkLayer = optionalAttr(attr, "link_layer", asString)
	p.GID0 = optional(s, path.Join(pdir, "gids", "0"), ParseGID)
	if fi, err := s.stat(path.Join(pdir, "pkeys")); err == nil && fi.IsDir() {
		p.HasPKeys = true
	}
	p.Counters = s.listDir(path.Join(pdir, "counters"))
	p.HWCounter = s.listDir(path.Join(pdir, "hw_counters"))
	return p, nil
}

// attrReader reads the attributes of one directory: through its open descriptor d
// when there is one, else by path (s.readFile), with the same errors either way.
type attrReader struct {
	s   *Sysfs
	dir string
	d   *fsread.Dir
}

// attrs reads the attributes of dir through one descriptor of it: each attribute is
// then a single-component openat, not a walk of the full path through the
// class/infiniband symlink. Close it after use.
func (s *Sysfs) attrs(dir string) attrReader {
	a := attrReader{s: s, dir: dir}
	if s.root != nil {
		if d, err := s.root.OpenDir(dir); err == nil {
			a.d = d
		}
	}
	return a
}

func (a attrReader) close() {
	if a.d != nil {
		a.d.Close()
	}
}

// read reads the attribute name (one path component) of the directory.
func (a attrReader) read(name string) (string, error) {
	p := path.Join(a.dir, name)
	if a.d == nil {
		return a.s.readFile(p)
	}
	b, err := a.d.ReadFile(name, nil)
	if err != nil {
		return "", &PathError{Root: a.s.Root, Path: p, Err: err}
	}
	return trimValue(b), nil
}

// optionalAttr is optional for an attribute read through a.
func optionalAttr[T any](a attrReader, name string, parse func(string) (T, error)) Opt[T] {
	v, err := a.read(name)
	if err != nil {
		var pe *PathError
		if errors.As(err, &pe) {
			return Opt[T]{Missing: textsafe.String(name + ": " + describeErr(pe.Err))}
		}
		return Opt[T]{Missing: textsafe.String(err.Error())}
	}
	t, err := parse(v)
	if err != nil {
		return Opt[T]{Missing: textsafe.String(name + ": unparsable: " + err.Error())}
	}
	return Opt[T]{Value: t}
}

func (s *Sysfs) listDir(p string) Opt[[]string] {
	ents, err := s.readDir(p)
	if err != nil {
		return Opt[[]string]{Missing: path.Base(p) + "/: " + describeErr(err)}
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return Opt[[]string]{Value: names}
}

// PKeyEntry is one P_Key table entry, from ports/N/pkeys/I.
type PKeyEntry struct {
	Index int
	Value uint16
	// Err is set when the entry could not be read or parsed; Value is then meaningless
	// (an unreadable entry is not 0x0000).
	Err error
}

// ErrNoTable means the port has no pkeys/ directory: the kernel creates it only when
// the table length is non-zero (iWARP devices have none).
var ErrNoTable = errors.New("no P_Key table (no pkeys/ directory)")

// PKeys reads a port's whole P_Key table, each file once, in numeric index order. The
// files are `0` .. `pkey_tbl_len-1`, not zero-padded; a number missing from the
// directory is reported as an unreadable entry at that index.
func (s *Sysfs) PKeys(dev string, num int) ([]PKeyEntry, error) {
	if err := CheckDeviceName(dev); err != nil {
		return nil, err
	}
	dir := s.devPath(dev, "ports", strconv.Itoa(num), "pkeys")
	if s.root == nil {
		ents, err := fs.ReadDir(s.fsys, dir)
		if err != nil {
			return nil, s.tableErr(dev, num, dir, err)
		}
		kinds := make([]fsread.Kind, 0, len(ents))
		for _, e := range ents {
			if i, ok := tableIndex([]byte(e.Name())); ok {
				kinds = listed(kinds, i, fsread.KindUnknown)
			}
		}
		buf := make([]byte, 0, 64)
		return readTable(kinds, func(i int, _ fsread.Kind) (string, error) {
			return s.readSmall(dir+"/"+strconv.Itoa(i), buf)
		}), nil
	}
	// One directory descriptor for the whole table: each entry is then a
	// single-component openat, not a walk of the full path; the listing's file types
	// spare an fstat per entry.
	d, err := s.root.OpenDir(dir)
	if err != nil {
		return nil, s.tableErr(dev, num, dir, err)
	}
	defer d.Close()
	var kinds []fsread.Kind
	err = d.Scan(func(name []byte, kind fsread.Kind) {
		if i, ok := tableIndex(name); ok {
			kinds = listed(kinds, i, kind)
		}
	})
	if err != nil {
		return nil, s.tableErr(dev, num, dir, err)
	}
	buf := make([]byte, 0, 64)
	return readTable(kinds, func(i int, kind fsread.Kind) (string, error) {
		var b []byte
		var err error
		if kind == fsread.KindRegular {
			b, err = d.ReadListed(strconv.Itoa(i), buf)
		} else {
			b, err = d.ReadFile(strconv.Itoa(i), buf)
		}
		return trimValue(b), err
	}), nil
}

// tableErr is the error of a P_Key table directory that could not be listed.
func (s *Sysfs) tableErr(dev string, num int, dir string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s/%d: %w", dev, num, ErrNoTable)
	}
	return &PathError{Root: s.Root, Path: dir, Err: err}
}

// kindAbsent marks an index with no file in a table listing.
const kindAbsent fsread.Kind = 0xff

// listed records that the listing has index i, of kind, in kinds (indexes not seen
// are kindAbsent).
func listed(kinds []fsread.Kind, i int, kind fsread.Kind) []fsread.Kind {
	for len(kinds) <= i {
		kinds = append(kinds, kindAbsent)
	}
	kinds[i] = kind
	return kinds
}

// tableIndex reads a pkeys/ file name: a decimal index 0-65535 without leading zeros
// (the kernel names them `0` .. `pkey_tbl_len-1`); anything else is not an entry.
func tableIndex(name []byte) (int, bool) {
	if len(name) == 0 || len(name) > 5 || (name[0] == '0' && len(name) > 1) {
		return 0, false
	}
	n := 0
	for _, c := range name {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, n <= 0xffff
}

// readTable reads the entries kinds lists, in index order; an index missing from the
// listing below the highest one is an unreadable entry.
func readTable(kinds []fsread.Kind, read func(i int, kind fsread.Kind) (string, error)) []PKeyEntry {
	table := make([]PKeyEntry, len(kinds))
	for i, kind := range kinds {
		table[i].Index = i
		if kind == kindAbsent {
			table[i].Err = errors.New("file missing from pkeys/")
			continue
		}
		v, err := read(i, kind)
		if err != nil {
			table[i].Err = errors.New(describeErr(err))
			continue
		}
		x, err := ParseHex(v, 16)
		if err != nil {
			table[i].Err = err
			continue
		}
		table[i].Value = uint16(x)
	}
	return table
}

// readSmall reads a small file and returns its trimmed content; buf, when not nil,
// is scratch space reused across calls. Reads are bounded by fsread.AttrMax: the
// kernel's attribute show functions write at most a page.
func (s *Sysfs) readSmall(name string, buf []byte) (string, error) {
	if s.root != nil {
		b, err := s.root.ReadFile(name, buf)
		return trimValue(b), err
	}
	f, err := s.fsys.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if cap(buf) < 64 {
		buf = make([]byte, 0, 64)
	}
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			if cap(buf) > fsread.AttrMax {
				return "", fsread.TooLarge(name, fsread.AttrMax, "a kernel attribute")
			}
			buf = append(buf, 0)[:len(buf)]
		}
		m, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if err == io.EOF || (err == nil && m == 0) {
			return trimValue(buf), nil
		}
		if err != nil {
			return "", err
		}
	}
}

// readDir lists a directory of the tree, sorted by name.
func (s *Sysfs) readDir(p string) ([]fs.DirEntry, error) {
	if s.root != nil {
		return s.root.ReadDir(p)
	}
	return fs.ReadDir(s.fsys, p)
}

// stat describes a file of the tree, symlinks followed (inside the tree).
func (s *Sysfs) stat(p string) (fs.FileInfo, error) {
	if s.root != nil {
		return s.root.Stat(p)
	}
	return fs.Stat(s.fsys, p)
}

// Counter is one counters/NAME value.
type Counter struct {
	Name  string
	Value uint64
	// Width is the counter's width in bits (the PortCounters field it is backed by,
	// IBA 16.1.3.5; drivers/infiniband/core/sysfs.c); 0 when not known.
	Width int
	// Err is set when the file could not be read or parsed (EINVAL/EIO on some
	// devices, `N/A (no PMA)` on very old kernels). Value is then meaningless.
	Err error
}

// CounterWidths are the widths of the PortCounters-backed files (IBA 16.1.3.5, the
// PortCounters layout; drivers/infiniband/core/sysfs.c maps files to fields). Error
// counters saturate at their maximum; they do not wrap.
var CounterWidths = map[string]int{
	"symbol_error":                    16,
	"link_error_recovery":             8,
	"link_downed":                     8,
	"port_rcv_errors":                 16,
	"port_rcv_remote_physical_errors": 16,
	"port_rcv_switch_relay_errors":    16,
	"port_xmit_discards":              16,
	"port_xmit_constraint_errors":     8,
	"port_rcv_constraint_errors":      8,
	"local_link_integrity_errors":     4,
	"excessive_buffer_overrun_errors": 4,
	"VL15_dropped":                    16,
	"port_xmit_wait":                  32,
}

// ReadCounter reads one counters/NAME file.
func (s *Sysfs) ReadCounter(dev string, num int, name string) Counter {
	c := Counter{Name: name, Width: CounterWidths[name]}
	if err := CheckDeviceName(dev); err != nil {
		c.Err = err
		return c
	}
	if strings.ContainsAny(name, "/\x00") || name == ".." || name == "." {
		c.Err = fmt.Errorf("%q is not a counter name", name)
		return c
	}
	v, err := s.readSmall(s.devPath(dev, "ports", strconv.Itoa(num), "counters", name), make([]byte, 0, 32))
	if err != nil {
		c.Err = errors.New(describeErr(err))
		return c
	}
	bits := 64
	if c.Width > 0 {
		bits = c.Width
	}
	x, err := ParseDec(v, bits)
	if err != nil {
		c.Err = err
		return c
	}
	c.Value = x
	return c
}

// NetInterface is an IPoIB interface from class/net/IF/.
type NetInterface struct {
	Name      string
	Type      int         // type: 32 for IPoIB
	Address   Opt[[]byte] // address: 20 bytes for IPoIB, the last 16 are the port's GID 0
	PKey      Opt[uint16] // pkey: always shows the full bit (`0x8001`)
	Parent    Opt[string] // parent: set on child interfaces (ib0.8001)
	DevPort   Opt[int]    // dev_port: 0-based port hint
	OperState Opt[string] // operstate: up, down, lowerlayerdown
}

// ARPHRDInfiniBand is the class/net/IF/type of IPoIB interfaces.
const ARPHRDInfiniBand = 32

// IPoIBInterfaces lists the IPoIB interfaces in class/net (entries are symlinks into
// devices/). A tree without class/net has none.
func (s *Sysfs) IPoIBInterfaces() ([]NetInterface, error) {
	ents, err := s.readDir(ClassNet)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, &PathError{Root: s.Root, Path: ClassNet, Err: err}
	}
	var out []NetInterface
	for _, e := range ents {
		name := e.Name()
		if CheckDeviceName(name) != nil {
			continue
		}
		dir := path.Join(ClassNet, name)
		t, err := s.readFile(path.Join(dir, "type"))
		if err != nil {
			continue
		}
		typ, err := strconv.Atoi(t)
		if err != nil || typ != ARPHRDInfiniBand {
			continue
		}
		out = append(out, NetInterface{
			Name:      name,
			Type:      typ,
			Address:   optional(s, path.Join(dir, "address"), ParseHWAddr),
			PKey:      optional(s, path.Join(dir, "pkey"), parseU16Hex),
			Parent:    optional(s, path.Join(dir, "parent"), asString),
			DevPort:   optional(s, path.Join(dir, "dev_port"), func(v string) (int, error) { return strconv.Atoi(v) }),
			OperState: optional(s, path.Join(dir, "operstate"), asString),
		})
	}
	return out, nil
}

// PortState reads only ports/N/state: the watch loop's one file per port per sample
// that tells a port that went away (an error wrapping fs.ErrNotExist) from one that is up.
func (s *Sysfs) PortState(dev string, num int) (Enum, error) {
	if err := CheckDeviceName(dev); err != nil {
		return Enum{}, err
	}
	p := s.devPath(dev, "ports", strconv.Itoa(num), "state")
	v, err := s.readSmall(p, make([]byte, 0, 32))
	if err != nil {
		return Enum{}, &PathError{Root: s.Root, Path: p, Err: err}
	}
	e, err := ParseEnum(v)
	if err != nil {
		return Enum{}, &PathError{Root: s.Root, Path: p, Err: err}
	}
	return e, nil
}

// Describe turns a read error into a short reason without the path ("does not exist",
// "permission denied", "read failed: ... (EINVAL ...)").
func Describe(err error) string { return describeErr(err) }
