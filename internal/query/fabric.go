package query

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/ibverbs"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"golang.org/x/sync/errgroup"
)

// Fabric reads any node's ports over SMPs (Get NodeInfo, NodeDescription, PortInfo,
// SwitchInfo, P_KeyTable) and turns the answers into the same PortViews the local
// commands render, so `pkeys --lid` and `pkeys DEV PORT` print alike.
type Fabric struct {
	T mad.Transport
	// Via names the transport in messages: `ibsim "sim" at HcaA`, `umad0 (mlx5_0/1)`.
	Via string
	// DirectedRouteFlag is how the caller's user asks for a directed route ("--dr"),
	// for the hint of a LID that got no answer (NoAnswerError). The command sets it:
	// this package names no flag. "" leaves it out of the hint.
	DirectedRouteFlag string
	// ListLIDs is how the caller's user lists the assigned LIDs ("'ibkey fabric
	// discover'"), for the same hint once a subnet manager has run; "" leaves it out.
	ListLIDs string
}

// FabricSelector picks ports of the node at Addr.
//
// Without a port: the port the address reaches. A LID belongs to one port (a CA's
// port, or a switch's port 0, its management port), so that is the port whose
// table `smpquery pkeys LID` prints; a directed route ends on one port of a CA, or
// at a switch (port 0).
//
// With Port: that port. A switch answers P_KeyTable for any of its ports (the port
// number is in the attribute modifier). A CA answers only for the port the SMP
// arrived on (IBA 14.2.5.7: the modifier's port is ignored), so another port of a
// CA is read through that port's own LID, taken from its PortInfo; a port without
// a LID (before an SM ran) needs a directed route that ends on it.
// (`smpquery pkeys LID PORT` prints the arrival port's table for every PORT of a CA.)
type FabricSelector struct {
	Addr     mad.Address
	Port     int
	HasPort  bool
	AllPorts bool // every port of the node (a switch's port 0 included)
}

func (s FabricSelector) String() string {
	switch {
	case s.AllPorts:
		return s.Addr.String() + " (all ports)"
	case s.HasPort:
		return fmt.Sprintf("%s port %d", s.Addr, s.Port)
	}
	return s.Addr.String()
}

// FabricPort is what the fabric says about a port beyond its PortView: where it was
// read and, on a switch's external ports, whether it enforces partitions.
type FabricPort struct {
	// Address is the address the port's data was read through: "lid 6",
	// "DR path 0,1,3".
	Address string
	// Addr is the address Address names, for reading the port again (watch).
	Addr     mad.Address
	NodeGUID check.GUID
	// Enforcement is PortInfo's partition enforcement bits (byte 43); nil on CA ports
	// and a switch's port 0, where they do not apply.
	Enforcement *check.Enforcement
}

// Load reads the selected ports of one node.
func (f *Fabric) Load(ctx context.Context, sel FabricSelector, opt LoadOptions) ([]*PortView, error) {
	return f.LoadMany(ctx, []FabricSelector{sel}, opt)
}

// loadNodes is how many nodes LoadMany reads at once: enough to keep a transport's
// window (umad 8 MADs, ibsim 64: mad.umadWindow, ibsimWindow) full while some nodes
// wait for a reply that may not come.
const loadNodes = 16

