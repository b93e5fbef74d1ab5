package exporter

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/check/partconf"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/ibverbs"
	"github.com/ibkey/ibkey/internal/query"
)

// FabricOptions configure a FabricCollector.
type FabricOptions struct {
	// Fabric is the open MAD transport (umad on a local port, or ibsim). The caller
	// keeps it open while the collector runs and closes it afterwards.
	Fabric *query.Fabric
	// Selectors, when set, read only these nodes (--lid) instead of sweeping the
	// subnet; the audit needs a whole sweep and is not run.
	Selectors []query.FabricSelector
	// Interval is the time between the starts of two sweeps (Run).
	Interval time.Duration
	// Timeout bounds one sweep, counters included (0: Interval).
	Timeout time.Duration
	// Partitions, when set, also compares the tables with what OpenSM programs from
	// this partitions.conf (partconf.CompareFabric); AllowBoth is OpenSM's -W.
	Partitions *partconf.Config
	AllowBoth  bool
	// NoCounters skips the PMA PortCounters reads (tables and PortInfo only).
	NoCounters bool
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Logf, when set, is told about sweeps that did not complete.
	Logf func(format string, args ...any)
}

// FabricCollector sweeps a subnet on a schedule and answers scrapes from the last
// complete sweep, never by sweeping during a scrape: a sweep of a large subnet sends
// thousands of MADs, and every Prometheus server scraping the exporter would multiply
// them.
type FabricCollector struct {
	opts FabricOptions
	snap atomic.Pointer[fabricSnapshot]

	mu          sync.Mutex
	results     map[string]float64
	lastFailure string
}

// fabricSnapshot is one complete sweep, its metrics built and encoded once.
type fabricSnapshot struct {
	at       time.Time
	duration time.Duration
	set      *staticSet
	// Ports, findings and series, for tests and benchmarks: counts only.
	ports, findings, series int
}

// Sweep results, the values of ibkey_fabric_sweeps_total's result label.
const (
	ResultComplete = "complete"
	ResultPartial  = "partial"
	ResultFailed   = "failed"
)

// NewFabricCollector returns a collector with nothing to serve until Sweep or Run has
// completed a sweep.
func NewFabricCollector(opts FabricOptions) *FabricCollector {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Timeout <= 0 {
		opts.Timeout = opts.Interval
	}
	return &FabricCollector{opts: opts, results: map[string]float64{ResultComplete: 0, ResultPartial: 0, ResultFailed: 0}}
}

