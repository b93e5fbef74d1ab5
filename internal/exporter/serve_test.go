package exporter

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fakesysfs"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/query"
)

// TestCatalogNamesAreLegacy: every name is a legacy (pre-UTF-8) Prometheus name, which
// every escaping scheme a scraper may ask for leaves as it is.
func TestCatalogNamesAreLegacy(t *testing.T) {
	for _, m := range Catalog() {
		if !model.LegacyValidation.IsValidMetricName(m.Name) {
			t.Errorf("%s is not a legacy metric name", m.Name)
		}
		for _, l := range m.Labels {
			if !model.LegacyValidation.IsValidLabelName(l) {
				t.Errorf("%s: label %s is not a legacy label name", m.Name, l)
			}
		}
	}
}

// TestHandlerServesWhatTheRegistryGathers: the /metrics handler's answer, plain, gzip
// and protobuf, is what a registry gathers from the same collector, scrape after
// scrape.
func TestHandlerServesWhatTheRegistryGathers(t *testing.T) {
	dir := writeHost(t, fakesysfs.MLX5())
	clock := &fakeClock{time.Unix(1000, 0)}
	for name, c := range map[string]prometheus.Collector{
		"host":   newHostCollector(dir, clock, nil),
		"fabric": savedFabricCollector(t, "small.json", true),
	} {
		reg, err := NewRegistry(c)
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if err := WriteText(&want, reg); err != nil {
			t.Fatal(err)
		}
		h, err := Handler(reg, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		get := func(accept, encoding string) (*httptest.ResponseRecorder, []byte) {
			req := httptest.NewRequest("GET", "/metrics", nil)
			if accept != "" {
				req.Header.Set("Accept", accept)
			}
			if encoding != "" {
				req.Header.Set("Accept-Encoding", encoding)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != 200 {
				t.Fatalf("%s: status %d: %s", name, w.Code, w.Body.String())
			}
			body := w.Body.Bytes()
			if w.Header().Get("Content-Encoding") == "gzip" {
				zr, err := gzip.NewReader(bytes.NewReader(body))
				if err != nil {
					t.Fatalf("%s: gzip: %v", name, err)
				}
				zr.Multistream(false) // one member: a client that reads only the first sees everything
				if body, err = io.ReadAll(zr); err != nil {
					t.Fatalf("%s: gzip: %v", name, err)
				}
				if err := zr.Reset(bytes.NewReader(nil)); !errors.Is(err, io.EOF) {
					t.Errorf("%s: more than one gzip member", name)
				}
			}
			return w, body
		}
		for _, tc := range []struct{ accept, encoding string }{{"", ""}, {"", "gzip"}, {prometheusAccept, "gzip"}, {prometheusAccept, "gzip;q=0, identity"}, {"", "br, gzip;q=0.5"}} {
			for round := range 2 {
				w, body := get(tc.accept, tc.encoding)
				gz := w.Header().Get("Content-Encoding") == "gzip"
				if wantGz := strings.Contains(tc.encoding, "gzip") && !strings.Contains(tc.encoding, "q=0,"); gz != wantGz {
					t.Errorf("%s: Accept-Encoding %q: gzip %v", name, tc.encoding, gz)
				}
				if sortedLines(string(body)) != sortedLines(want.String()) {
					t.Errorf("%s: Accept %q, Accept-Encoding %q, scrape %d: served\n%s\nregistry gathers\n%s", name, tc.accept, tc.encoding, round, body, want.String())
				}
				if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
					t.Errorf("%s: Content-Type %q", name, ct)
				}
			}
		}
		// Protobuf: decode every family and compare with the registry's.
		w, body := get("application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited", "")
		format := expfmt.Format(w.Header().Get("Content-Type"))
		if format.FormatType() != expfmt.TypeProtoDelim {
			t.Fatalf("%s: protobuf asked, got %q", name, format)
		}
		dec := expfmt.NewDecoder(bytes.NewReader(body), format)
		var text bytes.Buffer
		enc := expfmt.NewEncoder(&text, expfmt.NewFormat(expfmt.TypeTextPlain))
		for {
			var mf dto.MetricFamily
			if err := dec.Decode(&mf); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("%s: protobuf: %v", name, err)
			}
			if err := enc.Encode(&mf); err != nil {
				t.Fatal(err)
			}
		}
		if sortedLines(text.String()) != sortedLines(want.String()) {
			t.Errorf("%s: protobuf answer differs from the registry's:\n%s", name, text.String())
		}
	}
}

