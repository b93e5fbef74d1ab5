package job

import (
	"errors"
	"fmt"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/query"
)

// PortFromView turns a port read from sysfs (or over MADs) into a job port of host.
func PortFromView(host string, v *query.PortView) *Port {
	p := &Port{Host: host, Device: v.Port.Device, Num: v.Port.Num, LinkLayer: v.LinkLayer(),
		State: v.Port.State.Name, Fabric: v.Fabric != nil}
	if v.Port.LID.OK() {
		p.LID = v.Port.LID.Value
	}
	switch {
	case v.Table != nil:
		p.Table = make([]check.TableEntry, len(v.Table.Entries))
		for i, e := range v.Table.Entries {
			p.Table[i] = check.TableEntry{Index: e.Index, PKey: e.PKey, Readable: e.Unreadable == ""}
		}
	case v.TableMissing != "":
		p.NoTable = v.TableMissing
	default:
		p.NoTable = "P_Key table not read"
	}
	return p
}

// HostPorts reads every port of a host with its P_Key table; label names the host
// ("" for the local host). With some devices unreadable it returns the ports of the
// others and the *query.PartialError that names them.
func HostPorts(h *query.Host, label string) ([]*Port, error) {
	views, err := h.Load(query.Selector{}, query.LoadOptions{Tables: true})
	var partial *query.PartialError
	if err != nil && !errors.As(err, &partial) {
		return nil, err
	}
	out := make([]*Port, len(views))
	for i, v := range views {
		out[i] = PortFromView(label, v)
	}
	return out, err
}

// PortFromFabric turns a port of a sweep into a job port; its host is the node's
// description (or GUID) and library device filters do not apply to it.
func PortFromFabric(f *fabric.Fabric, n *fabric.Node, cp *fabric.Port) *Port {
	host := n.Description
	if host == "" {
		host = n.GUID.String()
	}
	p := &Port{Host: host, Device: host, Num: cp.Num, Fabric: true, LinkLayer: "InfiniBand",
		State: cp.State, LID: cp.LID}
	switch {
	case cp.PKeys != nil:
		p.Table = make([]check.TableEntry, len(cp.PKeys))
		for i, k := range cp.PKeys {
			p.Table[i] = check.TableEntry{Index: i, PKey: k, Readable: true}
		}
	case cp.PKeysError != "":
		p.NoTable = fmt.Sprintf("P_Key table of %s not read in the sweep: %s", f.Label(check.PortID{Node: n.GUID, Port: cp.Num}), cp.PKeysError)
	default:
		p.NoTable = fmt.Sprintf("P_Key table of %s not read in the sweep", f.Label(check.PortID{Node: n.GUID, Port: cp.Num}))
	}
	return p
}

// Reach summarises who holds a partition in a sweep: end ports that are full and
// limited members (switch external ports, which mirror the port they face, are not
// counted).
func Reach(f *fabric.Fabric, key check.PKey) (full, limited int) {
	for _, m := range f.Members(key) {
		if !m.EndPort {
			continue
		}
		switch m.Membership {
		case "limited":
			limited++
		default:
			full++
		}
	}
	return full, limited
}
