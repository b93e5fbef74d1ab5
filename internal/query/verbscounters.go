package query

import (
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/ibverbs"
	"github.com/ibkey/ibkey/internal/ibverbs/verbs"
)

// Counters over verbs: ibv_query_port's bad_pkey_cntr and qkey_viol_cntr, the P_Key and
// Q_Key violation counters sysfs does not have, readable by every user who may open
// /dev/infiniband/uverbsN (mode 0666 by default) without MADs or root. For local ports
// they are preferred over SMPs (PortInfo): no privilege, no fabric access, and the same
// 16-bit saturating counters (IBA 14.2.5.6; rdma_rxe caps them at 0xffff too).

// SourceVerbs labels the verbs counters in every output.
const SourceVerbs = "verbs"

// VerbsLib is the part of an opened libibverbs the verbs source uses (verbs.Lib).
type VerbsLib interface {
	OpenDevice(name string) (VerbsDevice, error)
	Close() error
}

// VerbsDevice is an opened verbs device (verbs.Device).
type VerbsDevice interface {
	QueryPort(port int) (verbs.PortAttr, error)
	QueryDevice() (verbs.DeviceAttr, error)
	Close() error
}

type verbsLib struct{ l *verbs.Lib }

func (v verbsLib) OpenDevice(name string) (VerbsDevice, error) {
	d, err := v.l.OpenDevice(name)
	if err != nil {
		return nil, err
	}
	return d, nil
}

func (v verbsLib) Close() error { return v.l.Close() }

// OpenVerbs loads the system's libibverbs. The error says why verbs cannot be used
// here (no library, no RDMA stack, a static build); a verbs source then is n/a with it.
// Only for the real /sys: verbs devices are the running kernel's, not a saved tree's.
func OpenVerbs() (VerbsLib, error) {
	l, err := verbs.Open()
	if err != nil {
		return nil, err
	}
	return verbsLib{l}, nil
}

// VerbsCounters reads the violation counters of local ports through verbs. Devices are
// opened on first use and kept open until Close. A device that cannot be opened is n/a
// with the reason, and opened again at its next read (a driver loaded later, or a
// device plugin that gives the container its uverbs device later); one whose query
// fails as a removed device's does (EIO, ENODEV: rdma-core returns them once the
// kernel disassociated the context, as a driver reload or a reset does) is closed and
// opened again at its next read, so a long-running exporter follows the device.
type VerbsCounters struct {
	lib VerbsLib
	// why is set when lib is nil: why verbs cannot be used at all.
	why string
	// Driver names a device's driver and whether it is an RNIC (iWARP), for
	// verbsCounts; nil: not known.
	Driver func(dev string) (driver string, rnic bool)
	mu     sync.Mutex
	devs   map[string]VerbsDevice
	// drivers are Driver's answers for the devices open (it reads sysfs): asked
	// once per device, again after forget.
	drivers map[string]deviceDriver
	// reopened: per device forgotten, its ports read since; the first reading of
	// each other port is Restarted.
	reopened map[string]map[int]bool
}

type deviceDriver struct {
	name string
	rnic bool
}

// NewVerbsCounters reads through lib; with a nil lib every counter is n/a with
// openErr's reason (the error OpenVerbs returned).
func NewVerbsCounters(lib VerbsLib, openErr error) *VerbsCounters {
	v := &VerbsCounters{lib: lib, devs: map[string]VerbsDevice{}, drivers: map[string]deviceDriver{}, reopened: map[string]map[int]bool{}}
	if lib == nil {
		v.why = "verbs unavailable"
		if openErr != nil {
			v.why = openErr.Error()
		}
	}
	return v
}

// LocalVerbs opens libibverbs for the host's ports. Verbs read the running kernel's
// devices, so they apply only to the real /sys, not to a saved tree, a fixture or the
// demo host (nil then). When the library cannot be loaded the source is still
// returned: its counters are n/a with the reason, and the sources after it answer.
func LocalVerbs(h *Host) *VerbsCounters {
	if h.Label != "" || filepath.Clean(h.Sys.Root) != "/sys" {
		return nil
	}
	lib, err := OpenVerbs()
	v := NewVerbsCounters(lib, err)
	v.Driver = func(dev string) (string, bool) { return DriverOf(h.Sys, dev) }
	return v
}

// DriverOf names the driver of device dev, whose port is on an Ethernet link layer,
// and whether its node type is RNIC (iWARP), as driverFrom says from what sysfs holds.
func DriverOf(sys *ibverbs.Sysfs, dev string) (driver string, rnic bool) {
	var nt ibverbs.Opt[ibverbs.Enum]
	if d, err := sys.Device(dev); err == nil {
		nt = d.NodeType
	}
	return driverFrom(sys.Origin(dev), nt)
}

