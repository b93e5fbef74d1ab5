package query

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/ibverbs"
	"github.com/ibkey/ibkey/internal/textsafe"
)

// Host is the machine ibkey looks at: a sysfs tree (the real one, a saved copy, a
// fixture or the demo host).
type Host struct {
	Sys *ibverbs.Sysfs
	// Label is shown with every answer when the host is not the real machine (the demo).
	Label string
	// NoDevicesHint is the command's advice when there is no RDMA device class at all
	// (which flag reads another tree): query names no flags, the command does.
	NoDevicesHint string
	// CharDevs is the directory of this machine's RDMA character devices
	// ("/dev/infiniband") when Sys is its own /sys; "" for another machine's tree (a
	// saved copy, a fixture, the demo host), where what a library could open is not
	// known (Unopenable).
	CharDevs string
	// Verbs opens this machine's libibverbs for MaxPKeys; nil: OpenVerbs (tests give
	// a fake library).
	Verbs func() (VerbsLib, error)
	// verbsLib is the library MaxPKeys opened (or why it could not), kept for the
	// process's life: `ibkey job --wait` reads the host again every few seconds, and
	// loading libibverbs and its providers each time would be work for nothing.
	verbsOnce sync.Once
	verbsLib  VerbsLib
	verbsErr  error
}

// Unopenable says, for each of devs that no library on this machine can open, why
// (shut): libibverbs lists a device only when its uverbs character device exists in
// /dev/infiniband (rdma-core libibverbs/init.c: setup_sysfs_dev and
// find_sysfs_devs_nl drop a device whose try_access_device stat fails), and every
// library finds its devices through ibv_get_device_list. In a container, which
// uverbsN exist is the device plugin's choice (k8s-rdma-shared-dev-plugin,
// sriov-network-device-plugin: rdmamap.GetRdmaCharDevices), while sysfs in the
// kernel's shared RDMA namespace mode lists every device of the node.
//
// unknown says, for each device whose uverbs device could not be told, why that was
// not checked: class/infiniband_verbs, or an entry's ibdev, could not be read for
// another reason than its absence (a security policy, a broken tree), and libibverbs,
// which asks the kernel over netlink (Sysfs.VerbsDevices), may list it all the same.
// Both are nil when CharDevs is "".
func (h *Host) Unopenable(devs []string) (shut, unknown map[string]string) {
	if h.CharDevs == "" || len(devs) == 0 {
		return nil, nil
	}
	shut, unknown = map[string]string{}, map[string]string{}
	uverbs, unread, err := h.Sys.VerbsDevices()
	var notChecked string
	switch {
	case errors.Is(err, fs.ErrNotExist):
		for _, d := range devs {
			shut[d] = "libibverbs lists no device here: " + err.Error() + " (ib_uverbs not loaded?)"
		}
		return shut, unknown
	case err != nil:
		notChecked = err.Error()
	case len(unread) > 0:
		notChecked = errors.Join(unread...).Error()
	}
	for _, d := range devs {
		name, ok := uverbs[d]
		switch {
		case !ok && notChecked != "":
			unknown[d] = "whether libibverbs lists it here was not checked: " + strings.ReplaceAll(notChecked, "\n", "; ")
		case !ok:
			shut[d] = "libibverbs does not list it here: no uverbs device names it in " + path.Join(h.Sys.Root, ibverbs.ClassVerbs)
		default:
			if _, serr := os.Stat(path.Join(h.CharDevs, name)); serr != nil {
				shut[d] = fmt.Sprintf("libibverbs does not list it here: %s: %s (in a container, the device plugin mounts the uverbs devices it may use)", path.Join(h.CharDevs, name), ibverbs.Describe(serr))
			}
		}
	}
	return shut, unknown
}

// MaxPKeys reads the max_pkeys of each of devs (ibv_query_device's
// ibv_device_attr.max_pkeys) as a library of this process reads it: read holds the
// devices read, unread says why each other was not. It is the device's P_Key table
// size as its driver reports it, which sysfs does not show and which on RoCE need not
// be a port's table length (rdma_rxe: 64, rxe_param.h RXE_MAX_PKEYS, for a one-entry
// table). Only this machine's own devices can be asked (CharDevs set, as for
// Unopenable): for another machine's tree (a saved copy, a fixture, the demo host)
// every device is unread, as it is when libibverbs cannot be loaded (not installed,
// the static build), a device cannot be opened (its /dev/infiniband/uverbsN not
// readable and writable by this user) or the query fails. Never a value not read.
// The library is loaded once per Host and kept; each device is opened, queried and
// closed at every call (a device plugin may mount its uverbs device later).
func (h *Host) MaxPKeys(devs []string) (read map[string]int, unread map[string]string) {
	read, unread = map[string]int{}, map[string]string{}
	all := func(why string) (map[string]int, map[string]string) {
		for _, d := range devs {
			unread[d] = why
		}
		return read, unread
	}
	if len(devs) == 0 {
		return read, unread
	}
	switch {
	case h.CharDevs == "" && h.Label != "":
		return all("max_pkeys not read: ibv_query_device asks the running kernel, and this is the " + h.Label)
	case h.CharDevs == "":
		return all(fmt.Sprintf("max_pkeys not read: ibv_query_device asks the running kernel, and %s is not this machine's /sys (a saved tree or a fixture)", h.Sys.Root))
	}
	h.verbsOnce.Do(func() {
		open := h.Verbs
		if open == nil {
			open = OpenVerbs
		}
		h.verbsLib, h.verbsErr = open()
	})
	if h.verbsErr != nil {
		return all("max_pkeys not read: " + h.verbsErr.Error())
	}
	for _, d := range devs {
		dev, err := h.verbsLib.OpenDevice(d)
		if err != nil {
			unread[d] = "max_pkeys not read: " + err.Error()
			continue
		}
		a, err := dev.QueryDevice()
		dev.Close()
		if err != nil {
			unread[d] = "max_pkeys not read: " + err.Error()
			continue
		}
		read[d] = int(a.MaxPKeys)
	}
	return read, unread
}

