// Package ibverbs reads the outside world: the kernel's RDMA sysfs files (rooted at a
// configurable directory) and, in subpackages, management datagrams. It returns plain
// data; it does not decide what the data means.
package ibverbs

import (
	"cmp"
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
	// ClassVerbs holds one uverbsN per device that user space can open
	// (drivers/infiniband/core/uverbs_main.c); uverbsN/ibdev names the device.
	ClassVerbs = "class/infiniband_verbs"
)

// Sysfs is a sysfs tree: the real /sys, a saved copy, a test fixture or the embedded
// demo host. Every read goes through fsys, so all of them are read the same way.
type Sysfs struct {
	fsys fs.FS
	// root is the tree on disk (nil when fsys is not the OS file system): reads then
	// go through os.Root and stay inside it.
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
// single path components of at most 63 bytes (IB_DEVICE_NAME_MAX, 64, counts the NUL:
// char name[IB_DEVICE_NAME_MAX], include/rdma/ib_verbs.h; check.MaxDeviceName).
func CheckDeviceName(name string) error {
	switch {
	case name == "", name == ".", name == "..":
		return fmt.Errorf("%q: %w", name, ErrBadName)
	case len(name) > 63:
		return fmt.Errorf("%q: %w (longer than 63 bytes)", name, ErrBadName)
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
	return textsafe.Text(fmt.Sprintf("%s: %s", path.Join(e.Root, e.Path), Describe(e.Err)))
}

func (e *PathError) Unwrap() error { return e.Err }

// Describe turns a read error into a short reason without the path ("does not exist",
// "permission denied", "read failed: ... (EINVAL ...)").
func Describe(err error) string {
	if fe, ok := errors.AsType[*fsread.Error](err); ok {
		return fe.Problem
	}
	if de, ok := errors.AsType[*DanglingError](err); ok {
		return de.Error()
	}
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
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
		// A link to itself or a loop of links: a link out of the tree is an
		// *fsread.Error that says so.
		return "read failed: too many levels of symbolic links"
	case errors.Is(err, syscall.EISDIR):
		return "read failed: is a directory"
	}
	return err.Error()
}

// DanglingError is a symlink whose target does not exist: a saved tree that did not
// capture the target, or a device going away while it is read. It is not "does not
// exist": the entry is there and says where it points.
type DanglingError struct {
	Target string
}

func (e *DanglingError) Error() string {
	return "is a symlink to " + e.Target + ", which does not exist (a dangling link)"
}

// dangling refines err, a failed read of p: when err says p does not exist but p is a
// symlink, the error names the link and its missing target.
func (s *Sysfs) dangling(p string, err error) error {
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	var target string
	var lerr error
	if s.root != nil {
		target, lerr = s.root.ReadLink(p)
	} else {
		target, lerr = fs.ReadLink(s.fsys, p)
	}
	if lerr != nil {
		return err
	}
	return &DanglingError{Target: textsafe.Text(target)}
}

func (s *Sysfs) readFile(p string) (string, error) {
	v, err := s.readSmall(p)
	if err != nil {
		return "", &PathError{Root: s.Root, Path: p, Err: err}
	}
	return v, nil
}

// optional reads the optional file name (its path below the device, port or
// interface directory dir: "gids/0") and parses it; a missing, unreadable or
// unparsable file becomes absent with the reason, which names the file as name, like
// prometheus/procfs, but never a silent zero.
func optional[T any](s *Sysfs, dir, name string, parse func(string) (T, error)) Opt[T] {
	v, err := s.readSmall(path.Join(dir, name))
	if err != nil {
		return Opt[T]{Missing: textsafe.Text(name + ": " + Describe(err))}
	}
	t, err := parse(v)
	if err != nil {
		return Opt[T]{Missing: textsafe.Text(name + ": unparsable: " + err.Error())}
	}
	return Opt[T]{Value: t}
}

func asString(s string) (string, error) { return s, nil }

// DeviceNames lists class/infiniband, every entry as named there: one that is not a
// device name (CheckDeviceName) is for the caller to report as an entry not read, not
// to drop. The entries are symlinks into devices/: they are not filtered by type (an
// Lstat-based "is a directory" check would miss every device).
func (s *Sysfs) DeviceNames() ([]string, error) {
	ents, err := s.readDir(ClassInfiniBand)
	if err != nil {
		return nil, &PathError{Root: s.Root, Path: ClassInfiniBand, Err: err}
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names, nil
}

// VerbsDevices maps each device to the name of its uverbs character device ("rxe0"
// to "uverbs0"), from class/infiniband_verbs/uverbsN/ibdev. The class is not tagged by
// network namespace: every uverbsN of the machine is listed wherever sysfs is mounted.
// unread are the entries whose ibdev could not be read, or does not hold a device
// name: which device each one is, is not known. libibverbs does not need that file:
// it asks the kernel for each device's uverbs device over netlink
// (RDMA_NLDEV_CMD_GET_CHARDEV, rdma-core libibverbs/ibdev_nl.c find_uverbs_nl) and
// reads sysfs only when that fails (find_uverbs_sysfs).
func (s *Sysfs) VerbsDevices() (devs map[string]string, unread []error, err error) {
	ents, err := s.readDir(ClassVerbs)
	if err != nil {
		return nil, nil, &PathError{Root: s.Root, Path: ClassVerbs, Err: err}
	}
	devs = map[string]string{}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), "uverbs") || CheckDeviceName(e.Name()) != nil {
			continue // abi_version
		}
		name := path.Join(ClassVerbs, e.Name(), "ibdev")
		dev, err := s.readSmall(name)
		if err == nil {
			err = CheckDeviceName(dev)
		}
		if err != nil {
			unread = append(unread, &PathError{Root: s.Root, Path: name, Err: err})
			continue
		}
		devs[dev] = e.Name()
	}
	return devs, unread, nil
}

