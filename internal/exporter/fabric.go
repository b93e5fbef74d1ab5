package exporter

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/partconf"
	"github.com/ibkey/ibkey/internal/query"
)

// FabricOptions configure a FabricCollector.
type FabricOptions struct {
	// Fabric is the MAD transport the sweeps go through (umad on a local port, or
	// ibsim).
	Fabric *query.Fabric
	// Reopen, when set, opens the transport again after it stopped working: ibsim
	// killed and restarted or the client slot dropped, an HCA reset or driver reload
	// (mad.ErrTransportDown, or a failed sweep whose local port no longer answers).
	// The collector then owns the transports, Fabric included: it closes a broken one,
	// reopens with backoff in Run, and Close closes the last. Without Reopen the caller
	// owns Fabric.
	Reopen func(ctx context.Context) (*query.Fabric, error)
	// Selectors, when set, read only these nodes (--lid) instead of sweeping the
	// subnet; the audit needs a whole sweep and is not run.
	Selectors []query.FabricSelector
	// Interval is the time between the starts of two sweeps (Run).
	Interval time.Duration
	// Timeout bounds one sweep, counters included (0: Interval).
	Timeout time.Duration
	// The audit is `ibkey fabric check`'s (partconf.AuditFabric): OpenSM, when set, is
	// what its opensm.conf says (nil: OpenSM's defaults); Partitions, when set, also
	// compares the tables with what OpenSM programs from this partitions.conf;
	// AllowBoth is OpenSM's -W (OpenSM's allow_both_pkeys wins).
	OpenSM     *partconf.OpenSMConf
	Partitions *partconf.Config
	AllowBoth  bool
	// NoCounters skips the PMA PortCounters reads (tables and PortInfo only).
	NoCounters bool
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Logf, when set, is told about sweeps that did not complete, about the
	// transport being reopened, and when OpenSM's guid is not the master SM's port.
	Logf func(format string, args ...any)
}

// FabricCollector sweeps a subnet on a schedule and answers scrapes from the last
// complete sweep, never by sweeping during a scrape: a sweep of a large subnet sends
// thousands of MADs, and every Prometheus server scraping the exporter would multiply
// them.
type FabricCollector struct {
	opts FabricOptions
	snap atomic.Pointer[fabricSnapshot]
	// fab is the transport; nil while it is to be reopened. Only the sweeping
	// goroutine (Run, or the caller of Sweep) touches it.
	fab *query.Fabric

	mu          sync.Mutex
	results     map[string]float64
	lastFailure string
	lastGaps    string // what the last served sweep did not read, as last logged
	notMaster   string // OpenSM.NotMaster of the last sweep (the sweeping goroutine's)
	reached     bool   // the last sweep reached the fabric and its transport still works
}

// fabricSnapshot is one complete sweep and its series, built once, and gathered once
// (families: the registry's checks and sort run when the sweep completes, not at every
// scrape; a 2,000-node sweep is 75,000 series).
type fabricSnapshot struct {
	at       time.Time
	duration time.Duration
	series   *seriesSet // until store gathers them into families
	families []*dto.MetricFamily
	// lateCounters: PortCounters read after the sweep, not while it ran.
	lateCounters int
	// notRead is what the sweep did not read, by fabric.NotRead (the audit's
	// NotChecked): a sweep with any is served, but counted ResultGaps, not complete.
	notRead []fabric.NotChecked
}

// Sweep results, the values of ibkey_fabric_sweeps_total's result label. A sweep that
// finished is served; it is complete only when fabric.NotRead, the rule every command
// uses, lists nothing: one with gaps (a link whose far end did not answer, a PortInfo
// or P_Key table read that failed) is ResultGaps, and ibkey_fabric_not_read says what.
const (
	ResultComplete = "complete"
	ResultGaps     = "gaps"
	ResultPartial  = "partial"
	ResultFailed   = "failed"
)

// ErrPartial wraps Sweep's error for a sweep that reached the fabric and stopped
// early (ResultPartial), as against one that failed.
var ErrPartial = errors.New("sweep partial")

// sweepResults are the results in the order they are exported.
var sweepResults = []string{ResultComplete, ResultGaps, ResultPartial, ResultFailed}

