package exporter

import (
	"math"
	"strings"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// seriesSet builds the series that change only when the tables are read again or a
// sweep completes, once (what node_exporter's collectors do per scrape, done per sweep:
// a 2,000-node sweep is 75,000 series). Label pairs are interned: a fabric port's four
// are shared by its dozen series.
type seriesSet struct {
	fams  map[*Metric][]series
	pairs labelPairs
	// Slabs the label pairs and values are carved from; most values are 0 or 1.
	labels    []*dto.LabelPair
	gauges    []dto.Gauge
	values    []float64
	zero, one dto.Gauge
	zv, ov    float64
}

// series is one gauge series of a seriesSet, a prometheus.Metric whose Write hands the
// registry the set's label pairs (in name order, as Write must) and value.
type series struct {
	desc   *prometheus.Desc
	labels []*dto.LabelPair
	gauge  *dto.Gauge
}

func (s *series) Desc() *prometheus.Desc { return s.desc }

func (s *series) Write(out *dto.Metric) error {
	out.Label, out.Gauge = s.labels, s.gauge
	return nil
}

func newSeriesSet() *seriesSet {
	s := &seriesSet{fams: map[*Metric][]series{}, pairs: labelPairs{}, ov: 1}
	s.zero.Value, s.one.Value = &s.zv, &s.ov
	return s
}

// add adds a series of m; pairs are its label pairs in m.Labels order.
func (s *seriesSet) add(m *Metric, v float64, pairs ...*dto.LabelPair) {
	if cap(s.labels)-len(s.labels) < len(pairs) {
		s.labels = make([]*dto.LabelPair, 0, 8192)
	}
	n := len(s.labels)
	s.labels = s.labels[:n+len(pairs)]
	lp := s.labels[n : n+len(pairs) : n+len(pairs)]
	for i, j := range m.sorted {
		lp[i] = pairs[j]
	}
	s.fams[m] = append(s.fams[m], series{desc: m.desc, labels: lp, gauge: s.gauge(v)})
}

// addValues adds a series of m with its label values in m.Labels order.
func (s *seriesSet) addValues(m *Metric, v float64, values ...string) {
	pairs := make([]*dto.LabelPair, len(values))
	for i, val := range values {
		pairs[i] = s.pairs.get(m.Labels[i], val)
	}
	s.add(m, v, pairs...)
}

func (s *seriesSet) gauge(v float64) *dto.Gauge {
	switch {
	case v == 0 && !math.Signbit(v):
		return &s.zero
	case v == 1:
		return &s.one
	}
	if len(s.gauges) == cap(s.gauges) {
		s.gauges, s.values = make([]dto.Gauge, 0, 1024), make([]float64, 0, 1024)
	}
	k := len(s.gauges)
	s.gauges, s.values = s.gauges[:k+1], append(s.values, v)
	s.gauges[k].Value = &s.values[k]
	return &s.gauges[k]
}

// done returns the set's series (the registry sorts them when it gathers).
func (s *seriesSet) done() []series {
	var out []series
	for _, f := range s.fams {
		out = append(out, f...)
	}
	return out
}

func collectSeries(ch chan<- prometheus.Metric, ss []series) {
	for i := range ss {
		ch <- &ss[i]
	}
}

// seriesCollector collects a set of series (an unchecked collector: it describes
// nothing, the registry checks what it collects).
type seriesCollector []series

func (s seriesCollector) Describe(chan<- *prometheus.Desc)    {}
func (s seriesCollector) Collect(ch chan<- prometheus.Metric) { collectSeries(ch, s) }

// gatherSeries gathers ss through a registry of their own: checked and sorted once.
func gatherSeries(ss []series) ([]*dto.MetricFamily, error) {
	reg := prometheus.NewRegistry()
	if err := reg.Register(seriesCollector(ss)); err != nil {
		return nil, err
	}
	return reg.Gather()
}

// labelPairs interns label pairs.
type labelPairs map[[2]string]*dto.LabelPair

// get returns the pair name=value, shared by every series that has it.
func (p labelPairs) get(name, value string) *dto.LabelPair {
	k := [2]string{name, value}
	if lp := p[k]; lp != nil {
		return lp
	}
	lp := newPair(name, value)
	p[k] = lp
	return lp
}

// newPair returns the pair name=value, not interned (a value one port has: its GUID).
// A value that is not valid UTF-8 (a node description from the fabric) has its bad
// bytes replaced: the exposition formats carry UTF-8 only.
func newPair(name, value string) *dto.LabelPair {
	if !utf8.ValidString(value) {
		value = strings.ToValidUTF8(value, "\uFFFD")
	}
	return &dto.LabelPair{Name: &name, Value: &value}
}