// Device is one RDMA device, from class/infiniband/DEV/.
type Device struct {
	Name     string
	NodeType Opt[Enum]   // node_type: `1: CA`, `2: switch`, `4: RNIC`
	NodeGUID Opt[GUID]   // node_guid
	NodeDesc Opt[string] // node_desc
	FWVer    Opt[string] // fw_ver
	HCAType  Opt[string] // hca_type (driver-specific, e.g. mlx5 `MT4123`)
	BoardID  Opt[string] // board_id (driver-specific)
	HWRev    Opt[string] // hw_rev (driver-specific)
	Ports    []int       // ports/N, numerically sorted
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
			return nil, &PathError{Root: s.Root, Path: s.devPath(name), Err: s.dangling(s.devPath(name), serr)}
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
	dir := s.devPath(name)
	d.NodeType = optional(s, dir, "node_type", ParseEnum)
	d.NodeGUID = optional(s, dir, "node_guid", ParseGUID)
	d.NodeDesc = optional(s, dir, "node_desc", asString)
	d.FWVer = optional(s, dir, "fw_ver", asString)
	d.HCAType = optional(s, dir, "hca_type", asString)
	d.BoardID = optional(s, dir, "board_id", asString)
	d.HWRev = optional(s, dir, "hw_rev", asString)
	return d, nil
}

// Port is one port of a device, from class/infiniband/DEV/ports/N/.
type Port struct {
	Device    string
	Num       int
	State     Enum        // state (required): `4: ACTIVE`
	PhysState Opt[Enum]   // phys_state: `5: LinkUp`
	LID       Opt[uint16] // lid: `0x1a`
	SMLID     Opt[uint16] // sm_lid
	LMC       Opt[uint8]  // lid_mask_count (decimal)
	SMSL      Opt[uint8]  // sm_sl (decimal)
	CapMask   Opt[uint32] // cap_mask: `0x%08x`
	Rate      Opt[Rate]   // rate: `100 Gb/sec (4X EDR)`
	LinkLayer Opt[string] // link_layer: InfiniBand, Ethernet, Unknown
	GID0      Opt[GID]    // gids/0
	HasPKeys  bool        // pkeys exists, read or not (absent when the table length is 0, e.g. iWARP)
	// HasCounters: counters exists, readable or not. The kernel makes it only for a
	// device with a PMA (drivers/infiniband/core/sysfs.c setup_port), and always with
	// every PortCounters error counter, so only a counters that is not there at all
	// means none; one that cannot be read holds counters not read.
	HasCounters bool
}

