package exporter

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"math"
	"net/http"
	"runtime"
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
// or a sweep completes. A 2,000-node sweep is 75,000-80,000 series: building them as const
// metrics and gathering them through a registry sorted and hash-checked every series
// (a third of a second) for a result nobody needs sorted. Label pairs are interned:
// the four labels of a fabric port are shared by its fifteen or so series.
type familySet struct {
	byMetric map[*Metric]*dto.MetricFamily
	pairs    map[[2]string]*dto.LabelPair
	gauge    dto.MetricType
	// Slabs the series are carved from: a few large allocations instead of four
	// small ones per series, which the garbage collector would then scan one by one.
	metrics []dto.Metric
	gauges  []dto.Gauge
	values  []float64
	labels  []*dto.LabelPair
	// recent is, per label name, the last value looked up and its pair: a port's
	// series repeat its labels one after the other, so most look-ups end here, without
	// hashing the strings.
	recent []recentPair
}

type recentPair struct {
	name, value string // value as given, before any UTF-8 repair
	pair        *dto.LabelPair
}

const slabSize = 4096

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
	if len(s.metrics) == cap(s.metrics) {
		s.metrics, s.gauges, s.values = make([]dto.Metric, 0, slabSize), make([]dto.Gauge, 0, slabSize), make([]float64, 0, slabSize)
	}
	if cap(s.labels)-len(s.labels) < len(labels) {
		s.labels = make([]*dto.LabelPair, 0, slabSize*8)
	}
	n := len(s.labels)
	s.labels = s.labels[:n+len(labels)]
	lp := s.labels[n : n+len(labels) : n+len(labels)]
	for i, j := range m.sorted {
		lp[i] = s.pair(&m.Labels[j], labels[j])
	}
	k := len(s.metrics)
	s.metrics, s.gauges, s.values = s.metrics[:k+1], s.gauges[:k+1], append(s.values, v)
	s.gauges[k].Value = &s.values[k]
	s.metrics[k].Label, s.metrics[k].Gauge = lp, &s.gauges[k]
	mf.Metric = append(mf.Metric, &s.metrics[k])
}

// pair returns the interned label pair name=value.
func (s *familySet) pair(name *string, value string) *dto.LabelPair {
	r := -1
	for i := range s.recent {
		if s.recent[i].name == *name {
			if s.recent[i].value == value {
				return s.recent[i].pair
			}
			r = i
			break
		}
	}
	val := value
	if !utf8.ValidString(val) {
		val = strings.ToValidUTF8(val, "\uFFFD")
	}
	k := [2]string{*name, val}
	p := s.pairs[k]
	if p == nil {
		p = &dto.LabelPair{Name: name, Value: &val}
		s.pairs[k] = p
	}
	if r < 0 {
		s.recent = append(s.recent, recentPair{name: *name})
		r = len(s.recent) - 1
	}
	s.recent[r].value, s.recent[r].pair = value, p
	return p
}

// familyBuilder builds one family at a time, by emit functions, into memory it keeps
// for the next family (reset). Label pairs come ready made (labelPairs), in the
// metric's Labels order.
type familyBuilder struct {
	mf    dto.MetricFamily
	gauge dto.MetricType
	m     *Metric
	n     int  // series added since reset
	count bool // only count the series
	// Where the series are carved from, reused family after family: the series, the
	// gauges of values other than 0 and 1, and the label pairs packed one series
	// after the other. Most series are 0 or 1 (an info metric, a counter at 0, not
	// saturated): they share zero and one, which halves the memory a family touches.
	blocks    []*[blockSize]dto.Metric
	gauges    []*gaugeBlock
	ng        int // gauges used since reset
	labels    [][]*dto.LabelPair
	nl        int // labels used in labels[li]
	li        int
	zero, one dto.Gauge
	zv, ov    float64
}

// maxLabels bounds the labels of a series (ibkey_fabric_pkey_entry_info has 8).
const (
	maxLabels  = 9
	blockSize  = 1024
	labelBlock = 4 * blockSize
)

type gaugeBlock struct {
	gauges [blockSize]dto.Gauge
	values [blockSize]float64
}

// builders keep the memory of families built for encoding from one encoding to the
// next (chunks, formats, sweeps).
var builders = sync.Pool{New: func() any { return new(familyBuilder) }}

// encoders bounds the chunks encoded at once to the CPUs Go runs on: a sweep's three
// parts are encoded side by side, two chunks each, and more encoders than CPUs would
// only each build their families in memory of their own (a builder grows to its
// largest family: 19,400 series of a 2,000-node fabric), which is touched for the
// first time, page by page, in every new process.
var encoders = make(chan struct{}, runtime.GOMAXPROCS(0))

