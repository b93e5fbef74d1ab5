package mad

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ibkey/ibkey/internal/fsread"
)

// The kernel's umad interface (Documentation/infiniband/user_mad.rst, uAPI
// <rdma/ib_user_mad.h> and <rdma/rdma_user_ioctl.h>). Layouts are written out
// by hand so the default build needs no cgo; umad_test.go checks them against
// numbers taken from the header (gcc offsetof/sizeof on x86_64).

// struct ib_user_mad_hdr, after IB_USER_MAD_ENABLE_PKEY (64 bytes):
//
//	 0 __u32 id          agent ID from REGISTER_AGENT
//	 4 __u32 status      0, or ETIMEDOUT when a send got no reply
//	 8 __u32 timeout_ms  reply timeout for a request
//	12 __u32 retries
//	16 __u32 length
//	20 __be32 qpn        0 for SMPs, 1 for GSI (PMA)
//	24 __be32 qkey       0x80010000 for GSI
//	28 __be16 lid        destination LID; 0xffff for directed route
//	30 __u8 sl, 31 path_bits, 32 grh_present, 33 gid_index,
//	34 hop_limit, 35 traffic_class, 36 gid[16], 52 __be32 flow_label
//	56 __u16 pkey_index, 58 reserved[6]
//
// (struct ib_user_mad_hdr_old, without ENABLE_PKEY, stops at 56: only kernels
// before the ioctl came, with Linux commit 2be8e3ee8efd "IB/umad: Add P_Key index
// support" in 2007, lack it, and Go needs Linux 3.2.)
const (
	umadHdrSize = 64
	umadQKeyGSI = 0x80010000
)

// struct ib_user_mad_reg_req (28 bytes: 27 of fields, padded to the 4-byte
// alignment of packed_ulong):
//
//	 0 __u32 id                  out: the agent ID
//	 4 packed_ulong method_mask[128/(8*sizeof(long))]  16 bytes
//	20 __u8 qpn, 21 mgmt_class, 22 mgmt_class_version, 23 oui[3], 26 rmpp_version
const umadRegReqSize = 28

// ioctl numbers, as the header's macros expand them (IB_IOCTL_MAGIC =
// RDMA_IOCTL_MAGIC = 0x1b; gcc on x86_64, see umad_test.go).
const (
	umadIoctlRegisterAgent   = 0xc01c1b01 // _IOWR(0x1b, 1, struct ib_user_mad_reg_req)
	umadIoctlUnregisterAgent = 0x40041b02 // _IOW(0x1b, 2, __u32)
	umadIoctlEnablePKey      = 0x1b03     // _IO(0x1b, 3)
)

// encodeUmadRegReq builds a registration for a client agent of class: it
// sends requests and receives their replies, so it asks for no unsolicited
// methods (method_mask all zero).
func encodeUmadRegReq(class Class, qpn uint8) []byte {
	b := make([]byte, umadRegReqSize)
	b[20] = qpn
	b[21] = byte(class)
	// rmpp_version (26) stays 0: ibkey asks the SA for single records, and a
	// reply the SA segments with RMPP arrives as separate segments, which sa.go
	// never takes as the whole answer.
	b[22] = classVersion(class)
	return b
}

// encodeUmadHdrInto writes the header into h, which is zero.
func encodeUmadHdrInto(h []byte, agent uint32, class Class, dlid uint16, timeoutMS uint32) {
	ne, be := binary.NativeEndian, binary.BigEndian
	ne.PutUint32(h[0:], agent)
	ne.PutUint32(h[8:], timeoutMS)
	ne.PutUint32(h[12:], 0) // retries: the transport retries itself
	if class == ClassPerf || class == ClassSubnAdm {
		be.PutUint32(h[20:], 1)
		be.PutUint32(h[24:], umadQKeyGSI)
	}
	be.PutUint16(h[28:], dlid)
	// pkey_index 0 (the default partition's usual slot) at 56 when enabled.
}

// umadHdrStatus returns a received header's status (an errno; ETIMEDOUT
// when the kernel gave up waiting for a reply).
func umadHdrStatus(h []byte) uint32 { return binary.NativeEndian.Uint32(h[4:]) }

