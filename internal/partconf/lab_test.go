package partconf

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/check"
	ibsimlab "github.com/ibkey/ibkey/internal/lab"
)

// The lab: ibsim simulates a fabric, OpenSM programs it from a partitions.conf, and
// smpquery reads back what was programmed. It is the ground truth for the model.
// Kept small and self-contained so it can move to internal/lab.

const umad2sim = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"

// lab is one running ibsim with its own socket name and scratch directory.
type lab struct {
	dir   string
	sock  string
	ibsim *exec.Cmd
	stdin io.WriteCloser
}

// needLab skips the test when the simulator or the tools are missing (and fails it
// under CI=true, lab.Require), or with -short.
func needLab(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("lab: -short")
	}
	ibsimlab.Require(t)
}

func toolPath(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	return "/usr/sbin/" + name
}

var labSeq int

// startLab starts ibsim on netfile and stops it when the test ends. ibsim reads console
// commands from stdin and spins at stdin EOF, so stdin is a pipe held open until the end.
func startLab(t testing.TB, netfile string) *lab {
	t.Helper()
	needLab(t)
	labSeq++
	l := &lab{dir: t.TempDir(), sock: fmt.Sprintf("ibkeyt%d_%d", os.Getpid(), labSeq)}
	l.ibsim = exec.Command(toolPath("ibsim"), "-s", netfile)
	l.ibsim.Dir = l.dir
	l.ibsim.Env = append(os.Environ(), "IBSIM_SOCKNAME="+l.sock)
	var err error
	if l.stdin, err = l.ibsim.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := l.ibsim.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	l.ibsim.Stderr = l.ibsim.Stdout
	if err := l.ibsim.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		l.ibsim.Process.Kill()
		l.stdin.Close()
		l.ibsim.Wait()
	})
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(out)
		var log strings.Builder
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), "simulator ready") {
				ready <- nil
				io.Copy(io.Discard, out)
				return
			}
		}
		ready <- fmt.Errorf("ibsim exited before it was ready:\n%s", log.String())
	}()
	select {
	case err := <-ready:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ibsim: not ready after 10s")
	}
	// ibsim prints "ready" before it binds its sockets (ctl, then out0..out9).
	want := []byte("@" + l.sock + ":out9")
	for deadline := time.Now().Add(10 * time.Second); ; {
		b, err := os.ReadFile("/proc/net/unix")
		if err != nil || bytes.Contains(b, want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ibsim did not bind %s within 10s", want)
		}
		time.Sleep(2 * time.Millisecond)
	}
	return l
}

// run runs a libibumad tool against the simulator, in the scratch directory (the shim
// leaves ./sys-PID directories behind).
func (l *lab) run(env []string, name string, args ...string) (string, error) {
	cmd := exec.Command(toolPath(name), args...)
	cmd.Dir = l.dir
	cmd.Env = append(os.Environ(), append([]string{"LD_PRELOAD=" + umad2sim, "IBSIM_SOCKNAME=" + l.sock}, env...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		err = fmt.Errorf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String(), err
}

// opensm runs OpenSM once from smNode with conf ("" for no file) and returns its log.
func (l *lab) opensm(t testing.TB, smNode, conf string, allowBoth bool) string {
	t.Helper()
	d, err := os.MkdirTemp(l.dir, "osm")
	if err != nil {
		t.Fatal(err)
	}
	if conf == "" {
		conf = filepath.Join(d, "does-not-exist.conf")
	}
	args := []string{"-o", "-e", "-s", "0", "-P", conf, "-f", filepath.Join(d, "opensm.log")}
	if allowBoth {
		args = append(args, "-W")
	}
	if _, err := l.run([]string{"SIM_HOST=" + smNode, "OSM_CACHE_DIR=" + d, "OSM_TMP_DIR=" + d}, "opensm", args...); err != nil {
		t.Fatal(err)
	}
	log, _ := os.ReadFile(filepath.Join(d, "opensm.log"))
	return string(log)
}

// nodeInfo reads NodeInfo over a directed route ("0,1" = out of port 1 of the node the
// tool attaches to, the first node of the topology file).
func (l *lab) portGUID(t testing.TB, dr string) check.GUID {
	t.Helper()
	out, err := l.run(nil, "smpquery", "-D", "nodeinfo", dr)
	if err != nil {
		t.Fatal(err)
	}
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
func (l *lab) pkeys(t testing.TB, dr string) []check.PKey {
	t.Helper()
	out, err := l.run(nil, "smpquery", "-D", "pkeys", dr)
	if err != nil {
		t.Fatal(err)
	}
	return parsePKeyRows(t, out)
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
			log := l.opensm(t, "HcaA", conf, lc.allowBoth)
			cfg := loadLabConfig(t, lc.conf)
			rejectedByOpenSM := strings.Contains(log, "retrying with default config")
			if rejectedByOpenSM != cfg.Rejected {
				t.Errorf("OpenSM rejected the file: %v, model says %v (first error %v)\nfindings: %v", rejectedByOpenSM, cfg.Rejected, cfg.RejectedAt, cfg.Findings)
			}
			m := NewModel(cfg, labFabric, Options{AllowBoth: lc.allowBoth, SMGUID: labSM, TableSize: 64})
			real := map[check.GUID][]check.PKey{}
			for _, dr := range labHCAs {
				g := l.portGUID(t, dr)
				real[g] = l.pkeys(t, dr)
				if got, want := fmt.Sprint(m.PKeys(g)), fmt.Sprint(real[g]); got != want {
					t.Errorf("port %s: model %s, OpenSM programmed %s", g, got, want)
				}
			}
			// The switch's management port 0 gets the partitions that name it (ALL,
			// ALL_SWITCHES), not only the default P_Key.
			sw := l.pkeys(t, labSwitch)
			if got, want := fmt.Sprint(m.PKeys(labFabric[4].GUID)), fmt.Sprint(sw); got != want {
				t.Errorf("switch port 0: model %s, OpenSM programmed %s", got, want)
			}
			for a, ta := range real {
				for b, tb := range real {
					if a >= b {
						continue
					}
					want := pkeyRule(ta, tb)
					if got := m.CanTalk(a, b); got.CanTalk != want {
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
