package query

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/ibverbs"
	"github.com/ibkey/ibkey/internal/textsafe"
)

// EndpointSources say where can-talk endpoints are resolved. Each is used only by the
// endpoint kinds that need it, and only when such an endpoint is given:
//
//   - DEV/PORT: Host (sysfs);
//   - a GUID: Partitions when set (the table OpenSM would program), else the sweep;
//   - node=NAME: the sweep;
//   - lid=N[,port=P]: the sweep (the port with that LID);
//   - P_Key values and options-only: nothing.
//
// An endpoint whose source is missing is bad input (*UsageError wrapping an
// *EndpointSourceError, see CheckResolvable).
type EndpointSources struct {
	Host       func() *Host
	Partitions *Partitions
	// Sweep returns the fabric that node=, GUID (without Partitions) and lid=
	// endpoints are found in: a saved sweep or a live one. Called at
	// most once. A partial sweep may come with an error: endpoints it holds are still
	// resolved, and the error is returned only when one is missing.
	Sweep func() (*fabric.Fabric, error)
	// SweepName names the sweep in notes: "fabric.json", "a sweep run now".
	SweepName string
}

// NeedsFabric reports whether resolving these specs needs a fabric (a live transport
// or a saved sweep), and whether a GUID is among the reasons; partitions says whether a
// partitions.conf resolves GUIDs.
func NeedsFabric(partitions bool, specs ...check.EndpointSpec) (need, guid bool) {
	for _, s := range specs {
		switch {
		case s.Kind == check.EndpointLID, s.Kind == check.EndpointNode:
			need = true
		case s.Kind == check.EndpointGUID && !partitions:
			need, guid = true, true
		}
	}
	return need, guid
}