// Reopening backs off from reopenMin to reopenMax between attempts: opening umad or
// attaching to ibsim costs little, and a restarted simulator or reloaded driver is
// swept again within reopenMax of coming back.
const (
	reopenMin = time.Second
	reopenMax = 8 * time.Second
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
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	return &FabricCollector{opts: opts, fab: opts.Fabric, results: map[string]float64{}}
}

// Run sweeps now and then every Interval (from the start of one sweep to the start of
// the next; a sweep that takes longer is followed at once by the next) until ctx ends.
// While the transport is down it is reopened with backoff instead, and swept at once
// when it opens.
func (c *FabricCollector) Run(ctx context.Context) {
	backoff := time.Duration(0)
	for {
		start := time.Now()
		_ = c.Sweep(ctx) // counted, logged and served by Sweep
		wait := c.opts.Interval - time.Since(start)
		if c.fab == nil {
			backoff = min(max(2*backoff, reopenMin), reopenMax)
			wait = backoff
		} else {
			backoff = 0
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(max(wait, 0)):
		}
	}
}

// Close closes the transport the collector owns (with Reopen).
func (c *FabricCollector) Close() error {
	if c.opts.Reopen == nil || c.fab == nil {
		return nil
	}
	err := c.fab.T.Close()
	c.fab = nil
	return err
}

// Sweep runs one sweep (or reads the --lid nodes) with counters and the audit, and
// serves it when it completed. A sweep that stopped early or failed is counted and
// its reason kept; the previous complete sweep stays served. With Reopen, a transport
// that went down is closed, and opened again by the next Sweep.
func (c *FabricCollector) Sweep(ctx context.Context) error {
	start := c.opts.Now()
	sctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	if c.fab == nil {
		if c.opts.Reopen == nil {
			return c.finish(nil, errors.New("no MAD transport"))
		}
		fab, err := c.opts.Reopen(sctx)
		if err != nil {
			return c.finish(nil, fmt.Errorf("opening the MAD transport again: %w", err))
		}
		c.fab = fab
		c.opts.Logf("the MAD transport %s is open again", fab.Via)
	}
	tap := newPortInfoTap(c.fab.T)
	var (
		snap *fabricSnapshot
		err  error
	)
	if len(c.opts.Selectors) > 0 {
		snap, err = c.readNodes(sctx, tap)
	} else {
		snap, err = c.sweep(sctx, tap)
	}
	down := tap.downErr()
	if down != nil {
		err = fmt.Errorf("the MAD transport went down: %w", down)
	}
	if c.opts.Reopen != nil && (down != nil || snap == nil && ctx.Err() == nil && !c.localAnswers(ctx)) {
		_ = c.fab.T.Close()
		c.fab = nil
		err = fmt.Errorf("%w (closed the MAD transport: reopening it)", err)
	}
	if err == nil {
		snap.at, snap.duration = start, c.opts.Now().Sub(start)
		err = c.store(snap)
	}
	return c.finish(snap, err)
}

// localAnswers reports whether the local port answers a NodeInfo: a sweep that read
// nothing while it does was cut off further out (a stalled switch); while it does
// not, only a new transport can help (a dropped simulator slot answers nothing).
func (c *FabricCollector) localAnswers(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err := mad.GetNodeInfo(ctx, c.fab.T, mad.DirectedRoute())
	return err == nil
}

// finish counts a sweep by result (snap nil: failed; err set: partial, or failed;
// served with something not read: gaps) and keeps why it did not complete; a reason,
// or what a served sweep did not read, is logged when it changes (a transport reopened
// for hours says so once).
func (c *FabricCollector) finish(snap *fabricSnapshot, err error) error {
	result := ResultComplete
	gaps := ""
	switch {
	case snap == nil && err != nil:
		result = ResultFailed
	case err != nil:
		result = ResultPartial
	case len(snap.notRead) > 0:
		result = ResultGaps
		gaps = fabric.NotCheckedSummary(snap.notRead)
	}
	c.mu.Lock()
	c.results[result]++
	c.reached = result != ResultFailed && c.fab != nil
	last, lastGaps := c.lastFailure, c.lastGaps
	c.lastFailure, c.lastGaps = "", gaps
	if err != nil {
		c.lastFailure = err.Error()
	}
	c.mu.Unlock()
	switch {
	case err != nil && err.Error() != last:
		c.opts.Logf("sweep %s (the previous sweep is still served): %v", result, err)
	case gaps != "" && gaps != lastGaps:
		c.opts.Logf("sweep served with gaps (not checked): %s", gaps)
	}
	if result == ResultPartial {
		return fmt.Errorf("%w: %w", ErrPartial, err)
	}
	return err
}

