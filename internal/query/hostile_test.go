package query

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ibkey/ibkey/internal/fakesysfs"
	"github.com/ibkey/ibkey/internal/fsread"
	"github.com/ibkey/ibkey/internal/ibverbs"
	"github.com/ibkey/ibkey/internal/partconf"
	"github.com/ibkey/ibkey/internal/textsafe"
)

// writeTree writes h under a temp dir and returns a host rooted there.
func writeTree(t *testing.T, h fakesysfs.Host) (*Host, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "sys")
	if err := fakesysfs.Write(dir, h); err != nil {
		t.Fatal(err)
	}
	return &Host{Sys: ibverbs.Open(dir)}, dir
}

// TestHostileSysfsText: escape sequences, C1 controls, bidi overrides and invalid
// UTF-8 in node_desc, link_layer and rate enter the model as visible escapes.
func TestHostileSysfsText(t *testing.T) {
	h := fakesysfs.MLX5()
	// The last two bytes are a backslash and an n, not a newline (issue 28).
	h.Devices[0].NodeDesc = "evil\x1b]0;pwned\x07\x1b[2J\u202egnp.exe\xff" + `\n`
	h.Devices[0].Ports[0].LinkLayer = "InfiniBand\x1b[8m"
	h.Devices[0].Ports[0].Rate = "100 Gb/sec (4X \x1b[31mEDR)"
	host, _ := writeTree(t, h)
	views, err := host.Load(Selector{Device: "mlx5_0"}, LoadOptions{Tables: true})
	if err != nil {
		t.Fatal(err)
	}
	v := views[0]
	for name, s := range map[string]string{
		"node_desc":  v.Device.NodeDesc.Value,
		"link_layer": v.Port.LinkLayer.Value,
		"rate":       v.Port.Rate.Value.Text + v.Port.Rate.Missing + v.Port.Rate.Value.Speed,
	} {
		if textsafe.Text(s) != s || strings.ContainsRune(s, 0x1b) {
			t.Errorf("%s reached the model raw: %q", name, s)
		}
		if !strings.Contains(s, `\x1b`) {
			t.Errorf("%s: the escape is not visible: %q", name, s)
		}
	}
	if want := `evil\x1b]0;pwned\x07\x1b[2J\u202egnp.exe\xff\\n`; v.Device.NodeDesc.Value != want {
		t.Errorf("node_desc %q, want %q", v.Device.NodeDesc.Value, want)
	}
}

// TestFabricFileNamesRoundTrip (issue 28): a node_desc holding a backslash and an n is
// written \\n and read back as it was, never as a newline; a control byte written raw
// into a file by hand is escaped on the way in; what ibkey wrote is read unchanged.
func TestFabricFileNamesRoundTrip(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f.json")
	doc := `{"format":"ibkey-fabric","version":2,"source":"x","swept_at":"2026-11-27T00:00:00Z","nodes":[` +
		`{"node_guid":"0x0000000000000001","type":"ca","num_ports":1,"partition_cap":64,"node_desc":"lit\\\\n","ports":[]},` +
		`{"node_guid":"0x0000000000000002","type":"ca","num_ports":1,"partition_cap":64,"node_desc":"real\\n","ports":[]},` +
		`{"node_guid":"0x0000000000000003","type":"ca","num_ports":1,"partition_cap":64,"node_desc":"raw\u001b[2J","ports":[]}],"links":[]}`
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := ReadFabricFile(p)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"0x0000000000000001": `lit\\n`, "0x0000000000000002": `real\n`, "0x0000000000000003": `raw\x1b[2J`}
	for _, n := range f.Nodes {
		if n.Description != want[n.GUID.String()] {
			t.Errorf("node %s: node_desc %q, want %q", n.GUID, n.Description, want[n.GUID.String()])
		}
	}
	if n := f.FindNodes("lit\\n"); len(n) != 1 {
		t.Errorf("FindNodes of the name as typed: %d nodes", len(n))
	}
	if n := f.FindNodes(`lit\\n`); len(n) != 1 {
		t.Errorf("FindNodes of the name as shown: %d nodes", len(n))
	}
}

// TestOneBadDeviceShowsTheRest: a device entry that cannot be read is reported, and
// every other device is still loaded.
func TestOneBadDeviceShowsTheRest(t *testing.T) {
	host, dir := writeTree(t, fakesysfs.MLX5())
	// mlx5_1's ports/ becomes a FIFO: reading it must neither hang nor hide mlx5_0.
	ports := filepath.Join(dir, "devices/pci0000:00/0000:04:00.0/infiniband/mlx5_1/ports")
	if _, err := os.Stat(ports); err != nil {
		matches, _ := filepath.Glob(filepath.Join(dir, "devices", "*", "*", "infiniband", "mlx5_1", "ports"))
		if len(matches) != 1 {
			t.Fatalf("cannot find mlx5_1/ports under %s: %v", dir, err)
		}
		ports = matches[0]
	}
	if err := os.RemoveAll(ports); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(ports, 0o644); err != nil {
		t.Fatal(err)
	}
	views, err := host.Load(Selector{}, LoadOptions{Tables: true})
	var pe *PartialError
	if !errors.As(err, &pe) {
		t.Fatalf("Load: %v, want a *PartialError", err)
	}
	if len(pe.Unread) != 1 || pe.Unread[0].What != "device mlx5_1" {
		t.Errorf("unread %+v, want device mlx5_1", pe.Unread)
	}
	var unknown *UnknownError
	if !errors.As(err, &unknown) || errors.As(err, new(*EnvError)) {
		t.Error("a PartialError must be an UnknownError (exit 4), never an EnvError (3), for callers that only know that")
	}
	got := map[string]bool{}
	for _, v := range views {
		got[v.Ref().String()] = true
	}
	for _, want := range []string{"mlx5_0/1", "mlx5_2/1", "irdma0/1"} {
		if !got[want] {
			t.Errorf("%s missing from %v", want, got)
		}
	}
	// Named on its own, the bad device is still an error (exit 3), not an empty list.
	if _, err := host.Load(Selector{Device: "mlx5_1"}, LoadOptions{}); err == nil || errors.As(err, &pe) {
		t.Errorf("Load(mlx5_1): %v, want an EnvError", err)
	}
}

