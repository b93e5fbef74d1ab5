package exporter

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/query"
)

// TestWebConfigRefusedAtOnce: --web.config.file goes through the bounded reader before
// exporter-toolkit reads it whole (issue 28: /dev/zero took all memory, a FIFO hung
// start-up): a FIFO, a device or a directory is one line of bad usage (exit 2), as is a
// configuration exporter-toolkit rejects, its YAML errors on that one line.
func TestWebConfigRefusedAtOnce(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.yml")
	if err := os.WriteFile(bad, []byte("bogus: 1\nother: 2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		fifo:        "is a FIFO",
		"/dev/zero": "is a character device",
		dir:         "is a directory",
		bad:         "line 1: field bogus not found in type web.Config; line 2: field other",
	} {
		o := &Options{Deps: Deps{Out: io.Discard, ErrOut: io.Discard, Ctx: context.Background()}, WebConfig: path,
			Listen: []string{"127.0.0.1:0"}, MaxConnections: 1, Interval: time.Minute, TableInterval: time.Minute, SweepInterval: time.Minute}
		done := make(chan error, 1)
		go func() { done <- Run(o) }()
		select {
		case err := <-done:
			var ue *query.UsageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("--web.config.file %s: %v (want one line of bad usage with %q)", path, err, want)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("--web.config.file %s: still running after 30 s", path)
		}
	}
}

func TestValidate(t *testing.T) {
	ok := func() *Options {
		return &Options{Listen: []string{"127.0.0.1:9893"}, MaxConnections: 1, Interval: time.Minute, TableInterval: time.Minute, SweepInterval: time.Minute}
	}
	for name, tc := range map[string]struct {
		change func(o *Options)
		want   string
	}{
		"no connections":      {func(o *Options) { o.MaxConnections = 0 }, "invalid --web.max-connections 0 (accepted: 1 or more)"},
		"negative timeout":    {func(o *Options) { o.SweepTimeout = -time.Second }, "invalid --sweep-timeout"},
		"no listen":           {func(o *Options) { o.Listen = nil }, "--listen needs at least one address"},
		"bad port":            {func(o *Options) { o.Listen = []string{"x:70000"} }, `port "70000" is not 0-65535`},
		"opensm-conf, --lid":  {func(o *Options) { o.LID, o.OpenSMConf = "3", "opensm.conf" }, "--opensm-conf says how to audit a whole sweep: it needs --sweep"},
		"allow-both alone":    {func(o *Options) { o.Sweep, o.AllowBoth = true, true }, "--allow-both applies to --partitions FILE"},
		"no-counters, host":   {func(o *Options) { o.NoCounters = true }, "--no-counters is for fabric mode"},
		"sweep-timeout, host": {func(o *Options) { o.SweepTimeout = time.Second }, "--sweep-timeout is for fabric mode"},
	} {
		o := ok()
		tc.change(o)
		err := o.validate()
		var ue *query.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a usage error with %q", name, err, tc.want)
		}
	}
	if err := ok().validate(); err != nil {
		t.Errorf("valid options: %v", err)
	}
	for _, fabric := range []func(o *Options){func(o *Options) { o.Sweep = true }, func(o *Options) { o.LID = "3" }} {
		o := ok()
		fabric(o)
		o.NoCounters, o.SweepTimeout = true, time.Second
		if err := o.validate(); err != nil {
			t.Errorf("fabric mode --no-counters --sweep-timeout 1s: %v", err)
		}
	}
	o := ok()
	o.Sweep, o.OpenSMConf, o.AllowBoth = true, "opensm.conf", true // the file's allow_both_pkeys wins
	if err := o.validate(); err != nil {
		t.Errorf("--sweep --opensm-conf --allow-both: %v", err)
	}
}

