package job

import (
	"cmp"
	"fmt"
	"strconv"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/query"
)

// Port is one port a job may run on, with its P_Key table.
type Port struct {
	// Host names the machine ("" for the local host); ports of one host share Host.
	Host string
	// Device and Num name the port. For a port read over MADs (Fabric is true) Device
	// is the node description, or its device part when the description is
	// rdma-ndd's "HOST DEVICE" (DeviceKnown); the library's device filters apply only
	// to a port whose device name is known.
	Device      string
	Num         int
	Fabric      bool
	DeviceKnown bool
	// Node is the node GUID of a port read over MADs.
	Node check.GUID
	// LinkLayer is "InfiniBand", "Ethernet" or "" when not known.
	LinkLayer string
	// State is the port state name (ACTIVE, DOWN, ...).
	State string
	LID   uint16
	// LIDMissing says why the LID (of a port read from sysfs) was not read: LID 0
	// is then not known to be "no LID". "" when read.
	LIDMissing string
	// Table is the whole P_Key table in index order, unreadable entries included
	// (Readable false); nil when the port has none (NoTable says why).
	Table   []check.TableEntry
	NoTable string
	// Interfaces are the IPoIB interfaces on the port (read from sysfs only; nil over
	// MADs, where InterfacesRead is false).
	Interfaces     []query.IPoIB
	InterfacesRead bool
	// Driver is the device's driver on an Ethernet link layer, read from sysfs
	// (query.DriverOf: rdma_rxe, mlx5_core); "" when not known.
	Driver string
	// MaxPKeys is the device's ibv_device_attr.max_pkeys (query.Host.MaxPKeys: read
	// through libibverbs on this machine), when MaxPKeysRead; otherwise
	// MaxPKeysMissing says why it was not read (another machine's tree, no
	// libibverbs, the static build, no access to the uverbs device), "" for a port
	// read over MADs, whose max_pkeys no verbs call here can read.
	MaxPKeys        int
	MaxPKeysRead    bool
	MaxPKeysMissing string
}

// tableUnread reports a port whose table should exist but was not read: an
// InfiniBand port (every one has a table) or a port read over MADs.
func (p *Port) tableUnread() bool {
	return p.Table == nil && (p.Fabric || p.LinkLayer == "InfiniBand")
}

// Label names the port: HOST:DEV/PORT, or DEV/PORT for the local host and for a port
// of a sweep (its device is the node).
func (p *Port) Label() string {
	s := p.Device + "/" + strconv.Itoa(p.Num)
	if p.Host != "" && p.Host != p.Device {
		s = p.Host + ":" + s
	}
	return s
}

// Active reports whether the port is ACTIVE: every library here uses only ACTIVE ports.
func (p *Port) Active() bool { return p.State == "ACTIVE" }

// Ethernet reports whether the port is RoCE.
func (p *Port) Ethernet() bool { return p.LinkLayer == "Ethernet" }

// Outcome is what a library does with its setting on one port.
type Outcome uint8

const (
	// Uses: the library's QPs use the entry at Pick.Index, a valid P_Key.
	Uses Outcome = iota
	// EmptyEntry: the library uses an index holding key 0 (0x0000/0x8000): the QP
	// matches no partition, so no packet it sends or expects gets through.
	EmptyEntry
	// Fails: the library refuses the setting on this port (an error at start-up, or a
	// modify_qp that fails).
	Fails
	// Skips: the library silently does not use this port (Open MPI's openib BTL).
	Skips
	// NotChecked: the answer depends on an entry or table that could not be read.
	NotChecked
)

func (o Outcome) String() string {
	return [...]string{"uses", "empty-entry", "fails", "skips-port", "not-checked"}[o]
}

