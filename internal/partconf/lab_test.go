package partconf

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
	ibsimlab "github.com/ibkey/ibkey/internal/lab"
)

// The lab (internal/lab): ibsim simulates a fabric, OpenSM programs it from a
// partitions.conf, and smpquery reads back what was programmed. It is the ground truth
// for the model.

// needLab skips the test when the simulator or the tools are missing (and fails it
// under CI=true, lab.Require), or with -short.
func needLab(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("lab: -short")
	}
	ibsimlab.Require(t)
}

// startLab starts ibsim on netfile for the test. Tools attach at its first node.
func startLab(t testing.TB, netfile string) *ibsimlab.Lab {
	t.Helper()
	needLab(t)
	return ibsimlab.Start(t, netfile, nil)
}

// opensmArgs runs OpenSM once at the topology's first CA from conf (a file; "" for
// none) with extra arguments; it returns the log.
func opensmArgs(t testing.TB, l *ibsimlab.Lab, conf string, extra ...string) (string, error) {
	t.Helper()
	text := ""
	if conf == "" {
		extra = append(extra, "-P", filepath.Join(l.Dir, "does-not-exist.conf"))
	} else {
		b, err := os.ReadFile(conf)
		if err != nil {
			t.Fatal(err)
		}
		text = string(b)
	}
	err := l.RunOpenSMArgs(text, extra...)
	return opensmLog(l), err
}

// opensmLog is the log of l's last RunOpenSM (opensm -e starts it afresh).
func opensmLog(l *ibsimlab.Lab) string {
	b, _ := os.ReadFile(filepath.Join(l.Dir, "opensm", "opensm.log"))
	return string(b)
}

// opensm is opensmArgs failing the test on error, with -W when allowBoth.
func opensm(t testing.TB, l *ibsimlab.Lab, conf string, allowBoth bool) string {
	t.Helper()
	var args []string
	if allowBoth {
		args = append(args, "-W")
	}
	log, err := opensmArgs(t, l, conf, args...)
	if err != nil {
		t.Fatal(err)
	}
	return log
}

// portGUID reads NodeInfo's PortGuid over a directed route ("0,1" = out of port 1 of
// the node the tool attaches to, the first node of the topology file).
func portGUID(t testing.TB, l *ibsimlab.Lab, dr string) check.GUID {
	t.Helper()
	out := l.MustTool("smpquery", "-D", "nodeinfo", dr)
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "PortGuid:"); ok {
			g, err := strconv.ParseUint(strings.TrimLeft(v, "."), 0, 64)
			if err != nil {
				t.Fatalf("nodeinfo %s: %q: %v", dr, line, err)
			}
			return check.GUID(g)
		}
	}
	t.Fatalf("nodeinfo %s: no PortGuid in\n%s", dr, out)
	return 0
}

// pkeys reads a port's P_Key table over a directed route and returns its valid entries
// in index order (a fresh fabric has no holes).
func pkeys(t testing.TB, l *ibsimlab.Lab, dr string) []check.PKey {
	t.Helper()
	return parsePKeyRows(t, l.MustTool("smpquery", "-D", "pkeys", dr))
}

// parsePKeyRows reads smpquery's "   0: 0xffff 0x8001 ..." rows.
func parsePKeyRows(t testing.TB, out string) []check.PKey {
	var keys []check.PKey
	for _, line := range strings.Split(out, "\n") {
		_, rest, ok := strings.Cut(line, ":")
		if !ok || strings.Contains(line, "capacity") {
			continue
		}
		for _, f := range strings.Fields(rest) {
			v, err := check.ParsePKey(f)
			if err != nil {
				t.Fatalf("pkeys row %q: %v", line, err)
			}
			if v.Valid() {
				keys = append(keys, v)
			}
		}
	}
	return keys
}

// labFabric is testdata/lab/net as the model sees it.
var labFabric = []Port{
	{GUID: 0x0002c90300000201, Type: check.NodeCA},
	{GUID: 0x0002c90300000211, Type: check.NodeCA},
	{GUID: 0x0002c90300000221, Type: check.NodeCA},
	{GUID: 0x0002c90300000231, Type: check.NodeCA},
	{GUID: 0x0000000000200000, Type: check.NodeSwitch, TableSize: 8}, // Sw1's management port 0
}

