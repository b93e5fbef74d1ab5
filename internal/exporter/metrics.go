// Package exporter exposes ibkey's view of partitions to Prometheus: the local ports
// read from sysfs (host mode) and every port of a subnet read by a sweep (fabric mode),
// through prometheus/client_golang collectors. Nothing here formats the exposition
// format by hand: the collectors hand const metrics to a registry, and client_golang
// and prometheus/common encode them.
//
// Label names follow node_exporter's infiniband collector where they overlap
// (`device`, `port`). The error counters that saturate (8-bit PortRcv/XmitConstraintErrors,
// 16-bit P_Key/Q_Key violations; IBA 16.1.3.5 PortCounters, 14.2.5.6 PortInfo) are
// gauges with a `saturated` companion, never `_total` counters: at its maximum such a
// counter stops moving, and rate() would read that as "no new drops".
package exporter

import (
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
)

// Mode says where a metric comes from.
type Mode string

const (
	ModeHost   Mode = "host"
	ModeFabric Mode = "fabric"
)

// Metric is one metric family the exporter writes: its name, help, labels and mode.
// Catalog lists them all; the README and the command's help are checked against it.
type Metric struct {
	Name   string
	Help   string
	Labels []string
	Mode   Mode

	// Built on first use (build), not at package init: every ibkey command links this
	// package, and the catalog's descriptors cost each one about 470 allocations at
	// start-up (issue 23's budget).
	once sync.Once
	desc *prometheus.Desc
	// sorted lists the indexes of Labels in name order, the order of a series' label
	// pairs (client_golang's).
	sorted []int
}

func newMetric(mode Mode, name, help string, labels ...string) *Metric {
	return &Metric{Name: name, Help: help, Labels: labels, Mode: mode}
}

// build returns m with its descriptor and label order built.
func (m *Metric) build() *Metric {
	m.once.Do(func() {
		m.sorted = make([]int, len(m.Labels))
		for i := range m.sorted {
			m.sorted[i] = i
		}
		slices.SortFunc(m.sorted, func(a, b int) int { return strings.Compare(m.Labels[a], m.Labels[b]) })
		m.desc = prometheus.NewDesc(m.Name, m.Help, m.Labels, nil)
	})
	return m
}

