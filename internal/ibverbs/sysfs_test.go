package ibverbs

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"

	"github.com/ibkey/ibkey/internal/fsread"
)

const mlx5Tree = "../../testdata/sysfs/mlx5"

func TestDeviceNamesFollowSymlinks(t *testing.T) {
	s := Open(mlx5Tree)
	names, err := s.DeviceNames()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names, " "); got != "irdma0 mlx5_0 mlx5_1 mlx5_2" {
		t.Errorf("DeviceNames = %q", got)
	}
}

func TestDevice(t *testing.T) {
	s := Open(mlx5Tree)
	d, err := s.Device("mlx5_0")
	if err != nil {
		t.Fatal(err)
	}
	if d.NodeType.Value != (Enum{1, "CA"}) || d.NodeGUID.Value != 0x0002c90300a1b2c0 ||
		d.NodeDesc.Value != "node01 HCA-1" || d.FWVer.Value != "20.31.1014" || d.HCAType.Value != "MT4123" {
		t.Errorf("Device = %+v", d)
	}
	if len(d.Ports) != 1 || d.Ports[0] != 1 {
		t.Errorf("Ports = %v", d.Ports)
	}
	iw, err := s.Device("irdma0")
	if err != nil {
		t.Fatal(err)
	}
	if iw.HCAType.OK() || !strings.Contains(iw.HCAType.Missing, "hca_type: does not exist") {
		t.Errorf("a missing optional file is absent with the reason, got %+v", iw.HCAType)
	}
	if _, err := s.Device("mlx5_9"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing device: %v", err)
	}
}

// openRecorder fails the test if anything is opened.
type openRecorder struct{ t *testing.T }

func (o openRecorder) Open(name string) (fs.File, error) {
	o.t.Errorf("opened %q", name)
	return nil, fs.ErrNotExist
}

func TestBadDeviceNamesOpenNothing(t *testing.T) {
	s := FromFS(openRecorder{t}, "rec")
	for _, name := range []string{"", ".", "..", "../../etc", "mlx5_0/../..", "a/b", "x\x00y", "a\\b", strings.Repeat("x", 64), "tab\there"} {
		if _, err := s.Device(name); !errors.Is(err, ErrBadName) {
			t.Errorf("Device(%q) = %v, want ErrBadName", name, err)
		}
		if _, err := s.Port(name, 1); !errors.Is(err, ErrBadName) {
			t.Errorf("Port(%q) = %v, want ErrBadName", name, err)
		}
		if _, err := s.PKeys(name, 1); !errors.Is(err, ErrBadName) {
			t.Errorf("PKeys(%q) = %v, want ErrBadName", name, err)
		}
		if c := s.ReadCounter(name, 1, "symbol_error"); !errors.Is(c.Err, ErrBadName) {
			t.Errorf("ReadCounter(%q) = %v, want ErrBadName", name, c.Err)
		}
	}
}

func TestPort(t *testing.T) {
	s := Open(mlx5Tree)
	p, err := s.Port("mlx5_1", 2)
	if err != nil {
		t.Fatal(err)
	}
	if p.State != (Enum{1, "DOWN"}) || p.PhysState.Value != (Enum{3, "Disabled"}) || p.LinkLayer.Value != "InfiniBand" || !p.HasPKeys {
		t.Errorf("Port = %+v", p)
	}
	p, err = s.Port("mlx5_0", 1)
	if err != nil {
		t.Fatal(err)
	}
	if p.LID.Value != 1 || p.SMLID.Value != 1 || p.CapMask.Value != 0x2651e848 || p.Rate.Value.Speed != "EDR" ||
		p.GID0.Value.PortGUID() != 0x0002c90300a1b2c1 || !p.HasCounters {
		t.Errorf("Port = %+v", p)
	}
	if p, err = s.Port("mlx5_2", 1); err != nil || p.HasCounters {
		t.Errorf("a port without counters/: %+v, %v", p, err)
	}
	if p, err = s.Port("irdma0", 1); err != nil || p.HasPKeys {
		t.Errorf("iWARP port has no pkeys/: %+v, %v", p, err)
	}
	if _, err := s.Port("mlx5_0", 2); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "ports/2/state") {
		t.Errorf("missing port: %v", err)
	}
}

