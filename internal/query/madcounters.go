package query

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/ibkey/ibkey/internal/ibverbs"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
)

// Counters over MADs: the PortInfo violation counters (one SMP Get PortInfo per port
// per sample) and the PMA PortCounters error counters (one PMA Get PortCounters per
// port per sample), for ports read by fabric address (--lid, --dr) and, for the
// violation counters sysfs does not have, for local ports when a MAD transport was
// chosen (--ca, --ibsim).

// Source labels of the MAD counters.
const (
	SourcePortInfo     = "smp portinfo"
	SourcePortCounters = "pma portcounters"
)

// PortInfoViolationWidth: PortInfo's M_Key, P_Key and Q_KeyViolations are 16-bit
// counters that saturate (IBA 14.2.5.6, PortInfo; checked against ibsim in the lab tests).
const PortInfoViolationWidth = 16

// PortInfoViolations are the PortInfo counters, in display order.
var PortInfoViolations = []string{PKeyViolations, QKeyViolations, MKeyViolations}

// MADPort says how to reach one port's counters over MADs.
type MADPort struct {
	// SMP is where Get PortInfo goes; the modifier is the port number Num.
	SMP mad.Address
	Num uint8
	// PMALID is the LID Get PortCounters goes to, with PortSelect Num. PMA MADs are
	// LID-routed only: 0 when the port has no LID, and NoPMA says why.
	PMALID uint16
	NoPMA  string
	// FollowLID: PMALID follows the LID PortInfo reports (a CA or router port, whose
	// LID an SM may assign, change or withdraw while the watch runs). Such a port's PMA answers only for
	// the port a MAD arrives on, so while PortInfo says it is DOWN its PortCounters
	// cannot be reached over the fabric at all (downPMA).
	FollowLID bool
	// Name names the port in reasons (DEVICE/PORT, as the sample names it); Down is
	// the PortState of its last PortInfo.
	Name string
	Down bool
	// Unavailable: the port cannot be read over MADs at all, and why.
	Unavailable string
}

// MADCounters reads counters over one MAD transport, which the caller keeps open for
// as long as the sampler runs. PortInfo and PortCounters give two CounterSources;
// MADCounters is also the StateReader of ports read over the fabric: the PortInfo Get
// that reads a port's state is the one whose violation counters the sample shows.
type MADCounters struct {
	fab *Fabric
	// ctx bounds every MAD (the watch's context: CounterSource.Read takes none).
	ctx   context.Context
	mu    sync.Mutex
	ports map[PortRef]*MADPort
	// read holds the PortInfo PortState read in the sample being taken, until the
	// PortInfo source's Read uses it.
	read map[PortRef]mad.PortInfo
}

// NewMADCounters reads ports through fab; a port missing from ports is not read.
func NewMADCounters(ctx context.Context, fab *Fabric, ports map[PortRef]*MADPort) *MADCounters {
	return &MADCounters{fab: fab, ctx: ctx, ports: ports, read: map[PortRef]mad.PortInfo{}}
}

// port is ref's MADPort; its Unavailable says why it cannot be read over MADs.
func (m *MADCounters) port(ref PortRef) MADPort {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.ports[ref]
	if !ok {
		return MADPort{Unavailable: "not read over MADs"}
	}
	return *p
}

func (m *MADCounters) getPortInfo(ref PortRef, p MADPort) (mad.PortInfo, error) {
	pi, err := mad.GetPortInfo(m.ctx, m.fab.T, p.SMP, p.Num)
	if err != nil {
		return pi, m.fab.madError(m.ctx, nil, p.SMP, fmt.Errorf("PortInfo of port %d: %w", p.Num, err))
	}
	m.mu.Lock()
	q := m.ports[ref]
	q.Down = pi.PortState == mad.PortStateDown
	if q.FollowLID {
		// 0 too: a LID the port no longer has may be another port's by now.
		q.PMALID = pi.LID
	}
	m.mu.Unlock()
	return pi, nil
}

// PortState implements StateReader: one Get PortInfo, kept for the PortInfo counters.
func (m *MADCounters) PortState(ref PortRef) (string, error) {
	p := m.port(ref)
	if p.Unavailable != "" {
		return "", errors.New(p.Unavailable)
	}
	pi, err := m.getPortInfo(ref, p)
	if err != nil {
		return "", err
	}
	m.mu.Lock()
	m.read[ref] = pi
	m.mu.Unlock()
	return portStateEnum(pi.PortState).Name, nil
}

