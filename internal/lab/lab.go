// Package lab runs the simulated InfiniBand fabric for tests: ibsim with a
// topology file, OpenSM once to assign LIDs and program partitions, and the
// infiniband-diags tools (smpquery, perfquery, ...) as oracles, all attached
// through libumad2sim. Nothing here needs root, a kernel module or hardware.
//
// Each Lab gets its own ibsim socket name, so tests may run in parallel, and
// its own scratch directory. Cleanup stops exactly the ibsim process it
// started and fails the test if a client left an ibsim slot attached.
package lab

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// preloadLib is libumad2sim, which redirects libibumad's device access to ibsim.
const preloadLib = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"

// installHint is the command that provides everything the lab needs.
const installHint = "apt-get install -y ibsim-utils opensm infiniband-diags"

// Programs the lab runs.
var programs = []string{"ibsim", "opensm", "smpquery", "perfquery", "ibnetdiscover", "saquery"}

// lookPath finds a program in PATH or in the sbin directories, where Debian
// installs opensm and infiniband-diags (often not in a user's PATH).
func lookPath(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, dir := range []string{"/usr/sbin", "/sbin", "/usr/local/sbin"} {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found", name)
}

// Require skips the test when ibsim, OpenSM, infiniband-diags or libumad2sim is not
// installed, naming what is missing and how to install it. When the environment
// variable CI is set it fails instead: CI never skips.
func Require(t testing.TB) {
	t.Helper()
	var missing []string
	for _, p := range programs {
		if _, err := lookPath(p); err != nil {
			missing = append(missing, p)
		}
	}
	if _, err := os.Stat(preloadLib); err != nil {
		missing = append(missing, preloadLib)
	}
	if len(missing) > 0 {
		SkipUnlessCI(t, fmt.Errorf("simulated fabric unavailable: missing %s", strings.Join(missing, ", ")), installHint)
	}
}

// SkipUnlessCI skips the test because of err, naming install, what provides the
// missing part; when the environment variable CI is set it fails instead.
func SkipUnlessCI(t testing.TB, err error, install string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("%v (CI is set, so this fails instead of skipping); install with: %s", err, install)
	}
	t.Skipf("%v; install with: %s", err, install)
}

// Options tune Start. The zero value is fine for most topologies (ibsim's default
// tables hold 2,048 nodes and 13,312 ports).
type Options struct {
	// ToolNode is where Tool attaches; empty means ibsim's default, the
	// first node of the topology file.
	ToolNode string
	// SockName, when set, is the socket base name: a test that restarts ibsim
	// under the name its clients already use. Empty: a name unique to this lab.
	SockName string
}

// Lab is one running ibsim.
type Lab struct {
	// SockName is this ibsim's IBSIM_SOCKNAME.
	SockName string
	// Dir is the lab's scratch directory (topology copy, OpenSM files, the
	// tools' working directory).
	Dir string
	// Topology is the parsed topology file.
	Topology *Topology

	t       testing.TB
	opts    Options
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	stdout  *Buffer
	stderr  *Buffer
	exited  chan struct{}
	waitErr error
	console sync.Mutex
	killed  atomic.Bool
	// crashed: "pid N " of reference tools that died of a signal (ToolAt), whose
	// ibsim slots stay attached: they are not ibkey's leaks.
	crashed sync.Map
}

var labSeq atomic.Uint64

// startTimeout bounds each wait of Start for ibsim (a hang detector: a 2,000-node
// fat tree takes ibsim a few seconds on a loaded machine).
const startTimeout = time.Minute