// Host mode metrics.
var (
	mHostUp = newMetric(ModeHost, "ibkey_host_up",
		"1 when the host's RDMA devices were read, 0 when not (ibkey_host_read_error says why).")
	mHostError = newMetric(ModeHost, "ibkey_host_read_error",
		"Why the host's RDMA devices could not be read (value 1).", "reason")
	mDeviceUnreadable = newMetric(ModeHost, "ibkey_device_unreadable",
		"A device (port empty) or port of the host that could not be read (value 1), with the reason (a dangling class/infiniband entry, a file that cannot be read): its series are absent, the other devices' are exported.", "device", "port", "reason")
	mIPoIBUnreadable = newMetric(ModeHost, "ibkey_ipoib_interface_unreadable",
		"An IPoIB interface in class/net that could not be read or matched to a port (value 1), with the reason (a dangling link, a file that cannot be read, a port's GID 0 not read): the port it runs on is not known, so its key is not checked and its ibkey_ipoib_interface_info is absent.", "interface", "reason")
	mTablesAge = newMetric(ModeHost, "ibkey_host_tables_age_seconds",
		"Age of the P_Key tables and IPoIB interfaces shown (read again after --table-interval: each pkey file read is a device query).")
	mDeviceInfo = newMetric(ModeHost, "ibkey_device_info",
		"An RDMA device (value 1), from class/infiniband/DEV.", "device", "node_type", "node_guid", "firmware_version", "hca_type")
	mPortInfo = newMetric(ModeHost, "ibkey_port_info",
		"A port (value 1): link layer and LID from sysfs.", "device", "port", "link_layer", "lid")
	mPortState = newMetric(ModeHost, "ibkey_port_state_id",
		"Port state from ports/N/state: 1 DOWN, 2 INIT, 3 ARMED, 4 ACTIVE, 5 ACTIVE_DEFER.", "device", "port")
	mPortStateError = newMetric(ModeHost, "ibkey_port_state_unreadable",
		"The port's state could not be read this scrape (value 1), with the reason.", "device", "port", "reason")
	mEntry = newMetric(ModeHost, "ibkey_pkey_entry_info",
		"One valid P_Key table entry (value 1): index, P_Key, 15-bit key and membership (full or limited).",
		"device", "port", "index", "pkey", "key", "membership")
	mTableSize = newMetric(ModeHost, "ibkey_pkey_table_size",
		"P_Key table length (entries in ports/N/pkeys/).", "device", "port")
	mTableValid = newMetric(ModeHost, "ibkey_pkey_table_valid_entries",
		"Entries holding a valid P_Key (15-bit key not 0), of a table whose every entry was read: absent when ibkey_pkey_table_unreadable_entries is above 0 (the entries read are ibkey_pkey_entry_info).", "device", "port")
	mTableUnreadable = newMetric(ModeHost, "ibkey_pkey_table_unreadable_entries",
		"Entries that could not be read (0: the table was read whole). What they hold is not known, so ibkey_pkey_table_valid_entries is then absent.", "device", "port")
	mTableTrusted = newMetric(ModeHost, "ibkey_pkey_table_trusted",
		"1 when the port was ARMED or ACTIVE when the table shown was read (with it, every --table-interval), the only states where the table's contents are defined; ibkey_port_state_id is the port's state now.", "device", "port")
	mTableAbsent = newMetric(ModeHost, "ibkey_pkey_table_unavailable",
		"The port has no P_Key table (value 1), with the reason: an iWARP device, for which the kernel writes no ports/N/pkeys/ (P_Keys do not apply). A table that exists and was not read is ibkey_pkey_table_unreadable, never this.", "device", "port", "reason")
	mTableNotRead = newMetric(ModeHost, "ibkey_pkey_table_unreadable",
		"The port's P_Key table exists and could not be read (value 1), with the reason. It is read from ports/N/pkeys/ in sysfs, one file per entry, each read a device query (a MAD or firmware command): the directory could not be read, or is missing or empty on a port that has a table. What it holds is not known: the port's table size, valid-entry and entry series are absent (never 0), and its IPoIB interfaces have membership unknown. Fabric mode's is ibkey_fabric_pkey_table_unread.", "device", "port", "reason")
	mIPoIB = newMetric(ModeHost, "ibkey_ipoib_interface_info",
		"An IPoIB interface (value 1) on this port: its P_Key (pkey file, always full), the table index the kernel uses and the membership it really runs with (full, limited; none: every entry read and none holds the key; unknown: the table, or entries that may hold the key, could not be read).",
		"interface", "parent", "device", "port", "pkey", "index", "membership")
	mIPoIBKey = newMetric(ModeHost, "ibkey_ipoib_key_present",
		"1 when the interface's partition is in its port's P_Key table, 0 when every entry was read and none holds it (the interface cannot come up). Absent when not known: the table, or entries that may hold the key, could not be read.",
		"interface", "device", "port", "pkey")
	mRcvConstraint = newMetric(ModeHost, "ibkey_port_rcv_constraint_errors",
		"PortRcvConstraintErrors: received packets dropped by partition enforcement (8-bit, saturates at 255; a gauge).", "device", "port", "source")
	mXmitConstraint = newMetric(ModeHost, "ibkey_port_xmit_constraint_errors",
		"PortXmitConstraintErrors: packets not sent because of partition enforcement (8-bit, saturates at 255; a gauge).", "device", "port", "source")
	mPKeyViolations = newMetric(ModeHost, "ibkey_port_pkey_violations",
		"PortInfo P_KeyViolations (ibv_query_port bad_pkey_cntr): packets with a P_Key not in the table (16-bit, saturates; a gauge).", "device", "port", "source")
	mQKeyViolations = newMetric(ModeHost, "ibkey_port_qkey_violations",
		"PortInfo Q_KeyViolations (ibv_query_port qkey_viol_cntr): UD packets with the wrong Q_Key (16-bit, saturates; a gauge).", "device", "port", "source")
	mSaturated = newMetric(ModeHost, "ibkey_port_saturated",
		"1 when the counter is at its maximum: it no longer counts, so an unchanged value does not mean no new drops.", "device", "port", "counter")
	mUnreadable = newMetric(ModeHost, "ibkey_port_unreadable",
		"The counter could not be read (value 1), with the source and the reason; its value metric is absent (not 0).", "device", "port", "counter", "source", "reason")
	mUnavailable = newMetric(ModeHost, "ibkey_port_unavailable",
		"The port has no such counter by nature (value 1), with the reason: a violation counter its driver does not fill on an Ethernet link layer (iWARP: both; mlx5: P_Key violations, and Q_Key violations on a port without a GID table), a device without the counters/ file or PMA. Nothing failed and nothing is unchecked: this is not ibkey_port_unreadable.", "device", "port", "counter", "reason")
)