// ErrNoDevices: the sysfs tree has no RDMA device class (no ib_core, or not a sysfs
// root). The *EnvError that carries it says which directory is missing.
var ErrNoDevices = errors.New("no RDMA devices")

// PortRef names a port: `mlx5_0/1`.
type PortRef struct {
	Device string
	Port   int
}

func (r PortRef) String() string { return r.Device + "/" + strconv.Itoa(r.Port) }

// Selector picks ports: all ports of all devices, all ports of one device, or one port.
type Selector struct {
	Device  string // "" = every device
	Port    int
	HasPort bool
}

// DevicePortForms is what ParseSelector accepts, for error messages.
const DevicePortForms = "DEV, DEV/PORT or DEV:PORT, e.g. mlx5_0, mlx5_0/1 or mlx5_0:1"

// ParseSelector reads `DEV` or `DEV/PORT` (the iproute2 rdma convention).
func ParseSelector(s string) (Selector, error) {
	dev, port, hasPort := check.SplitPort(s)
	if !hasPort {
		dev = s
	}
	if err := ibverbs.CheckDeviceName(dev); err != nil {
		return Selector{}, &UsageError{Msg: fmt.Sprintf("invalid device %q in %q: a device name is one path component (accepted: %s)", dev, s, DevicePortForms)}
	}
	sel := Selector{Device: dev}
	if hasPort {
		n, err := ParsePortNum(port)
		if err != nil {
			return Selector{}, err
		}
		sel.Port, sel.HasPort = n, true
	}
	return sel, nil
}

// ParsePortNum reads a port number, 0-255 (port 0 is a switch's management port).
func ParsePortNum(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 255 || strconv.Itoa(n) != s {
		return 0, &UsageError{Msg: fmt.Sprintf("invalid port %q (accepted: a port number 1-255, or 0 for a switch's management port)", s)}
	}
	return n, nil
}

// Devices reads the named device, or every device when name is "".
func (h *Host) Devices(name string) ([]*ibverbs.Device, error) {
	names, err := h.Sys.DeviceNames()
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			hint := ""
			if h.NoDevicesHint != "" {
				hint = " " + h.NoDevicesHint
			}
			return nil, &EnvError{Msg: fmt.Sprintf("%v: %s/%s does not exist (is the ib_core module loaded?%s)", ErrNoDevices, strings.TrimSuffix(h.Sys.Root, "/"), ibverbs.ClassInfiniBand, hint), Err: ErrNoDevices}
		}
		if fi, serr := os.Stat(h.Sys.Root); errors.Is(err, syscall.ENOTDIR) || serr == nil && !fi.IsDir() {
			// A file given where the tree goes (the root, class or class/infiniband):
			// not a tree shaped like /sys at all. os.OpenRoot says "not a directory"
			// of a root that is a file without the errno: Stat tells.
			what := fmt.Sprintf("is not a directory shaped like /sys (%v)", err)
			if serr == nil && !fi.IsDir() {
				what = "is a file, not a directory shaped like /sys"
			}
			return nil, &EnvError{Msg: fmt.Sprintf("%v: %s %s: expected one holding %s/DEV, as /sys, a saved tree or a test fixture does; %s",
				ErrNoDevices, h.Sys.Root, what, ibverbs.ClassInfiniBand, cmp.Or(h.NoDevicesHint, "give the tree's directory")), Err: ErrNoDevices}
		}
		return nil, &EnvError{Msg: err.Error()}
	}
	names, bad := deviceNames(names)
	if name != "" {
		if err := ibverbs.CheckDeviceName(name); err != nil {
			return nil, &UsageError{Msg: fmt.Sprintf("invalid device %q: a device name is one path component, without / or .. (devices: %s)", name, strings.Join(names, ", "))}
		}
		if !slices.Contains(names, name) {
			return nil, &NotFoundError{What: "device", Name: name, Available: names}
		}
		names, bad = []string{name}, nil
	}
	if len(names) == 0 && len(bad) == 0 {
		return nil, &EnvError{Msg: fmt.Sprintf("no RDMA devices in %s/%s", strings.TrimSuffix(h.Sys.Root, "/"), ibverbs.ClassInfiniBand)}
	}
	devs := make([]*ibverbs.Device, 0, len(names))
	for _, n := range names {
		d, err := h.Sys.Device(n)
		if err != nil {
			// One broken entry must not hide the others: read the rest, and say
			// which could not be read.
			bad = append(bad, Unread{What: "device " + n, Device: n, Port: -1, Err: err})
			continue
		}
		devs = append(devs, d)
	}
	if len(bad) > 0 {
		pe := &PartialError{Unread: bad}
		if len(devs) == 0 {
			return nil, pe.Unwrap() // none read: not known (exit 4), never missing (3)
		}
		return devs, pe
	}
	return devs, nil
}

