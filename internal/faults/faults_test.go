//go:build linux

package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/lab"
)

var rounds = flag.Int("rounds", 6, "rounds per command class (`make faults` passes 200)")

// hangLimit is how long a process may take after its last fault before the suite calls
// it hung. It is not a speed assertion: correct ibkey ends within a second or two of a
// signal or of its MAD deadlines; the limit only has to be far above that on a loaded
// 2-core machine.
const hangLimit = 30 * time.Second

var bin string // the ibkey binary under test, built once in TestMain

func TestMain(m *testing.M) {
	flag.Parse()
	if os.Getenv("IBKEY_FAULTS") == "" {
		// Minutes of simulator runs: `make faults` (and CI through it) runs the suite,
		// not every `go test ./...`.
		fmt.Println("faults: skipped; run `make faults` (or IBKEY_FAULTS=1 go test ./internal/faults)")
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "ibkey-faults")
	if err != nil {
		fmt.Fprintln(os.Stderr, "faults:", err)
		os.Exit(1)
	}
	// The binary `make build` ships.
	bin = filepath.Join(dir, "ibkey")
	build := exec.Command("go", "build", "-trimpath", "-o", bin, "github.com/ibkey/ibkey/cmd/ibkey")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "faults: go build: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// capBuffer keeps the first 1 MiB written to it: a runaway process must not take the
// suite's memory with it.
type capBuffer struct {
	mu    sync.Mutex
	b     bytes.Buffer
	total int
}

func (c *capBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total += len(p)
	if room := 1<<20 - c.b.Len(); room > 0 {
		c.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (c *capBuffer) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.b.String()
}

// proc is one ibkey process the suite started.
type proc struct {
	args     []string
	cmd      *exec.Cmd
	stdout   capBuffer
	stderr   capBuffer
	start    time.Time
	done     chan struct{}
	err      error
	signaled []string
}

// result is how a process ended.
type result struct {
	args       []string
	code       int    // exit code; -1 when a signal killed it
	killedBy   string // the signal that killed it (its default action: no cleanup ran)
	hung       bool
	took       time.Duration
	stdout     string
	stderr     string
	stderrSize int
}

// start runs ibkey with args. memLimit caps its address space (4 GiB) so that a read
// of /dev/zero by unfixed code ends with an error instead of taking the machine.
func start(t *testing.T, memLimit bool, args ...string) *proc {
	t.Helper()
	p := &proc{args: args, done: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "NO_COLOR=1", "TERM=dumb", "LANG=C.UTF-8"}
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %v: %v", args, err)
	}
	if memLimit {
		lim := unix.Rlimit{Cur: 4 << 30, Max: 4 << 30}
		_ = unix.Prlimit(p.cmd.Process.Pid, unix.RLIMIT_AS, &lim, nil)
	}
	p.start = time.Now()
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	return p
}

func (p *proc) signal(sig syscall.Signal) {
	select {
	case <-p.done:
	default:
		p.signaled = append(p.signaled, unix.SignalName(sig))
		_ = p.cmd.Process.Signal(sig) // exactly the process this suite started
	}
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// wait waits up to limit; a process still running then is killed (its process group,
// which only it is in) and reported as hung.
func (p *proc) wait(limit time.Duration) result {
	r := result{args: p.args}
	select {
	case <-p.done:
	case <-time.After(limit):
		r.hung = true
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
	r.took = time.Since(p.start)
	r.stdout, r.stderr, r.stderrSize = p.stdout.String(), p.stderr.String(), p.stderr.total
	r.code = p.cmd.ProcessState.ExitCode()
	if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		r.killedBy = unix.SignalName(ws.Signal())
	}
	return r
}

// run starts ibkey and waits for it.
func run(t *testing.T, memLimit bool, args ...string) result {
	t.Helper()
	return start(t, memLimit, args...).wait(hangLimit)
}

// crashed says whether stderr shows a Go crash: a panic, a fatal runtime error or the
// goroutine dump of an unhandled SIGQUIT.
//
// A SIGQUIT that lands while the process is still starting (the dynamic loader, the Go
// runtime, package initialisation: before main.main, hence before any handler of
// ibkey's could exist) gets the runtime's default action, a goroutine dump; ibkey has
// acquired nothing by then, so nothing can leak. That is startedQuit, counted
// separately, not a crash.
func crashed(stderr string) string {
	if startedQuit(stderr) {
		return ""
	}
	for _, s := range []string{"panic: ", "fatal error: ", "goroutine 1 [", "SIGQUIT: quit"} {
		if strings.Contains(stderr, s) {
			return s
		}
	}
	return ""
}

// startedQuit: the dump of a SIGQUIT that arrived before ibkey's handler was installed:
// before main.main ran (no frame of main.main in it), or while main.main was
// installing it, its first statement (cmd/ibkey/main.go: main.main's frame at a line
// from `func main() {` to the cmdutil.SignalContext call, or inside that call).
// Nothing of ibkey's is acquired before that either (make faults: 1 in about 600
// rounds).
func startedQuit(stderr string) bool {
	if !strings.Contains(stderr, "SIGQUIT: quit") {
		return false
	}
	_, g1, ok := strings.Cut(stderr, "\ngoroutine 1 ")
	if !strings.Contains(g1, "main.main") {
		return !strings.Contains(stderr, "main.main")
	}
	g1, _, _ = strings.Cut(g1, "\n\ngoroutine ")
	if strings.Contains(g1, "cmdutil.SignalContext(") || strings.Contains(g1, "os/signal.") {
		return true
	}
	m := regexp.MustCompile(`main\.main\(\)\n\t\S*cmd/ibkey/main\.go:(\d+)`).FindStringSubmatch(g1)
	if !ok || m == nil {
		return false
	}
	line, _ := strconv.Atoi(m[1])
	first, install := mainInstallLines()
	return line >= first && line <= install
}

// mainInstallLines are the lines of cmd/ibkey/main.go from `func main() {` to the
// cmdutil.SignalContext call that installs the signal handler (0, 0 if not found).
var mainInstallLines = sync.OnceValues(func() (first, install int) {
	src, err := os.ReadFile(filepath.Join("..", "..", "cmd", "ibkey", "main.go"))
	if err != nil {
		return 0, 0
	}
	for i, l := range strings.Split(string(src), "\n") {
		switch {
		case strings.HasPrefix(l, "func main() {"):
			first = i + 1
		case first > 0 && strings.Contains(l, "cmdutil.SignalContext("):
			return first, i + 1
		}
	}
	return 0, 0
})

// unsafeText reports the first thing in s a terminal would act on: ESC, another C0
// control (newline and tab aside), DEL, a C1 control, a bidi override or isolate, or
// bytes that are not UTF-8.
func unsafeText(s string) string {
	if !utf8.ValidString(s) {
		return "invalid UTF-8"
	}
	for _, r := range s {
		switch {
		case r == '\n' || r == '\t':
		case r < 0x20 || r == 0x7f:
			return fmt.Sprintf("control %U", r)
		case r >= 0x80 && r <= 0x9f:
			return fmt.Sprintf("C1 control %U", r)
		case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
			return fmt.Sprintf("bidi control %U", r)
		}
	}
	return ""
}

// tally counts outcomes per command class and prints them at the end of a test.
type tally struct {
	mu     sync.Mutex
	counts map[string]int
}

func (c *tally) add(class, outcome string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts == nil {
		c.counts = map[string]int{}
	}
	c.counts[class+": "+outcome]++
}

func (c *tally) log(t *testing.T, title string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	keys := make([]string, 0, len(c.counts))
	for k := range c.counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%d rounds per class):\n", title, *rounds)
	for _, k := range keys {
		fmt.Fprintf(&b, "  %6d  %s\n", c.counts[k], k)
	}
	t.Log(b.String())
}

func outcome(r result) string {
	switch {
	case r.hung:
		return "HUNG (killed after " + hangLimit.String() + ")"
	case crashed(r.stderr) != "":
		return "CRASHED (" + strings.TrimSpace(crashed(r.stderr)) + ")"
	case startedQuit(r.stderr):
		return "SIGQUIT before main (runtime default: goroutine dump; nothing acquired yet)"
	case r.killedBy != "":
		return "killed by " + r.killedBy + " (its default action: no cleanup)"
	}
	return fmt.Sprintf("exit %d", r.code)
}

// madFlags: short MAD deadlines, so a stalled simulator shows within seconds.
func madFlags(l *lab.Lab) []string {
	return []string{"--ibsim=" + l.SockName, "--mad-timeout", "200ms", "--mad-retries", "1"}
}

// commandClass is one kind of fabric command the suite disturbs.
type commandClass struct {
	name string
	args func(l *lab.Lab) []string
	// loops: runs until a signal (a watch without --once).
	loops bool
}

var classes = []commandClass{
	{name: "fabric discover", args: func(l *lab.Lab) []string {
		return append([]string{"fabric", "discover", "-o", "json", "--timeout", "20s"}, madFlags(l)...)
	}},
	{name: "pkeys --lid", args: func(l *lab.Lab) []string {
		return append([]string{"pkeys", "--lid", "2", "-o", "plain"}, madFlags(l)...)
	}},
	{name: "watch counters --lid --once", args: func(l *lab.Lab) []string {
		return append([]string{"watch", "counters", "--lid", "1-4", "--once", "-o", "plain"}, madFlags(l)...)
	}},
	{name: "watch counters --lid (loop)", loops: true, args: func(l *lab.Lab) []string {
		return append([]string{"watch", "counters", "--lid", "1-4", "--interval", "100ms", "-o", "plain"}, madFlags(l)...)
	}},
}

// fatTree writes a fabric big enough that a sweep is still running when a fault hits.
func fatTree(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "fattree.net")
	if err := os.WriteFile(p, []byte(lab.FatTree(16, 8, 20)), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// startLab starts ibsim on topo (and OpenSM once, for LIDs).
func startLab(t *testing.T, topo string, opts *lab.Options) *lab.Lab {
	t.Helper()
	l := lab.Start(t, topo, opts)
	if err := l.RunOpenSM("Default=0x7fff : ALL=full;\n", false); err != nil {
		t.Fatal(err)
	}
	return l
}

// checkSlots fails the test when ibsim still lists clients after the rounds (a leaked
// slot: ibsim has 10 and never reclaims one), and checks that a new client connects.
func checkSlots(t *testing.T, l *lab.Lab, class string) {
	t.Helper()
	var clients []string
	for range 150 {
		var err error
		if clients, err = l.Attached(); err != nil {
			t.Errorf("%s: ibsim does not answer after the rounds: %v\n%s", class, err, l.Stderr())
			return
		}
		if len(clients) == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(clients) > 0 {
		t.Errorf("%s: %d ibsim client slots leaked after the rounds:\n%s", class, len(clients), strings.Join(clients, "\n"))
		// Let the lab's own cleanup pass: free them through ibsim's console is not
		// possible, so stop ibsim hard (its slot check is skipped after Kill).
		l.Kill()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tr, err := mad.DialIbsim(ctx, mad.IbsimOptions{SockName: l.SockName})
	if err != nil {
		t.Errorf("%s: a new client cannot connect after the rounds: %v", class, err)
		return
	}
	if err := tr.Close(); err != nil {
		t.Errorf("%s: closing the new client: %v", class, err)
	}
}

// calibrate runs the command once undisturbed and returns how long it takes (a loop:
// one second), so that faults land at random moments while it runs, not after.
func calibrate(t *testing.T, cl commandClass, l *lab.Lab) time.Duration {
	t.Helper()
	if cl.loops {
		return time.Second
	}
	r := run(t, false, cl.args(l)...)
	if r.code != 0 {
		t.Fatalf("%v undisturbed: %s\n%s", r.args, outcome(r), head(r.stderr, 600))
	}
	return max(r.took, 20*time.Millisecond)
}

// at picks a moment in [0, d).
func at(rng *rand.Rand, d time.Duration) time.Duration { return time.Duration(rng.Int64N(int64(d))) }

// newRand is seeded from the clock; the seed is logged so a failing run can be read back.
func newRand(t *testing.T) *rand.Rand {
	seed := uint64(time.Now().UnixNano())
	t.Logf("random seed %d", seed)
	return rand.New(rand.NewPCG(seed, 13))
}

// leaked waits up to 2 s for ibsim to list no client (a DISCONNECT may still be in
// its queue) and returns the clients still attached.
func leaked(t *testing.T, l *lab.Lab) []string {
	t.Helper()
	var clients []string
	for range 100 {
		var err error
		if clients, err = l.Attached(); err != nil {
			return []string{"ibsim does not answer: " + err.Error()}
		}
		if len(clients) == 0 {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return clients
}

// failures reports each kind of failure once per command class, with its count and
// its first example, instead of once per round.
type failures struct {
	first map[string]string
	n     map[string]int
	order []string
}

func (f *failures) add(kind, example string) {
	if f.first == nil {
		f.first, f.n = map[string]string{}, map[string]int{}
	}
	if _, ok := f.first[kind]; !ok {
		f.first[kind] = example
		f.order = append(f.order, kind)
	}
	f.n[kind]++
}

func (f *failures) report(t *testing.T, rounds int) {
	t.Helper()
	for _, k := range f.order {
		t.Errorf("%s: %d of %d rounds; first:\n%s", k, f.n[k], rounds, f.first[k])
	}
}

var signals = []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// TestFaultsSignals sends INT, TERM, HUP or QUIT at a random moment of each fabric
// command: every process must end within the hang limit, without a crash or goroutine
// dump, and no client slot may be left held.
func TestFaultsSignals(t *testing.T) {
	topo := fatTree(t)
	var c tally
	defer c.log(t, "signals")
	rng := newRand(t)
	for _, cl := range classes {
		t.Run(cl.name, func(t *testing.T) {
			l := startLab(t, topo, nil)
			d := calibrate(t, cl, l)
			var fails failures
			for range *rounds {
				sig := signals[rng.IntN(len(signals))]
				delay := at(rng, d)
				p := start(t, false, cl.args(l)...)
				time.Sleep(delay)
				before := p.exited()
				p.signal(sig)
				r := p.wait(hangLimit)
				what := outcome(r)
				if before {
					what = "finished before the signal: " + what
				} else {
					what = unix.SignalName(sig) + ": " + what
				}
				c.add(cl.name, what)
				if r.hung {
					fails.add("hung after "+unix.SignalName(sig), fmt.Sprintf("%v", r.args))
				}
				if s := crashed(r.stderr); s != "" {
					fails.add("crashed after "+unix.SignalName(sig), fmt.Sprintf("%v: %s", r.args, head(r.stderr, 600)))
				}
				if cs := leaked(t, l); len(cs) > 0 {
					// ibsim never frees a slot; start a fresh one so the next
					// rounds are not refused for want of slots.
					c.add(cl.name, "LEAKED an ibsim slot after "+what)
					fails.add("leaked an ibsim client slot after "+unix.SignalName(sig), strings.Join(cs, "\n"))
					l.Kill()
					l = startLab(t, topo, nil)
				}
			}
			fails.report(t, *rounds)
			checkSlots(t, l, cl.name)
		})
	}
}

// TestFaultsStalledSimulator stops ibsim (SIGSTOP) at a random moment of each
// command. A one-shot command must end by itself (MAD deadlines, --timeout); any
// command must end after a signal. After SIGCONT ibsim must still run (an abandoned
// CONNECT used to make it exit: mad.DialIbsim pins its socket now), hold no slot of
// ours, and take a new client. One slot is allowed and counted apart: that of a
// CONNECT sent just before the stop, which ibkey gave up on and named on stderr
// (ibsim has no way to withdraw a queued CONNECT; see abandonedSlots).
func TestFaultsStalledSimulator(t *testing.T) {
	topo := fatTree(t)
	var c tally
	defer c.log(t, "stalled simulator")
	rng := newRand(t)
	n := max(2, *rounds/10)
	for _, cl := range classes {
		t.Run(cl.name, func(t *testing.T) {
			l := startLab(t, topo, nil)
			d := calibrate(t, cl, l)
			var fails failures
			for i := range n {
				p := start(t, false, cl.args(l)...)
				time.Sleep(at(rng, d))
				before := p.exited()
				if err := l.Signal(syscall.SIGSTOP); err != nil {
					t.Fatal(err)
				}
				bySignal := cl.loops || i%2 == 1
				var sig syscall.Signal
				if bySignal {
					time.Sleep(500 * time.Millisecond)
					sig = signals[rng.IntN(len(signals))]
					p.signal(sig)
				}
				r := p.wait(hangLimit)
				if err := l.Signal(syscall.SIGCONT); err != nil {
					t.Fatal(err)
				}
				what := "ended by itself: " + outcome(r)
				if bySignal {
					what = unix.SignalName(sig) + " while stalled: " + outcome(r)
				}
				if before {
					what = "finished before the stop: " + outcome(r)
				}
				c.add(cl.name, what)
				if r.hung {
					fails.add("hung with ibsim stopped", fmt.Sprintf("%v (signals sent: %v)", r.args, p.signaled))
				}
				if s := crashed(r.stderr); s != "" {
					fails.add("crashed with ibsim stopped", fmt.Sprintf("%v: %s", r.args, head(r.stderr, 600)))
				}
				if !before && !bySignal && !r.hung && r.code == 0 && cl.name == "fabric discover" {
					// A sweep cut short by a stalled simulator is partial: it must not
					// exit 0 unless it had finished before the stop.
					if nodes, ok := sweptNodes(r.stdout); ok && nodes < len(l.Topology.Nodes) {
						fails.add("a partial sweep exited 0", fmt.Sprintf("%v: %d of %d nodes", r.args, nodes, len(l.Topology.Nodes)))
					}
				}
				time.Sleep(200 * time.Millisecond)
				if l.Exited() {
					// The end of ibsim's log: its start is the topology parser's warnings.
					log := l.Stderr()
					if len(log) > 2000 {
						log = log[len(log)-2000:]
					}
					c.add(cl.name, "IBSIM EXITED after SIGCONT, after "+what)
					fails.add("ibsim exited after SIGCONT (an abandoned request?)", log)
					l.Kill()
					l = startLab(t, topo, nil)
					continue
				}
				cs := leaked(t, l)
				if slots := abandonedSlots(r.stderr, cs); slots != nil {
					// Known ibsim limitation, counted and cleared, not a failure: ibkey
					// gave up on a CONNECT it had sent to the stopped ibsim (there is no
					// way to withdraw one) and said so, naming its client id. ibsim
					// attached that client when it resumed (ibsim/ibsim.c
					// sim_ctl_new_client) and keeps the slot until its console frees it.
					c.add(cl.name, "known ibsim limitation: a CONNECT ibkey gave up on (and named) holds a slot, freed on the console; after "+what)
					for _, slot := range slots {
						l.MustConsole(fmt.Sprintf("X %d", slot))
					}
					cs = leaked(t, l)
				}
				if len(cs) > 0 {
					c.add(cl.name, "LEAKED an ibsim slot after "+what)
					fails.add("leaked an ibsim client slot", strings.Join(cs, "\n"))
					l.Kill()
					l = startLab(t, topo, nil)
				}
			}
			fails.report(t, n)
			checkSlots(t, l, cl.name)
		})
	}
}

// abandonedRE: how ibkey names the client id of a CONNECT it gave up on (mad.DialIbsim).
var abandonedRE = regexp.MustCompile(`will attach client pid (\d+) to a slot no one frees`)

// clientRE: a line of ibsim's Attached console command.
var clientRE = regexp.MustCompile(`^Client (\d+): pid (\d+) `)

// abandonedSlots returns the slots of the attached clients (ibsim's Attached lines)
// when every one of them is a client ibkey's stderr named as a CONNECT it gave up on;
// nil otherwise (a real leak).
func abandonedSlots(stderr string, clients []string) []int {
	named := map[string]bool{}
	for _, m := range abandonedRE.FindAllStringSubmatch(stderr, -1) {
		named[m[1]] = true
	}
	var slots []int
	for _, cl := range clients {
		m := clientRE.FindStringSubmatch(cl)
		if m == nil || !named[m[2]] {
			return nil
		}
		slot, _ := strconv.Atoi(m[1])
		slots = append(slots, slot)
	}
	return slots
}

// sweptNodes counts the nodes of a `fabric discover -o json` document.
func sweptNodes(out string) (int, bool) {
	var doc struct {
		Nodes []json.RawMessage `json:"nodes"`
	}
	if json.Unmarshal([]byte(out), &doc) != nil {
		return 0, false
	}
	return len(doc.Nodes), true
}

// TestFaultsKilledSimulator kills ibsim at a random moment of each one-shot command and
// starts a new one under the same socket name at once. The command must end; if it
// exits 0 its answer must be whole (a partial sweep is not success). Afterwards the
// command works against the new simulator.
func TestFaultsKilledSimulator(t *testing.T) {
	topo := fatTree(t)
	var c tally
	defer c.log(t, "killed and restarted simulator")
	rng := newRand(t)
	n := max(2, *rounds/10)
	for _, cl := range classes {
		if cl.loops {
			continue
		}
		t.Run(cl.name, func(t *testing.T) {
			sock := fmt.Sprintf("ibkeyfaults%d-%d", os.Getpid(), rng.IntN(1<<20))
			var d time.Duration
			for range n {
				l := startLab(t, topo, &lab.Options{SockName: sock})
				if d == 0 {
					d = calibrate(t, cl, l)
				}
				p := start(t, false, cl.args(l)...)
				time.Sleep(at(rng, d))
				before := p.exited()
				l.Kill()
				// The new simulator comes up at once; OpenSM (LIDs) only for the
				// classes that address by LID: a sweep goes by directed route, and
				// OpenSM would contend with the sweep still running.
				l2 := lab.Start(t, topo, &lab.Options{SockName: sock})
				r := p.wait(hangLimit)
				what := outcome(r)
				if before {
					what = "finished before the kill: " + what
				} else {
					what = "ibsim killed and restarted: " + what
				}
				c.add(cl.name, what)
				if r.hung {
					t.Errorf("%v: still running %v after ibsim was killed", r.args, hangLimit)
				}
				if s := crashed(r.stderr); s != "" {
					t.Errorf("%v: crashed (%q):\n%s", r.args, s, head(r.stderr, 600))
				}
				if !before && r.code == 0 && cl.name == "fabric discover" {
					if nodes, ok := sweptNodes(r.stdout); ok && nodes < len(l.Topology.Nodes) {
						t.Errorf("%v: exit 0 with %d of %d nodes after ibsim was killed", r.args, nodes, len(l.Topology.Nodes))
					}
				}
				// The restarted simulator answers a fresh run (LIDs first, for the
				// classes that address by LID).
				if cl.name != "fabric discover" {
					if err := l2.RunOpenSM("Default=0x7fff : ALL=full;\n", false); err != nil {
						t.Errorf("OpenSM on the restarted ibsim (after %v ended with %s): %v", r.args, outcome(r), err)
						l2.Kill()
						continue
					}
				}
				if r2 := run(t, false, cl.args(l2)...); r2.code != 0 {
					t.Errorf("%v against the restarted ibsim: %s\n%s", r2.args, outcome(r2), head(r2.stderr, 600))
				}
				checkSlots(t, l2, cl.name)
				l2.Kill() // the next round starts its own under the same name
			}
		})
	}
}

func head(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// TestStartedQuit: a SIGQUIT dump counts as one before ibkey's handler when it has no
// main.main, or main.main is still installing the handler; not when main.main is past
// it (then the handler should have caught it: a crash).
func TestStartedQuit(t *testing.T) {
	first, install := mainInstallLines()
	if first == 0 || install < first {
		t.Fatalf("cmd/ibkey/main.go: func main at %d, cmdutil.SignalContext at %d", first, install)
	}
	dump := func(frames string) string {
		return "SIGQUIT: quit\nPC=0x4 m=0 sigcode=0\n\ngoroutine 1 gp=0xc000002380 m=0 mp=0x1 [running]:\n" + frames + "\n\ngoroutine 2 [force gc (idle)]:\nruntime.gopark(...)\n"
	}
	at := func(line int) string {
		return fmt.Sprintf("main.main()\n\tgithub.com/ibkey/ibkey/cmd/ibkey/main.go:%d +0x25", line)
	}
	for _, tc := range []struct {
		stderr string
		want   bool
	}{
		{dump("runtime.doInit1(...)\n\truntime/proc.go:7350 +0x3a"), true},
		{dump(at(first)), true},
		{dump(at(install)), true},
		{dump("os/signal.Notify(...)\n\tos/signal/signal.go:150\n" + at(install)), true},
		{dump(at(install + 1)), false},
		{dump("github.com/spf13/cobra.(*Command).Execute(...)\n" + at(install+8)), false},
		{"exit status 1", false},
	} {
		if got := startedQuit(tc.stderr); got != tc.want {
			t.Errorf("startedQuit = %v, want %v:\n%s", got, tc.want, tc.stderr)
		}
	}
}