// Describe implements prometheus.Collector.
func (c *FabricCollector) Describe(ch chan<- *prometheus.Desc) { describe(ch, ModeFabric) }

// store builds snap's families, as a registry gathers them, once, and serves it.
func (c *FabricCollector) store(snap *fabricSnapshot) error {
	fams, err := snap.series.families()
	if err != nil {
		return fmt.Errorf("gathering the sweep's series: %w", err)
	}
	snap.families, snap.series = fams, nil
	c.snap.Store(snap)
	return nil
}

// NotRead is what the served sweep did not read (fabric.NotRead), or nil.
func (c *FabricCollector) NotRead() []fabric.NotChecked {
	if s := c.snap.Load(); s != nil {
		return s.notRead
	}
	return nil
}

// prebuiltFamilies are the served sweep's families, gathered when it completed (nil
// before the first one).
func (c *FabricCollector) prebuiltFamilies() ([]*dto.MetricFamily, error) {
	if s := c.snap.Load(); s != nil {
		return s.families, nil
	}
	return nil, nil
}

// Collect implements prometheus.Collector: the sweep results so far, and the served
// sweep's time, age and duration; NewRegistry adds the sweep's own series, gathered
// once (prebuiltFamilies).
func (c *FabricCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.snap.Load()
	c.mu.Lock()
	for _, r := range sweepResults {
		ch <- counter(mSweeps, c.results[r], r)
	}
	if c.lastFailure != "" {
		ch <- gauge(mLastFailure, 1, c.lastFailure)
	}
	up := c.reached
	c.mu.Unlock()
	if s == nil {
		ch <- gauge(mFabricUp, 0)
		return
	}
	ch <- gauge(mFabricUp, boolValue(up))
	ch <- gauge(mSweepTime, float64(s.at.UnixNano())/1e9)
	ch <- gauge(mSweepAge, c.opts.Now().Sub(s.at).Seconds())
	ch <- gauge(mSweepDuration, s.duration.Seconds())
}

// portRecord is one exported fabric port (held by pointer: a record is 360 bytes).
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
	// PMA: where PortCounters go, or why not (query.MADPort.NoPortCounters).
	pma   query.PMAPort
	noPMA query.Reading
	// Counter readings, parallel to fabricCounters.
	readings [4]query.Reading
	pairs    []*dto.LabelPair // labels' pairs (portSeries)
}

// fabricCounters are the partition counters of a fabric port, in output order.
var fabricCounters = [4]struct {
	counter query.Counter
	metric  *Metric
}{
	{query.Counter{Name: query.RcvConstraintErrors, Width: 8}, mFRcvConstraint},
	{query.Counter{Name: query.XmitConstraintErrors, Width: 8}, mFXmitConstraint},
	{query.Counter{Name: query.PKeyViolations, Width: query.PortInfoViolationWidth}, mFPKeyViolations},
	{query.Counter{Name: query.QKeyViolations, Width: query.PortInfoViolationWidth}, mFQKeyViolations},
}

// fabricCountersByName are the indexes of fabricCounters in counter name order.
var fabricCountersByName = [4]int{2, 0, 1, 3}

var stateIDs = map[string]int{check.StateDown: 1, check.StateInit: 2, check.StateArmed: 3, check.StateActive: 4, "ACTIVE_DEFER": 5}

// noQKey is why a port's Q_KeyViolations is not exported when its PortInfo was read
// but the reply was not seen (a sweep loaded from a file keeps P_KeyViolations only).
const noQKey = "PortInfo Q_KeyViolations not captured with this sweep"