// PortInfo is the source of the PortInfo violation counters.
func (m *MADCounters) PortInfo() CounterSource { return madPortInfo{m} }

// PortCounters is the source of the PMA PortCounters counters (named as in sysfs),
// read by ReadPortCounters, the one PMA reader.
func (m *MADCounters) PortCounters() CounterSource { return madPortCounters{m} }

type madPortInfo struct{ m *MADCounters }

func (madPortInfo) Name() string { return SourcePortInfo }

func (s madPortInfo) Read(ref PortRef, names []string, out []Reading) {
	m := s.m
	p := m.port(ref)
	if p.Unavailable != "" {
		fill(out, Reading{Unavailable: p.Unavailable})
		return
	}
	m.mu.Lock()
	pi, ok := m.read[ref]
	delete(m.read, ref)
	m.mu.Unlock()
	if !ok {
		var err error
		if pi, err = m.getPortInfo(ref, p); err != nil {
			fill(out, Reading{Err: err.Error()})
			return
		}
	}
	pick(names, out, "not a PortInfo counter", map[string]Reading{
		PKeyViolations: {Value: uint64(pi.PKeyViolations)},
		QKeyViolations: {Value: uint64(pi.QKeyViolations)},
		MKeyViolations: {Value: uint64(pi.MKeyViolations)},
	})
}

// madPortCounters is the watch's PMA reader (watch counters --lid/--dr). The
// exporter's sweep reads the same PortCounters through the same ReadPortCounters, but
// the two differ above it, for reasons: a watch samples the same ports for as long as
// it runs, so each sample reads a port's PortInfo first (its state and violation
// counters from one Get) and its PMA LID follows that PortInfo (an SM may assign or
// change a CA port's LID, or the port go DOWN, while the watch runs), one port per
// Read, concurrently (Sampler.Parallel: a port that does not answer holds up no
// other); the exporter takes every port and its PMA LID from a sweep made for that
// scrape, so there is nothing to follow, and reads them all as one batch (prefetched
// while the sweep runs: issue 23's 2,000-node scrape budget).
type madPortCounters struct{ m *MADCounters }

func (madPortCounters) Name() string { return SourcePortCounters }

func (s madPortCounters) Read(ref PortRef, names []string, out []Reading) {
	m := s.m
	p := m.port(ref)
	if no := p.NoPortCounters(); no.Unavailable != "" {
		fill(out, no)
		return
	}
	r := ReadPortCounters(m.ctx, m.fab.T, []PMAPort{p.PMA(int(p.Num))})[0]
	if r.Err != nil {
		fill(out, Reading{Err: m.fab.madError(m.ctx, nil, mad.LIDAddress(p.PMALID), fmt.Errorf("PortCounters of port %d: %w", p.Num, r.Err)).Error()})
		return
	}
	pc := r.Counters
	// PortCounters' fields by their sysfs counters/ names.
	pick(names, out, "not a PortCounters counter", map[string]Reading{
		"symbol_error":                    {Value: uint64(pc.SymbolErrorCounter)},
		"link_error_recovery":             {Value: uint64(pc.LinkErrorRecoveryCounter)},
		"link_downed":                     {Value: uint64(pc.LinkDownedCounter)},
		"port_rcv_errors":                 {Value: uint64(pc.PortRcvErrors)},
		"port_rcv_remote_physical_errors": {Value: uint64(pc.PortRcvRemotePhysicalErrors)},
		"port_rcv_switch_relay_errors":    {Value: uint64(pc.PortRcvSwitchRelayErrors)},
		"port_xmit_discards":              {Value: uint64(pc.PortXmitDiscards)},
		XmitConstraintErrors:              {Value: uint64(pc.PortXmitConstraintErrors)},
		RcvConstraintErrors:               {Value: uint64(pc.PortRcvConstraintErrors)},
		"local_link_integrity_errors":     {Value: uint64(pc.LocalLinkIntegrityErrors)},
		"excessive_buffer_overrun_errors": {Value: uint64(pc.ExcessiveBufferOverrunErrors)},
		"VL15_dropped":                    {Value: uint64(pc.VL15Dropped)},
		"port_xmit_wait":                  {Value: uint64(pc.PortXmitWait)},
	})
}

