package query

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ibkey/ibkey/internal/ibverbs"
)

// Counters are read from sources: sysfs, SMP PortInfo and PMA PortCounters over MADs
// (madcounters.go), and verbs (verbscounters.go). A source reads a port's counters in one call so that a MAD source
// answers every PortInfo violation counter from one SMP Get, and every PortCounters
// counter from one PMA Get.

// CounterSource reads counters of one port.
type CounterSource interface {
	// Name labels the source in output: "sysfs", "smp portinfo", "pma portcounters",
	// "verbs".
	Name() string
	// Read reads the named counters of port, each once, into out (len(out) == len(names)).
	Read(port PortRef, names []string, out []Reading)
}

// Reading is one counter read: a value, a read error, or "not available from this
// source" with the reason. Value is meaningful only when both strings are empty.
type Reading struct {
	Value uint64
	// Err: the read failed this time (EIO, EINVAL, the file went away).
	Err string
	// Unavailable: the source cannot provide this counter for this port at all (no
	// counters/ directory, no fabric access). Never shown as 0.
	Unavailable string
	// Absent, with Unavailable: n/a is the whole answer, not a gap: the port has no
	// such counter (a link layer without PortInfo, a device without the counters/
	// file or PMA), or nothing can read it where it is read from (over the fabric, a
	// DOWN CA or router port's PortCounters: its PMA answers only for the port a MAD
	// arrives on, and none arrives on a DOWN port; fabric.NotRead likewise counts
	// DOWN ports as nothing to read). Without it an Unavailable counter exists and
	// could be read, and was not (no fabric access, no LID yet, a field verbs does
	// not give): not read, which a watch names and exits 4 for.
	Absent bool
	// Source labels the source that answered when it is not the counter's own (a
	// Preferred source that fell back); "" means Counter.Source.
	Source string
	// Restarted: Value is the first read from a device opened again after the one
	// read before was lost (VerbsCounters): it may be a new device whose counters
	// restarted, so no delta is known from an earlier value.
	Restarted bool
}

// Counter is one counter the sampler reads.
type Counter struct {
	Name   string
	Source CounterSource
	// Width in bits (IBA 16.1.3.5 PortCounters); 0 when unknown (no saturation detection).
	Width int
}

// Max is the counter's maximum value, where an error counter saturates; 0 when the
// width is unknown.
func (c Counter) Max() uint64 {
	if c.Width <= 0 || c.Width >= 64 {
		return 0
	}
	return 1<<c.Width - 1
}

// Partition enforcement drops (sysfs, PortCounters) and the PortInfo violation counters.
const (
	RcvConstraintErrors  = "port_rcv_constraint_errors"
	XmitConstraintErrors = "port_xmit_constraint_errors"
	PKeyViolations       = "pkey_violations"
	QKeyViolations       = "qkey_violations"
	MKeyViolations       = "mkey_violations"
)

// ErrorCounters are the sysfs PortCounters error counters `--all-counters` shows, in
// display order: partition enforcement drops first.
var ErrorCounters = []string{
	RcvConstraintErrors, XmitConstraintErrors,
	"symbol_error", "link_error_recovery", "link_downed", "port_rcv_errors",
	"port_rcv_remote_physical_errors", "port_rcv_switch_relay_errors", "port_xmit_discards",
	"local_link_integrity_errors", "excessive_buffer_overrun_errors", "VL15_dropped",
}

// NeedsFabricAccess is why the PortInfo violation counters are n/a when no MAD
// transport was chosen: they are not in sysfs (drivers/infiniband/core/sysfs.c has no
// such file), and SMPs over umad need read/write access to /dev/infiniband/umadN. how
// says how to get that access in the caller's words (a command names its flags); ""
// leaves it out. The text before " (" is the short form plain output prints.
func NeedsFabricAccess(how string) string {
	if how == "" {
		return "needs fabric access (PortInfo, not in sysfs)"
	}
	return "needs fabric access (PortInfo, not in sysfs: " + how + ")"
}

