package watch

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/jsonschematest"
	"github.com/ibkey/ibkey/internal/fakesysfs"
)

const mlx5 = "../../../../testdata/sysfs/mlx5"

// root is `ibkey` with watch only.
var root = cmdtest.WithCommands(NewCmdWatch)

// runIbkey runs one command line in-process.
func runIbkey(t *testing.T, args ...string) cmdtest.Result {
	t.Helper()
	return cmdtest.Run(t, root, false, nil, args...)
}

// watchTree writes a small host the test rewrites while a watch runs.
func watchTree(t *testing.T) string {
	t.Helper()
	port := func(n int) fakesysfs.Port {
		return fakesysfs.Port{Num: n, State: "4: ACTIVE", PhysState: "5: LinkUp", LinkLayer: "InfiniBand",
			PKeys: fakesysfs.Table(8, "0xffff", "0x8001", "0x0002"), Counters: fakesysfs.IBCounters(nil)}
	}
	dir := t.TempDir()
	err := fakesysfs.Write(dir, fakesysfs.Host{Devices: []fakesysfs.Device{
		{Name: "mlx5_0", PCI: "0000:03:00.0", NodeType: "1: CA", NodeDesc: "test HCA", Ports: []fakesysfs.Port{port(1), port(2)}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// rewrite replaces the file at p atomically (a new file renamed over it), as a sysfs
// attribute changes: a poll between a remove and a write would read no file, which
// ibkey rightly reports as an unreadable entry.
func rewrite(t *testing.T, p, value string) {
	t.Helper()
	tmp := p + ".new"
	if err := os.WriteFile(tmp, []byte(value+"\n"), 0o444); err != nil {
		t.Error(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		t.Error(err)
	}
}

// runStreaming runs a command in-process and hands its stdout lines (and stderr) to
// the test as they come.
func runStreaming(t *testing.T, args ...string) (stdout <-chan string, stderr *bufio.Reader, code <-chan int) {
	t.Helper()
	return cmdtest.Start(t, root, args...)
}

func next(t *testing.T, lines <-chan string) string {
	t.Helper()
	return cmdtest.Next(t, lines)
}

// sampleJSON is one line of `watch counters -o json`.
type sampleJSON = cmdtest.CountersSample

// TestWatchCountersJSON: --count 3 --interval 100ms -o json while the test raises a
// counter after the first sample.
func TestWatchCountersJSON(t *testing.T) {
	dir := watchTree(t)
	lines, stderr, code := runStreaming(t, "--sysfs", dir, "watch", "counters", "--count", "3", "--interval", "100ms", "-o", "json")
	go func() { _, _ = io.Copy(io.Discard, stderr) }()
	var samples []sampleJSON
	for i := range 3 {
		l := next(t, lines)
		var s sampleJSON
		if err := json.Unmarshal([]byte(l), &s); err != nil {
			t.Fatalf("line %d is not one JSON object: %v\n%s", i, err, l)
		}
		samples = append(samples, s)
		if i == 0 {
			rewrite(t, filepath.Join(dir, "class/infiniband/mlx5_0/ports/1/counters/port_rcv_constraint_errors"), "5")
		}
	}
	if c := <-code; c != 4 { // P_Key/Q_Key violations not read (no fabric access)
		t.Fatalf("exit %d", c)
	}
	if _, ok := <-lines; ok {
		t.Error("more than 3 samples")
	}
	first := samples[0].Ports[0].Counters["port_rcv_constraint_errors"]
	if samples[0].Interval != nil || first.Delta != nil || first.Value == nil || *first.Value != 0 || first.Source != "sysfs" {
		t.Errorf("first sample: %+v", samples[0])
	}
	var total uint64
	for _, s := range samples[1:] {
		// The interval is the time measured between two samples: a sample delayed on
		// a loaded machine makes the next one come early (the ticker keeps its
		// schedule), so only > 0 is certain.
		if len(s.Ports) != 2 || s.Interval == nil || *s.Interval <= 0 {
			t.Fatalf("sample: %+v", s)
		}
		c := s.Ports[0].Counters["port_rcv_constraint_errors"]
		if c.Delta == nil || c.Rate == nil {
			t.Fatalf("no delta: %+v", c)
		}
		total += *c.Delta
		if q := s.Ports[1].Counters["port_rcv_constraint_errors"]; *q.Delta != 0 {
			t.Errorf("quiet port moved: %+v", q)
		}
	}
	if total != 5 {
		t.Errorf("deltas add up to %d, want 5", total)
	}
	pk := samples[2].Ports[0].Counters["pkey_violations"]
	if pk.Value != nil || pk.Source != "smp portinfo" || !strings.Contains(pk.Unavailable, "needs fabric access") {
		t.Errorf("P_Key violations must be n/a with the reason, never 0: %+v", pk)
	}
}

func TestWatchCountersPlain(t *testing.T) {
	dir := watchTree(t)
	r := runIbkey(t, "--sysfs", dir, "watch", "counters", "mlx5_0/2", "--once")
	want := regexp.MustCompile(`^\S+ mlx5_0/2 ACTIVE port_rcv_constraint_errors=0 port_xmit_constraint_errors=0 pkey_violations=n/a\(needs_fabric_access\) qkey_violations=n/a\(needs_fabric_access\)\n$`)
	if r.Code != 4 || !want.MatchString(r.Stdout) {
		t.Errorf("--once: exit %d\n%s", r.Code, r.Stdout)
	}
	if !strings.Contains(r.Stderr, "note: pkey_violations: n/a: needs fabric access") {
		t.Errorf("stderr: %s", r.Stderr)
	}
	r = runIbkey(t, "--sysfs", dir, "watch", "counters", "--all-counters", "--count", "2", "--interval", "10ms")
	if n := strings.Count(r.Stdout, "\n"); r.Code != 4 || n != 4 || !strings.Contains(r.Stdout, "symbol_error=0(+0,") {
		t.Errorf("--count 2 over 2 ports: %d lines, exit %d\n%s", n, r.Code, r.Stdout)
	}
	// The demo's RoCE port (mlx5_core): mlx5 counts no P_Key violations there, and its
	// Q_Key violations only verbs read, on the host itself: not read (exit 4).
	r = runIbkey(t, "--demo", "watch", "counters", "--once", "mlx5_2")
	if r.Code != 4 || !strings.Contains(r.Stdout, "mlx5_2/1 ACTIVE") || !strings.Contains(r.Stderr, "demo host") ||
		!strings.Contains(r.Stdout, "pkey_violations=n/a(mlx5_does_not_count_P_Key_violations_on_RoCE:_ibv_query_port_reports_0)") ||
		!strings.Contains(r.Stderr, "warning: qkey_violations not read on 1 port") {
		t.Errorf("demo: %+v", r)
	}
	// Over the demo fabric (issue 25 item 10): mlx5_0/1 at LID 3, its PMA counters
	// the host's own (internal/demo's table starts port_rcv_constraint_errors at 12).
	r = runIbkey(t, "--demo", "watch", "counters", "--lid", "3", "--once")
	if r.Code != 0 || !strings.Contains(r.Stdout, "demo-node HCA-1/1 ACTIVE port_rcv_constraint_errors=12") || !strings.Contains(r.Stderr, "the demo fabric") {
		t.Errorf("demo fabric: %+v", r)
	}
	// A LID that does not answer is not read (query.PartialError): named on stderr
	// as pkeys --lid names it, the others watched, exit 4 (was 3).
	r = runIbkey(t, "--demo", "watch", "counters", "--lid", "3,99", "--once")
	// The line names the LID once (What names it; the error says the rest).
	_, line, _ := strings.Cut(r.Stderr, "warning: not read: ")
	line, _, _ = strings.Cut(line, "\n")
	if r.Code != 4 || !strings.Contains(r.Stdout, "demo-node HCA-1/1 ACTIVE") || !strings.HasPrefix(line, "lid 99: no answer via ") || strings.Count(line, "99") != 1 {
		t.Errorf("demo fabric, lid 99 silent: %+v", r)
	}
}

func TestWatchErrors(t *testing.T) {
	cmdtest.Errors(t, root, []cmdtest.ErrorCase{
		{Args: []string{"--sysfs", mlx5, "watch", "counters", "--interval", "1ms"}, Code: 2, Stderr: "invalid --interval 1ms"},
		{Args: []string{"--sysfs", mlx5, "watch", "counters", "--count", "-1"}, Code: 2, Stderr: "invalid --count -1"},
		{Args: []string{"--sysfs", mlx5, "watch", "counters", "--once", "--count", "3"}, Code: 2, Stderr: "--once takes one sample"},
		{Args: []string{"--sysfs", mlx5, "watch", "counters", "mlx5_0/x"}, Code: 2, Stderr: `invalid port "x"`},
		{Args: []string{"--sysfs", mlx5, "watch", "counters", "mlx5_9", "--once"}, Code: 3, Stderr: "no device or IPoIB interface mlx5_9 (devices: irdma0, mlx5_0, mlx5_1, mlx5_2; IPoIB interfaces: ib0, ib0.8001, ib0.8002, ib0.8004, ib1)"},
		{Args: []string{"--sysfs", mlx5, "watch", "pkeys", "ib0/1", "--count", "1"}, Code: 2, Stderr: "ib0 is an IPoIB interface, which runs on one port: give it without /PORT"},
		{Args: []string{"--sysfs", mlx5, "watch", "pkeys", "mlx5_0/3"}, Code: 3, Stderr: "no port 3 on mlx5_0 (ports: 1)"},
		{Args: []string{"--sysfs", mlx5, "watch", "pkeys", "irdma0"}, Code: 3, Stderr: "no port with a P_Key table"},
		{Args: []string{"--sysfs", "/nonexistent", "watch", "counters"}, Code: 3, Stderr: "no RDMA devices"},
		{Args: []string{"--sysfs", mlx5, "watch", "counters", "--port", "1"}, Code: 2, Stderr: "--port needs --lid or --dr"},
		{Args: []string{"--sysfs", mlx5, "watch", "counters", "--lid", "0"}, Code: 2, Stderr: `invalid --lid "0"`},
		{Args: []string{"--sysfs", mlx5, "watch", "counters", "--lid", "3", "mlx5_0"}, Code: 2, Stderr: "not both"},
		// (--demo --lid reads the demo fabric now: below, and cmd/ibkey's
		// TestDemoCoversEveryCommand.)
		{Args: []string{"--demo", "watch", "counters", "--lid", "3", "--once", "--sim-node", "x"}, Code: 2, Stderr: "--sim-node chooses where to attach to the simulator: it needs --ibsim"},
		// A mistyped subcommand is named with the closest one, also when the flags
		// of the subcommand meant follow it.
		{Args: []string{"--demo", "watch", "counter"}, Code: 2, Stderr: `ibkey: unknown command "counter" for "ibkey watch"; did you mean "counters"? (commands: counters, pkeys)`},
		{Args: []string{"--demo", "watch", "counter", "--once", "mlx5_0"}, Code: 2, Stderr: `unknown command "counter" for "ibkey watch"; did you mean "counters"?`},
		{Args: []string{"--demo", "watch", "pkye", "--interval", "2"}, Code: 2, Stderr: `unknown command "pkye" for "ibkey watch"; did you mean "pkeys"?`},
		{Args: []string{"--demo", "watch", "nothing"}, Code: 2, Stderr: `ibkey: unknown command "nothing" for "ibkey watch" (commands: counters, pkeys)`},
		// DEV PORT, as ibkey pkeys takes it: the port is named as DEV/PORT, not "no device 1".
		{Args: []string{"--demo", "watch", "counters", "mlx5_0", "1", "--once"}, Code: 2, Stderr: `ibkey: "1" after mlx5_0 is not a device: give a port as DEV/PORT (mlx5_0/1); every argument here is DEV or DEV/PORT`},
		{Args: []string{"--demo", "watch", "pkeys", "mlx5_1", "2", "--count", "1"}, Code: 2, Stderr: `give a port as DEV/PORT (mlx5_1/2)`},
	})
	// A bare `ibkey watch` is a usage mistake, as a bare `ibkey decode` is: one line
	// that lists the subcommands, exit 2 (issue 28: it exited 0).
	r := runIbkey(t, "--demo", "watch")
	if r.Code != 2 || r.Stdout != "" || r.Stderr != "ibkey: watch needs a subcommand (commands: counters, pkeys; see 'ibkey watch --help')\n" {
		t.Errorf("ibkey watch: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	// A port without counters/ (iWARP in the fixture) is n/a with the reason.
	r = runIbkey(t, "--sysfs", mlx5, "watch", "counters", "irdma0/1", "--once")
	if r.Code != 0 || !strings.Contains(r.Stdout, "port_rcv_constraint_errors=n/a(no_PMA_counters)") {
		t.Errorf("no counters/: %+v", r)
	}
}

// TestWatchPKeys polls a table while the test changes it: one event per changed entry.
func TestWatchPKeys(t *testing.T) {
	for _, format := range []string{"plain", "json"} {
		t.Run(format, func(t *testing.T) {
			dir := watchTree(t)
			lines, stderr, code := runStreaming(t, "--sysfs", dir, "watch", "pkeys", "mlx5_0/1", "--count", "4", "--interval", "200ms", "-o", format)
			note, err := stderr.ReadString('\n')
			if err != nil || !strings.Contains(note, "watching the P_Key tables of mlx5_0/1 every 200ms") {
				t.Fatalf("stderr: %q %v", note, err)
			}
			go func() { _, _ = io.Copy(io.Discard, stderr) }()
			// Polls at 0, 200, 400, 600 ms: change the table between the second and third.
			time.Sleep(300 * time.Millisecond)
			pk := filepath.Join(dir, "class/infiniband/mlx5_0/ports/1/pkeys")
			rewrite(t, filepath.Join(pk, "1"), "0x0000")
			rewrite(t, filepath.Join(pk, "2"), "0x8002")
			rewrite(t, filepath.Join(pk, "5"), "0x8030")
			got := []string{next(t, lines), next(t, lines), next(t, lines)}
			if c := <-code; c != 0 {
				t.Fatalf("exit %d", c)
			}
			if l, ok := <-lines; ok {
				t.Errorf("unexpected event %q", l)
			}
			if format == "plain" {
				want := []string{
					`mlx5_0/1 index=1 old=0x8001 new=0x0000 removed: full member of partition 0x0001 (a QP using this index loses the partition)`,
					`mlx5_0/1 index=2 old=0x0002 new=0x8002 membership: partition 0x0002: limited -> full member`,
					`mlx5_0/1 index=5 old=0x0000 new=0x8030 added: full member of partition 0x0030`,
				}
				for i, w := range want {
					if _, rest, _ := strings.Cut(got[i], " "); rest != w {
						t.Errorf("event %d:\n got %s\nwant TIME %s", i, got[i], w)
					}
				}
				return
			}
			jsonschematest.Lines(t, "watch-pkeys", strings.Join(got, "\n"))
			var ev struct {
				Device string  `json:"device"`
				Port   int     `json:"port"`
				Index  *int    `json:"index"`
				Old    *string `json:"old"`
				New    *string `json:"new"`
				Change string  `json:"change"`
				Time   string  `json:"seen_at"`
			}
			if err := json.Unmarshal([]byte(got[0]), &ev); err != nil {
				t.Fatal(err)
			}
			if ev.Device != "mlx5_0" || ev.Port != 1 || *ev.Index != 1 || *ev.Old != "0x8001" || *ev.New != "0x0000" || ev.Change != "removed" || ev.Time == "" {
				t.Errorf("event: %s", got[0])
			}
		})
	}
}

func TestWatchCompletion(t *testing.T) {
	r := runIbkey(t, "__complete", "--demo", "watch", "counters", "mlx5_1")
	for _, w := range []string{"mlx5_1/1\tdemo-node HCA-2 port 1", "mlx5_1/2\t"} {
		if !strings.Contains(r.Stdout, w) {
			t.Errorf("want %q in\n%s", w, r.Stdout)
		}
	}
	r = runIbkey(t, "__complete", "--demo", "watch", "pkeys", "mlx5_0/1", "")
	if strings.Contains(r.Stdout, "mlx5_0/1\t") || !strings.Contains(r.Stdout, "mlx5_2/1\t") {
		t.Errorf("an argument already given is offered again:\n%s", r.Stdout)
	}
}

// TestWatchInTmux runs the built binary's screen in a real terminal (tmux): rows and
// highlighted values appear, q quits and the terminal is restored. The exit is 4, as the
// lines': the demo host's P_Key/Q_Key violation counters are n/a, not read.
func TestWatchInTmux(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs it in tmux for seconds")
	}
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("tmux is missing (CI is set: install tmux)")
		}
		t.Skip("tmux is missing: apt-get install -y tmux")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "ibkey")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/ibkey/ibkey/cmd/ibkey").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	sock := filepath.Join(tmp, "tmux.sock") // a private server: nothing else is touched
	tm := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(tmux, append([]string{"-S", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	status := filepath.Join(tmp, "status")
	script := bin + " --demo watch counters; echo $? > " + status + "; sleep 30"
	tm("-f", "/dev/null", "new-session", "-d", "-s", "ibkey", "-x", "120", "-y", "30", "env", "TERM=xterm-256color", "sh", "-c", script)
	defer exec.Command(tmux, "-S", sock, "kill-server").Run()

	var screen string
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		time.Sleep(500 * time.Millisecond)
		screen = tm("capture-pane", "-p", "-e", "-t", "ibkey")
		// At least two samples: a delta was shown.
		if regexp.MustCompile(`\x1b\[[0-9;]*m *\+[0-9]`).MatchString(screen) && strings.Contains(screen, "mlx5_1/2") {
			break
		}
	}
	plain := regexp.MustCompile(`\x1b\[[0-9;?]*[a-zA-Z]`).ReplaceAllString(screen, "")
	for _, want := range []string{"ibkey watch counters", "demo host", "RCV CONSTRAINT", "mlx5_0/1", "mlx5_1/1", "mlx5_1/2", "mlx5_2/1", "n/a", "q quit"} {
		if !strings.Contains(plain, want) {
			t.Errorf("screen lacks %q:\n%s", want, plain)
		}
	}
	// The steady drops on mlx5_0/1 are highlighted: its row is marked and its delta colored.
	row := ""
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, "mlx5_0/1") {
			row = l
		}
	}
	if !strings.Contains(row, "▶") || !regexp.MustCompile(`\x1b\[[0-9;]*3[0-9][0-9;]*m *\+[1-9]`).MatchString(row) {
		t.Errorf("mlx5_0/1 not highlighted: %q", row)
	}
	tm("send-keys", "-t", "ibkey", "q")
	var code []byte
	for i := 0; i < 50; i++ {
		time.Sleep(100 * time.Millisecond)
		if code, err = os.ReadFile(status); err == nil && len(code) > 0 {
			break
		}
	}
	if strings.TrimSpace(string(code)) != "4" {
		t.Fatalf("exit status %q after q, want 4 (counters shown n/a were not read)", code)
	}
	after := tm("capture-pane", "-p", "-t", "ibkey")
	if strings.Contains(after, "RCV CONSTRAINT") {
		t.Errorf("the alternate screen was not left:\n%s", after)
	}
}

// TestWatchPKeysLostEntry: an entry that cannot be read any more during the watch is
// an unreadable event, and the watch ends with exit 4 (a change there was not seen),
// as watch counters does for a port lost mid-watch.
func TestWatchPKeysLostEntry(t *testing.T) {
	dir := watchTree(t)
	lines, stderr, code := runStreaming(t, "--sysfs", dir, "watch", "pkeys", "mlx5_0/1", "--count", "4", "--interval", "200ms")
	if note, err := stderr.ReadString('\n'); err != nil || !strings.Contains(note, "watching the P_Key tables of mlx5_0/1") {
		t.Fatalf("stderr: %q %v", note, err)
	}
	var rest strings.Builder
	done := make(chan struct{})
	go func() { _, _ = io.Copy(&rest, stderr); close(done) }()
	// Polls at 0, 200, 400, 600 ms: the entry goes between the second and third.
	time.Sleep(300 * time.Millisecond)
	if err := os.Remove(filepath.Join(dir, "class/infiniband/mlx5_0/ports/1/pkeys/1")); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, lines); !strings.Contains(ev, "mlx5_0/1 index=1 old=0x8001 new=unreadable unreadable:") {
		t.Errorf("event: %s", ev)
	}
	if c := <-code; c != 4 {
		t.Errorf("exit %d, want 4", c)
	}
	<-done
	if !strings.Contains(rest.String(), "warning: a table or entry could not be read during the watch") {
		t.Errorf("stderr: %s", rest.String())
	}
}

// TestWatchIPoIB: an IPoIB interface names its port, as in ibkey pkeys: watch counters
// ib0.8001 and watch pkeys ib0.8001 watch mlx5_0/1 and say so (it was exit 3, "no
// device ib0.8001").
func TestWatchIPoIB(t *testing.T) {
	const label = "ibkey: ib0.8001: IPoIB interface on mlx5_0/1, P_Key 0x8001 (index 1, full)"
	r := cmdtest.RunPartial(t, root, false, nil, "--sysfs", mlx5, "watch", "counters", "ib0.8001", "--once")
	if r.Code != 4 || !strings.Contains(r.Stderr, label) || !strings.Contains(r.Stdout, " mlx5_0/1 ") || strings.Contains(r.Stdout, "mlx5_1/") {
		t.Errorf("watch counters ib0.8001: exit %d (want 4: the violation counters are n/a)\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r = cmdtest.RunPartial(t, root, false, nil, "--sysfs", mlx5, "watch", "pkeys", "ib0.8001", "--count", "1")
	if r.Code != 0 || !strings.Contains(r.Stderr, label) || !strings.Contains(r.Stderr, "watching the P_Key tables of mlx5_0/1 every") {
		t.Errorf("watch pkeys ib0.8001: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// TestWatchPKeysChangedWhileUnreadable: a table that cannot be read for a while
// (port_error) and is changed meanwhile shows the change when it can be read again,
// against the table as last read before; before, port_back said only "readable again"
// and the change was never shown. The exit is still 4: a change made and undone while
// the table could not be read was not seen.
func TestWatchPKeysChangedWhileUnreadable(t *testing.T) {
	dir := watchTree(t)
	lines, stderr, code := runStreaming(t, "--sysfs", dir, "watch", "pkeys", "mlx5_0/1", "--count", "6", "--interval", "300ms")
	if note, err := stderr.ReadString('\n'); err != nil || !strings.Contains(note, "watching the P_Key tables of mlx5_0/1") {
		t.Fatalf("stderr: %q %v", note, err)
	}
	go func() { _, _ = io.Copy(io.Discard, stderr) }()
	pk := filepath.Join(dir, "class/infiniband/mlx5_0/ports/1/pkeys")
	// Polls at 0, 300, 600, 900, 1200, 1500 ms: the table goes between the second and
	// third, and comes back changed between the fourth and fifth.
	time.Sleep(450 * time.Millisecond)
	if err := os.Rename(pk, pk+".away"); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, lines); !strings.Contains(ev, " mlx5_0/1 port_error: ") {
		t.Errorf("event: %s", ev)
	}
	rewrite(t, filepath.Join(pk+".away", "1"), "0x8003")
	time.Sleep(450 * time.Millisecond)
	if err := os.Rename(pk+".away", pk); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, lines); !strings.Contains(ev, " mlx5_0/1 port_back: the table is readable again (8 entries); the changes that follow are since the last read before it could not be read") {
		t.Errorf("event: %s", ev)
	}
	if ev := next(t, lines); !strings.Contains(ev, " mlx5_0/1 index=1 old=0x8001 new=0x8003 replaced: ") {
		t.Errorf("event: %s", ev)
	}
	if c := <-code; c != 4 {
		t.Errorf("exit %d, want 4", c)
	}
	if l, ok := <-lines; ok {
		t.Errorf("unexpected event %q", l)
	}
}