// LoadMany reads the ports of several nodes, several at once (loadNodes), each port
// once in the order first named: selectors may name one port twice (--lid 6,7 --port
// all, two LIDs of one node); it is kept, by node GUID and port number, at the first
// address that reached it.
//
// One selector fails with its own error. Of several, when some were read, it returns
// their views and a *PartialError with one Unread per selector that failed (Address
// set, in selector order): a read that did not answer is not read, never absent, as
// in a sweep (a LID nobody holds and a node that does not answer look alike: smpquery
// fails on both, "_do_madrpc failed; dport (Lid 50)"), and a port asked for that is
// not on its node (a *NotFoundError listing the node's ports) is not read there
// either, so the answer is incomplete (exit 4). When none was read (or ctx ended),
// it is an *EnvError naming each failure (exit 3) and wrapping them all (errors.Join):
// there is nothing to show, and the fabric or the addresses are wrong.
func (f *Fabric) LoadMany(ctx context.Context, sels []FabricSelector, opt LoadOptions) ([]*PortView, error) {
	views := make([][]*PortView, len(sels))
	errs := make([]error, len(sels))
	local := &localPortInfo{}
	var g errgroup.Group
	g.SetLimit(loadNodes)
	for i, s := range sels {
		g.Go(func() error {
			views[i], errs[i] = f.loadNode(ctx, local, s, opt)
			return nil
		})
	}
	g.Wait()
	if len(sels) == 1 {
		return views[0], errs[0]
	}
	out := uniquePorts(slices.Concat(views...))
	partial := &PartialError{}
	var failed []error
	for i, err := range errs {
		if err == nil {
			continue
		}
		s := sels[i]
		port := -1
		if s.HasPort {
			port = s.Port
		}
		// What names the address: Err says the rest (bareAt).
		partial.Unread = append(partial.Unread, Unread{What: s.String(), Port: port, Address: &s, Err: bareAt(err, s.Addr)})
		failed = append(failed, err)
	}
	switch {
	case len(failed) == 0:
		return out, nil
	case len(out) == 0 || ctx.Err() != nil:
		// Err holds each failure, so that errors.As finds what they wrap (each
		// address's *NoAnswerError, a missing port's *NotFoundError).
		return out, &EnvError{Msg: fmt.Sprintf("%d of %d addresses failed: %s", len(failed), len(sels), addressesFailed(failed)), Err: errors.Join(failed...)}
	}
	return out, partial
}

// nodeData is what is read once per node.
type nodeData struct {
	local *localPortInfo // the load's (LoadMany), for madError
	addr  mad.Address
	info  mad.NodeInfo
	desc  string
	sw    *mad.SwitchInfo
	dev   *ibverbs.Device
	// capMask0 is a switch's port 0 CapabilityMask, once read: it speaks for the
	// external ports too (see loadPort).
	capMask0 *uint32
}

func (f *Fabric) loadNode(ctx context.Context, local *localPortInfo, sel FabricSelector, opt LoadOptions) ([]*PortView, error) {
	ni, err := mad.GetNodeInfo(ctx, f.T, sel.Addr)
	if err != nil {
		return nil, f.madError(ctx, local, sel.Addr, err)
	}
	n := &nodeData{local: local, addr: sel.Addr, info: ni}
	ports, err := selectFabricPorts(sel, ni)
	if err != nil {
		return nil, err
	}
	// Both are read, so that both failures are said.
	var descErr, swErr error
	n.desc, descErr = mad.GetNodeDesc(ctx, f.T, sel.Addr)
	if ni.NodeType == mad.NodeSwitch && opt.Tables {
		var si mad.SwitchInfo
		if si, swErr = mad.GetSwitchInfo(ctx, f.T, sel.Addr); swErr == nil {
			n.sw = &si
		}
	}
	if err := errors.Join(descErr, swErr); err != nil {
		return nil, f.madError(ctx, local, sel.Addr, err)
	}
	n.dev = fabricDevice(n)

	views := make([]*PortView, len(ports))
	for i, p := range ports {
		v, err := f.loadPort(ctx, n, p, opt.Tables)
		if err != nil {
			return nil, err
		}
		v.Warnings = append(v.Warnings, portWarnings(v)...)
		views[i] = v
	}
	return views, nil
}

