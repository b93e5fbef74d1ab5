package mad_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/lab"
)

// The SA client against OpenSM's SA on the simulated fabric, every answer compared
// with saquery's on the same fabric (the oracle): the partitions lab net with OpenSM on
// HcaA running saConf, ibkey and saquery both asking from HcaA.

const saConf = `Default=0x7fff : ALL=full;
p1=0x8001, ipoib, mtu=4, rate=7, Q_Key=0x00001111 : 0x0002c90300000211=full, 0x0002c90300000221, 0x0002c90300000231;
p2=0x0002, ipoib : 0x0002c90300000221, 0x0002c90300000231, 0x0002c90300000201;
p3=0x0003 : 0x0002c90300000211=full, 0x0002c90300000231;
`

// saquery's records print as "name.....value" lines (infiniband-diags saquery.c
// dump_path_record and kin); lab.ParseFields reads the "Name:....value" of smpquery.
func saFields(out string) []map[string]string {
	var recs []map[string]string
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasSuffix(line, "dump:") {
			recs = append(recs, map[string]string{})
			continue
		}
		i := strings.Index(line, "..")
		if i <= 0 || len(recs) == 0 {
			continue
		}
		recs[len(recs)-1][line[:i]] = strings.TrimLeft(line[i:], ".")
	}
	return recs
}

func hexField(t *testing.T, f map[string]string, name string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(f[name], 0, 64)
	if err != nil {
		t.Fatalf("saquery field %s: %q: %v", name, f[name], err)
	}
	return v
}

// TestLabSAPathRecords: for every pair of CA ports and every key, GetPathRecord
// answers what saquery PR --slid --dlid --pkey answers: a path, or none.
func TestLabSAPathRecords(t *testing.T) {
	l := lab.StartPartconf(t)
	l.StartOpenSMDaemon(t, saConf)
	tr := l.Dial(t, "HcaA", labOpts)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sa, err := mad.FindSA(ctx, tr)
	if err != nil || sa != 1 {
		t.Fatalf("FindSA: %d, %v (want LID 1, HcaA's)", sa, err)
	}
	lids := []uint16{1, 3, 4, 5} // HcaA..HcaD
	keys := []uint16{0xffff, 0x7fff, 0x8001, 0x0001, 0x8002, 0x0002, 0x8003, 0x0003, 0x8009}
	paths, refused := 0, 0
	for _, s := range lids {
		for _, d := range lids {
			for _, k := range keys {
				args := []string{"PR", "--slid", strconv.Itoa(int(s)), "--dlid", strconv.Itoa(int(d)), "--pkey", fmt.Sprintf("0x%04x", k)}
				out, err := l.ToolAt("HcaA", "saquery", args...)
				if err != nil {
					t.Fatalf("saquery %v: %v", args, err)
				}
				recs := saFields(out)
				err = mad.GetPathRecord(ctx, tr, sa, s, d, k)
				if len(recs) == 0 {
					if st, ok := mad.SAStatus(err); !ok || st != mad.SAStatusNoRecords {
						t.Errorf("%v: saquery prints no path, ibkey: %v", args, err)
					}
					refused++
					continue
				}
				if err != nil {
					t.Errorf("%v: saquery prints a path, ibkey: %v", args, err)
					continue
				}
				paths++
			}
		}
	}
	if paths == 0 || refused == 0 {
		t.Fatalf("%d paths and %d refusals: the test needs both", paths, refused)
	}
	t.Logf("%d paths and %d refusals agree with saquery", paths, refused)
}

