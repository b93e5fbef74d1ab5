// Package fakesysfs writes sysfs trees shaped like the kernel's (drivers/infiniband/core/sysfs.c,
// Documentation/ABI/stable/sysfs-class-infiniband) for
// tests, the demo host and benchmarks: class/infiniband/DEV and class/net/IF are
// symlinks into devices/, files end in a newline unless the tree imitates a simulator.
package fakesysfs

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
)

// Host is a whole tree.
type Host struct {
	Devices []Device
	Net     []NetIf
	// NoNewline writes values without the trailing newline, as simulators do.
	NoNewline bool
	// NoSymlinks puts device and interface directories directly under class/ (for
	// trees embedded with go:embed, which cannot hold symlinks).
	NoSymlinks bool
	// Dangling are device names written as class/infiniband/NAME symlinks into
	// devices/virtual/infiniband/NAME, which is not written: a saved tree that did
	// not capture the link's target.
	Dangling []string
}

// Device is one RDMA device. A field tagged sysfs is the file of that name; an empty
// one is not written.
type Device struct {
	Name         string
	PCI          string // PCI address, e.g. 0000:03:00.0 (for the devices/ path)
	NodeType     string `sysfs:"node_type"` // `1: CA`
	NodeGUID     string `sysfs:"node_guid"` // `0002:c903:00a1:b2c0`
	SysImageGUID string `sysfs:"sys_image_guid"`
	NodeDesc     string `sysfs:"node_desc"`
	FWVer        string `sysfs:"fw_ver"`
	HCAType      string `sysfs:"hca_type"`
	BoardID      string `sysfs:"board_id"`
	HWRev        string `sysfs:"hw_rev"`
	// Driver, when set, is the PCI device's driver: its uevent's DRIVER line and,
	// with symlinks, device/driver (drivers/base/core.c dev_uevent, driver_sysfs_add).
	Driver string
	Ports  []Port
}

// Port is one port, its files as Device's. A nil PKeys writes no pkeys/ directory; a nil
// Counters no counters/.
type Port struct {
	Num       int
	State     string   `sysfs:"state"`      // `4: ACTIVE`
	PhysState string   `sysfs:"phys_state"` // `5: LinkUp`
	LID       string   `sysfs:"lid"`        // `0x1a`
	SMLID     string   `sysfs:"sm_lid"`
	LMC       string   `sysfs:"lid_mask_count"`
	SMSL      string   `sysfs:"sm_sl"`
	CapMask   string   `sysfs:"cap_mask"`
	Rate      string   `sysfs:"rate"`
	LinkLayer string   `sysfs:"link_layer"`
	GIDs      []string // gids/0.. (full uncompressed form)
	PKeys     []string // pkeys/0.. as the kernel prints them (`0xffff`)
	// Unreadable lists pkey indexes written as a symlink to itself, so reading the
	// file fails (ELOOP) even as root, like an entry the device refuses to report.
	Unreadable []int
	Counters   map[string]string
}

// NetIf is a network interface in class/net, its files as Device's.
type NetIf struct {
	Name      string
	Device    string // the RDMA device it sits on (for the devices/ path)
	Type      string `sysfs:"type"` // `32` for IPoIB, `1` for Ethernet
	Address   string `sysfs:"address"`
	PKey      string `sysfs:"pkey"`
	Parent    string `sysfs:"parent"`
	DevPort   string `sysfs:"dev_port"`
	OperState string `sysfs:"operstate"`
	Flags     string `sysfs:"flags"`   // `0x1003`: IFF_UP (0x1) set
	Carrier   string `sysfs:"carrier"` // `1`, `0`; the kernel refuses it (EINVAL) while down
	// Unreadable lists files written as a symlink to itself, so reading them fails
	// (ELOOP) even as root, as carrier does for a down interface.
	Unreadable []string
}

// Write creates the tree under dir (which must not exist or be empty).
func Write(dir string, h Host) error {
	w := writer{nl: !h.NoNewline}
	pci := map[string]string{}
	for _, d := range h.Devices {
		pci[d.Name] = d.PCI
		real := filepath.Join(dir, "devices", "pci0000:00", d.PCI, "infiniband", d.Name)
		if h.NoSymlinks {
			real = filepath.Join(dir, "class", "infiniband", d.Name)
		}
		w.attrs(real, d)
		w.mkdir(filepath.Join(real, "ports"))
		for _, p := range d.Ports {
			w.port(filepath.Join(real, "ports", strconv.Itoa(p.Num)), p)
		}
		if !h.NoSymlinks {
			w.link(filepath.Join(dir, "class", "infiniband", d.Name),
				filepath.Join("..", "..", "devices", "pci0000:00", d.PCI, "infiniband", d.Name))
		}
		if d.Driver != "" {
			w.driver(dir, real, d, h.NoSymlinks)
		}
	}
	for _, name := range h.Dangling {
		w.link(filepath.Join(dir, "class", "infiniband", name),
			filepath.Join("..", "..", "devices", "virtual", "infiniband", name))
	}
	for _, n := range h.Net {
		real := filepath.Join(dir, "devices", "pci0000:00", pci[n.Device], "net", n.Name)
		if n.Device == "" {
			real = filepath.Join(dir, "devices", "virtual", "net", n.Name)
		}
		if h.NoSymlinks {
			real = filepath.Join(dir, "class", "net", n.Name)
		}
		w.attrs(real, n)
		for _, f := range n.Unreadable {
			w.link(filepath.Join(real, f), f)
		}
		if !h.NoSymlinks {
			rel, _ := filepath.Rel(filepath.Join(dir, "class", "net"), real)
			w.link(filepath.Join(dir, "class", "net", n.Name), rel)
		}
	}
	return w.err
}