// driverFrom names the driver of a device of origin o and node type nt: rdma_rxe for a
// software RoCE device (check.QKeyDevice.SoftRoCE, the rule can-talk's Q_Key rule
// uses), else device/driver's basename (mlx5_core), "" when not known; and whether it
// is an RNIC (iWARP).
func driverFrom(o ibverbs.Origin, nt ibverbs.Opt[ibverbs.Enum]) (driver string, rnic bool) {
	if !nt.OK() {
		return o.Driver.Value, false
	}
	if (check.QKeyDevice{Virtual: o.Virtual, Parent: o.Parent.Value, NodeType: nt.Value.Num, LinkLayer: "Ethernet"}).SoftRoCE() {
		return "rdma_rxe", false
	}
	return o.Driver.Value, nt.Value.Num == 4
}

// verbsCounts says whether ibv_query_port's counter name (PKeyViolations or
// QKeyViolations) counts anything on port a of a device with this driver (rnic:
// iWARP): "" when it does, else why its value is no count, and whether the port has
// no such counter at all (absent) rather than one not known. On InfiniBand every
// driver fills both from PortInfo or the HCA's vport context (mlx5
// mlx5_query_hca_port, mlx4 ib_link_query_port); on an Ethernet link layer see
// ethernetCounts, and mlx5 fills qkey_viol_cntr only where it also reports a GID
// table: not on a representor port nor with RoCE disabled (mlx5_query_port_roce,
// since Linux 5.12's "IB/mlx5: Improve query port for representor port"; a
// representor had no GID table before that either). ibv_query_port reports 0 where
// nothing counts: that 0 is never shown as a count.
func verbsCounts(name string, a verbs.PortAttr, driver string, rnic bool) (why string, absent bool) {
	switch {
	case a.LinkLayer != 2: // InfiniBand, or unspecified (drivers from before RoCE)
		return "", false
	case driver == "mlx5_core" && name == QKeyViolations && a.GIDTblLen == 0:
		return "mlx5 counts Q_Key violations only on a RoCE port, and this one has no GID table (a representor, or RoCE disabled): ibv_query_port reports 0 (mlx5_query_port_roce)", true
	}
	return ethernetCounts(name, driver, rnic)
}

// ethernetCounts says whether counter name (PKeyViolations or QKeyViolations) counts
// anything on an Ethernet link layer port of a device with this driver (rnic:
// iWARP), as verbsCounts does: rdma_rxe counts both (rxe_recv.c check_keys); mlx5
// fills only qkey_viol_cntr, from the NIC vport (mlx5_query_port_roce), and leaves
// bad_pkey_cntr 0; iWARP has neither key; any other RoCE driver is not known to
// count them.
func ethernetCounts(name, driver string, rnic bool) (why string, absent bool) {
	switch {
	case rnic:
		return "iWARP has no P_Keys or Q_Keys: ibv_query_port reports 0", true
	case driver == "rdma_rxe", driver == "mlx5_core" && name == QKeyViolations:
		return "", false
	case driver == "mlx5_core":
		return "mlx5 does not count P_Key violations on RoCE: ibv_query_port reports 0 (mlx5_query_port_roce)", true
	case driver == "":
		return "on an Ethernet link layer only some drivers count it (rdma_rxe; mlx5 Q_Key violations) and this device's driver is not known: ibv_query_port reports 0 either way", false
	}
	return fmt.Sprintf("on an Ethernet link layer only some drivers count it (rdma_rxe; mlx5 Q_Key violations), not known for %s: ibv_query_port reports 0 either way", driver), false
}

func (*VerbsCounters) Name() string { return SourceVerbs }

func (v *VerbsCounters) device(name string) (VerbsDevice, string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.lib == nil {
		return nil, v.why
	}
	if d, ok := v.devs[name]; ok {
		return d, ""
	}
	d, err := v.lib.OpenDevice(name)
	if err != nil {
		if errors.Is(err, verbs.ErrNoDevice) {
			return nil, fmt.Sprintf("%s is not a verbs device here (%v)", name, err)
		}
		return nil, err.Error()
	}
	v.devs[name] = d
	return d, ""
}

// forget closes d, the device name was opened as, after a query failed as a removed
// device's does: the next read opens the device again. The kernel unregistered the
// device that context was of, and the one opened next may be a new one whose counters
// restarted (rdma_rxe's, kept in its port's attributes: rxe_recv.c set_bad_pkey_cntr),
// so the first reading from it is Restarted.
func (v *VerbsCounters) forget(name string, d VerbsDevice) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.devs[name] == d {
		delete(v.devs, name)
		delete(v.drivers, name)
		v.reopened[name] = map[int]bool{}
		d.Close()
	}
}

// restarted reports whether ref's device was forgotten since ref was last read:
// its reading now is the first from the device opened again.
func (v *VerbsCounters) restarted(ref PortRef) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	read, ok := v.reopened[ref.Device]
	if !ok || read[ref.Port] {
		return false
	}
	read[ref.Port] = true
	return true
}

// driver is Driver's answer for device name, read once while the device is open.
func (v *VerbsCounters) driver(name string) (string, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	d, ok := v.drivers[name]
	if !ok {
		d.name, d.rnic = v.Driver(name)
		v.drivers[name] = d
	}
	return d.name, d.rnic
}

