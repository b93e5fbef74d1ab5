//go:build !ibkey_static && linux && (amd64 || arm64)

package verbs

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"syscall"
	"unsafe"

	"github.com/ebitengine/purego"
)

// Available is true: this build loads libibverbs at run time (and is dynamically
// linked because of it; see the package comment).
const Available = true

// Lib is an opened libibverbs. Its methods are safe for concurrent use.
type Lib struct {
	handle uintptr
	mu     sync.Mutex

	getDeviceList  func(num *int32) unsafe.Pointer
	freeDeviceList func(list unsafe.Pointer)
	getDeviceName  func(dev unsafe.Pointer) string
	openDevice     func(dev unsafe.Pointer) unsafe.Pointer
	closeDevice    func(ctx unsafe.Pointer) int32
	// ibv_query_port as exported (the compat entry point: verbs.h's inline wrapper
	// calls it when the provider has no extended query_port; it fills the 48-byte
	// _compat_ibv_port_attr). A plain dlsym returns the default version, IBVERBS_1.1.
	queryPort func(ctx unsafe.Pointer, port uint8, attr unsafe.Pointer) int32
	queryPKey func(ctx unsafe.Pointer, port uint8, index int32, pkey *uint16) int32
	// ibv_query_device as exported (IBVERBS_1.1, the default version): it fills
	// struct ibv_device_attr.
	queryDevice func(ctx unsafe.Pointer, attr unsafe.Pointer) int32
	errnoLoc    func() *int32
	closeOnce   sync.Once
	closeError  error
}

// Open loads libibverbs.so.1. The error is an *UnavailableError when the library is
// not installed or lacks a symbol.
func Open() (*Lib, error) {
	h, err := purego.Dlopen(Library, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return nil, &UnavailableError{Reason: fmt.Sprintf("cannot load %s (install libibverbs1 / rdma-core): %v", Library, err), Err: err}
	}
	l := &Lib{handle: h}
	for _, f := range []struct {
		fn   any
		name string
	}{
		{&l.getDeviceList, "ibv_get_device_list"},
		{&l.freeDeviceList, "ibv_free_device_list"},
		{&l.getDeviceName, "ibv_get_device_name"},
		{&l.openDevice, "ibv_open_device"},
		{&l.closeDevice, "ibv_close_device"},
		{&l.queryPort, "ibv_query_port"},
		{&l.queryPKey, "ibv_query_pkey"},
		{&l.queryDevice, "ibv_query_device"},
	} {
		sym, err := purego.Dlsym(h, f.name)
		if err != nil {
			purego.Dlclose(h)
			return nil, &UnavailableError{Reason: fmt.Sprintf("%s has no %s: %v", Library, f.name, err), Err: err}
		}
		purego.RegisterFunc(f.fn, sym)
	}
	// purego does not capture errno; glibc keeps it per thread behind
	// __errno_location, read on the same locked OS thread as the call.
	sym, err := purego.Dlsym(purego.RTLD_DEFAULT, "__errno_location")
	if err != nil {
		purego.Dlclose(h)
		return nil, &UnavailableError{Reason: "no __errno_location in the C library: " + err.Error(), Err: err}
	}
	purego.RegisterFunc(&l.errnoLoc, sym)
	return l, nil
}

// call runs f on a locked OS thread with errno cleared first and returns errno after.
func (l *Lib) call(f func()) syscall.Errno {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	p := l.errnoLoc()
	*p = 0
	f()
	return syscall.Errno(*p)
}

// devices returns the device list (free it with freeDeviceList) and its entries.
func (l *Lib) devices() (unsafe.Pointer, []unsafe.Pointer, error) {
	var n int32
	var list unsafe.Pointer
	errno := l.call(func() { list = l.getDeviceList(&n) })
	if list == nil {
		// Without an RDMA stack in the kernel the list fails with ENOSYS.
		if errno == syscall.ENOSYS {
			return nil, nil, &UnavailableError{Reason: "the kernel has no RDMA stack (ibv_get_device_list: function not implemented)", Err: &CallError{"ibv_get_device_list", errno}}
		}
		return nil, nil, &CallError{"ibv_get_device_list", errnoOr(errno)}
	}
	return list, unsafe.Slice((*unsafe.Pointer)(list), int(n)), nil
}

// DeviceNames lists the verbs devices (ibv_get_device_list).
func (l *Lib) DeviceNames() ([]string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	list, devs, err := l.devices()
	if err != nil {
		return nil, err
	}
	defer l.freeDeviceList(list)
	names := make([]string, len(devs))
	for i, d := range devs {
		names[i] = l.getDeviceName(d)
	}
	return names, nil
}

// Device is an opened verbs device context.
type Device struct {
	Name string
	lib  *Lib
	mu   sync.Mutex
	ctx  unsafe.Pointer
}

