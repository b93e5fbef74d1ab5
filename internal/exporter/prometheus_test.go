package exporter

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/exporter-toolkit/web"
	"golang.org/x/crypto/bcrypt"

	"github.com/ibkey/ibkey/internal/fakesysfs"
	"github.com/ibkey/ibkey/internal/ibverbs"
	"github.com/ibkey/ibkey/internal/query"
)

// These tests run Debian's prometheus (2.42 here) on 127.0.0.1 with a temporary
// storage directory and a short scrape interval, scraping the exporter, and ask it
// through its HTTP API for the series the exporter should have produced. Waiting is
// bounded by a generous deadline; nothing asserts how long anything took.

const (
	promScrape   = "500ms"
	promDeadline = 90 * time.Second
)

// serveExporter serves c on a free loopback port until the test ends and returns the
// address.
func serveExporter(t *testing.T, c prometheus.Collector, webConfig string) string {
	t.Helper()
	reg, err := NewRegistry(c)
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	h, err := Handler(reg, logger)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- ServeListeners(ctx, []net.Listener{l}, h, ServeOptions{WebConfig: webConfig, Logger: logger})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("exporter: %v", err)
		}
	})
	return l.Addr().String()
}

type promServer struct {
	base string
	t    *testing.T
}

// startPrometheus runs prometheus scraping target (job "ibkey") with the sample alert
// rules, and stops exactly that process when the test ends.
func startPrometheus(t *testing.T, target, authUser, authPass string) *promServer {
	t.Helper()
	bin := requireTool(t, "prometheus")
	dir := t.TempDir()
	rules, err := filepath.Abs("../../contrib/prometheus/ibkey-rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	auth := ""
	if authUser != "" {
		auth = fmt.Sprintf("    basic_auth: {username: %q, password: %q}\n", authUser, authPass)
	}
	cfg := fmt.Sprintf(`global:
  scrape_interval: %[1]s
  scrape_timeout: %[1]s
  evaluation_interval: %[1]s
rule_files: [%[2]q]
scrape_configs:
  - job_name: ibkey
    static_configs: [{targets: [%[3]q]}]
%[4]s`, promScrape, rules, target, auth)
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	var lastErr string
	for attempt := 0; attempt < 3; attempt++ {
		addr := freePort(t)
		var out bytes.Buffer
		cmd := exec.Command(bin, "--config.file="+cfgPath, "--storage.tsdb.path="+filepath.Join(dir, fmt.Sprintf("data%d", attempt)),
			"--web.listen-address="+addr, "--log.level=warn")
		cmd.Dir = dir
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatalf("start prometheus: %v", err)
		}
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		stop := func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(20 * time.Second):
				_ = cmd.Process.Kill()
				<-exited
			}
		}
		p := &promServer{base: "http://" + addr, t: t}
		deadline := time.Now().Add(promDeadline)
		for time.Now().Before(deadline) {
			select {
			case <-exited:
				lastErr = "prometheus exited: " + out.String()
			default:
			}
			if lastErr != "" {
				break
			}
			resp, err := http.Get(p.base + "/-/ready")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					t.Cleanup(stop)
					return p
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
		stop()
		if lastErr == "" {
			lastErr = "prometheus did not become ready: " + out.String()
		}
		if !strings.Contains(lastErr, "address already in use") {
			break
		}
	}
	t.Fatal(lastErr)
	return nil
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

type promResult struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

func (r promResult) float() float64 {
	s, _ := r.Value[1].(string)
	v, _ := strconv.ParseFloat(s, 64)
	return v
}

