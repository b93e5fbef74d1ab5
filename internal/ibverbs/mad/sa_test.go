package mad

import (
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"
)

// An SA reply as OpenSM sends it (osm_sa.c osm_sa_respond): the request's header
// with the R bit, SM_Key 0, AttributeOffset in 8-byte words, the records after the
// SA header.
func saReply(t *testing.T, req Request, status uint16, attrOffset uint16, recs ...[]byte) []byte {
	t.Helper()
	b := make([]byte, Size)
	if err := req.MarshalTo(b, 42); err != nil {
		t.Fatal(err)
	}
	b[offMethod] |= 0x80
	binary.BigEndian.PutUint16(b[offStatus:], status)
	binary.BigEndian.PutUint64(b[offSMKey:], 0)
	binary.BigEndian.PutUint16(b[44:], attrOffset) // AttributeOffset (IBA 15.2.1.1)
	at := offSAData
	for _, r := range recs {
		copy(b[at:], r)
		at += 8 * int(attrOffset)
	}
	return b
}

func TestSARequestLayout(t *testing.T) {
	r := Request{Addr: LIDAddress(1), Class: ClassSubnAdm, Method: MethodGet, Attr: AttrPathRecord, SMKey: 0x1122334455667788,
		CompMask: PRCompSLID | PRCompDLID | PRCompPKey, Data: encodePathQuery(3, 4, 0x8002)}
	b, err := r.Marshal(7)
	if err != nil {
		t.Fatal(err)
	}
	be := binary.BigEndian
	// IBA 15.2.1.1: class 3, version 2; SM_Key at 36, ComponentMask at 48, the
	// PathRecord at 56: DLID at 40, SLID at 42, P_Key at 50 of the record.
	if b[1] != 0x03 || b[2] != 2 || b[3] != 0x01 || be.Uint16(b[16:]) != 0x0035 || be.Uint64(b[36:]) != 0x1122334455667788 ||
		be.Uint64(b[48:]) != 1<<4|1<<5|1<<13 || be.Uint16(b[56+40:]) != 4 || be.Uint16(b[56+42:]) != 3 || be.Uint16(b[56+50:]) != 0x8002 {
		t.Errorf("PathRecord query: % x", b)
	}
	if b[24] != 0 || b[25] != 0 || b[26] != 0 {
		t.Errorf("a request carries no RMPP header: % x", b[24:36])
	}
	r.Method = MethodGetTable
	if b, err := r.Marshal(7); err != nil || b[3] != 0x12 {
		t.Errorf("GetTable: %v", err)
	}
}

func TestSAReplyDecode(t *testing.T) {
	req := Request{Addr: LIDAddress(1), Class: ClassSubnAdm, Method: MethodGet, Attr: AttrPKeyTableRecord}
	rec := encodePKeyQuery(3, 1, 0)
	binary.BigEndian.PutUint16(rec[8:], 0xffff)
	binary.BigEndian.PutUint16(rec[10:], 0x8001)
	b := saReply(t, req, 0, 9, rec)
	if err := checkReply(&req, ClassSubnAdm, b); err != nil {
		t.Fatal(err)
	}
	p, err := Decode(b)
	if err != nil || p.Cut {
		t.Fatalf("Decode: %+v %v", p, err)
	}
	r, err := ParsePKeyTableRecord(p.Data)
	if err != nil || r.LID != 3 || r.Port != 1 || r.PKeys[0] != 0xffff || r.PKeys[1] != 0x8001 {
		t.Errorf("record: %+v %v", r, err)
	}
	// ERR_NO_RECORDS: a StatusError of the SA class, named.
	err = checkReply(&req, ClassSubnAdm, saReply(t, req, 0x0300, 0))
	if st, ok := SAStatus(err); !ok || st != SAStatusNoRecords || err.Error() != "mad: lid 1: attribute 0x0033: status 0x0300 (ERR_NO_RECORDS)" {
		t.Errorf("no records: %v", err)
	}
	// A GetTable answer: GetTableResp.
	tr := req
	tr.Method = MethodGetTable
	if err := checkReply(&tr, ClassSubnAdm, saReply(t, tr, 0, 9, rec)); err != nil {
		t.Errorf("GetTableResp: %v", err)
	}
	if err := checkReply(&tr, ClassSubnAdm, saReply(t, req, 0, 9, rec)); err == nil {
		t.Error("a GetResp answered a GetTable")
	}
}

