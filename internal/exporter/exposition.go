package exporter

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// familySet builds metric families directly (the client_model types client_golang's
// registry produces), for the metrics that change only when the tables are read again
// or a sweep completes. A 2,000-node sweep is 74,000 series: building them as const
// metrics and gathering them through a registry sorted and hash-checked every series
// (a third of a second) for a result nobody needs sorted. Label pairs are interned:
// the four labels of a fabric port are shared by its twenty series.
type familySet struct {
	byMetric map[*Metric]*dto.MetricFamily
	pairs    map[[2]string]*dto.LabelPair
	gauge    dto.MetricType
}

func newFamilySet() *familySet {
	return &familySet{byMetric: map[*Metric]*dto.MetricFamily{}, pairs: map[[2]string]*dto.LabelPair{}, gauge: dto.MetricType_GAUGE}
}

// add adds one gauge series of m; labels are m's label values in m.Labels order. A
// value that is not valid UTF-8 (a node description from the fabric) has its bad
// bytes replaced: the exposition formats carry UTF-8 only.
func (s *familySet) add(m *Metric, v float64, labels ...string) {
	if len(labels) != len(m.Labels) {
		panic(fmt.Sprintf("exporter: %s takes %d labels, got %d", m.Name, len(m.Labels), len(labels)))
	}
	mf := s.byMetric[m]
	if mf == nil {
		mf = &dto.MetricFamily{Name: &m.Name, Help: &m.Help, Type: &s.gauge}
		s.byMetric[m] = mf
	}
	lp := make([]*dto.LabelPair, len(labels))
	for i, j := range m.sorted {
		val := labels[j]
		if !utf8.ValidString(val) {
			val = strings.ToValidUTF8(val, "\uFFFD")
		}
		k := [2]string{m.Labels[j], val}
		p := s.pairs[k]
		if p == nil {
			p = &dto.LabelPair{Name: &m.Labels[j], Value: &val}
			s.pairs[k] = p
		}
		lp[i] = p
	}
	mf.Metric = append(mf.Metric, &dto.Metric{Label: lp, Gauge: &dto.Gauge{Value: &v}})
}

// static returns the families, sorted by name, with their encodings to come.
func (s *familySet) static() *staticSet {
	metrics := make([]*Metric, 0, len(s.byMetric))
	for m := range s.byMetric {
		metrics = append(metrics, m)
	}
	sort.Slice(metrics, func(i, j int) bool { return metrics[i].Name < metrics[j].Name })
	out := &staticSet{metrics: metrics, enc: map[string]*encoding{}}
	for _, m := range metrics {
		out.families = append(out.families, s.byMetric[m])
	}
	return out
}

// staticSet is a fixed set of families and their encodings, one per exposition
// format asked for, each made once: a scrape of a 2,000-node fabric then writes bytes
// encoded after the sweep instead of encoding 74,000 series again.
type staticSet struct {
	families []*dto.MetricFamily
	metrics  []*Metric // families[i] is metrics[i]'s

	mu  sync.Mutex
	enc map[string]*encoding
}

var emptyStatic = &staticSet{enc: map[string]*encoding{}}

// encoding is the families in one format: plain, and (when a client asked for gzip)
// compressed as a DEFLATE stream that is flushed but not final, so that a response
// can go on with the live metrics in the same gzip member.
type encoding struct {
	plain    []byte
	crc      uint32 // CRC-32 of plain (the gzip trailer's)
	deflated []byte
	err      error
}

// formatKey is the cache key of a negotiated format: its type and name escaping. Every
// name the exporter writes is a legacy (pre-UTF-8) Prometheus name
// (TestCatalogNamesAreLegacy), which "allow-utf-8" and "underscores" escaping both
// leave as it is, so those two share one encoding.
func formatKey(f expfmt.Format) string {
	esc := f.ToEscapingScheme()
	if esc == model.UnderscoreEscaping {
		esc = model.NoEscaping
	}
	return fmt.Sprintf("%d/%d", f.FormatType(), esc)
}

// encoded returns the families encoded in format f (and deflated when gz), encoding
// them on first use.
func (s *staticSet) encoded(f expfmt.Format, gz bool) *encoding {
	key := formatKey(f)
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.enc[key]
	if e == nil {
		e = &encoding{}
		var b bytes.Buffer
		enc := expfmt.NewEncoder(&b, f)
		for _, mf := range s.families {
			if e.err = enc.Encode(mf); e.err != nil {
				break
			}
		}
		e.plain, e.crc = b.Bytes(), crc32.ChecksumIEEE(b.Bytes())
		s.enc[key] = e
	}
	if gz && e.deflated == nil && e.err == nil {
		var b bytes.Buffer
		// BestSpeed: the text of a port's series repeats its labels, which even the
		// fastest level compresses about tenfold.
		w, _ := flate.NewWriter(&b, flate.BestSpeed)
		_, _ = w.Write(e.plain)
		e.err = w.Flush() // byte-aligned, no final block: the live part follows
		e.deflated = b.Bytes()
	}
	return e
}