// query runs an instant query.
func (p *promServer) query(q string) ([]promResult, error) {
	resp, err := http.Get(p.base + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []promResult `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, err
	}
	if body.Status != "success" {
		return nil, fmt.Errorf("query %s: %s", q, body.Error)
	}
	return body.Data.Result, nil
}

// waitFor polls q until ok accepts its result.
func (p *promServer) waitFor(q, what string, ok func([]promResult) bool) []promResult {
	p.t.Helper()
	deadline := time.Now().Add(promDeadline)
	var last []promResult
	var lastErr error
	for time.Now().Before(deadline) {
		last, lastErr = p.query(q)
		if lastErr == nil && ok(last) {
			return last
		}
		time.Sleep(200 * time.Millisecond)
	}
	p.t.Fatalf("prometheus never had %s (query %s): last result %v, error %v; targets: %s", what, q, last, lastErr, p.targets())
	return nil
}

// waitValue waits until q returns exactly one series with value want.
func (p *promServer) waitValue(q string, want float64) {
	p.t.Helper()
	p.waitFor(q, fmt.Sprintf("one series = %v", want), func(r []promResult) bool { return len(r) == 1 && r[0].float() == want })
}

func (p *promServer) targets() string {
	resp, err := http.Get(p.base + "/api/v1/targets")
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// TestPrometheusScrapesHost: Prometheus scrapes host mode on a fixture tree through
// basic auth (exporter-toolkit web config), sees the tables, the IPoIB membership and
// the counters, and sees a counter change during the test; the sample rules fire.
func TestPrometheusScrapesHost(t *testing.T) {
	requireTool(t, "prometheus")
	dir := writeHost(t, fakesysfs.MLX5())
	c := NewHostCollector(HostOptions{Host: &query.Host{Sys: ibverbs.Open(dir)}, TableMaxAge: time.Second})

	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	webConfig := filepath.Join(t.TempDir(), "web.yml")
	if err := os.WriteFile(webConfig, []byte("basic_auth_users:\n  prom: "+string(hash)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := web.Validate(webConfig); err != nil {
		t.Fatal(err)
	}
	addr := serveExporter(t, c, webConfig)
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("GET /metrics without credentials: %s, want 401", resp.Status)
	}

	p := startPrometheus(t, addr, "prom", "s3cret")
	p.waitValue(`ibkey_port_rcv_constraint_errors{device="mlx5_0",port="1",source="sysfs"}`, 17)
	p.waitValue(`count(ibkey_pkey_entry_info{device="mlx5_0",port="1"})`, 6)
	p.waitValue(`ibkey_pkey_entry_info{device="mlx5_0",port="1",index="2",pkey="0x0002",key="0x0002",membership="limited"}`, 1)
	p.waitValue(`ibkey_ipoib_key_present{interface="ib0.8004"}`, 0)
	p.waitValue(`ibkey_ipoib_interface_info{interface="ib0.8002",membership="limited"}`, 1)
	p.waitValue(`ibkey_port_saturated{device="mlx5_1",port="1",counter="port_rcv_constraint_errors"}`, 1)
	p.waitValue(`ibkey_port_unavailable{device="mlx5_2",port="1",counter="port_rcv_constraint_errors"}`, 1)
	p.waitFor(`ibkey_port_rcv_constraint_errors{device="mlx5_2"}`, "no value for a counter the port does not have", func(r []promResult) bool { return len(r) == 0 })
	p.waitFor(`ibkey_port_unreadable{device="mlx5_2",counter="port_rcv_constraint_errors"}`, "a counter the port does not have is not unreadable", func(r []promResult) bool { return len(r) == 0 })
	// An iWARP port has no P_Key or Q_Key violations either; the RoCE port's exist
	// where its driver counts them, and this tree does not say its driver.
	p.waitFor(`ibkey_port_unreadable{device="irdma0"}`, "an iWARP port's counters are none by nature", func(r []promResult) bool { return len(r) == 0 })
	p.waitValue(`ibkey_port_unavailable{device="irdma0",port="1",counter="qkey_violations"}`, 1)
	p.waitFor(`ALERTS{alertname="IbkeyIPoIBChildWithoutKey",interface="ib0.8004"}`, "the IPoIB alert pending", func(r []promResult) bool { return len(r) == 1 })

	// Partition drops while Prometheus watches.
	rewrite(t, counterPath(dir, "mlx5_0", "1", "port_rcv_constraint_errors"), "42")
	p.waitValue(`ibkey_port_rcv_constraint_errors{device="mlx5_0",port="1"}`, 42)
	p.waitFor(`ALERTS{alertname="IbkeyPartitionDropsRising",alertstate="firing",device="mlx5_0",port="1"}`, "the drops alert firing",
		func(r []promResult) bool { return len(r) == 1 })
	// A table change shows after the table interval.
	rewrite(t, filepath.Join(dir, "class/infiniband/mlx5_0/ports/1/pkeys/3"), "0x8004")
	p.waitValue(`ibkey_ipoib_key_present{interface="ib0.8004"}`, 1)
}

// TestPrometheusScrapesFabric: Prometheus scrapes fabric mode sweeping the lab every
// 300 ms; a PortCounters change set on ibsim's console reaches Prometheus.
func TestPrometheusScrapesFabric(t *testing.T) {
	requireTool(t, "prometheus")
	l := startSmallLab(t)
	tr := l.Dial(t, "HcaA", labMAD)
	c := NewFabricCollector(FabricOptions{Fabric: &query.Fabric{T: tr, Via: "ibsim"}, Interval: 300 * time.Millisecond, Timeout: 30 * time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	addr := serveExporter(t, c, "")

	p := startPrometheus(t, addr, "", "")
	p.waitValue(`ibkey_fabric_up`, 1)
	p.waitValue(`ibkey_fabric_nodes{type="ca"}`, 4)
	p.waitValue(`ibkey_fabric_findings{rule="enforcement-off",severity="warning"}`, 5)
	p.waitValue(`ibkey_fabric_findings{rule="hca-key-not-on-switch"}`, 0)
	p.waitFor(`ibkey_fabric_pkey_entry_info{node_name="HcaB",port="1",pkey="0xffff"}`, "HcaB's default key", func(r []promResult) bool { return len(r) == 1 })
	p.waitFor(`ibkey_fabric_sweep_age_seconds < 60`, "a recent sweep", func(r []promResult) bool { return len(r) == 1 })
	p.waitValue(`ibkey_fabric_port_rcv_constraint_errors{node_name="HcaB",port="1"}`, 0)

	l.MustConsole(`PerformanceSet "HcaB"[1] PortCounters.PortRcvConstraintErrors=7`)
	p.waitValue(`ibkey_fabric_port_rcv_constraint_errors{node_name="HcaB",port="1"}`, 7)
	p.waitFor(`ALERTS{alertname="IbkeyFabricPartitionDropsRising",alertstate="firing",node_name="HcaB"}`, "the fabric drops alert firing",
		func(r []promResult) bool { return len(r) == 1 })
	p.waitFor(`ibkey_fabric_sweeps_total{result="complete"} > 2`, "sweeps on a schedule", func(r []promResult) bool { return len(r) == 1 })
}
