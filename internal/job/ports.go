package job

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/query"
	"github.com/ibkey/ibkey/internal/textsafe"
)

// PortFromView turns a port read from sysfs (or over MADs) into a job port of host.
func PortFromView(host string, v *query.PortView) *Port {
	p := &Port{Host: host, Device: v.Port.Device, Num: v.Port.Num, LinkLayer: v.LinkLayer(),
		State: v.Port.State.Name, Fabric: v.Fabric != nil}
	if v.Fabric != nil {
		p.Node = v.Fabric.NodeGUID
	}
	if v.Port.LID.OK() {
		p.LID = v.Port.LID.Value
	} else {
		p.LIDMissing = "lid not read: " + v.Port.LID.Missing
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
	if v.Fabric == nil {
		p.Interfaces, p.InterfacesRead = v.Interfaces, true
	}
	return p
}

// HostPorts reads every port of a host with its P_Key table; label names the host
// ("" for the local host). With some devices or ports unreadable it returns the
// ports of the others and what was not read (query.NotRead, the host side's one
// rule). A table or entries not read are the port's own (PortFromView: NoTable,
// TableEntry.Readable), which each library's pick judges on that port: they are not
// repeated here, where an Unread is a device or port that could be chosen (onHost).
//
// The devices no library on this machine can open (query.Host.Unopenable: in a
// container, those whose uverbs device the device plugin did not mount) are not the
// job's: their ports are left out, and closed says each with why. When that leaves
// no port, the error says so (a *query.EnvError: nothing here a library can use). A
// device for which that could not be checked keeps its ports and is also unread: a
// library that could choose it is not checked (UnreadPending).
func HostPorts(h *query.Host, label string) (ports []*Port, unread []Unread, closed []LeftOut, err error) {
	views, err := h.Load(query.Selector{}, query.LoadOptions{Tables: true, Interfaces: true})
	all, err := query.NotRead(views, err)
	if err != nil {
		return nil, nil, nil, err
	}
	var devs []string
	for _, v := range views {
		devs = append(devs, v.Port.Device)
	}
	for _, u := range all {
		devs = append(devs, u.Device)
	}
	devs = slices.Compact(slices.Sorted(slices.Values(devs)))
	shut, unknown := h.Unopenable(slices.DeleteFunc(devs, func(d string) bool { return d == "" }))
	for _, d := range slices.Sorted(maps.Keys(unknown)) {
		unread = append(unread, Unread{Host: label, Device: d, Port: -1, Name: "device " + d, Why: unknown[d]})
	}
	var says []string
	for _, d := range slices.Sorted(maps.Keys(shut)) {
		closed = append(closed, LeftOut{Device: d, Why: shut[d]})
		says = append(says, d+": "+shut[d])
	}
	for _, u := range all {
		if _, ok := shut[u.Device]; !ok && !u.Table && !u.Entries {
			unread = append(unread, Unread{Host: label, Device: u.Device, Port: u.Port, Name: u.What, Why: u.Err.Error()})
		}
	}
	var open []string
	for _, d := range devs {
		if _, ok := shut[d]; !ok && d != "" {
			open = append(open, d)
		}
	}
	maxPKeys, noMax := h.MaxPKeys(open)
	for _, v := range views {
		if _, ok := shut[v.Port.Device]; !ok {
			p := PortFromView(label, v)
			if p.LinkLayer == "Ethernet" {
				p.Driver, _ = query.DriverOf(h.Sys, p.Device)
			}
			p.MaxPKeys, p.MaxPKeysRead = maxPKeys[p.Device]
			p.MaxPKeysMissing = noMax[p.Device]
			ports = append(ports, p)
		}
	}
	if len(ports) == 0 && len(unread) == 0 && len(closed) > 0 {
		return nil, nil, closed, &query.EnvError{Msg: "no RDMA device here can be opened by a library: " + strings.Join(says, "; ")}
	}
	return ports, unread, closed, nil
}

// LeftOut is a device of this machine that no library here can open, with why
// (query.Host.Unopenable): HostPorts leaves its ports out of the job.
type LeftOut struct {
	Device string `json:"device"`
	Why    string `json:"why"`
}

// Unread is a device (Port -1) or a port of a host that could not be read. Device ""
// is one whose name is not known (a host, or a port of it, not read over the fabric):
// any library could choose it, whatever its device settings. A host that has no port
// read is one of the job's hosts all the same (Resolve, WantPartition).
type Unread struct {
	Host   string // "" for the local host
	Device string
	Port   int
	// Name names it, as a sentence about a library names it: "device scif0", "lid 9",
	// "--host node01".
	Name string
	// Why it was not read: "... (a dangling link)", "no answer via ...".
	Why string
	// Address is the fabric address read, for a --lid that did not answer: the
	// addresses not read for one reason are named together (query.SelectorList).
	Address *query.FabricSelector
	// Kind is what it is as a part of a fabric, named as the fabric commands name it:
	// fabric.UnreadNode for a fabric address or a swept port that did not answer
	// (its PortInfo not read), fabric.PartialSweep for what a sweep that missed links
	// may hide; "" for a device or port of a host (unread-device).
	Kind fabric.NotCheckedKind
}

// What says what and why, for the warning and the JSON's incomplete: "device scif0:
// ... (a dangling link)".
func (u Unread) What() string { return u.Name + ": " + u.Why }

// Names names us in a sentence: as --lid takes them when every one is a fabric
// address (query.SelectorList: "lid 10-40, lid 60"), else by Name; a few, then a count
// (query.MaxListed).
func Names(us []Unread) string {
	names := make([]string, len(us))
	addrs := make([]query.FabricSelector, 0, len(us))
	for i, u := range us {
		names[i] = u.Name
		if u.Address != nil {
			addrs = append(addrs, *u.Address)
		}
	}
	if len(addrs) == len(us) {
		return query.SelectorList(addrs)
	}
	return strings.Join(textsafe.Capped(names, query.MaxListed), ", ")
}

// maxUnreadPort bounds the ports an unread device is taken to have: a port number is
// one byte (IBA 14.2.5.3, sysfs ports/N).
const maxUnreadPort = 255

// unreadPortNums are the port numbers an unread device is taken to have: the one
// port not read, or 1, 2 and every number a setting mentions (0-255). A device
// filter treats the ports it does not name alike, and the libraries that look at
// port numbers otherwise look at 1 and 2 (MVAPICH2's RDMA_DEFAULT_MAX_PORTS, the
// first ACTIVE port), so these decide what every port 1-255 would.
func unreadPortNums(in Inputs, u Unread) []int {
	if u.Port >= 0 {
		return []int{u.Port}
	}
	nums := []int{1, 2}
	add := func(s string) {
		for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r < '0' || r > '9' }) {
			if n, err := strconv.Atoi(f); err == nil && n <= maxUnreadPort && !slices.Contains(nums, n) {
				nums = append(nums, n)
			}
		}
	}
	for _, v := range in.Env {
		add(v)
	}
	if in.Perftest != nil {
		add(strconv.Itoa(in.Perftest.Port))
	}
	slices.Sort(nums)
	return nums
}

