package exporter

import (
	"context"
	"fmt"
	"runtime/debug"
	"runtime/metrics"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/ibverbs"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/partconf"
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
	// lastHeap is the heap's objects at the end of the last sweep (sweepGC's measure).
	lastHeap atomic.Uint64

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
	// lateCounters: PortCounters read after the sweep, not while it ran.
	lateCounters int
}

// sweepMemoryFloor is the least memory limit a sweep runs under (sweepGC).
const sweepMemoryFloor = 256 << 20

// sweepGC turns the proportional garbage collector off for a sweep and bounds the
// process's memory instead (runtime/debug.SetMemoryLimit; the Go GC guide's "memory
// limit" section): a sweep allocates several times what it keeps (MAD calls and
// their replies, the families built to be encoded, the encoder's working memory),
// and even at GOGC 400 a 2,000-node sweep was collected twice, with the write
// barriers on while it built and encoded its series (about 15 ms of CPU time out of
// 190). The limit is 256 MiB, or twice the heap's objects at the end of the previous
// sweep (its peak, nothing having been collected: the next sweep of the same fabric
// needs about as much, and the previous snapshot stays live meanwhile), and never
// above a limit the user set (GOMEMLIMIT); near it the collector runs as it must.
// last is that heap (0: no sweep yet). The returned func restores both settings.
func sweepGC(last uint64) func() {
	limit := int64(sweepMemoryFloor)
	if l := int64(min(last, 1<<60)) * 2; l > limit {
		limit = l
	}
	if user := debug.SetMemoryLimit(-1); user < limit {
		limit = user
	}
	oldLimit := debug.SetMemoryLimit(limit)
	oldPercent := debug.SetGCPercent(-1)
	return func() {
		debug.SetGCPercent(oldPercent)
		debug.SetMemoryLimit(oldLimit)
	}
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
		restore := c.gcOff()
		if c.sweepAndServe(ctx) == nil {
			// Deflate the new sweep now, not in the first scrape that asks for gzip
			// (Prometheus does): the sweep is served meanwhile, and a scrape that
			// comes first deflates it itself (the encoding is made once either way).
			c.static().prepare(true)
		}
		restore()
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
	defer c.gcOff()()
	return c.sweepAndServe(ctx)
}

// SweepLast is Sweep for the last sweep of a process that writes its metrics once and
// exits (--once): the garbage collector stays as the sweep set it (off, under the
// sweep's memory limit; sweepGC) when it returns, as collecting the sweep's garbage,
// which turning it on again starts at once, would only delay the exit.
func (c *FabricCollector) SweepLast(ctx context.Context) error {
	c.gcOff()
	return c.sweepAndServe(ctx)
}

// gcOff turns the proportional garbage collector off for a sweep (sweepGC) and
// returns what turns it on again, noting the heap the sweep ended with.
func (c *FabricCollector) gcOff() func() {
	// scripts/bench-exporter reports the serving exporter's RSS.
	restore := sweepGC(c.lastHeap.Load())
	return func() {
		// Before the collector is on again: the heap's objects, live or not yet
		// swept (runtime/metrics: no stop-the-world, as ReadMemStats has).
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		metrics.Read(s)
		if s[0].Value.Kind() == metrics.KindUint64 {
			c.lastHeap.Store(s[0].Value.Uint64())
		}
		restore()
	}
}

// sweepAndServe is one sweep, served when it completed (Sweep).
func (c *FabricCollector) sweepAndServe(ctx context.Context) error {
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
	labels   [4]string // node_guid, node_name, port, lid
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
	if !c.opts.NoCounters {
		tap.pma = newPMAPrefetch(ctx, fab.T)
	}
	f, err := query.Sweep(ctx, tap, query.SweepOptions{Source: fab.Via, Now: c.opts.Now})
	var got map[pmaKey]*mad.Call
	if tap.pma != nil {
		got = tap.pma.done()
	}
	if f == nil {
		return nil, err
	}
	if err == nil && f.Incomplete != "" {
		err = fmt.Errorf("sweep incomplete: %s", f.Incomplete)
	}
	snap := c.fromFabric(ctx, f, tap.qkeyViolations(), got)
	if err == nil {
		err = ctx.Err()
	}
	return snap, err
}