// TestAcceptsGzip: the handler compresses when Accept-Encoding lists gzip with a q
// above 0, not otherwise. The negotiation is promhttp's: it matches "gzip" as written
// (what Prometheus and curl --compressed send) and answers "*" uncompressed, both
// allowed (identity is always acceptable unless excluded: RFC 9110 12.5.3); the
// hand-written negotiation it replaced compressed those two.
func TestAcceptsGzip(t *testing.T) {
	reg, err := NewRegistry(savedFabricCollector(t, "small.json", false))
	if err != nil {
		t.Fatal(err)
	}
	h, err := Handler(reg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	for hdr, want := range map[string]bool{
		"": false, "gzip": true, "GZIP": false, "deflate, gzip": true, "gzip;q=0": false, "gzip; q=0.0": false,
		"gzip;q=0.1": true, "*": false, "identity": false, "br, gzip;q=0.5": true, "x-gzip": false,
	} {
		req := httptest.NewRequest("GET", "/metrics", nil)
		req.Header.Set("Accept-Encoding", hdr)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if got := w.Header().Get("Content-Encoding") == "gzip"; got != want {
			t.Errorf("Accept-Encoding %q: gzip %v, want %v", hdr, got, want)
		}
	}
}

// TestFamilySetReplacesBadUTF8: a node description is fabric input; bytes that are
// not UTF-8 are replaced, never a panic or an invalid exposition.
func TestFamilySetReplacesBadUTF8(t *testing.T) {
	s := newSeriesSet()
	s.add(mFPortInfo, 1, "0x1", "bad\xffname", "1", "2", "ca", "")
	fams, err := s.families()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteText(&b, prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) { return fams, nil })); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `node_name="bad`+"\uFFFD"+`name"`) {
		t.Errorf("got %s", b.String())
	}
	_ = gauge(mFPortInfo, 1, "0x1", "bad\xffname", "1", "2", "ca", "") // no panic
}

// fakeFabric answers NodeInfo and PortInfo by directed route: nodes maps a route
// to a node GUID, qkeys a route and port to Q_KeyViolations.
type fakeFabric struct {
	nodes map[string]uint64
	qkeys map[string]map[uint32]uint16
}

func (f fakeFabric) Do(_ context.Context, req mad.Request) (*mad.Packet, error) {
	d := make([]byte, 64)
	route := string(req.Addr.Path)
	g, ok := f.nodes[route]
	if !ok {
		return nil, mad.ErrTimeout
	}
	switch req.Attr {
	case mad.AttrNodeInfo:
		binary.BigEndian.PutUint64(d[12:], g)
	case mad.AttrPortInfo:
		binary.BigEndian.PutUint16(d[48:], f.qkeys[route][req.Modifier])
	}
	return &mad.Packet{Class: req.Class, Attr: req.Attr, Modifier: req.Modifier, Data: d}, nil
}

func (fakeFabric) Close() error { return nil }

// TestPortInfoTapKeepsQKeyViolations: PortInfo replies are attributed to the node
// whose NodeInfo answered through the same route, through Do and through Exchange.
func TestPortInfoTapKeepsQKeyViolations(t *testing.T) {
	f := fakeFabric{
		nodes: map[string]uint64{"": 0x10, "\x01": 0x20, "\x01\x03": 0x30},
		qkeys: map[string]map[uint32]uint16{"": {1: 5}, "\x01": {0: 0, 3: 65535}, "\x01\x03": {1: 42}},
	}
	tap := newPortInfoTap(f)
	ctx := context.Background()
	dr := func(path ...uint8) mad.Address { return mad.Address{Directed: true, Path: path} }
	get := func(a mad.Address, attr mad.AttrID, mod uint32) mad.Call {
		return mad.Call{Req: mad.Request{Addr: a, Class: mad.ClassSubnLID, Method: mad.MethodGet, Attr: attr, Modifier: mod}}
	}
	if _, err := mad.GetNodeInfo(ctx, tap, dr()); err != nil {
		t.Fatal(err)
	}
	calls := []mad.Call{get(dr(), mad.AttrPortInfo, 1), get(dr(1), mad.AttrNodeInfo, 0)}
	if err := mad.Exchange(ctx, tap, calls); err != nil {
		t.Fatal(err)
	}
	calls = []mad.Call{get(dr(1), mad.AttrPortInfo, 0), get(dr(1), mad.AttrPortInfo, 3), get(dr(1, 3), mad.AttrNodeInfo, 0),
		get(dr(1, 3), mad.AttrPortInfo, 1), get(dr(2), mad.AttrPortInfo, 1)} // route 2 does not answer
	_ = mad.Exchange(ctx, tap, calls)
	got := tap.portInfos()
	want := map[check.PortID]uint16{{Node: 0x10, Port: 1}: 5, {Node: 0x20, Port: 0}: 0, {Node: 0x20, Port: 3}: 65535, {Node: 0x30, Port: 1}: 42}
	if len(got) != len(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g.qkey != v {
			t.Errorf("%v: got %d (%v), want %d", k, g.qkey, ok, v)
		}
	}
}