// selectFabricPorts resolves the selector against the node's NodeInfo.
func selectFabricPorts(sel FabricSelector, ni mad.NodeInfo) ([]int, error) {
	first := 1
	if ni.NodeType == mad.NodeSwitch {
		first = 0 // a switch's management port
	}
	switch {
	case sel.AllPorts:
		var ports []int
		for p := first; p <= int(ni.NumPorts); p++ {
			ports = append(ports, p)
		}
		return ports, nil
	case sel.HasPort:
		if sel.Port < first || sel.Port > int(ni.NumPorts) {
			what, ports := nodeTypeWord(ni.NodeType), fmt.Sprintf("%d-%d", first, ni.NumPorts)
			if first == int(ni.NumPorts) {
				ports = fmt.Sprint(first) // a one-port CA: "ports: 1", not "1-1"
			}
			return nil, &addrError{addr: sel.Addr, bare: fmt.Sprintf("the %s has no such port (ports: %s)", what, ports),
				err: &NotFoundError{What: "port", Name: fmt.Sprintf("%d on the %s at %s", sel.Port, what, sel.Addr), Available: []string{ports}}}
		}
		return []int{sel.Port}, nil
	case ni.NodeType == mad.NodeSwitch:
		return []int{0}, nil
	}
	return []int{int(ni.LocalPortNum)}, nil
}

// nodeTypeWord names the node's type in a sentence ("node" when NodeInfo's number is
// not a type).
func nodeTypeWord(t mad.NodeType) string {
	nt, _ := check.NodeTypeOf(uint8(t))
	return nt.Word()
}

// fabricDevice is the node as a Device, named by its NodeDescription (or its
// address when the description is empty).
func fabricDevice(n *nodeData) *ibverbs.Device {
	name := cmp.Or(strings.TrimSpace(n.desc), n.addr.String())
	typ := ibverbs.Enum{Num: int(n.info.NodeType), Name: nodeTypeWord(n.info.NodeType)}
	d := &ibverbs.Device{
		Name:     name,
		NodeType: ibverbs.Opt[ibverbs.Enum]{Value: typ},
		NodeGUID: ibverbs.Opt[ibverbs.GUID]{Value: ibverbs.GUID(n.info.NodeGUID)},
		NodeDesc: ibverbs.Opt[string]{Value: n.desc},
	}
	const notOverMADs = "not available over MADs"
	d.FWVer.Missing, d.HCAType.Missing, d.BoardID.Missing, d.HWRev.Missing = notOverMADs, notOverMADs, notOverMADs, notOverMADs
	d.Ports, _ = selectFabricPorts(FabricSelector{AllPorts: true}, n.info)
	return d
}

