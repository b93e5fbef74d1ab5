//go:build linux

package faults

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ibkey/ibkey/internal/fakesysfs"
	"github.com/ibkey/ibkey/internal/lab"
)

// special makes the special and huge files the suite hands ibkey, in dir.
func special(t *testing.T, dir string) map[string]string {
	t.Helper()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "huge")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 40); err != nil { // sparse: 1 TiB of zeros, no disk used
		t.Fatal(err)
	}
	f.Close()
	sub := filepath.Join(dir, "a-directory")
	os.Mkdir(sub, 0o755)
	return map[string]string{"FIFO": fifo, "/dev/zero": "/dev/zero", "/dev/null": "/dev/null", "directory": sub, "1 TiB sparse file": huge}
}

// checkBadInput: ibkey refuses the file as bad input (exit 2) within the hang limit,
// naming it on one short stderr, without a crash.
func checkBadInput(t *testing.T, c *tally, class, kind, path string, r result) {
	t.Helper()
	c.add(class, kind+": "+outcome(r))
	switch {
	case r.hung:
		t.Errorf("%s %s: %v still running after %v", class, kind, r.args, hangLimit)
	case crashed(r.stderr) != "":
		t.Errorf("%s %s: %v crashed:\n%s", class, kind, r.args, head(r.stderr, 400))
	case r.code != 2:
		t.Errorf("%s %s: %v exit %d, want 2 (bad input)\n%s", class, kind, r.args, r.code, head(r.stderr, 400))
	case !strings.Contains(r.stderr, path):
		t.Errorf("%s %s: stderr does not name %s: %s", class, kind, path, head(r.stderr, 400))
	case r.stderrSize > 4096:
		t.Errorf("%s %s: %d bytes on stderr", class, kind, r.stderrSize)
	}
}

// TestFaultsInputFiles hands every file input (the partitions file, --fabric-file) a
// FIFO, /dev/zero, /dev/null, a directory and a 1 TiB sparse file.
func TestFaultsInputFiles(t *testing.T) {
	var c tally
	defer c.log(t, "special and huge input files")
	dir := t.TempDir()
	files := special(t, dir)
	for kind, path := range files {
		if kind != "FIFO" {
			// A partitions file may be a pipe (issue 25 item 5): fed below.
			checkBadInput(t, &c, "partitions check FILE", kind, path, run(t, true, "partitions", "check", path))
			checkBadInput(t, &c, "partitions show FILE", kind, path, run(t, true, "partitions", "show", path))
		}
		checkBadInput(t, &c, "fabric pkeys --fabric-file", kind, path, run(t, true, "fabric", "pkeys", "--fabric-file", path))
		checkBadInput(t, &c, "fabric check --fabric-file", kind, path, run(t, true, "fabric", "check", "--fabric-file", path))
	}
	// --partitions of fabric check, with a good fabric file.
	good := filepath.Join(dir, "fabric.json")
	if err := os.WriteFile(good, []byte(goodFabricJSON(t)), 0o644); err != nil {
		t.Fatal(err)
	}
	for kind, path := range files {
		if kind != "FIFO" { // a pipe is read: TestFaultsPartitionsPipe
			checkBadInput(t, &c, "fabric check --partitions", kind, path, run(t, true, "fabric", "check", "--fabric-file", good, "--partitions", path))
		}
	}
}