func TestPKeys(t *testing.T) {
	s := Open(mlx5Tree)
	tab, err := s.PKeys("mlx5_0", 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(tab) != 128 {
		t.Fatalf("len = %d, want 128 (numeric order, not 0 1 10 100 ...)", len(tab))
	}
	want := []uint16{0xffff, 0x8001, 0x0002, 0x0000, 0x8005, 0x0005, 0x8000, 0x0000, 0x8010, 0}
	for i, w := range want {
		if tab[i].Index != i || tab[i].Value != w || tab[i].Err != nil {
			t.Errorf("entry %d = %+v, want %#04x", i, tab[i], w)
		}
	}
	tab, err = s.PKeys("mlx5_1", 1)
	if err != nil {
		t.Fatal(err)
	}
	if tab[3].Err == nil || !strings.Contains(tab[3].Err.Error(), "symbolic links") {
		t.Errorf("unreadable entry: %+v", tab[3])
	}
	if tab[4].Value != 0x0003 || tab[4].Err != nil {
		t.Errorf("entry after the unreadable one: %+v", tab[4])
	}
	if _, err := s.PKeys("irdma0", 1); !errors.Is(err, ErrNoTable) {
		t.Errorf("iWARP: %v, want ErrNoTable", err)
	}
}

func TestPKeysInjectedErrors(t *testing.T) {
	m := fstest.MapFS{
		"class/infiniband/d/ports/1/pkeys/0":  {Data: []byte("0xffff\n")},
		"class/infiniband/d/ports/1/pkeys/1":  {Data: []byte("garbage\n")},
		"class/infiniband/d/ports/1/pkeys/3":  {Data: []byte("0x8001")},
		"class/infiniband/d/ports/1/pkeys/x":  {Data: []byte("0x8001")},
		"class/infiniband/d/ports/1/pkeys/04": {Data: []byte("0x8001")},
		"class/infiniband/d/ports/1/pkeys/2":  {Data: []byte("0x8002")},
	}
	s := FromFS(eioFS{m, "class/infiniband/d/ports/1/pkeys/2"}, "m")
	tab, err := s.PKeys("d", 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(tab) != 4 {
		t.Fatalf("len %d: only files named 0..N count", len(tab))
	}
	if tab[0].Value != 0xffff || tab[0].Err != nil || tab[1].Err == nil || tab[3].Value != 0x8001 {
		t.Errorf("table = %+v", tab)
	}
	if tab[2].Err == nil || !strings.Contains(tab[2].Err.Error(), "EIO") {
		t.Errorf("EIO entry = %+v", tab[2])
	}
}

// eioFS fails reads of one file with EIO, as a device that refuses a query does.
type eioFS struct {
	fstest.MapFS
	bad string
}

func (e eioFS) Open(name string) (fs.File, error) {
	f, err := e.MapFS.Open(name)
	if err != nil || name != e.bad {
		return f, err
	}
	return eioFile{f}, nil
}

type eioFile struct{ fs.File }

func (eioFile) Read([]byte) (int, error) { return 0, &fs.PathError{Op: "read", Err: syscall.EIO} }

func TestSimulatorTreeWithoutNewlines(t *testing.T) {
	s := Open("../../testdata/sysfs/simulator")
	p, err := s.Port("ibsim0", 1)
	if err != nil {
		t.Fatal(err)
	}
	if p.State.Name != "ACTIVE" || p.Rate.Value.Width != "4X" || p.Rate.Value.Speed != "" || p.LID.Value != 2 {
		t.Errorf("Port = %+v", p)
	}
	tab, err := s.PKeys("ibsim0", 1)
	if err != nil || len(tab) != 64 || tab[1].Value != 0x8001 {
		t.Errorf("PKeys = %v, %v", tab[:3], err)
	}
	if c := s.ReadCounter("ibsim0", 1, "port_rcv_constraint_errors"); c.Err != nil || c.Value != 4 || CounterWidths["port_rcv_constraint_errors"] != 8 {
		t.Errorf("counter = %+v", c)
	}
}

func TestReadCounter(t *testing.T) {
	s := Open(mlx5Tree)
	c := s.ReadCounter("mlx5_1", 1, "port_rcv_constraint_errors")
	if c.Err != nil || c.Value != 255 || CounterWidths["port_rcv_constraint_errors"] != 8 {
		t.Errorf("counter = %+v", c)
	}
	c = s.ReadCounter("mlx5_2", 1, "port_rcv_constraint_errors")
	if c.Err == nil || !strings.Contains(c.Err.Error(), "does not exist") {
		t.Errorf("a counter on a port without counters/ is an error, not 0: %+v", c)
	}
	for _, name := range []string{"../state", "..", "a/b"} {
		if c := s.ReadCounter("mlx5_0", 1, name); c.Err == nil {
			t.Errorf("ReadCounter(%q) must refuse", name)
		}
	}
	m := fstest.MapFS{"class/infiniband/d/ports/1/counters/symbol_error": {Data: []byte("N/A (no PMA)\n")},
		"class/infiniband/d/ports/1/counters/link_downed": {Data: []byte("256\n")}}
	// N/A (no PMA) is never 0: the file's words are said as such (issue 24: it was a
	// "not a decimal number" read error); what they mean depends on the port
	// (query.SysfsCounters: no PMA on this device, or on an InfiniBand port not read).
	if c := FromFS(m, "m").ReadCounter("d", 1, "symbol_error"); c.Err != nil || c.Unavailable != `counters/symbol_error holds "N/A (no PMA)"` {
		t.Errorf("N/A (no PMA) is unavailable with that reason, got %+v", c)
	}
	if c := FromFS(m, "m").ReadCounter("d", 1, "link_downed"); c.Err == nil {
		t.Errorf("256 does not fit an 8-bit counter, got %+v", c)
	}
}

func TestIPoIBInterfaces(t *testing.T) {
	ifs, unread, err := Open(mlx5Tree).IPoIBInterfaces()
	if err != nil || unread != nil {
		t.Fatal(err, unread)
	}
	var names []string
	for _, i := range ifs {
		names = append(names, i.Name)
	}
	if got := strings.Join(names, " "); got != "ib0 ib0.8001 ib0.8002 ib0.8004 ib1" {
		t.Errorf("IPoIB interfaces = %q (eth0 is not IPoIB)", got)
	}
	child := ifs[1]
	if child.PKey.Value != 0x8001 || child.Parent.Value != "ib0" || len(child.Address.Value) != 20 {
		t.Errorf("child = %+v", child)
	}
	if ifs[0].Parent.OK() {
		t.Errorf("a parent interface has no parent file: %+v", ifs[0].Parent)
	}
	if ifs, unread, err := FromFS(fstest.MapFS{}, "empty").IPoIBInterfaces(); err != nil || ifs != nil || unread != nil {
		t.Errorf("no class/net: %v %v %v", ifs, unread, err)
	}
}

// TestIPoIBInterfacesNotRead: a class/net entry whose type cannot be read or parsed
// (a dangling link, a type file missing, looping or garbage) is not read, with the
// reason, never left out as "not IPoIB" (red-team finding 3).
func TestIPoIBInterfacesNotRead(t *testing.T) {
	root := t.TempDir()
	net := root + "/" + ClassNet
	write := func(name, typ string) {
		if err := os.MkdirAll(net+"/"+name, 0o755); err != nil {
			t.Fatal(err)
		}
		if typ != "" {
			if err := os.WriteFile(net+"/"+name+"/type", []byte(typ+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	write("ib0", "32")
	write("eth0", "1")
	write("garbage", "x")
	write("notype", "")
	write("loop", "")
	if err := os.Symlink("type", net+"/loop/type"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../devices/gone", net+"/dangling"); err != nil {
		t.Fatal(err)
	}
	ifs, unread, err := Open(root).IPoIBInterfaces()
	if err != nil || len(ifs) != 1 || ifs[0].Name != "ib0" {
		t.Fatalf("interfaces %+v, %v", ifs, err)
	}
	want := map[string]string{"dangling": "gone", "garbage": "unparsable", "loop": "type", "notype": "type"}
	for _, u := range unread {
		if w, ok := want[u.Name]; !ok || !strings.Contains(u.Err.Error(), w) {
			t.Errorf("unread %s: %v (want a reason with %q)", u.Name, u.Err, w)
		}
		delete(want, u.Name)
	}
	if len(want) != 0 {
		t.Errorf("entries not reported as unread: %v (got %+v)", want, unread)
	}
}

// TestSymlinkEscapeRefused: a --sysfs tree whose node_desc and ports lead to /etc/passwd
// is refused with a reason, and nothing of the target reaches a value or a message.
func TestSymlinkEscapeRefused(t *testing.T) {
	root := t.TempDir()
	dev := root + "/devices/virtual/infiniband/x0"
	for _, d := range []string{dev + "/ports/1", root + "/class/infiniband"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink("../../devices/virtual/infiniband/x0", root+"/class/infiniband/x0"))
	must(os.WriteFile(dev+"/node_type", []byte("1: CA\n"), 0o644))
	must(os.Symlink("/etc/passwd", dev+"/node_desc"))
	must(os.Symlink("/etc", dev+"/ports/1/pkeys"))
	must(os.WriteFile(dev+"/ports/1/state", []byte("4: ACTIVE\n"), 0o644))
	s := Open(root)
	d, err := s.Device("x0")
	if err != nil || d.NodeType.Value.Name != "CA" {
		t.Fatalf("the kernel's own link must resolve: %+v, %v", d, err)
	}
	if d.NodeDesc.OK() || strings.Contains(d.NodeDesc.Missing, "root:") {
		t.Errorf("node_desc linked to /etc/passwd = %+v", d.NodeDesc)
	}
	p, err := s.Port("x0", 1)
	// The entry is there: a table not read (PKeys says why), never "no table".
	if err != nil || !p.HasPKeys {
		t.Errorf("pkeys/ linked to /etc counts as no table: %+v, %v", p, err)
	}
	_, err = s.PKeys("x0", 1)
	if err == nil || !strings.Contains(err.Error(), "outside") {
		t.Errorf("PKeys through a link to /etc = %v, want a refusal naming the escape", err)
	}
}

// TestOddValues: what real machines write. Trailing white space of any kind is
// trimmed (link_layer "InfiniBand\n\n"), a missing gids/0 is named as such, and a
// garbage value is quoted by its head only.
func TestOddValues(t *testing.T) {
	const dev = "class/infiniband/d/"
	m := fstest.MapFS{
		dev + "node_type":                    {Data: []byte("1: CA \n\n")},
		dev + "ports/1/state":                {Data: []byte("4: ACTIVE\r\n")},
		dev + "ports/1/link_layer":           {Data: []byte("InfiniBand\n\n")},
		dev + "ports/1/rate":                 {Data: []byte("100 Gb/sec (4X EDR)\t\n")},
		dev + "ports/1/pkeys/0":              {Data: []byte("0xffff\n\n")},
		dev + "ports/1/pkeys/1":              {Data: []byte(strings.Repeat("garbage ", 8192))},
		dev + "ports/1/counters/link_downed": {Data: []byte("7\n \n")},
	}
	s := FromFS(m, "m")
	d, err := s.Device("d")
	if err != nil || d.NodeType.Value != (Enum{1, "CA"}) {
		t.Errorf("Device = %+v, %v", d, err)
	}
	p, err := s.Port("d", 1)
	if err != nil {
		t.Fatal(err)
	}
	if p.LinkLayer.Value != "InfiniBand" || p.State.Name != "ACTIVE" || p.Rate.Value.Speed != "EDR" {
		t.Errorf("Port = %+v", p)
	}
	if p.GID0.OK() || p.GID0.Missing != "gids/0: does not exist" {
		t.Errorf("a missing gids/0 = %q, want it named", p.GID0.Missing)
	}
	tab, err := s.PKeys("d", 1)
	if err != nil || len(tab) != 2 || tab[0].Value != 0xffff || tab[0].Err != nil || tab[1].Err == nil {
		t.Fatalf("PKeys = %+v, %v", tab, err)
	}
	if msg := tab[1].Err.Error(); len(msg) > 120 || !strings.Contains(msg, `"garbage garbage`) || !strings.Contains(msg, `"... (truncated) is not a hex number`) {
		t.Errorf("a 64 KiB garbage entry is quoted whole or not at all: %d bytes: %.200s", len(msg), msg)
	}
	if c := s.ReadCounter("d", 1, "link_downed"); c.Err != nil || c.Value != 7 {
		t.Errorf("counter = %+v", c)
	}
}

// TestDanglingDevice: a class/infiniband entry whose target is missing (a saved tree
// that did not capture it) is named as a dangling link, not "does not exist".
func TestDanglingDevice(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(root+"/class/infiniband", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../devices/virtual/infiniband/scif0", root+"/class/infiniband/scif0"); err != nil {
		t.Fatal(err)
	}
	s := Open(root)
	names, err := s.DeviceNames()
	if err != nil || len(names) != 1 || names[0] != "scif0" {
		t.Fatalf("DeviceNames = %v, %v", names, err)
	}
	_, err = s.Device("scif0")
	var de *DanglingError
	if !errors.As(err, &de) || errors.Is(err, fs.ErrNotExist) || de.Target != "../../devices/virtual/infiniband/scif0" ||
		!strings.Contains(err.Error(), "scif0: is a symlink to ../../devices/virtual/infiniband/scif0, which does not exist (a dangling link)") {
		t.Errorf("Device(scif0) = %v", err)
	}
}

// TestFSBound: a file of an fs.FS tree (the demo host) is read up to
// fsread.AttrMax bytes, as on disk; one byte more is an error, not a truncation.
func TestFSBound(t *testing.T) {
	fsys := fstest.MapFS{
		"a/ok":  {Data: []byte(strings.Repeat("x", fsread.AttrMax))},
		"a/big": {Data: []byte(strings.Repeat("x", fsread.AttrMax+1))},
	}
	s := FromFS(fsys, "test")
	if b, err := s.readRaw("a/ok"); err != nil || len(b) != fsread.AttrMax {
		t.Errorf("ok: %d bytes, %v", len(b), err)
	}
	var fe *fsread.Error
	if b, err := s.readRaw("a/big"); !errors.As(err, &fe) {
		t.Errorf("big: %d bytes, %v: want a too-large error", len(b), err)
	}
}

// TestPKeysDirNotRead: a pkeys entry that exists but cannot be read as a directory (a
// link to itself, a dangling link, a plain file) is a table not read, with the
// reason; only a pkeys/ that is not there at all means "no table" (ErrNoTable: the
// kernel writes none for a table length of 0, drivers/infiniband/core/sysfs.c). It
// was taken for a missing directory: "pkeys/ does not exist", and on an iWARP device
// "no P_Key table", a definite answer.
func TestPKeysDirNotRead(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(pkeys string) error
		want string
	}{
		{"link to itself", func(p string) error { return os.Symlink("pkeys", p) }, "too many levels of symbolic links"},
		{"dangling link", func(p string) error { return os.Symlink("../gone", p) }, "which does not exist (a dangling link)"},
		{"plain file", func(p string) error { return os.WriteFile(p, []byte("0xffff\n"), 0o644) }, "not a directory"},
		// Refused, and nothing of its target read (Open): a table not read, never "no
		// table" (on an iWARP device that was a definite "P_Keys do not apply").
		{"link out of the tree", func(p string) error { return os.Symlink(t.TempDir(), p) }, "outside"},
	} {
		root := t.TempDir()
		port := root + "/class/infiniband/d/ports/1"
		if err := os.MkdirAll(port, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(port+"/state", []byte("4: ACTIVE\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := tc.make(port + "/pkeys"); err != nil {
			t.Fatal(err)
		}
		s := Open(root)
		p, err := s.Port("d", 1)
		if err != nil {
			t.Fatal(err)
		}
		if !p.HasPKeys {
			t.Errorf("%s: HasPKeys false: a pkeys entry that exists is a table, not read", tc.name)
		}
		_, err = s.PKeys("d", 1)
		if err == nil || errors.Is(err, ErrNoTable) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: PKeys = %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
	// No pkeys entry at all: no table.
	root := t.TempDir()
	port := root + "/class/infiniband/d/ports/1"
	if err := os.MkdirAll(port, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(port+"/state", []byte("4: ACTIVE\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := Open(root)
	if p, err := s.Port("d", 1); err != nil || p.HasPKeys {
		t.Errorf("no pkeys/: Port = %+v, %v; want HasPKeys false", p, err)
	}
	if _, err := s.PKeys("d", 1); !errors.Is(err, ErrNoTable) {
		t.Errorf("no pkeys/: PKeys = %v, want ErrNoTable", err)
	}
}