func (c *FabricCollector) sweep(ctx context.Context, tap *portInfoTap) (*fabricSnapshot, error) {
	if !c.opts.NoCounters {
		tap.pma = newPMAPrefetch(ctx, tap.t)
	}
	f, err := query.Sweep(ctx, tap, query.SweepOptions{Source: c.fab.Via, Now: c.opts.Now})
	var got map[query.PMAPort]query.PMAReading
	if tap.pma != nil {
		got = tap.pma.done()
	}
	if f == nil {
		return nil, err
	}
	if err == nil && f.Incomplete != "" {
		err = fmt.Errorf("sweep incomplete: %s", f.Incomplete)
	}
	return c.fromFabric(ctx, f, tap, got), cmp.Or(err, ctx.Err())
}

// fromFabric reads the counters of a sweep's ports (unless NoCounters) through tap, runs
// the audit and builds the series. got are the PortCounters read while the sweep ran
// (nil: none).
func (c *FabricCollector) fromFabric(ctx context.Context, f *fabric.Fabric, tap *portInfoTap, got map[query.PMAPort]query.PMAReading) *fabricSnapshot {
	var infos map[check.PortID]tappedPortInfo
	if tap != nil {
		infos = tap.portInfos()
	}
	recs := sweepRecords(f, infos)
	late := 0
	if c.opts.NoCounters {
		noCounters(recs)
	} else {
		late = readPortCounters(ctx, tap, c.fab.Via, recs, got)
	}
	// The audit's NotChecked is fabric.NotRead(true): computed once, for
	// ibkey_fabric_not_read and the sweep's result.
	res, _ := partconf.AuditFabric(f, c.opts.Partitions, c.opts.OpenSM, c.opts.AllowBoth)
	// As fabric check notes it, logged when it changes (not every sweep).
	if note := c.opts.OpenSM.NotMaster(f); note != c.notMaster {
		if c.notMaster = note; note != "" {
			c.opts.Logf("%s", note)
		}
	}
	out := newSeriesSet()
	portSeries(out, recs)
	findingSeries(out, f, recs, res, partconf.AuditRules(c.opts.Partitions != nil))
	return &fabricSnapshot{lateCounters: late, series: out, notRead: res.NotChecked}
}

// noCounters marks the records' PortCounters not read (--no-counters).
func noCounters(recs []*portRecord) {
	for _, r := range recs {
		r.readings[0] = query.Reading{Unavailable: "not read (--no-counters)"}
		r.readings[1] = r.readings[0]
	}
}

// sweepRecords are the ports `ibkey fabric pkeys` shows: end ports (CA ports, switch
// port 0) and cabled switch ports.
// infos are the PortInfo replies the tap kept (their Q_KeyViolations).
func sweepRecords(f *fabric.Fabric, infos map[check.PortID]tappedPortInfo) []*portRecord {
	var recs []*portRecord
	for _, n := range f.Nodes {
		nodeGUID := n.GUID.String()
		for _, p := range n.Ports {
			if !n.Listed(p) {
				continue // fabric.Node.Listed: the ports fabric pkeys shows
			}
			labels, pma := portLabels(n, p, nodeGUID)
			r := &portRecord{
				id:       check.PortID{Node: n.GUID, Port: p.Num},
				labels:   labels,
				nodeType: string(n.Type), state: p.State,
				tableSize: p.TableSize, pkeys: p.PKeys, tableErr: p.PKeysError,
				pma: pma.PMA(p.Num), noPMA: pma.NoPortCounters(),
			}
			if p.GUID != 0 {
				r.portGUID = p.GUID.String()
			}
			if r.pkeys == nil && r.tableErr == "" {
				r.tableErr = "not read"
			}
			switch pi, ok := infos[r.id]; {
			case p.Error != "":
				r.state = ""
				r.readings[2] = query.Reading{Err: p.Error}
				r.readings[3] = r.readings[2]
			case ok:
				r.readings[2] = query.Reading{Value: uint64(p.PKeyViolations)}
				r.readings[3] = query.Reading{Value: uint64(pi.qkey)}
			default:
				r.readings[2] = query.Reading{Value: uint64(p.PKeyViolations)}
				r.readings[3] = query.Reading{Unavailable: noQKey}
			}
			recs = append(recs, r)
		}
	}
	return recs
}