func parseU16Hex(s string) (uint16, error) { v, err := ParseHex(s, 16); return uint16(v), err }
func parseU32Hex(s string) (uint32, error) { v, err := ParseHex(s, 32); return uint32(v), err }
func parseU8Dec(s string) (uint8, error)   { v, err := ParseDec(s, 8); return uint8(v), err }

// Port reads a port's attributes (not its P_Key table or counter values).
func (s *Sysfs) Port(dev string, num int) (*Port, error) {
	if err := CheckDeviceName(dev); err != nil {
		return nil, err
	}
	state, err := s.PortState(dev, num)
	if err != nil {
		return nil, err
	}
	pdir := s.devPath(dev, "ports", strconv.Itoa(num))
	p := &Port{Device: dev, Num: num, State: state}
	p.PhysState = optional(s, pdir, "phys_state", ParseEnum)
	p.LID = optional(s, pdir, "lid", parseU16Hex)
	p.SMLID = optional(s, pdir, "sm_lid", parseU16Hex)
	p.LMC = optional(s, pdir, "lid_mask_count", parseU8Dec)
	p.SMSL = optional(s, pdir, "sm_sl", parseU8Dec)
	p.CapMask = optional(s, pdir, "cap_mask", parseU32Hex)
	p.Rate = optional(s, pdir, "rate", ParseRate)
	p.LinkLayer = optional(s, pdir, "link_layer", asString)
	p.GID0 = optional(s, pdir, "gids/0", ParseGID)
	// Only a pkeys entry that is not there at all means no table; one that exists
	// and is not a readable directory (a link loop, a dangling link, a file, a link
	// out of the tree, refused with nothing of its target read: Open) is a table not
	// read, which PKeys says with the reason.
	p.HasPKeys = s.exists(path.Join(pdir, "pkeys"))
	p.HasCounters = s.exists(path.Join(pdir, "counters"))
	return p, nil
}

// exists: something is at p, readable or not; a link whose target is not there
// (dangling) is something.
func (s *Sysfs) exists(p string) bool {
	_, err := s.stat(p)
	return err == nil || !errors.Is(s.dangling(p, err), fs.ErrNotExist)
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
	ents, err := s.readDir(dir)
	if err != nil {
		if err = s.dangling(dir, err); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s/%d: %w", dev, num, ErrNoTable)
		}
		return nil, &PathError{Root: s.Root, Path: dir, Err: err}
	}
	var listed []bool // listed[i]: pkeys/i is in the directory
	for _, e := range ents {
		if i, ok := tableIndex(e.Name()); ok {
			for len(listed) <= i {
				listed = append(listed, false)
			}
			listed[i] = true
		}
	}
	table := make([]PKeyEntry, len(listed))
	for i := range table {
		table[i].Index = i
		if !listed[i] {
			table[i].Err = errors.New("file missing from pkeys/")
			continue
		}
		v, err := s.readSmall(path.Join(dir, strconv.Itoa(i)))
		if err != nil {
			table[i].Err = errors.New(Describe(err))
			continue
		}
		x, err := ParseHex(v, 16)
		if err != nil {
			table[i].Err = err
			continue
		}
		table[i].Value = uint16(x)
	}
	return table, nil
}