// loadPort reads one port's PortInfo and, with tables, its P_Key table.
func (f *Fabric) loadPort(ctx context.Context, n *nodeData, num int, tables bool) (*PortView, error) {
	isSwitch := n.info.NodeType == mad.NodeSwitch
	arrival := !isSwitch && num == int(n.info.LocalPortNum)
	addr := n.addr
	tableLen := int(n.info.PartitionCap)
	if isSwitch && num != 0 {
		tableLen = 0 // SwitchInfo is read only with tables
		if n.sw != nil {
			tableLen = int(n.sw.PartitionEnforcementCap)
		}
	}
	pi, err := mad.GetPortInfo(ctx, f.T, addr, uint8(num))
	if err != nil {
		return nil, f.madError(ctx, n.local, addr, err)
	}
	// A switch's external ports have no CapabilityMask of their own (IBA
	// 14.2.5.6; ibsim answers 0): whether LinkSpeedExtActive names the speed is
	// port 0's IsExtendedSpeedsSupported, as libibnetdisc takes it
	// (get_port_info_for_cap_mask, infiniband-diags ibdiag_common.c).
	capMask := pi.CapabilityMask
	if isSwitch {
		if num == 0 {
			n.capMask0 = &pi.CapabilityMask
		} else if n.capMask0 == nil {
			pi0, err := mad.GetPortInfo(ctx, f.T, addr, 0)
			if err != nil {
				return nil, f.madError(ctx, n.local, addr, err)
			}
			n.capMask0 = &pi0.CapabilityMask
		}
		capMask = *n.capMask0
	}

	d := n.dev
	v := &PortView{Device: d, Fabric: &FabricPort{Address: addr.String(), Addr: addr, NodeGUID: check.GUID(n.info.NodeGUID)}}
	p := &ibverbs.Port{
		Device:    d.Name,
		Num:       num,
		State:     portStateEnum(pi.PortState),
		PhysState: ibverbs.Opt[ibverbs.Enum]{Value: physStateEnum(pi.PhysState)},
		CapMask:   ibverbs.Opt[uint32]{Value: pi.CapabilityMask},
		Rate:      portRate(pi, capMask),
		LinkLayer: ibverbs.Opt[string]{Value: "InfiniBand"},
		HasPKeys:  tableLen > 0,
	}
	v.Port = p
	portGUID := ibverbs.Opt[uint64]{Value: n.info.PortGUID}

	switch {
	case isSwitch && num != 0:
		// IBA 14.2.5.6: LID, MasterSMLID and LMC are defined only for a switch's
		// port 0; the switch's LID and GUID belong to port 0.
		const reason = "a switch's external port has none (the switch's is on port 0)"
		p.LID.Missing, p.SMLID.Missing, p.LMC.Missing = reason, reason, reason
		portGUID.Missing = reason
		v.Fabric.Enforcement = enforcementOf(pi)
	default:
		p.LID.Value, p.SMLID.Value, p.LMC.Value, p.SMSL.Value = pi.LID, pi.MasterSMLID, pi.LMC, pi.MasterSMSL
	}

	if !isSwitch && !arrival {
		// A CA answers NodeInfo (PortGUID) and P_KeyTable for the port an SMP
		// arrives on: reach this port through its own LID.
		var why string
		if pi.LID == 0 {
			why = fmt.Sprintf("port %d has no LID and a CA answers only for the port an SMP arrives at (%s arrives at port %d): use a directed route that ends on port %d", num, addr, n.info.LocalPortNum, num)
			if pi.PortState == mad.PortStateDown {
				why = fmt.Sprintf("port %d is DOWN: no SMP can arrive there, and a CA answers only for the port an SMP arrives at (%s arrives at port %d)", num, addr, n.info.LocalPortNum)
			}
		} else {
			addr = mad.LIDAddress(pi.LID)
			v.Fabric.Address, v.Fabric.Addr = addr.String(), addr
			other, err := mad.GetNodeInfo(ctx, f.T, addr)
			switch {
			case err != nil:
				err = bareAt(f.madError(ctx, n.local, addr, err), addr) // the LID is named here
			case other.NodeGUID != n.info.NodeGUID || int(other.LocalPortNum) != num:
				err = fmt.Errorf("it answers as port %d of node %s, not port %d of %s", other.LocalPortNum, check.GUID(other.NodeGUID), num, check.GUID(n.info.NodeGUID))
			}
			if err != nil {
				why = fmt.Sprintf("port %d's own LID %d: %v", num, pi.LID, err)
			} else {
				portGUID.Value = other.PortGUID
			}
		}
		if why != "" {
			portGUID.Missing = why
			if tables {
				v.TableMissing = why
			}
		}
	}
	if portGUID.OK() {
		var gid ibverbs.GID
		binary.BigEndian.PutUint64(gid[:8], pi.GIDPrefix)
		binary.BigEndian.PutUint64(gid[8:], portGUID.Value)
		p.GID0.Value = gid
	} else {
		p.GID0.Missing = portGUID.Missing
	}

	// The table of a switch port or of the port the SMP arrives at is read through
	// n.addr; another port of a CA through its own LID, read from PortInfo above.
	switch {
	case !tables || v.TableMissing != "":
	case tableLen == 0:
		v.TableMissing, v.TableAbsent = "no P_Key table: the node reports a table length of 0", true
	default:
		table, err := mad.GetPKeyTable(ctx, f.T, addr, uint8(num), tableLen)
		if err != nil {
			return nil, f.madError(ctx, n.local, addr, err)
		}
		v.Table = tableOf(table)
	}
	return v, nil
}

