package smlog

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/lab"
)

// A MultiPathRecord request (IBA 15.2.5.20) is a SubnAdmGetMulti, which OpenSM
// takes only as an RMPP message (osm_sa_multipath_record.c: ERR 4510 without
// RMPP_FLAG_ACTIVE): one segment, Active, First and Last, carries a request of one
// source and one destination GID.
const (
	methodSubnAdmGetMulti = 0x14 // IBA 13.4.5 table 97
	attrMultiPath         = 0x003a
	mprCompReversible     = 1 << 5
	mprCompNumbPath       = 1 << 6
	mprCompPKey           = 1 << 7
	mprCompSGIDCount      = 1 << 19
	mprCompDGIDCount      = 1 << 20
)

// multiPath sends a MultiPathRecord GetMulti for the paths from port GUID src to dst
// (pkey: the P_Key asked for, 0 none) from a client of l attached at node to the SA at
// smLID; what OpenSM logs is what the tests read (the reply, an RMPP response, is not
// waited for).
func multiPath(ctx context.Context, l *lab.Lab, node string, smLID uint16, src, dst uint64, pkey uint16) error {
	b := lab.NewMAD(classSubnAdm, 2, methodSubnAdmGetMulti, rand.Uint64()>>1, attrMultiPath)
	// The RMPP header (IBA 13.6.2.1): version 1, type DATA, flags Active, First and
	// Last, segment 1, the payload's length (the SA header's 20 bytes and the record).
	b[24], b[25], b[26] = 1, 1, 0x07
	binary.BigEndian.PutUint32(b[28:], 1)
	rec := make([]byte, 24+2*16)
	comp := uint64(mprCompReversible | mprCompNumbPath | mprCompSGIDCount | mprCompDGIDCount)
	rec[5] = 0x80 | 1 // Reversible, NumbPath 1
	if pkey != 0 {
		binary.BigEndian.PutUint16(rec[6:], pkey)
		comp |= mprCompPKey
	}
	rec[15], rec[16] = 1, 1 // SGIDCount, DGIDCount (ib_types.h ib_multipath_rec_t)
	s, d := portGID(src), portGID(dst)
	copy(rec[24:], s[:])
	copy(rec[40:], d[:])
	binary.BigEndian.PutUint32(b[32:], uint32(20+len(rec)))
	binary.BigEndian.PutUint64(b[offCompMask:], comp)
	copy(b[offSAData:], rec)
	_, err := l.Send(ctx, node, smLID, 1, b, false)
	return err
}

// TestLabMultiPathRefusals makes OpenSM refuse MultiPathRecords for a partition: ERR
// 4518 (the P_Key asked for is not shared), and with labQoS's policy 451C (a P_Key the
// QoS level does not list) and 451D (no P_Key of the level shared), and checks what sm
// log makes of them: the events of the hand-written lines, in OpenSM's own words.
func TestLabMultiPathRefusals(t *testing.T) {
	l := startLab(t)
	policy := writeQoSPolicy(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var log string
	for _, run := range []struct {
		conf []string
		asks []struct {
			src, dst uint64
			pkey     uint16
			want     string
		}
	}{
		{nil, []struct {
			src, dst uint64
			pkey     uint16
			want     string
		}{{guidC, guidD, 0x0002, "ERR 4518"}}},
		{[]string{"qos TRUE", "qos_policy_file " + policy}, []struct {
			src, dst uint64
			pkey     uint16
			want     string
		}{
			{guidB, guidD, 0x8003, "ERR 451C"}, {guidC, guidD, 0, "ERR 451D"}}},
	} {
		d := l.StartOpenSMDaemon(t, labConf, run.conf...)
		for _, ask := range run.asks {
			from := d.LogSize()
			if err := multiPath(ctx, l, "HcaA", lidA, ask.src, ask.dst, ask.pkey); err != nil {
				t.Fatal(err)
			}
			if _, err := d.WaitLog(ask.want, from, 10*time.Second); err != nil {
				t.Fatalf("%v\n%s", err, tail(d.LogText(), 3000))
			}
		}
		log += d.LogText()
		d.Stop()
	}
	var evs []*Event
	a := NewAssembler(time.Now(), time.Local, func(e *Event) { evs = append(evs, e) })
	for _, line := range strings.Split(strings.TrimSuffix(log, "\n"), "\n") {
		a.Line([]byte(line))
	}
	a.Flush()
	x := &Explainer{R: NewResolver(nil, a.Names)}
	got := map[string]bool{}
	for _, e := range evs {
		if e.Kind != KindPathRefused {
			continue
		}
		got[e.Code] = true
		rule := x.Explain(e).Rule
		switch e.Code {
		case "4518":
			if e.From.GUID != guidC || e.To.GUID != guidD || e.From.NodeDesc != "HcaC" || e.To.Num != 1 || e.Key != 0x0002 || !strings.Contains(rule, `"HcaC"[1] and "HcaD"[1] do not share partition 0x0002`) {
				t.Errorf("4518: %+v\n%s", e, rule)
			}
		case "451C":
			if e.QoSLevel != "QB" || e.Key != 0x8003 || e.From.GUID != guidB || e.To.GUID != guidD || !strings.Contains(rule, `the level "QB"`) {
				t.Errorf("451C: %+v\n%s", e, rule)
			}
		case "451D":
			if e.QoSLevel != "QC" || e.KeyType != "" || e.From.GUID != guidC || e.To.GUID != guidD || !strings.Contains(rule, `the level "QC"`) {
				t.Errorf("451D: %+v\n%s", e, rule)
			}
		}
	}
	if !got["4518"] || !got["451C"] || !got["451D"] {
		t.Errorf("events %v in\n%s", got, tail(log, 3000))
	}
}