const labSM = 0x0002c90300000201

// labHCAs are the directed routes from the switch to the HCA ports.
var labHCAs = []string{"0,1", "0,2", "0,3", "0,4"}

// labSwitch is the directed route to the switch itself: smpquery reads its port 0.
const labSwitch = "0"

type labCase struct {
	conf      string // testdata/lab/NAME.conf, "" for no file
	allowBoth bool
}

var labCases = []labCase{
	{conf: ""}, {conf: "multiline"}, {conf: "prefix"}, {conf: "defmember"},
	{conf: "both"}, {conf: "both", allowBoth: true}, {conf: "rejected"}, {conf: "dupkeys"},
	{conf: "keywords"}, {conf: "nodefault"}, {conf: "order"}, {conf: "order", allowBoth: true},
	{conf: "mgid"}, {conf: "smlimited"}, {conf: "crlf"}, {conf: "semicolon"}, {conf: "overflow"},
	{conf: "samename"},
}

func (c labCase) String() string {
	n := c.conf
	if n == "" {
		n = "nofile"
	}
	if c.allowBoth {
		n += "-W"
	}
	return n
}

func loadLabConfig(t testing.TB, name string) *Config {
	t.Helper()
	if name == "" {
		return NoFile()
	}
	path := filepath.Join("testdata", "lab", name+".conf")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return Parse(path, data)
}

// TestLabOpenSM runs OpenSM on the simulator for every lab config and checks that the
// model predicts exactly the tables OpenSM programmed, in order, and that CanTalk agrees
// with the P_Key rule applied to the programmed tables for every pair of HCA ports.
func TestLabOpenSM(t *testing.T) {
	needLab(t)
	net, err := filepath.Abs(filepath.Join("testdata", "lab", "net"))
	if err != nil {
		t.Fatal(err)
	}
	for _, lc := range labCases {
		t.Run(lc.String(), func(t *testing.T) {
			l := startLab(t, net)
			conf := ""
			if lc.conf != "" {
				conf, _ = filepath.Abs(filepath.Join("testdata", "lab", lc.conf+".conf"))
			}
			log := opensm(t, l, conf, lc.allowBoth)
			cfg := loadLabConfig(t, lc.conf)
			rejectedByOpenSM := strings.Contains(log, "retrying with default config")
			if rejectedByOpenSM != cfg.Rejected {
				t.Errorf("OpenSM rejected the file: %v, model says %v (first error %v)\nfindings: %v", rejectedByOpenSM, cfg.Rejected, cfg.RejectedAt, cfg.Findings)
			}
			m := NewModel(cfg, labFabric, Options{AllowBoth: lc.allowBoth, SMGUID: labSM, TableSize: 64})
			real := map[check.GUID][]check.PKey{}
			for _, dr := range labHCAs {
				g := portGUID(t, l, dr)
				real[g] = pkeys(t, l, dr)
				if got, want := fmt.Sprint(m.PKeys(g)), fmt.Sprint(real[g]); got != want {
					t.Errorf("port %s: model %s, OpenSM programmed %s", g, got, want)
				}
			}
			// The switch's management port 0 gets the partitions that name it (ALL,
			// ALL_SWITCHES), not only the default P_Key.
			sw := pkeys(t, l, labSwitch)
			if got, want := fmt.Sprint(m.PKeys(labFabric[4].GUID)), fmt.Sprint(sw); got != want {
				t.Errorf("switch port 0: model %s, OpenSM programmed %s", got, want)
			}
			for a, ta := range real {
				for b, tb := range real {
					if a >= b {
						continue
					}
					want := pkeyRule(ta, tb)
					if got := canTalk(m, a, b); got.CanTalk() != want {
						t.Errorf("can-talk %s %s: model %+v, P_Key rule on programmed tables %v", a, b, got, want)
					}
				}
			}
		})
	}
}

// pkeyRule is the receive check (IBA vol. 1 §10.9): same non-zero 15-bit key, at least one full.
func pkeyRule(a, b []check.PKey) bool {
	for _, x := range a {
		for _, y := range b {
			if x.Valid() && x.Partition() == y.Partition() && (x.IsFull() || y.IsFull()) {
				return true
			}
		}
	}
	return false
}