// portStateEnum names PortInfo's PortState as the kernel's ports/N/state does.
func portStateEnum(s mad.PortState) ibverbs.Enum {
	return namedEnum(int(s), "UNKNOWN", "NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER")
}

// physStateEnum names PortPhysicalState as the kernel's ports/N/phys_state does.
func physStateEnum(s mad.PhysState) ibverbs.Enum {
	return namedEnum(int(s), "<unknown>", "NOP", "Sleep", "Polling", "Disabled",
		"PortConfigurationTraining", "LinkUp", "LinkErrorRecovery", "Phy Test")
}

// namedEnum is n named by names[n], or unknown past them.
func namedEnum(n int, unknown string, names ...string) ibverbs.Enum {
	if n < len(names) {
		unknown = names[n]
	}
	return ibverbs.Enum{Num: n, Name: unknown}
}

// portRate is the kernel's rate text, "10 Gb/sec (4X SDR)", from LinkWidthActive
// and LinkSpeedActive, or LinkSpeedExtActive when capMask (the port's, or for a
// switch's external port, port 0's) says extended speeds are supported and one is
// active (IBA 14.2.5.6; infiniband-diags decodes them alike).
func portRate(pi mad.PortInfo, capMask uint32) ibverbs.Opt[ibverbs.Rate] {
	widths := map[uint8]int{1: 1, 2: 4, 4: 8, 8: 12, 16: 2}
	type speed struct {
		name string
		gbps float64 // per lane, as the kernel counts it
	}
	speeds := map[uint8]speed{1: {"SDR", 2.5}, 2: {"DDR", 5}, 4: {"QDR", 10}}
	extSpeeds := map[uint8]speed{1: {"FDR", 14}, 2: {"EDR", 25}, 4: {"HDR", 50}, 8: {"NDR", 100}}
	w, ok := widths[pi.LinkWidthActive]
	if !ok {
		return ibverbs.Opt[ibverbs.Rate]{Missing: fmt.Sprintf("LinkWidthActive %d is not a known width", pi.LinkWidthActive)}
	}
	sp, ok := speeds[pi.LinkSpeedActive]
	if capMask&mad.CapExtendedSpeeds != 0 && pi.LinkSpeedExtActive != 0 {
		sp, ok = extSpeeds[pi.LinkSpeedExtActive]
		if !ok {
			return ibverbs.Opt[ibverbs.Rate]{Missing: fmt.Sprintf("LinkSpeedExtActive %d is not a known speed", pi.LinkSpeedExtActive)}
		}
	} else if !ok {
		return ibverbs.Opt[ibverbs.Rate]{Missing: fmt.Sprintf("LinkSpeedActive %d is not a known speed", pi.LinkSpeedActive)}
	}
	g := sp.gbps * float64(w)
	width := strconv.Itoa(w) + "X"
	text := fmt.Sprintf("%s Gb/sec (%s %s)", strconv.FormatFloat(g, 'f', -1, 64), width, sp.name)
	return ibverbs.Opt[ibverbs.Rate]{Value: ibverbs.Rate{Text: text, Gbps: g, Width: width, Speed: sp.name}}
}