// portLabels are a swept port's labels (node_guid, node_name, port, lid: a switch's, of
// port 0, for its ports) and where its PortCounters go (sweepPMA). A LID not read (its
// PortInfo failed) is "" and says so, never "no subnet manager has assigned one".
func portLabels(n *fabric.Node, p *fabric.Port, nodeGUID string) ([4]string, query.MADPort) {
	var swLID uint16
	lidErr := p.Error
	if p0 := n.Port(0); n.Type == check.NodeSwitch && p0 != nil {
		swLID, lidErr = p0.LID, p0.Error
	}
	pma := sweepPMA(n.Type == check.NodeSwitch, p.LID, swLID, p.State == check.StateDown)
	pma.Name = n.Description + "/" + strconv.Itoa(p.Num)
	lid := strconv.Itoa(int(pma.PMALID))
	if lidErr != "" {
		lid, pma.NoPMA = "", "LID not read (PMA PortCounters are LID-routed): "+lidErr
	}
	return [4]string{nodeGUID, n.Description, strconv.Itoa(p.Num), lid}, pma
}

// noLID is why a port's PortCounters are not read.
const noLID = "no LID (PMA PortCounters are LID-routed; no subnet manager has assigned one yet)"

// sweepPMA is where a swept port's PMA PortCounters go (a switch port's to the switch's
// LID, port 0's), and its NoPortCounters, query's one rule, whether they are read: for
// sweepRecords (portLabels) and the prefetch during the sweep (portInfoTap.pmaPorts).
func sweepPMA(isSwitch bool, lid, switchLID uint16, down bool) query.MADPort {
	if isSwitch {
		lid = switchLID
	}
	return query.MADPort{PMALID: lid, FollowLID: !isSwitch, Down: down, NoPMA: noLID}
}

// readNodes reads the --lid nodes' ports (tables, PortInfo) through tap, and their
// counters as a sweep's are (readPortCounters): the violation counters from the PortInfo
// replies, PortCounters from a CA port's LID or a switch port's switch (port 0's LID).
func (c *FabricCollector) readNodes(ctx context.Context, tap *portInfoTap) (*fabricSnapshot, error) {
	fab := &query.Fabric{T: tap, Via: c.fab.Via, DirectedRouteFlag: c.fab.DirectedRouteFlag, ListLIDs: c.fab.ListLIDs}
	views, err := fab.LoadMany(ctx, c.opts.Selectors, query.LoadOptions{Tables: true})
	if len(views) == 0 {
		return nil, cmp.Or(err, errors.New("no port read"))
	}
	// Addresses that did not answer (a *query.PartialError) are nodes not read, and
	// tables not read (a CA's other port without a LID of its own) tables not read, as
	// fabric pkeys --lid counts them (cmdutil.HostNotRead) and as in a sweep: served
	// with gaps, in ibkey_fabric_not_read and the log. A DOWN port's is part of no
	// answer (query.PortView.DownTableNotRead), as a sweep's DOWN ports are not.
	var notRead []fabric.NotChecked
	if partial, ok := errors.AsType[*query.PartialError](err); ok {
		for _, u := range partial.Unread {
			notRead = append(notRead, fabric.NotChecked{Kind: fabric.UnreadNode, What: fabric.NotReadNode, Reason: u.What + ": " + u.Err.Error()})
		}
		err = nil
	}
	for _, v := range views {
		if why := v.TableNotRead(); why != "" && !v.DownTableNotRead() {
			notRead = append(notRead, fabric.NotChecked{Kind: fabric.UnreadTable, What: fabric.NotReadTable,
				Reason: fmt.Sprintf("%q[%d] (%s): %s", v.Device.NodeDesc.Value, v.Port.Num, v.Fabric.NodeGUID, why)})
		}
	}
	infos := tap.portInfos()
	recs := make([]*portRecord, len(views))
	switchLIDs := map[string]uint16{}
	for i, v := range views {
		r := viewRecord(v)
		if pi, ok := infos[r.id]; ok {
			r.readings[2] = query.Reading{Value: uint64(pi.pkey)}
			r.readings[3] = query.Reading{Value: uint64(pi.qkey)}
		} else { // not seen: the tap keeps every PortInfo read through it
			r.readings[2] = query.Reading{Unavailable: noQKey}
			r.readings[3] = r.readings[2]
		}
		if p, err := fab.MADPortOf(ctx, v, v.Ref(), switchLIDs); err != nil {
			r.noPMA.Unavailable = fmt.Sprintf("the switch's LID (its port 0's PortInfo) was not read: %v", err)
		} else {
			p.NoPMA = noLID
			r.pma, r.noPMA = p.PMA(r.id.Port), p.NoPortCounters()
			if !p.FollowLID { // a switch port's lid is the switch's, as a sweep's
				r.labels[3] = strconv.Itoa(int(p.PMALID))
			}
		}
		recs[i] = r
	}
	if c.opts.NoCounters {
		noCounters(recs)
	} else {
		readPortCounters(ctx, tap, c.fab.Via, recs, nil)
	}
	out := newSeriesSet()
	portSeries(out, recs)
	notReadSeries(out, []string{fabric.NotReadNode, fabric.NotReadTable}, notRead)
	return &fabricSnapshot{series: out, notRead: notRead}, err
}

