package mad

import (
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Numbers from /usr/include/rdma/ib_user_mad.h and rdma_user_ioctl.h,
// computed once with gcc (sizeof/offsetof, and the ioctl macros) on x86_64:
//
//	sizeof(struct ib_user_mad_hdr) = 64; offsets: id 0, status 4,
//	timeout_ms 8, retries 12, length 16, qpn 20, qkey 24, lid 28, sl 30,
//	path_bits 31, grh_present 32, gid_index 33, hop_limit 34,
//	traffic_class 35, gid 36, flow_label 52, pkey_index 56
//	sizeof(struct ib_user_mad_hdr_old) = 56
//	sizeof(struct ib_user_mad_reg_req) = 28; offsets: id 0, method_mask 4,
//	qpn 20, mgmt_class 21, mgmt_class_version 22, oui 23, rmpp_version 26
//	IB_USER_MAD_REGISTER_AGENT = 0xc01c1b01
//	IB_USER_MAD_UNREGISTER_AGENT = 0x40041b02
//	IB_USER_MAD_ENABLE_PKEY = 0x1b03
func TestUmadLayoutMatchesHeader(t *testing.T) {
	if umadHdrSize != 64 || umadRegReqSize != 28 {
		t.Errorf("sizes %d %d", umadHdrSize, umadRegReqSize)
	}

	r := encodeUmadRegReq(ClassPerf, 1)
	if len(r) != 28 || r[20] != 1 || r[21] != 0x04 || r[22] != 1 || binary.NativeEndian.Uint32(r) != 0 {
		t.Errorf("reg_req % x", r)
	}
	for i := 4; i < 20; i++ {
		if r[i] != 0 {
			t.Errorf("method_mask byte %d = %#x, want 0 (no unsolicited methods)", i, r[i])
		}
	}

	h := encodeUmadHdr(umadHdrSize, 0x01020304, ClassPerf, 0x0abc, 250)
	ne, be := binary.NativeEndian, binary.BigEndian
	if len(h) != 64 || ne.Uint32(h[0:]) != 0x01020304 || ne.Uint32(h[8:]) != 250 || ne.Uint32(h[12:]) != 0 ||
		be.Uint32(h[20:]) != 1 || be.Uint32(h[24:]) != 0x80010000 || be.Uint16(h[28:]) != 0x0abc || binary.NativeEndian.Uint16(h[56:]) != 0 {
		t.Errorf("GSI header % x", h)
	}
	h = encodeUmadHdr(umadHdrSize, 7, ClassSubnDirected, 0xffff, 1000)
	if be.Uint32(h[20:]) != 0 || be.Uint32(h[24:]) != 0 || be.Uint16(h[28:]) != 0xffff {
		t.Errorf("SMP header % x", h)
	}
	ne.PutUint32(h[4:], 110)
	if umadHdrStatus(h) != 110 {
		t.Error("status not at offset 4")
	}
}

func TestListUmadPorts(t *testing.T) {
	ports, err := ListUmadPorts("testdata/sysfs")
	if err != nil {
		t.Fatal(err)
	}
	want := []UmadPort{{"umad2", "mlx4_0", 2}, {"umad0", "mlx5_0", 1}, {"umad1", "mlx5_1", 1}}
	if len(ports) != len(want) {
		t.Fatalf("ports = %v, want %v", ports, want)
	}
	for i := range want {
		if ports[i] != want[i] {
			t.Errorf("ports[%d] = %v, want %v", i, ports[i], want[i])
		}
	}
	p, err := FindUmadPort("testdata/sysfs", "mlx5_1", 1)
	if err != nil || p.Name != "umad1" {
		t.Errorf("FindUmadPort = %v, %v", p, err)
	}
	_, err = FindUmadPort("testdata/sysfs", "mlx5_0", 2)
	if err == nil || !strings.Contains(err.Error(), "ports: mlx4_0/2, mlx5_0/1, mlx5_1/1") {
		t.Errorf("missing port: %v", err)
	}
	if !errors.Is(err, ErrNoUmadDevice) {
		t.Errorf("missing port: %v does not match ErrNoUmadDevice", err)
	}
	if _, err := FindUmadPort(t.TempDir(), "mlx5_0", 1); !errors.Is(err, ErrNoUmadDevice) || !strings.Contains(err.Error(), "ib_umad") {
		t.Errorf("no class dir: FindUmadPort: %v, want ErrNoUmadDevice and the ib_umad hint", err)
	}
	if _, err := ListUmadPorts(t.TempDir()); err == nil || !strings.Contains(err.Error(), "ib_umad") {
		t.Errorf("no class dir: %v", err)
	}
	bad := t.TempDir()
	os.MkdirAll(filepath.Join(bad, "class/infiniband_mad/umad0"), 0o755)
	os.WriteFile(filepath.Join(bad, "class/infiniband_mad/umad0/ibdev"), []byte("mlx5_0\n"), 0o644)
	os.WriteFile(filepath.Join(bad, "class/infiniband_mad/umad0/port"), []byte("one\n"), 0o644)
	if _, err := ListUmadPorts(bad); err == nil || !strings.Contains(err.Error(), `"one"`) {
		t.Errorf("bad port file: %v", err)
	}
}

func TestUmadOpenErrorMessage(t *testing.T) {
	err := umadOpenError("/dev/infiniband/umad0", &fs.PathError{Op: "open", Path: "/dev/infiniband/umad0", Err: syscall.EACCES}, "rdma")
	if !errors.Is(err, fs.ErrPermission) {
		t.Error("errors.Is(err, fs.ErrPermission) = false")
	}
	if !strings.Contains(err.Error(), "needs root or membership of group \"rdma\", which owns /dev/infiniband/umad0") {
		t.Errorf("message %q", err)
	}
	err = umadOpenError("/dev/infiniband/umad0", syscall.EACCES, "")
	if !strings.Contains(err.Error(), "needs root or membership of the group owning /dev/infiniband/umad0") {
		t.Errorf("message %q", err)
	}
	err = umadOpenError("/dev/infiniband/umad0", syscall.ENOENT, "")
	if strings.Contains(err.Error(), "root") || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ENOENT: %q", err)
	}
}

// encodeUmadHdr builds the header for sending mad to req's destination.
func encodeUmadHdr(hdrSize int, agent uint32, class Class, dlid uint16, timeoutMS uint32) []byte {
	h := make([]byte, hdrSize)
	encodeUmadHdrInto(h, agent, class, dlid, timeoutMS)
	return h
}