// deviceNames splits class/infiniband's entries into device names and the entries
// that are none (ibverbs.CheckDeviceName): the kernel's own names fit, but a root
// rename (rdma dev set DEV name NEW) takes an ESC byte, and libibverbs then lists the
// device (seen on Debian's 6.1 kernel: internal/kernellab TestRenamedDeviceOnKernel),
// and a saved tree may hold anything. Such an entry is a device not read, named
// terminal-safe, never dropped in silence.
func deviceNames(entries []string) (names []string, bad []Unread) {
	for _, n := range entries {
		if err := ibverbs.CheckDeviceName(n); err != nil {
			bad = append(bad, Unread{What: ibverbs.ClassInfiniBand + " entry", Device: textsafe.String(n), Port: -1, Err: err})
			continue
		}
		names = append(names, n)
	}
	return names, bad
}

// Unread is one thing that could not be read: a device, a port or an IPoIB interface
// of the host, or a fabric address (in a *PartialError), or, in NotRead, a port's
// P_Key table or entries.
type Unread struct {
	What string // "device mlx5_1", "port mlx5_0/2"; "mlx5_0/1" for a table or entries
	// Device and Port name it as values (Port -1: the whole device; a switch's
	// management port is 0), for labels (the exporter's unreadable-device metric).
	Device string
	Port   int
	// Interface names an IPoIB interface not read (Device "", Port -1: which port it
	// runs on is what was not read).
	Interface string
	// Address is a fabric address whose node or port did not answer
	// (Fabric.LoadMany: What is the selector, "lid 9", "lid 4 port 2"; Device "");
	// nil for a part of the host.
	Address *FabricSelector
	Err     error
	// Table: a P_Key table that exists and was not read (PortView.TableNotRead);
	// Entries: entries of a table read (Table.Unread). Neither: a device, a port or
	// an interface.
	Table, Entries bool
}

// Message is u in one line: "not read: device mlx5_1: ..." for a device, a port or an
// interface; "mlx5_0/1: P_Key table not read: ..." for a table or its entries.
func (u Unread) Message() string {
	if u.Table || u.Entries {
		return u.What + ": " + u.Err.Error()
	}
	return "not read: " + u.What + ": " + u.Err.Error()
}

// NotRead is the one rule for what a read of the host's ports (Load, LoadMany, or
// Fabric.LoadMany over MADs) did not read that an answer from them needs, and why, as
// fabric.Fabric.NotRead is for a sweep: the devices, ports and IPoIB interfaces that
// err names (a *PartialError), then each view's P_Key table that exists and was not
// read (TableNotRead: never one a port has none of, iWARP) or its entries not read
// (Table.Unread). Every command decides from it its notes of what was not read, its
// document's incomplete and its exit 4; empty exactly when the answer rests on nothing
// unread. Any other error comes back as fatal, for the caller to return at once.
func NotRead(views []*PortView, err error) (unread []Unread, fatal error) {
	pe, ok := errors.AsType[*PartialError](err)
	if err != nil && !ok {
		return nil, err
	}
	if ok {
		unread = append(unread, pe.Unread...)
	}
	for _, v := range views {
		if u := tableUnread(v.Ref(), v.TableNotRead(), v.Table); u != nil {
			unread = append(unread, *u)
		}
	}
	return unread, nil
}

// tableUnread is what of port ref's table was not read: the table (why, when it
// exists and was not read) or entries of t, as NotRead names them; nil for neither.
func tableUnread(ref PortRef, why string, t *Table) *Unread {
	u := &Unread{What: ref.String(), Device: ref.Device, Port: ref.Port}
	if why != "" {
		u.Err, u.Table = errors.New(why), true
		return u
	}
	if t == nil {
		return nil
	}
	if why := unreadEntries(t.Unread()); why != "" {
		u.Err, u.Entries = errors.New(why), true
		return u
	}
	return nil
}

// PartialError comes back with a result that is missing the devices, ports or fabric
// addresses in Unread: the result holds everything else and is worth showing, then the
// unread parts are listed on stderr and the command exits 4 (incomplete). A command that does not
// handle it still exits 4: it unwraps to an *UnknownError.
type PartialError struct {
	Unread []Unread
}

func (e *PartialError) Error() string {
	return textsafe.Message("not read: " + strings.Join(e.Lines(), "; "))
}

// MaxListed is how many unread parts PartialError.Lines names before it counts the
// rest: a tree with 20,000 broken device entries is one screen, not 20,000 lines.
const MaxListed = 5

