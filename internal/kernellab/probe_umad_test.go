package kernellab_test

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/query"
)

// The kernel's umad ABI, written out independently of internal/ibverbs/mad (from
// include/uapi/rdma/ib_user_mad.h and drivers/infiniband/core/user_mad.c) so the guest
// checks both against the running kernel: the ioctl numbers must be accepted, and what
// read(2) returns must have the header size and field offsets below.
const (
	hdrSize    = 64 // struct ib_user_mad_hdr with IB_USER_MAD_ENABLE_PKEY
	hdrOldSize = 56 // struct ib_user_mad_hdr_old
	madSize    = 256
	regReqSize = 28 // struct ib_user_mad_reg_req

	ioctlRegisterAgent   = 0xc01c1b01 // _IOWR(0x1b, 1, struct ib_user_mad_reg_req)
	ioctlUnregisterAgent = 0x40041b02 // _IOW(0x1b, 2, __u32)
	ioctlEnablePKey      = 0x1b03     // _IO(0x1b, 3)

	offID, offStatus, offTimeout, offRetries, offLength = 0, 4, 8, 12, 16
	offQPN, offQKey, offLID, offSL, offPathBits         = 20, 24, 28, 30, 31
	offGRHPresent, offGIDIndex, offHopLimit, offTClass  = 32, 33, 34, 35
	offGID, offFlowLabel, offPKeyIndex                  = 36, 52, 56

	classPerf = 0x04
	gsiQKey   = 0x80010000
)

type umadStep struct {
	Name string `json:"name"`
	OK   bool   `json:"ok"`
	Info string `json:"info"`
}

type umadResult struct {
	Steps []umadStep `json:"steps"`
}

func (r *umadResult) step(name string, err error, info string, args ...any) {
	s := umadStep{Name: name, OK: err == nil, Info: fmt.Sprintf(info, args...)}
	if err != nil {
		s.Info = strings.TrimSpace(s.Info + " error: " + err.Error())
	}
	r.Steps = append(r.Steps, s)
}

func ioctl(fd int, req uintptr, p unsafe.Pointer) error {
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), req, uintptr(p))
	if e != 0 {
		return e
	}
	return nil
}

// agent registers a QP1 agent for the PMA class; methods are the unsolicited methods it
// receives (a responder), none for a client.
func agent(fd int, methods ...byte) (uint32, error) {
	req := make([]byte, regReqSize)
	for _, m := range methods {
		req[4+m/8] |= 1 << (m % 8) // method_mask: bit m of a little-endian bitmap
	}
	req[20], req[21], req[22] = 1, classPerf, 1
	if err := ioctl(fd, ioctlRegisterAgent, unsafe.Pointer(&req[0])); err != nil {
		return 0, err
	}
	return binary.NativeEndian.Uint32(req[0:]), nil
}

func openUmad(path string, enablePKey bool) (int, error) {
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if enablePKey {
		if err := ioctl(fd, ioctlEnablePKey, nil); err != nil {
			unix.Close(fd)
			return -1, fmt.Errorf("ENABLE_PKEY: %w", err)
		}
	}
	return fd, nil
}

// readTimeout reads one MAD with a poll bound (the kernel's own send timeout is what
// the test checks; this bound only keeps a broken kernel from hanging the probe).
func readTimeout(fd int, size int, d time.Duration) ([]byte, error) {
	pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(pfd, int(d/time.Millisecond))
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, errors.New("nothing to read within the probe's bound")
	}
	b := make([]byte, size)
	m, err := unix.Read(fd, b)
	if err != nil {
		return nil, err
	}
	return b[:m], nil
}

