package exporter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/exporter-toolkit/web"
	"golang.org/x/sys/unix"
	"golang.org/x/time/rate"
)

// DefaultListen is --listen's default: loopback only, so a host does not publish its
// partition layout to the network until the admin chooses an address (and, with
// --web.config.file, TLS and basic auth).
const DefaultListen = "127.0.0.1:9893"

// TextfileName is the file --textfile writes in its directory (node_exporter's textfile
// collector reads *.prom).
const TextfileName = "ibkey.prom"

// The server's limits. A scrape holds one of scrapesInFlight slots only while its
// metrics are gathered (a host's are read from sysfs then), never while its answer is
// encoded and written: promhttp streams it to the connection, so a client that never
// reads, never sends its body or pipelines requests it does not read holds a
// connection, not a slot, and nothing is buffered for it; the timeouts then end it. A
// scrape waits up to slotWait for a slot rather than getting an instant 503.
const (
	scrapesInFlight   = 2 // each host scrape reads sysfs
	slotWait          = 5 * time.Second
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 30 * time.Second
	writeTimeout      = 60 * time.Second
	writeStall        = 10 * time.Second // a write that makes no progress (limitedConn.Write)
	idleTimeout       = 30 * time.Second
	maxHeaderBytes    = 16 << 10
	// DefaultMaxConnections is --web.max-connections' default: idle connections cost
	// about 20 KB each.
	DefaultMaxConnections = 1024
	errorLines            = 10 // the server's errors logged per minute at most
	fdReserve             = 64 // descriptors kept for sysfs, the MAD transport, the textfile
)

// prebuilt is a collector whose stable series are gathered once, when they change (a
// sweep completes, the host's tables are read), rather than collected, checked and
// sorted by the registry at every scrape.
type prebuilt interface {
	prebuiltFamilies() ([]*dto.MetricFamily, error)
}

// NewRegistry returns what /metrics, --once and the textfile gather: a registry holding
// collectors and nothing else (no Go runtime or process metrics: the exporter's own
// health is not what it exports), with the prebuilt series of the collectors that
// have them added as they were gathered (every fabric scrape answers from the last
// sweep: the registry checking and sorting 75,000 unchanged series at each scrape was
// half of a 2,000-node scrape).
func NewRegistry(collectors ...prometheus.Collector) (prometheus.Gatherer, error) {
	reg := prometheus.NewRegistry()
	var pre []prebuilt
	for _, c := range collectors {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
		if p, ok := c.(prebuilt); ok {
			pre = append(pre, p)
		}
	}
	return prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		mfs, err := reg.Gather() // first: a host's Collect reads its tables again when due
		for _, p := range pre {
			fams, perr := p.prebuiltFamilies()
			mfs = append(mfs, fams...)
			err = errors.Join(err, perr)
		}
		// The families of the two are distinct (prebuilt series are never what
		// Collect sends): sorted by name, as a registry gives them.
		slices.SortFunc(mfs, func(a, b *dto.MetricFamily) int { return strings.Compare(a.GetName(), b.GetName()) })
		return mfs, err
	}), nil
}

// Handler is the HTTP handler: /metrics (promhttp over g) and a landing page at /,
// for GET and HEAD (any other method: 405, net/http's ServeMux).
func Handler(g prometheus.Gatherer, logger *slog.Logger) (http.Handler, error) {
	metrics := promhttp.HandlerFor(g, promhttp.HandlerOpts{
		ErrorLog:      log.New(newErrorLog(logger, "gathering metrics"), "", 0),
		ErrorHandling: promhttp.ContinueOnError,
	})
	landing, err := web.NewLandingPage(web.LandingConfig{
		Name:        "ibkey exporter",
		Description: "InfiniBand partitions: P_Key tables, IPoIB membership, partition drops",
		Links:       []web.LandingLinks{{Address: "/metrics", Text: "Metrics"}},
		// exporter-toolkit's page links /debug/pprof unless told not to; the
		// exporter does not serve it.
		Profiling: "false",
	})
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", waitForSlot(metrics, scrapesInFlight, slotWait))
	mux.Handle("GET /{$}", landing)
	return mux, nil
}