// Lines names the unread parts, one a line ("device mlx5_1: ..."): fabric addresses
// not read for the same reason together, that reason said once ("lid 10, lid 11,
// lid 12: no answer via ...: HINT", as a read of which none answered says them:
// addressesFailed), a few and then a count of the addresses; the first MaxListed
// lines, then one line counting the parts not named.
func (e *PartialError) Lines() []string {
	type line struct {
		what string
		sels []FabricSelector // the addresses, when the line names addresses
		why  string
	}
	var lines []*line
	byWhy := map[string]*line{}
	for _, u := range e.Unread {
		why := u.Err.Error()
		if u.Address == nil {
			lines = append(lines, &line{what: u.What, why: why})
			continue
		}
		l := byWhy[why]
		if l == nil {
			l = &line{why: why}
			byWhy[why] = l
			lines = append(lines, l)
		}
		l.sels = append(l.sels, *u.Address)
	}
	var out []string
	for i, l := range lines {
		if i == MaxListed && len(lines) > MaxListed+1 {
			rest := 0
			for _, l := range lines[i:] {
				rest += max(1, len(l.sels))
			}
			out = append(out, fmt.Sprintf("and %d more (every one is in -o json's incomplete)", rest))
			break
		}
		what := l.what
		if l.sels != nil {
			what = SelectorList(l.sels)
		}
		out = append(out, what+": "+l.why)
	}
	return out
}

// Unwrap gives errors.As an *UnknownError (exit 4) for callers that do not handle a
// partial read, and is the error of a read in which nothing was read: what exists and
// was not read is not known, never missing (exit 3 is for what does not exist).
func (e *PartialError) Unwrap() error { return &UnknownError{Msg: e.Error(), partial: e} }

// PortView is one port with what it means.
type PortView struct {
	Device *ibverbs.Device
	Port   *ibverbs.Port
	// Table is the P_Key table; nil when not loaded or when the port has none
	// (TableMissing says why).
	Table        *Table
	TableMissing string
	// TableAbsent: the port has no P_Key table at all (an iWARP device: the kernel
	// writes no pkeys/ for a table length of 0; a node that reports a length of 0).
	// Otherwise a nil Table is a table that exists and was not read: "n/a", not
	// "none".
	TableAbsent bool
	// Interfaces are the IPoIB interfaces on this port (matched by GID 0).
	Interfaces []IPoIB
	// Warnings say when the data cannot be trusted or something will not work.
	Warnings []string
	// Fabric is set on a port read over MADs (Fabric.Load): where it was read and
	// what only the fabric tells; nil for a port read from sysfs.
	Fabric *FabricPort
}

// TableNotRead says why v's P_Key table exists and was not read: "" when it was read,
// not asked for (LoadOptions.Tables), or when the port has none at all (TableAbsent:
// iWARP). The one rule for a table: not read is not known (exit 4), never "none".
func (v *PortView) TableNotRead() string {
	if v.Table != nil || v.TableAbsent {
		return ""
	}
	return v.TableMissing
}

// DownTableNotRead reports whether v is a DOWN port read over the fabric whose P_Key
// table was not read. Nothing can read it: no SMP arrives on a DOWN port, and a CA
// answers P_KeyTable only for the port an SMP arrives on (IBA 14.2.5.7). And it is part
// of no answer about the fabric: its contents are defined only while the port is
// ARMED or ACTIVE (IBA 10.9.2; ibv_query_pkey(3)), no packet passes a DOWN port, and
// the SM programs the table before the port becomes ACTIVE again. So a table view
// shows it n/a with the reason in a note, not a gap (no exit 4), as a sweep leaves DOWN
// ports out of what it did not read (fabric.Fabric.NotRead: fabric pkeys, fabric
// check, the exporter) and watch counters their PortCounters over the fabric.
// pkeys --find, which asks what the table holds, answers unknown for it: its host's
// sysfs shows what the device holds, which may be the key.
func (v *PortView) DownTableNotRead() bool {
	return v.Fabric != nil && v.Port != nil && v.Port.State.Num == ibverbs.StateDown && v.TableNotRead() != ""
}

func (v *PortView) Ref() PortRef { return PortRef{v.Port.Device, v.Port.Num} }

// LinkLayer returns the link layer, or "" when the file is absent.
func (v *PortView) LinkLayer() string { return v.Port.LinkLayer.Value }

// TableTrusted reports whether the table's contents are defined: only while the port
// is ARMED or ACTIVE (ibv_query_pkey(3); IBA §10.9).
func (v *PortView) TableTrusted() bool {
	s := v.Port.State.Num
	return s == ibverbs.StateArmed || s == ibverbs.StateActive || s == ibverbs.StateActiveDefer
}

// Table is a decoded P_Key table.
type Table struct {
	Entries []Entry
	Valid   int // entries holding a valid key
}

// Unread are the indexes of the entries that could not be read: Valid may be short by
// as many, and a key not found may be among them.
func (t *Table) Unread() []int {
	var out []int
	for _, e := range t.Entries {
		if e.Unreadable != "" {
			out = append(out, e.Index)
		}
	}
	return out
}

// ValidCount is a table's count of valid entries as every view shows it: "4", or
// "4+" when entries were not read: then it is a lower bound (one not read may be valid).
func ValidCount(valid, unread int) string {
	if unread > 0 {
		return strconv.Itoa(valid) + "+"
	}
	return strconv.Itoa(valid)
}

// Sizes is "N entries, V valid" as pkeys and the TUI head a table, with ValidCount
// and, when entries were not read, how many: "128 entries, 4+ valid, 1 unread".
func (t *Table) Sizes() string {
	n := len(t.Unread())
	s := textsafe.Plural(len(t.Entries), "entry", "entries") + ", " + ValidCount(t.Valid, n) + " valid"
	if n > 0 {
		s += fmt.Sprintf(", %d unread", n)
	}
	return s
}

