package exporter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/exporter-toolkit/web"
)

// DefaultListen is --listen's default: loopback only, so a host does not publish its
// partition layout to the network until the admin chooses an address (and, with
// --web.config.file, TLS and basic auth).
const DefaultListen = "127.0.0.1:9893"

// TextfileName is the file --textfile writes in its directory (node_exporter's textfile
// collector reads *.prom).
const TextfileName = "ibkey.prom"

// NewRegistry returns a registry holding collectors and nothing else (no Go runtime or
// process metrics: the exporter's own health is not what it exports).
func NewRegistry(collectors ...prometheus.Collector) (*prometheus.Registry, error) {
	reg := prometheus.NewRegistry()
	for _, c := range collectors {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return reg, nil
}

// cachingCollector is a collector whose slowly changing metrics (the P_Key tables, a
// sweep) are built, gathered and encoded once when they change rather than on every
// scrape.
type cachingCollector interface {
	prometheus.Collector
	// static returns the current static part (reading it again first when stale).
	static() *staticSet
	collectLive(ch chan<- prometheus.Metric)
}

// NewGatherer returns what the HTTP handler and the textfile gather: for the host and
// fabric collectors, their pre-built families plus a registry of what changes per
// scrape (64 ports x 128 entries are 8,192 series, a 2,000-node fabric 74,000, that
// would otherwise be converted, sorted and encoded on every scrape); any other
// collector through a plain registry.
func NewGatherer(c prometheus.Collector) (prometheus.Gatherer, error) {
	cc, ok := c.(cachingCollector)
	if !ok {
		return NewRegistry(c)
	}
	live, err := NewRegistry(liveCollector{cc})
	if err != nil {
		return nil, err
	}
	return cachedGatherer{static: cc.static, live: live}, nil
}

type liveCollector struct{ c cachingCollector }

func (l liveCollector) Describe(ch chan<- *prometheus.Desc) { l.c.Describe(ch) }
func (l liveCollector) Collect(ch chan<- prometheus.Metric) { l.c.collectLive(ch) }

// cachedGatherer merges pre-built families with a live registry's. The two never
// share a metric name (the collectors split them by name), which the merge checks.
type cachedGatherer struct {
	static func() *staticSet
	live   prometheus.Gatherer
}

func (g cachedGatherer) Gather() ([]*dto.MetricFamily, error) {
	ss := g.static()
	static := ss.dtoFamilies()
	live, err := g.live.Gather()
	if derr := checkDisjoint(ss.names(), live); derr != nil {
		return nil, derr
	}
	out := make([]*dto.MetricFamily, 0, len(static)+len(live))
	out = append(append(out, static...), live...)
	sort.Slice(out, func(i, j int) bool { return out[i].GetName() < out[j].GetName() })
	return out, err
}

// Handler is the HTTP handler: /metrics and a landing page at /.
func Handler(g prometheus.Gatherer, logger *slog.Logger) (http.Handler, error) {
	mux := http.NewServeMux()
	// Two scrapes at a time: each host scrape reads sysfs.
	const inFlight = 2
	if cg, ok := g.(cachedGatherer); ok {
		mux.Handle("/metrics", &cachedHandler{g: cg, inFlight: make(chan struct{}, inFlight), logger: logger})
	} else {
		mux.Handle("/metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{
			ErrorLog:            slog.NewLogLogger(logger.Handler(), slog.LevelError),
			ErrorHandling:       promhttp.ContinueOnError,
			MaxRequestsInFlight: inFlight,
		}))
	}
	landing, err := web.NewLandingPage(web.LandingConfig{
		Name:        "ibkey exporter",
		Description: "InfiniBand partitions: P_Key tables, IPoIB membership, partition drops",
		Links:       []web.LandingLinks{{Address: "/metrics", Text: "Metrics"}},
	})
	if err != nil {
		return nil, err
	}
	mux.Handle("/", landing)
	return mux, nil
}

// Serve serves h on the listen addresses until ctx ends. webConfig is an
// exporter-toolkit web configuration file (TLS, basic auth), "" for plain HTTP.
func Serve(ctx context.Context, listen []string, webConfig string, h http.Handler, logger *slog.Logger) error {
	var ls []net.Listener
	for _, a := range listen {
		l, err := net.Listen("tcp", a)
		if err != nil {
			for _, o := range ls {
				o.Close()
			}
			return err
		}
		ls = append(ls, l)
	}
	return ServeListeners(ctx, ls, webConfig, h, logger)
}

// ServeListeners is Serve on listeners the caller opened (tests: port 0).
func ServeListeners(ctx context.Context, ls []net.Listener, webConfig string, h http.Handler, logger *slog.Logger) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	systemd := false
	var addrs []string
	for _, l := range ls {
		addrs = append(addrs, l.Addr().String())
	}
	flags := &web.FlagConfig{WebListenAddresses: &addrs, WebSystemdSocket: &systemd, WebConfigFile: &webConfig}
	errc := make(chan error, 1)
	go func() { errc <- web.ServeMultiple(ls, srv, flags, logger) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}

// ValidateWebConfig checks a web configuration file before serving.
func ValidateWebConfig(path string) error {
	if path == "" {
		return nil
	}
	return web.Validate(path)
}

// WriteText gathers g once and writes it to w in the text exposition format, encoded
// by prometheus/common/expfmt.
func WriteText(w io.Writer, g prometheus.Gatherer) error {
	if cg, ok := g.(cachedGatherer); ok {
		// The static part as encoded once (a sweep's 74,000 series), then the live.
		enc, live, err := cg.render(expfmt.NewFormat(expfmt.TypeTextPlain), false, slog.New(slog.DiscardHandler))
		if err != nil {
			return err
		}
		if err := enc.writePlain(w); err != nil {
			return err
		}
		_, err = w.Write(live)
		return err
	}
	mfs, err := g.Gather()
	if err != nil {
		return err
	}
	enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			return err
		}
	}
	return nil
}

// WriteTextfile writes g to dir/ibkey.prom atomically: client_golang's
// WriteToTextfile writes a temporary file in dir and renames it, so node_exporter's
// textfile collector never reads a half-written file.
func WriteTextfile(dir string, g prometheus.Gatherer) error {
	st, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	if _, ok := g.(cachedGatherer); !ok {
		return prometheus.WriteToTextfile(filepath.Join(dir, TextfileName), g)
	}
	// As prometheus.WriteToTextfile does, with WriteText's encoding: a temporary file
	// in dir (not matching *.prom), renamed over the old one.
	tmp, err := os.CreateTemp(dir, TextfileName)
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := WriteText(tmp, g); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, TextfileName))
}