// blockWriter collects what is written in blocks of at least 1 MiB, never copied
// again once written (a bytes.Buffer grows by copying). It has the methods of
// expfmt's enhancedWriter, so the text encoder writes into it directly rather than
// through a bufio.Writer of its own. The encoder calls it a dozen times per series
// (a byte, a name, a value): each call appends to cur, the block being filled, and
// only a full block goes to blocks.
type blockWriter struct {
	blocks [][]byte // full blocks, in order
	cur    []byte
}

const blockMin = 1 << 20

// grow moves on to a new block with room for n more bytes.
func (w *blockWriter) grow(n int) {
	if len(w.cur) > 0 {
		w.blocks = append(w.blocks, w.cur[:len(w.cur):len(w.cur)])
	}
	w.cur = make([]byte, 0, max(blockMin, n))
}

// blockMark is a place in a blockWriter's text: block counts the full blocks before
// it, off is the offset in the block after them.
type blockMark struct{ block, off int }

func (w *blockWriter) mark() blockMark { return blockMark{len(w.blocks), len(w.cur)} }

// since returns the text written after m (blocks never move once written).
func (w *blockWriter) since(m blockMark) [][]byte {
	var out [][]byte
	for i := m.block; i <= len(w.blocks); i++ {
		b := w.cur
		if i < len(w.blocks) {
			b = w.blocks[i]
		}
		if i == m.block {
			b = b[m.off:]
		}
		if len(b) > 0 {
			out = append(out, b[:len(b):len(b)])
		}
	}
	return out
}

// size is the number of bytes written.
func (w *blockWriter) size() int {
	n := len(w.cur)
	for _, b := range w.blocks {
		n += len(b)
	}
	return n
}

func (w *blockWriter) Write(p []byte) (int, error) {
	if cap(w.cur)-len(w.cur) < len(p) {
		w.grow(len(p))
	}
	w.cur = append(w.cur, p...)
	return len(p), nil
}

func (w *blockWriter) WriteString(s string) (int, error) {
	if cap(w.cur)-len(w.cur) < len(s) {
		w.grow(len(s))
	}
	w.cur = append(w.cur, s...)
	return len(s), nil
}

func (w *blockWriter) WriteByte(c byte) error {
	if len(w.cur) == cap(w.cur) {
		w.grow(1)
	}
	w.cur = append(w.cur, c)
	return nil
}

func (w *blockWriter) WriteRune(r rune) (int, error) {
	if cap(w.cur)-len(w.cur) < utf8.UTFMax {
		w.grow(utf8.UTFMax)
	}
	n := len(w.cur)
	w.cur = utf8.AppendRune(w.cur, r)
	return len(w.cur) - n, nil
}

// reset starts family m, reusing the memory of the previous one (whose series must
// not be used any more); nil lets go of the last family's label pairs.
func (b *familyBuilder) reset(m *Metric) {
	if m == nil {
		for _, l := range b.labels {
			clear(l)
		}
		b.li, b.nl = 0, 0
		clear(b.mf.Metric)
		b.mf.Metric = b.mf.Metric[:0]
		b.m = nil
		return
	}
	if len(m.Labels) > maxLabels {
		panic(fmt.Sprintf("exporter: %s has %d labels, at most %d", m.Name, len(m.Labels), maxLabels))
	}
	b.m, b.n, b.ng = m, 0, 0
	b.gauge = dto.MetricType_GAUGE
	b.zv, b.ov = 0, 1
	b.zero.Value, b.one.Value = &b.zv, &b.ov
	b.mf.Name, b.mf.Help, b.mf.Type = &m.Name, &m.Help, &b.gauge
	clear(b.mf.Metric)
	b.mf.Metric = b.mf.Metric[:0]
	b.li, b.nl = 0, 0
}