// NoPortCounters is why p's PMA PortCounters cannot be read over the fabric (the zero
// Reading when they can, at PMALID): Unavailable, p cannot be read over MADs at all;
// a DOWN CA or router port, n/a (Absent: nothing the fabric can give, not a gap, as
// fabric.NotRead leaves DOWN ports out; downPMA); no PMALID, NoPMA. A switch's DOWN
// port is read (its PMA, at the switch's LID, answers for every port).
func (p MADPort) NoPortCounters() Reading {
	switch {
	case p.Unavailable != "":
		return Reading{Unavailable: p.Unavailable}
	case p.FollowLID && p.Down:
		return Reading{Unavailable: downPMA(p), Absent: true}
	case p.PMALID == 0:
		return Reading{Unavailable: p.NoPMA}
	}
	return Reading{}
}

// PMAPort is where a port's PMA PortCounters are read: the LID the Get goes to (PMA
// MADs are LID-routed only; a switch's ports all answer at the switch's LID, its port
// 0's) and the PortSelect it asks for (IBA 16.1.3.5, PortCounters).
type PMAPort struct {
	LID  uint16
	Port uint8
	// EndPort: a CA's or router's port, at its own LID. Its PMA answers for the port
	// the MAD arrives on, and may leave the reply's PortSelect 0: mlx5's kernel PMA
	// does (drivers/infiniband/hw/mlx5/mad.c: mlx5_ib_process_mad zeroes the reply's
	// data area and process_pma_cmd fills in only the counters).
	EndPort bool
}

// PMA is where port num's PortCounters are read through p: at PMALID, an end port's
// PMA at its own LID when FollowLID (EndPort).
func (p MADPort) PMA(num int) PMAPort {
	return PMAPort{LID: p.PMALID, Port: uint8(num), EndPort: p.FollowLID}
}

// PMAReading is one port's PortCounters, or why they were not read.
type PMAReading struct {
	Counters mad.PortCounters
	Err      error
}

// ReadPortCounters is the one PMA PortCounters reader (the exporter's sweep and --lid,
// watch counters --lid): the ports' Get PortCounters go through t as one batch
// (mad.Exchange: the transport's window kept full, as a sweep's batches are), and
// each reply is decoded by PortCountersReply. The readings are in the order of ports.
func ReadPortCounters(ctx context.Context, t mad.Transport, ports []PMAPort) []PMAReading {
	calls := make([]mad.Call, len(ports))
	for i, k := range ports {
		calls[i].Req = k.Request()
	}
	_ = mad.Exchange(ctx, t, calls) // each call carries its own error
	out := make([]PMAReading, len(ports))
	for i, k := range ports {
		out[i].Counters, out[i].Err = k.Reply(&calls[i])
	}
	return out
}

// Request is k's Get PortCounters.
func (k PMAPort) Request() mad.Request {
	return mad.Request{Addr: mad.LIDAddress(k.LID), Class: mad.ClassPerf, Method: mad.MethodGet,
		Attr: mad.AttrPortCounters, Data: mad.PortCountersRequestData(k.Port)}
}

// Reply decodes c, an exchanged k.Request(): the counters, or the call's error, or
// that the reply answers for another port than the one asked (its PortSelect; 0 from
// an end port's PMA is the port it was asked at: EndPort).
func (k PMAPort) Reply(c *mad.Call) (mad.PortCounters, error) {
	pc, err := callResult(c, mad.ParsePortCounters)
	if err != nil {
		return mad.PortCounters{}, err
	}
	if k.EndPort && pc.PortSelect == 0 {
		pc.PortSelect = k.Port
	}
	if pc.PortSelect != k.Port {
		return mad.PortCounters{}, fmt.Errorf("PortCounters reply for port %d, asked for %d", pc.PortSelect, k.Port)
	}
	return pc, nil
}

// pick fills out with the readings a source has, by counter name; a name it has not
// is Unavailable, with why.
func pick(names []string, out []Reading, why string, have map[string]Reading) {
	for i, n := range names {
		r, ok := have[n]
		if !ok {
			r.Unavailable = why
		}
		out[i] = r
	}
}