func viewRecord(v *query.PortView) *portRecord {
	d, p := v.Device, v.Port
	var lid uint16
	if p.LID.OK() {
		lid = p.LID.Value
	}
	r := &portRecord{
		id:     check.PortID{Node: check.GUID(v.Fabric.NodeGUID), Port: p.Num},
		labels: [4]string{check.GUID(v.Fabric.NodeGUID).String(), d.NodeDesc.Value, strconv.Itoa(p.Num), strconv.Itoa(int(lid))},
		state:  p.State.Name,
	}
	if e := d.NodeType.Value; d.NodeType.OK() {
		r.nodeType = e.Name
		if t, ok := check.NodeTypeOf(uint8(e.Num)); ok && e.Num == int(uint8(e.Num)) {
			r.nodeType = string(t) // the sweep's names
		}
	}
	if p.GID0.OK() {
		if guid := p.GID0.Value.PortGUID(); guid != 0 {
			r.portGUID = check.GUID(guid).String()
		}
	}
	switch {
	case v.Table != nil:
		r.tableSize = len(v.Table.Entries)
		r.pkeys = make([]check.PKey, len(v.Table.Entries))
		for i, e := range v.Table.Entries {
			r.pkeys[i] = e.PKey
		}
	case v.TableAbsent:
		// A node that reports a table length of 0: an empty table, as a sweep's.
		r.pkeys = []check.PKey{}
	default:
		r.tableErr = cmp.Or(v.TableMissing, "not read")
	}
	return r
}

// portSeries adds the series of the records' ports, tables and counters to out. A
// port's labels (node_guid, node_name, port, lid: the first of every port metric's)
// are made pairs once and shared by its series.
func portSeries(out *seriesSet, recs []*portRecord) {
	// In the exposition's order (by lid, node_guid, node_name, port: the labels' name
	// order), so that families' sort finds the families of a port's labels in order.
	slices.SortFunc(recs, func(a, b *portRecord) int {
		return cmp.Or(strings.Compare(a.labels[3], b.labels[3]), strings.Compare(a.labels[0], b.labels[0]),
			strings.Compare(a.labels[1], b.labels[1]), strings.Compare(a.labels[2], b.labels[2]))
	})
	var port []*dto.LabelPair
	add := func(m *Metric, v float64, more ...string) { out.addTo(m, v, port, more...) }
	for _, r := range recs {
		port = out.carve(4)
		r.pairs = port
		for j, name := range mFPortInfo.Labels[:4] {
			port[j] = out.pair(name, r.labels[j])
		}
		add(mFPortInfo, 1, r.nodeType, r.portGUID)
		if r.pkeys != nil || r.tableSize > 0 {
			// A size of 0 with no table read is a size not read (SwitchInfo or the
			// port's PortInfo failed; --lid keeps none): absent, never 0.
			add(mFTableSize, float64(r.tableSize))
		}
		if id, ok := stateIDs[r.state]; ok {
			add(mFPortState, float64(id))
		}
		if r.pkeys == nil {
			add(mFTableUnread, 1, r.tableErr)
		} else {
			valid := 0
			for j, k := range r.pkeys {
				if k.Valid() {
					valid++
					add(mFEntry, 1, strconv.Itoa(j), k.String(), k.Partition().String(), k.Membership().String())
				}
			}
			add(mFTableValid, float64(valid))
		}
	}
	// The counters' series counter by counter in name order (the first label of the
	// saturated and unreadable families): those families too are sorted already.
	for _, k := range fabricCountersByName {
		fc := fabricCounters[k]
		for _, r := range recs {
			port = r.pairs
			why, sat := counterState(fc.counter, r.readings[k])
			switch {
			case r.readings[k].Absent:
				add(mFUnavailable, 1, fc.counter.Name, why)
				continue
			case why != "":
				add(mFUnreadable, 1, fc.counter.Name, why)
				continue
			}
			add(fc.metric, float64(r.readings[k].Value))
			add(mFSaturated, sat, fc.counter.Name)
		}
	}
}