// fromFabric reads the counters of a sweep's ports (unless NoCounters), runs the
// audit and builds the metrics. qkeys are the Q_KeyViolations the sweep's PortInfo
// replies carried (nil: none seen), got the PortCounters read while it ran (nil:
// none). The PortCounters MADs still to send are read while the audit runs and the
// metrics that do not depend on them are built and encoded: the MADs wait on the
// fabric, the rest on the CPU.
func (c *FabricCollector) fromFabric(ctx context.Context, f *fabric.Fabric, qkeys map[check.PortID]uint16, got map[pmaKey]*mad.Call) *fabricSnapshot {
	recs := sweepRecords(f, qkeys)
	counters := make(chan struct{})
	late := 0
	if !c.opts.NoCounters {
		// Writes only recs[i].readings[0:2] and late, which nothing else touches until
		// counters is closed.
		go func() { defer close(counters); late = readPortCounters(ctx, c.opts.Fabric, recs, got) }()
	} else {
		for i := range recs {
			for k := range 2 {
				recs[i].readings[k] = query.Reading{Unavailable: "not read (--no-counters)"}
			}
		}
		close(counters)
	}
	// Three parts built and encoded side by side: the ports' tables, their counters
	// (once read), and the audit's findings.
	fp := newFabricPairs(recs)
	var tables, readings *staticSet
	var nt, nr int
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); tables, nt = buildPortTables(recs, fp); tables.prepare(false) }()
	go func() {
		defer wg.Done()
		<-counters
		readings, nr = buildFabricCounters(recs, fp)
		readings.prepare(false)
	}()
	findings := fabric.Audit(f)
	if c.opts.Partitions != nil {
		findings = append(findings, partconf.CompareFabric(f, partconf.NewFabricModel(c.opts.Partitions, f, partconf.Options{AllowBoth: c.opts.AllowBoth}))...)
	}
	found, nf := buildFindings(f, recs, fp, findings, knownRules(c.opts.Partitions != nil))
	found.prepare(false)
	wg.Wait()
	return &fabricSnapshot{ports: len(recs), findings: len(findings), series: nt + nr + nf, lateCounters: late,
		set: joinStatic(joinStatic(tables, readings), found)}
}

