package exporter

import (
	"strings"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// seriesSet holds the series that change only when the tables are read again or a
// sweep completes, built once (what node_exporter's collectors do per scrape, done per
// sweep: a 2,000-node sweep is 75,000 series). As a collector it is unchecked: it
// describes nothing, and the registry checks what it collects.
//
// The budgets of a scrape answered from a 2,000-node sweep (under 100 ms) and of a
// sweep with counters (at most 2x `fabric pkeys`) need its layout: label pairs are
// interned (a fabric port's four are shared by its dozen series) and carved, with the
// values, from slabs; the series of value 0 and 1 share one gauge each; a family's
// series are kept together, so the registry's are too. A const metric per series,
// with pairs of its own, made the build 150 -> 470 ms of CPU and a scrape 58 -> 104
// ms; this form: about 170 and 70 ms (BenchmarkScrapeFatTree, 2 busy cores).
type seriesSet struct {
	fams   map[*Metric][]series
	pairs  map[[2]string]*dto.LabelPair
	slab   []dto.LabelPair
	strs   []string
	labels []*dto.LabelPair
	gauges []dto.Gauge
	values []float64
	zero   dto.Gauge
	one    dto.Gauge
}

// series is one gauge series, with its label pairs in name order (as Write must give
// them).
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
	zero, one := 0.0, 1.0
	return &seriesSet{fams: map[*Metric][]series{}, pairs: map[[2]string]*dto.LabelPair{}, zero: dto.Gauge{Value: &zero}, one: dto.Gauge{Value: &one}}
}

// add adds a series of m with its label values in m.Labels order. A value that is not
// valid UTF-8 (a node description from the fabric) has its bad bytes replaced: the
// exposition formats carry UTF-8 only.
func (s *seriesSet) add(m *Metric, v float64, values ...string) {
	if cap(s.labels)-len(s.labels) < len(values) {
		s.labels = make([]*dto.LabelPair, 0, 8192)
	}
	n := len(s.labels)
	labels := s.labels[n : n+len(values) : n+len(values)]
	s.labels = s.labels[:n+len(values)]
	for i, j := range m.sorted {
		k := [2]string{m.Labels[j], values[j]}
		lp := s.pairs[k]
		if lp == nil {
			if !utf8.ValidString(k[1]) {
				k[1] = strings.ToValidUTF8(k[1], "\uFFFD")
			}
			if len(s.slab) == cap(s.slab) {
				s.slab, s.strs = make([]dto.LabelPair, 0, 1024), make([]string, 0, 2048)
			}
			s.strs = append(s.strs, k[0], k[1])
			s.slab = append(s.slab, dto.LabelPair{Name: &s.strs[len(s.strs)-2], Value: &s.strs[len(s.strs)-1]})
			lp = &s.slab[len(s.slab)-1]
			s.pairs[[2]string{m.Labels[j], values[j]}] = lp
		}
		labels[i] = lp
	}
	s.fams[m] = append(s.fams[m], series{desc: m.desc, labels: labels, gauge: s.gauge(v)})
}

func (s *seriesSet) gauge(v float64) *dto.Gauge {
	switch {
	case v == 0:
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

func (*seriesSet) Describe(chan<- *prometheus.Desc) {}

func (s *seriesSet) Collect(ch chan<- prometheus.Metric) {
	for _, f := range s.fams {
		for i := range f {
			ch <- &f[i]
		}
	}
}
