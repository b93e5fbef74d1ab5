package mad

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// OpenUmad opens the umad device of device/port (e.g. "mlx5_0", 1) and
// registers one agent per management class it sends: SMPs LID-routed and
// directed (QP0), the PMA and the SA (QP1). Opening needs root or membership of the
// group owning /dev/infiniband/umadN (often "rdma").
func OpenUmad(device string, port int, opts UmadOptions) (*Umad, error) {
	up, err := FindUmadPort(cmp.Or(opts.SysfsRoot, "/sys"), device, port)
	if err != nil {
		return nil, err
	}
	ep, err := openUmadFile(filepath.Join(umadDevDir, up.Name))
	if err != nil {
		return nil, err
	}
	return &Umad{newEngine(ep, umadWindow, opts.Options, rand.Uint32())}, nil
}

func ioctlPtr(fd int, req uint32, p unsafe.Pointer) error {
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(p))
	if e != 0 {
		return e
	}
	return nil
}

// umadFile is the endpoint: the umad file, non-blocking, read and written
// only by the engine's loop, and an eventfd that wakes the loop.
type umadFile struct {
	path   string
	fd     int
	ev     int
	agents map[Class]uint32
}

func openUmadFile(path string) (*umadFile, error) {
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		group := ""
		if st, serr := os.Stat(path); serr == nil {
			if sys, ok := st.Sys().(*syscall.Stat_t); ok {
				if g, gerr := user.LookupGroupId(strconv.Itoa(int(sys.Gid))); gerr == nil {
					group = g.Name
				}
			}
		}
		return nil, umadOpenError(path, err, group)
	}
	u := &umadFile{path: path, fd: fd, ev: -1, agents: map[Class]uint32{}}
	fail := func(err error) (*umadFile, error) {
		u.unregister()
		unix.Close(fd)
		if u.ev >= 0 {
			unix.Close(u.ev)
		}
		return nil, err
	}
	if u.ev, err = unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC); err != nil {
		return fail(fmt.Errorf("umad: eventfd: %w", err))
	}
	// The P_Key header must be enabled before any agent is registered (every kernel
	// Go runs on has the ioctl; see umadHdrSize).
	if err := ioctlPtr(fd, umadIoctlEnablePKey, nil); err != nil {
		if errors.Is(err, unix.ENOTTY) {
			return fail(fmt.Errorf("umad: %s is not a umad device: %w", path, err))
		}
		return fail(fmt.Errorf("umad: %s: enable the P_Key header: %w", path, err))
	}
	for _, a := range []struct {
		class Class
		qpn   uint8
	}{{ClassSubnLID, 0}, {ClassSubnDirected, 0}, {ClassPerf, 1}, {ClassSubnAdm, 1}} {
		req := encodeUmadRegReq(a.class, a.qpn)
		if err := ioctlPtr(fd, umadIoctlRegisterAgent, unsafe.Pointer(&req[0])); err != nil {
			if a.qpn == 0 && errors.Is(err, unix.EPROTONOSUPPORT) {
				// A RoCE or iWARP port has no QP0 (ib_register_mad_agent in
				// drivers/infiniband/core/mad.c): no SMPs, but GMPs on QP1 work.
				continue
			}
			return fail(fmt.Errorf("umad: %s: register an agent for %s: %w", path, a.class, err))
		}
		u.agents[a.class] = *(*uint32)(unsafe.Pointer(&req[0]))
	}
	return u, nil
}

func (u *umadFile) unregister() {
	for _, id := range u.agents {
		ioctlPtr(u.fd, umadIoctlUnregisterAgent, unsafe.Pointer(&id))
	}
}

func (u *umadFile) name() string { return u.path }

func (u *umadFile) hdrLen() int { return umadHdrSize }

func (u *umadFile) encodeHdr(h []byte, req *Request, class Class, timeout time.Duration) error {
	dlid := req.Addr.LID
	if class == ClassSubnDirected {
		dlid = permissiveLID
	}
	ms := max(uint32(timeout/time.Millisecond), 1)
	agent, ok := u.agents[class]
	if !ok {
		return fmt.Errorf("no %s agent: the port has no QP0 (not InfiniBand), so it sends no SMPs: %w", class, unix.EPROTONOSUPPORT)
	}
	clear(h)
	encodeUmadHdrInto(h, agent, class, dlid, ms)
	return nil
}

func (u *umadFile) send(msgs [][]byte) (int, error) {
	n, err := writeEach(u.fd, msgs)
	if errors.Is(err, unix.EIO) || errors.Is(err, unix.ENODEV) {
		// The device went away or was reset: drivers/infiniband/core/user_mad.c
		// returns -EIO from ib_umad_write (and ib_umad_read) once the file's
		// agents are dead (Linux 5.11 and later; before, -EINVAL on write, and
		// a sweep that stops answering is caught by the exporter's probe).
		return n, taggedError{err, ErrTransportDown}
	}
	return n, err
}

func (u *umadFile) recv(bufs [][]byte, lens []int) (int, error) { return readEach(u.fd, bufs, lens) }

func (u *umadFile) dropped(msg []byte) bool { return umadHdrStatus(msg) != 0 }

func (u *umadFile) wait(writable bool, timeout time.Duration) error {
	return pollWait(u.fd, u.ev, writable, timeout)
}

func (u *umadFile) wake() { wakeFD(u.ev) }

func (u *umadFile) close() error {
	u.unregister()
	err := unix.Close(u.fd)
	unix.Close(u.ev)
	return err
}