// unreadByReason groups t's unread entries by reason, each as index ranges with the
// reason: "3-127 (read failed: invalid argument)", at most MaxListed groups (then "and
// N more"): a device that refuses every query, or a stray pkeys/65535, is one line.
func unreadByReason(t *Table) []string {
	var reasons []string
	idx := map[string][]int{}
	for _, e := range t.Entries {
		if e.Unreadable == "" {
			continue
		}
		if _, ok := idx[e.Unreadable]; !ok {
			reasons = append(reasons, e.Unreadable)
		}
		idx[e.Unreadable] = append(idx[e.Unreadable], e.Index)
	}
	out := make([]string, len(reasons))
	for i, r := range reasons {
		out[i] = fmt.Sprintf("%s (%s)", strings.Join(indexRanges(idx[r]), ", "), r)
	}
	return textsafe.Capped(out, MaxListed)
}

// Entry is one decoded table entry.
type Entry struct {
	Index int
	PKey  check.PKey
	// Unreadable says why the entry could not be read ("" when it was); PKey is then
	// meaningless, never 0x0000.
	Unreadable string
	// Hole: an invalid entry below the last valid one, typically the slot of a removed
	// partition (OpenSM keeps keys at their index across reconfigurations).
	Hole bool
	// Both: the table holds this key as a full and as a limited member.
	Both bool
	// DuplicateOf is the index of an earlier entry with the same value, or -1.
	DuplicateOf int
	// Interfaces are the IPoIB interfaces whose key resolves to this entry.
	Interfaces []string
}

// Valid reports whether the entry was read and holds a valid key.
func (e *Entry) Valid() bool { return e.readable() && e.PKey.Valid() }

// IPoIB is an IPoIB interface mapped to its port.
type IPoIB struct {
	Name      string
	PKey      check.PKey // from class/net/IF/pkey: always has the full bit
	Parent    string     // "" for a parent interface
	OperState string
	// AdminUp is IFF_UP (the user's ip link set up/down); Carrier whether the kernel
	// turned carrier on, Missing while the interface is down (it has none then).
	// IPoIB turns carrier on only once it joined its partition's broadcast group
	// (drivers/infiniband/ulp/ipoib/ipoib_multicast.c). Both come from flags and
	// carrier, or else from operstate (see linkState); Missing says what was not read.
	AdminUp, Carrier ibverbs.Opt[bool]
	// Index is the table entry the kernel uses for the key (ib_find_pkey: 15-bit
	// match, a full entry preferred), or -1 when the key is not in the table: the
	// interface cannot come up. With Unknown set, it is the best entry among those
	// read (-1: none), and the kernel's may be another.
	Index int
	// Membership is the membership really used: the entry's, not the pkey file's.
	Membership check.Membership
	// Unknown says why the entries read do not decide the entry (FindPKey: none of
	// them holds the key, or only a limited one, and some could not be read: the key,
	// or a full entry of it, may be among them); "" when they do. Not read is unknown,
	// never "not in the table".
	Unknown string
}

// LoadOptions says what to read besides port attributes.
type LoadOptions struct {
	Tables     bool
	Interfaces bool
}

// Load reads the selected ports, in device then port order. With some devices or ports
// unreadable it returns the others and a *PartialError naming them.
func (h *Host) Load(sel Selector, opt LoadOptions) ([]*PortView, error) {
	devs, err := h.Devices(sel.Device)
	partial := &PartialError{}
	if err != nil && !errors.As(err, &partial) {
		return nil, err
	}
	var views []*PortView
	var failed []Unread
	for _, d := range devs {
		ports := d.Ports
		if sel.HasPort {
			if err := CheckPort(d, sel.Port); err != nil {
				return nil, err
			}
			ports = []int{sel.Port}
		} else if len(d.Ports) == 0 {
			partial.Unread = append(partial.Unread, Unread{What: "device " + d.Name, Device: d.Name, Port: -1, Err: errors.New(d.PortsNote)})
		}
		for _, num := range ports {
			v, err := h.loadPort(d, num, opt.Tables)
			if err != nil {
				failed = append(failed, Unread{What: "port " + PortRef{d.Name, num}.String(), Device: d.Name, Port: num, Err: err})
				continue
			}
			views = append(views, v)
		}
	}
	if len(failed) > 0 {
		// Show the ports that were read; list the others. None read (the one port
		// asked for, or every one): not known (exit 4), never missing (3).
		partial.Unread = append(partial.Unread, failed...)
		if len(views) == 0 {
			return nil, partial.Unwrap()
		}
	}
	if opt.Interfaces {
		ifs, unread, err := h.Sys.IPoIBInterfaces()
		if err != nil {
			return nil, &EnvError{Msg: err.Error()}
		}
		// An interface not read may run on these ports: not read, never absent.
		for _, u := range unread {
			partial.Unread = append(partial.Unread, Unread{What: "interface " + u.Name, Port: -1, Interface: u.Name, Err: u.Err})
		}
		partial.Unread = append(partial.Unread, attachInterfaces(views, ifs)...)
	}
	for _, v := range views {
		v.Warnings = append(v.Warnings, portWarnings(v)...)
	}
	if len(partial.Unread) > 0 {
		return views, partial
	}
	return views, nil
}