// Run sweeps now and then every Interval (from the start of one sweep to the start of
// the next; a sweep that takes longer is followed at once by the next) until ctx ends.
func (c *FabricCollector) Run(ctx context.Context) {
	for {
		start := time.Now()
		if c.Sweep(ctx) == nil {
			// Deflate the new sweep now, not in the first scrape that asks for gzip
			// (Prometheus does): the sweep is served meanwhile, and a scrape that
			// comes first deflates it itself (the encoding is made once either way).
			c.static().prepare(true)
		}
		wait := c.opts.Interval - time.Since(start)
		if wait < 0 {
			wait = 0
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// Sweep runs one sweep (or reads the --lid nodes) with counters and the audit, and
// serves it when it completed. A sweep that stopped early or failed is counted and
// its reason kept; the previous complete sweep stays served.
func (c *FabricCollector) Sweep(ctx context.Context) error {
	start := c.opts.Now()
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	var (
		snap *fabricSnapshot
		err  error
	)
	if len(c.opts.Selectors) > 0 {
		snap, err = c.readNodes(ctx)
	} else {
		snap, err = c.sweep(ctx)
	}
	result := ResultComplete
	switch {
	case snap == nil:
		result = ResultFailed
	case err != nil:
		result = ResultPartial
	}
	c.mu.Lock()
	c.results[result]++
	if result == ResultComplete {
		c.lastFailure = ""
	} else {
		c.lastFailure = err.Error()
	}
	c.mu.Unlock()
	if result != ResultComplete {
		if c.opts.Logf != nil {
			c.opts.Logf("sweep %s (the previous complete sweep is still served): %v", result, err)
		}
		return err
	}
	snap.at, snap.duration = start, c.opts.Now().Sub(start)
	c.publish(snap)
	return nil
}

// publish encodes the snapshot's metrics in the text format (the format scrapes ask
// for) and serves it.
func (c *FabricCollector) publish(s *fabricSnapshot) {
	s.set.prepare(false)
	c.snap.Store(s)
}

// static returns the served sweep's metrics.
func (c *FabricCollector) static() *staticSet {
	if s := c.snap.Load(); s != nil {
		return s.set
	}
	return emptyStatic()
}

// Describe implements prometheus.Collector.
func (c *FabricCollector) Describe(ch chan<- *prometheus.Desc) { describe(ch, ModeFabric) }

// Collect implements prometheus.Collector: the last complete sweep, its age, and the
// sweep results so far.
func (c *FabricCollector) Collect(ch chan<- prometheus.Metric) {
	if s := c.collectSnapshot(ch); s != nil {
		s.set.collect(ch)
	}
}

// collectLive collects the sweep's age and the results.
func (c *FabricCollector) collectLive(ch chan<- prometheus.Metric) { c.collectSnapshot(ch) }

// collectSnapshot collects the sweep's age and the results, and returns the snapshot
// they describe.
func (c *FabricCollector) collectSnapshot(ch chan<- prometheus.Metric) *fabricSnapshot {
	s := c.snap.Load()
	c.mu.Lock()
	for _, r := range []string{ResultComplete, ResultPartial, ResultFailed} {
		ch <- counter(mSweeps, c.results[r], r)
	}
	if c.lastFailure != "" {
		ch <- gauge(mLastFailure, 1, c.lastFailure)
	}
	c.mu.Unlock()
	if s == nil {
		ch <- gauge(mFabricUp, 0)
		return nil
	}
	ch <- gauge(mFabricUp, 1)
	ch <- gauge(mSweepTime, float64(s.at.UnixNano())/1e9)
	ch <- gauge(mSweepAge, c.opts.Now().Sub(s.at).Seconds())
	ch <- gauge(mSweepDuration, s.duration.Seconds())
	return s
}

// portRecord is one exported fabric port.
type portRecord struct {
	id       check.PortID
	labels   []string // node_guid, node_name, port, lid
	nodeType string
	portGUID string
	state    string // PortInfo state name, "" when not read
	// Table: size, entries (nil when not read: tableErr says why).
	tableSize int
	pkeys     []check.PKey
	tableErr  string
	// PMA: where PortCounters go (0: no LID, noPMA says why).
	pmaLID uint16
	noPMA  string
	// Counter readings, parallel to fabricCounters.
	readings [4]query.Reading
}

// fabricCounters are the partition counters of a fabric port, in output order.
var fabricCounters = [4]struct {
	counter query.Counter
	metric  *Metric
}{
	{query.Counter{Name: query.RcvConstraintErrors, Source: sourceName(query.SourcePortCounters), Width: 8}, mFRcvConstraint},
	{query.Counter{Name: query.XmitConstraintErrors, Source: sourceName(query.SourcePortCounters), Width: 8}, mFXmitConstraint},
	{query.Counter{Name: query.PKeyViolations, Source: sourceName(query.SourcePortInfo), Width: query.PortInfoViolationWidth}, mFPKeyViolations},
	{query.Counter{Name: query.QKeyViolations, Source: sourceName(query.SourcePortInfo), Width: query.PortInfoViolationWidth}, mFQKeyViolations},
}

// sourceName is a CounterSource that only carries a name (the fabric collector reads
// through query's MAD sources and keeps the readings).
type sourceName string

func (s sourceName) Name() string                                          { return string(s) }
func (s sourceName) Read(_ query.PortRef, _ []string, out []query.Reading) {}

var stateIDs = map[string]int{check.StateDown: 1, check.StateInit: 2, check.StateArmed: 3, check.StateActive: 4, "ACTIVE_DEFER": 5}

// noQKey is why a port's Q_KeyViolations is not exported when its PortInfo was read
// but the reply was not seen (a sweep loaded from a file keeps P_KeyViolations only).
const noQKey = "PortInfo Q_KeyViolations not captured with this sweep"

func (c *FabricCollector) sweep(ctx context.Context) (*fabricSnapshot, error) {
	fab := c.opts.Fabric
	tap := newPortInfoTap(fab.T)
	f, err := query.Sweep(ctx, tap, query.SweepOptions{Source: fab.Via, Now: c.opts.Now})
	if f == nil {
		return nil, err
	}
	if err == nil && f.Incomplete != "" {
		err = fmt.Errorf("sweep incomplete: %s", f.Incomplete)
	}
	snap := c.fromFabric(ctx, f, tap.qkeyViolations())
	if err == nil {
		err = ctx.Err()
	}
	return snap, err
}

// fromFabric reads the counters of a sweep's ports (unless NoCounters), runs the
// audit and builds the metrics. qkeys are the Q_KeyViolations the sweep's PortInfo
// replies carried (nil: none seen). The PortCounters MADs are read while the audit
// runs and the metrics that do not depend on them are built and encoded: the MADs
// wait on the fabric, the rest on the CPU.
func (c *FabricCollector) fromFabric(ctx context.Context, f *fabric.Fabric, qkeys map[check.PortID]uint16) *fabricSnapshot {
	recs := sweepRecords(f, qkeys)
	counters := make(chan struct{})
	if !c.opts.NoCounters {
		// Writes only recs[i].readings[0:2], which nothing else touches until counters
		// is closed.
		go func() { defer close(counters); readPortCounters(ctx, c.opts.Fabric, recs) }()
	} else {
		for i := range recs {
			for k := range 2 {
				recs[i].readings[k] = query.Reading{Unavailable: "not read (--no-counters)"}
			}
		}
		close(counters)
	}
	findings := fabric.Audit(f)
	if c.opts.Partitions != nil {
		findings = append(findings, partconf.CompareFabric(f, partconf.NewFabricModel(c.opts.Partitions, f, partconf.Options{AllowBoth: c.opts.AllowBoth}))...)
	}
	snap, tables := buildFabricMetrics(f, recs, findings, knownRules(c.opts.Partitions != nil))
	tables.prepare(false)
	<-counters
	readings, n := buildFabricCounters(recs)
	readings.prepare(false)
	snap.set, snap.series = joinStatic(tables, readings), snap.series+n
	return snap
}

// sweepRecords are the ports `ibkey fabric pkeys` shows: end ports (CA ports, switch
// port 0) and cabled switch ports.
func sweepRecords(f *fabric.Fabric, qkeys map[check.PortID]uint16) []portRecord {
	var recs []portRecord
	for _, n := range f.Nodes {
		var swLID uint16
		if n.Type == check.NodeSwitch {
			if p0 := n.Port(0); p0 != nil {
				swLID = p0.LID
			}
		}
		for _, p := range n.Ports {
			end := n.IsEndPort(p)
			if !end && p.Peer == nil {
				continue
			}
			lid := p.LID
			if n.Type == check.NodeSwitch {
				// PortCounters of every switch port go to the switch's LID (port 0's).
				lid = swLID
			}
			r := portRecord{
				id:       check.PortID{Node: n.GUID, Port: p.Num},
				labels:   []string{n.GUID.String(), n.Description, strconv.Itoa(p.Num), strconv.Itoa(int(lid))},
				nodeType: string(n.Type), state: p.State,
				tableSize: p.TableSize, pkeys: p.PKeys, tableErr: p.PKeysError,
				pmaLID: lid,
			}
			if p.GUID != 0 {
				r.portGUID = p.GUID.String()
			}
			if lid == 0 {
				r.noPMA = "no LID (PMA PortCounters are LID-routed; no subnet manager has assigned one yet)"
			}
			if r.pkeys == nil && r.tableErr == "" {
				r.tableErr = "not read"
			}
			switch q, ok := qkeys[r.id]; {
			case p.Error != "":
				r.state = ""
				r.readings[2] = query.Reading{Err: p.Error}
				r.readings[3] = r.readings[2]
			case ok:
				r.readings[2] = query.Reading{Value: uint64(p.PKeyViolations)}
				r.readings[3] = query.Reading{Value: uint64(q)}
			default:
				r.readings[2] = query.Reading{Value: uint64(p.PKeyViolations)}
				r.readings[3] = query.Reading{Unavailable: noQKey}
			}
			recs = append(recs, r)
		}
	}
	return recs
}

// readNodes reads the --lid nodes' ports (tables, PortInfo, PortCounters).
func (c *FabricCollector) readNodes(ctx context.Context) (*fabricSnapshot, error) {
	fab := c.opts.Fabric
	views, err := fab.LoadMany(ctx, c.opts.Selectors, query.LoadOptions{Tables: true})
	if len(views) == 0 {
		if err == nil {
			err = fmt.Errorf("no port read")
		}
		return nil, err
	}
	recs := make([]portRecord, len(views))
	for i, v := range views {
		recs[i] = viewRecord(v)
	}
	if c.opts.NoCounters {
		for i := range recs {
			for k := range recs[i].readings {
				recs[i].readings[k] = query.Reading{Unavailable: "not read (--no-counters)"}
			}
		}
	} else {
		s, serr := query.NewFabricSampler(ctx, fab, views, c.opts.Now)
		if serr != nil {
			return nil, serr
		}
		smp := s.Take(false)
		for i, ps := range smp.Ports {
			if ps.Err != "" {
				for k := range recs[i].readings {
					recs[i].readings[k] = query.Reading{Err: ps.Err}
				}
				continue
			}
			for j, cn := range smp.Counters {
				for k, fc := range fabricCounters {
					if fc.counter.Name == cn.Name {
						recs[i].readings[k] = ps.Readings[j]
					}
				}
			}
		}
	}
	snap, tables := buildFabricMetrics(nil, recs, nil, nil)
	readings, n := buildFabricCounters(recs)
	snap.set, snap.series = joinStatic(tables, readings), snap.series+n
	return snap, err
}

func viewRecord(v *query.PortView) portRecord {
	d, p := v.Device, v.Port
	var lid uint16
	if p.LID.OK() {
		lid = p.LID.Value
	}
	if lid == 0 && !v.Fabric.Addr.Directed {
		lid = v.Fabric.Addr.LID
	}
	r := portRecord{
		id:     check.PortID{Node: check.GUID(v.Fabric.NodeGUID), Port: p.Num},
		labels: []string{check.GUID(v.Fabric.NodeGUID).String(), d.NodeDesc.Value, strconv.Itoa(p.Num), strconv.Itoa(int(lid))},
		state:  p.State.Name,
	}
	if d.NodeType.OK() {
		r.nodeType = nodeTypeName(d.NodeType.Value)
	}
	if p.GID0.OK() {
		g := p.GID0.Value
		var guid uint64
		for _, b := range g[8:] {
			guid = guid<<8 | uint64(b)
		}
		if guid != 0 {
			r.portGUID = check.GUID(guid).String()
		}
	}
	if v.Table != nil {
		r.tableSize = len(v.Table.Entries)
		r.pkeys = make([]check.PKey, len(v.Table.Entries))
		for i, e := range v.Table.Entries {
			r.pkeys[i] = e.PKey
		}
	} else {
		r.tableErr = v.TableMissing
		if r.tableErr == "" {
			r.tableErr = "not read"
		}
	}
	return r
}

func nodeTypeName(e ibverbs.Enum) string {
	switch e.Num {
	case 1:
		return string(check.NodeCA)
	case 2:
		return string(check.NodeSwitch)
	case 3:
		return string(check.NodeRouter)
	}
	return e.Name
}

// knownRules are the audit's rules with their severity: each is exported, at 0 when
// nothing was found, so an alert on it has a series to look at.
func knownRules(partitions bool) map[string]check.Severity {
	m := map[string]check.Severity{
		fabric.RuleHCAKeyNotOnSwitch: check.SeverityError, fabric.RuleSwitchKeyNotOnHCA: check.SeverityError,
		fabric.RuleEnforcementOff: check.SeverityWarning, fabric.RuleLimitedOnly: check.SeverityWarning,
		fabric.RuleTableFull: check.SeverityWarning, fabric.RulePortNotActive: check.SeverityWarning,
		fabric.RuleNotRead: check.SeverityWarning, fabric.RuleSweepIncomplete: check.SeverityWarning,
	}
	if partitions {
		for _, r := range []string{partconf.RuleMissingKey, partconf.RuleExtraKey, partconf.RuleWrongMembership, partconf.RuleTableOverflow, partconf.RuleFileRejected} {
			m[r] = check.SeverityError
		}
	}
	return m
}

// buildFabricCounters builds the counter metrics of the records: values, saturation,
// or why a counter was not read.
func buildFabricCounters(recs []portRecord) (*staticSet, int) {
	out := newFamilySet()
	series := 0
	add := func(m *Metric, v float64, labels ...string) {
		out.add(m, v, labels...)
		series++
	}
	for i := range recs {
		for k, fc := range fabricCounters {
			emitCounter(add, fc.metric, mFSaturated, mFUnreadable, fc.counter, recs[i].readings[k], recs[i].labels, false)
		}
	}
	return out.static(), series
}

// buildFabricMetrics builds a snapshot's metrics but the counters'
// (buildFabricCounters): ports, tables, nodes and findings. f is nil in --lid mode
// (no node counts, no audit).
func buildFabricMetrics(f *fabric.Fabric, recs []portRecord, findings []check.Finding, rules map[string]check.Severity) (*fabricSnapshot, *staticSet) {
	out := newFamilySet()
	series := 0
	add := func(m *Metric, v float64, labels ...string) {
		out.add(m, v, labels...)
		series++
	}
	byID := make(map[check.PortID]int, len(recs))
	for i := range recs {
		r := &recs[i]
		byID[r.id] = i
		l := r.labels
		add(mFPortInfo, 1, l[0], l[1], l[2], l[3], r.nodeType, r.portGUID)
		if id, ok := stateIDs[r.state]; ok {
			add(mFPortState, float64(id), l...)
		}
		add(mFTableSize, float64(r.tableSize), l...)
		if r.pkeys == nil {
			add(mFTableUnread, 1, l[0], l[1], l[2], l[3], r.tableErr)
		} else {
			valid := 0
			for i, k := range r.pkeys {
				if !k.Valid() {
					continue
				}
				valid++
				add(mFEntry, 1, l[0], l[1], l[2], l[3], strconv.Itoa(i), k.String(), k.KeyString(), k.Membership().String())
			}
			add(mFTableValid, float64(valid), l...)
		}
	}
	snap := &fabricSnapshot{ports: len(recs), findings: len(findings)}
	if f != nil {
		types := map[string]int{string(check.NodeCA): 0, string(check.NodeSwitch): 0, string(check.NodeRouter): 0}
		for _, n := range f.Nodes {
			types[string(n.Type)]++
		}
		for _, t := range sortedKeys(types) {
			add(mNodes, float64(types[t]), t)
		}
		add(mUnreachable, float64(len(f.Unreachable)))
		type ruleSev struct{ rule, sev string }
		counts := map[ruleSev]int{}
		for r, s := range rules {
			counts[ruleSev{r, s.String()}] = 0
		}
		type portRule struct {
			id check.PortID
			ruleSev
		}
		perPort := map[portRule]int{}
		var order []portRule
		for _, fd := range findings {
			rs := ruleSev{fd.Rule, fd.Severity.String()}
			counts[rs]++
			for _, p := range fd.Ports {
				k := portRule{p.PortID, rs}
				if perPort[k] == 0 {
					order = append(order, k)
				}
				perPort[k]++
			}
		}
		keys := make([]ruleSev, 0, len(counts))
		for k := range counts {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			if keys[i].rule != keys[j].rule {
				return keys[i].rule < keys[j].rule
			}
			return keys[i].sev < keys[j].sev
		})
		for _, k := range keys {
			add(mFindings, float64(counts[k]), k.rule, k.sev)
		}
		for _, k := range order {
			var l []string
			if i, ok := byID[k.id]; ok {
				l = recs[i].labels
			} else {
				l = findingPortLabels(f, k.id)
			}
			add(mFPortFinding, float64(perPort[k]), l[0], l[1], l[2], l[3], k.rule, k.sev)
		}
	}
	snap.series = series
	return snap, out.static()
}

// findingPortLabels labels a port a finding names that is not an exported port (a
// switch port without a cable).
func findingPortLabels(f *fabric.Fabric, id check.PortID) []string {
	name, lid := "", uint16(0)
	if n := f.Node(id.Node); n != nil {
		name = n.Description
		if p := n.Port(id.Port); p != nil {
			lid = p.LID
		}
		if n.Type == check.NodeSwitch {
			if p0 := n.Port(0); p0 != nil {
				lid = p0.LID
			}
		}
	}
	return []string{id.Node.String(), name, strconv.Itoa(id.Port), strconv.Itoa(int(lid))}
}

func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