// TestFaultsPartitionsPipe: a partitions file given as a FIFO (`<(ssh sm01 cat ...)`)
// is read as a pipe: a good file written into it is checked (exit 0), and an endless
// stream of zeros ends at the same size bound as a file (exit 2, naming the FIFO),
// within the hang limit.
func TestFaultsPartitionsPipe(t *testing.T) {
	var c tally
	defer c.log(t, "a partitions file from a pipe")
	for _, cmd := range []string{"check", "show"} {
		for _, feed := range []struct {
			kind string
			data func(w *os.File)
			want int
		}{
			{"good file", func(w *os.File) { w.WriteString("Default=0x7fff, ipoib : ALL=full ;\n") }, 0},
			{"endless zeros", func(w *os.File) {
				zeros := make([]byte, 1<<20)
				for {
					if _, err := w.Write(zeros); err != nil {
						return // the reader stopped: EPIPE
					}
				}
			}, 2},
		} {
			fifo := filepath.Join(t.TempDir(), "fifo")
			if err := syscall.Mkfifo(fifo, 0o644); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
				if err != nil {
					return
				}
				feed.data(w)
				w.Close()
			}()
			r := run(t, true, "partitions", cmd, fifo)
			if feed.want == 2 {
				checkBadInput(t, &c, "partitions "+cmd+" FIFO", feed.kind, fifo, r)
			} else {
				c.add("partitions "+cmd+" FIFO", feed.kind+": "+outcome(r))
				if r.hung || r.code != feed.want || crashed(r.stderr) != "" {
					t.Errorf("partitions %s FIFO %s: %s, want exit %d\n%s", cmd, feed.kind, outcome(r), feed.want, head(r.stderr, 400))
				}
			}
			// Unblock a writer still waiting for a reader (the run hung or refused early).
			if f, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
				f.Close()
			}
			<-done
		}
	}
}

// goodFabricJSON is a saved sweep of the small lab fabric, made by the binary.
func goodFabricJSON(t *testing.T) string {
	t.Helper()
	l := lab.Start(t, "../lab/testdata/small.net", nil)
	r := run(t, false, append([]string{"fabric", "discover", "-o", "json"}, madFlags(l)...)...)
	if r.code != 0 {
		t.Fatalf("fabric discover on the small lab: %s\n%s", outcome(r), head(r.stderr, 600))
	}
	return r.stdout
}

// sysfsCommands are the commands that read a --sysfs tree.
var sysfsCommands = [][]string{
	{"devices", "-o", "plain"},
	{"devices", "-o", "table"},
	{"devices", "-o", "json"},
	{"pkeys", "-o", "plain"},
	{"pkeys", "-o", "table"},
	{"watch", "counters", "--once", "-o", "plain"},
	{"watch", "pkeys", "--count", "1", "-o", "plain"},
}

