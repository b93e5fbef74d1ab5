package lab

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
)

// The partitions lab: internal/partconf/testdata/lab/net (one switch, four HCAs;
// HcaA runs OpenSM, so SELF is HcaA) programmed by OpenSM from one of the lab configs
// beside it, the tables read back with smpquery. The commands that predict tables from
// a partitions.conf (partitions show, can-talk --partitions) are checked against it.

// PartconfHCA is one HCA of the partitions lab net: its port GUID and the directed route
// to it from the switch the tools attach at (Sw1, the first node).
type PartconfHCA struct {
	GUID uint64
	DR   string
}

// PartconfHCAs are HcaA..HcaD of the partitions lab net.
var PartconfHCAs = []PartconfHCA{
	{0x0002c90300000201, "0,1"}, {0x0002c90300000211, "0,2"}, {0x0002c90300000221, "0,3"}, {0x0002c90300000231, "0,4"},
}

// PartconfCase is one lab config and whether OpenSM runs with -W (allow_both_pkeys).
type PartconfCase struct {
	Conf      string // the config's name: PartconfDir()/Conf.conf
	AllowBoth bool
}

// Name is the subtest name: the config, with -W when both memberships are allowed.
func (c PartconfCase) Name() string {
	if c.AllowBoth {
		return c.Conf + "-W"
	}
	return c.Conf
}

// File is the config's path.
func (c PartconfCase) File() string { return filepath.Join(PartconfDir(), c.Conf+".conf") }

// PartconfCases are the lab configs: multi-line definitions, prefix keywords,
// defmember, both with and without -W, files OpenSM rejects, duplicate keys,
// ALL/ALL_CAS/SELF, no Default line, table order, the SM port limited.
var PartconfCases = []PartconfCase{
	{"multiline", false}, {"prefix", false}, {"defmember", false}, {"both", false}, {"both", true},
	{"rejected", false}, {"crlf", false}, {"semicolon", false}, {"dupkeys", false}, {"keywords", false},
	{"nodefault", false}, {"order", false}, {"order", true}, {"mgid", false}, {"smlimited", false},
}

// PartconfDir is internal/partconf/testdata/lab, from whichever package the test
// runs in.
func PartconfDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "partconf", "testdata", "lab")
}

// StartPartconf starts the partitions lab net, OpenSM to run on HcaA.
func StartPartconf(t testing.TB) *Lab {
	t.Helper()
	return Start(t, filepath.Join(PartconfDir(), "net"), &Options{SMNode: "HcaA"})
}

// ProgramFile runs OpenSM with the partitions.conf at path and reads back each HCA's
// table (PartconfHCAs, by port GUID): every entry, in index order.
func (l *Lab) ProgramFile(t testing.TB, path string, allowBoth bool) map[uint64][]check.PKey {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.RunOpenSM(string(text), allowBoth); err != nil {
		t.Fatal(err)
	}
	tables := map[uint64][]check.PKey{}
	for _, h := range PartconfHCAs {
		pt, err := ParsePKeys(l.MustTool("smpquery", "-D", "pkeys", h.DR))
		if err != nil {
			t.Fatal(err)
		}
		tbl := make([]check.PKey, len(pt.Entries))
		for i, v := range pt.Entries {
			tbl[i] = check.PKey(v)
		}
		tables[h.GUID] = tbl
	}
	return tables
}

// EachPartconfCase runs f as one subtest per PartconfCases entry, each on its own lab
// that OpenSM programmed from the case's file, with the tables it programmed. It needs
// the lab (Require) and skips under -short.
func EachPartconfCase(t *testing.T, f func(t *testing.T, c PartconfCase, l *Lab, tables map[uint64][]check.PKey)) {
	t.Helper()
	Require(t)
	if testing.Short() {
		t.Skip("lab: -short")
	}
	for _, c := range PartconfCases {
		t.Run(c.Name(), func(t *testing.T) {
			l := StartPartconf(t)
			f(t, c, l, l.ProgramFile(t, c.File(), c.AllowBoth))
		})
	}
}
