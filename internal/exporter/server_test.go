package exporter

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/lab"
)

// TestHandlerMethods: /metrics and / answer GET and HEAD; every other method is 405
// with the methods allowed (issue 28: every method used to answer 200).
func TestHandlerMethods(t *testing.T) {
	reg, err := NewRegistry(savedFabricCollector(t, "small.json", false))
	if err != nil {
		t.Fatal(err)
	}
	h, err := Handler(reg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/metrics", "/"} {
		for _, m := range []string{"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "PROPFIND"} {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest(m, path, strings.NewReader("x=1")))
			want := http.StatusMethodNotAllowed
			if m == "GET" || m == "HEAD" {
				want = http.StatusOK
			}
			if w.Code != want {
				t.Errorf("%s %s: %d, want %d", m, path, w.Code, want)
			}
			if want == http.StatusMethodNotAllowed && w.Header().Get("Allow") != "GET, HEAD" {
				t.Errorf("%s %s: Allow %q", m, path, w.Header().Get("Allow"))
			}
		}
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/nothing", nil))
	if w.Code != http.StatusNotFound {
		t.Errorf("GET /nothing: %d", w.Code)
	}
}

// TestLandingPageLinksAnswer: every link of the landing page to this server is
// served (exporter-toolkit's page links pprof by default, which the exporter does not
// serve: a 404 from the exporter's own page).
func TestLandingPageLinksAnswer(t *testing.T) {
	reg, err := NewRegistry(savedFabricCollector(t, "small.json", false))
	if err != nil {
		t.Fatal(err)
	}
	h, err := Handler(reg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	if w.Code != http.StatusOK {
		t.Fatalf("GET /: %d", w.Code)
	}
	links := 0
	for _, m := range regexp.MustCompile(`href="([^"]*)"`).FindAllStringSubmatch(w.Body.String(), -1) {
		u, err := url.Parse(m[1])
		if err != nil {
			t.Fatalf("link %q: %v", m[1], err)
		}
		if u.IsAbs() {
			continue // another site
		}
		links++
		r := httptest.NewRecorder()
		h.ServeHTTP(r, httptest.NewRequest("GET", (&url.URL{Path: "/"}).ResolveReference(u).String(), nil))
		if r.Code != http.StatusOK {
			t.Errorf("the landing page links %s, which answers %d", m[1], r.Code)
		}
	}
	if links == 0 {
		t.Errorf("no link to this server on the landing page:\n%s", w.Body)
	}
}

// TestWaitForSlot: a request waits for a slot rather than getting an instant 503, and
// gets 503 with Retry-After only when none frees within the wait.
func TestWaitForSlot(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 4)
	h := waitForSlot(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
	}), 1, 300*time.Millisecond)
	serve := func() *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
		return w
	}
	first := make(chan int)
	go func() { first <- serve().Code }()
	<-entered
	// The slot is held past the wait: 503.
	if w := serve(); w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" {
		t.Errorf("no slot within the wait: %d, Retry-After %q", w.Code, w.Header().Get("Retry-After"))
	}
	// The slot frees while a request waits: it gets it.
	second := make(chan int)
	go func() { second <- serve().Code }()
	time.Sleep(50 * time.Millisecond)
	close(release)
	if a, b := <-first, <-second; a != 200 || b != 200 {
		t.Errorf("statuses %d and %d, want 200 (the second waited for the slot)", a, b)
	}
}

// serveTest serves h on a loopback port until the test ends and returns the address.
func serveTest(t *testing.T, h http.Handler, opts ServeOptions) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ServeListeners(ctx, []net.Listener{l}, h, opts) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serving: %v", err)
		}
	})
	return l.Addr().String()
}

// get scrapes url on a new connection.
func get(t *testing.T, url string) (int, error) {
	t.Helper()
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, err
}