// waitForSlot runs h for at most n requests at once until each starts its response;
// a request waits up to wait for a slot, then gets 503 with Retry-After. The slot is
// released when h first writes (promhttp writes once it has gathered), so a client
// reading the answer slowly, or not at all, holds no slot.
func waitForSlot(h http.Handler, n int, wait time.Duration) http.Handler {
	slots := make(chan struct{}, n)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case slots <- struct{}{}:
		case <-time.After(wait):
			w.Header().Set("Retry-After", "1")
			http.Error(w, fmt.Sprintf("%d scrapes are running; none ended within %v, try again", n, wait), http.StatusServiceUnavailable)
			return
		case <-r.Context().Done():
			return
		}
		sw := &slotWriter{ResponseWriter: w, release: sync.OnceFunc(func() { <-slots })}
		defer sw.release()
		h.ServeHTTP(sw, r)
	})
}

// slotWriter releases a scrape's slot at the response's first write. A write that
// fails (the client went away, or stopped reading for writeStall) aborts the handler
// (http.ErrAbortHandler: net/http closes the connection and logs nothing), so promhttp
// does not encode the rest of the answer into a dead connection, logging an error per
// metric family.
type slotWriter struct {
	http.ResponseWriter
	release func()
	failed  bool
}

func (w *slotWriter) WriteHeader(code int) {
	w.release()
	w.ResponseWriter.WriteHeader(code)
}

func (w *slotWriter) Write(p []byte) (int, error) {
	w.release()
	n, err := w.ResponseWriter.Write(p)
	if err != nil && !w.failed {
		w.failed = true // promhttp's deferred gzip Close writes again: no second panic
		panic(http.ErrAbortHandler)
	}
	return n, err
}

