package query

import (
	"errors"
	"fmt"
	"slices"
)

// IPoIB interface names where a device is expected: `ibkey pkeys ib0.8020` and
// `can-talk ib0.8001 ...` name the port the interface runs on (matched by its
// hardware address's GID, as Load maps interfaces) and, for can-talk, the P_Key it
// uses.

// ResolvedInterface is an IPoIB interface named in place of a device.
type ResolvedInterface struct {
	IPoIB
	Port PortRef
}

// Describe is one line for stderr: where the interface runs and with which entry.
func (r *ResolvedInterface) Describe() string {
	entry := "not in the table: it cannot come up"
	switch {
	case r.Unknown != "":
		entry = "entry not known: " + r.Unknown
	case r.Index >= 0:
		entry = fmt.Sprintf("index %d, %s", r.Index, r.Membership)
	}
	return fmt.Sprintf("%s: IPoIB interface on %s, P_Key %s (%s)", r.Name, r.Port, r.PKey, entry)
}

// ResolveDeviceOrInterface returns sel unchanged when it names a device of h (or
// none); when its device is an IPoIB interface of h instead, the selector of the
// interface's port and the interface. A name that is neither is an *EnvError (exit 3)
// listing the devices and the IPoIB interfaces. Devices that cannot be read are passed
// to warn: the interface found on a port that was read is the answer (its port is read
// whole); one not found may be on them (*UnknownError, exit 4).
func (h *Host) ResolveDeviceOrInterface(sel Selector, warn func(string)) (Selector, *ResolvedInterface, error) {
	if sel.Device == "" {
		return sel, nil, nil
	}
	entries, err := h.Sys.DeviceNames()
	names, _ := deviceNames(entries)
	if err != nil || slices.Contains(names, sel.Device) {
		// A host without devices is reported by the command as it always has been.
		return sel, nil, nil
	}
	ifs, _, err := h.Sys.IPoIBInterfaces()
	if err != nil {
		return sel, nil, &EnvError{Msg: err.Error()}
	}
	var ifNames []string
	for _, nif := range ifs {
		ifNames = append(ifNames, nif.Name)
	}
	notFound := func(why string) error {
		return &EnvError{Msg: fmt.Sprintf("%s (devices: %s; IPoIB interfaces: %s)", why, joinOrNone(names), joinOrNone(ifNames))}
	}
	if !slices.Contains(ifNames, sel.Device) {
		if err := h.Sys.NetEntryError(sel.Device); err != nil {
			// class/net has the name but it could not be read (a dangling link).
			return sel, nil, notChecked(fmt.Sprintf("%s may be an IPoIB interface, but %v", sel.Device, err))
		}
		return sel, nil, notFound(fmt.Sprintf("no device or IPoIB interface %s", sel.Device))
	}
	if sel.HasPort {
		return sel, nil, &UsageError{Msg: fmt.Sprintf("%s/%d: %s is an IPoIB interface, which runs on one port: give it without /PORT", sel.Device, sel.Port, sel.Device)}
	}
	views, err := h.Load(Selector{}, LoadOptions{Tables: true, Interfaces: true})
	partial, ok := errors.AsType[*PartialError](err)
	if err != nil && !ok {
		return sel, nil, err
	}
	if partial != nil {
		for _, l := range partial.Lines() {
			warn("not read while looking for " + sel.Device + ": " + l)
		}
	}
	for _, v := range views {
		for _, ip := range v.Interfaces {
			if ip.Name == sel.Device {
				r := &ResolvedInterface{IPoIB: ip, Port: v.Ref()}
				return Selector{Device: r.Port.Device, Port: r.Port.Port, HasPort: true}, r, nil
			}
		}
	}
	if partial != nil {
		for _, u := range partial.Unread {
			if u.What == "interface "+sel.Device {
				return sel, nil, notChecked(fmt.Sprintf("IPoIB interface %s %v", sel.Device, u.Err))
			}
		}
		return sel, nil, notChecked(fmt.Sprintf("IPoIB interface %s matches no port read (its address names no read port's GID 0): it may run on a device that could not be read", sel.Device))
	}
	return sel, nil, notFound(fmt.Sprintf("IPoIB interface %s matches no port (its address names no port's GID 0)", sel.Device))
}

// notChecked is the *UnknownError (exit 4) of an answer that depends on what, said
// here, could not be read or checked.
func notChecked(what string) error {
	return &UnknownError{Msg: "incomplete: the answer depends on what was not checked: " + what}
}