func fill(out []Reading, r Reading) {
	for i := range out {
		out[i] = r
	}
}

// noLIDReason is why PortCounters cannot be read from a port (named who, reached at
// address) that has no LID: the LID is the port's own on a CA or router, its switch's
// (port 0's) on a switch.
func noLIDReason(who, address string) string {
	return fmt.Sprintf("needs a LID (PMA PortCounters are LID-routed, not directed-routed, and %s at %s has no LID: no subnet manager has assigned one yet)", who, address)
}

// downPMA is why a DOWN CA or router port's PortCounters are n/a over the fabric: its
// PMA answers only for the port a MAD arrives on (IBA 16.1.3.5's PortSelect is a
// switch's; mlx5's process_pma_cmd reads the arrival port's counters; ibsim refuses
// PortCounters for another port, as `perfquery LID 2` shows on HcaB's LID), and no
// MAD arrives on a DOWN port. The counters exist: sysfs on the port's own host reads
// them.
func downPMA(p MADPort) string {
	lid := ""
	if p.PMALID == 0 {
		lid = " and has no LID of its own"
	}
	return fmt.Sprintf("port DOWN (%s is DOWN%s; a CA answers PMA PortCounters only for the port the MAD arrives on, "+
		"so its counters cannot be reached over the fabric: its host's sysfs reads them)", p.Name, lid)
}

// NewFabricSampler samples ports read over the fabric (views from Fabric.LoadMany,
// each port once): state and violation counters from PortInfo, the error counters
// from PMA PortCounters. Ports are read concurrently. Each port is named DEVICE/PORT
// by its node description; nodes with the same description get their address added.
func NewFabricSampler(ctx context.Context, fab *Fabric, views []*PortView, now func() time.Time) (*Sampler, error) {
	// nodes: by description, the nodes (by GUID, by address when it is 0) that have it.
	nodes := map[string]map[string]bool{}
	for _, v := range views {
		if v.Fabric == nil {
			continue
		}
		node := v.Fabric.NodeGUID.String()
		if v.Fabric.NodeGUID == 0 {
			node = v.Fabric.Address
		}
		if nodes[v.Ref().Device] == nil {
			nodes[v.Ref().Device] = map[string]bool{}
		}
		nodes[v.Ref().Device][node] = true
	}
	ports := map[PortRef]*MADPort{}
	s := &Sampler{Parallel: true, Now: now}
	switchLIDs := map[string]uint16{}
	for _, v := range views {
		if v.Fabric == nil {
			return nil, fmt.Errorf("query: %s was not read over the fabric", v.Ref())
		}
		ref := v.Ref()
		if len(nodes[ref.Device]) > 1 {
			ref.Device = fmt.Sprintf("%s (%s)", ref.Device, v.Fabric.Address)
		}
		p, err := fab.MADPortOf(ctx, v, ref, switchLIDs)
		if err != nil {
			return nil, err
		}
		ports[ref] = p
		s.Ports = append(s.Ports, ref)
		s.Addresses = append(s.Addresses, v.Fabric.Address)
	}
	m := NewMADCounters(ctx, fab, ports)
	s.States = m
	s.Sets = NewCounterSets(m.PortCounters(), m.PortInfo())
	return s, nil
}

// MADPortOf is how the counters of v, a port read over the fabric (Fabric.LoadMany)
// and named ref, are reached: PortInfo at v's address; PortCounters at its own LID on
// a CA or router (followed as PortInfo reports it), at its switch's LID (port 0's) on
// a switch, whose PMA answers for every port: the LID it was read at, or its port 0's
// PortInfo, read once per address (switchLIDs, by the address it was read at).
func (f *Fabric) MADPortOf(ctx context.Context, v *PortView, ref PortRef, switchLIDs map[string]uint16) (*MADPort, error) {
	p := &MADPort{SMP: v.Fabric.Addr, Num: uint8(v.Port.Num), Name: ref.String(),
		Down: v.Port.State.Num == int(mad.PortStateDown), NoPMA: noLIDReason(ref.String(), v.Fabric.Address)}
	switch {
	case !v.Device.NodeType.OK() || v.Device.NodeType.Value.Num != int(mad.NodeSwitch):
		p.FollowLID = true
		if v.Port.LID.OK() {
			p.PMALID = v.Port.LID.Value
		}
		return p, nil
	case !v.Fabric.Addr.Directed:
		p.PMALID = v.Fabric.Addr.LID
	default:
		key := v.Fabric.Addr.String()
		lid, ok := switchLIDs[key]
		if !ok {
			pi, err := mad.GetPortInfo(ctx, f.T, v.Fabric.Addr, 0)
			if err != nil {
				return nil, f.madError(ctx, nil, v.Fabric.Addr, err)
			}
			lid, switchLIDs[key] = pi.LID, pi.LID
		}
		p.PMALID = lid
	}
	p.NoPMA = noLIDReason(ref.Device+"'s port 0", v.Fabric.Address)
	return p, nil
}

