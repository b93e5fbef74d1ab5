package exporter

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ibkey/ibkey/internal/smlog"
)

// ModeSMLog: metrics from OpenSM's log (--sm-log), in either mode.
const ModeSMLog Mode = "sm-log"

var mSMEvents = newMetric(ModeSMLog, "ibkey_sm_events_total",
	"Partition and key events in OpenSM's log (--sm-log, followed across rotation), by kind (those of ibkey sm log) and partition key (empty for an event without one; \"other\" past 256 keys of one kind).",
	"kind", "key")

// SMLogCollector exports the events counted from OpenSM's log (smlog.FollowCounts).
type SMLogCollector struct {
	counts *smlog.Counts
}

// NewSMLogCollector exports counts.
func NewSMLogCollector(counts *smlog.Counts) *SMLogCollector { return &SMLogCollector{counts: counts} }

// Describe implements prometheus.Collector.
func (c *SMLogCollector) Describe(ch chan<- *prometheus.Desc) { describe(ch, ModeSMLog) }

// Collect implements prometheus.Collector: one series per kind and key seen.
func (c *SMLogCollector) Collect(ch chan<- prometheus.Metric) {
	c.counts.Each(func(k smlog.CountKey, n uint64) {
		ch <- counter(mSMEvents, float64(n), string(k.Kind), k.Key)
	})
}