// add adds one gauge series; pairs are the label pairs in the metric's Labels order.
func (b *familyBuilder) add(v float64, pairs []*dto.LabelPair) {
	if len(pairs) != len(b.m.Labels) {
		panic(fmt.Sprintf("exporter: %s takes %d labels, got %d", b.m.Name, len(b.m.Labels), len(pairs)))
	}
	if b.count {
		b.n++
		return
	}
	k, i := b.n/blockSize, b.n%blockSize
	if k == len(b.blocks) {
		b.blocks = append(b.blocks, new([blockSize]dto.Metric))
	}
	m := &b.blocks[k][i]
	if b.nl+len(pairs) > labelBlock {
		b.li, b.nl = b.li+1, 0
	}
	if b.li == len(b.labels) {
		b.labels = append(b.labels, make([]*dto.LabelPair, labelBlock))
	}
	lp := b.labels[b.li][b.nl : b.nl+len(pairs) : b.nl+len(pairs)]
	b.nl += len(pairs)
	for j, from := range b.m.sorted {
		lp[j] = pairs[from]
	}
	var g *dto.Gauge
	switch {
	case v == 0 && !math.Signbit(v):
		g = &b.zero
	case v == 1:
		g = &b.one
	default:
		gk, gi := b.ng/blockSize, b.ng%blockSize
		if gk == len(b.gauges) {
			b.gauges = append(b.gauges, new(gaugeBlock))
		}
		gb := b.gauges[gk]
		gb.values[gi] = v
		g = &gb.gauges[gi]
		g.Value = &gb.values[gi]
		b.ng++
	}
	m.Label, m.Gauge = lp, g
	b.mf.Metric = append(b.mf.Metric, m)
	b.n++
}

// labelPairs interns label pairs: the label values of a fabric port are shared by
// its dozen series, and by every sweep's encoding.
type labelPairs map[[2]string]*dto.LabelPair

// get returns the pair name=value (newPair's, shared by every series that has it).
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

// static returns the families, sorted by name, with their encodings to come.
func (s *familySet) static() *staticSet { return newStaticSet(s.families()) }

// families returns the set's families, to join emitted ones in a staticSet.
func (s *familySet) families() []*family {
	out := make([]*family, 0, len(s.byMetric))
	for m, mf := range s.byMetric {
		out = append(out, &family{m: m, mf: mf, series: len(mf.Metric)})
	}
	return out
}

// family is one metric family of a staticSet: built beforehand (mf, host mode), or
// built by emit each time it is encoded, into a familyBuilder whose memory the next
// family reuses (fabric mode). A sweep's 79,000 series then never exist as objects all
// at once: they are built, encoded and dropped family by family, which saves most of
// the allocation, the page faults and the garbage collector's work of holding them.
type family struct {
	m      *Metric
	mf     *dto.MetricFamily
	emit   func(b *familyBuilder)
	series int
}

// emitted returns a family built by emit, with its series counted.
func emitted(m *Metric, emit func(b *familyBuilder)) *family {
	b := familyBuilder{count: true}
	b.reset(m)
	emit(&b)
	return &family{m: m, emit: emit, series: b.n}
}

// staticSet is a fixed set of families and their encodings, one per exposition
// format asked for, each made once: a scrape of a 2,000-node fabric then writes bytes
// encoded after the sweep instead of encoding 74,000 series again.
type staticSet struct {
	fams []*family // sorted by name; families with no series are left out
	// chunks hold the families in the order they are encoded: each is encoded on its
	// own (side by side), and the encodings are written one after the other, which the
	// text and protobuf formats allow (a stream of whole families, in any order).
	chunks []*chunk

	mu       sync.Mutex
	enc      map[string]*encoding
	families []*dto.MetricFamily // built on first use (the registry path)
}

// newStaticSet sorts fams by name and splits them into two chunks of about the same
// number of series.
func newStaticSet(fams []*family) *staticSet {
	out := &staticSet{enc: map[string]*encoding{}}
	total := 0
	for _, f := range fams {
		if f.series > 0 {
			out.fams = append(out.fams, f)
			total += f.series
		}
	}
	sort.Slice(out.fams, func(i, j int) bool { return out.fams[i].m.Name < out.fams[j].m.Name })
	var cur *chunk
	n := 0
	for _, f := range out.fams {
		if cur == nil || len(out.chunks) == 1 && n >= total/2 {
			cur = &chunk{enc: map[string]*encoding{}}
			out.chunks = append(out.chunks, cur)
		}
		cur.fams = append(cur.fams, f)
		n += f.series
	}
	return out
}

// emptyStatic is a set with no metrics (nothing read yet, or the host unreadable).
func emptyStatic() *staticSet { return &staticSet{enc: map[string]*encoding{}} }

// joinStatic is a and b together, keeping the encodings their chunks made already.
// They share no metric.
func joinStatic(a, b *staticSet) *staticSet {
	out := &staticSet{enc: map[string]*encoding{}, chunks: append(append([]*chunk{}, a.chunks...), b.chunks...)}
	out.fams = append(append(out.fams, a.fams...), b.fams...)
	sort.Slice(out.fams, func(i, j int) bool { return out.fams[i].m.Name < out.fams[j].m.Name })
	return out
}

