package exporter

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ibkey/ibkey/internal/smlog"
)

// ModeSMLog: metrics from OpenSM's log (--sm-log), in either mode.
const ModeSMLog Mode = "sm-log"

var mSMEvents = newMetric(ModeSMLog, "ibkey_sm_events_total",
	"Partition and key events in OpenSM's log (--sm-log, followed across rotation), by kind (those of ibkey sm log, and not-explained: lines about partitions or keys it does not explain) and partition key (empty for an event without one; \"other\" past 256 keys of one kind).",
	"kind", "key")

// mSMLogLines says whether the log is OpenSM's at all: a file none of whose lines is
// in OpenSM's format (the wrong file, a syslog copy) counts no event either, and
// ibkey_sm_events_total alone could not tell it from a quiet log.
var mSMLogLines = newMetric(ModeSMLog, "ibkey_sm_log_lines_total",
	"Lines read from OpenSM's log (--sm-log), by format: \"opensm\" for lines in OpenSM's own format (time stamp, thread, level: osm_log.c), \"other\" for the rest (continuations of its dumps, or a file that is not OpenSM's log when no line is opensm).",
	"format")

// mSMLogNotRead says the log is not being read: its counts then stand still, and
// without it they could not be told from a quiet log's.
var mSMLogNotRead = newMetric(ModeSMLog, "ibkey_sm_log_unreadable",
	"OpenSM's log (--sm-log) is not being read now (value 1), with the reason: not there yet, gone after a rotation and not back, or a read that failed (followed again from its end). Its events meanwhile are not counted; absent while the log is read.",
	"reason")

// SMLogCollector exports the events counted from OpenSM's log (smlog.FollowCounts).
type SMLogCollector struct {
	counts *smlog.Counts
}

// NewSMLogCollector exports counts.
func NewSMLogCollector(counts *smlog.Counts) *SMLogCollector { return &SMLogCollector{counts: counts} }

// Describe implements prometheus.Collector.
func (c *SMLogCollector) Describe(ch chan<- *prometheus.Desc) { describe(ch, ModeSMLog) }

// Collect implements prometheus.Collector: one series per kind and key seen, the
// lines read by format, and why the log is not read, while it is not.
func (c *SMLogCollector) Collect(ch chan<- prometheus.Metric) {
	c.counts.Each(func(k smlog.CountKey, n uint64) {
		ch <- counter(mSMEvents, float64(n), string(k.Kind), k.Key)
	})
	lines, records := c.counts.Lines()
	ch <- counter(mSMLogLines, float64(records), "opensm")
	ch <- counter(mSMLogLines, float64(lines-records), "other")
	if why := c.counts.NotRead(); why != "" {
		ch <- gauge(mSMLogNotRead, 1, why)
	}
}
