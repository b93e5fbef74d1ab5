package exporter

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/fakesysfs"
	"github.com/ibkey/ibkey/internal/ibverbs"
	"github.com/ibkey/ibkey/internal/lab"
	"github.com/ibkey/ibkey/internal/query"
)

// fullHost is the cardinality and benchmark host: devices x ports, every one of the
// 128 entries of every table valid (the worst case for series).
func fullHost(devices, ports int) fakesysfs.Host {
	h := fakesysfs.Large(devices, ports, 128)
	for d := range h.Devices {
		for p := range h.Devices[d].Ports {
			for i := range h.Devices[d].Ports[p].PKeys {
				h.Devices[d].Ports[p].PKeys[i] = fmt.Sprintf("0x%04x", 0x8000|(i+1))
			}
		}
	}
	return h
}

// TestHostCardinality is the series budget for 64 ports with full 128-entry tables.
func TestHostCardinality(t *testing.T) {
	dir := writeHost(t, fullHost(8, 8))
	c := NewHostCollector(HostOptions{Host: &query.Host{Sys: ibverbs.Open(dir)}, TableMaxAge: time.Hour})
	reg, err := NewRegistry(c)
	if err != nil {
		t.Fatal(err)
	}
	n, err := testutil.GatherAndCount(reg)
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := testutil.GatherAndCount(reg, "ibkey_pkey_entry_info")
	t.Logf("64 ports x 128 valid entries: %d series (%d entry series, %d per port otherwise)", n, entries, (n-entries)/64)
	if entries != 64*128 {
		t.Errorf("%d entry series, want %d", entries, 64*128)
	}
	if budget := 64*128 + 64*20 + 50; n > budget {
		t.Errorf("%d series, budget %d", n, budget)
	}
}

// cpuTime is this process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkHostScrape is one scrape of 64 ports x 128 valid entries through the HTTP
// handler (gather + encode): with the tables from the cache (the steady state: state
// and counters read, 64 + 128 files) and with the tables read every scrape (8,192
// pkey files). cpu-ms/op counts every thread of the process.
//
//	go test ./internal/exporter -run '^$' -bench HostScrape
func BenchmarkHostScrape(b *testing.B) {
	dir := writeHost(b, fullHost(8, 8))
	for _, bc := range []struct {
		name   string
		maxAge time.Duration
	}{{"cached-tables", time.Hour}, {"tables-every-scrape", 0}} {
		b.Run(bc.name, func(b *testing.B) {
			c := NewHostCollector(HostOptions{Host: &query.Host{Sys: ibverbs.Open(dir)}, TableMaxAge: bc.maxAge})
			h := handlerFor(b, c)
			scrape(b, h) // the first scrape reads the tables
			start := cpuTime()
			b.ResetTimer()
			for b.Loop() {
				scrape(b, h)
			}
			b.ReportMetric(float64(cpuTime()-start)/1e6/float64(b.N), "cpu-ms/op")
		})
	}
}

// BenchmarkHostRSS10k scrapes the 64 x 128 host 10,000 times through the HTTP handler
// and reports the resident set size after 100 scrapes and after 10,000.
//
//	go test ./internal/exporter -run '^$' -bench HostRSS10k -benchtime 1x
func BenchmarkHostRSS10k(b *testing.B) {
	dir := writeHost(b, fullHost(8, 8))
	c := NewHostCollector(HostOptions{Host: &query.Host{Sys: ibverbs.Open(dir)}, TableMaxAge: time.Minute})
	h := handlerFor(b, c)
	for b.Loop() {
		var first, mid float64
		for i := 1; i <= 10000; i++ {
			scrape(b, h)
			switch i {
			case 100:
				first = rssMB(b)
			case 5000:
				mid = rssMB(b)
			}
		}
		b.ReportMetric(first, "rss-MB@100")
		b.ReportMetric(mid, "rss-MB@5000")
		b.ReportMetric(rssMB(b), "rss-MB@10000")
	}
}

func handlerFor(b testing.TB, c *HostCollector) func() int {
	reg, err := NewRegistry(c)
	if err != nil {
		b.Fatal(err)
	}
	h, err := Handler(reg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	req := httptest.NewRequest("GET", "/metrics", nil)
	return func() int {
		w := &countingWriter{ResponseRecorder: httptest.NewRecorder()}
		h.ServeHTTP(w, req)
		return w.n
	}
}

// countingWriter discards the body (a recorder would keep every scrape's bytes).
type countingWriter struct {
	*httptest.ResponseRecorder
	n int
}

func (w *countingWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

func scrape(b testing.TB, h func() int) {
	if n := h(); n < 1000 {
		b.Fatalf("scrape wrote %d bytes", n)
	}
}

func rssMB(b testing.TB) float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return float64(kb) / 1024
		}
	}
	b.Fatal("no VmRSS")
	return 0
}