// OpenDevice opens name (ibv_open_device). Opening needs read/write access to
// /dev/infiniband/uverbsN; without it libibverbs reports ENOENT, not EACCES (it skips
// devices it cannot open), so the error says to check the mode.
func (l *Lib) OpenDevice(name string) (*Device, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	list, devs, err := l.devices()
	if err != nil {
		return nil, err
	}
	defer l.freeDeviceList(list)
	var have []string
	for _, d := range devs {
		n := l.getDeviceName(d)
		if n != name {
			have = append(have, n)
			continue
		}
		var ctx unsafe.Pointer
		errno := l.call(func() { ctx = l.openDevice(d) })
		if ctx == nil {
			errno = errnoOr(errno)
			if errno == syscall.ENOENT || errno == syscall.EACCES || errno == syscall.EPERM {
				return nil, fmt.Errorf("verbs: open %s: %v (can this user read and write its /dev/infiniband/uverbsN?): %w", name, errno, &CallError{"ibv_open_device", errno})
			}
			return nil, &CallError{"ibv_open_device " + name, errno}
		}
		return &Device{Name: name, lib: l, ctx: ctx}, nil
	}
	if len(have) == 0 {
		return nil, fmt.Errorf("verbs: %s: %w (ibv_get_device_list lists none)", name, ErrNoDevice)
	}
	return nil, fmt.Errorf("verbs: %s: %w (devices: %v)", name, ErrNoDevice, have)
}

// QueryPort reads port's attributes (ibv_query_port).
func (d *Device) QueryPort(port int) (PortAttr, error) {
	if port < 1 || port > 255 {
		return PortAttr{}, fmt.Errorf("verbs: port %d out of range 1-255", port)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ctx == nil {
		return PortAttr{}, errors.New("verbs: device closed")
	}
	buf := make([]byte, portAttrBufSize)
	var rc int32
	d.lib.call(func() { rc = d.lib.queryPort(d.ctx, uint8(port), unsafe.Pointer(&buf[0])) })
	runtime.KeepAlive(buf)
	if rc != 0 {
		// libibverbs returns the errno as the result.
		return PortAttr{}, &CallError{fmt.Sprintf("ibv_query_port %s/%d", d.Name, port), syscall.Errno(rc)}
	}
	return decodePortAttr(buf)
}

// QueryDevice reads the device's attributes (ibv_query_device).
func (d *Device) QueryDevice() (DeviceAttr, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ctx == nil {
		return DeviceAttr{}, errors.New("verbs: device closed")
	}
	buf := make([]byte, deviceAttrBufLen)
	var rc int32
	errno := d.lib.call(func() { rc = d.lib.queryDevice(d.ctx, unsafe.Pointer(&buf[0])) })
	runtime.KeepAlive(buf)
	if rc != 0 {
		// ibv_query_device returns the errno, or -1 with errno set (older providers).
		e := syscall.Errno(rc)
		if rc < 0 {
			e = errnoOr(errno)
		}
		return DeviceAttr{}, &CallError{"ibv_query_device " + d.Name, e}
	}
	return decodeDeviceAttr(buf)
}

// QueryPKey reads the P_Key at index of port (ibv_query_pkey; libibverbs reads it
// from sysfs and returns it in network order).
func (d *Device) QueryPKey(port, index int) (uint16, error) {
	if port < 1 || port > 255 || index < 0 || index > 0xffff {
		return 0, fmt.Errorf("verbs: port %d index %d out of range", port, index)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ctx == nil {
		return 0, errors.New("verbs: device closed")
	}
	var be uint16
	var rc int32
	errno := d.lib.call(func() { rc = d.lib.queryPKey(d.ctx, uint8(port), int32(index), &be) })
	if rc != 0 {
		return 0, &CallError{fmt.Sprintf("ibv_query_pkey %s/%d[%d]", d.Name, port, index), errnoOr(errno)}
	}
	b := (*[2]byte)(unsafe.Pointer(&be))
	return uint16(b[0])<<8 | uint16(b[1]), nil
}

// Close closes the device context.
func (d *Device) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ctx == nil {
		return nil
	}
	var rc int32
	errno := d.lib.call(func() { rc = d.lib.closeDevice(d.ctx) })
	d.ctx = nil
	if rc != 0 {
		return &CallError{"ibv_close_device " + d.Name, errnoOr(errno)}
	}
	return nil
}

// Close unloads the library; devices must be closed first.
func (l *Lib) Close() error {
	l.closeOnce.Do(func() { l.closeError = purego.Dlclose(l.handle) })
	return l.closeError
}

// errnoOr keeps a failure from reading as success when the library set no errno.
func errnoOr(e syscall.Errno) syscall.Errno {
	if e == 0 {
		return syscall.EIO
	}
	return e
}
