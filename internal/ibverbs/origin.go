package ibverbs

import (
	"io/fs"
	"path"
	"strings"
)

// Origin is where a device comes from: a bus device with a driver, or a software
// device on a netdev. It decides rules that differ by driver (the Q_Key send rule).
type Origin struct {
	// Virtual: the device lives under devices/virtual (rdma_rxe, siw), not on a bus:
	// class/infiniband/NAME points there ("../../devices/virtual/infiniband/rxe0").
	// False when the tree has no symlink there (a copied tree).
	Virtual bool
	// Parent is the netdev a software device runs on (the `parent` file of rxe and siw).
	Parent Opt[string]
	// Driver is the basename of device/driver (mlx5_core), or where that is no link (a
	// tree copied without links, the demo host) device/uevent's DRIVER; absent for
	// software devices.
	Driver Opt[string]
}

// Origin reads a device's origin: the class symlink, `parent` and device/driver.
// Everything is optional; nothing here fails.
func (s *Sysfs) Origin(name string) Origin {
	var o Origin
	if err := CheckDeviceName(name); err != nil {
		o.Parent.Missing, o.Driver.Missing = err.Error(), err.Error()
		return o
	}
	if l, err := fs.ReadLink(s.fsys, s.devPath(name)); err == nil {
		o.Virtual = strings.Contains("/"+path.Clean(l)+"/", "/devices/virtual/")
	}
	o.Parent = optional(s, s.devPath(name), "parent", asString)
	if l, err := fs.ReadLink(s.fsys, s.devPath(name, "device", "driver")); err == nil {
		o.Driver.Value = path.Base(l)
	} else if d := ueventDriver(s, name); d != "" {
		o.Driver.Value = d
	} else {
		o.Driver.Missing = "device/driver: " + Describe(err)
	}
	return o
}

// ueventDriver is the DRIVER line of the device's uevent file, which the kernel writes
// for a device bound to a driver (drivers/base/core.c dev_uevent); "" without one.
func ueventDriver(s *Sysfs, name string) string {
	b, err := s.readRaw(s.devPath(name, "device", "uevent"))
	if err != nil {
		return ""
	}
	for l := range strings.Lines(string(b)) {
		if d, ok := strings.CutPrefix(l, "DRIVER="); ok {
			return trimValue([]byte(d))
		}
	}
	return ""
}