// TestOpenSMConfRefused: --opensm-conf is read as fabric check reads it
// (cmdutil.ReadOpenSMConf): a file that cannot be read is one line of bad usage naming
// the flag, before any MAD is sent.
func TestOpenSMConfRefused(t *testing.T) {
	o := &Options{Deps: Deps{Out: io.Discard, ErrOut: io.Discard, Ctx: context.Background(),
		OpenFabric: func(context.Context) (*query.Fabric, error) { t.Fatal("opened the fabric"); return nil, nil }},
		Sweep: true, OpenSMConf: "/dev/zero", Listen: []string{"127.0.0.1:0"}, MaxConnections: 1,
		Interval: time.Minute, TableInterval: time.Minute, SweepInterval: time.Minute, Once: true}
	err := Run(o)
	var ue *query.UsageError
	if !errors.As(err, &ue) || !strings.HasPrefix(err.Error(), "--opensm-conf: ") || strings.Contains(err.Error(), "\n") {
		t.Errorf("--opensm-conf /dev/zero: %v, want one line of bad usage naming the flag", err)
	}
}

// TestOpenSMConfNotComparedWarns: a conf whose partition_config_file is not on this
// machine leaves every scrape without the comparison it asks for (fabric check exits
// 4): said as a warning at start, not as information.
func TestOpenSMConfNotComparedWarns(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "opensm.conf")
	if err := os.WriteFile(conf, []byte("partition_config_file /nonexistent/partitions.conf\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	stop := errors.New("stop here")
	o := &Options{Deps: Deps{Out: io.Discard, ErrOut: &stderr, Ctx: context.Background(),
		OpenFabric: func(context.Context) (*query.Fabric, error) { return nil, stop }},
		Sweep: true, OpenSMConf: conf, Listen: []string{"127.0.0.1:0"}, MaxConnections: 1,
		Interval: time.Minute, TableInterval: time.Minute, SweepInterval: time.Minute, Once: true}
	if err := Run(o); !errors.Is(err, stop) {
		t.Fatalf("Run: %v, want the fabric opened", err)
	}
	if !strings.Contains(stderr.String(), "level=WARN msg=\"not compared with a partitions.conf") {
		t.Errorf("stderr %q, want a warning that the file is not compared", stderr.String())
	}
}

// TestPartitionsUncertainRefused: a --partitions file whose outcome in OpenSM cannot be
// predicted (fabric check exits 4 for it) is refused at start, before any MAD is sent,
// as one line of bad usage naming the file's line: a service would otherwise export the
// comparison for as long as it runs as if it knew what OpenSM programs.
func TestPartitionsUncertainRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "partitions.conf")
	// OpenSM reads past the end of line 2 (the lab case "semicolon right after mgid").
	if err := os.WriteFile(path, []byte("Default=0x7fff : ALL=full;\np=0x10 : 0x0002c90300000211=full, mgid=ff12::5;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := &Options{Deps: Deps{Out: io.Discard, ErrOut: io.Discard, Ctx: context.Background(),
		OpenFabric: func(context.Context) (*query.Fabric, error) { t.Fatal("opened the fabric"); return nil, nil }},
		Sweep: true, Partitions: path, Listen: []string{"127.0.0.1:0"}, MaxConnections: 1,
		Interval: time.Minute, TableInterval: time.Minute, SweepInterval: time.Minute, Once: true}
	err := Run(o)
	var ue *query.UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), path+":2:1") || !strings.Contains(err.Error(), "cannot be predicted") || strings.Contains(err.Error(), "\n") {
		t.Errorf("uncertain --partitions: %v, want one line of bad usage naming line 2", err)
	}
	// A file that cannot be read is refused the way fabric check refuses it.
	o.Partitions = filepath.Join(t.TempDir(), "missing.conf")
	if err := Run(o); !errors.As(err, &ue) || !strings.HasPrefix(err.Error(), "partitions file: ") {
		t.Errorf("missing --partitions: %v, want fabric check's bad usage", err)
	}
}

// TestLIDShorthand: --lid is -L, as in every other command that reads nodes by LID
// (pkeys, devices, watch, fabric's address flags); the exporter's lacked it.
func TestLIDShorthand(t *testing.T) {
	c := NewCmdExporter(Deps{Out: io.Discard, ErrOut: io.Discard})
	if err := c.ParseFlags([]string{"-L", "1-40"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := c.Flags().GetString("lid"); got != "1-40" {
		t.Errorf("-L 1-40: --lid is %q", got)
	}
}
