package mad

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// OpenUmad opens the umad device of device/port (e.g. "mlx5_0", 1) and
// registers one agent per management class it sends: SMPs LID-routed and
// directed (QP0) and the PMA (QP1). Opening needs root or membership of the
// group owning /dev/infiniband/umadN (often "rdma").
func OpenUmad(device string, port int, opts UmadOptions) (*Umad, error) {
	opts = opts.withDefaults()
	up, err := FindUmadPort(opts.SysfsRoot, device, port)
	if err != nil {
		return nil, err
	}
	ep, err := openUmadFile(filepath.Join(opts.DevDir, up.Name))
	if err != nil {
		return nil, err
	}
	return &Umad{engine: newEngine(ep, opts.Options, rand.Uint32()), Port: up}, nil
}

func ioctlPtr(fd int, req uint32, p unsafe.Pointer) error {
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(p))
	if e != 0 {
		return e
	}
	return nil
}

type umadFile struct {
	path    string
	f       *os.File
	hdrSize int
	agents  map[Class]uint32
	mu      sync.Mutex // one write at a time: each write is one MAD
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
	u := &umadFile{path: path, hdrSize: umadHdrSize, agents: map[Class]uint32{}}
	fail := func(err error) (*umadFile, error) {
		u.unregister(fd)
		unix.Close(fd)
		return nil, err
	}
	// The P_Key header must be enabled before any agent is registered.
	if err := ioctlPtr(fd, umadIoctlEnablePKey, nil); err != nil {
		if errors.Is(err, unix.ENOTTY) {
			return fail(fmt.Errorf("umad: %s is not a umad device: %w", path, err))
		}
		u.hdrSize = umadHdrOldSize // kernels before 3.x: old header
	}
	for _, a := range []struct {
		class Class
		qpn   uint8
	}{{ClassSubnLID, 0}, {ClassSubnDirected, 0}, {ClassPerf, 1}} {
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
	// Non-blocking fd: the runtime poller serves Read, and Close wakes it.
	u.f = os.NewFile(uintptr(fd), path)
	return u, nil
}

func (u *umadFile) unregister(fd int) {
	for _, id := range u.agents {
		id := id
		ioctlPtr(fd, umadIoctlUnregisterAgent, unsafe.Pointer(&id))
	}
}

func (u *umadFile) name() string { return u.path }

func (u *umadFile) send(mad []byte, req *Request, class Class, timeout time.Duration) error {
	dlid := req.Addr.LID
	if class == ClassSubnDirected {
		dlid = permissiveLID
	}
	ms := uint32(timeout / time.Millisecond)
	if ms == 0 {
		ms = 1
	}
	agent, ok := u.agents[class]
	if !ok {
		return fmt.Errorf("no %s agent: the port has no QP0 (not InfiniBand), so it sends no SMPs: %w", class, unix.EPROTONOSUPPORT)
	}
	b := append(encodeUmadHdr(u.hdrSize, agent, class, dlid, ms), mad...)
	u.mu.Lock()
	defer u.mu.Unlock()
	n, err := u.f.Write(b)
	if err == nil && n != len(b) {
		err = fmt.Errorf("short write %d of %d bytes", n, len(b))
	}
	return err
}

func (u *umadFile) recv() (frame, error) {
	buf := make([]byte, u.hdrSize+Size)
	for {
		n, err := u.f.Read(buf)
		if err != nil {
			return frame{}, err
		}
		if n < u.hdrSize+offTID+8 {
			continue
		}
		m := make([]byte, Size)
		copy(m, buf[u.hdrSize:n])
		return frame{mad: m, dropped: umadHdrStatus(buf) != 0}, nil
	}
}

func (u *umadFile) close() error {
	if rc, err := u.f.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { u.unregister(int(fd)) })
	}
	return u.f.Close()
}