// names are the metric names of the set.
func (s *staticSet) names() []string {
	out := make([]string, len(s.fams))
	for i, f := range s.fams {
		out[i] = f.m.Name
	}
	return out
}

// dtoFamilies returns the families as client_model values, building the emitted ones
// once (the registry path: Gather, Collect).
func (s *staticSet) dtoFamilies() []*dto.MetricFamily {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.families == nil {
		s.families = make([]*dto.MetricFamily, 0, len(s.fams))
		for _, f := range s.fams {
			mf := f.mf
			if mf == nil {
				var b familyBuilder
				b.reset(f.m)
				f.emit(&b)
				mf = &dto.MetricFamily{Name: b.mf.Name, Help: b.mf.Help, Type: b.mf.Type, Metric: b.mf.Metric}
			}
			s.families = append(s.families, mf)
		}
	}
	return s.families
}

// chunk is some families of a staticSet and their encodings.
type chunk struct {
	fams []*family

	mu  sync.Mutex
	enc map[string]*encoding
}

// encoding is families in one format: plain, and (when a client asked for gzip)
// compressed as a DEFLATE stream that is flushed but not final, so that a response
// can go on with more blocks (the next chunk's, the live metrics) in the same gzip
// member. Both are in parts, one per chunk, written one after the other.
type encoding struct {
	plain    [][]byte
	size     int    // bytes of plain
	crc      uint32 // CRC-32 of plain (the gzip trailer's)
	deflated [][]byte
	gz       bool // deflated is made
	err      error
	// fams: a chunk's encoding family by family, which a staticSet puts in name
	// order whatever chunk each family was encoded in.
	fams []familyEncoding
}

// familyEncoding is one family's part of an encoding: its text, and that text
// deflated on its own (a compressor reset before it and flushed after it, so the
// parts of all families may follow one another in any order in one DEFLATE stream).
type familyEncoding struct {
	name     string
	plain    [][]byte
	deflated []byte
}