// findSwept resolves a node=, GUID or lid= spec to a port of the sweep f, which came
// with err (a partial sweep).
func findSwept(f *fabric.Fabric, err error, s check.EndpointSpec) (*fabric.Fabric, *fabric.Node, *fabric.Port, error) {
	if f == nil {
		if err == nil {
			err = &EnvError{Msg: "no fabric to resolve the endpoint in"}
		}
		return nil, nil, nil, err
	}
	// A partial sweep: a port not in it may be in the part not read, so its absence
	// is unknown (exit 4), not a missing port (exit 3).
	partial := func(e error) error {
		why := fabric.NotCheckedSummary(f.NotRead(false)) // a saved sweep that was partial
		if err != nil {
			why = err.Error()
		}
		if why != "" {
			return &UnknownError{Msg: fmt.Sprintf("%v; the sweep is partial (%s), the port may be in the part not read", e, why)}
		}
		return e
	}
	var (
		nodes []*fabric.Node
		port  *fabric.Port
	)
	switch s.Kind {
	case check.EndpointLID:
		n, p, err := FindLID(f, s.LID)
		if err != nil {
			return nil, nil, nil, &UsageError{Msg: fmt.Sprintf("endpoint %q: %v: name the port by node= or its port GUID", s, err), Err: err}
		}
		if n == nil {
			return nil, nil, nil, partial(&NotFoundError{What: "LID", Name: strconv.Itoa(int(s.LID)) + " in the sweep", Available: lidRanges(f)})
		}
		nodes, port = []*fabric.Node{n}, p
	case check.EndpointGUID:
		nodes = f.FindNodes(s.GUID.String())
		if len(nodes) == 0 {
			return nil, nil, nil, partial(&NotFoundError{What: "node", Name: "with node or port GUID " + s.GUID.String() + " in the sweep", Available: nodeNames(f)})
		}
		for _, p := range nodes[0].Ports {
			if p.GUID == s.GUID && nodes[0].IsEndPort(p) {
				port = p
			}
		}
		// A port GUID names its port: port= may only repeat it (a node GUID is
		// the form that takes port=; a switch's port 0 may have its node's GUID).
		if port != nil && s.PortNum != nil && *s.PortNum != port.Num && s.GUID != nodes[0].GUID {
			n := nodes[0]
			return nil, nil, nil, &UsageError{Msg: fmt.Sprintf("endpoint %q: %s is the port GUID of %s, not of port %d: drop port=, or name port %d by the node GUID (%s,port=%d)",
				s, s.GUID, f.Label(check.PortID{Node: n.GUID, Port: port.Num}), *s.PortNum, *s.PortNum, n.GUID, *s.PortNum)}
		}
	case check.EndpointNode:
		nodes = f.FindNodes(s.Node)
		if len(nodes) == 0 {
			return nil, nil, nil, partial(&NotFoundError{What: "node", Name: strconv.Quote(s.Node) + " in the sweep", Available: nodeNames(f)})
		}
	}
	if len(nodes) > 1 {
		var gs []string
		for _, n := range nodes {
			gs = append(gs, n.GUID.String())
		}
		return nil, nil, nil, &UsageError{Msg: fmt.Sprintf("endpoint %q: %d nodes match (%s): name one by its node GUID, e.g. node=%s", s, len(nodes), strings.Join(gs, ", "), gs[0])}
	}
	n := nodes[0]
	if s.PortNum != nil {
		p := n.Port(*s.PortNum)
		if p == nil {
			return nil, nil, nil, &NotFoundError{What: "port", Name: fmt.Sprintf("%d on %s", *s.PortNum, n.Name()), Available: portNums(n.Ports)}
		}
		if !n.IsEndPort(p) {
			// A switch's external port sends and receives no packets of its own:
			// the switch's QPs are on its management port 0 (IsEndPort), and an
			// external port's table only filters what crosses it, which can-talk
			// checks on the switch port facing each end.
			return nil, nil, nil, &UsageError{Msg: fmt.Sprintf("endpoint %q: port %d of switch %s is an external port: no QP is there (a switch's QPs are on port 0: port=0); the port it faces is %s",
				s, p.Num, n.Name(), facing(f, p))}
		}
		return f, n, p, nil
	}
	if port != nil {
		return f, n, port, nil
	}
	if n.Type == check.NodeSwitch {
		return f, n, n.Port(0), nil // the switch's own (management) port
	}
	// A CA named by node: its one port with a link, else its one port.
	var linked []*fabric.Port
	for _, p := range n.Ports {
		if p.Peer != nil || p.PKeys != nil {
			linked = append(linked, p)
		}
	}
	switch {
	case len(linked) == 1:
		return f, n, linked[0], nil
	case len(n.Ports) == 1:
		return f, n, n.Ports[0], nil
	}
	nums := portNums(linked)
	if len(nums) == 0 {
		nums = portNums(n.Ports)
	}
	return nil, nil, nil, &UsageError{Msg: fmt.Sprintf("endpoint %q: %s has ports %s: add ,port=P", s, n.Name(), strings.Join(nums, ", "))}
}

// FindLID is the end port whose LID range (LID to LID+2^LMC-1) holds lid; nil when
// none does. A LID names a port only within its subnet: ports outside the swept subnet
// (another SM's, which may reuse the same LIDs) are not considered. Two end ports of
// the subnet whose ranges hold lid (a LID assigned twice) are a *UsageError naming
// them: the LID names neither.
func FindLID(f *fabric.Fabric, lid uint16) (*fabric.Node, *fabric.Port, error) {
	var (
		nodes  []*fabric.Node
		ports  []*fabric.Port
		labels []string
	)
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			id := check.PortID{Node: n.GUID, Port: p.Num}
			if !n.IsEndPort(p) || !f.InSubnet(id) {
				continue
			}
			if check.LIDRangeHolds(p.LID, p.LMC, lid) {
				nodes, ports = append(nodes, n), append(ports, p)
				labels = append(labels, fmt.Sprintf("%s (LID %d, LMC %d)", f.Label(id), p.LID, p.LMC))
			}
		}
	}
	switch len(ports) {
	case 0:
		return nil, nil, nil
	case 1:
		return nodes[0], ports[0], nil
	}
	return nil, nil, &UsageError{Msg: fmt.Sprintf("LID %d is held by %d ports of the subnet (%s): it names none of them",
		lid, len(ports), strings.Join(textsafe.Capped(labels, maxListed), ", "))}
}