// TestSACut: an answer OpenSM segmented with RMPP arrives as its first segment
// (active, first, not last) and is never taken for the whole.
func TestSACut(t *testing.T) {
	req := Request{Addr: LIDAddress(1), Class: ClassSubnAdm, Method: MethodGetTable, Attr: AttrPKeyTableRecord}
	b := saReply(t, req, 0, 9, encodePKeyQuery(3, 1, 0))
	for _, tc := range []struct {
		flags uint8
		cut   bool
	}{
		{rmppFlagActive | rmppFlagFirst, true},
		{rmppFlagActive, true},
		{rmppFlagActive | rmppFlagFirst | rmppFlagLast, false},
		{rmppFlagActive | rmppFlagLast, true}, // a later, final segment: not the whole
		{0, false},
		{rmppFlagFirst, false}, // not active: no RMPP at all
	} {
		b[offRMPPFlags] = 0xf8 | tc.flags // RRespTime in the high bits
		if p, err := Decode(b); err != nil || p.Cut != tc.cut {
			t.Errorf("RMPP flags %03b: %+v %v, want cut %v", tc.flags, p, err, tc.cut)
		}
	}
}

func TestSAStatusText(t *testing.T) {
	for s, want := range map[uint16]string{
		0:      "success",
		0x0100: "ERR_NO_RESOURCES",
		0x0200: "ERR_REQ_INVALID",
		0x0300: "ERR_NO_RECORDS",
		0x0400: "ERR_TOO_MANY_RECORDS",
		0x0700: "ERR_REQ_DENIED",
		0x0800: "ERR_STATUS_PRIO_SUGGESTED",
		0x0900: "SA status 9",
		0x000c: "method/attribute combination not supported",
		0x020c: "method/attribute combination not supported, ERR_REQ_INVALID",
		0x0040: "reserved bits 0x40",
	} {
		if got := SAStatusText(s); got != want {
			t.Errorf("SAStatusText(%#04x) = %q, want %q", s, got, want)
		}
	}
	if _, ok := SAStatus(errors.New("x")); ok {
		t.Error("SAStatus of a plain error")
	}
	if _, ok := SAStatus(&StatusError{Status: 0x300, Class: ClassSubnLID}); ok {
		t.Error("SAStatus of an SMP's status")
	}
}

func TestSARecordLayouts(t *testing.T) {
	be := binary.BigEndian
	m := make([]byte, 56)
	m[0], m[1] = 0xff, 0x12
	be.PutUint32(m[32:], 0xb1b)
	be.PutUint16(m[36:], 0xc000)
	m[38], m[42] = 0x84, 0x83
	be.PutUint16(m[40:], 0x8001)
	be.PutUint32(m[44:], 3<<28|0x12345<<8|0xff)
	m[48], m[49] = 0x21, 0x80
	mr, err := ParseMCMemberRecord(m)
	if err != nil || mr.QKey != 0xb1b || mr.MTUCode() != 4 || mr.RateCode() != 3 {
		t.Errorf("MCMemberRecord: %+v %v", mr, err)
	}
	for _, f := range []func([]byte) error{
		func(b []byte) error { _, err := ParsePKeyTableRecord(b); return err },
		func(b []byte) error { _, err := ParseMCMemberRecord(b); return err },
	} {
		if f(make([]byte, 10)) == nil {
			t.Error("a short record parsed")
		}
	}
}

// TestFindSAMasterSMLID: FindSA takes the SA's LID from the local PortInfo's
// MasterSMLID; 0 is ErrNoSM, and a LID that is not unicast (0xC000 and up) is no
// SA either, said with its value (the error used to claim it was 0).
func TestFindSAMasterSMLID(t *testing.T) {
	for _, tc := range []struct {
		smLID uint16
		want  string // "" for success
	}{
		{1, ""},
		{0xbfff, ""},
		{0, ErrNoSM.Error()},
		{0xc001, "MasterSMLID 0xc001 is not a unicast LID"},
		{0xffff, "MasterSMLID 0xffff is not a unicast LID"},
	} {
		f := newFake(func(m []byte) [][]byte {
			d := make([]byte, smpDataSize)
			binary.BigEndian.PutUint16(d[18:], tc.smLID)
			return [][]byte{reply(m, d)}
		})
		e := newEngine(f, umadWindow, Options{Timeout: time.Second}, 0)
		lid, err := FindSA(context.Background(), e)
		e.Close()
		switch {
		case tc.want == "" && (err != nil || lid != tc.smLID):
			t.Errorf("MasterSMLID 0x%04x: %d, %v", tc.smLID, lid, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("MasterSMLID 0x%04x: %d, %v, want %q", tc.smLID, lid, err, tc.want)
		}
	}
}