// CheckPort is nil when device d has port num, else a *NotFoundError listing its
// ports (exit 3).
func CheckPort(d *ibverbs.Device, num int) error {
	if slices.Contains(d.Ports, num) {
		return nil
	}
	avail := make([]string, len(d.Ports))
	for i, p := range d.Ports {
		avail[i] = strconv.Itoa(p)
	}
	return &NotFoundError{What: "port", Name: fmt.Sprintf("%d on %s", num, d.Name), Available: avail}
}

func (h *Host) loadPort(d *ibverbs.Device, num int, tables bool) (*PortView, error) {
	p, err := h.Sys.Port(d.Name, num)
	if err != nil {
		return nil, err
	}
	v := &PortView{Device: d, Port: p}
	if !tables {
		return v, nil
	}
	if !p.HasPKeys {
		v.TableMissing, v.TableAbsent = NoTableDir(v)
		return v, nil
	}
	raw, err := h.Sys.PKeys(d.Name, num)
	if err != nil {
		if errors.Is(err, ibverbs.ErrNoTable) {
			v.TableMissing, v.TableAbsent = NoTableDir(v)
			return v, nil
		}
		// The port's state, LID and rate were read: its row stays, with the table
		// not read and why (n/a, never "none"; the command exits 4).
		v.TableMissing = "P_Key table not read: " + err.Error()
		return v, nil
	}
	if len(raw) == 0 {
		// The kernel creates pkeys/ only for a non-zero table length, so an empty one
		// is a damaged or hand-made tree: say so rather than show an empty table.
		v.TableMissing = "P_Key table not read: pkeys/ is empty (the kernel writes one file per entry)"
		return v, nil
	}
	v.Table = DecodeTable(raw)
	return v, nil
}

// nodeTypeRNIC is node_type 4, an iWARP device (drivers/infiniband/core/sysfs.c,
// show_node_type: RDMA_NODE_RNIC).
const nodeTypeRNIC = 4

// NoTableDir says why a port read from sysfs has no pkeys/ directory, and whether
// that means it has no table at all (absent: iWARP) rather than a table not read.
// The kernel writes one for every port whose table length is not 0
// (drivers/infiniband/core/sysfs.c: the pkeys group exists only with pkey_tbl_len): an
// iWARP device has none, and P_Keys do not apply to it; any other port has a table
// (InfiniBand and RoCE ports have at least the default entry), so a missing directory
// is a table not read (a saved tree that lost it, a driver that failed), never "no
// table".
func NoTableDir(v *PortView) (why string, absent bool) {
	if d := v.Device; d.NodeType.OK() && d.NodeType.Value.Num == nodeTypeRNIC {
		return "no P_Key table: the port has no pkeys/ directory (iWARP devices have none: P_Keys do not apply)", true
	}
	return "P_Key table not read: pkeys/ does not exist, and the kernel writes it for every " + cmp.Or(v.LinkLayer(), "this") + " port (only iWARP devices have no table)", false
}

// DecodeTable gives raw entries their meaning: validity, holes, keys held both ways,
// duplicates.
func DecodeTable(raw []ibverbs.PKeyEntry) *Table {
	t := &Table{Entries: make([]Entry, len(raw))}
	last := -1
	full := map[check.PartitionKey]bool{}
	limited := map[check.PartitionKey]bool{}
	first := map[check.PKey]int{}
	for i, r := range raw {
		e := Entry{Index: r.Index, PKey: check.PKey(r.Value), DuplicateOf: -1}
		if r.Err != nil {
			e.Unreadable = r.Err.Error()
			e.PKey = 0
		}
		if e.Valid() {
			t.Valid++
			last = i
			if e.PKey.IsFull() {
				full[e.PKey.Partition()] = true
			} else {
				limited[e.PKey.Partition()] = true
			}
			if j, ok := first[e.PKey]; ok {
				e.DuplicateOf = j
			} else {
				first[e.PKey] = e.Index
			}
		}
		t.Entries[i] = e
	}
	for i := range t.Entries {
		e := &t.Entries[i]
		if e.Valid() {
			e.Both = full[e.PKey.Partition()] && limited[e.PKey.Partition()]
		} else if e.Unreadable == "" && i < last {
			e.Hole = true
		}
	}
	return t
}

// tableOf decodes a table read whole, every entry readable (over MADs, or in a sweep).
func tableOf[K ~uint16](keys []K) *Table {
	raw := make([]ibverbs.PKeyEntry, len(keys))
	for i, k := range keys {
		raw[i] = ibverbs.PKeyEntry{Index: i, Value: uint16(k)}
	}
	return DecodeTable(raw)
}

// checkEntries returns the table in the form check's rules take.
func (t *Table) checkEntries() []check.TableEntry {
	out := make([]check.TableEntry, len(t.Entries))
	for i, e := range t.Entries {
		out[i] = check.TableEntry{Index: e.Index, PKey: e.PKey, Readable: e.readable()}
	}
	return out
}