// SysfsCounters reads counters/NAME files. Ports whose counters/ directory is missing
// (no PMA) are Unavailable, with the reason.
type SysfsCounters struct {
	Sys *ibverbs.Sysfs
	// counters: per port, whether it has counters/ (noPMA when not).
	counters map[PortRef]bool
	// otherLL: the ports whose link layer was read and is not InfiniBand (noPMA).
	otherLL map[PortRef]bool
	// driver: each device's driver, where device/driver names one (notCounted).
	driver map[string]string
}

// notCounted are the counters a driver's PMA answers with a constant 0: its
// counters/ file exists and reads 0, which is no count. hfi1 (Omni-Path) answers
// PortCounters from its OPA counters and sets SymbolErrorCounter, VL15Dropped and
// PortRcvSwitchRelayErrors to 0 ("N/A for OPA": drivers/infiniband/hw/hfi1/mad.c,
// pma_get_ib_portcounters and pma_get_opa_port_ectrs; the commit that gave hfi1 its
// counters/, b8d114ebb6fb in Linux 4.6, says symbol_error and VL15_dropped "will
// always" read 0).
var notCounted = map[string]map[string]bool{
	"hfi1": {"symbol_error": true, "VL15_dropped": true, "port_rcv_switch_relay_errors": true},
}

// NewSysfsCounters returns a sysfs source that knows, from views, which counters each
// port has.
func NewSysfsCounters(sys *ibverbs.Sysfs, views []*PortView) *SysfsCounters {
	s := &SysfsCounters{Sys: sys, counters: map[PortRef]bool{}, otherLL: map[PortRef]bool{}, driver: map[string]string{}}
	for _, v := range views {
		s.counters[v.Ref()] = v.Port.HasCounters
		s.otherLL[v.Ref()] = v.LinkLayer() != "" && v.LinkLayer() != "InfiniBand"
		if _, ok := s.driver[v.Port.Device]; !ok {
			s.driver[v.Port.Device] = sys.Origin(v.Port.Device).Driver.Value
		}
	}
	return s
}

func (s *SysfsCounters) Name() string { return "sysfs" }

// noPMA is a counter of port for which sysfs shows no PMA counter: counters/ is
// missing, or its file holds "N/A (no PMA)"; why says which. On a port whose link
// layer was read and is not InfiniBand that is the whole answer, absent (Absent: iWARP and
// RoCE devices without process_mad have no PMA). An InfiniBand port has a PMA (every
// InfiniBand HCA driver implements process_mad, which answers PortCounters), so there
// it is a counter that exists and was not read here: the kernel writes counters/ only
// for a device with process_mad in its initial network namespace, not for the copy a
// network namespace of its own sees (drivers/infiniband/core/sysfs.c setup_port,
// is_full_dev: a container without the host's network, in the shared RDMA namespace
// mode), and Linux 4.5 to 2018 wrote "N/A (no PMA)" whenever the PMA's MAD failed
// (ibverbs.NoPMA), not only without process_mad.
func (s *SysfsCounters) noPMA(port PortRef, absent, why string) Reading {
	if s.otherLL[port] {
		return Reading{Unavailable: absent + " (" + why + ")", Absent: true}
	}
	return Reading{Unavailable: "no PMA counters here (" + why + "; an InfiniBand port has a PMA: " +
		"the kernel gives counters/ only to the device in its initial network namespace, not to the copy a " +
		"container's own network namespace sees, and older kernels wrote \"" + ibverbs.NoPMA + "\" also when the PMA did not answer)"}
}

func (s *SysfsCounters) Read(port PortRef, names []string, out []Reading) {
	if has, known := s.counters[port]; known && !has {
		fill(out, s.noPMA(port, "no PMA counters", "counters/: does not exist"))
		return
	}
	for i, n := range names {
		// Each file is read, in a counters/ that cannot be read or that lacks it as
		// in any other: every kernel's counters/ holds every PortCounters error counter
		// (drivers/infiniband/core/sysfs.c: pma_attrs, pma_attrs_ext and
		// pma_attrs_noietf each list all twelve), so a file missing there is a tree
		// the kernel did not write as it is now, not a counter the device lacks.
		if d := s.driver[port.Device]; notCounted[d][n] {
			out[i] = Reading{Unavailable: "not counted by " + d + " (Omni-Path): its counters/" + n + " always reads 0", Absent: true}
			continue
		}
		c := s.Sys.ReadCounter(port.Device, port.Port, n)
		if c.Unavailable != "" { // the file says N/A (no PMA)
			out[i] = s.noPMA(port, "no PMA on this device", c.Unavailable)
			continue
		}
		if c.Err != nil {
			out[i] = Reading{Err: c.Err.Error()}
			continue
		}
		out[i] = Reading{Value: c.Value}
	}
}