// Fabric mode metrics.
var (
	mFabricUp = newMetric(ModeFabric, "ibkey_fabric_up",
		"1 when the last sweep reached the fabric and a finished sweep is served (complete, or with gaps ibkey_fabric_not_read names); 0 before the first finished sweep and while sweeps fail (the MAD transport is reopened with backoff; ibkey_fabric_last_sweep_failure says why).")
	mSweepTime = newMetric(ModeFabric, "ibkey_fabric_sweep_timestamp_seconds",
		"When the sweep being served started (Unix time).")
	mSweepAge = newMetric(ModeFabric, "ibkey_fabric_sweep_age_seconds",
		"Age of the sweep being served at the time of the scrape (sweeps run on a schedule, not per scrape).")
	mSweepDuration = newMetric(ModeFabric, "ibkey_fabric_sweep_duration_seconds",
		"How long the sweep being served took, counters included.")
	mSweeps = newMetric(ModeFabric, "ibkey_fabric_sweeps_total",
		"Sweeps run by this exporter, by result: complete (served, everything read), gaps (served, but something not read: ibkey_fabric_not_read says what, and nothing in it is checked), partial or failed (not served: the previous sweep stays).", "result")
	mLastFailure = newMetric(ModeFabric, "ibkey_fabric_last_sweep_failure",
		"The last sweep stopped early or failed (value 1), with the reason; absent after a sweep that finished (complete or gaps).", "reason")
	mNodes = newMetric(ModeFabric, "ibkey_fabric_nodes",
		"Nodes that answered the sweep, by type (ca, switch, router).", "type")
	mUnreachable = newMetric(ModeFabric, "ibkey_fabric_unreachable_links",
		"Links whose far end did not answer NodeInfo: the nodes behind them are not checked.")
	mNotRead = newMetric(ModeFabric, "ibkey_fabric_not_read",
		"What the served sweep could not read, by what (the rule of ibkey fabric check's not-checked list: a link whose far end did not answer, an unprobed link past 63 hops, a node, PortInfo or P_Key table read that failed): nothing behind or in it was checked.",
		"what")
	mFPortInfo = newMetric(ModeFabric, "ibkey_fabric_port_info",
		"A port the sweep read (value 1): end ports and cabled switch ports. lid is the port's LID, a switch's for its external ports; empty when not read (the PortInfo, a switch's port 0's, failed).",
		"node_guid", "node_name", "port", "lid", "node_type", "port_guid")
	mFPortState = newMetric(ModeFabric, "ibkey_fabric_port_state_id",
		"PortInfo PortState: 1 DOWN, 2 INIT, 3 ARMED, 4 ACTIVE; absent when PortInfo was not read.", "node_guid", "node_name", "port", "lid")
	mFEntry = newMetric(ModeFabric, "ibkey_fabric_pkey_entry_info",
		"One valid P_Key table entry of a fabric port (value 1).", "node_guid", "node_name", "port", "lid", "index", "pkey", "key", "membership")
	mFTableSize = newMetric(ModeFabric, "ibkey_fabric_pkey_table_size",
		"P_Key table length (NodeInfo PartitionCap, SwitchInfo PartitionEnforcementCap for switch external ports); absent when it was not read, never 0 for a size not known.", "node_guid", "node_name", "port", "lid")
	mFTableValid = newMetric(ModeFabric, "ibkey_fabric_pkey_table_valid_entries",
		"Entries holding a valid P_Key; absent when the table was not read (a sweep reads a table whole or not at all).", "node_guid", "node_name", "port", "lid")
	mFTableUnread = newMetric(ModeFabric, "ibkey_fabric_pkey_table_unread",
		"The port's P_Key table was not read (value 1), with the reason: what host mode calls ibkey_pkey_table_unreadable.", "node_guid", "node_name", "port", "lid", "reason")
	mFRcvConstraint = newMetric(ModeFabric, "ibkey_fabric_port_rcv_constraint_errors",
		"PMA PortCounters PortRcvConstraintErrors (8-bit, saturates at 255; a gauge).", "node_guid", "node_name", "port", "lid")
	mFXmitConstraint = newMetric(ModeFabric, "ibkey_fabric_port_xmit_constraint_errors",
		"PMA PortCounters PortXmitConstraintErrors (8-bit, saturates at 255; a gauge).", "node_guid", "node_name", "port", "lid")
	mFPKeyViolations = newMetric(ModeFabric, "ibkey_fabric_port_pkey_violations",
		"PortInfo P_KeyViolations (16-bit, saturates; a gauge).", "node_guid", "node_name", "port", "lid")
	mFQKeyViolations = newMetric(ModeFabric, "ibkey_fabric_port_qkey_violations",
		"PortInfo Q_KeyViolations (16-bit, saturates; a gauge), from the PortInfo replies of the sweep (or of --lid).", "node_guid", "node_name", "port", "lid")
	mFSaturated = newMetric(ModeFabric, "ibkey_fabric_port_saturated",
		"1 when the counter is at its maximum and no longer counts.", "node_guid", "node_name", "port", "lid", "counter")
	mFUnreadable = newMetric(ModeFabric, "ibkey_fabric_port_unreadable",
		"The counter could not be read (value 1), with the reason; its value metric is absent (not 0).", "node_guid", "node_name", "port", "lid", "counter", "reason")
	mFUnavailable = newMetric(ModeFabric, "ibkey_fabric_port_unavailable",
		"The counter is not available over the fabric (value 1), with the reason: a DOWN CA or router port's PMA PortCounters (its PMA answers only for the port a MAD arrives on; its host's sysfs reads them). Nothing failed: this is not ibkey_fabric_port_unreadable.", "node_guid", "node_name", "port", "lid", "counter", "reason")
	mFindings = newMetric(ModeFabric, "ibkey_fabric_findings",
		"Audit findings of the sweep being served (ibkey fabric check; with --partitions also the partitions.conf comparison), by rule and severity.", "rule", "severity")
	mFPortFinding = newMetric(ModeFabric, "ibkey_fabric_port_findings",
		"Audit findings of the sweep being served that name this port, by rule and severity (value: how many; a port missing two keys has two).", "node_guid", "node_name", "port", "lid", "rule", "severity")
)