// bigHandler serves the sweep of a 500-node fat tree: 2 MB of text, more than socket
// buffers hold for a client that never reads.
func bigHandler(t *testing.T) http.Handler {
	t.Helper()
	c := NewFabricCollector(FabricOptions{NoCounters: true})
	serve(c, c.fromFabric(context.Background(), fatTreeFabric(20, 4, 24, 4), nil, nil))
	reg, err := NewRegistry(c)
	if err != nil {
		t.Fatal(err)
	}
	h, err := Handler(reg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestStalledClientsHoldNoSlot: clients that send a body they never finish, never read
// a large answer, or pipeline requests they never read hold connections, not scrape
// slots: scrapes go on (issue 28: two such connections stopped every scrape).
func TestStalledClientsHoldNoSlot(t *testing.T) {
	addr := serveTest(t, bigHandler(t), ServeOptions{})
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	stall := func(req string) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		go func() { _, _ = io.WriteString(c, req) }()
	}
	get1 := "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
	for range 2 {
		stall("GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\n") // the body never comes
		stall(get1)                                                            // the answer is never read
		stall(strings.Repeat(get1, 2000))                                      // a pipeline never read
	}
	time.Sleep(500 * time.Millisecond) // let them take what they would take
	for i := range 3 {
		if code, err := get(t, "http://"+addr+"/metrics"); err != nil || code != 200 {
			t.Fatalf("scrape %d beside the stalled clients: %d %v", i, code, err)
		}
	}
}

// TestConnectionCap: at the cap a new connection closes the one idle longest, so idle
// connections never lock a scrape out; the goroutines of closed connections end.
func TestConnectionCap(t *testing.T) {
	reg, err := NewRegistry(savedFabricCollector(t, "small.json", false))
	if err != nil {
		t.Fatal(err)
	}
	h, err := Handler(reg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &mu}, nil))
	addr := serveTest(t, h, ServeOptions{MaxConnections: 4, Logger: logger})
	before := runtime.NumGoroutine()
	var idle []net.Conn
	for range 4 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		idle = append(idle, c)
		time.Sleep(20 * time.Millisecond) // an order to close them in
	}
	// The first scrape closes the oldest idle connection, and only that one.
	if code, err := get(t, "http://"+addr+"/metrics"); err != nil || code != 200 {
		t.Fatalf("scrape with the cap reached by idle connections: %d %v", code, err)
	}
	for i, c := range idle {
		_ = c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		_, err := c.Read(make([]byte, 1))
		if closed := err == io.EOF; closed != (i == 0) {
			t.Errorf("idle connection %d: read %v (closed by the server: %v, want %v)", i, err, closed, i == 0)
		}
	}
	// More scrapes go on at the cap (closing the next oldest: an idle connection, or a
	// finished scrape's the server has not closed yet).
	for i := range 3 {
		if code, err := get(t, "http://"+addr+"/metrics"); err != nil || code != 200 {
			t.Fatalf("scrape %d at the cap: %d %v", i, code, err)
		}
	}
	for _, c := range idle {
		c.Close()
	}
	mu.Lock()
	if !strings.Contains(logs.String(), "closed the one idle longest") {
		t.Errorf("no log of the closed connections:\n%s", logs.String())
	}
	mu.Unlock()
	waitGoroutines(t, before)
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// waitGoroutines waits until the goroutines are back to at most n (with a margin for
// the runtime's own).
func waitGoroutines(t *testing.T, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); runtime.NumGoroutine() > n+2; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("%d goroutines, %d before", runtime.NumGoroutine(), n)
			return
		}
	}
}

// TestIdleConnectionsLoad: 1,000 idle connections (half sent nothing, half made a
// request and keep the connection) do not stop a scrape; their goroutines end once
// they close. The figures are logged (go test -v).
func TestIdleConnectionsLoad(t *testing.T) {
	addr := serveTest(t, bigHandler(t), ServeOptions{})
	before, rss0 := runtime.NumGoroutine(), rssMB(t)
	var conns []net.Conn
	for i := range 1000 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		conns = append(conns, c)
		if i%2 == 1 {
			fmt.Fprint(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatalf("connection %d: %v", i, err)
			}
			resp.Body.Close()
		}
	}
	held := runtime.NumGoroutine()
	start := time.Now()
	code, err := get(t, "http://"+addr+"/metrics")
	took := time.Since(start)
	rss1 := rssMB(t)
	if err != nil || code != 200 {
		t.Fatalf("scrape beside 1,000 idle connections: %d %v", code, err)
	}
	for _, c := range conns {
		c.Close()
	}
	waitGoroutines(t, before)
	t.Logf("1,000 idle connections: goroutines %d before, %d held, %d after; test process RSS %.0f MB before, %.0f MB held; scrape %v",
		before, held, runtime.NumGoroutine(), rss0, rss1, took.Round(time.Millisecond))
}