// LocalPortInfo is a PortInfo source for local ports (views from h.Load), read
// through fab: the ports of the device the transport sends from by directed route 0
// (no SM needed), another device's through a LID from sysfs. Every address is checked
// by its NodeInfo NodeGUID against the device's node_guid, so a counter never comes
// from another node; a device no address reaches is n/a with what was tried. A port
// not on InfiniBand has no PortInfo: ethernetPorts says which counters it has.
func LocalPortInfo(ctx context.Context, fab *Fabric, h *Host, views []*PortView) CounterSource {
	ports := map[PortRef]*MADPort{}
	byDev := map[string][]*PortView{}
	var devs []string
	for _, v := range views {
		if byDev[v.Port.Device] == nil {
			devs = append(devs, v.Port.Device)
		}
		byDev[v.Port.Device] = append(byDev[v.Port.Device], v)
	}
	for _, dev := range devs {
		vs := byDev[dev]
		addr, why := reachLocal(ctx, fab, vs)
		for _, v := range vs {
			ports[v.Ref()] = &MADPort{SMP: addr, Num: uint8(v.Port.Num), Unavailable: why}
		}
	}
	return &ethernetOr{NewMADCounters(ctx, fab, ports).PortInfo(), newEthernetPorts(h, views)}
}

// ethernetOr reads the Ethernet ports as eth says, the others from CounterSource. It
// is a pointer, as the sampler compares sources.
type ethernetOr struct {
	CounterSource
	eth ethernetPorts
}

func (s *ethernetOr) Read(ref PortRef, names []string, out []Reading) {
	if !s.eth.read(ref, names, out) {
		s.CounterSource.Read(ref, names, out)
	}
}

// NoPortInfo is why a port of link layer ll (not InfiniBand) has no PortInfo: only
// InfiniBand ports have QP0, the SMP endpoint (IBA 14.2; RoCE has no subnet
// management). Callers decide what a link layer not read means.
func NoPortInfo(ll string) string {
	return fmt.Sprintf("no PortInfo: the %s link layer has no QP0 (no SMPs)", ll)
}

// reachLocal finds the address whose NodeInfo is the device of vs.
func reachLocal(ctx context.Context, fab *Fabric, vs []*PortView) (mad.Address, string) {
	d := vs[0].Device
	dev := vs[0].Port.Device
	if !d.NodeGUID.OK() {
		return mad.Address{}, fmt.Sprintf("cannot check that MADs via %s reach %s: node_guid: %s", fab.Via, dev, d.NodeGUID.Missing)
	}
	want := uint64(d.NodeGUID.Value)
	cands := []mad.Address{mad.DirectedRoute()}
	for _, v := range vs {
		if v.Port.LID.OK() && v.Port.LID.Value != 0 && v.Port.LID.Value < 0xc000 {
			cands = append(cands, mad.LIDAddress(v.Port.LID.Value))
		}
	}
	var tried []string
	for _, a := range cands {
		ni, err := mad.GetNodeInfo(ctx, fab.T, a)
		switch {
		case err != nil:
			tried = append(tried, fmt.Sprintf("%s: %v", a, err))
		case ni.NodeGUID != want:
			tried = append(tried, fmt.Sprintf("%s is node %s", a, ibverbs.GUID(ni.NodeGUID)))
		default:
			return a, ""
		}
	}
	return mad.Address{}, fmt.Sprintf("not reachable over MADs via %s (%s is node %s; %s)", fab.Via, dev, d.NodeGUID.Value, strings.Join(tried, "; "))
}