// BenchmarkFabric2000 runs on a 2,008-node two-level fat tree in ibsim (80 leaves x 24
// CAs, 8 spines; internal/lab's FatTree, what internal/tools/fattree writes) after OpenSM
// programmed it:
//
//   - fabric-pkeys: query.Sweep with tables, what `ibkey fabric pkeys` does;
//
//   - exporter-sweep: the exporter's sweep: the same sweep, PMA PortCounters of every
//     exported port, the audit and the metrics built;
//
//   - scrape: one scrape answered from that sweep (gather + encode).
//
//     go test ./internal/exporter -run '^$' -bench Fabric2000 -benchtime 3x
func BenchmarkFabric2000(b *testing.B) {
	const leaves, spines, hcas = 80, 8, 24
	net := filepath.Join(b.TempDir(), "fattree.net")
	if err := os.WriteFile(net, []byte(lab.FatTree(leaves, spines, hcas)), 0o644); err != nil {
		b.Fatal(err)
	}
	l := lab.Start(b, net, nil)
	if err := l.RunOpenSM("Default=0x7fff, ipoib : ALL=full ;\nstorage=0x0001 : ALL_CAS=limited, ALL_SWITCHES=full ;\ncompute=0x0002 : ALL_CAS=full ;\n", false); err != nil {
		b.Fatal(err)
	}
	tr := l.Dial(b, "", labMAD)
	fab := &query.Fabric{T: tr, Via: "ibsim"}
	tap := func() *portInfoTap { return newPortInfoTap(tr) }
	ctx := context.Background()
	nodes := leaves*(hcas+1) + spines
	var pkeysPerOp, exporterPerOp float64
	b.Run("fabric-pkeys", func(b *testing.B) {
		var f *fabric.Fabric
		var err error
		cpu0 := cpuTime()
		for b.Loop() {
			if f, err = query.Sweep(ctx, tr, query.SweepOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		if len(f.Nodes) != nodes || len(f.Unreachable) > 0 {
			b.Fatalf("%d nodes (want %d), %d unreachable", len(f.Nodes), nodes, len(f.Unreachable))
		}
		pkeysPerOp = float64(b.Elapsed().Milliseconds()) / float64(b.N)
		b.ReportMetric(pkeysPerOp, "ms/sweep")
		b.ReportMetric(float64(cpuTime()-cpu0)/1e6/float64(b.N), "cpu-ms/op")
	})
	// The MADs alone: the sweep through the PortInfo tap and the PortCounters batch.
	b.Run("sweep-and-counters", func(b *testing.B) {
		for b.Loop() {
			tap := tap()
			f, err := query.Sweep(ctx, tap, query.SweepOptions{})
			if err != nil {
				b.Fatal(err)
			}
			recs := sweepRecords(f, tap.portInfos())
			readPortCounters(ctx, tap, fab.Via, recs, nil)
			for _, r := range recs {
				if r.readings[0].Unavailable != "" || r.readings[0].Err != "" || r.readings[3].Unavailable != "" {
					b.Fatalf("%v: counters %+v", r.id, r.readings)
				}
			}
		}
		perOp := float64(b.Elapsed().Milliseconds()) / float64(b.N)
		b.ReportMetric(perOp, "ms/sweep")
		if pkeysPerOp > 0 {
			b.ReportMetric(perOp/pkeysPerOp, "x-fabric-pkeys")
		}
	})
	c := NewFabricCollector(FabricOptions{Fabric: fab, Interval: time.Minute, Timeout: 5 * time.Minute})
	b.Run("exporter-sweep", func(b *testing.B) {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		cpu0 := cpuTime()
		for b.Loop() {
			if err := c.Sweep(ctx); err != nil {
				b.Fatal(err)
			}
		}
		cpu := cpuTime() - cpu0
		runtime.GC()
		runtime.ReadMemStats(&after)
		s := c.snap.Load()
		b.ReportMetric(float64(cpu)/1e6/float64(b.N), "cpu-ms/op")
		exporterPerOp = float64(b.Elapsed().Milliseconds()) / float64(b.N)
		b.ReportMetric(exporterPerOp, "ms/sweep")
		series, ports := 0, 0
		for _, mf := range s.families {
			series += len(mf.Metric)
			if mf.GetName() == mFPortInfo.Name {
				ports = len(mf.Metric)
			}
		}
		b.ReportMetric(float64(ports), "ports")
		b.ReportMetric(float64(series), "series")
		b.ReportMetric(float64(s.lateCounters), "late-counter-reads")
		b.ReportMetric(float64(after.HeapAlloc)/(1<<20), "heap-MB-after")
		if pkeysPerOp > 0 {
			b.ReportMetric(exporterPerOp/pkeysPerOp, "x-fabric-pkeys")
		}
	})
	// A scrape answered from the last sweep, through the HTTP handler: as curl asks
	// (text, no compression) and as Prometheus asks (its Accept header, gzip).
	for _, sc := range []struct{ name, accept, encoding string }{
		{"scrape-plain", "", ""},
		{"scrape-prometheus-gzip", prometheusAccept, "gzip"},
	} {
		b.Run(sc.name, func(b *testing.B) {
			reg, err := NewRegistry(c)
			if err != nil {
				b.Fatal(err)
			}
			h, err := Handler(reg, slog.New(slog.NewTextHandler(io.Discard, nil)))
			if err != nil {
				b.Fatal(err)
			}
			req := httptest.NewRequest("GET", "/metrics", nil)
			req.Header.Set("Accept", sc.accept)
			req.Header.Set("Accept-Encoding", sc.encoding)
			bytes := 0
			start := cpuTime()
			for b.Loop() {
				w := &countingWriter{ResponseRecorder: httptest.NewRecorder()}
				h.ServeHTTP(w, req)
				bytes = w.n
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1e3/float64(b.N), "ms/scrape")
			b.ReportMetric(float64(cpuTime()-start)/1e6/float64(b.N), "cpu-ms/op")
			b.ReportMetric(float64(bytes)/(1<<20), "MB/scrape")
			b.ReportMetric(rssMB(b), "rss-MB")
		})
	}
}

// prometheusAccept is the Accept header Prometheus 3 sends by default.
const prometheusAccept = "application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6,application/openmetrics-text;version=0.0.1;q=0.5,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2"

// BenchmarkScrapeFatTree is one scrape through the HTTP handler of a sweep of the
// 2,008-node fat tree of BenchmarkFabric2000 (4 partitions on every CA port), built
// without the simulator: as curl asks (text) and as Prometheus asks (its Accept header,
// gzip); the build of the sweep's series; and promhttp's gzip of the text alone.
//
//	go test ./internal/exporter -run '^$' -bench ScrapeFatTree
func BenchmarkScrapeFatTree(b *testing.B) {
	f := fatTreeFabric(80, 8, 24, 4)
	c := NewFabricCollector(FabricOptions{NoCounters: true})
	b.Run("build", func(b *testing.B) {
		cpu0 := cpuTime()
		for b.Loop() {
			serve(c, c.fromFabric(context.Background(), f, nil, nil))
		}
		b.ReportMetric(float64(cpuTime()-cpu0)/1e6/float64(b.N), "cpu-ms/op")
	})
	serve(c, c.fromFabric(context.Background(), f, nil, nil))
	reg, err := NewRegistry(c)
	if err != nil {
		b.Fatal(err)
	}
	h, err := Handler(reg, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	// once: what `exporter --once` writes (WriteText, no HTTP).
	b.Run("once", func(b *testing.B) {
		cpu0 := cpuTime()
		for b.Loop() {
			if err := WriteText(io.Discard, reg); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(cpuTime()-cpu0)/1e6/float64(b.N), "cpu-ms/op")
	})
	// gzip-of-text: the part of prometheus-gzip that is promhttp's gzip alone, the text
	// compressed as it compresses it (compress/gzip at its default level, no option to
	// change it), in the 4 KB pieces expfmt's buffer hands it. The rest of
	// prometheus-gzip is writing the text (plain, without its connection writes).
	b.Run("gzip-of-text", func(b *testing.B) {
		var text bytes.Buffer
		if err := WriteText(&text, reg); err != nil {
			b.Fatal(err)
		}
		var out countingWriter
		zw := gzip.NewWriter(nil) // promhttp's come from a pool, Reset for each scrape
		cpu0 := cpuTime()
		for b.Loop() {
			out.n = 0
			zw.Reset(&out)
			for off := 0; off < text.Len(); off += 4096 {
				if _, err := zw.Write(text.Bytes()[off:min(off+4096, text.Len())]); err != nil {
					b.Fatal(err)
				}
			}
			if err := zw.Close(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(cpuTime()-cpu0)/1e6/float64(b.N), "cpu-ms/op")
		b.ReportMetric(float64(out.n)/(1<<20), "MB/scrape")
	})
	for _, sc := range []struct{ name, accept, encoding string }{
		{"plain", "", ""},
		{"prometheus-gzip", prometheusAccept, "gzip"},
	} {
		b.Run(sc.name, func(b *testing.B) {
			req := httptest.NewRequest("GET", "/metrics", nil)
			req.Header.Set("Accept", sc.accept)
			req.Header.Set("Accept-Encoding", sc.encoding)
			n := 0
			cpu0 := cpuTime()
			for b.Loop() {
				w := &countingWriter{ResponseRecorder: httptest.NewRecorder()}
				h.ServeHTTP(w, req)
				n = w.n
			}
			b.ReportMetric(float64(cpuTime()-cpu0)/1e6/float64(b.N), "cpu-ms/op")
			b.ReportMetric(float64(n)/(1<<20), "MB/scrape")
		})
	}
}