// TestWriteTextfile: the textfile is what WriteText prints, readable by the textfile
// collector (0644), with no temporary file left beside it; a second write replaces it.
func TestWriteTextfile(t *testing.T) {
	dir := writeHost(t, fakesysfs.MLX5())
	out := t.TempDir()
	g, err := NewRegistry(savedFabricCollector(t, "small.json", true))
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := WriteTextfile(out, g); err != nil {
			t.Fatal(err)
		}
	}
	var want bytes.Buffer
	if err := WriteText(&want, g); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(out, TextfileName))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want.String() || len(got) < 1000 {
		t.Errorf("textfile differs from WriteText:\n%s", got)
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != 1 {
		t.Errorf("%d files in the textfile directory, want 1", len(entries))
	}
	if st, err := os.Stat(filepath.Join(out, TextfileName)); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("textfile mode: %v %v", st.Mode(), err)
	}
	if err := WriteTextfile(filepath.Join(dir, "nope"), g); err == nil {
		t.Error("no error writing into a missing directory")
	}
}

// TestFabricRunServesItsSweep: the serving loop (Run) serves the whole sweep, plain and
// gzip.
func TestFabricRunServesItsSweep(t *testing.T) {
	l := startSmallLab(t)
	tr := l.Dial(t, "HcaA", labMAD)
	c := NewFabricCollector(FabricOptions{Fabric: &query.Fabric{T: tr, Via: "ibsim"}, Interval: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx) }()
	defer func() { cancel(); <-done }()
	reg, err := NewRegistry(c)
	if err != nil {
		t.Fatal(err)
	}
	h, err := Handler(reg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); c.snap.Load() == nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no sweep served after a minute")
		}
	}
	var want bytes.Buffer
	if err := WriteText(&want, reg); err != nil {
		t.Fatal(err)
	}
	for _, enc := range []string{"", "gzip"} {
		req := httptest.NewRequest("GET", "/metrics", nil)
		req.Header.Set("Accept-Encoding", enc)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		body := w.Body.Bytes()
		if enc == "gzip" {
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			if body, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
		}
		// The sweep's age moves between the two gathers.
		strip := func(s string) string {
			var out []string
			for _, l := range strings.Split(s, "\n") {
				if !strings.HasPrefix(l, "ibkey_fabric_sweep_age_seconds ") {
					out = append(out, l)
				}
			}
			return sortedLines(strings.Join(out, "\n"))
		}
		if strip(string(body)) != strip(want.String()) || !strings.Contains(string(body), "ibkey_fabric_pkey_entry_info{") {
			t.Errorf("Accept-Encoding %q: served\n%s\nregistry\n%s", enc, body, want.String())
		}
	}
}

// TestSweepFamiliesAsRegistryGathers: a sweep's families, built without a registry
// (seriesSet.families), are what client_golang's registry gathers from the same
// series, byte for byte in the exposition; two series with the same labels are an
// error, as in a registry.
func TestSweepFamiliesAsRegistryGathers(t *testing.T) {
	c := NewFabricCollector(FabricOptions{NoCounters: true})
	snap := c.fromFabric(context.Background(), fatTreeFabric(6, 2, 4, 3), nil, nil)
	reg := prometheus.NewRegistry()
	if err := reg.Register(seriesCollector{snap.series}); err != nil {
		t.Fatal(err)
	}
	want, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got, err := snap.series.families()
	if err != nil {
		t.Fatal(err)
	}
	text := func(mfs []*dto.MetricFamily) string {
		var b bytes.Buffer
		if err := WriteText(&b, prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) { return mfs, nil })); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	if g, w := text(got), text(want); g != w || len(got) < 10 {
		t.Errorf("%d families, the registry's %d; the expositions differ: %t", len(got), len(want), g != w)
	}
	s := newSeriesSet()
	s.add(mNodes, 1, "ca")
	s.add(mNodes, 2, "ca")
	if _, err := s.families(); err == nil || !strings.Contains(err.Error(), "ibkey_fabric_nodes: two series") {
		t.Errorf("two series with the same labels: %v", err)
	}
}

// seriesCollector is a seriesSet as an unchecked collector: the same series, for a
// registry to gather and sort as it does (TestSweepFamiliesAsRegistryGathers).
type seriesCollector struct{ *seriesSet }

func (seriesCollector) Describe(chan<- *prometheus.Desc) {}

func (s seriesCollector) Collect(ch chan<- prometheus.Metric) {
	for m, f := range s.fams {
		for _, series := range f {
			ch <- constSeries{m.build().desc, series}
		}
	}
}

// constSeries is one series of a seriesSet as a prometheus.Metric.
type constSeries struct {
	desc *prometheus.Desc
	s    *dto.Metric
}

func (s constSeries) Desc() *prometheus.Desc { return s.desc }

func (s constSeries) Write(out *dto.Metric) error {
	out.Label, out.Gauge = s.s.Label, s.s.Gauge
	return nil
}
