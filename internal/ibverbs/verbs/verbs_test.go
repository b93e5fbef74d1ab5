package verbs

import (
	"encoding/binary"
	"errors"
	"testing"
)

func TestDecodePortAttr(t *testing.T) {
	b := make([]byte, compatPortAttrSize)
	ne := binary.NativeEndian
	ne.PutUint32(b[offState:], 4)
	ne.PutUint32(b[offGIDTblLen:], 1024)
	ne.PutUint32(b[offBadPKeyCntr:], 0xffff)
	ne.PutUint32(b[offQKeyViolCntr:], 7)
	ne.PutUint16(b[offPKeyTblLen:], 1)
	ne.PutUint16(b[offLID:], 0x1a)
	b[offPhysState], b[offLinkLayer] = 5, 2
	got, err := decodePortAttr(b)
	if err != nil {
		t.Fatal(err)
	}
	want := PortAttr{State: 4, GIDTblLen: 1024, BadPKeyCntr: 0xffff, QKeyViolCntr: 7, PKeyTblLen: 1, LID: 0x1a, PhysState: 5, LinkLayer: 2}
	if got != want {
		t.Fatalf("decodePortAttr = %+v, want %+v", got, want)
	}
	if _, err := decodePortAttr(b[:47]); err == nil {
		t.Fatal("a 47-byte buffer decoded without error")
	}
}

func TestDecodeDeviceAttr(t *testing.T) {
	b := make([]byte, deviceAttrSize)
	binary.NativeEndian.PutUint16(b[offMaxPKeys:], 64)
	b[offMaxPKeys-1], b[offPhysPortCnt-1], b[offPhysPortCnt] = 0xaa, 0xbb, 1 // max_srq_sge's last byte, local_ca_ack_delay
	got, err := decodeDeviceAttr(b)
	if err != nil {
		t.Fatal(err)
	}
	if want := (DeviceAttr{MaxPKeys: 64, PhysPortCnt: 1}); got != want {
		t.Fatalf("decodeDeviceAttr = %+v, want %+v", got, want)
	}
	if _, err := decodeDeviceAttr(b[:deviceAttrSize-1]); err == nil {
		t.Fatal("a short buffer decoded without error")
	}
}

// TestHostWithoutRDMA runs on whatever host the tests run on: with no library, with a
// static build, or with no RDMA stack in the kernel, the answer is an
// *UnavailableError with a reason, never a crash or an empty list that reads as "no
// devices". With a real RDMA stack the device list must name devices that open.
func TestHostWithoutRDMA(t *testing.T) {
	l, err := Open()
	var ue *UnavailableError
	if err != nil {
		if !errors.As(err, &ue) || ue.Reason == "" {
			t.Fatalf("Open: %v: want an *UnavailableError with a reason", err)
		}
		t.Logf("verbs unavailable here (as expected without libibverbs or in the static flavour): %v", err)
		return
	}
	defer l.Close()
	names, err := l.DeviceNames()
	if err != nil {
		if !errors.As(err, &ue) {
			t.Logf("DeviceNames: %v (not an UnavailableError: a kernel with an RDMA stack that failed)", err)
		}
		t.Logf("no RDMA stack: %v", err)
		return
	}
	for _, n := range names {
		d, err := l.OpenDevice(n)
		if err != nil {
			t.Logf("OpenDevice(%s): %v", n, err)
			continue
		}
		if _, err := d.QueryPort(1); err != nil {
			t.Errorf("QueryPort(%s, 1): %v", n, err)
		}
		d.Close()
	}
	if _, err := l.OpenDevice("no-such-device"); !errors.Is(err, ErrNoDevice) {
		t.Errorf("OpenDevice(no-such-device) = %v, want ErrNoDevice", err)
	}
}
