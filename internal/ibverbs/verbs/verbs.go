// Package verbs reads port attributes through the system's libibverbs, loaded at run
// time, so the default build needs no cgo: the P_Key and Q_Key violation counters
// (ibv_query_port's bad_pkey_cntr and qkey_viol_cntr) that sysfs and netlink do not
// have, readable by any user who may open /dev/infiniband/uverbsN (usually mode 0666),
// with no MADs and no root; and the device's max_pkeys (ibv_query_device), which
// perftest checks its --pkey_index against and sysfs does not show.
//
// Build flavours. The default build on linux/amd64 and linux/arm64 loads libibverbs
// with github.com/ebitengine/purego; that makes the ibkey binary dynamically linked
// (it needs glibc's dynamic loader, ld-linux, and libc at start-up, like every program
// that uses libibverbs) even with CGO_ENABLED=0. Where there is no glibc (an empty
// chroot, a musl or busybox system) such a binary does not start at all, so the
// `ibkey_static` build tag (`make build-static`) leaves this package's loader out: the
// binary is fully static again and the verbs source reports itself unavailable with
// that reason, and ibkey falls back to the sources that need no library (sysfs, MADs).
//
// Sources: rdma-core libibverbs/verbs.h and man ibv_query_port(3), ibv_query_pkey(3),
// ibv_get_device_list(3), ibv_open_device(3).
package verbs

import (
	"encoding/binary"
	"errors"
	"fmt"
)

var ne = binary.NativeEndian

// Library names the shared object loaded (soname of rdma-core's libibverbs).
const Library = "libibverbs.so.1"

// PortAttr is what ibv_query_port returns that ibkey uses. Offsets are those of struct
// ibv_port_attr up to flags (the 48-byte _compat_ibv_port_attr the exported
// ibv_query_port symbol fills; rdma-core verbs.h).
//
// The violation counters are PortInfo's 16-bit saturating P_KeyViolations and
// Q_KeyViolations (IBA 14.2.5.6). ibv_port_attr holds them in 32 bits, but the Linux
// software RoCE driver also stops them at 0xffff (drivers/infiniband/sw/rxe/rxe_recv.c,
// set_bad_pkey_cntr and set_qkey_viol_cntr), so they are 16-bit saturating counters
// everywhere.
type PortAttr struct {
	State        uint8  // offset 0 (enum ibv_port_state, 4 bytes): 1 DOWN .. 4 ACTIVE, 5 ACTIVE_DEFER
	GIDTblLen    int32  // offset 12 (int): 0 on an mlx5 port without RoCE (a representor)
	BadPKeyCntr  uint32 // offset 24
	QKeyViolCntr uint32 // offset 28
	PKeyTblLen   uint16 // offset 32
	LID          uint16 // offset 34
	PhysState    uint8  // offset 45
	LinkLayer    uint8  // offset 46: 0 unspecified, 1 InfiniBand, 2 Ethernet
}

// Offsets into struct ibv_port_attr (rdma-core libibverbs/verbs.h; checked with gcc
// offsetof against the installed header in the kernel lab).
const (
	offState        = 0
	offGIDTblLen    = 12
	offBadPKeyCntr  = 24
	offQKeyViolCntr = 28
	offPKeyTblLen   = 32
	offLID          = 34
	offPhysState    = 45
	offLinkLayer    = 46
	// compatPortAttrSize is sizeof(struct _compat_ibv_port_attr); the buffer passed is
	// larger so a library filling the newer struct cannot write past it.
	compatPortAttrSize = 48
	portAttrBufSize    = 128
)

// decodePortAttr reads a filled ibv_port_attr buffer (native endianness).
func decodePortAttr(b []byte) (PortAttr, error) {
	if len(b) < compatPortAttrSize {
		return PortAttr{}, fmt.Errorf("verbs: port attributes: %d bytes, need %d", len(b), compatPortAttrSize)
	}
	return PortAttr{
		State:        uint8(ne.Uint32(b[offState:])),
		GIDTblLen:    int32(ne.Uint32(b[offGIDTblLen:])),
		BadPKeyCntr:  ne.Uint32(b[offBadPKeyCntr:]),
		QKeyViolCntr: ne.Uint32(b[offQKeyViolCntr:]),
		PKeyTblLen:   ne.Uint16(b[offPKeyTblLen:]),
		LID:          ne.Uint16(b[offLID:]),
		PhysState:    b[offPhysState],
		LinkLayer:    b[offLinkLayer],
	}, nil
}

// DeviceAttr is what ibv_query_device returns that ibkey uses (struct ibv_device_attr,
// rdma-core libibverbs/verbs.h; offsets checked with gcc offsetof against the
// installed rdma-core 44 header: 232 bytes, max_pkeys at 224).
type DeviceAttr struct {
	// MaxPKeys is max_pkeys (offset 224, uint16_t): the device's P_Key table size as
	// its driver reports it (ib_device_attr.max_pkeys), which on RoCE need not be a
	// port's pkey_tbl_len (rdma_rxe: 64 for a one-entry table).
	MaxPKeys    uint16
	PhysPortCnt uint8 // offset 227
}

const (
	offMaxPKeys      = 224
	offPhysPortCnt   = 227
	deviceAttrSize   = 232
	deviceAttrBufLen = 512 // larger, so a library filling a newer struct cannot overrun it
)

// decodeDeviceAttr reads a filled ibv_device_attr buffer (native endianness).
func decodeDeviceAttr(b []byte) (DeviceAttr, error) {
	if len(b) < deviceAttrSize {
		return DeviceAttr{}, fmt.Errorf("verbs: device attributes: %d bytes, need %d", len(b), deviceAttrSize)
	}
	return DeviceAttr{MaxPKeys: ne.Uint16(b[offMaxPKeys:]), PhysPortCnt: b[offPhysPortCnt]}, nil
}

// UnavailableError: verbs cannot be used here at all (no library, no RDMA stack, a
// static build); Reason says which, in words.
type UnavailableError struct {
	Reason string
	Err    error
}

func (e *UnavailableError) Error() string { return "verbs unavailable: " + e.Reason }
func (e *UnavailableError) Unwrap() error { return e.Err }

// ErrNoDevice: the device is not in ibv_get_device_list.
var ErrNoDevice = errors.New("no such verbs device")

// CallError is a failed library call and its errno.
type CallError struct {
	Call  string
	Errno error
}

func (e *CallError) Error() string { return fmt.Sprintf("verbs: %s: %v", e.Call, e.Errno) }
func (e *CallError) Unwrap() error { return e.Errno }
