package cantalk

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/lab"
)

// The lab, through the command: ibsim simulates the partitions lab net (one switch, four
// HCAs), OpenSM programs it from each lab config of internal/partconf, and
// smpquery reads back the tables (lab.EachPartconfCase). `ibkey can-talk --partitions`
// must agree, for every pair of HCA ports and every key, with the P_Key rule applied to
// the programmed tables. `make fabric-test` runs these (-run 'Lab|Fabric').

// keyRule is the P_Key rule on two programmed tables for one 15-bit key: both hold it,
// and at least one entry is full.
func keyRule(a, b []check.PKey, key check.PartitionKey) bool {
	for _, x := range a {
		for _, y := range b {
			if x.Valid() && x.Partition() == key && y.Partition() == key && (x.IsFull() || y.IsFull()) {
				return true
			}
		}
	}
	return false
}

// checkCanTalk runs can-talk --partitions for every pair of HCA ports, as whole ports
// and for every key either table holds, and compares with the P_Key rule.
func checkCanTalk(t *testing.T, conf string, allowBoth bool, real map[uint64][]check.PKey) {
	t.Helper()
	hcas := lab.PartconfHCAs
	// The lab net has no routers (--router none): without it, a file with ALL_CAS
	// items leaves the answer depending on the ports' types (exit 4).
	flags := []string{"--partitions", conf, "--sm-guid", check.GUID(hcas[0].GUID).String(), "--table-size", "64", "--router", "none"}
	if allowBoth {
		flags = append(flags, "--allow-both")
	}
	run := func(args ...string) cmdtest.Result {
		return runIbkey(t, append(append([]string{"can-talk"}, flags...), args...)...)
	}
	for i, a := range hcas {
		for _, b := range hcas[i+1:] {
			ta, tb := real[a.GUID], real[b.GUID]
			keys := map[check.PartitionKey]bool{}
			for _, v := range append(append([]check.PKey(nil), ta...), tb...) {
				if v.Valid() {
					keys[v.Partition()] = true
				}
			}
			want := false
			for k := range keys {
				want = want || keyRule(ta, tb, k)
				args := []string{fmt.Sprintf("%s,pkey=%s", check.GUID(a.GUID), k), fmt.Sprintf("guid=%s,pkey=%s", check.GUID(b.GUID), k)}
				r := run(args...)
				if got := r.Code == 0; got != keyRule(ta, tb, k) || (r.Code != 0 && r.Code != 1) {
					t.Errorf("ibkey can-talk %s %s: exit %d, P_Key rule on the programmed tables %v / %v says %v\n%s%s", strings.Join(flags, " "), strings.Join(args, " "), r.Code, ta, tb, keyRule(ta, tb, k), r.Stdout, r.Stderr)
				}
			}
			args := []string{check.GUID(a.GUID).String(), check.GUID(b.GUID).String()}
			r := run(args...)
			if got := r.Code == 0; got != want || (r.Code != 0 && r.Code != 1) {
				t.Errorf("ibkey can-talk %s %s: exit %d, P_Key rule on the programmed tables says %v\n%s%s", strings.Join(flags, " "), strings.Join(args, " "), r.Code, want, r.Stdout, r.Stderr)
			}
		}
	}
}

// TestLabCanTalkPartitions: one ibsim and one OpenSM run per config, then a
// reconfiguration (reconf-a.conf, then reconf-b.conf on the same fabric): can-talk
// --partitions against the P_Key rule on the tables OpenSM programmed. (partitions
// show and check against the same runs: cmd/ibkey/internal/partitions.)
func TestLabCanTalkPartitions(t *testing.T) {
	lab.EachPartconfCase(t, func(t *testing.T, c lab.PartconfCase, _ *lab.Lab, tables map[uint64][]check.PKey) {
		checkCanTalk(t, c.File(), c.AllowBoth, tables)
	})
	t.Run("reconfiguration", func(t *testing.T) {
		l := lab.StartPartconf(t)
		for _, conf := range []string{reconfAConf, reconfBConf} {
			checkCanTalk(t, conf, false, l.ProgramFile(t, conf, false))
		}
	})
}

// TestLabCanTalkPKeyUnderSelf (wave 12): "P1=0x8001 : SELF=full, HcaB=limited": OpenSM,
// running at HcaA, gives HcaA a full 0x8001, so a QP on HcaA using 0x8001 talks to
// HcaB (the P_Key rule on the tables it programmed). Without --sm-guid, can-talk
// --partitions predicted HcaA as an ordinary port, with no entry of 0x0001, and said
// a definite NO (exit 1); the answer depends on which port OpenSM runs on: UNKNOWN
// (exit 4). With --sm-guid it is the programmed tables' answer.
func TestLabCanTalkPKeyUnderSelf(t *testing.T) {
	lab.Require(t)
	if testing.Short() {
		t.Skip("lab: -short")
	}
	hcaA, hcaB := check.GUID(lab.PartconfHCAs[0].GUID), check.GUID(lab.PartconfHCAs[1].GUID)
	conf := filepath.Join(t.TempDir(), "partitions.conf")
	if err := os.WriteFile(conf, []byte("Default=0x7fff : ALL=full ;\nP1=0x8001 : SELF=full, "+hcaB.String()+"=limited ;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l := lab.StartPartconf(t)
	real := l.ProgramFile(t, conf, false)
	if !keyRule(real[uint64(hcaA)], real[uint64(hcaB)], 0x0001) {
		t.Fatalf("OpenSM at HcaA programmed %v / %v: the lab no longer gives SELF partition 0x0001", real[uint64(hcaA)], real[uint64(hcaB)])
	}
	args := []string{"can-talk", "--partitions", conf, "--router", "none", hcaA.String() + ",pkey=0x8001", hcaB.String()}
	if r := cmdtest.RunPartial(t, root, false, nil, args...); r.Code != 4 || !strings.Contains(r.Stdout, "if "+hcaA.String()+" is the port OpenSM runs on") {
		t.Errorf("ibkey %s: exit %d, want 4 naming the SM's port\n%s%s", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
	}
	args = append(args, "--sm-guid", hcaA.String())
	if r := runIbkey(t, args...); r.Code != 0 {
		t.Errorf("ibkey %s: exit %d, want 0 as the programmed tables say\n%s%s", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
	}
}