// NoPortInfoSource is a source ibkey cannot read here (a PortInfo counter source that
// sends no SMP, no MAD transport): every counter n/a, on an InfiniBand port for
// Reason (the counters exist and are not read), on a port whose link layer is read
// and is not InfiniBand as ethernetPorts.read says. It is a pointer: the sampler compares
// sources to group their counters.
type NoPortInfoSource struct {
	Label, Reason string
	eth           ethernetPorts
}

// NewNoPortInfo is the NoPortInfoSource named label for views, local ports of h.
func NewNoPortInfo(label, reason string, h *Host, views []*PortView) *NoPortInfoSource {
	return &NoPortInfoSource{Label: label, Reason: reason, eth: newEthernetPorts(h, views)}
}

func (s *NoPortInfoSource) Name() string { return s.Label }

func (s *NoPortInfoSource) Read(ref PortRef, names []string, out []Reading) {
	if !s.eth.read(ref, names, out) {
		fill(out, Reading{Unavailable: s.Reason})
	}
}

// ethernetPort is a local port whose link layer was read and is not InfiniBand, with
// its device's driver (driverFrom).
type ethernetPort struct {
	ll, driver string
	rnic       bool
}

// ethernetPorts are the ports of views that are ethernetPorts.
type ethernetPorts map[PortRef]ethernetPort

// newEthernetPorts reads each device's origin once; its node type is the view's.
func newEthernetPorts(h *Host, views []*PortView) ethernetPorts {
	e := ethernetPorts{}
	origins := map[string]ibverbs.Origin{}
	for _, v := range views {
		ll := v.LinkLayer()
		if ll == "" || ll == "InfiniBand" {
			continue
		}
		o, ok := origins[v.Port.Device]
		if !ok {
			o = h.Sys.Origin(v.Port.Device)
			origins[v.Port.Device] = o
		}
		var nt ibverbs.Opt[ibverbs.Enum]
		if v.Device != nil {
			nt = v.Device.NodeType
		}
		p := ethernetPort{ll: ll}
		p.driver, p.rnic = driverFrom(o, nt)
		e[v.Ref()] = p
	}
	return e
}

// read fills out for ref when it is an Ethernet port, and reports whether it was. Such
// a port has no PortInfo (NoPortInfo), so M_KeyViolations, which only SMPs read, is
// absent; P_Key and Q_Key violations are absent where the driver counts nothing
// (ethernetCounts), else they exist and only verbs read them: not read here.
func (e ethernetPorts) read(ref PortRef, names []string, out []Reading) bool {
	p, ok := e[ref]
	if !ok {
		return false
	}
	for i, n := range names {
		why, absent := "", true
		if n != MKeyViolations {
			why, absent = ethernetCounts(n, p.driver, p.rnic)
		}
		switch {
		case absent:
			out[i] = Reading{Unavailable: cmp.Or(why, NoPortInfo(p.ll)), Absent: true}
		case why == "":
			out[i] = Reading{Unavailable: NoPortInfo(p.ll) + "; only verbs read it (ibv_query_port, on the host itself)"}
		case p.driver == "":
			out[i] = Reading{Unavailable: NoPortInfo(p.ll) + "; verbs may read it on the host itself (ibv_query_port): the device's driver is not known"}
		default:
			out[i] = Reading{Unavailable: NoPortInfo(p.ll) + "; verbs may read it on the host itself (ibv_query_port): not known whether " + p.driver + " counts it"}
		}
	}
	return true
}

// CounterSets: the partition counters (default) and every error counter.
type CounterSets struct {
	Violations []Counter
	All        []Counter
}

// DefaultCounterSets builds the two sets on top of a sysfs source, with the PortInfo
// violation counters n/a (no MAD transport, NeedsFabricAccess; a command says how to
// get access with UsePortInfo).
func DefaultCounterSets(sysfs CounterSource) CounterSets {
	return NewCounterSets(sysfs, &NoPortInfoSource{Label: SourcePortInfo, Reason: NeedsFabricAccess("")})
}