// sweepRecords are the ports `ibkey fabric pkeys` shows: end ports (CA ports, switch
// port 0) and cabled switch ports.
func sweepRecords(f *fabric.Fabric, qkeys map[check.PortID]uint16) []portRecord {
	size := 0
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p.Peer != nil || n.IsEndPort(p) {
				size++
			}
		}
	}
	recs := make([]portRecord, 0, size)
	// GUIDs formatted once: a node's ports share its GUID, and a switch's ports their
	// port GUID.
	var lastPortGUID check.GUID
	lastPortGUIDText := ""
	for _, n := range f.Nodes {
		nodeGUID := ""
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
			if nodeGUID == "" {
				nodeGUID = n.GUID.String()
			}
			r := portRecord{
				id:       check.PortID{Node: n.GUID, Port: p.Num},
				labels:   [4]string{nodeGUID, n.Description, strconv.Itoa(p.Num), strconv.Itoa(int(lid))},
				nodeType: string(n.Type), state: p.State,
				tableSize: p.TableSize, pkeys: p.PKeys, tableErr: p.PKeysError,
				pmaLID: lid,
			}
			if p.GUID != 0 {
				if p.GUID != lastPortGUID || lastPortGUIDText == "" {
					lastPortGUID, lastPortGUIDText = p.GUID, p.GUID.String()
				}
				r.portGUID = lastPortGUIDText
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
	fp := newFabricPairs(recs)
	tables, nt := buildPortTables(recs, fp)
	readings, nr := buildFabricCounters(recs, fp)
	return &fabricSnapshot{ports: len(recs), series: nt + nr, set: joinStatic(tables, readings)}, err
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
		labels: [4]string{check.GUID(v.Fabric.NodeGUID).String(), d.NodeDesc.Value, strconv.Itoa(p.Num), strconv.Itoa(int(lid))},
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

// fabricPairs are the label pairs of a snapshot's series, made once when it is built:
// the families are built again each time they are encoded (family.emit), from these.
type fabricPairs struct {
	lp labelPairs
	// Per record (parallel to the records): its four port labels, node_type and
	// port_guid of ibkey_fabric_port_info, and the reason its table was not read (nil
	// when it was).
	port     [][4]*dto.LabelPair
	info     [][2]*dto.LabelPair
	tableErr []*dto.LabelPair
	// Table entries: index by index, and pkey, key and membership by value.
	index []*dto.LabelPair
	pkey  map[check.PKey]*[3]*dto.LabelPair
	// counter=NAME, per fabricCounters entry.
	counter [len(fabricCounters)]*dto.LabelPair
}

func newFabricPairs(recs []portRecord) *fabricPairs {
	fp := &fabricPairs{lp: labelPairs{}, port: make([][4]*dto.LabelPair, len(recs)), info: make([][2]*dto.LabelPair, len(recs)),
		tableErr: make([]*dto.LabelPair, len(recs)), pkey: map[check.PKey]*[3]*dto.LabelPair{}}
	for k, fc := range fabricCounters {
		fp.counter[k] = fp.lp.get("counter", fc.counter.Name)
	}
	var portNum []*dto.LabelPair // port=N by N
	for i := range recs {
		r := &recs[i]
		pp := &fp.port[i]
		if i > 0 && recs[i-1].labels[0] == r.labels[0] && recs[i-1].labels[1] == r.labels[1] {
			// The records of a node follow one another: the same node_guid and node_name,
			// and a switch's LID on every port.
			pp[0], pp[1] = fp.port[i-1][0], fp.port[i-1][1]
			if recs[i-1].labels[3] == r.labels[3] {
				pp[3] = fp.port[i-1][3]
			}
		}
		// A node's records follow one another (sweepRecords): its GUID, name and
		// (a switch's) LID are not seen again once the next node's start, so they are
		// not interned.
		if pp[0] == nil {
			pp[0], pp[1] = newPair(fabricPortLabels[0], r.labels[0]), newPair(fabricPortLabels[1], r.labels[1])
		}
		if pp[3] == nil {
			pp[3] = newPair(fabricPortLabels[3], r.labels[3])
		}
		if n := r.id.Port; n >= 0 && n < 256 && strconv.Itoa(n) == r.labels[2] {
			for len(portNum) <= n {
				portNum = append(portNum, fp.lp.get(fabricPortLabels[2], strconv.Itoa(len(portNum))))
			}
			pp[2] = portNum[n]
		} else {
			pp[2] = fp.lp.get(fabricPortLabels[2], r.labels[2])
		}
		info := &fp.info[i]
		if i > 0 && recs[i-1].nodeType == r.nodeType {
			info[0] = fp.info[i-1][0]
		} else {
			info[0] = fp.lp.get("node_type", r.nodeType)
		}
		if i > 0 && recs[i-1].portGUID == r.portGUID {
			info[1] = fp.info[i-1][1] // a switch's ports
		} else {
			info[1] = newPair("port_guid", r.portGUID)
		}
		if r.pkeys == nil {
			fp.tableErr[i] = fp.lp.get("reason", r.tableErr)
		}
		for len(fp.index) < len(r.pkeys) {
			fp.index = append(fp.index, fp.lp.get("index", strconv.Itoa(len(fp.index))))
		}
		for _, k := range r.pkeys {
			if k.Valid() && fp.pkey[k] == nil {
				fp.pkey[k] = &[3]*dto.LabelPair{fp.lp.get("pkey", k.String()), fp.lp.get("key", k.Partition().String()), fp.lp.get("membership", k.Membership().String())}
			}
		}
	}
	return fp
}

// portFamily is a family with one series per record that has a value (ok).
func portFamily(m *Metric, recs []portRecord, fp *fabricPairs, value func(r *portRecord) (float64, bool)) *family {
	return emitted(m, func(b *familyBuilder) {
		for i := range recs {
			if v, ok := value(&recs[i]); ok {
				b.add(v, fp.port[i][:])
			}
		}
	})
}

// buildFabricCounters builds the counter metrics of the records: values, saturation,
// or why a counter was not read.
// It only reads fp, so that it runs beside buildPortTables.
func buildFabricCounters(recs []portRecord, fp *fabricPairs) (*staticSet, int) {
	reasons := make([][len(fabricCounters)]*dto.LabelPair, len(recs))
	lp := labelPairs{}
	for i := range recs {
		for k := range fabricCounters {
			if why := unreadableReason(recs[i].readings[k]); why != "" {
				reasons[i][k] = lp.get("reason", why)
			}
		}
	}
	var fams []*family
	for k, fc := range fabricCounters {
		fams = append(fams, portFamily(fc.metric, recs, fp, func(r *portRecord) (float64, bool) {
			rd := r.readings[k]
			return float64(rd.Value), unreadableReason(rd) == ""
		}))
	}
	fams = append(fams, emitted(mFSaturated, func(b *familyBuilder) {
		var l [5]*dto.LabelPair
		for i := range recs {
			copy(l[:4], fp.port[i][:])
			for k, fc := range fabricCounters {
				if reasons[i][k] != nil {
					continue
				}
				sat := 0.0
				if m := fc.counter.Max(); m > 0 && recs[i].readings[k].Value >= m {
					sat = 1
				}
				l[4] = fp.counter[k]
				b.add(sat, l[:])
			}
		}
	}), emitted(mFUnreadable, func(b *familyBuilder) {
		var l [6]*dto.LabelPair
		for i := range recs {
			copy(l[:4], fp.port[i][:])
			for k := range fabricCounters {
				if reasons[i][k] == nil {
					continue
				}
				l[4], l[5] = fp.counter[k], reasons[i][k]
				b.add(1, l[:])
			}
		}
	}))
	series := 0
	for _, f := range fams {
		series += f.series
	}
	return newStaticSet(fams), series
}

// buildPortTables builds the metrics of the ports and their tables. It only reads fp,
// so that it runs beside buildFabricCounters.
func buildPortTables(recs []portRecord, fp *fabricPairs) (*staticSet, int) {
	tableErr := fp.tableErr
	fams := []*family{
		emitted(mFPortInfo, func(b *familyBuilder) {
			var l [6]*dto.LabelPair
			for i := range recs {
				copy(l[:4], fp.port[i][:])
				l[4], l[5] = fp.info[i][0], fp.info[i][1]
				b.add(1, l[:])
			}
		}),
		portFamily(mFPortState, recs, fp, func(r *portRecord) (float64, bool) {
			id, ok := stateIDs[r.state]
			return float64(id), ok
		}),
		portFamily(mFTableSize, recs, fp, func(r *portRecord) (float64, bool) { return float64(r.tableSize), true }),
		emitted(mFTableUnread, func(b *familyBuilder) {
			var l [5]*dto.LabelPair
			for i := range recs {
				if tableErr[i] != nil {
					copy(l[:4], fp.port[i][:])
					l[4] = tableErr[i]
					b.add(1, l[:])
				}
			}
		}),
		emitted(mFEntry, func(b *familyBuilder) {
			var l [8]*dto.LabelPair
			for i := range recs {
				copy(l[:4], fp.port[i][:])
				for j, k := range recs[i].pkeys {
					if !k.Valid() {
						continue
					}
					kp := fp.pkey[k]
					l[4], l[5], l[6], l[7] = fp.index[j], kp[0], kp[1], kp[2]
					b.add(1, l[:])
				}
			}
		}),
		portFamily(mFTableValid, recs, fp, func(r *portRecord) (float64, bool) {
			if r.pkeys == nil {
				return 0, false
			}
			valid := 0
			for _, k := range r.pkeys {
				if k.Valid() {
					valid++
				}
			}
			return float64(valid), true
		}),
	}
	series := 0
	for _, f := range fams {
		series += f.series
	}
	return newStaticSet(fams), series
}

// buildFindings builds the node counts and the audit's findings (fabric and port).
// A finding's ports that are exported ports take their label pairs from fp, which it
// only reads (it runs beside buildPortTables and buildFabricCounters).
func buildFindings(f *fabric.Fabric, recs []portRecord, fp *fabricPairs, findings []check.Finding, rules map[string]check.Severity) (*staticSet, int) {
	out := newFamilySet()
	types := map[string]int{string(check.NodeCA): 0, string(check.NodeSwitch): 0, string(check.NodeRouter): 0}
	for _, n := range f.Nodes {
		types[string(n.Type)]++
	}
	for _, t := range sortedKeys(types) {
		out.add(mNodes, float64(types[t]), t)
	}
	out.add(mUnreachable, float64(len(f.Unreachable)))
	type ruleSev struct{ rule, sev string }
	// Each rule and severity once, by number: a finding's ports are counted per port
	// and rule without hashing the rule's text for each.
	var kinds []ruleSev
	kindOf := map[ruleSev]int{}
	kind := func(rs ruleSev) int {
		k, ok := kindOf[rs]
		if !ok {
			k = len(kinds)
			kinds = append(kinds, rs)
			kindOf[rs] = k
		}
		return k
	}
	for r, s := range rules {
		kind(ruleSev{r, s.String()})
	}
	type portKind struct {
		id   check.PortID
		kind int
	}
	perPort := map[portKind]int{}
	var order []portKind
	var counts []int
	for _, fd := range findings {
		k := kind(ruleSev{fd.Rule, fd.Severity.String()})
		for len(counts) < len(kinds) {
			counts = append(counts, 0)
		}
		counts[k]++
		for _, p := range fd.Ports {
			pk := portKind{p.PortID, k}
			if perPort[pk] == 0 {
				order = append(order, pk)
			}
			perPort[pk]++
		}
	}
	for len(counts) < len(kinds) {
		counts = append(counts, 0)
	}
	byName := make([]int, len(kinds))
	for i := range byName {
		byName[i] = i
	}
	sort.Slice(byName, func(i, j int) bool {
		a, b := kinds[byName[i]], kinds[byName[j]]
		if a.rule != b.rule {
			return a.rule < b.rule
		}
		return a.sev < b.sev
	})
	for _, k := range byName {
		out.add(mFindings, float64(counts[k]), kinds[k].rule, kinds[k].sev)
	}
	fams := out.families()
	if len(order) > 0 {
		byID := make(map[check.PortID]int, len(recs))
		for i := range recs {
			byID[recs[i].id] = i
		}
		lp := labelPairs{}
		kindPairs := make([][2]*dto.LabelPair, len(kinds))
		for i, k := range kinds {
			kindPairs[i] = [2]*dto.LabelPair{lp.get("rule", k.rule), lp.get("severity", k.sev)}
		}
		ports := make([][4]*dto.LabelPair, len(order))
		for i, k := range order {
			if r, ok := byID[k.id]; ok {
				ports[i] = fp.port[r]
				continue
			}
			l := findingPortLabels(f, k.id)
			for j := range l {
				ports[i][j] = lp.get(fabricPortLabels[j], l[j])
			}
		}
		fams = append(fams, emitted(mFPortFinding, func(b *familyBuilder) {
			var l [6]*dto.LabelPair
			for i, k := range order {
				copy(l[:4], ports[i][:])
				l[4], l[5] = kindPairs[k.kind][0], kindPairs[k.kind][1]
				b.add(float64(perPort[k]), l[:])
			}
		}))
	}
	series := 0
	for _, f := range fams {
		series += f.series
	}
	return newStaticSet(fams), series
}

// findingPortLabels labels a port a finding names that is not an exported port (a
// switch port without a cable).
func findingPortLabels(f *fabric.Fabric, id check.PortID) [4]string {
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
	return [4]string{id.Node.String(), name, strconv.Itoa(id.Port), strconv.Itoa(int(lid))}
}

func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