// TestEmptyPortsAndPKeys: an empty ports/ or pkeys/ is noted, never shown as nothing.
func TestEmptyPortsAndPKeys(t *testing.T) {
	h := fakesysfs.MLX5()
	h.Devices[2].Ports = nil // mlx5_2: empty ports/
	h.Devices[0].Ports[0].PKeys = nil
	host, dir := writeTree(t, h)
	port, err := filepath.EvalSymlinks(filepath.Join(dir, "class", "infiniband", "mlx5_0", "ports", "1"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(port, "pkeys"), 0o755); err != nil {
		t.Fatal(err)
	}
	views, err := host.Load(Selector{}, LoadOptions{Tables: true})
	var pe *PartialError
	if !errors.As(err, &pe) || len(pe.Unread) != 1 || !strings.Contains(pe.Unread[0].Err.Error(), "ports/ is empty") {
		t.Fatalf("Load: %v, want mlx5_2 reported with an empty ports/", err)
	}
	for _, v := range views {
		if v.Ref().String() == "mlx5_0/1" {
			if v.Table != nil || !strings.Contains(v.TableMissing, "pkeys/ is empty") {
				t.Errorf("mlx5_0/1: table %v, note %q", v.Table, v.TableMissing)
			}
			return
		}
	}
	t.Error("mlx5_0/1 not loaded")
}

// TestSpecialInputFiles: the partitions file and the fabric file refuse /dev/zero,
// FIFOs and directories at once, and files past their bound with a clear error. (A
// partitions file given with a stdin, as the commands do, reads FIFOs: TestReadPartitionsStreams.)
func TestSpecialInputFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/dev/zero", fifo, dir, "/dev/null"} {
		if _, err := ReadPartitions(p, nil, partconf.Options{}); err == nil || !errors.Is(err, fsread.ErrNotRegular) && !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("ReadPartitions(%s): %v, want a not-a-regular-file error", p, err)
		}
		_, err := ReadFabricFile(p)
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("ReadFabricFile(%s): %v, want a usage error naming the file kind", p, err)
		}
	}
	// A sparse file past the fabric-file bound: refused from its size, nothing read.
	big := filepath.Join(dir, "big.json")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 40); err != nil {
		t.Skipf("cannot make a sparse file here: %v", err)
	}
	f.Close()
	if _, err := ReadFabricFile(big); err == nil || !strings.Contains(err.Error(), "too large for a fabric file") {
		t.Errorf("ReadFabricFile(1 TiB): %v", err)
	}
	if _, err := ReadPartitions(big, nil, partconf.Options{}); err == nil || !errors.Is(err, fsread.ErrTooLarge) && !strings.Contains(err.Error(), "too large") {
		t.Errorf("ReadPartitions(1 TiB): %v", err)
	}
}

// TestReadPartitionsStreams: with a stdin, "-" reads it and a FIFO path (a named pipe,
// <(...)'s /dev/fd/N) is read as a stream; devices and directories are still refused;
// a stream past the bound is an error naming it.
func TestReadPartitionsStreams(t *testing.T) {
	const conf = "Default=0x7fff : ALL=full;\np=0x10 : 0x0002c90300000211=full;\n"
	p, err := ReadPartitions("-", strings.NewReader(conf), partconf.Options{})
	if err != nil || p.Config.File != StdinName || len(p.FileGUIDs) != 1 {
		t.Fatalf("stdin: %v, %+v", err, p)
	}
	if _, err := ReadPartitions("-", nil, partconf.Options{}); err == nil {
		t.Error("- without a stdin: no error")
	}
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	go func() {
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			f.WriteString(conf)
			f.Close()
		}
	}()
	if p, err := ReadPartitions(fifo, strings.NewReader(""), partconf.Options{}); err != nil || p.Config.File != fifo || len(p.FileGUIDs) != 1 {
		t.Errorf("named pipe: %v", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() { w.WriteString(conf); w.Close() }()
	path := fmt.Sprintf("/proc/self/fd/%d", r.Fd()) // what <(...) gives, as /dev/fd/N
	if p, err := ReadPartitions(path, strings.NewReader(""), partconf.Options{}); err != nil || len(p.FileGUIDs) != 1 {
		t.Errorf("pipe %s: %v", path, err)
	}
	r.Close()
	for _, p := range []string{"/dev/zero", dir} {
		if _, err := ReadPartitions(p, strings.NewReader(""), partconf.Options{}); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("ReadPartitions(%s) with a stdin: %v, want a not-a-regular-file error", p, err)
		}
	}
	if _, err := readStream(strings.NewReader(strings.Repeat("x", 11)), StdinName, 10); !errors.Is(err, fsread.ErrTooLarge) || !strings.Contains(err.Error(), "<stdin>: larger than 10 bytes") {
		t.Errorf("11 bytes past a bound of 10: %v", err)
	}
	if data, err := readStream(strings.NewReader(strings.Repeat("x", 10)), StdinName, 10); err != nil || len(data) != 10 {
		t.Errorf("10 bytes within a bound of 10: %d, %v", len(data), err)
	}
}