// facing names the port p is cabled to, or says it has none.
func facing(f *fabric.Fabric, p *fabric.Port) string {
	if p.Peer == nil {
		return "not known (no link read)"
	}
	return f.Label(*p.Peer)
}

// maxListed bounds the names listed in a not-found error.
const maxListed = 12

func nodeNames(f *fabric.Fabric) []string {
	var out []string
	for _, n := range f.Nodes {
		out = append(out, n.Name())
	}
	sort.Strings(out)
	return textsafe.Capped(out, maxListed)
}

func lidRanges(f *fabric.Fabric) []string {
	var lids []int
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			// Not another subnet's LIDs (FindLID).
			if n.IsEndPort(p) && p.LID != 0 && f.InSubnet(check.PortID{Node: n.GUID, Port: p.Num}) {
				lids = append(lids, int(p.LID))
			}
		}
	}
	sort.Ints(lids)
	if len(lids) == 0 {
		return []string{"none: no LIDs are assigned (has a Subnet Manager run?)"}
	}
	return textsafe.Capped(IndexRanges(lids), maxListed)
}

func portNums(ports []*fabric.Port) []string {
	var out []string
	for _, p := range ports {
		out = append(out, strconv.Itoa(p.Num))
	}
	return out
}

// sweptPortView is a port of a sweep as the PortView the can-talk rules and renderers
// take: named NODE/PORT by its node description, its table decoded, with the warnings
// a port read from sysfs would get.
func sweptPortView(n *fabric.Node, p *fabric.Port) *PortView {
	d := &ibverbs.Device{
		Name:     n.Name(),
		NodeGUID: ibverbs.Opt[ibverbs.GUID]{Value: ibverbs.GUID(n.GUID)},
		NodeDesc: ibverbs.Opt[string]{Value: n.Description},
	}
	// The node type as a device read over MADs has it (fabricDevice); an unset Opt
	// would read as a present type 0.
	d.NodeType.Missing = "node type not in the sweep"
	for num := uint8(1); num <= 3; num++ {
		if t, _ := check.NodeTypeOf(num); t == n.Type {
			d.NodeType = ibverbs.Opt[ibverbs.Enum]{Value: ibverbs.Enum{Num: int(num), Name: t.Word()}}
		}
	}
	state := map[string]int{check.StateDown: ibverbs.StateDown, check.StateInit: ibverbs.StateInit,
		check.StateArmed: ibverbs.StateArmed, check.StateActive: ibverbs.StateActive}
	port := &ibverbs.Port{
		Device:    d.Name,
		Num:       p.Num,
		State:     ibverbs.Enum{Num: state[p.State], Name: p.State},
		LinkLayer: ibverbs.Opt[string]{Value: "InfiniBand"},
		LID:       ibverbs.Opt[uint16]{Value: p.LID},
		SMLID:     ibverbs.Opt[uint16]{Value: p.SMLID},
		HasPKeys:  p.TableSize > 0,
	}
	v := &PortView{Device: d, Port: port, Fabric: &FabricPort{Address: "DR path " + n.Path, NodeGUID: n.GUID}}
	switch {
	case p.PKeys != nil:
		v.Table = tableOf(p.PKeys)
	case p.PKeysError != "":
		v.TableMissing = "P_Key table not read in the sweep: " + p.PKeysError
	default:
		v.TableMissing = "P_Key table not read in the sweep"
	}
	v.Warnings = portWarnings(v)
	return v
}

// describeSwept says which port an endpoint resolved to, for a note.
func describeSwept(f *fabric.Fabric, s check.EndpointSpec, n *fabric.Node, p *fabric.Port, where string) string {
	var facts []string
	if p.GUID != 0 {
		facts = append(facts, "port GUID "+p.GUID.String())
	}
	if p.LID != 0 {
		facts = append(facts, fmt.Sprintf("LID %d", p.LID))
	}
	if p.State != "" {
		facts = append(facts, p.State)
	}
	return fmt.Sprintf("%s is %s (%s), %s", s, f.Label(check.PortID{Node: n.GUID, Port: p.Num}), strings.Join(facts, ", "), where)
}