// Choosers lists the libraries (by Name) whose results ws (Resolve, WantPartition,
// from Inputs.Unread holding u) say their device and port settings (NCCL_IB_HCA,
// UCX_NET_DEVICES, NVSHMEM_HCA_LIST, MV2_IBA_HCA, GASNET_IBV_PORTS,
// btl_openib_if_include/exclude, perftest -d/-i) could choose the unread device or
// port u of its host (setup.chooses, decided once per host by onHost). An empty
// list: no library checked can use what was not read, so the answer does not
// depend on it.
func Choosers(ws []*Result, u Unread) []string {
	var out []string
	for _, w := range ws {
		if w.chosen[u] {
			out = append(out, w.Library.Name)
		}
	}
	return out
}

// PortFromFabric turns a port of a sweep into a job port of host, a name MatchHost
// found the node by: when the node description is rdma-ndd's "HOST DEVICE", the port
// is host:DEVICE/N and the libraries' device filters apply to it. With host "", the
// host is the node's description (or GUID) and device filters do not apply.
func PortFromFabric(f *fabric.Fabric, n *fabric.Node, cp *fabric.Port, host string) *Port {
	host = cmp.Or(host, n.Name())
	dev, known := HostDevice(n.Description, host)
	dev = cmp.Or(dev, n.GUID.String())
	p := &Port{Host: host, Device: dev, Num: cp.Num, Fabric: true, DeviceKnown: known, Node: n.GUID,
		LinkLayer: "InfiniBand", State: cp.State, LID: cp.LID}
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

// HostDevice is the device part of a node description written as rdma-ndd's "HOST
// DEVICE" for host (the whole description, known false, otherwise).
func HostDevice(desc, host string) (dev string, known bool) {
	if fields := strings.Fields(desc); len(fields) == 2 && hostMatches(fields[0], host) {
		return fields[1], true
	}
	return desc, false
}

// MatchHost finds the channel adapters of host name in a sweep, by node description
// as rdma-ndd writes it (rdma-core rdma-ndd(8): nd_format "%h %d", the host name and
// the device): a description equal to name, or whose first word is name or name's
// fully qualified form (node01 matches "node01.cluster mlx5_0"); or by node or port
// GUID. A host with several adapters has several nodes.
func MatchHost(f *fabric.Fabric, name string) []*fabric.Node {
	if out := f.FindNodes(name); len(out) > 0 {
		return out
	}
	var out []*fabric.Node
	for _, n := range f.Nodes {
		if n.Type == check.NodeSwitch {
			continue
		}
		if fields := strings.Fields(n.Description); len(fields) > 0 && hostMatches(fields[0], name) {
			out = append(out, n)
		}
	}
	return out
}

// hostMatches reports whether the first word of a node description names host: the
// same name, or host's fully qualified name (the description carries the FQDN,
// Slurm's node name is short).
func hostMatches(word, host string) bool {
	if word == host {
		return true
	}
	short, _, ok := strings.Cut(word, ".")
	return ok && short == host
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
