package exporter

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	dto "github.com/prometheus/client_model/go"
)

// seriesSet holds the series that change only when the tables are read again or a
// sweep completes (a 2,000-node sweep is 79,000), built once and made families once
// (families), as a registry would gather them but without one: NewRegistry serves them
// beside the collectors' (prebuilt). The registry's per-series checks and sort were
// two thirds of a 2,000-node sweep's CPU after the MADs (517/448 -> 400/357 ms per
// sweep with counters, BenchmarkFabric2000 paired, load 19). Issue 23's exporter
// budgets need its layout: label pairs interned (a port's four are made once for its
// dozen series) and carved, with the series and values, from slabs; values 0 and 1
// share one gauge each. A const metric per series, with pairs of its own, made the
// build 150 -> 470 ms of CPU and a scrape 58 -> 104 ms (BenchmarkScrapeFatTree).
type seriesSet struct {
	fams     map[*Metric][]*dto.Metric // each series' label pairs in name order
	interned map[[2]string]*dto.LabelPair
	slab     []dto.LabelPair
	strs     []string
	labels   []*dto.LabelPair
	metrics  []dto.Metric
	gauges   []dto.Gauge
	values   []float64
	zero     dto.Gauge
	one      dto.Gauge
}

func newSeriesSet() *seriesSet {
	zero, one := 0.0, 1.0
	return &seriesSet{fams: map[*Metric][]*dto.Metric{}, interned: map[[2]string]*dto.LabelPair{}, zero: dto.Gauge{Value: &zero}, one: dto.Gauge{Value: &one}}
}

// add adds a series of m with its label values in m.Labels order.
func (s *seriesSet) add(m *Metric, v float64, values ...string) { s.addTo(m, v, nil, values...) }

// addTo adds a series of m whose first labels are the pairs of prefix (a fabric port's
// four, made once per port, not once per series) and the others values, in m.Labels
// order.
func (s *seriesSet) addTo(m *Metric, v float64, prefix []*dto.LabelPair, values ...string) {
	if len(prefix)+len(values) != len(m.Labels) {
		panic(fmt.Sprintf("%s: %d label values for %d labels", m.Name, len(prefix)+len(values), len(m.Labels)))
	}
	labels := s.carve(len(m.Labels))
	for i, j := range m.build().sorted {
		if j < len(prefix) {
			labels[i] = prefix[j]
		} else {
			labels[i] = s.pair(m.Labels[j], values[j-len(prefix)])
		}
	}
	if len(s.metrics) == cap(s.metrics) {
		s.metrics = make([]dto.Metric, 0, 1024)
	}
	s.metrics = append(s.metrics, dto.Metric{Label: labels, Gauge: s.gauge(v)})
	s.fams[m] = append(s.fams[m], &s.metrics[len(s.metrics)-1])
}

// carve returns n label pair slots of the slab.
func (s *seriesSet) carve(n int) []*dto.LabelPair {
	if cap(s.labels)-len(s.labels) < n {
		s.labels = make([]*dto.LabelPair, 0, 8192)
	}
	k := len(s.labels)
	s.labels = s.labels[:k+n]
	return s.labels[k : k+n : k+n]
}

// pair returns the one pair of name and value. A value that is not valid UTF-8 (a
// node description from the fabric) has its bad bytes replaced: the exposition formats
// carry UTF-8 only.
func (s *seriesSet) pair(name, value string) *dto.LabelPair {
	k := [2]string{name, value}
	if lp := s.interned[k]; lp != nil {
		return lp
	}
	if !utf8.ValidString(value) {
		value = strings.ToValidUTF8(value, "\uFFFD")
	}
	if len(s.slab) == cap(s.slab) {
		s.slab, s.strs = make([]dto.LabelPair, 0, 1024), make([]string, 0, 2048)
	}
	s.strs = append(s.strs, name, value)
	s.slab = append(s.slab, dto.LabelPair{Name: &s.strs[len(s.strs)-2], Value: &s.strs[len(s.strs)-1]})
	lp := &s.slab[len(s.slab)-1]
	s.interned[k] = lp
	return lp
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

// families are the set's series as a registry gathers them (Registry.Gather): by
// family name, each family's series by their label values in label name order. A
// series whose labels another has too is an error, as a registry's.
func (s *seriesSet) families() ([]*dto.MetricFamily, error) {
	out := make([]*dto.MetricFamily, 0, len(s.fams))
	for m, ms := range s.fams {
		slices.SortFunc(ms, compareLabels)
		for i := 1; i < len(ms); i++ {
			if compareLabels(ms[i-1], ms[i]) == 0 {
				return nil, fmt.Errorf("%s: two series with the labels %v", m.Name, ms[i].Label)
			}
		}
		out = append(out, &dto.MetricFamily{Name: &m.Name, Help: &m.Help, Type: dto.MetricType_GAUGE.Enum(), Metric: ms})
	}
	slices.SortFunc(out, func(a, b *dto.MetricFamily) int { return strings.Compare(*a.Name, *b.Name) })
	return out, nil
}

// compareLabels orders series of one family by their label values, the pairs being
// in name order (client_golang's MetricSorter). Pairs are interned (add): the same
// pair is the same value.
func compareLabels(a, b *dto.Metric) int {
	for i, lp := range a.Label {
		if lp == b.Label[i] {
			continue
		}
		if c := strings.Compare(*lp.Value, *b.Label[i].Value); c != 0 {
			return c
		}
	}
	return 0
}
