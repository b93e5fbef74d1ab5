package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/lab"
)

// The lab, through the CLI: ibsim simulates testdata/lab/net (one switch, four HCAs),
// OpenSM programs it from each lab config of internal/check/partconf, and smpquery reads
// back the tables. `ibkey can-talk --partitions` must agree,
// for every pair of HCA ports and every key, with the P_Key rule applied to the
// programmed tables. `make fabric-test` runs these (-run 'Lab|Fabric').

const partconfLab = "../../internal/check/partconf/testdata/lab"

// labHCAs are HcaA..HcaD of the lab net, with the directed route to each from the switch
// (the tools attach to the first node, Sw1). HcaA runs OpenSM: SELF.
var labHCAs = []struct {
	guid uint64
	dr   string
}{
	{0x0002c90300000201, "0,1"}, {0x0002c90300000211, "0,2"}, {0x0002c90300000221, "0,3"}, {0x0002c90300000231, "0,4"},
}

// labPartitionCases reuse the partconf lab configs: multi-line definitions, prefix
// keywords, defmember, both with and without -W, files OpenSM rejects, duplicate keys,
// ALL/ALL_CAS/SELF, no Default line, table order, the SM port limited.
var labPartitionCases = []struct {
	conf      string
	allowBoth bool
}{
	{"multiline", false}, {"prefix", false}, {"defmember", false}, {"both", false}, {"both", true},
	{"rejected", false}, {"crlf", false}, {"semicolon", false}, {"dupkeys", false}, {"keywords", false},
	{"nodefault", false}, {"order", false}, {"order", true}, {"mgid", false}, {"smlimited", false},
}

// labTable reads one HCA port's programmed table: every entry, in index order.
func labTable(t *testing.T, l *lab.Lab, dr string) []check.PKey {
	t.Helper()
	pt, err := lab.ParsePKeys(l.MustTool("smpquery", "-D", "pkeys", dr))
	if err != nil {
		t.Fatal(err)
	}
	out := make([]check.PKey, len(pt.Entries))
	for i, v := range pt.Entries {
		out[i] = check.PKey(v)
	}
	return out
}

// keyRule is the P_Key rule on two programmed tables for one 15-bit key: both hold it,
// and at least one entry is full.
func keyRule(a, b []check.PKey, key uint16) bool {
	for _, x := range a {
		for _, y := range b {
			if x.Valid() && x.Key() == key && y.Key() == key && (x.IsFull() || y.IsFull()) {
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
	flags := []string{"--partitions", conf, "--sm-guid", check.FormatGUID(labHCAs[0].guid), "--table-size", "64"}
	if allowBoth {
		flags = append(flags, "--allow-both")
	}
	for i, a := range labHCAs {
		for _, b := range labHCAs[i+1:] {
			ta, tb := real[a.guid], real[b.guid]
			keys := map[uint16]bool{}
			for _, v := range append(append([]check.PKey(nil), ta...), tb...) {
				if v.Valid() {
					keys[v.Key()] = true
				}
			}
			want := false
			for k := range keys {
				want = want || keyRule(ta, tb, k)
				args := append([]string{"can-talk"}, flags...)
				args = append(args, fmt.Sprintf("%s,pkey=0x%04x", check.FormatGUID(a.guid), k), fmt.Sprintf("guid=%s,pkey=0x%04x", check.FormatGUID(b.guid), k))
				r := runIbkey(t, false, nil, args...)
				if got := r.code == 0; got != keyRule(ta, tb, k) || (r.code != 0 && r.code != 1) {
					t.Errorf("ibkey %s: exit %d, P_Key rule on the programmed tables %v / %v says %v\n%s%s", strings.Join(args, " "), r.code, ta, tb, keyRule(ta, tb, k), r.stdout, r.stderr)
				}
			}
			args := append([]string{"can-talk"}, flags...)
			args = append(args, check.FormatGUID(a.guid), check.FormatGUID(b.guid))
			r := runIbkey(t, false, nil, args...)
			if got := r.code == 0; got != want || (r.code != 0 && r.code != 1) {
				t.Errorf("ibkey %s: exit %d, P_Key rule on the programmed tables says %v\n%s%s", strings.Join(args, " "), r.code, want, r.stdout, r.stderr)
			}
		}
	}
}

// TestLabCanTalkPartitions: one ibsim and one OpenSM run per config, then a
// reconfiguration (reconf-a.conf, then reconf-b.conf on the same fabric): can-talk
// --partitions against the P_Key rule on the tables OpenSM programmed. (partitions
// show and check against the same runs: cmd/ibkey/internal/partitions.)
func TestLabCanTalkPartitions(t *testing.T) {
	lab.Require(t)
	if testing.Short() {
		t.Skip("lab: -short")
	}
	for _, lc := range labPartitionCases {
		name := lc.conf
		if lc.allowBoth {
			name += "-W"
		}
		t.Run(name, func(t *testing.T) {
			conf := filepath.Join(partconfLab, lc.conf+".conf")
			text, err := os.ReadFile(conf)
			if err != nil {
				t.Fatal(err)
			}
			l := lab.Start(t, filepath.Join(partconfLab, "net"), &lab.Options{SMNode: "HcaA"})
			if err := l.RunOpenSM(string(text), lc.allowBoth); err != nil {
				t.Fatal(err)
			}
			real := map[uint64][]check.PKey{}
			for _, h := range labHCAs {
				real[h.guid] = labTable(t, l, h.dr)
			}
			checkCanTalk(t, conf, lc.allowBoth, real)
		})
	}
	t.Run("reconfiguration", func(t *testing.T) {
		l := lab.Start(t, filepath.Join(partconfLab, "net"), &lab.Options{SMNode: "HcaA"})
		for _, conf := range []string{reconfAConf, reconfBConf} {
			text, err := os.ReadFile(conf)
			if err != nil {
				t.Fatal(err)
			}
			if err := l.RunOpenSM(string(text), false); err != nil {
				t.Fatal(err)
			}
			real := map[uint64][]check.PKey{}
			for _, h := range labHCAs {
				real[h.guid] = labTable(t, l, h.dr)
			}
			checkCanTalk(t, conf, false, real)
		}
	})
}