// MarshalText encodes the outcome as its String.
func (o Outcome) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// Pick is the P_Key table entry a library uses on one port.
type Pick struct {
	Outcome Outcome
	// Index is the table index the library puts in its QPs, -1 when none.
	Index int
	// PKey is the entry at Index (meaningful for Uses and EmptyEntry).
	PKey check.PKey
	// Problem says, for anything but Uses, what goes wrong, in the library's terms.
	Problem string
	// Notes explain the choice (a limited entry picked before a full one, ...).
	Notes []string
	// Setting is NAME=VALUE, what puts the library on this entry (WantPartition; ""
	// when no setting can).
	Setting string
	// Abort: the library stops the process there (not just this port): the pick is
	// also one of Result.Aborts.
	Abort bool
	// AbortHost, with Abort: the process that stops is the one that opens every port
	// the library selects on the host (UCX's ucp_worker_create, GASNet's
	// gasnetc_probe_ports), so it uses none of them. Without it only the ranks on this
	// port stop: MVAPICH2 opens one port a process (MAX_NUM_PORTS 1, one HCA), and
	// ranks on the host's other ports run.
	AbortHost bool
	// Gap says, when no setting works (WantPartition), whether the reason is one the
	// Subnet Manager may still remove: the key is not in the table (yet), or the table
	// was not read.
	Gap Gap
}

func usesIndex(p *Port, i int, how string) Pick {
	if i < 0 || i >= len(p.Table) {
		outside := fmt.Sprintf("index %d is outside the %d-entry table of %s", i, len(p.Table), p.Label())
		if p.LinkLayer == "Ethernet" && !p.Fabric {
			return roceOutside(p, i, outside)
		}
		return Pick{Outcome: Fails, Index: i, Problem: outside}
	}
	e := p.Table[i]
	switch {
	case !e.Readable:
		return Pick{Outcome: NotChecked, Index: i, Problem: fmt.Sprintf("entry %d of %s could not be read", i, p.Label())}
	case !e.PKey.Valid():
		return Pick{Outcome: EmptyEntry, Index: i, PKey: e.PKey, Problem: fmt.Sprintf("%s index %d holds %s, an empty entry (key 0): no packet gets through", how, i, e.PKey)}
	}
	return Pick{Outcome: Uses, Index: i, PKey: e.PKey}
}

// roceOutside is a QP's index beyond a RoCE port's table (outside says so): the index
// reaches ibv_modify_qp as a uint16_t, and what it does there is the driver's. Debian's
// kernel has no CONFIG_SECURITY_INFINIBAND, whose check would refuse it. rdma_rxe
// takes every index up to 65535 and sends its one key, 0xffff (the kernel lab:
// perftest ran with indices 1, 63 and -1 on rxe, and TestPKeyIndexOnKernel modifies
// QPs with them). mlx5 checks the index against the device's max_pkeys
// (mlx5_ib_modify_qp: port_caps' pkey_table_len, which __get_port_caps sets from
// max_pkeys), which sysfs does not show (Port.MaxPKeys reads it): EINVAL at or above
// it; below it the QP is made, and which key the adapter then sends is not known
// here. Other drivers are not known.
func roceOutside(p *Port, i int, outside string) Pick {
	switch {
	case p.Driver == "rdma_rxe":
		return Pick{Outcome: Uses, Index: i, PKey: check.DefaultFull, Notes: []string{outside + ": rdma_rxe takes any index and sends 0xffff (kernel lab)"}}
	case p.Driver == "mlx5_core" && p.MaxPKeysRead && i >= p.MaxPKeys:
		return Pick{Outcome: Fails, Index: i, Problem: fmt.Sprintf("%s and not below the device's max_pkeys (%d): mlx5 refuses it, ibv_modify_qp fails with EINVAL (mlx5_ib_modify_qp)", outside, p.MaxPKeys)}
	case p.Driver == "mlx5_core" && p.MaxPKeysRead:
		return Pick{Outcome: NotChecked, Index: i, Problem: fmt.Sprintf("%s but below the device's max_pkeys (%d): mlx5 accepts it (mlx5_ib_modify_qp), and which P_Key the adapter then sends is not known", outside, p.MaxPKeys)}
	case p.Driver == "mlx5_core":
		return Pick{Outcome: NotChecked, Index: i, Problem: fmt.Sprintf("%s: on RoCE the driver decides, and mlx5 refuses an index at or above the device's max_pkeys (mlx5_ib_modify_qp): %s", outside, cmp.Or(p.MaxPKeysMissing, "max_pkeys not read"))}
	}
	return Pick{Outcome: NotChecked, Index: i, Problem: outside + ": on RoCE the driver decides (rdma_rxe takes any index and sends 0xffff; mlx5 refuses one beyond the device's max_pkeys, which sysfs does not show)"}
}
