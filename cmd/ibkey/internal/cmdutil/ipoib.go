package cmdutil

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ibkey/ibkey/internal/query"
)

// IPoIB interface names where a device is expected: `ibkey pkeys ib0.8020` and
// `can-talk ib0.8001 ...` name the port the interface runs on (matched by its
// hardware address's GID, as query.Host.Load maps interfaces) and, for can-talk, the
// P_Key it uses.

// ResolvedInterface is an IPoIB interface named in place of a device.
type ResolvedInterface struct {
	query.IPoIB
	Port query.PortRef
}

// Describe is one line for stderr: where the interface runs and with which entry.
func (r *ResolvedInterface) Describe() string {
	entry := "not in the table: it cannot come up"
	if r.Index >= 0 {
		entry = fmt.Sprintf("index %d, %s", r.Index, r.Membership)
	}
	return fmt.Sprintf("%s: IPoIB interface on %s, P_Key %s (%s)", r.Name, r.Port, r.PKey, entry)
}

// ResolveDeviceOrInterface returns sel unchanged when it names a device of host (or
// none); when its device is an IPoIB interface of host instead, the selector of the
// interface's port and the interface. A name that is neither is an environment error
// (exit 3) listing the devices and the IPoIB interfaces. Devices that cannot be read
// are warned about on n: the interface found on a port that was read is the answer
// (its port is read whole); one not found may be on them (exit 4).
func ResolveDeviceOrInterface(host *query.Host, sel query.Selector, n *Notices) (query.Selector, *ResolvedInterface, error) {
	if sel.Device == "" {
		return sel, nil, nil
	}
	names, err := host.Sys.DeviceNames()
	if err != nil {
		// Let the command report a host without devices as it always has.
		return sel, nil, nil
	}
	for _, n := range names {
		if n == sel.Device {
			return sel, nil, nil
		}
	}
	ifs, err := host.Sys.IPoIBInterfaces()
	if err != nil {
		return sel, nil, &query.EnvError{Msg: err.Error()}
	}
	var ifNames []string
	found := false
	for _, nif := range ifs {
		ifNames = append(ifNames, nif.Name)
		found = found || nif.Name == sel.Device
	}
	notFound := func(why string) error {
		devs, ipoib := "none", "none"
		if len(names) > 0 {
			devs = strings.Join(names, ", ")
		}
		if len(ifNames) > 0 {
			ipoib = strings.Join(ifNames, ", ")
		}
		return &query.EnvError{Msg: fmt.Sprintf("%s (devices: %s; IPoIB interfaces: %s)", why, devs, ipoib)}
	}
	if !found {
		if err := host.Sys.NetEntryError(sel.Device); err != nil {
			// class/net has the name but it could not be read (a dangling link).
			return sel, nil, &IncompleteError{Unchecked: []string{fmt.Sprintf("%s may be an IPoIB interface, but %v", sel.Device, err)}}
		}
		return sel, nil, notFound(fmt.Sprintf("no device or IPoIB interface %s", sel.Device))
	}
	if sel.HasPort {
		return sel, nil, &query.UsageError{Msg: fmt.Sprintf("%s/%d: %s is an IPoIB interface, which runs on one port: give it without /PORT", sel.Device, sel.Port, sel.Device)}
	}
	views, err := host.Load(query.Selector{}, query.LoadOptions{Tables: true, Interfaces: true})
	var partial *query.PartialError
	if err != nil && !errors.As(err, &partial) {
		return sel, nil, err
	}
	if partial != nil {
		for _, l := range partial.Lines() {
			n.Warn("not read while looking for " + sel.Device + ": " + l)
		}
	}
	for _, v := range views {
		for _, ip := range v.Interfaces {
			if ip.Name == sel.Device {
				r := &ResolvedInterface{IPoIB: ip, Port: v.Ref()}
				return query.Selector{Device: r.Port.Device, Port: r.Port.Port, HasPort: true}, r, nil
			}
		}
	}
	if partial != nil {
		return sel, nil, &IncompleteError{Unchecked: []string{fmt.Sprintf("IPoIB interface %s matches no port read (its address names no read port's GID 0): it may run on a device that could not be read", sel.Device)}}
	}
	return sel, nil, notFound(fmt.Sprintf("IPoIB interface %s matches no port (its address names no port's GID 0)", sel.Device))
}