// NewCounterSets builds the two sets: the PortCounters counters from portCounters
// (sysfs locally, PMA over the fabric) and the PortInfo violation counters from
// portInfo. The default set is the partition counters; M_KeyViolations (management
// key, not partitions) only comes with every error counter.
func NewCounterSets(portCounters, portInfo CounterSource) CounterSets {
	pi := func(n string) Counter { return Counter{Name: n, Source: portInfo, Width: PortInfoViolationWidth} }
	var cs CounterSets
	for _, n := range []string{RcvConstraintErrors, XmitConstraintErrors} {
		cs.Violations = append(cs.Violations, Counter{Name: n, Source: portCounters, Width: ibverbs.CounterWidths[n]})
	}
	cs.Violations = append(cs.Violations, pi(PKeyViolations), pi(QKeyViolations))
	for _, n := range ErrorCounters {
		cs.All = append(cs.All, Counter{Name: n, Source: portCounters, Width: ibverbs.CounterWidths[n]})
	}
	cs.All = append(cs.All, pi(PKeyViolations), pi(QKeyViolations), pi(MKeyViolations))
	return cs
}

// Sample is one read of every selected port's counters at Time.
type Sample struct {
	Time     time.Time
	Counters []Counter
	Ports    []PortSample
}

// PortSample is one port in a sample.
type PortSample struct {
	Ref PortRef
	// Address is where a port read over the fabric is (lid 4, DR path 0,1); "" locally.
	Address string
	State   string // from ports/N/state (or PortInfo over the fabric): ACTIVE, DOWN, ...
	// Err: the port could not be read at all (it went away); Readings are then empty.
	Err string
	// Readings are parallel to Sample.Counters.
	Readings []Reading
}

// Sampler reads samples. It holds no per-sample state, so Take may run in a goroutine
// (a tea.Cmd) while the caller keeps its Tracker elsewhere.
type Sampler struct {
	Ports []PortRef
	// Addresses, when set, are parallel to Ports: where each port is on the fabric.
	Addresses []string
	Sets      CounterSets
	// States reads each port's state first in a sample: ports/N/state (NewSampler), or
	// PortInfo over the fabric (NewFabricSampler).
	States StateReader
	// Parallel reads the ports concurrently (MADs: a port that does not answer must not
	// hold up the others for its timeouts).
	Parallel bool
	// Now is the clock (injected: tests and the demo host use their own).
	Now func() time.Time
}

// StateReader reads a port's state; an error means the port could not be read at all
// this time (it went away, it did not answer) and its counters are not read.
type StateReader interface {
	PortState(port PortRef) (string, error)
}

// sysfsStates reads ports/N/state.
type sysfsStates struct{ sys *ibverbs.Sysfs }

func (s sysfsStates) PortState(ref PortRef) (string, error) {
	st, err := s.sys.PortState(ref.Device, ref.Port)
	if errors.Is(err, fs.ErrNotExist) {
		return "", errors.New("port went away (state file does not exist)")
	}
	if pe, ok := errors.AsType[*ibverbs.PathError](err); ok {
		return "", errors.New("port unreadable: state: " + ibverbs.Describe(pe.Err))
	}
	if err != nil {
		return "", fmt.Errorf("port unreadable: %v", err)
	}
	return st.Name, nil
}

// UsePortInfo reads the PortInfo violation counters from src instead (a MAD source
// for the local ports, when a transport was chosen).
func (s *Sampler) UsePortInfo(src CounterSource) {
	s.setViolations(func(CounterSource) CounterSource { return src })
}

// setViolations gives the PortInfo violation counters of both sets the source to
// returns for the one they have.
func (s *Sampler) setViolations(to func(CounterSource) CounterSource) {
	for _, set := range [][]Counter{s.Sets.Violations, s.Sets.All} {
		for i := range set {
			if slices.Contains(PortInfoViolations, set[i].Name) {
				set[i].Source = to(set[i].Source)
			}
		}
	}
}