// tableIndex reads a pkeys/ file name: a decimal index 0-65535 without leading zeros
// (the kernel names them `0` .. `pkey_tbl_len-1`); anything else is not an entry.
func tableIndex(name string) (int, bool) {
	n, err := strconv.Atoi(name)
	return n, err == nil && n >= 0 && n <= 0xffff && strconv.Itoa(n) == name
}

// readSmall reads a small file and returns its trimmed content. Reads are bounded
// by fsread.AttrMax: the kernel's attribute show functions write at most a page.
func (s *Sysfs) readSmall(name string) (string, error) {
	b, err := s.readRaw(name)
	return trimValue(b), err
}

// readRaw reads a small file as it is, bounded as readSmall: an fs.FS tree (the
// embedded demo host, tests) by fsread.AttrMax as on disk.
func (s *Sysfs) readRaw(name string) ([]byte, error) {
	if s.root != nil {
		return s.root.ReadFile(name)
	}
	f, err := s.fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, fsread.AttrMax+1))
	if err == nil && len(b) > fsread.AttrMax {
		return nil, fsread.TooLarge(name, fsread.AttrMax, "a kernel attribute")
	}
	return b, err
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
	Value uint64
	// Err is set when the file could not be read or parsed (EINVAL/EIO on some
	// devices). Value is then meaningless.
	Err error
	// Unavailable is set when the file holds `N/A (no PMA)` (NoPMA says what that
	// means); Value is then meaningless and Err nil.
	Unavailable string
}

// NoPMA is what older kernels write in a counters/ file instead of a number
// (drivers/infiniband/core/sysfs.c show_pma_counter): first only for a device without
// a performance management agent (`if (!p->ibdev->process_mad) return sprintf(buf,
// "N/A (no PMA)\n")`; iWARP devices), then, from Linux 4.5 (commit 35c4cbb17811
// added get_perf_mad) until a fix of 2018, whenever get_perf_mad failed (`if (ret < 0) return
// sprintf(buf, "N/A (no PMA)\n")`): also when the device's PMA did not answer, as on
// the ConnectX-3 virtual function of node_exporter issue 966. Newer kernels return the
// error (EINVAL) and create counters/ only for a device with process_mad.
// prometheus/procfs reads it as "not available".
const NoPMA = "N/A (no PMA)"

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

// ReadCounter reads one counters/NAME file; a value wider than the counter's width
// (CounterWidths; 64 bits when not known) is an error.
func (s *Sysfs) ReadCounter(dev string, num int, name string) Counter {
	var c Counter
	if err := CheckDeviceName(dev); err != nil {
		c.Err = err
		return c
	}
	if strings.ContainsAny(name, "/\x00") || name == ".." || name == "." {
		c.Err = fmt.Errorf("%q is not a counter name", name)
		return c
	}
	v, err := s.readSmall(s.devPath(dev, "ports", strconv.Itoa(num), "counters", name))
	if err != nil {
		c.Err = errors.New(Describe(err))
		return c
	}
	if v == NoPMA {
		c.Unavailable = "counters/" + name + " holds \"" + NoPMA + "\""
		return c
	}
	x, err := ParseDec(v, cmp.Or(CounterWidths[name], 64))
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
	Address   Opt[[]byte] // address: 20 bytes for IPoIB, the last 16 are the port's GID 0
	PKey      Opt[uint16] // pkey: always shows the full bit (`0x8001`)
	Parent    Opt[string] // parent: set on child interfaces (ib0.8001)
	OperState Opt[string] // operstate: up, down, lowerlayerdown
	// Flags is the flags file, dev->flags in hex (net/core/net-sysfs.c); IFF_UP (0x1,
	// include/uapi/linux/if.h) is the administrative state.
	Flags Opt[uint32]
	// Carrier is the carrier file: the kernel answers it only while the interface is
	// up (netif_running) and fails with EINVAL when it is down (net-sysfs.c
	// carrier_show), so a down interface has it Missing.
	Carrier Opt[bool]
}

// IFFUp is IFF_UP in class/net/IF/flags (include/uapi/linux/if.h).
const IFFUp = 0x1