// TestFaultsSysfsTree puts special files at every kind of place in a --sysfs tree: a
// FIFO as node_desc, as a P_Key entry and as ports/; /dev/zero and a 1 TiB sparse file
// as attributes; a symlink leading out of the tree. Every command ends within the hang
// limit without a crash, and never prints what lies outside the tree.
func TestFaultsSysfsTree(t *testing.T) {
	var c tally
	defer c.log(t, "special files in a --sysfs tree")
	type damage struct {
		name string
		do   func(t *testing.T, port, dev string)
	}
	mkfifo := func(t *testing.T, p string) {
		os.RemoveAll(p)
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(t *testing.T, target, p string) {
		os.RemoveAll(p)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	sparse := func(t *testing.T, p string) {
		os.RemoveAll(p)
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		f.Truncate(1 << 40)
		f.Close()
	}
	for _, d := range []damage{
		{"FIFO node_desc", func(t *testing.T, port, dev string) { mkfifo(t, filepath.Join(dev, "node_desc")) }},
		{"FIFO pkeys/0", func(t *testing.T, port, dev string) { mkfifo(t, filepath.Join(port, "pkeys", "0")) }},
		{"FIFO ports/", func(t *testing.T, port, dev string) { mkfifo(t, filepath.Join(dev, "ports")) }},
		{"FIFO state", func(t *testing.T, port, dev string) { mkfifo(t, filepath.Join(port, "state")) }},
		{"FIFO counter", func(t *testing.T, port, dev string) {
			mkfifo(t, filepath.Join(port, "counters", "port_rcv_constraint_errors"))
		}},
		{"/dev/zero rate", func(t *testing.T, port, dev string) { link(t, "/dev/zero", filepath.Join(port, "rate")) }},
		{"/dev/zero pkeys/1", func(t *testing.T, port, dev string) { link(t, "/dev/zero", filepath.Join(port, "pkeys", "1")) }},
		{"1 TiB node_desc", func(t *testing.T, port, dev string) { sparse(t, filepath.Join(dev, "node_desc")) }},
		{"1 TiB link_layer", func(t *testing.T, port, dev string) { sparse(t, filepath.Join(port, "link_layer")) }},
		{"link_layer -> /etc/passwd", func(t *testing.T, port, dev string) { link(t, "/etc/passwd", filepath.Join(port, "link_layer")) }},
		{"node_desc -> /etc/hostname", func(t *testing.T, port, dev string) {
			link(t, "/etc/hostname", filepath.Join(dev, "node_desc"))
		}},
	} {
		root := filepath.Join(t.TempDir(), "sys")
		if err := fakesysfs.Write(root, fakesysfs.MLX5()); err != nil {
			t.Fatal(err)
		}
		dev, err := filepath.EvalSymlinks(filepath.Join(root, "class", "infiniband", "mlx5_0"))
		if err != nil {
			t.Fatal(err)
		}
		d.do(t, filepath.Join(dev, "ports", "1"), dev)
		for _, args := range sysfsCommands {
			r := run(t, true, append([]string{"--sysfs", root}, args...)...)
			class := strings.Join(args, " ")
			c.add(class, d.name+": "+outcome(r))
			switch {
			case r.hung:
				t.Errorf("%s: %v still running after %v", d.name, r.args, hangLimit)
			case crashed(r.stderr) != "":
				t.Errorf("%s: %v crashed:\n%s", d.name, r.args, head(r.stderr, 400))
			case r.stderrSize > 64<<10:
				t.Errorf("%s: %v wrote %d bytes to stderr", d.name, r.args, r.stderrSize)
			}
			if strings.Contains(r.stdout+r.stderr, "root:x:0:0") {
				t.Errorf("%s: %v printed /etc/passwd", d.name, r.args)
			}
			if host, _ := os.ReadFile("/etc/hostname"); len(strings.TrimSpace(string(host))) > 3 && strings.Contains(r.stdout, "node_desc") && strings.Contains(r.stdout, strings.TrimSpace(string(host))) {
				t.Errorf("%s: %v printed /etc/hostname", d.name, r.args)
			}
		}
	}
}

// hostile is text a terminal would act on: clear screen, window title, hyperlink,
// an 8-bit CSI, a right-to-left override, bytes that are not UTF-8.
const hostile = "\x1b[2J\x1b]0;owned\x07\x1b]8;;http://x\x1b\\\xc2\x9b31m\u202eevil\xff"

// TestFaultsEscapes puts hostile text in every text field of a --sysfs tree and in the
// node descriptions of a fabric file and of the simulated fabric, and checks that no
// command prints it raw, in any output format.
func TestFaultsEscapes(t *testing.T) {
	var c tally
	defer c.log(t, "escape sequences in printed fields")
	h := fakesysfs.MLX5()
	for i := range h.Devices {
		d := &h.Devices[i]
		d.NodeDesc, d.FWVer, d.HCAType, d.BoardID, d.HWRev = "nd"+hostile, "fw"+hostile, "hca"+hostile, "board"+hostile, "rev"+hostile
		for j := range d.Ports {
			p := &d.Ports[j]
			p.LinkLayer = "InfiniBand" + hostile
			p.Rate = "100 Gb/sec (4X EDR" + hostile + ")"
			p.State = "4: ACTIVE" + hostile
			p.PhysState = "5: LinkUp" + hostile
		}
	}
	for i := range h.Net {
		h.Net[i].OperState = "up" + hostile
	}
	root := filepath.Join(t.TempDir(), "sys")
	if err := fakesysfs.Write(root, h); err != nil {
		t.Fatal(err)
	}
	check := func(class string, r result) {
		t.Helper()
		bad := unsafeText(r.stdout)
		if bad == "" {
			bad = unsafeText(r.stderr)
		}
		switch {
		case r.hung || crashed(r.stderr) != "":
			c.add(class, outcome(r))
			t.Errorf("%v: %s", r.args, outcome(r))
		case bad != "":
			c.add(class, "RAW ("+bad+")")
			t.Errorf("%v: printed %s raw", r.args, bad)
		default:
			c.add(class, "clean, "+outcome(r))
		}
	}
	for _, args := range sysfsCommands {
		r := run(t, false, append([]string{"--sysfs", root}, args...)...)
		check("--sysfs "+strings.Join(args, " "), r)
		if args[0] == "devices" && args[2] == "plain" && !strings.Contains(r.stdout, `\x1b[2J`) {
			t.Errorf("%v: the hostile text is not shown escaped, so this check proves nothing:\n%s", r.args, head(r.stdout, 600))
		}
	}

	// A fabric file whose node descriptions are hostile.
	l := lab.Start(t, "../lab/testdata/small.net", nil)
	r := run(t, false, append([]string{"fabric", "discover", "-o", "json"}, madFlags(l)...)...)
	if r.code != 0 {
		t.Fatalf("fabric discover: %s\n%s", outcome(r), head(r.stderr, 400))
	}
	esc := strings.NewReplacer(`"HcaB"`, `"HcaB\u001b[2J\u009b\u202e"`, `"Switch2"`, `"Switch2\u001b]0;x\u0007"`).Replace(r.stdout)
	ff := filepath.Join(t.TempDir(), "hostile.json")
	if err := os.WriteFile(ff, []byte(esc), 0o644); err != nil {
		t.Fatal(err)
	}
	if esc == r.stdout {
		t.Fatalf("the fabric file holds no description to replace:\n%s", head(r.stdout, 400))
	}
	for _, args := range [][]string{
		{"fabric", "pkeys", "--fabric-file", ff, "-o", "plain"},
		{"fabric", "pkeys", "--fabric-file", ff, "-o", "table"},
		{"fabric", "check", "--fabric-file", ff, "-o", "plain"},
		{"fabric", "diff", ff, ff, "-o", "plain"},
	} {
		check(strings.Join(args[:2], " ")+" (hostile fabric file) "+args[len(args)-1], run(t, false, args...))
	}

	// The simulated fabric: a CA whose NodeDescription (ibsim's node name) is hostile.
	topo := filepath.Join(t.TempDir(), "hostile.net")
	name := "Ev\x1b[2J\x1b]0;x\x07il"
	net := "Hca 1 \"HcaA\"\n[1] \"Sw\"[1]\n\nHca 1 \"" + name + "\"\n[1] \"Sw\"[2]\n\nSwitch 4 \"Sw\"\n[1] \"HcaA\"[1]\n[2] \"" + name + "\"[1]\n"
	if err := os.WriteFile(topo, []byte(net), 0o644); err != nil {
		t.Fatal(err)
	}
	l2 := startLab(t, topo, nil)
	for _, args := range [][]string{
		{"fabric", "discover", "-o", "plain"},
		{"fabric", "discover", "-o", "table"},
		{"fabric", "pkeys", "-o", "plain"},
		{"pkeys", "--lid", "1-3", "-o", "plain"},
		{"devices", "--lid", "1-3", "-o", "plain"},
		{"watch", "counters", "--lid", "1-3", "--once", "-o", "plain"},
	} {
		r := run(t, false, append(args, madFlags(l2)...)...)
		check(strings.Join(args, " ")+" (hostile NodeDescription)", r)
		if args[0] == "fabric" && args[1] == "discover" && !strings.Contains(r.stdout, `Ev\x1b[2J`) {
			t.Errorf("%v: the hostile NodeDescription is not shown escaped (did ibsim use the node name?):\n%s", r.args, head(r.stdout, 600))
		}
	}
}