// NewSampler selects ports on h and prepares the sysfs and MAD sources for them. With
// some devices or ports unreadable it returns a sampler of the others and the
// *PartialError that names them (LoadMany).
func NewSampler(h *Host, sel []Selector, now func() time.Time) (*Sampler, error) {
	views, err := h.LoadMany(sel)
	if _, ok := errors.AsType[*PartialError](err); err != nil && !ok {
		return nil, err
	}
	refs := make([]PortRef, len(views))
	for i, v := range views {
		refs[i] = v.Ref()
	}
	return &Sampler{Ports: refs, Sets: DefaultCounterSets(NewSysfsCounters(h.Sys, views)), States: sysfsStates{h.Sys}, Now: now}, err
}

// LoadMany loads the union of several selectors (no selector: every port), each port
// once, in device then port order. Devices and ports that cannot be read are left out
// and named in a *PartialError returned with the others, whether a selector named
// them or not: a selector of which nothing was read (a device named that cannot be
// read) does not hide the others. Nothing read at all is not known (exit 4), as for
// Load; a device or port that does not exist is Load's *NotFoundError (exit 3).
func (h *Host) LoadMany(sels []Selector) ([]*PortView, error) {
	if len(sels) == 0 {
		sels = []Selector{{}}
	}
	seen := map[PortRef]bool{}
	unread := map[string]bool{}
	var out []*PortView
	partial := &PartialError{}
	noneRead := false
	for _, s := range sels {
		views, err := h.Load(s, LoadOptions{})
		var pe *PartialError
		var none *UnknownError
		switch {
		case errors.As(err, &pe):
		case errors.As(err, &none) && none.partial != nil:
			// Nothing of s was read: its parts not read, as for a selector of which
			// some was.
			pe, noneRead = none.partial, true
		case err != nil:
			return nil, err
		}
		if pe != nil {
			for _, u := range pe.Unread {
				if !unread[u.What] {
					unread[u.What] = true
					partial.Unread = append(partial.Unread, u)
				}
			}
		}
		for _, v := range views {
			if !seen[v.Ref()] {
				seen[v.Ref()] = true
				out = append(out, v)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b *PortView) int {
		return cmp.Or(strings.Compare(a.Port.Device, b.Port.Device), a.Port.Num-b.Port.Num)
	})
	if noneRead && len(out) == 0 {
		return nil, partial.Unwrap()
	}
	if len(partial.Unread) > 0 {
		return out, partial
	}
	return out, nil
}

// Take reads one sample: per port its state (ports/N/state, or PortInfo over the
// fabric), then each source once (each counter file once; one MAD per MAD source). all
// selects every error counter instead of the partition counters.
func (s *Sampler) Take(all bool) *Sample {
	set := s.Sets.Violations
	if all {
		set = s.Sets.All
	}
	smp := &Sample{Time: s.Now(), Counters: set, Ports: make([]PortSample, len(s.Ports))}
	// Group the counters by source once: one Read call per source per port.
	type group struct {
		src   CounterSource
		names []string
		idx   []int
	}
	var groups []group
	for i, c := range set {
		j := slices.IndexFunc(groups, func(g group) bool { return g.src == c.Source })
		if j < 0 {
			groups = append(groups, group{src: c.Source})
			j = len(groups) - 1
		}
		groups[j].names = append(groups[j].names, c.Name)
		groups[j].idx = append(groups[j].idx, i)
	}
	read := func(i int, ref PortRef) {
		ps := &smp.Ports[i]
		ps.Ref = ref
		if i < len(s.Addresses) {
			ps.Address = s.Addresses[i]
		}
		st, err := s.States.PortState(ref)
		if err != nil {
			ps.Err = err.Error()
			return
		}
		ps.State = st
		ps.Readings = make([]Reading, len(set))
		buf := make([]Reading, len(set))
		for _, g := range groups {
			out := buf[:len(g.names)]
			g.src.Read(ref, g.names, out)
			for k, r := range out {
				ps.Readings[g.idx[k]] = r
			}
		}
	}
	var wg sync.WaitGroup
	for i, ref := range s.Ports {
		if s.Parallel {
			wg.Go(func() { read(i, ref) })
		} else {
			read(i, ref)
		}
	}
	wg.Wait()
	return smp
}
