package watch

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
	"github.com/ibkey/ibkey/internal/fakesysfs"
)

// incompleteOf is the incomplete list of each line of a watch's -o json.
func incompleteOf(t *testing.T, stdout string) [][]cmdutil.Incomplete {
	t.Helper()
	if strings.TrimSpace(stdout) == "" {
		t.Fatal("nothing on stdout")
	}
	var out [][]cmdutil.Incomplete
	for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var doc struct {
			Incomplete []cmdutil.Incomplete `json:"incomplete"`
		}
		if err := json.Unmarshal([]byte(l), &doc); err != nil {
			t.Fatalf("not one JSON object per line: %v\n%s", err, stdout)
		}
		out = append(out, doc.Incomplete)
	}
	return out
}

// kinds is "KIND: MESSAGE" of each item, one a line.
func kinds(inc []cmdutil.Incomplete) string {
	var b strings.Builder
	for _, i := range inc {
		b.WriteString(i.Kind + ": " + i.Message + "\n")
	}
	return b.String()
}

// TestCountersIncomplete (rule 1): every sample of `watch counters -o json` says
// in-band what of it was not read (a stream's exit comes only when it ends, and an
// interrupt's 130 hides the 4), in the vocabulary of pkeys and devices: devices and
// fabric addresses not watched (unread-device, unread-node, each one of those stderr
// names together for one reason), counters whose read failed and counters the port has that the
// sources used cannot read (unread-counter); nothing on exit 0 (an iWARP port's n/a
// P_Key and Q_Key counters are the whole answer). cmdtest.Run and RunPartial check the
// rule of incomplete against the exit code for every line.
func TestCountersIncomplete(t *testing.T) {
	partial := func(t *testing.T, args ...string) cmdtest.Result {
		t.Helper()
		return cmdtest.RunPartial(t, root, false, nil, args...)
	}
	t.Run("unread-device", func(t *testing.T) {
		dir := t.TempDir()
		if err := fakesysfs.Write(dir, fakesysfs.MLX5()); err != nil {
			t.Fatal(err)
		}
		cmdtest.UnreadableDevice(t, dir, "mlx5_1")
		r := partial(t, "--sysfs", dir, "watch", "counters", "--count", "2", "--interval", "10ms", "-o", "json")
		inc := incompleteOf(t, r.Stdout)
		if r.Code != 4 || len(inc) != 2 {
			t.Fatalf("exit %d, %d samples\n%s%s", r.Code, len(inc), r.Stdout, r.Stderr)
		}
		for i, s := range inc {
			// Then mlx5_0/1's PortInfo counters (n/a: no fabric access), and the RoCE
			// port's, which only verbs read where the driver counts them, and the
			// fixture does not say its driver (irdma0, iWARP, has none by nature).
			if len(s) != 3 || s[0].Kind != cmdutil.IncompleteUnreadDevice || !strings.HasPrefix(s[0].Message, "not read: device mlx5_1: ") ||
				s[1].Kind != cmdutil.IncompleteUnreadCounter || !strings.HasPrefix(s[1].Message, "mlx5_0/1: pkey_violations, qkey_violations not read (n/a: ") ||
				s[2].Message != "mlx5_2/1: pkey_violations, qkey_violations not read (n/a: no PortInfo: the Ethernet link layer has no QP0 (no SMPs); verbs may read it on the host itself (ibv_query_port): the device's driver is not known)" {
				t.Errorf("sample %d: incomplete\n%s", i, kinds(s))
			}
		}
	})
	t.Run("unread-node", func(t *testing.T) {
		// Ten LIDs that do not answer: stderr names them on one line, as the range
		// given, the reason said once; -o json's incomplete has every one, in every
		// sample.
		r := partial(t, "--demo", "watch", "counters", "--lid", "3,90-99", "--count", "2", "--interval", "10ms", "-o", "json")
		if r.Code != 4 || !strings.Contains(r.Stderr, "warning: not read: lid 90-99: no answer via the demo fabric") || strings.Count(r.Stderr, "not read") != 1 {
			t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
		}
		for i, s := range incompleteOf(t, r.Stdout) {
			if len(s) != 10 || s[0].Kind != cmdutil.IncompleteUnreadNode || !strings.HasPrefix(s[0].Message, "not read: lid 90: ") ||
				!strings.HasPrefix(s[9].Message, "not read: lid 99: ") {
				t.Errorf("sample %d: incomplete\n%s", i, kinds(s))
			}
		}
		// A port asked for that some nodes lack: those nodes are not read.
		r = partial(t, "--demo", "watch", "counters", "--lid", "1-3", "--port", "2", "--once", "-o", "json")
		inc := incompleteOf(t, r.Stdout)
		if got := kinds(inc[0]); r.Code != 4 || got != "unread-node: not read: lid 1 port 2: the CA has no such port (ports: 1)\n"+
			"unread-node: not read: lid 3 port 2: the CA has no such port (ports: 1)\n" {
			t.Errorf("--lid 1-3 --port 2: exit %d, incomplete\n%s", r.Code, got)
		}
	})
	t.Run("unread-counter", func(t *testing.T) {
		dir := watchTree(t)
		c := filepath.Join(dir, "class/infiniband/mlx5_0/ports/1/counters")
		if err := os.WriteFile(filepath.Join(c, "port_xmit_constraint_errors"), []byte("300\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		r := partial(t, "--sysfs", dir, "watch", "counters", "--once", "-o", "json")
		want := "unread-counter: mlx5_0/1: port_xmit_constraint_errors not read: \"300\" does not fit in 8 bits\n" +
			"unread-counter: mlx5_0/1: pkey_violations, qkey_violations not read (n/a: needs fabric access (PortInfo, not in sysfs: pass --ca DEV as root or the rdma group, or --ibsim))\n" +
			"unread-counter: mlx5_0/2: pkey_violations, qkey_violations not read (n/a: needs fabric access (PortInfo, not in sysfs: pass --ca DEV as root or the rdma group, or --ibsim))\n"
		if got := kinds(incompleteOf(t, r.Stdout)[0]); r.Code != 4 || got != want {
			t.Errorf("exit %d, incomplete\n%swant\n%s", r.Code, got, want)
		}
	})
	t.Run("complete", func(t *testing.T) {
		// n/a because the port has no such counter is no gap: exit 0, no incomplete
		// (cmdtest.Run fails a line that has one on exit 0). An iWARP port has no P_Key
		// or Q_Key counters (and the fixture no counters/).
		r := runIbkey(t, "--sysfs", mlx5, "watch", "counters", "irdma0/1", "--count", "2", "--interval", "10ms", "-o", "json")
		if r.Code != 0 || strings.Contains(r.Stdout, "incomplete") {
			t.Errorf("exit %d\n%s", r.Code, r.Stdout)
		}
	})
}

// TestPortGoneExit4: a port that goes away during the watch (GONE on its row) is a
// port not read (an iWARP port: the first sample reads everything it has): named once on stderr, in that sample's incomplete, and the exit is
// 4, as for a counter not read (it exited 0, every other counter of the watch read).
func TestPortGoneExit4(t *testing.T) {
	dir := t.TempDir()
	err := fakesysfs.Write(dir, fakesysfs.Host{Devices: []fakesysfs.Device{{Name: "irdma0", PCI: "0000:03:00.0", NodeType: "4: RNIC",
		Ports: []fakesysfs.Port{{Num: 1, State: "4: ACTIVE", PhysState: "5: LinkUp", LinkLayer: "Ethernet", Counters: fakesysfs.IBCounters(nil)}}}}})
	if err != nil {
		t.Fatal(err)
	}
	lines, stderr, code := runStreaming(t, "--sysfs", dir, "watch", "counters", "--count", "2", "--interval", "200ms", "-o", "json")
	errs := make(chan string, 1)
	go func() { b, _ := io.ReadAll(stderr); errs <- string(b) }()
	first := next(t, lines)
	// Renamed away at once: a sample never sees a port half removed.
	ports := filepath.Join(dir, "class/infiniband/irdma0/ports")
	if err := os.Rename(ports, ports+".gone"); err != nil {
		t.Fatal(err)
	}
	second := next(t, lines)
	c, stderrText := <-code, <-errs
	inc := incompleteOf(t, first+"\n"+second)
	if len(inc[0]) != 0 {
		t.Errorf("the first sample read everything: incomplete\n%s", kinds(inc[0]))
	}
	if got := kinds(inc[1]); len(inc[1]) != 1 || !strings.HasPrefix(got, "unread-device: not read: port irdma0/1: ") {
		t.Errorf("the port gone: incomplete\n%s%s", got, second)
	}
	if c != 4 || strings.Count(stderrText, "warning: not read: port irdma0/1: ") != 1 {
		t.Errorf("exit %d, stderr %q; want 4 and the port named once", c, stderrText)
	}
}

// TestPKeysNotWatched: watch pkeys -o json whose device asked for cannot be read starts
// with one line naming it (incomplete, as 'ibkey pkeys' names it): a watch may run
// until interrupted, so its exit 4 comes late or never, and no event would ever say it.
func TestPKeysNotWatched(t *testing.T) {
	dir := t.TempDir()
	if err := fakesysfs.Write(dir, fakesysfs.MLX5()); err != nil {
		t.Fatal(err)
	}
	cmdtest.UnreadableDevice(t, dir, "mlx5_1")
	r := cmdtest.RunPartial(t, root, false, nil, "--sysfs", dir, "watch", "pkeys", "--count", "1", "-o", "json")
	inc := incompleteOf(t, r.Stdout)
	if r.Code != 4 || len(inc) != 1 || len(inc[0]) != 1 || inc[0][0].Kind != cmdutil.IncompleteUnreadDevice || !strings.HasPrefix(inc[0][0].Message, "not read: device mlx5_1: ") {
		t.Errorf("exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	// Everything read: no such line (and plain output has none either way).
	r = runIbkey(t, "--sysfs", dir, "watch", "pkeys", "mlx5_0", "--count", "1", "-o", "json")
	if r.Code != 0 || r.Stdout != "" {
		t.Errorf("all read: exit %d, stdout %q", r.Code, r.Stdout)
	}
	r = cmdtest.RunPartial(t, root, false, nil, "--sysfs", dir, "watch", "pkeys", "--count", "1")
	if r.Code != 4 || r.Stdout != "" || !strings.Contains(r.Stderr, "warning: not read: device mlx5_1: ") {
		t.Errorf("plain: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
}

// TestNamedUnreadable: a device named on the command line that cannot be read is
// treated as it is when no device is named (query.Host.LoadMany): named on stderr and
// in every sample's incomplete, the other named devices watched, exit 4 at the end.
// It exited 4 at once and watched nothing. A named device that does not exist is
// still exit 3 with the devices that do.
func TestNamedUnreadable(t *testing.T) {
	dir := t.TempDir()
	if err := fakesysfs.Write(dir, fakesysfs.MLX5()); err != nil {
		t.Fatal(err)
	}
	cmdtest.UnreadableDevice(t, dir, "mlx5_1")
	t.Run("counters", func(t *testing.T) {
		r := cmdtest.RunPartial(t, root, false, nil, "--sysfs", dir, "watch", "counters", "mlx5_1", "irdma0", "--count", "2", "--interval", "10ms", "-o", "json")
		inc := incompleteOf(t, r.Stdout)
		if r.Code != 4 || len(inc) != 2 || strings.Count(r.Stderr, "warning: not read: device mlx5_1: ") != 1 {
			t.Fatalf("exit %d, %d samples\n%s%s", r.Code, len(inc), r.Stdout, r.Stderr)
		}
		for i, s := range inc {
			if len(s) != 1 || s[0].Kind != cmdutil.IncompleteUnreadDevice || !strings.HasPrefix(s[0].Message, "not read: device mlx5_1: ") {
				t.Errorf("sample %d: incomplete\n%s", i, kinds(s))
			}
		}
		if !strings.Contains(r.Stdout, `"device":"irdma0"`) || strings.Contains(r.Stdout, `"device":"mlx5_1"`) {
			t.Errorf("not irdma0 alone watched\n%s", r.Stdout)
		}
		// A port of it, named: the same.
		r = cmdtest.RunPartial(t, root, false, nil, "--sysfs", dir, "watch", "counters", "mlx5_1/1", "mlx5_2/1", "--once")
		if r.Code != 4 || !strings.Contains(r.Stdout, " mlx5_2/1 ") || !strings.Contains(r.Stderr, "warning: not read: device mlx5_1: ") {
			t.Errorf("mlx5_1/1 mlx5_2/1: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
		}
		// Only the unreadable one named: nothing to watch, exit 4 (not known), never 3.
		r = cmdtest.RunPartial(t, root, false, nil, "--sysfs", dir, "watch", "counters", "mlx5_1", "--once")
		if r.Code != 4 || r.Stdout != "" || !strings.Contains(r.Stderr, "not read: device mlx5_1: ") {
			t.Errorf("mlx5_1 alone: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
		}
		// A typo: exit 3 with what exists.
		r = cmdtest.RunPartial(t, root, false, nil, "--sysfs", dir, "watch", "counters", "mlx5_9", "mlx5_2", "--once")
		if r.Code != 3 || r.Stdout != "" || !strings.Contains(r.Stderr, "no device or IPoIB interface mlx5_9 (devices: irdma0, mlx5_0, mlx5_1, mlx5_2; IPoIB interfaces: ") {
			t.Errorf("mlx5_9 mlx5_2: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
		}
	})
	t.Run("pkeys", func(t *testing.T) {
		r := cmdtest.RunPartial(t, root, false, nil, "--sysfs", dir, "watch", "pkeys", "mlx5_1", "mlx5_0", "--count", "1", "-o", "json")
		inc := incompleteOf(t, r.Stdout)
		if r.Code != 4 || len(inc) != 1 || len(inc[0]) != 1 || inc[0][0].Kind != cmdutil.IncompleteUnreadDevice || !strings.HasPrefix(inc[0][0].Message, "not read: device mlx5_1: ") ||
			!strings.Contains(r.Stderr, "watching the P_Key tables of mlx5_0/1") {
			t.Errorf("exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
		}
		r = cmdtest.RunPartial(t, root, false, nil, "--sysfs", dir, "watch", "pkeys", "mlx5_9", "mlx5_0", "--count", "1")
		if r.Code != 3 || !strings.Contains(r.Stderr, "no device or IPoIB interface mlx5_9 (devices: ") {
			t.Errorf("mlx5_9 mlx5_0: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
		}
	})
}

// TestWatchPKeysUnreadAtStart (rule 1): an entry that cannot be read when the watch
// starts (a dangling link) is named on stderr and in the stream's first line, as
// 'ibkey pkeys' names it, and the watch ends with exit 4: a change there is not seen
// (it said nothing and exited 0).
func TestWatchPKeysUnreadAtStart(t *testing.T) {
	const tree = "../../../../testdata/sysfs/mlx5" // mlx5_1/1's pkeys/3 is a link loop
	const want = "mlx5_1/1: 1 P_Key table entry could not be read (index 3)"
	r := cmdtest.RunPartial(t, root, false, nil, "--sysfs", tree, "watch", "pkeys", "--count", "2", "--interval", "10ms", "-o", "json")
	inc := incompleteOf(t, r.Stdout)
	if got := kinds(inc[0]); r.Code != 4 || got != "unread-entries: "+want+"\n" || !strings.Contains(r.Stderr, "warning: "+want+": a change there is not seen") {
		t.Errorf("exit %d (want 4), first line\n%s\nstderr\n%s", r.Code, got, r.Stderr)
	}
	r = cmdtest.RunPartial(t, root, false, nil, "--sysfs", tree, "watch", "pkeys", "mlx5_0/1", "--count", "2", "--interval", "10ms", "-o", "json")
	if r.Code != 0 || r.Stdout != "" {
		t.Errorf("a port read whole: exit %d, stdout %q", r.Code, r.Stdout)
	}
}

// TestPKeysNothingRead (rule 1): when no table could be read, the ports not read may
// hold one: exit 4 naming them, not exit 3's "no port with a P_Key table" (which
// stays for ports that have none, watch_test.go).
func TestPKeysNothingRead(t *testing.T) {
	dir := t.TempDir()
	if err := fakesysfs.Write(dir, fakesysfs.MLX5()); err != nil {
		t.Fatal(err)
	}
	// Every device with P_Key tables unreadable: irdma0 (iWARP) has none.
	for _, d := range []string{"mlx5_0", "mlx5_1", "mlx5_2"} {
		cmdtest.UnreadableDevice(t, dir, d)
	}
	r := cmdtest.RunPartial(t, root, false, nil, "--sysfs", dir, "watch", "pkeys", "--count", "1", "--interval", "10ms")
	if r.Code != 4 || !strings.Contains(r.Stderr, "not read: device mlx5_0") || !strings.Contains(r.Stderr, "ibkey: no P_Key table could be read: nothing is watched") || strings.Contains(r.Stderr, "no port with a P_Key table") {
		t.Errorf("exit %d\n%s", r.Code, r.Stderr)
	}
}