// notReadKinds are the What of fabric.NotRead's items a sweep of the exporter can
// have, each exported (at 0 when nothing of it is missing).
var notReadKinds = []string{fabric.NotReadSweep, fabric.NotReadLink, fabric.NotReadUnprobed,
	fabric.NotReadNode, fabric.NotReadPortInfo, fabric.NotReadTable}

// notReadSeries adds ibkey_fabric_not_read: how many of items there are of each what,
// kinds each at 0 when there is none.
func notReadSeries(out *seriesSet, kinds []string, items []fabric.NotChecked) {
	n := map[string]int{}
	for _, what := range kinds {
		n[what] = 0
	}
	for _, nc := range items {
		n[nc.What]++
	}
	for what, k := range n {
		out.add(mNotRead, float64(k), what)
	}
}

// findingSeries adds the node counts, what the sweep did not read and the audit's
// findings (fabric and port) to out.
func findingSeries(out *seriesSet, f *fabric.Fabric, recs []*portRecord, res fabric.AuditResult, rules []partconf.AuditRule) {
	types := map[string]int{string(check.NodeCA): 0, string(check.NodeSwitch): 0, string(check.NodeRouter): 0}
	for _, n := range f.Nodes {
		types[string(n.Type)]++
	}
	for t, n := range types {
		out.add(mNodes, float64(n), t)
	}
	out.add(mUnreachable, float64(len(f.Unreachable)))
	// What the sweep did not read, by the rule every command uses (fabric.NotRead,
	// the audit's NotChecked): a sweep that finished may still have links, reads and
	// tables it could not read, and nothing they hold was checked.
	notReadSeries(out, notReadKinds, res.NotChecked)
	type ruleSev struct{ rule, sev string }
	counts := map[ruleSev]int{}
	for _, r := range rules { // each at 0 when nothing was found
		counts[ruleSev{r.Rule, r.Severity.String()}] = 0
	}
	type portKind struct {
		id check.PortID
		rs ruleSev
	}
	perPort := map[portKind]int{}
	for _, fd := range res.Findings {
		rs := ruleSev{fd.Rule, fd.Severity.String()}
		counts[rs]++
		for _, p := range fd.Ports {
			perPort[portKind{p.PortID, rs}]++
		}
	}
	for rs, n := range counts {
		out.add(mFindings, float64(n), rs.rule, rs.sev)
	}
	byID := make(map[check.PortID]*portRecord, len(recs))
	for _, r := range recs {
		byID[r.id] = r
	}
	for pk, n := range perPort {
		var port [4]string
		if r := byID[pk.id]; r != nil {
			port = r.labels
		} else {
			port = findingPortLabels(f, pk.id)
		}
		out.add(mFPortFinding, float64(n), port[0], port[1], port[2], port[3], pk.rs.rule, pk.rs.sev)
	}
}

// findingPortLabels labels a port a finding names that is not an exported port (a
// switch port without a cable), as portLabels does.
func findingPortLabels(f *fabric.Fabric, id check.PortID) [4]string {
	n := cmp.Or(f.Node(id.Node), &fabric.Node{GUID: id.Node})
	labels, _ := portLabels(n, cmp.Or(n.Port(id.Port), &fabric.Port{Num: id.Port}), id.Node.String())
	return labels
}