// attachInterfaces maps IPoIB interfaces to the views by GID 0. It returns the
// interfaces that could not be mapped for want of a read: an address or pkey file not
// read, or an address that names no port while some port's GID 0 was not read (the
// interface may run on it). Device is "" and Port -1 in them: the port is unknown.
func attachInterfaces(views []*PortView, ifs []ibverbs.NetInterface) []Unread {
	sort.Slice(ifs, func(i, j int) bool { return ifs[i].Name < ifs[j].Name })
	var noGID []string
	for _, v := range views {
		if !v.Port.GID0.OK() {
			noGID = append(noGID, fmt.Sprintf("%s (%s)", v.Ref(), v.Port.GID0.Missing))
		}
	}
	var unread []Unread
	for _, nif := range ifs {
		var why string
		switch {
		case !nif.Address.OK():
			why = nif.Address.Missing
		case len(nif.Address.Value) != 20:
			why = fmt.Sprintf("address: %d bytes, not the 20 of an IPoIB address", len(nif.Address.Value))
		case !nif.PKey.OK():
			why = nif.PKey.Missing
		}
		if why != "" {
			// Named with its path: the reason is a label of the exporter's metric,
			// which must differ between interfaces.
			unread = append(unread, Unread{What: "interface " + nif.Name, Port: -1, Interface: nif.Name, Err: errors.New(path.Join(ibverbs.ClassNet, nif.Name, why))})
			continue
		}
		gid := nif.Address.Value[4:]
		matched := false
		for _, v := range views {
			if !v.Port.GID0.OK() || !bytes.Equal(v.Port.GID0.Value[:], gid) {
				continue
			}
			matched = true
			ip := IPoIB{Name: nif.Name, PKey: check.PKey(nif.PKey.Value), Parent: nif.Parent.Value,
				OperState: nif.OperState.Value, Index: -1}
			ip.AdminUp, ip.Carrier = linkState(nif)
			switch r := FindPKey(v, ip.PKey); r.Outcome {
			case FindFound:
				ip.Index, ip.Membership, ip.Unknown = r.Entry.Index, r.Entry.PKey.Membership(), r.Reason
				if r.Reason == "" {
					r.Entry.Interfaces = append(r.Entry.Interfaces, nif.Name)
				}
			case FindUnknown:
				ip.Unknown = r.Reason
			}
			v.Interfaces = append(v.Interfaces, ip)
		}
		if !matched && len(noGID) > 0 {
			unread = append(unread, Unread{What: "interface " + nif.Name, Port: -1, Interface: nif.Name,
				Err: fmt.Errorf("not matched: GID 0 of %s not read, and %s may run there", strings.Join(textsafe.Capped(noGID, MaxListed), ", "), nif.Name)})
		}
	}
	return unread
}

// linkState is an interface's administrative state and carrier, from flags and
// carrier, else from operstate. The kernel shows operstate "down" for every interface
// that is not running (net/core/net-sysfs.c operstate_show), so any other operstate
// means admin up; "up" needs carrier, and "down" or "lowerlayerdown" on a running
// interface means none (net/core/link_watch.c default_operstate: a child, whose
// iflink is its parent (ipoib_main.c ipoib_get_iflink), without carrier is
// "lowerlayerdown" when the parent has none either and "down" otherwise; kernels
// before the 2024 change there show "lowerlayerdown" whenever the child has none).
// operstate lags carrier by up to a second (linkwatch), and stays "unknown" on a
// device that never had a carrier event. Seen on Linux 6.1 in the kernel lab (dummy
// and vlan devices): flags 0x82 down, 0x83 up; carrier EINVAL while down; a vlan whose
// parent has no carrier "lowerlayerdown"; an up dummy never given a carrier event
// "unknown" with carrier 1.
func linkState(nif ibverbs.NetInterface) (admin, carrier ibverbs.Opt[bool]) {
	op := nif.OperState
	switch {
	case nif.Flags.OK():
		admin.Value = nif.Flags.Value&ibverbs.IFFUp != 0
	case op.OK() && op.Value != "down":
		admin.Value = true
	case op.OK():
		admin.Missing = nif.Flags.Missing + "; operstate \"down\" fits both a down interface and one without carrier"
	default:
		admin.Missing = nif.Flags.Missing + "; " + op.Missing
	}
	switch {
	case !admin.OK():
		carrier.Missing = admin.Missing
	case !admin.Value:
		carrier.Missing = "the interface is down"
	case nif.Carrier.OK():
		carrier.Value = nif.Carrier.Value
	case op.OK() && (op.Value == "up" || op.Value == "down" || op.Value == "lowerlayerdown"):
		carrier.Value = op.Value == "up"
	case op.OK():
		carrier.Missing = nif.Carrier.Missing + "; operstate is " + strconv.Quote(op.Value)
	default:
		carrier.Missing = nif.Carrier.Missing + "; " + op.Missing
	}
	return admin, carrier
}

// StaleTable is the warning for a table read from a port that is not ARMED or ACTIVE,
// "" for a table that is trusted or was not read.
func StaleTable(v *PortView) string {
	if v.Table == nil || v.TableTrusted() {
		return ""
	}
	return fmt.Sprintf("%s is %s: a P_Key table is valid only while the port is ARMED or ACTIVE; these entries may be stale", v.Ref(), v.Port.State.Name)
}

