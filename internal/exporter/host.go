package exporter

import (
	"cmp"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/ibverbs"
	"github.com/ibkey/ibkey/internal/query"
)

// ViolationsReason is why the P_Key and Q_Key violation counters are unreadable when no
// source for them was given: they are PortInfo fields, not in sysfs (the kernel's
// drivers/infiniband/core/sysfs.c has no such file); ibv_query_port (bad_pkey_cntr,
// qkey_viol_cntr) or an SMP Get PortInfo reads them.
const ViolationsReason = "not in sysfs: needs a verbs or MAD source (PortInfo P_KeyViolations/Q_KeyViolations)"

// HostOptions configure a HostCollector.
type HostOptions struct {
	Host *query.Host
	// TableMaxAge: the P_Key tables and IPoIB interfaces are read again when the copy
	// is older than this (0: every scrape). On real hardware each pkey file read is a
	// device query (a MAD or firmware command on mlx5), so a fleet scraped every 15 s
	// should not re-read 128 entries per port each time; state and counters are read
	// every scrape.
	TableMaxAge time.Duration
	// Violations reads pkey_violations and qkey_violations of a port (a verbs source,
	// or SMP PortInfo over umad). nil: an InfiniBand port's are reported unreadable
	// with ViolationsReason, a RoCE or iWARP port's unavailable (query.NoPortInfoSource).
	Violations query.CounterSource
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// HostCollector exports the local ports: P_Key tables, IPoIB interfaces, port state
// and the partition counters. It is safe for concurrent scrapes (they are serialized:
// each reads sysfs once).
type HostCollector struct {
	opts HostOptions

	mu       sync.Mutex
	tablesAt time.Time
	loaded   bool
	loadErr  string
	unread   []query.Unread // what the last read did not read (query.NotRead)
	refs     []query.PortRef
	// tables are the families of the series that change only when the tables are
	// read again (prebuiltFamilies), or why they could not be gathered.
	tables    []*dto.MetricFamily
	tablesErr error
	// counters are read per scrape: the constraint errors from sysfs, then the
	// violations from HostOptions.Violations (parallel to hostCounters).
	counters [4]query.Counter
}

// hostCounters are the partition counters, in output order, with their metrics.
var hostCounters = [4]struct {
	name   string
	metric *Metric
}{
	{query.RcvConstraintErrors, mRcvConstraint},
	{query.XmitConstraintErrors, mXmitConstraint},
	{query.PKeyViolations, mPKeyViolations},
	{query.QKeyViolations, mQKeyViolations},
}

// NewHostCollector returns a collector of opts.Host's ports.
func NewHostCollector(opts HostOptions) *HostCollector {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &HostCollector{opts: opts}
}

// Describe implements prometheus.Collector.
func (c *HostCollector) Describe(ch chan<- *prometheus.Desc) { describe(ch, ModeHost) }

// Collect implements prometheus.Collector: the host's state and counters read now; the
// tables are read again when older than TableMaxAge, and their series are served as
// prebuilt families (NewRegistry).
func (c *HostCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.opts.Now()
	if !c.loaded || now.Sub(c.tablesAt) >= c.opts.TableMaxAge {
		c.refresh(now)
	}
	if c.loadErr != "" {
		ch <- gauge(mHostUp, 0)
		ch <- gauge(mHostError, 1, c.loadErr)
		return
	}
	ch <- gauge(mHostUp, 1)
	for _, u := range c.unread {
		switch {
		case u.Table || u.Entries:
			// A table or entries not read are its port's table series
			// (buildHostTables: table_unreadable with the reason, and the count
			// of entries not read).
			continue
		case u.Interface != "":
			// Which device and port it runs on is what was not read: none is named.
			ch <- gauge(mIPoIBUnreadable, 1, u.Interface, u.Err.Error())
			continue
		}
		port := ""
		if u.Port >= 0 {
			port = strconv.Itoa(u.Port)
		}
		ch <- gauge(mDeviceUnreadable, 1, u.Device, port, u.Err.Error())
	}
	ch <- gauge(mTablesAge, now.Sub(c.tablesAt).Seconds())
	names := make([]string, len(hostCounters))
	for i, hc := range hostCounters {
		names[i] = hc.name
	}
	readings := make([]query.Reading, len(hostCounters))
	for _, ref := range c.refs {
		dev, port := ref.Device, strconv.Itoa(ref.Port)
		st, err := c.opts.Host.Sys.PortState(ref.Device, ref.Port)
		if err != nil {
			// The port went away or cannot be read: read the tables again next time.
			c.loaded = false
			why := stateErr(err)
			ch <- gauge(mPortStateError, 1, dev, port, why)
			for _, cn := range c.counters {
				ch <- gauge(mUnreadable, 1, dev, port, cn.Name, cn.Source.Name(), why)
			}
			continue
		}
		ch <- gauge(mPortState, float64(st.Num), dev, port)
		c.counters[0].Source.Read(ref, names[:2], readings[:2])
		c.counters[2].Source.Read(ref, names[2:], readings[2:])
		for i, cn := range c.counters {
			// The source that answered: a fallback's (query.Preferred) when the
			// preferred source could not read it.
			src := cmp.Or(readings[i].Source, cn.Source.Name())
			why, sat := counterState(cn, readings[i])
			switch {
			case readings[i].Absent: // the port has no such counter: nothing failed
				ch <- gauge(mUnavailable, 1, dev, port, cn.Name, why)
				continue
			case why != "":
				ch <- gauge(mUnreadable, 1, dev, port, cn.Name, src, why)
				continue
			}
			ch <- gauge(hostCounters[i].metric, float64(readings[i].Value), dev, port, src)
			ch <- gauge(mSaturated, sat, dev, port, cn.Name)
		}
	}
}

// counterState is what one counter reading of a port says: why it could not be read
// ("" when it was; its value series is then absent, never 0), or whether it is
// saturated (1: at its maximum, it no longer counts).
func counterState(cn query.Counter, r query.Reading) (why string, saturated float64) {
	switch {
	case r.Unavailable != "":
		return r.Unavailable, 0
	case r.Err != "":
		return "read failed: " + r.Err, 0
	case cn.Max() > 0 && r.Value >= cn.Max():
		return "", 1
	}
	return "", 0
}

func stateErr(err error) string {
	var pe *ibverbs.PathError
	if errors.As(err, &pe) {
		return "state: " + ibverbs.Describe(pe.Err)
	}
	return err.Error()
}

// refresh reads the ports, their tables and IPoIB interfaces, and builds the metrics
// that only change with them.
func (c *HostCollector) refresh(now time.Time) {
	c.loaded, c.tablesAt = true, now
	views, err := c.opts.Host.Load(query.Selector{}, query.LoadOptions{Tables: true, Interfaces: true})
	// One unreadable device silences no other: its ports are left out and named.
	unread, err := query.NotRead(views, err)
	if err != nil {
		c.loadErr, c.refs, c.tables, c.tablesErr, c.unread = err.Error(), nil, nil, nil, nil
		return
	}
	c.unread = unread
	c.loadErr = ""
	c.refs = make([]query.PortRef, len(views))
	for i, v := range views {
		c.refs[i] = v.Ref()
	}
	none := query.NewNoPortInfo("none", ViolationsReason, c.opts.Host, views)
	sysfs := query.NewSysfsCounters(c.opts.Host.Sys, views)
	for i, hc := range hostCounters {
		c.counters[i] = query.Counter{Name: hc.name, Source: sysfs, Width: ibverbs.CounterWidths[hc.name]}
		if i >= 2 {
			c.counters[i] = query.Counter{Name: hc.name, Source: cmp.Or[query.CounterSource](c.opts.Violations, none), Width: query.PortInfoViolationWidth}
		}
	}
	c.tables, c.tablesErr = buildHostTables(views).families()
}

// NotRead is what the last read of the host did not read (query.NotRead), or nil.
func (c *HostCollector) NotRead() []query.Unread {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.unread
}

// prebuiltFamilies are the tables' families as last read (NewRegistry gathers them
// after Collect, which reads the tables again when they are due).
func (c *HostCollector) prebuiltFamilies() ([]*dto.MetricFamily, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tables, c.tablesErr
}

// buildHostTables builds the series of the devices, ports, tables and IPoIB
// interfaces.
func buildHostTables(views []*query.PortView) *seriesSet {
	out := newSeriesSet()
	add := out.add
	seenDev := map[string]bool{}
	for _, v := range views {
		d := v.Device
		if !seenDev[d.Name] {
			seenDev[d.Name] = true
			nodeType, guid := "", ""
			if d.NodeType.OK() {
				nodeType = d.NodeType.Value.Name
			}
			if d.NodeGUID.OK() {
				guid = check.GUID(d.NodeGUID.Value).String()
			}
			add(mDeviceInfo, 1, d.Name, nodeType, guid, d.FWVer.Value, d.HCAType.Value)
		}
		dev, port := v.Port.Device, strconv.Itoa(v.Port.Num)
		lid := ""
		if v.Port.LID.OK() {
			lid = strconv.Itoa(int(v.Port.LID.Value))
		}
		add(mPortInfo, 1, dev, port, v.LinkLayer(), lid)
		switch {
		case v.TableAbsent:
			add(mTableAbsent, 1, dev, port, v.TableMissing)
		case v.Table == nil:
			// Not read is not known: the table's own series, never a size or a
			// count of 0 (query.PortView.TableNotRead).
			add(mTableNotRead, 1, dev, port, cmp.Or(v.TableNotRead(), "P_Key table not read"))
		default:
			for _, e := range v.Table.Entries {
				if e.Valid() {
					add(mEntry, 1, dev, port, strconv.Itoa(e.Index), e.PKey.String(), e.PKey.Partition().String(), e.PKey.Membership().String())
				}
			}
			add(mTableSize, float64(len(v.Table.Entries)), dev, port)
			unread := len(v.Table.Unread())
			if unread == 0 { // else a lower bound, 0 when no entry was read
				add(mTableValid, float64(v.Table.Valid), dev, port)
			}
			add(mTableUnreadable, float64(unread), dev, port)
			add(mTableTrusted, boolValue(v.TableTrusted()), dev, port)
		}
		for _, ip := range v.Interfaces {
			// Not read is unknown, never absent: no key_present 0 and no membership
			// unless the entries read decide them (query.IPoIB.Unknown).
			membership, index := "unknown", ""
			switch {
			case v.Table == nil:
			case ip.Index >= 0:
				if ip.Unknown == "" {
					membership, index = ip.Membership.String(), strconv.Itoa(ip.Index)
				}
				add(mIPoIBKey, 1, ip.Name, dev, port, ip.PKey.String())
			case ip.Unknown == "":
				membership = "none"
				add(mIPoIBKey, 0, ip.Name, dev, port, ip.PKey.String())
			}
			add(mIPoIB, 1, ip.Name, ip.Parent, dev, port, ip.PKey.String(), index, membership)
		}
	}
	return out
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