// prepare encodes the families in the text format a Prometheus server and a plain
// HTTP client negotiate, plain and deflated, so the first scrape after a sweep
// finds them ready.
func (s *staticSet) prepare() {
	s.encoded(expfmt.NewFormat(expfmt.TypeTextPlain), true)
}

// collect sends the families as metrics (the registry path: --once, --textfile,
// tests).
func (s *staticSet) collect(ch chan<- prometheus.Metric) {
	for i, mf := range s.families {
		d := s.metrics[i].desc
		for _, m := range mf.Metric {
			ch <- builtMetric{d, m}
		}
	}
}

// builtMetric is a series of a familySet as a prometheus.Metric.
type builtMetric struct {
	desc *prometheus.Desc
	m    *dto.Metric
}

func (b builtMetric) Desc() *prometheus.Desc { return b.desc }
func (b builtMetric) Write(out *dto.Metric) error {
	out.Label, out.Gauge = b.m.Label, b.m.Gauge
	return nil
}

// cachedHandler serves /metrics from a cachedGatherer: the static part as encoded
// once per format, then the live metrics encoded per scrape in the same format.
// Format negotiation is promhttp's (expfmt.NegotiateAccept with the default formats:
// text or protobuf); the encoding is expfmt's.
type cachedHandler struct {
	g        cachedGatherer
	inFlight chan struct{}
	logger   *slog.Logger
}

func (h *cachedHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	select {
	case h.inFlight <- struct{}{}:
		defer func() { <-h.inFlight }()
	default:
		http.Error(w, "too many scrapes at once, try again later", http.StatusServiceUnavailable)
		return
	}
	static := h.g.static()
	live, err := h.g.live.Gather()
	if err != nil {
		// As promhttp's ContinueOnError: log it and serve what was gathered.
		h.logger.Error("gathering the live metrics", "err", err)
	}
	if err := checkDisjoint(static.families, live); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	format := expfmt.NegotiateAccept(r.Header, expfmt.DefaultAcceptedFormats()...)
	gz := acceptsGzip(r.Header.Get("Accept-Encoding"))
	enc := static.encoded(format, gz)
	if enc.err != nil {
		http.Error(w, "encoding the metrics: "+enc.err.Error(), http.StatusInternalServerError)
		return
	}
	var lb bytes.Buffer
	le := expfmt.NewEncoder(&lb, format)
	for _, mf := range live {
		if err := le.Encode(mf); err != nil {
			http.Error(w, "encoding the metrics: "+err.Error(), http.StatusInternalServerError)
			return
		}
	}
	if c, ok := le.(expfmt.Closer); ok {
		_ = c.Close()
	}
	hd := w.Header()
	hd.Set("Content-Type", string(format))
	hd.Add("Vary", "Accept")
	hd.Add("Vary", "Accept-Encoding")
	if !gz {
		_, _ = w.Write(enc.plain)
		_, _ = w.Write(lb.Bytes())
		return
	}
	hd.Set("Content-Encoding", "gzip")
	_ = writeGzip(w, enc, lb.Bytes())
}

// writeGzip writes one gzip member (RFC 1952) holding the static part, deflated
// beforehand, followed by tail, deflated now: a DEFLATE stream may continue after a
// flush with blocks from a new compressor (RFC 1951 3.2.3: back-references reach only
// into data already output, which the new blocks never use), so the member carries one
// stream and one CRC-32 of the whole text.
func writeGzip(w io.Writer, static *encoding, tail []byte) error {
	header := [10]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255} // deflate, no flags, no mtime, unknown OS
	if _, err := w.Write(header[:]); err != nil {
		return err
	}
	if _, err := w.Write(static.deflated); err != nil {
		return err
	}
	fw, _ := flate.NewWriter(w, flate.BestSpeed)
	if _, err := fw.Write(tail); err != nil {
		return err
	}
	if err := fw.Close(); err != nil { // the final block
		return err
	}
	var trailer [8]byte
	binary.LittleEndian.PutUint32(trailer[:4], crc32.Update(static.crc, crc32.IEEETable, tail))
	binary.LittleEndian.PutUint32(trailer[4:], uint32(len(static.plain)+len(tail)))
	_, err := w.Write(trailer[:])
	return err
}

// acceptsGzip reads an Accept-Encoding header: gzip listed with a q above 0 (or "*").
func acceptsGzip(h string) bool {
	for _, part := range strings.Split(h, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		name = strings.ToLower(strings.TrimSpace(name))
		if name != "gzip" && name != "*" {
			continue
		}
		q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
		if q == "q=0" || q == "q=0.0" || q == "q=0.00" || q == "q=0.000" {
			continue
		}
		return true
	}
	return false
}

// checkDisjoint: the static and live parts never share a metric name (the collectors
// split them by name); a name in both would be two families in one exposition.
func checkDisjoint(static, live []*dto.MetricFamily) error {
	for _, l := range live {
		for _, s := range static {
			if l.GetName() == s.GetName() {
				return fmt.Errorf("exporter: metric %s is both cached and live", l.GetName())
			}
		}
	}
	return nil
}