// Start runs `ibsim -s topologyFile` for the test and stops it in t.Cleanup.
// It skips (or, under CI, fails) the test when the lab is not installed.
func Start(t testing.TB, topologyFile string, opts *Options) *Lab {
	t.Helper()
	Require(t)
	var o Options
	if opts != nil {
		o = *opts
	}
	text, err := os.ReadFile(topologyFile)
	if err != nil {
		t.Fatalf("lab: %v", err)
	}
	topo, err := parseTopology(string(text))
	if err != nil {
		t.Fatalf("lab: topology %s: %v", topologyFile, err)
	}
	ibsim, _ := lookPath("ibsim")
	sock := o.SockName
	if sock == "" {
		sock = fmt.Sprintf("ibkeylab%d-%d", os.Getpid(), labSeq.Add(1))
	}
	l := &Lab{
		SockName: sock,
		Dir:      t.TempDir(),
		Topology: topo,
		t:        t,
		opts:     o,
		stdout:   NewBuffer(),
		stderr:   NewBuffer(),
		exited:   make(chan struct{}),
	}
	abs, err := filepath.Abs(topologyFile)
	if err != nil {
		t.Fatalf("lab: %v", err)
	}
	l.cmd = exec.Command(ibsim, "-s", abs)
	l.cmd.Dir = l.Dir
	l.cmd.Env = l.env("")
	l.cmd.Stdout = l.stdout
	l.cmd.Stderr = l.stderr
	// ibsim reads console commands from stdin and spins at full CPU once it
	// reaches EOF, so the lab keeps the pipe open until ibsim has exited.
	l.stdin, err = l.cmd.StdinPipe()
	if err != nil {
		t.Fatalf("lab: %v", err)
	}
	if err := l.cmd.Start(); err != nil {
		t.Fatalf("lab: start ibsim: %v", err)
	}
	go func() {
		l.waitErr = l.cmd.Wait()
		close(l.exited)
	}()
	t.Cleanup(l.stop)

	if _, err := l.stdout.WaitFor("Network simulator ready", 0, startTimeout, l.exited); err != nil {
		t.Fatalf("lab: ibsim -s %s did not start: %v\nstderr:\n%s", topologyFile, err, tail(l.stderr.String(), 2000))
	}
	// Wait for the first prompt, so Console sees a quiet stream.
	if _, err := l.stdout.WaitFor("sim> ", 0, startTimeout, l.exited); err != nil {
		t.Fatalf("lab: ibsim printed no prompt: %v", err)
	}
	// ibsim prints "ready" and its prompt before it binds its sockets.
	if err := l.waitForSockets(startTimeout); err != nil {
		t.Fatalf("lab: %v", err)
	}
	return l
}