// TestServerErrorsLogged: plain HTTP to the TLS port is answered 400 and logged
// through the structured log, at most errorLines lines a minute however many come
// (issue 28: one unstructured line per request, 1 MB/s from 10 clients).
func TestServerErrorsLogged(t *testing.T) {
	dir := t.TempDir()
	lab.WriteCert(t, dir)
	webConfig := filepath.Join(dir, "web.yml")
	if err := os.WriteFile(webConfig, []byte("tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewJSONHandler(&lockedWriter{w: &logs, mu: &mu}, nil))
	reg, err := NewRegistry(savedFabricCollector(t, "small.json", false))
	if err != nil {
		t.Fatal(err)
	}
	h, err := Handler(reg, logger)
	if err != nil {
		t.Fatal(err)
	}
	addr := serveTest(t, h, ServeOptions{WebConfig: webConfig, Logger: logger})
	for i := range 100 {
		code, err := get(t, "http://"+addr+"/metrics")
		if err != nil || code != http.StatusBadRequest {
			t.Fatalf("plain HTTP request %d to the TLS port: %d %v", i, code, err)
		}
	}
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := c.Get("https://" + addr + "/metrics")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("HTTPS scrape: %v %v", resp, err)
	}
	resp.Body.Close()
	mu.Lock()
	defer mu.Unlock()
	n := strings.Count(logs.String(), `"msg":"http server"`)
	if n == 0 || n > errorLines || !strings.Contains(logs.String(), "client sent an HTTP request to an HTTPS server") {
		t.Errorf("%d server error records for 100 bad requests (want 1 to %d):\n%s", n, errorLines, logs.String())
	}
}

// TestErrorLogSummarises: lines past the budget are counted, and the count goes with
// the next line logged.
func TestErrorLogSummarises(t *testing.T) {
	var b bytes.Buffer
	l := newErrorLog(slog.New(slog.NewTextHandler(&b, nil)), "http server").(*errorLog)
	lg := log.New(l, "", 0)
	for i := range 25 {
		lg.Printf("bad %d", i)
	}
	next := time.Now().Add(time.Minute) // the next minute
	l.now = func() time.Time { return next }
	lg.Print("again")
	text := b.String()
	if n := strings.Count(text, "msg=\"http server\""); n != errorLines+1 || !strings.Contains(text, `err=again suppressed=15`) {
		t.Errorf("%d records:\n%s", n, text)
	}
}

// TestWriteStall: a write to a client that does not read ends at the response's write
// deadline (or writeStall), so the answer held for it is dropped then, not kept for as
// long as the client likes.
func TestWriteStall(t *testing.T) {
	server, client := net.Pipe() // no buffer: a write waits for a read
	defer client.Close()
	lc := &limitedConn{Conn: server, limit: newConnLimit(1, log.New(io.Discard, "", 0))}
	lc.writeBy.Store(time.Now().Add(100 * time.Millisecond).UnixNano())
	done := make(chan error, 1)
	go func() { _, err := lc.Write([]byte("an answer nobody reads")); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("write to a client that does not read: %v, want a deadline", err)
		}
	case <-time.After(writeStall + 5*time.Second):
		t.Fatal("a write to a client that does not read did not end")
	}
}

// TestSlotReleasedAtFirstWrite: a scrape holds its slot until it starts writing its
// answer, not while the answer is written (nothing is buffered: a client reading slowly
// holds no slot); a write that fails aborts the handler and frees the slot.
func TestSlotReleasedAtFirstWrite(t *testing.T) {
	wrote, finish := make(chan struct{}), make(chan struct{})
	h := waitForSlot(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has("x") {
			if _, err := w.Write([]byte("x")); err != nil {
				t.Errorf("a failed write returned (%v) instead of aborting the handler", err)
			}
			return
		}
		_, _ = w.Write([]byte("gathered"))
		close(wrote)
		<-finish // still writing its answer
	}), 1, 300*time.Millisecond)
	go h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/metrics", nil))
	<-wrote
	// The first scrape is still writing: a second one gets the slot, and its write
	// fails (the client went away).
	func() {
		defer func() {
			if p := recover(); p != http.ErrAbortHandler {
				t.Errorf("a failed write: panic %v, want http.ErrAbortHandler", p)
			}
		}()
		h.ServeHTTP(failingWriter{httptest.NewRecorder()}, httptest.NewRequest("GET", "/metrics?x", nil))
	}()
	close(finish)
	// The aborted scrape freed its slot.
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/metrics?x", nil))
	if w.Code != http.StatusOK || w.Body.String() != "x" {
		t.Errorf("after an aborted scrape: %d %q", w.Code, w.Body.String())
	}
}

// failingWriter is a response whose client went away.
type failingWriter struct{ *httptest.ResponseRecorder }

func (failingWriter) Write([]byte) (int, error) { return 0, net.ErrClosed }
