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
		"no connections":     {func(o *Options) { o.MaxConnections = 0 }, "invalid --web.max-connections 0 (accepted: 1 or more)"},
		"negative timeout":   {func(o *Options) { o.SweepTimeout = -time.Second }, "invalid --sweep-timeout"},
		"no listen":          {func(o *Options) { o.Listen = nil }, "--listen needs at least one address"},
		"bad port":           {func(o *Options) { o.Listen = []string{"x:70000"} }, `port "70000" is not 0-65535`},
		"opensm-conf, --lid": {func(o *Options) { o.LID, o.OpenSMConf = "3", "opensm.conf" }, "--opensm-conf says how to audit a whole sweep: it needs --sweep"},
		"allow-both alone":   {func(o *Options) { o.Sweep, o.AllowBoth = true, true }, "--allow-both applies to --partitions FILE"},
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