// Read implements CounterSource: one ibv_query_port per port per sample.
func (v *VerbsCounters) Read(ref PortRef, names []string, out []Reading) {
	d, why := v.device(ref.Device)
	if d == nil {
		fill(out, Reading{Unavailable: why})
		return
	}
	a, err := d.QueryPort(ref.Port)
	if err != nil {
		if errors.Is(err, syscall.EIO) || errors.Is(err, syscall.ENODEV) {
			v.forget(ref.Device, d)
		}
		fill(out, Reading{Err: err.Error()})
		return
	}
	driver, rnic := "", false
	if a.LinkLayer == 2 && v.Driver != nil {
		driver, rnic = v.driver(ref.Device)
	}
	restarted := v.restarted(ref)
	count := func(name string, n uint32) Reading {
		if why, absent := verbsCounts(name, a, driver, rnic); why != "" {
			return Reading{Unavailable: why, Absent: absent}
		}
		return Reading{Value: uint64(n), Restarted: restarted}
	}
	pick(names, out, "not a verbs counter", map[string]Reading{
		PKeyViolations: count(PKeyViolations, a.BadPKeyCntr),
		QKeyViolations: count(QKeyViolations, a.QKeyViolCntr),
		MKeyViolations: {Unavailable: "not in ibv_query_port (M_KeyViolations is a PortInfo field: SMPs only)"},
	})
}

// Close closes every device opened and the library.
func (v *VerbsCounters) Close() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	var errs []error
	for n, d := range v.devs {
		errs = append(errs, d.Close())
		delete(v.devs, n)
	}
	clear(v.drivers)
	if v.lib != nil {
		errs = append(errs, v.lib.Close())
		v.lib = nil
		v.why = "verbs source closed"
	}
	return errors.Join(errs...)
}

// Preferred reads from First and, for every counter First cannot provide (Unavailable),
// from Then; such readings carry Then's label in Reading.Source, and when neither can
// provide a counter the reason names both, and the counter is absent when either
// source says the port has none: each says so only from what it knows of the port
// (verbsCounts from the device's answer, ethernetPorts from sysfs). Name is First's.
type Preferred struct {
	First, Then CounterSource
}

func (p Preferred) Name() string { return p.First.Name() }

func (p Preferred) Read(ref PortRef, names []string, out []Reading) {
	p.First.Read(ref, names, out)
	var idx []int
	var rest []string
	for i, r := range out {
		if r.Unavailable != "" {
			idx, rest = append(idx, i), append(rest, names[i])
		}
	}
	if len(idx) == 0 {
		return
	}
	second := make([]Reading, len(rest))
	p.Then.Read(ref, rest, second)
	for k, i := range idx {
		r := second[k]
		if r.Unavailable != "" {
			r.Unavailable = fmt.Sprintf("%s: %s; %s: %s", p.First.Name(), out[i].Unavailable, p.Then.Name(), r.Unavailable)
			r.Absent = r.Absent || out[i].Absent
		}
		r.Source = cmp.Or(r.Source, p.Then.Name())
		out[i] = r
	}
}

// PreferVerbs reads the violation counters from v first and from the source used so far
// (SMPs when a transport was chosen, else "needs fabric access") for what verbs cannot
// read. Only for ports of the real /sys (see OpenVerbs).
func (s *Sampler) PreferVerbs(v CounterSource) {
	s.setViolations(func(old CounterSource) CounterSource { return Preferred{First: v, Then: old} })
}

// QKeyRuleOf is the Q_Key send rule of a local port's device and why (check.QKeyRuleFor
// on what sysfs says about the device).
func QKeyRuleOf(sys *ibverbs.Sysfs, v *PortView) (check.QKeyRule, string) {
	o := sys.Origin(v.Port.Device)
	d := check.QKeyDevice{Name: v.Port.Device, Virtual: o.Virtual, Parent: o.Parent.Value, Driver: o.Driver.Value, LinkLayer: v.LinkLayer()}
	if v.Device != nil && v.Device.NodeType.OK() {
		d.NodeType = v.Device.NodeType.Value.Num
	}
	return check.QKeyRuleFor(d)
}

// MADSupport says in words what a local port supports over MADs when opening a MAD
// transport for it failed with err, and which sources still work. RoCE ports have no
// QP0 (no subnet management, so no SMPs: the kernel refuses to register an SMI agent
// with EPROTONOSUPPORT, drivers/infiniband/core/mad.c ib_register_mad_agent); their
// violation counters come from verbs, their other counters from sysfs.
func MADSupport(v *PortView, err error) string {
	ll := v.LinkLayer()
	var b strings.Builder
	fmt.Fprintf(&b, "%s: ", v.Ref())
	switch {
	case ll != "" && ll != "InfiniBand":
		fmt.Fprintf(&b, "a port on the %s link layer (RoCE or iWARP) has no QP0, so no subnet management packets (SMPs: PortInfo) and no fabric to sweep", ll)
	case errors.Is(err, syscall.EPROTONOSUPPORT):
		b.WriteString("the kernel refused a subnet management agent on this port (no QP0)")
	default:
		fmt.Fprintf(&b, "MADs unavailable (%v)", err)
	}
	b.WriteString("; P_Key/Q_Key violation counters: from verbs (ibv_query_port, no root needed); state and P_Key table: from sysfs")
	return b.String()
}