// portWarnings are v's warnings; a port whose table was not read has none.
func portWarnings(v *PortView) []string {
	if v.Table == nil {
		return nil
	}
	var w []string
	ref := v.Ref().String()
	if s := StaleTable(v); s != "" {
		w = append(w, s)
	}
	if v.LinkLayer() == "Ethernet" {
		w = append(w, fmt.Sprintf("%s is RoCE (link layer Ethernet): P_Keys are an InfiniBand feature; only the default P_Key 0xffff is used", ref))
	}
	if unread := v.Table.Unread(); len(unread) > 0 {
		w = append(w, fmt.Sprintf("%s: %s could not be read: %s", ref, textsafe.Plural(len(unread), "P_Key entry", "P_Key entries"), strings.Join(unreadByReason(v.Table), ", ")))
	}
	for _, ip := range v.Interfaces {
		switch {
		case ip.Unknown != "" && ip.Index >= 0 && ip.Membership == check.Full:
			// FindPKey: a full entry either way; an entry not read before it may be it.
			w = append(w, fmt.Sprintf("%s uses P_Key %s: the %s table holds it as a full member, but which entry it runs with is unknown: %s", ip.Name, ip.PKey, ref, ip.Unknown))
		case ip.Unknown != "" && ip.Index >= 0:
			w = append(w, fmt.Sprintf("%s uses P_Key %s: the %s table holds it, but which entry it runs with (full or limited) is unknown: %s", ip.Name, ip.PKey, ref, ip.Unknown))
		case ip.Unknown != "":
			w = append(w, fmt.Sprintf("%s uses P_Key %s: whether the %s table holds it, and so whether it can come up, is unknown: %s", ip.Name, ip.PKey, ref, ip.Unknown))
		case ip.Index < 0:
			w = append(w, fmt.Sprintf("%s uses P_Key %s (partition %s), which is not in the %s table: the interface cannot come up (kernel: \"PKEY is not assigned\")", ip.Name, ip.PKey, ip.PKey.Partition().String(), ref))
		case ip.Membership == check.Limited:
			// The pkey file always shows the full bit; the entry the kernel found is
			// limited, so the interface is a limited member (drivers/infiniband/ulp/ipoib:
			// ipoib_pkey_dev_check_presence and ib_find_pkey).
			w = append(w, fmt.Sprintf("%s shows P_Key %s, but the %s table holds only %s (limited) at index %d: it runs as a limited member and reaches only full members of partition %s", ip.Name, ip.PKey, ref, ip.PKey.WithMembership(check.Limited), ip.Index, ip.PKey.Partition().String()))
		default:
			if c := carrierWarning(v, ip); c != "" {
				w = append(w, c)
			}
		}
	}
	return w
}

// carrierWarning says why an IPoIB interface whose key the table holds as a full
// member has no carrier, or that whether it has is unknown; "" when it has carrier or
// the user turned it off. IPoIB turns carrier on only after it joined its
// partition's broadcast group, and it joins only on an ACTIVE port
// (drivers/infiniband/ulp/ipoib/ipoib_multicast.c: ipoib_mcast_join_task,
// ipoib_mcast_carrier_on_task). Its join of that group leaves out the Q_Key, MTU and
// other components an SA needs to create a group (ipoib_mcast_join, IBA 15.2.5.17),
// so the SM must have made it: OpenSM does for partitions.conf lines with the ipoib
// flag, and refuses the join otherwise (its log: ERR 1B11).
func carrierWarning(v *PortView, ip IPoIB) string {
	ref := v.Ref().String()
	switch {
	case !ip.AdminUp.OK():
		return fmt.Sprintf("%s: whether it is up and has carrier is unknown (not read: %s)", ip.Name, ip.AdminUp.Missing)
	case !ip.AdminUp.Value:
		return ""
	case !ip.Carrier.OK():
		return fmt.Sprintf("%s is up; whether it has carrier is unknown (not read: %s)", ip.Name, ip.Carrier.Missing)
	case ip.Carrier.Value:
		return ""
	case v.Port.State.Num != ibverbs.StateActive:
		return fmt.Sprintf("%s is up without carrier: %s is %s, and IPoIB joins its broadcast group, which turns carrier on, only on an ACTIVE port (kernel ipoib_multicast.c)", ip.Name, ref, v.Port.State.Name)
	}
	for _, p := range v.Interfaces {
		// ipoib_main.c ipoib_open: "parent device %s is not up, so child device may be
		// not functioning" (on some devices it works).
		if ip.Parent != "" && p.Name == ip.Parent && p.AdminUp.OK() && !p.AdminUp.Value {
			return fmt.Sprintf("%s is up without carrier, and its parent %s is down: on some devices a child does not work while its parent is down (kernel ipoib_main.c ipoib_open); bring %s up first", ip.Name, p.Name, p.Name)
		}
	}
	return fmt.Sprintf("%s is up without carrier though the %s table holds P_Key %s (index %d): IPoIB gets carrier only once it joined the broadcast group ff12:401b:%04x::ffff:ffff, which the SM must have made (kernel ipoib_multicast.c); likely partitions.conf gives partition %s no ipoib flag (Default: Default=0x7fff, ipoib), or the interface's broadcast address is in another scope than 2 (the ipoib flag makes the link-local group only, whatever scope= says), or the join is still under way: run 'ibkey partitions check FILE' and 'ibkey sm log' (ERR 1B11)", ip.Name, ref, ip.PKey, ip.Index, uint16(ip.PKey), ip.PKey.Partition().String())
}
