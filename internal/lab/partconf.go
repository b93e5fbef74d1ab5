package lab

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/check"
)

// The partitions lab: internal/partconf/testdata/lab/net (one switch, four HCAs;
// HcaA runs OpenSM, so SELF is HcaA) programmed by OpenSM from one of the lab configs
// beside it, the tables read back with smpquery. The commands that predict tables from
// a partitions.conf (partitions show, can-talk --partitions) are checked against it.

// PartconfHCAs are HcaA..HcaD of the partitions lab net: each one's port GUID and the
// directed route to it from the switch the tools attach at (Sw1, the first node).
var PartconfHCAs = []struct {
	GUID uint64
	DR   string
}{
	{0x0002c90300000201, "0,1"}, {0x0002c90300000211, "0,2"}, {0x0002c90300000221, "0,3"}, {0x0002c90300000231, "0,4"},
}

// PartconfCase is one lab config and whether OpenSM runs with -W (allow_both_pkeys).
type PartconfCase struct {
	Conf      string // the config's name: partconfDir()/Conf.conf
	AllowBoth bool
}

// File is the config's path.
func (c PartconfCase) File() string { return filepath.Join(partconfDir(), c.Conf+".conf") }

// partconfCases are the lab configs: multi-line definitions, prefix keywords,
// defmember, both with and without -W, files OpenSM rejects, duplicate keys,
// ALL/ALL_CAS/SELF, no Default line, table order, the SM port limited.
var partconfCases = []PartconfCase{
	{"multiline", false}, {"prefix", false}, {"defmember", false}, {"both", false}, {"both", true},
	{"rejected", false}, {"crlf", false}, {"semicolon", false}, {"dupkeys", false}, {"keywords", false},
	{"nodefault", false}, {"order", false}, {"order", true}, {"mgid", false}, {"smlimited", false},
}

// partconfDir is internal/partconf/testdata/lab, from whichever package the test
// runs in.
func partconfDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "partconf", "testdata", "lab")
}

// StartPartconf starts the partitions lab net; OpenSM runs at its first CA, HcaA.
func StartPartconf(t testing.TB) *Lab {
	t.Helper()
	return Start(t, filepath.Join(partconfDir(), "net"), nil)
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

// EachPartconfCase runs f as one subtest per partconfCases entry, each on its own lab
// that OpenSM programmed from the case's file, with the tables it programmed. It needs
// the lab (Require) and skips under -short.
func EachPartconfCase(t *testing.T, f func(t *testing.T, c PartconfCase, l *Lab, tables map[uint64][]check.PKey)) {
	t.Helper()
	Require(t)
	if testing.Short() {
		t.Skip("lab: -short")
	}
	for _, c := range partconfCases {
		name := c.Conf // with -W when both memberships are allowed
		if c.AllowBoth {
			name += "-W"
		}
		t.Run(name, func(t *testing.T) {
			l := StartPartconf(t)
			f(t, c, l, l.ProgramFile(t, c.File(), c.AllowBoth))
		})
	}
}

// The router lab: one switch, two HCAs and a router with both ports cabled to the
// switch (ibsim "Rt"; its GUIDs are set from the console, since ibsim's net files
// leave router GUIDs 0 and OpenSM then ignores the router: "ERR 0D16: Got Zero Node
// GUID"). The tools and OpenSM attach at HcaA.
const routerNet = `Switch 8 "Sw1"
[1] "HcaA"[1]
[2] "HcaB"[1]
[3] "Rt1"[1]
[4] "Rt1"[2]

caguid=0x0002c90300000300
Hca 1 "HcaA"
[1] "Sw1"[1]

caguid=0x0002c90300000310
Hca 1 "HcaB"
[1] "Sw1"[2]

Rt 2 "Rt1"
[1] "Sw1"[3]
[2] "Sw1"[4]
`

// RouterLabPorts are the end ports of the router lab, HcaA (OpenSM runs there: SELF),
// HcaB and the router's two ports: each one's port GUID, whether it is a router's, and
// the directed route from HcaA that reaches it.
var RouterLabPorts = []struct {
	Name   string
	GUID   check.GUID
	Router bool
	DR     string
}{
	{"HcaA/1", 0x0002c90300000301, false, "0"},
	{"HcaB/1", 0x0002c90300000311, false, "0,1,2"},
	{"Rt1/1", 0x0002c90300000321, true, "0,1,3"},
	{"Rt1/2", 0x0002c90300000322, true, "0,1,4"},
}

// routerLabNode is the router's node GUID (ports 0x...321 and 0x...322).
const routerLabNode check.GUID = 0x0002c90300000320

// StartRouterLab starts the router lab and gives the router its GUIDs; it returns once
// the router answers with them.
func StartRouterLab(t testing.TB) *Lab {
	t.Helper()
	net := filepath.Join(t.TempDir(), "net")
	if err := os.WriteFile(net, []byte(routerNet), 0o644); err != nil {
		t.Fatal(err)
	}
	l := Start(t, net, &Options{ToolNode: "HcaA"})
	l.MustConsole(fmt.Sprintf(`Guid "Rt1" %#x`, uint64(routerLabNode)))
	for _, p := range RouterLabPorts {
		if p.Router {
			l.MustConsole(fmt.Sprintf(`Guid "Rt1"[%d] %#x`, p.GUID-routerLabNode, uint64(p.GUID)))
		}
	}
	// The console applies asynchronously: wait until the router answers with its GUIDs.
	for _, p := range RouterLabPorts {
		if !p.Router {
			continue
		}
		for try := 0; ; try++ {
			out := l.MustTool("smpquery", "-D", "nodeinfo", p.DR)
			if g, err := ParseFields(out).Uint("PortGuid"); err == nil && check.GUID(g) == p.GUID {
				break
			}
			if try == 200 {
				t.Fatalf("lab: the router's port GUID %s was not set:\n%s", p.GUID, out)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	return l
}