// Unwrap gives http.ResponseController the connection's writer.
func (w *slotWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// ServeOptions configure Serve.
type ServeOptions struct {
	// WebConfig is an exporter-toolkit web configuration file (TLS, basic auth), ""
	// for plain HTTP.
	WebConfig string
	// MaxConnections caps the open connections (0: DefaultMaxConnections), and is
	// lowered to what the file descriptor limit allows.
	MaxConnections int
	Logger         *slog.Logger
}

// Serve serves h on the listen addresses until ctx ends.
func Serve(ctx context.Context, listen []string, h http.Handler, opts ServeOptions) error {
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
	return ServeListeners(ctx, ls, h, opts)
}

// ServeListeners is Serve on listeners the caller opened (tests: port 0).
func ServeListeners(ctx context.Context, ls []net.Listener, h http.Handler, opts ServeOptions) error {
	logger := opts.Logger
	errLog := log.New(newErrorLog(logger, "http server"), "", 0)
	limit := newConnLimit(opts.MaxConnections, errLog)
	if limit.max < max(opts.MaxConnections, 1) {
		logger.Warn("connections capped by the file descriptor limit (ulimit -n)", "max_connections", limit.max)
	}
	srv := &http.Server{
		Handler:           limit.track(h),
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          errLog,
		ConnContext:       limit.connContext,
	}
	var addrs []string
	wrapped := make([]net.Listener, len(ls))
	for i, l := range ls {
		addrs = append(addrs, l.Addr().String())
		wrapped[i] = &limitedListener{Listener: l, limit: limit}
	}
	systemd, webConfig := false, opts.WebConfig
	flags := &web.FlagConfig{WebListenAddresses: &addrs, WebSystemdSocket: &systemd, WebConfigFile: &webConfig}
	errc := make(chan error, 1)
	go func() { errc <- web.ServeMultiple(wrapped, srv, flags, logger) }()
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

// connLimit caps the open connections at max. At the cap, a new connection closes the
// one that has waited longest for a request (a keep-alive connection between scrapes,
// one that sent nothing yet or is still sending its headers), so idle connections
// never lock a scrape out; only while every connection is inside the handler does
// Accept wait, and each of those is bounded by the server's timeouts.
type connLimit struct {
	max    int
	errLog *log.Logger

	mu    sync.Mutex
	conns map[*limitedConn]struct{}
}

type limitedConn struct {
	net.Conn
	limit *connLimit
	// waiting is when the connection started waiting for a request (Unix ns); 0
	// while the handler runs for it.
	waiting atomic.Int64
	// writeBy is when the response being written must be out (Unix ns; 0: none).
	writeBy atomic.Int64
	once    sync.Once
}

// Write gives each write writeStall to go out, within the response's writeTimeout: a
// client that stops reading loses its connection, and the answer held for it in
// memory, after writeStall rather than the whole write timeout.
func (c *limitedConn) Write(p []byte) (int, error) {
	d := time.Now().Add(writeStall)
	if by := c.writeBy.Load(); by != 0 && by < d.UnixNano() {
		d = time.Unix(0, by)
	}
	_ = c.Conn.SetWriteDeadline(d)
	return c.Conn.Write(p)
}

type limitedListener struct {
	net.Listener
	limit  *connLimit
	closed atomic.Bool // Accept must not wait for a slot past Shutdown
}

func (l *limitedListener) Close() error { l.closed.Store(true); return l.Listener.Close() }

type connKey struct{}

func newConnLimit(n int, errLog *log.Logger) *connLimit {
	if n <= 0 {
		n = DefaultMaxConnections
	}
	var rl unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &rl) == nil && rl.Cur < uint64(n)+fdReserve {
		n = max(int(rl.Cur)-fdReserve, 1)
	}
	return &connLimit{max: n, errLog: errLog, conns: map[*limitedConn]struct{}{}}
}

func (l *limitedListener) Accept() (net.Conn, error) {
	for waited := false; ; waited = true {
		n, idle := l.limit.state()
		if n < l.limit.max || idle != nil || l.closed.Load() {
			break
		}
		if !waited {
			l.limit.errLog.Printf("%d connections open (--web.max-connections), all in a request: new connections wait", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	lc := &limitedConn{Conn: c, limit: l.limit}
	if n, idle := l.limit.state(); n >= l.limit.max && idle != nil {
		l.limit.errLog.Printf("%d connections open (--web.max-connections): closed the one idle longest, from %s", n, idle.RemoteAddr())
		idle.Close()
	}
	lc.waiting.Store(time.Now().UnixNano())
	l.limit.mu.Lock()
	l.limit.conns[lc] = struct{}{}
	l.limit.mu.Unlock()
	return lc, nil
}

// state returns the open connections and the one that has waited longest for a
// request (nil: every one is in a request).
func (l *connLimit) state() (int, *limitedConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var oldest *limitedConn
	for c := range l.conns {
		if w := c.waiting.Load(); w != 0 && (oldest == nil || w < oldest.waiting.Load()) {
			oldest = c
		}
	}
	return len(l.conns), oldest
}

func (c *limitedConn) Close() error {
	c.once.Do(func() {
		c.limit.mu.Lock()
		delete(c.limit.conns, c)
		c.limit.mu.Unlock()
	})
	return c.Conn.Close()
}

// connContext keeps the connection in its requests' context (http.Server.ConnContext).
func (l *connLimit) connContext(ctx context.Context, c net.Conn) context.Context {
	if t, ok := c.(interface{ NetConn() net.Conn }); ok { // *tls.Conn
		c = t.NetConn()
	}
	if lc, ok := c.(*limitedConn); ok {
		return context.WithValue(ctx, connKey{}, lc)
	}
	return ctx
}

// track marks a connection busy while h runs for it.
func (l *connLimit) track(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if lc, ok := r.Context().Value(connKey{}).(*limitedConn); ok {
			lc.waiting.Store(0)
			lc.writeBy.Store(time.Now().Add(writeTimeout).UnixNano())
			defer func() { lc.waiting.Store(time.Now().UnixNano()) }()
		}
		h.ServeHTTP(w, r)
	})
}

// errorLog writes the lines of a log.Logger (net/http's server errors: a failed TLS
// handshake, plain HTTP sent to the TLS port; promhttp's) as structured records, at
// most errorLines a minute (golang.org/x/time/rate); how many were left out is said
// with the next one logged.
type errorLog struct {
	logger  *slog.Logger
	msg     string
	limit   *rate.Limiter
	now     func() time.Time
	dropped atomic.Int64
}

func newErrorLog(logger *slog.Logger, msg string) io.Writer {
	return &errorLog{logger: logger, msg: msg, now: time.Now,
		limit: rate.NewLimiter(rate.Every(time.Minute/errorLines), errorLines)}
}

func (l *errorLog) Write(p []byte) (int, error) {
	if !l.limit.AllowN(l.now(), 1) {
		l.dropped.Add(1)
		return len(p), nil
	}
	attrs := []any{"err", strings.TrimSpace(string(p))}
	if n := l.dropped.Swap(0); n > 0 {
		attrs = append(attrs, "suppressed", n)
	}
	l.logger.Warn(l.msg, attrs...)
	return len(p), nil
}

// WriteText gathers g once and writes it to w in the text exposition format.
func WriteText(w io.Writer, g prometheus.Gatherer) error {
	mfs, err := g.Gather()
	if err != nil {
		return err
	}
	// No escaping: every name ibkey exports is a fixed legacy name
	// (TestCatalogNamesAreLegacy), so escaping would change nothing, and checking every
	// series for it is 5% of a 2,000-node --once (expfmt's EscapeMetricFamily).
	enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeTextPlain).WithEscapingScheme(model.NoEscaping))
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
	return prometheus.WriteToTextfile(filepath.Join(dir, TextfileName), g)
}