// madError turns a transport error at a into an error a user can act on (exit 3): an
// *EnvError, wrapping a *NoAnswerError when no reply came, and an *addrError that says
// it without a too. When a LID did not answer, the local port's PortInfo says whether
// a subnet manager has run (NoAnswerError.Local): the port an SMP on an empty directed
// route arrives at, which port 0 names on a CA (IBA 14.2.5.6; ibsim sim_mad.c
// do_portinfo does so), and a switch's port 0. It is read once per local (one
// LoadMany, whatever number of LIDs failed) and again by the next: the SM may come or
// go during a watch. A nil local reads it for this error alone.
func (f *Fabric) madError(ctx context.Context, local *localPortInfo, a mad.Address, err error) error {
	via := ""
	if f.Via != "" {
		via = " via " + f.Via
	}
	if _, ok := errors.AsType[*mad.TimeoutError](err); ok {
		na := &NoAnswerError{Addr: a, Via: f.Via, DirectedRouteFlag: f.DirectedRouteFlag, ListLIDs: f.ListLIDs, Err: err}
		if !a.Directed {
			if local == nil {
				local = &localPortInfo{}
			}
			na.Local = local.read(ctx, f.T)
		}
		return &EnvError{Msg: na.Error(), Err: &addrError{addr: a, bare: na.bare(), err: na}}
	}
	if _, ok := errors.AsType[*mad.StatusError](err); ok {
		return &EnvError{Msg: fmt.Sprintf("%s%s refused the query: %v", a, via, err), Err: &addrError{addr: a, bare: fmt.Sprintf("refused the query%s: %v", via, err)}}
	}
	bare := err.Error()
	if f.Via != "" {
		bare = "via " + f.Via + ": " + bare
	}
	return &EnvError{Msg: fmt.Sprintf("%s%s: %v", a, via, err), Err: &addrError{addr: a, bare: bare}}
}

// localPortInfo is the local port's PortInfo as one load read it for the hint of a LID
// that got no answer (madError): read by the first such LID, nil when that read failed.
type localPortInfo struct {
	once sync.Once
	pi   *mad.PortInfo
}

func (l *localPortInfo) read(ctx context.Context, t mad.Transport) *mad.PortInfo {
	l.once.Do(func() {
		if pi, err := mad.GetPortInfo(ctx, t, mad.DirectedRoute(), 0); err == nil {
			l.pi = &pi
		}
	})
	return l.pi
}

// addrError is an error about the node or port at addr, told two ways: err (or the
// *EnvError that wraps it) names addr, for a message alone (pkeys --lid 9); bare does
// not, for a line that names addr already (LoadMany's Unread.What: "not read: lid 9:
// no answer via ..."). told selects bare (bareAt).
type addrError struct {
	addr mad.Address
	bare string
	err  error // nil when the *EnvError that wraps it says everything
	told bool
}

func (e *addrError) Error() string {
	if e.told || e.err == nil {
		return e.bare
	}
	return e.err.Error()
}

func (e *addrError) Unwrap() error { return e.err }

// bareAt is err told without a when err is about a (an *addrError at a), for a line
// that names a already; err itself otherwise (a port's own LID, not a, did not
// answer). errors.As finds what err wraps either way.
func bareAt(err error, a mad.Address) error {
	ae, ok := errors.AsType[*addrError](err)
	if !ok || ae.addr.String() != a.String() {
		return err
	}
	return &addrError{addr: a, bare: ae.bare, err: err, told: true}
}

// enforcementOf is PortInfo's partition enforcement and raw packet filter bits.
func enforcementOf(pi mad.PortInfo) *check.Enforcement {
	return &check.Enforcement{
		Inbound: pi.PartitionEnforcementInbound, Outbound: pi.PartitionEnforcementOutbound,
		FilterRawInbound: pi.FilterRawInbound, FilterRawOutbound: pi.FilterRawOutbound,
	}
}

// uniquePorts keeps each port of views once, by node GUID and port number, the first
// time it comes. A GUID of 0 (an ibsim router's) names no node: such ports are kept.
func uniquePorts(views []*PortView) []*PortView {
	seen := map[check.PortID]bool{}
	return slices.DeleteFunc(views, func(v *PortView) bool {
		if v.Fabric.NodeGUID == 0 {
			return false
		}
		k := check.PortID{Node: v.Fabric.NodeGUID, Port: v.Port.Num}
		dup := seen[k]
		seen[k] = true
		return dup
	})
}