func runUmad(dev string, port int) umadResult {
	var r umadResult
	// 1. ibkey's own transport, through its public API.
	t, err := mad.OpenUmad(dev, port, mad.UmadOptions{Options: mad.Options{Timeout: 2 * time.Second, Retries: -1}})
	r.step("mad.OpenUmad", err, "")
	if err == nil {
		_, err = mad.GetPortInfo(context.Background(), t, mad.DirectedRoute(), uint8(port))
		r.step("mad.GetPortInfo (SMP)", err, "")
		err = query.ReadPortCounters(context.Background(), t, []query.PMAPort{{LID: 1, Port: uint8(port)}})[0].Err
		r.step("query.ReadPortCounters (GMP, no GRH)", err, "")
		r.step("mad.Close", t.Close(), "")
	}

	// 2. The ABI, raw: a client and a responder agent on the same port.
	ports, err := mad.ListUmadPorts("/sys")
	var path string
	for _, p := range ports {
		if p.Device == dev && p.Port == port {
			path = filepath.Join("/dev/infiniband", p.Name)
		}
	}
	if path == "" {
		r.step("find umad device", fmt.Errorf("none for %s/%d (%v)", dev, port, err), "")
		return r
	}
	gidText, err := os.ReadFile(fmt.Sprintf("/sys/class/infiniband/%s/ports/%d/gids/0", dev, port))
	gid, gerr := hex.DecodeString(strings.ReplaceAll(strings.TrimSpace(string(gidText)), ":", ""))
	if err != nil || gerr != nil || len(gid) != 16 {
		r.step("read gids/0", errors.Join(err, gerr), "%q", gidText)
		return r
	}
	// SMI agent: refused on a port without QP0.
	if fd, err := openUmad(path, true); err == nil {
		req := make([]byte, regReqSize)
		req[20], req[21], req[22] = 0, 0x01, 1
		err := ioctl(fd, ioctlRegisterAgent, unsafe.Pointer(&req[0]))
		r.step("register SMI agent (qpn 0)", err, "errno=%d", errnoOf(err))
		unix.Close(fd)
	}
	cfd, err := openUmad(path, true)
	r.step("open client + ENABLE_PKEY", err, "%s ioctl 0x%x", path, ioctlEnablePKey)
	if err != nil {
		return r
	}
	defer unix.Close(cfd)
	rfd, err := openUmad(path, true)
	r.step("open responder + ENABLE_PKEY", err, "")
	if err != nil {
		return r
	}
	defer unix.Close(rfd)
	cid, err := agent(cfd)
	r.step("register client agent (PerfMgt, qpn 1)", err, "ioctl 0x%x id %d", ioctlRegisterAgent, cid)
	if err != nil {
		return r
	}
	rid, err := agent(rfd, byte(mad.MethodGet))
	r.step("register responder agent (PerfMgt Get)", err, "id %d", rid)
	if err != nil {
		return r
	}

	// The request: ibkey's encoder builds the MAD; the header is addressed to the
	// port's own GID (RoCE needs a GRH), QP1, the GSI Q_Key.
	reqMAD := make([]byte, mad.Size)
	err = (&mad.Request{Addr: mad.LIDAddress(1), Class: mad.ClassPerf, Method: mad.MethodGet,
		Attr: mad.AttrPortCounters, Data: mad.PortCountersRequestData(uint8(port))}).MarshalTo(reqMAD, 0x1234abcd)
	if err != nil {
		r.step("encode request", err, "")
		return r
	}
	send := func(fd int, id uint32, timeoutMS uint32, m []byte) error {
		h := make([]byte, hdrSize)
		ne, be := binary.NativeEndian, binary.BigEndian
		ne.PutUint32(h[offID:], id)
		ne.PutUint32(h[offTimeout:], timeoutMS)
		be.PutUint32(h[offQPN:], 1)
		be.PutUint32(h[offQKey:], gsiQKey)
		h[offGRHPresent], h[offGIDIndex], h[offHopLimit] = 1, 0, 64
		copy(h[offGID:], gid)
		_, err := unix.Write(fd, append(h, m...))
		return err
	}
	err = send(cfd, cid, 3000, reqMAD)
	r.step("client sends Get(PortCounters) with GRH to its own GID", err, "")
	if err != nil {
		return r
	}
	got, err := readTimeout(rfd, hdrSize+madSize, 30*time.Second)
	r.step("responder receives the request", err, "%d bytes", len(got))
	if err != nil {
		return r
	}
	r.step("received length = 64-byte header + 256-byte MAD", expect(len(got) == hdrSize+madSize), "%d", len(got))
	h := got[:hdrSize]
	ne, be := binary.NativeEndian, binary.BigEndian
	r.step("hdr.id is the responder's agent", expect(ne.Uint32(h[offID:]) == rid), "%d", ne.Uint32(h[offID:]))
	r.step("hdr.qpn (be32 at 20) is the sender's QP 1", expect(be.Uint32(h[offQPN:]) == 1), "%d", be.Uint32(h[offQPN:]))
	r.step("hdr.grh_present (32) set, hdr.gid (36..51) the port's GID", expect(h[offGRHPresent] == 1 && string(h[offGID:offGID+16]) == string(gid)), "grh %d gid %x", h[offGRHPresent], h[offGID:offGID+16])
	r.step("hdr.pkey_index (56)", nil, "%d", ne.Uint16(h[offPKeyIndex:]))
	r.step("hdr.lid (be16 at 28), sl (30), hop_limit (34)", nil, "lid %d sl %d hop %d length %d", be.Uint16(h[offLID:]), h[offSL], h[offHopLimit], ne.Uint32(h[offLength:]))
	m := got[hdrSize:]
	r.step("request TID and method arrived intact", expect(m[3] == byte(mad.MethodGet) && be.Uint32(m[12:]) == 0x1234abcd), "method 0x%02x tid %x", m[3], m[8:16])

	// The reply: the same MAD as a GetResp, sent back where the request came from
	// (the received header is the address, as user_mad.rst says).
	resp := append([]byte(nil), m...)
	resp[3] = byte(mad.MethodGetResp)
	rh := append([]byte(nil), h...)
	ne.PutUint32(rh[offID:], rid)
	ne.PutUint32(rh[offTimeout:], 0)
	_, err = unix.Write(rfd, append(rh, resp...))
	r.step("responder sends GetResp back through the received header", err, "")
	got, err = readTimeout(cfd, hdrSize+madSize, 30*time.Second)
	r.step("client receives the reply", err, "%d bytes", len(got))
	if err == nil {
		r.step("reply status 0, method GetResp, TID low 32 bits kept", expect(ne.Uint32(got[offStatus:]) == 0 && got[hdrSize+3] == byte(mad.MethodGetResp) && be.Uint32(got[hdrSize+12:]) == 0x1234abcd),
			"status %d method 0x%02x tid %x", ne.Uint32(got[offStatus:]), got[hdrSize+3], got[hdrSize+8:hdrSize+16])
		p, derr := mad.Decode(got[hdrSize:])
		r.step("mad.Decode of the reply", derr, "%+v", p != nil)
	}

	// Nobody answers: the kernel reports the send back with status ETIMEDOUT.
	start := time.Now()
	err = send(cfd, cid, 500, reqMAD)
	r.step("client sends a request the responder ignores (timeout 500 ms)", err, "")
	if _, err := readTimeout(rfd, hdrSize+madSize, 30*time.Second); err != nil {
		r.step("responder receives (and ignores) it", err, "")
	}
	got, err = readTimeout(cfd, hdrSize+madSize, 30*time.Second)
	if err == nil {
		st := ne.Uint32(got[offStatus:])
		r.step("client gets its request back with status ETIMEDOUT", expect(st == uint32(unix.ETIMEDOUT)), "status %d after %v, %d bytes", st, time.Since(start).Round(100*time.Millisecond), len(got))
	} else {
		r.step("client gets its request back with status ETIMEDOUT", err, "")
	}

	// The old header (no ENABLE_PKEY): 56 bytes.
	ofd, err := openUmad(path, false)
	if err == nil {
		defer unix.Close(ofd)
		oid, err := agent(ofd)
		r.step("register an agent without ENABLE_PKEY", err, "id %d", oid)
		if err == nil {
			h := make([]byte, hdrOldSize)
			ne.PutUint32(h[offID:], oid)
			ne.PutUint32(h[offTimeout:], 3000)
			be.PutUint32(h[offQPN:], 1)
			be.PutUint32(h[offQKey:], gsiQKey)
			h[offGRHPresent], h[offHopLimit] = 1, 64
			copy(h[offGID:], gid)
			_, err = unix.Write(ofd, append(h, reqMAD...))
			r.step("old-header client sends", err, "")
			if got, err := readTimeout(rfd, hdrSize+madSize, 30*time.Second); err == nil {
				rh := append([]byte(nil), got[:hdrSize]...)
				ne.PutUint32(rh[offID:], rid)
				resp := append([]byte(nil), got[hdrSize:]...)
				resp[3] = byte(mad.MethodGetResp)
				_, err = unix.Write(rfd, append(rh, resp...))
				r.step("responder answers the old-header client", err, "")
			}
			got, err := readTimeout(ofd, hdrSize+madSize, 30*time.Second)
			r.step("old-header reply is 56 + 256 bytes", errors.Join(err, expect(len(got) == hdrOldSize+madSize)), "%d", len(got))
		}
	}
	id := cid
	r.step("unregister client agent", ioctl(cfd, ioctlUnregisterAgent, unsafe.Pointer(&id)), "ioctl 0x%x", ioctlUnregisterAgent)
	return r
}

func expect(ok bool) error {
	if ok {
		return nil
	}
	return errors.New("mismatch")
}

func errnoOf(err error) int {
	var e unix.Errno
	if errors.As(err, &e) {
		return int(e)
	}
	return 0
}