// waitForSockets waits until ibsim has bound its control socket and the last
// of its client slot sockets (it binds ctl, then out0..out9, in that order).
func (l *Lab) waitForSockets(timeout time.Duration) error {
	want := []byte("@" + l.SockName + ":out9@")
	deadline := time.Now().Add(timeout)
	for {
		b, err := os.ReadFile("/proc/net/unix")
		if err != nil {
			return fmt.Errorf("waiting for ibsim's sockets: %w", err)
		}
		if bytes.Contains(b, want) {
			return nil
		}
		if l.Exited() {
			return fmt.Errorf("ibsim exited before binding its sockets; stderr:\n%s", tail(l.stderr.String(), 2000))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("ibsim did not bind socket %q within %v", want, timeout)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// env returns the environment for a process attached to this lab at node
// (empty: ibsim's default node).
func (l *Lab) env(node string) []string {
	var env []string
	for _, kv := range os.Environ() {
		switch strings.SplitN(kv, "=", 2)[0] {
		case "IBSIM_SOCKNAME", "SIM_HOST", "LD_PRELOAD", "IBSIM_SERVER_NAME", "IBSIM_SERVER_PORT":
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "IBSIM_SOCKNAME="+l.SockName)
	if node != "" {
		env = append(env, "SIM_HOST="+node)
	}
	return env
}

// Env returns the environment a process needs to attach to this lab at node
// through libumad2sim.
func (l *Lab) Env(node string) []string {
	return append(l.env(node), "LD_PRELOAD="+preloadLib)
}

// Console sends one ibsim console command, e.g.
// `PerformanceSet "HcaB"[1] PortCounters.PortRcvConstraintErrors=7` or
// `Error "Switch1"[0] 100`, and returns what ibsim printed for it.
func (l *Lab) Console(cmd string) (string, error) {
	if strings.ContainsAny(cmd, "\n\r") {
		return "", fmt.Errorf("lab: console command %q: one line only", cmd)
	}
	if len(cmd) >= 126 {
		return "", fmt.Errorf("lab: console command %q: ibsim reads at most 126 bytes per line", cmd)
	}
	l.console.Lock()
	defer l.console.Unlock()
	select {
	case <-l.exited:
		return "", fmt.Errorf("lab: ibsim has exited (%v)", l.waitErr)
	default:
	}
	mark := l.stdout.Len()
	if _, err := io.WriteString(l.stdin, cmd+"\n"); err != nil {
		return "", fmt.Errorf("lab: console: %w", err)
	}
	// ibsim prints a prompt after each command it has run.
	out, err := l.stdout.WaitFor("sim> ", mark, 10*time.Second, l.exited)
	if err != nil {
		return "", fmt.Errorf("lab: console command %q: %w", cmd, err)
	}
	return strings.TrimSpace(out), nil
}

// MustConsole is Console failing the test on error.
func (l *Lab) MustConsole(cmd string) string {
	l.t.Helper()
	out, err := l.Console(cmd)
	if err != nil {
		l.t.Fatal(err)
	}
	return out
}

var attachedRE = regexp.MustCompile(`(?m)^Client \d+: pid .*$`)

// Attached lists ibsim's attached clients (its Attached console command).
func (l *Lab) Attached() ([]string, error) {
	out, err := l.Console("Attached")
	if err != nil {
		return nil, err
	}
	return attachedRE.FindAllString(out, -1), nil
}

// Kill stops ibsim now (SIGKILL), as a crash would; for tests of what clients
// do when the simulator dies. Cleanup then skips its slot check.
func (l *Lab) Kill() {
	l.killed.Store(true)
	l.cmd.Process.Kill()
	<-l.exited
}

// Signal sends sig to ibsim (e.g. SIGSTOP and SIGCONT, for tests of a stalled
// simulator).
func (l *Lab) Signal(sig os.Signal) error { return l.cmd.Process.Signal(sig) }

// Exited reports whether ibsim is no longer running.
func (l *Lab) Exited() bool {
	select {
	case <-l.exited:
		return true
	default:
		return false
	}
}

func (l *Lab) stop() {
	if !l.Exited() && !l.killed.Load() {
		// Slot hygiene: every client must have disconnected; ibsim has 10
		// slots and never frees a dead client's.
		if clients, err := l.Attached(); err != nil {
			l.t.Errorf("lab: checking ibsim slots: %v", err)
		} else if clients = slices.DeleteFunc(clients, l.crashedTool); len(clients) > 0 {
			l.t.Errorf("lab: ibsim client slots still attached at the end of the test (a client did not disconnect):\n%s", strings.Join(clients, "\n"))
		}
		l.console.Lock()
		io.WriteString(l.stdin, "Quit\n")
		l.console.Unlock()
		select {
		case <-l.exited:
		case <-time.After(3 * time.Second):
			l.cmd.Process.Kill() // exactly the process this lab started
			<-l.exited
		}
	}
	l.stdin.Close()
}

// Stderr returns what ibsim wrote to stderr so far (its warnings).
func (l *Lab) Stderr() string { return l.stderr.String() }

// smNode is where OpenSM attaches: the topology's first CA.
func (l *Lab) smNode() (string, error) {
	for _, n := range l.Topology.Nodes {
		if n.Type == CA {
			return n.Name, nil
		}
	}
	return "", errors.New("lab: topology has no CA for OpenSM")
}

// RunOpenSM runs OpenSM once (-o) on the fabric: it assigns LIDs, brings ports
// to Active and programs P_Key tables from partitionsConf, the text of an
// OpenSM partitions.conf. allowBoth sets allow_both_pkeys (-W), which lets
// a port hold both the full and the limited entry of one partition.
func (l *Lab) RunOpenSM(partitionsConf string, allowBoth bool) error {
	var args []string
	if allowBoth {
		args = append(args, "-W")
	}
	return l.RunOpenSMArgs(partitionsConf, args...)
}

// RunOpenSMArgs is RunOpenSM with more of OpenSM's options (e.g. "-Z", "off" for
// part_enforce off, "-W" for allow_both_pkeys).
func (l *Lab) RunOpenSMArgs(partitionsConf string, extra ...string) error {
	node, err := l.smNode()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := filepath.Join(l.Dir, "opensm")
	cmd, err := opensmCmd(ctx, dir, l.Env(node), partitionsConf, append([]string{"-o", "-e"}, extra...)...)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run()
	logText, _ := os.ReadFile(filepath.Join(dir, "opensm.log"))
	if runErr != nil {
		l.detach(cmd.Process.Pid) // a crashed OpenSM leaves its ibsim slot attached
		return fmt.Errorf("lab: opensm at %s: %v\n%s\nlog:\n%s", node, runErr, tail(out.String(), 2000), tail(string(logText), 4000))
	}
	if !bytes.Contains(logText, []byte("SUBNET UP")) {
		return fmt.Errorf("lab: opensm at %s exited without reaching SUBNET UP\nlog:\n%s", node, tail(string(logText), 4000))
	}
	return nil
}

// detach frees the ibsim slot a process that ended without detaching (a crash) left
// attached (ibsim never frees a dead client's slot; console command X).
func (l *Lab) detach(pid int) {
	clients, _ := l.Attached()
	for _, c := range clients {
		var slot, p int
		if _, err := fmt.Sscanf(c, "Client %d: pid %d", &slot, &p); err == nil && p == pid {
			l.Console(fmt.Sprintf("X %d", slot))
		}
	}
}

// Tool runs an infiniband-diags tool (smpquery, perfquery, ibnetdiscover,
// saquery, ...) attached to this lab at Options.ToolNode and returns its
// stdout. It runs in a scratch directory, where libumad2sim leaves its
// ./sys-PID directories.
func (l *Lab) Tool(name string, args ...string) (string, error) {
	return l.ToolAt(l.opts.ToolNode, name, args...)
}

// ToolAt is Tool attached at node. A query tool (smpquery, perfquery, saquery) whose
// MAD timed out is run again, up to three times in all: on a loaded machine ibsim can
// answer later than the tool's one-second default, and a reference answer that is
// only late is still the reference (the queries are Gets: running one again changes
// nothing). So is one that died of a segmentation fault: saquery under libumad2sim
// did once in CI (PR --slid 3 --dlid 4, an answer of no records, with several labs
// running), and passed 40 runs alone. The last failure is returned as it was.
func (l *Lab) ToolAt(node, name string, args ...string) (string, error) {
	for attempt := 1; ; attempt++ {
		out, err := l.toolAt(node, name, args...)
		if err == nil || attempt == 3 || !retriableTool[name] {
			return out, err
		}
		why := ""
		switch msg := err.Error(); {
		case strings.Contains(msg, "recv failed: Connection timed out"):
			why = "timed out"
		case strings.Contains(msg, "signal: segmentation fault"):
			why = "died of a segmentation fault"
		default:
			return out, err
		}
		l.t.Logf("lab: %s %s %s (attempt %d of 3), running it again", name, strings.Join(args, " "), why, attempt)
	}
}

// retriableTool: the reference tools whose runs are single Get queries.
var retriableTool = map[string]bool{"smpquery": true, "perfquery": true, "saquery": true}

func (l *Lab) toolAt(node, name string, args ...string) (string, error) {
	bin, err := lookPath(name)
	if err != nil {
		return "", fmt.Errorf("lab: %w; install with: %s", err, installHint)
	}
	dir := filepath.Join(l.Dir, "tools")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = l.Env(node)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if ee, ok := errors.AsType[*exec.ExitError](err); ok && ee.ProcessState.ExitCode() == -1 {
			l.crashed.Store(fmt.Sprintf("pid %d ", ee.Pid()), true) // killed by a signal
		}
		return stdout.String(), fmt.Errorf("lab: %s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// crashedTool reports whether an ibsim client line (Attached) is a reference tool's
// that died of a signal, and logs it.
func (l *Lab) crashedTool(client string) bool {
	crashed := false
	l.crashed.Range(func(pid, _ any) bool {
		crashed = strings.Contains(client, pid.(string))
		return !crashed
	})
	if crashed {
		l.t.Logf("lab: ibsim slot of a reference tool that died of a signal, left attached: %s", client)
	}
	return crashed
}

// MustTool is Tool failing the test on error.
func (l *Lab) MustTool(name string, args ...string) string {
	l.t.Helper()
	out, err := l.Tool(name, args...)
	if err != nil {
		l.t.Fatal(err)
	}
	return out
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

// Buffer collects a process's output and lets readers wait for text in it (the lab's
// ibsim console, internal/ptytest's terminal).
type Buffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{} // closed and replaced on every write
}

// NewBuffer returns an empty Buffer.
func NewBuffer() *Buffer { return &Buffer{changed: make(chan struct{})} }

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.buf.Write(p)
	close(b.changed)
	b.changed = make(chan struct{})
	return n, err
}

// Len is how many bytes were written: a mark for WaitFor.
func (b *Buffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Len()
}

// String is everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// WaitFor waits until text appears after offset from and returns what came between
// from and the text. It fails when done is closed first (the writer ended; what it
// wrote just before is still looked at) or the timeout passes (a hang detector).
func (b *Buffer) WaitFor(text string, from int, timeout time.Duration, done <-chan struct{}) (string, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	// find looks for text and, when not there yet, returns the channel closed on the next write.
	find := func() (string, bool, chan struct{}) {
		b.mu.Lock()
		defer b.mu.Unlock()
		if d := b.buf.Bytes(); from <= len(d) {
			if i := bytes.Index(d[from:], []byte(text)); i >= 0 {
				return string(d[from : from+i]), true, nil
			}
		}
		return "", false, b.changed
	}
	for {
		before, ok, changed := find()
		if ok {
			return before, nil
		}
		select {
		case <-changed:
		case <-done:
			if before, ok, _ := find(); ok {
				return before, nil
			}
			return "", fmt.Errorf("the process ended before %q appeared", text)
		case <-deadline.C:
			return "", fmt.Errorf("no %q within %v", text, timeout)
		}
	}
}
