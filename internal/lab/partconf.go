package lab

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

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

// OpenSMDaemon is OpenSM running as a daemon on a simulated fabric, re-reading its
// partitions.conf at every heavy sweep: what SIGHUP (`systemctl reload`, the Debian
// init script's reload) makes it do. One process keeps what it remembers about the
// ports from sweep to sweep (osm_pkey_mgr.c's accum_pkeys), which a new process
// (RunOpenSM, opensm -o) does not.
type OpenSMDaemon struct {
	cmd      *exec.Cmd
	exited   chan struct{}
	conf     string
	log      string
	ups      int // "SUBNET UP" lines seen
	lastSeen int // bytes of the log read by the last Apply
}

// StartOpenSMDaemon starts `opensm` with partitionsConf (its text) in dir, attached
// with env (Lab.Env, or a test's own); extra are more opensm arguments (-W, -g GUID).
// It returns once OpenSM reports SUBNET UP; the test's cleanup stops it.
func StartOpenSMDaemon(t testing.TB, dir string, env []string, partitionsConf string, extra ...string) (*OpenSMDaemon, error) {
	t.Helper()
	bin, err := lookPath("opensm")
	if err != nil {
		return nil, err
	}
	d := &OpenSMDaemon{conf: filepath.Join(dir, "partitions.conf"), log: filepath.Join(dir, "opensm.log"), exited: make(chan struct{})}
	if err := os.WriteFile(d.conf, []byte(partitionsConf), 0o644); err != nil {
		return nil, err
	}
	// force_log_flush: the log is read while OpenSM runs.
	cfg := filepath.Join(dir, "opensm.conf")
	if err := os.WriteFile(cfg, []byte("force_log_flush TRUE\n"), 0o644); err != nil {
		return nil, err
	}
	args := append([]string{"-F", cfg, "-e", "-s", "0", "-P", d.conf, "-f", d.log}, extra...)
	d.cmd = exec.Command(bin, args...)
	d.cmd.Dir = dir
	d.cmd.Env = append(env, "OSM_CACHE_DIR="+dir, "OSM_TMP_DIR="+dir)
	var out bytes.Buffer
	d.cmd.Stdout, d.cmd.Stderr = &out, &out
	if err := d.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { d.cmd.Wait(); close(d.exited) }()
	t.Cleanup(d.Stop)
	if _, err := d.waitUp(); err != nil {
		return nil, fmt.Errorf("%v\n%s", err, tail(out.String(), 2000))
	}
	return d, nil
}

// Apply writes partitionsConf over the daemon's file and sends SIGHUP, as an
// administrator reloading OpenSM does, and waits for the heavy sweep to finish. It
// returns what OpenSM logged meanwhile.
func (d *OpenSMDaemon) Apply(partitionsConf string) (string, error) {
	if err := os.WriteFile(d.conf, []byte(partitionsConf), 0o644); err != nil {
		return "", err
	}
	if err := d.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		return "", err
	}
	return d.waitUp()
}

// waitUp waits for the next "SUBNET UP" in the log and returns the log since the
// last wait.
func (d *OpenSMDaemon) waitUp() (string, error) {
	deadline := time.Now().Add(60 * time.Second)
	for {
		b, _ := os.ReadFile(d.log)
		if n := bytes.Count(b, []byte("SUBNET UP")); n > d.ups {
			d.ups = n
			from := min(d.lastSeen, len(b))
			d.lastSeen = len(b)
			return string(b[from:]), nil
		}
		select {
		case <-d.exited:
			return "", fmt.Errorf("lab: opensm exited: %v\nlog:\n%s", d.cmd.ProcessState, tail(string(b), 4000))
		default:
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("lab: opensm did not report SUBNET UP within 60s\nlog:\n%s", tail(string(b), 4000))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Stop stops the daemon (the process this helper started) and waits for it.
func (d *OpenSMDaemon) Stop() {
	select {
	case <-d.exited:
		return
	default:
	}
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.exited:
	case <-time.After(5 * time.Second):
		d.cmd.Process.Kill()
		<-d.exited
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

// RouterLabPort is an end port of the router lab: its port GUID, whether it is a
// router's, and the directed route from HcaA that reaches it.
type RouterLabPort struct {
	Name   string
	GUID   check.GUID
	Router bool
	DR     string
}

// RouterLabPorts are HcaA (OpenSM runs there: SELF), HcaB and the router's two ports.
var RouterLabPorts = []RouterLabPort{
	{"HcaA/1", 0x0002c90300000301, false, "0"},
	{"HcaB/1", 0x0002c90300000311, false, "0,1,2"},
	{"Rt1/1", 0x0002c90300000321, true, "0,1,3"},
	{"Rt1/2", 0x0002c90300000322, true, "0,1,4"},
}

// RouterLabNode is the router's node GUID (ports 0x...321 and 0x...322).
const RouterLabNode check.GUID = 0x0002c90300000320

// StartRouterLab starts the router lab and gives the router its GUIDs; it returns once
// the router answers with them. internal/lab's topology parser knows only switches and
// HCAs, so the lab is given a file that includes the net (the parser skips includes).
func StartRouterLab(t testing.TB) *Lab {
	t.Helper()
	dir := t.TempDir()
	net, included := filepath.Join(dir, "net"), filepath.Join(dir, "router.net")
	if err := os.WriteFile(included, []byte(routerNet), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(net, []byte(fmt.Sprintf("include %q\n", included)), 0o644); err != nil {
		t.Fatal(err)
	}
	l := Start(t, net, &Options{SMNode: "HcaA", ToolNode: "HcaA"})
	l.MustConsole(fmt.Sprintf(`Guid "Rt1" %#x`, uint64(RouterLabNode)))
	for _, p := range RouterLabPorts {
		if p.Router {
			l.MustConsole(fmt.Sprintf(`Guid "Rt1"[%d] %#x`, p.GUID-RouterLabNode, uint64(p.GUID)))
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
