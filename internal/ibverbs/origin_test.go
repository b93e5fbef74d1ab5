package ibverbs

import (
	"os"
	"path/filepath"
	"testing"
)

func TestOrigin(t *testing.T) {
	dir := t.TempDir()
	mk := func(p, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ln := func(target, p string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(dir, p)); err != nil {
			t.Fatal(err)
		}
	}
	mk("devices/virtual/infiniband/rxe0/parent", "dummy0\n")
	ln("../../devices/virtual/infiniband/rxe0", "class/infiniband/rxe0")
	mk("devices/pci0000:00/0000:00:01.0/infiniband/mlx5_0/node_type", "1: CA\n")
	mk("bus/pci/drivers/mlx5_core/.keep", "")
	ln("../../devices/pci0000:00/0000:00:01.0/infiniband/mlx5_0", "class/infiniband/mlx5_0")
	ln("../../../bus/pci/drivers/mlx5_core", "devices/pci0000:00/0000:00:01.0/infiniband/mlx5_0/device/driver")
	mk("class/infiniband/copied/parent", "eth0\n")
	mk("class/infiniband/mlx5_9/device/uevent", "PCI_CLASS=20700\nDRIVER=mlx5_core\nPCI_SLOT_NAME=0000:4b:00.0\n")
	mk("class/infiniband/unbound/device/uevent", "PCI_CLASS=20700\n")
	s := Open(dir)

	rxe := s.Origin("rxe0")
	if !rxe.Virtual || rxe.Parent.Value != "dummy0" || rxe.Driver.OK() {
		t.Errorf("rxe0: %+v, want virtual, parent dummy0, no driver", rxe)
	}
	mlx := s.Origin("mlx5_0")
	if mlx.Virtual || mlx.Parent.OK() || mlx.Driver.Value != "mlx5_core" {
		t.Errorf("mlx5_0: %+v, want a bus device with driver mlx5_core and no parent", mlx)
	}
	cp := s.Origin("copied")
	if cp.Virtual || cp.Parent.Value != "eth0" {
		t.Errorf("copied: %+v, want no link (a copied tree), parent eth0", cp)
	}
	if c := s.Origin("mlx5_9"); c.Driver.Value != "mlx5_core" {
		t.Errorf("mlx5_9: %+v, want driver mlx5_core from device/uevent (a tree copied without links)", c)
	}
	if u := s.Origin("unbound"); u.Driver.OK() || u.Driver.Missing == "" {
		t.Errorf("unbound: %+v, want no driver, with why (a uevent without DRIVER)", u)
	}
	if bad := s.Origin("../x"); bad.Virtual || bad.Parent.OK() {
		t.Errorf("../x: %+v, want nothing read", bad)
	}
}