// UmadPort is one umad device file and the HCA port it serves.
type UmadPort struct {
	Name   string // "umad0": /dev/infiniband/umad0
	Device string // "mlx5_0"
	Port   int    // 1
}

// ListUmadPorts maps umad devices to ports from
// SYSFS/class/infiniband_mad/umadN/{ibdev,port}, sorted by device and port.
func ListUmadPorts(sysfsRoot string) ([]UmadPort, error) {
	dir := filepath.Join(sysfsRoot, "class", "infiniband_mad")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("umad: %w (is ib_umad loaded?)", err)
	}
	var out []UmadPort
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), "umad") {
			continue // abi_version, issmN
		}
		read := func(f string) (string, error) {
			// Bounded, non-blocking, regular files only: a --sysfs tree may point
			// ibdev at /dev/zero or a FIFO.
			b, err := fsread.ReadAttr(filepath.Join(dir, e.Name(), f))
			return strings.TrimSpace(string(b)), err
		}
		dev, err := read("ibdev")
		if err != nil {
			return nil, fmt.Errorf("umad: %w", err)
		}
		ps, err := read("port")
		if err != nil {
			return nil, fmt.Errorf("umad: %w", err)
		}
		port, err := strconv.Atoi(ps)
		if err != nil {
			return nil, fmt.Errorf("umad: %s/port: %q is not a port number", filepath.Join(dir, e.Name()), ps)
		}
		out = append(out, UmadPort{Name: e.Name(), Device: dev, Port: port})
	}
	slices.SortFunc(out, func(a, b UmadPort) int {
		return cmp.Or(strings.Compare(a.Device, b.Device), cmp.Compare(a.Port, b.Port))
	})
	return out, nil
}

// ErrNoUmadDevice is what every error of FindUmadPort (and so of OpenUmad before it
// opens a file) matches with errors.Is: no umad device could be found for the port
// (ib_umad not loaded, no such port, its sysfs entry unreadable). The host has no
// usable InfiniBand port there, which a caller may answer with another transport.
var ErrNoUmadDevice = errors.New("umad: no umad device for the port")

// FindUmadPort returns the umad device serving device/port; the error lists
// the ports there are, and matches ErrNoUmadDevice.
func FindUmadPort(sysfsRoot, device string, port int) (_ UmadPort, err error) {
	defer func() {
		if err != nil {
			err = taggedError{err, ErrNoUmadDevice}
		}
	}()
	ports, err := ListUmadPorts(sysfsRoot)
	if err != nil {
		return UmadPort{}, err
	}
	var have []string
	for _, p := range ports {
		if p.Device == device && p.Port == port {
			return p, nil
		}
		have = append(have, fmt.Sprintf("%s/%d", p.Device, p.Port))
	}
	if len(have) == 0 {
		return UmadPort{}, fmt.Errorf("umad: no umad devices under %s", filepath.Join(sysfsRoot, "class", "infiniband_mad"))
	}
	return UmadPort{}, fmt.Errorf("umad: no umad device for %s/%d (ports: %s)", device, port, strings.Join(have, ", "))
}

// umadOpenError explains a failed open of a umad device file. group is the
// name of the group owning it, "" if unknown.
func umadOpenError(path string, err error, group string) error {
	if errors.Is(err, fs.ErrPermission) {
		who := "the group owning " + path
		if group != "" {
			who = fmt.Sprintf("group %q, which owns %s", group, path)
		}
		return fmt.Errorf("umad: open %s: permission denied: needs root or membership of %s: %w", path, who, err)
	}
	return fmt.Errorf("umad: open %s: %w", path, err)
}

// UmadOptions configure OpenUmad.
type UmadOptions struct {
	// SysfsRoot is where class/infiniband_mad lives (default "/sys").
	SysfsRoot string
	Options
}

// umadDevDir holds the umadN files.
const umadDevDir = "/dev/infiniband"

// Umad is a Transport over the kernel's umad interface for one local port.
type Umad struct{ *engine }

var _ Exchanger = (*Umad)(nil)