func (e *encoding) writePlain(w io.Writer) error {
	for _, p := range e.plain {
		if _, err := w.Write(p); err != nil {
			return err
		}
	}
	return nil
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

// encodingFormat is f as the cache key reads it: underscore escaping, which leaves
// every name the exporter writes as it is (formatKey), becomes none, so that expfmt
// does not copy every family to look for names to escape.
func encodingFormat(f expfmt.Format) expfmt.Format {
	if f.ToEscapingScheme() == model.UnderscoreEscaping {
		return f.WithEscapingScheme(model.NoEscaping)
	}
	return f
}

// encoded returns the chunk's families encoded in format f (and deflated when gz),
// encoding them on first use.
func (c *chunk) encoded(f expfmt.Format, gz bool) *encoding {
	key := formatKey(f)
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.enc[key]
	if e == nil {
		encoders <- struct{}{}
		defer func() { <-encoders }()
		e = &encoding{}
		var w blockWriter
		enc := expfmt.NewEncoder(&w, encodingFormat(f))
		fb := builders.Get().(*familyBuilder)
		text := f.FormatType() == expfmt.TypeTextPlain
		var line []byte
		for _, fam := range c.fams {
			mf := fam.mf
			if mf == nil {
				fb.reset(fam.m)
				fam.emit(fb)
				mf = &fb.mf
			}
			start := w.mark()
			ok := false
			if text {
				line, ok = textFamily(&w, mf, line)
			}
			if !ok {
				if e.err = enc.Encode(mf); e.err != nil {
					break
				}
			}
			e.fams = append(e.fams, familyEncoding{name: fam.m.Name, plain: w.since(start)})
		}
		fb.reset(nil)
		builders.Put(fb)
		e.size = w.size()
		c.enc[key] = e
	}
	if gz && !e.gz && e.err == nil {
		b := bytes.NewBuffer(make([]byte, 0, e.size/8))
		// BestSpeed: the text of a port's series repeats its labels, which even the
		// fastest level compresses about twentyfold.
		w, _ := flate.NewWriter(b, flate.BestSpeed)
		ends := make([]int, len(e.fams))
		for i, fe := range e.fams {
			w.Reset(b) // no back-reference into another family's text
			for _, p := range fe.plain {
				_, _ = w.Write(p)
			}
			if e.err = w.Flush(); e.err != nil { // byte-aligned, no final block: more blocks follow
				break
			}
			ends[i] = b.Len()
		}
		start := 0
		for i := range e.fams {
			e.fams[i].deflated = b.Bytes()[start:ends[i]:ends[i]]
			start = ends[i]
		}
		e.gz = true
	}
	return e
}

// encoded returns the families encoded in format f (and deflated when gz): the
// chunks' encodings, made side by side on first use, one after the other.
func (s *staticSet) encoded(f expfmt.Format, gz bool) *encoding {
	key := formatKey(f)
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.enc[key]; e != nil && (e.gz || !gz || e.err != nil) {
		return e
	}
	parts := make([]*encoding, len(s.chunks))
	var wg sync.WaitGroup
	for i, c := range s.chunks {
		wg.Add(1)
		go func() { defer wg.Done(); parts[i] = c.encoded(f, gz) }()
	}
	wg.Wait()
	// The families in name order, as a registry gathers them, whatever chunk (and
	// whatever part of a snapshot) encoded them.
	var fams []familyEncoding
	e := &encoding{gz: gz}
	for _, p := range parts {
		if p.err != nil && e.err == nil {
			e.err = p.err
		}
		fams = append(fams, p.fams...)
	}
	sort.SliceStable(fams, func(i, j int) bool { return fams[i].name < fams[j].name })
	for _, fe := range fams {
		for _, b := range fe.plain {
			e.plain = append(e.plain, b)
			e.size += len(b)
			e.crc = crc32.Update(e.crc, crc32.IEEETable, b)
		}
		if gz {
			e.deflated = append(e.deflated, fe.deflated)
		}
	}
	s.enc[key] = e
	return e
}

// prepare encodes the families in the text format a Prometheus server and a plain
// HTTP client negotiate, so the first scrape finds them ready; gz also deflates them
// (for a server: --once and --textfile do not need it).
func (s *staticSet) prepare(gz bool) {
	s.encoded(expfmt.NewFormat(expfmt.TypeTextPlain), gz)
}

// collect sends the families as metrics (the registry path: --once, --textfile,
// tests).
func (s *staticSet) collect(ch chan<- prometheus.Metric) {
	for i, mf := range s.dtoFamilies() {
		d := s.fams[i].m.desc
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
	format := expfmt.NegotiateAccept(r.Header, expfmt.DefaultAcceptedFormats()...)
	gz := acceptsGzip(r.Header.Get("Accept-Encoding"))
	enc, live, err := h.g.render(format, gz, h.logger)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", string(format))
	hd.Add("Vary", "Accept")
	hd.Add("Vary", "Accept-Encoding")
	if !gz {
		_ = enc.writePlain(w)
		_, _ = w.Write(live)
		return
	}
	hd.Set("Content-Encoding", "gzip")
	_ = writeGzip(w, enc, live)
}

// render returns the static part encoded in format (deflated too when gz) and the
// live part, gathered now and encoded in the same format (closed: an OpenMetrics
// stream would end with it). An error gathering the live part is logged and what
// was gathered is served, as promhttp's ContinueOnError does.
func (g cachedGatherer) render(format expfmt.Format, gz bool, logger *slog.Logger) (*encoding, []byte, error) {
	static := g.static()
	live, err := g.live.Gather()
	if err != nil {
		logger.Error("gathering the live metrics", "err", err)
	}
	if err := checkDisjoint(static.names(), live); err != nil {
		return nil, nil, err
	}
	enc := static.encoded(format, gz)
	if enc.err != nil {
		return nil, nil, fmt.Errorf("encoding the metrics: %w", enc.err)
	}
	var lb bytes.Buffer
	le := expfmt.NewEncoder(&lb, format)
	for _, mf := range live {
		if err := le.Encode(mf); err != nil {
			return nil, nil, fmt.Errorf("encoding the metrics: %w", err)
		}
	}
	if c, ok := le.(expfmt.Closer); ok {
		if err := c.Close(); err != nil {
			return nil, nil, fmt.Errorf("encoding the metrics: %w", err)
		}
	}
	return enc, lb.Bytes(), nil
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
	for _, p := range static.deflated {
		if _, err := w.Write(p); err != nil {
			return err
		}
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
	binary.LittleEndian.PutUint32(trailer[4:], uint32(static.size+len(tail)))
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
func checkDisjoint(static []string, live []*dto.MetricFamily) error {
	for _, l := range live {
		for _, s := range static {
			if l.GetName() == s {
				return fmt.Errorf("exporter: metric %s is both cached and live", l.GetName())
			}
		}
	}
	return nil
}