// driver writes the PCI device of d (whose directory is real) bound to d.Driver:
// its uevent, and the device and driver links; without symlinks device/ is a
// directory holding the uevent.
func (w *writer) driver(dir, real string, d Device, noSymlinks bool) {
	pci := filepath.Join(dir, "devices", "pci0000:00", d.PCI)
	if noSymlinks {
		pci = filepath.Join(real, "device")
	}
	w.file(pci, "uevent", "DRIVER="+d.Driver+"\nPCI_SLOT_NAME="+d.PCI)
	if !noSymlinks {
		w.link(filepath.Join(real, "device"), filepath.Join("..", "..", "..", d.PCI))
		w.link(filepath.Join(pci, "driver"), filepath.Join("..", "..", "..", "bus", "pci", "drivers", d.Driver))
	}
}

type writer struct {
	nl  bool
	err error
}

func (w *writer) mkdir(p string) {
	if w.err == nil {
		w.err = os.MkdirAll(p, 0o755)
	}
}

func (w *writer) file(dir, name, value string) {
	if value == "" || w.err != nil {
		return
	}
	w.mkdir(dir)
	if w.nl {
		value += "\n"
	}
	if w.err == nil {
		w.err = os.WriteFile(filepath.Join(dir, name), []byte(value), 0o444)
	}
}

// attrs writes each string field of the struct v that has a sysfs tag as the file the
// tag names, in dir.
func (w *writer) attrs(dir string, v any) {
	rv := reflect.ValueOf(v)
	for i := range rv.NumField() {
		if name := rv.Type().Field(i).Tag.Get("sysfs"); name != "" {
			w.file(dir, name, rv.Field(i).String())
		}
	}
}

func (w *writer) link(at, target string) {
	w.mkdir(filepath.Dir(at))
	if w.err == nil {
		w.err = os.Symlink(target, at)
	}
}

func (w *writer) port(dir string, p Port) {
	w.mkdir(dir)
	w.attrs(dir, p)
	for i, g := range p.GIDs {
		w.file(filepath.Join(dir, "gids"), strconv.Itoa(i), g)
	}
	if p.PKeys != nil {
		pk := filepath.Join(dir, "pkeys")
		w.mkdir(pk)
		for i, v := range p.PKeys {
			if slices.Contains(p.Unreadable, i) {
				w.link(filepath.Join(pk, strconv.Itoa(i)), strconv.Itoa(i))
			} else {
				w.file(pk, strconv.Itoa(i), v)
			}
		}
	}
	if p.Counters != nil {
		w.mkdir(filepath.Join(dir, "counters"))
		for n, v := range p.Counters {
			w.file(filepath.Join(dir, "counters"), n, v)
		}
	}
}

// GUID formats a 64-bit value the way node_guid does.
func GUID(v uint64) string {
	return fmt.Sprintf("%04x:%04x:%04x:%04x", v>>48, v>>32&0xffff, v>>16&0xffff, v&0xffff)
}

// GID0 is the GID 0 of an IB port: the default subnet prefix fe80::/64 + the port GUID.
func GID0(portGUID uint64) string {
	return "fe80:0000:0000:0000:" + GUID(portGUID)
}

// IPoIBAddress is /sys/class/net/IF/address for an IPoIB interface on a port with the
// given GUID: 4 bytes (flags and QPN) then the 16-byte GID 0.
func IPoIBAddress(qpn uint32, portGUID uint64) string {
	b := binary.BigEndian.AppendUint32(nil, qpn)
	b = binary.BigEndian.AppendUint64(append(b, 0xfe, 0x80, 0, 0, 0, 0, 0, 0), portGUID)
	return net.HardwareAddr(b).String() // 20 bytes, each as two hex digits, colons between
}

// Table returns n entries: the given values first, then 0x0000 (empty entries).
func Table(n int, values ...string) []string {
	t := make([]string, n)
	for i := range t {
		t[i] = "0x0000"
	}
	copy(t, values)
	return t
}

// IBCounters returns a counters/ directory of an IB port with every error counter at 0
// and the given overrides.
func IBCounters(over map[string]string) map[string]string {
	m := map[string]string{}
	for _, n := range []string{"symbol_error", "link_error_recovery", "link_downed",
		"port_rcv_errors", "port_rcv_remote_physical_errors", "port_rcv_switch_relay_errors",
		"port_xmit_discards", "port_xmit_constraint_errors", "port_rcv_constraint_errors",
		"local_link_integrity_errors", "excessive_buffer_overrun_errors", "VL15_dropped",
		"port_xmit_wait", "port_xmit_data", "port_rcv_data", "port_xmit_packets", "port_rcv_packets"} {
		m[n] = "0"
	}
	for k, v := range over {
		m[k] = v
	}
	return m
}

// LoopPKeys makes port's pkeys/ in the tree at dir a symbolic link to itself, which
// the kernel never writes and no read gets through (ELOOP): a table that exists and
// cannot be read, the port beside it read as usual.
func LoopPKeys(dir, dev string, port int) error {
	pk := filepath.Join(dir, "class/infiniband", dev, "ports", strconv.Itoa(port), "pkeys")
	return errors.Join(os.RemoveAll(pk), os.Symlink("pkeys", pk))
}