func parseNetFlags(s string) (uint32, error) {
	v, err := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 32)
	return uint32(v), err
}

func parseCarrier(s string) (bool, error) {
	switch s {
	case "0", "1":
		return s == "1", nil
	}
	return false, errors.New("not 0 or 1")
}

// ARPHRDInfiniBand is the class/net/IF/type of IPoIB interfaces.
const ARPHRDInfiniBand = 32

// NetUnread is a class/net entry that could not be read as an interface (a dangling
// link, a type file that cannot be read or parsed): whether it is IPoIB is unknown.
type NetUnread struct {
	Name string
	Err  error
}

// IPoIBInterfaces lists the IPoIB interfaces in class/net (entries are symlinks into
// devices/), and the entries it could not classify (the kernel writes type for every
// network device, net/core/net-sysfs.c): not read, never "not IPoIB". A tree without
// class/net has none.
func (s *Sysfs) IPoIBInterfaces() ([]NetInterface, []NetUnread, error) {
	ents, err := s.readDir(ClassNet)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, nil
		}
		return nil, nil, &PathError{Root: s.Root, Path: ClassNet, Err: err}
	}
	var out []NetInterface
	var unread []NetUnread
	for _, e := range ents {
		name := e.Name()
		if CheckDeviceName(name) != nil {
			continue
		}
		dir := path.Join(ClassNet, name)
		t, err := s.readFile(path.Join(dir, "type"))
		if err != nil {
			if err := s.NetEntryError(name); err != nil {
				unread = append(unread, NetUnread{Name: name, Err: err})
			}
			continue
		}
		typ, err := strconv.Atoi(t)
		if err != nil {
			unread = append(unread, NetUnread{Name: name, Err: &PathError{Root: s.Root, Path: path.Join(dir, "type"), Err: fmt.Errorf("unparsable: %q", textsafe.Text(t))}})
			continue
		}
		if typ != ARPHRDInfiniBand {
			continue
		}
		out = append(out, NetInterface{
			Name:      name,
			Address:   optional(s, dir, "address", ParseHWAddr),
			PKey:      optional(s, dir, "pkey", parseU16Hex),
			Parent:    optional(s, dir, "parent", asString),
			OperState: optional(s, dir, "operstate", asString),
			Flags:     optional(s, dir, "flags", parseNetFlags),
			Carrier:   optional(s, dir, "carrier", parseCarrier),
		})
	}
	return out, unread, nil
}

// NetEntryError says why class/net/NAME, which exists, could not be read as an
// interface (a dangling link, an unreadable type file); nil when it was read or does
// not exist at all. IPoIBInterfaces returns such entries as NetUnread: whether they
// are IPoIB is unknown.
func (s *Sysfs) NetEntryError(name string) error {
	if CheckDeviceName(name) != nil {
		return nil
	}
	dir := path.Join(ClassNet, name)
	if _, err := s.stat(dir); err != nil {
		err = s.dangling(dir, err)
		var de *DanglingError
		if errors.Is(err, fs.ErrNotExist) && !errors.As(err, &de) {
			return nil
		}
		return &PathError{Root: s.Root, Path: dir, Err: err}
	}
	_, err := s.readFile(path.Join(dir, "type"))
	return err
}

// PortState reads only ports/N/state: the watch loop's one file per port per sample
// that tells a port that went away (an error wrapping fs.ErrNotExist) from one that is up.
func (s *Sysfs) PortState(dev string, num int) (Enum, error) {
	if err := CheckDeviceName(dev); err != nil {
		return Enum{}, err
	}
	p := s.devPath(dev, "ports", strconv.Itoa(num), "state")
	v, err := s.readSmall(p)
	if err != nil {
		return Enum{}, &PathError{Root: s.Root, Path: p, Err: err}
	}
	e, err := ParseEnum(v)
	if err != nil {
		return Enum{}, &PathError{Root: s.Root, Path: p, Err: err}
	}
	return e, nil
}