// TestLabSAPKeyTableRecords: GetPKeyTableRecord with OpenSM's SM_Key answers what
// saquery --smkey 1 PKTR LID/PORT/BLOCK answers for every end port and switch port;
// without the key the SA refuses (ERR_REQ_INVALID), with a wrong non-zero key it
// drops the request (a timeout, no answer at all).
func TestLabSAPKeyTableRecords(t *testing.T) {
	l := lab.StartPartconf(t)
	l.StartOpenSMDaemon(t, saConf)
	tr := l.Dial(t, "HcaA", labOpts)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	type q struct {
		lid        uint16
		port       uint8
		block      uint16
		withTables bool
	}
	var qs []q
	for _, lid := range []uint16{1, 3, 4, 5} {
		qs = append(qs, q{lid, 1, 0, true}, q{lid, 1, 1, true})
	}
	for port := uint8(0); port <= 4; port++ { // Sw1, LID 2: port 0 and the ports to the HCAs
		qs = append(qs, q{2, port, 0, true})
	}
	for _, c := range qs {
		arg := fmt.Sprintf("%d/%d/%d", c.lid, c.port, c.block)
		out, err := l.ToolAt("HcaA", "saquery", "--smkey", "1", "PKTR", arg)
		if err != nil {
			t.Fatalf("saquery PKTR %s: %v", arg, err)
		}
		want := saquery16(t, out)
		r, err := mad.GetPKeyTableRecord(ctx, tr, 1, mad.OpenSMDefaultSMKey, c.lid, c.port, c.block)
		if want == nil {
			if st, ok := mad.SAStatus(err); !ok || st != mad.SAStatusNoRecords {
				t.Errorf("PKTR %s: saquery prints nothing, ibkey %+v %v", arg, r, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("PKTR %s: %v", arg, err)
			continue
		}
		if r.LID != c.lid || r.Port != c.port || r.Block != c.block || fmt.Sprint(r.PKeys[:]) != fmt.Sprint(want) {
			t.Errorf("PKTR %s: ibkey %+v, saquery %04x", arg, r, want)
		}
	}
	_, err := mad.GetPKeyTableRecord(ctx, tr, 1, 0, 3, 1, 0)
	if st, ok := mad.SAStatus(err); !ok || st != mad.SAStatusReqInvalid {
		t.Errorf("without the SM_Key: %v, want ERR_REQ_INVALID", err)
	}
	quick := l.Dial(t, "HcaA", mad.Options{Timeout: 200 * time.Millisecond, Retries: -1})
	if _, err := mad.GetPKeyTableRecord(ctx, quick, 1, 7, 3, 1, 0); !errors.Is(err, mad.ErrTimeout) || !strings.Contains(err.Error(), "neither 0 nor its sa_key") {
		t.Errorf("with SM_Key 7: %v, want a timeout that names the key", err)
	}
}

// saquery16 reads the 32 entries of a PKeyTableRecord dump, nil when there is none.
func saquery16(t *testing.T, out string) []uint16 {
	t.Helper()
	i := strings.Index(out, "PKey Table:")
	if i < 0 {
		return nil
	}
	var v []uint16
	for _, f := range strings.Fields(out[i+len("PKey Table:"):]) {
		n, err := strconv.ParseUint(f, 0, 16)
		if err != nil {
			break
		}
		v = append(v, uint16(n))
	}
	if len(v) != 32 {
		t.Fatalf("saquery PKTR printed %d entries:\n%s", len(v), out)
	}
	return v
}

// TestLabSAMCMemberRecords: GetMCMemberRecord for the IPoIB broadcast groups answers
// what saquery MCMR --mgid answers, from a port in the group's partition; from one
// outside it the SA answers nothing for the group, as if it did not exist.
func TestLabSAMCMemberRecords(t *testing.T) {
	l := lab.StartPartconf(t)
	l.StartOpenSMDaemon(t, saConf)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, c := range []struct {
		node, mgid string
		visible    bool
	}{
		{"HcaB", "ff12:401b:8001::ffff:ffff", true},
		{"HcaC", "ff12:401b:8002::ffff:ffff", true},
		{"HcaB", "ff12:401b:8002::ffff:ffff", false}, // HcaB is not in p2
		{"HcaA", "ff12:401b:8001::ffff:ffff", false}, // nor HcaA in p1
		{"HcaB", "ff12:401b:ffff::ffff:ffff", false}, // Default is not ipoib here: no group
	} {
		out, err := l.ToolAt(c.node, "saquery", "MCMR", "--mgid", c.mgid)
		if err != nil {
			t.Fatalf("saquery MCMR --mgid %s from %s: %v", c.mgid, c.node, err)
		}
		recs := saFields(out)
		tr := l.Dial(t, c.node, labOpts)
		var mgid mad.GID
		copy(mgid[:], parseGID(t, c.mgid))
		r, err := mad.GetMCMemberRecord(ctx, tr, 1, mgid)
		if !c.visible {
			if st, ok := mad.SAStatus(err); len(recs) != 0 || !ok || st != mad.SAStatusNoRecords {
				t.Errorf("%s from %s: saquery %v, ibkey %+v %v (want nothing)", c.mgid, c.node, recs, r, err)
			}
			continue
		}
		if err != nil || len(recs) != 1 {
			t.Fatalf("%s from %s: saquery %d records, ibkey %v", c.mgid, c.node, len(recs), err)
		}
		f := recs[0]
		if uint64(r.QKey) != hexField(t, f, "qkey") || uint64(r.MTU) != hexField(t, f, "mtu") || uint64(r.Rate) != hexField(t, f, "rate") {
			t.Errorf("%s: ibkey %+v, saquery %v", c.mgid, r, f)
		}
		if c.mgid == "ff12:401b:8001::ffff:ffff" && (r.QKey != 0x1111 || r.MTUCode() != 4 || r.RateCode() != 7) {
			t.Errorf("p1's group: %+v, want the file's qkey 0x1111, mtu 4, rate 7", r)
		}
	}
}

func parseGID(t *testing.T, s string) []byte {
	t.Helper()
	a, err := netip.ParseAddr(s)
	if err != nil {
		t.Fatal(err)
	}
	b := a.As16()
	return b[:]
}

// TestLabSAGetTableCut (wave 19): OpenSM marks every SubnAdmGetTable answer as RMPP
// Active and leaves its segments and their First and Last flags to the kernel's RMPP
// (osm_sa.c osm_sa_respond, VENDOR_RMPP_SUPPORT); the simulator has none, so only the
// answer's first 256 bytes arrive, with neither flag: Packet.Cut is set even for an
// answer that fits, and saquery, which does not look at the flags, prints what fits
// (2 P_KeyTableRecords of 72 bytes in 200) as the whole answer. ibkey sends only
// SubnAdmGet, whose answer is one record without RMPP.
func TestLabSAGetTableCut(t *testing.T) {
	l := lab.StartPartconf(t)
	l.StartOpenSMDaemon(t, saConf)
	tr := l.Dial(t, "HcaA", labOpts)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Every port's table (4 HCAs, 2 blocks each; 5 switch ports): far more than 2.
	p, err := tr.Do(ctx, mad.Request{Addr: mad.LIDAddress(1), Class: mad.ClassSubnAdm, Method: mad.MethodGetTable, Attr: mad.AttrPKeyTableRecord, SMKey: mad.OpenSMDefaultSMKey})
	if err != nil || !p.Cut {
		t.Fatalf("GetTable P_KeyTableRecord: %+v %v, want an answer cut to its first MAD", p, err)
	}
	out, err := l.ToolAt("HcaA", "saquery", "--smkey", "1", "PKTR")
	if err != nil || strings.Count(out, "PKeyTableRecord dump") != 2 {
		t.Errorf("saquery PKTR: %v, %d records, want the 2 of the first MAD\n%s", err, strings.Count(out, "PKeyTableRecord dump"), out)
	}
	// One record, which fits: still no Last flag.
	p, err = tr.Do(ctx, mad.Request{Addr: mad.LIDAddress(1), Class: mad.ClassSubnAdm, Method: mad.MethodGetTable, Attr: mad.AttrPKeyTableRecord, SMKey: mad.OpenSMDefaultSMKey,
		CompMask: mad.PKTRCompLID | mad.PKTRCompPort | mad.PKTRCompBlock, Data: []byte{0, 3, 0, 0, 1}})
	if err != nil || !p.Cut {
		t.Errorf("GetTable of one P_KeyTableRecord: %+v %v, want the RMPP flags Active without Last", p, err)
	}
	// The Get ibkey sends: one record, not cut.
	if _, err := mad.GetPKeyTableRecord(ctx, tr, 1, mad.OpenSMDefaultSMKey, 3, 1, 0); err != nil {
		t.Errorf("Get P_KeyTableRecord: %v", err)
	}
}