// mDemo marks demo data, in either mode (DemoCollector).
var mDemo = newMetric("", "ibkey_demo_info",
	"Present (value 1) when the metrics come from ibkey's embedded demo host and fabric (--demo), not from a real machine.")

// DemoCollector writes ibkey_demo_info 1: with --demo every series is sample data.
func DemoCollector() prometheus.Collector { return demoCollector{} }

type demoCollector struct{}

func (demoCollector) Describe(ch chan<- *prometheus.Desc) { ch <- mDemo.build().desc }
func (demoCollector) Collect(ch chan<- prometheus.Metric) { ch <- gauge(mDemo, 1) }

// Catalog lists every metric the exporter writes, host mode first, OpenSM's log last.
func Catalog() []*Metric {
	return []*Metric{
		mDemo, mHostUp, mHostError, mDeviceUnreadable, mIPoIBUnreadable, mTablesAge, mDeviceInfo, mPortInfo, mPortState, mPortStateError,
		mEntry, mTableSize, mTableValid, mTableUnreadable, mTableTrusted, mTableAbsent, mTableNotRead,
		mIPoIB, mIPoIBKey, mRcvConstraint, mXmitConstraint, mPKeyViolations, mQKeyViolations,
		mSaturated, mUnreadable, mUnavailable,
		mFabricUp, mSweepTime, mSweepAge, mSweepDuration, mSweeps, mLastFailure, mNodes, mUnreachable, mNotRead,
		mFPortInfo, mFPortState, mFEntry, mFTableSize, mFTableValid, mFTableUnread,
		mFRcvConstraint, mFXmitConstraint, mFPKeyViolations, mFQKeyViolations, mFSaturated, mFUnreadable, mFUnavailable,
		mFindings, mFPortFinding,
		mSMEvents, mSMLogLines, mSMLogNotRead,
	}
}

func describe(ch chan<- *prometheus.Desc, mode Mode) {
	for _, m := range Catalog() {
		if m.Mode == mode {
			ch <- m.build().desc
		}
	}
}

func gauge(m *Metric, v float64, labels ...string) prometheus.Metric {
	return prometheus.MustNewConstMetric(m.build().desc, prometheus.GaugeValue, v, validUTF8(labels)...)
}

func counter(m *Metric, v float64, labels ...string) prometheus.Metric {
	return prometheus.MustNewConstMetric(m.build().desc, prometheus.CounterValue, v, validUTF8(labels)...)
}

// validUTF8 replaces the bytes of label values that are not UTF-8 (a reason quoting
// a file or a MAD's text): client_golang refuses such values, and the exposition
// formats carry UTF-8 only.
func validUTF8(labels []string) []string {
	for i, l := range labels {
		if !utf8.ValidString(l) {
			labels[i] = strings.ToValidUTF8(l, "\uFFFD")
		}
	}
	return labels
}
