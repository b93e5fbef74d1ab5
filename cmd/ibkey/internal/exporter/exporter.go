// Package exporter is the `ibkey exporter` command: Prometheus metrics of the local
// ports (host mode) or of a whole subnet (fabric mode), served over HTTP, written to a
// node_exporter textfile directory, or printed once.
package exporter

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/exporter-toolkit/web"
	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"

	"github.com/ibkey/ibkey/internal/exporter"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/fsread"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/partconf"
	"github.com/ibkey/ibkey/internal/query"
	"github.com/ibkey/ibkey/internal/textsafe"
)

// Deps are what the command needs from the program around it. Building the command
// touches none of them; they are called when it runs.
type Deps struct {
	Out    io.Writer
	ErrOut io.Writer
	// Host returns the host the global flags select (--sysfs, --demo).
	Host func() *query.Host
	// OpenFabric opens the MAD transport the global flags select (--ibsim, --ca); the
	// command closes it. nil: fabric mode and --portinfo are not available.
	OpenFabric func(ctx context.Context) (*query.Fabric, error)
	// Demo reports whether --demo selected the embedded demo host and fabric: the
	// metrics then say so (ibkey_demo_info).
	Demo func() bool
	// Verbs is the verbs source of the host's P_Key/Q_Key violation counters
	// (query.LocalVerbs: nil for a host that is not this kernel's /sys); nil: none.
	Verbs func(h *query.Host) *query.VerbsCounters
	// Ctx is cancelled to stop serving (main's signal context); nil: the command's
	// (cobra's ExecuteContext, context.Background when it was given none).
	Ctx context.Context
}

// Options are the command's flags and dependencies.
type Options struct {
	Deps

	Listen         []string
	WebConfig      string
	MaxConnections int
	Textfile       string
	Once           bool
	Interval       time.Duration

	TableInterval time.Duration
	PortInfo      bool

	Sweep         bool
	LID           string
	SweepInterval time.Duration
	SweepTimeout  time.Duration
	Partitions    string
	OpenSMConf    string
	AllowBoth     bool
	NoCounters    bool

	SMLog string // --sm-log (smlog.go)
}

// NewCmdExporter builds `ibkey exporter`.
func NewCmdExporter(deps Deps) *cobra.Command {
	o := &Options{Deps: deps}
	c := &cobra.Command{
		Use:   "exporter",
		Short: "Prometheus metrics: tables, IPoIB, partition drops, audit",
		Example: `  ibkey exporter                                   # host mode on 127.0.0.1:9893
  ibkey exporter --listen :9893 --web.config.file web.yml
  ibkey exporter --textfile /var/lib/node_exporter/textfile_collector
  ibkey exporter --once
  ibkey exporter --sweep --ibsim --partitions /etc/opensm/partitions.conf
  ibkey exporter --lid 1-40 --sweep-interval 30s`,
		Args: cmdutil.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			if o.Ctx == nil {
				o.Ctx = c.Context()
			}
			return Run(o)
		},
	}
	fl := c.Flags()
	fl.StringSliceVar(&o.Listen, "listen", []string{exporter.DefaultListen}, "serve /metrics on `ADDRS` (host:port, comma-separated or repeated; default loopback only)")
	fl.StringVar(&o.WebConfig, "web.config.file", "", "exporter-toolkit web configuration `FILE`: TLS and basic auth (docs/web-configuration.md in github.com/prometheus/exporter-toolkit)")
	fl.IntVar(&o.MaxConnections, "web.max-connections", exporter.DefaultMaxConnections, "keep at most `N` connections open: at the cap a new one closes the connection idle longest (lowered to what ulimit -n allows)")
	fl.StringVar(&o.Textfile, "textfile", "", "write DIR/"+exporter.TextfileName+" atomically every --interval (node_exporter's textfile collector) instead of serving HTTP (`DIR`)")
	fl.BoolVar(&o.Once, "once", false, "collect once and print the metrics to stdout (with --textfile: write the file once)")
	cmdutil.IntervalVar(c, &o.Interval, "interval", time.Minute, "with --textfile: time between writes")
	cmdutil.IntervalVar(c, &o.TableInterval, "table-interval", time.Minute, "host mode: read the P_Key tables and IPoIB interfaces again after this long (state and counters: every scrape)")
	fl.BoolVar(&o.PortInfo, "portinfo", false, "host mode: read over MADs the local ports' P_Key/Q_Key violation counters that verbs cannot read (SMP PortInfo through --ca, which needs umad access, or --ibsim)")
	fl.BoolVar(&o.Sweep, "sweep", false, "fabric mode: sweep the whole subnet every --sweep-interval (through --ca or --ibsim)")
	fl.StringVarP(&o.LID, "lid", "L", "", "fabric mode: read every port of the nodes at `LIDS` (3, 3,5,9, 3-40) every --sweep-interval")
	cmdutil.IntervalVar(c, &o.SweepInterval, "sweep-interval", time.Minute, "fabric mode: time between the starts of two sweeps; scrapes answer from the last finished one")
	fl.DurationVar(&o.SweepTimeout, "sweep-timeout", 0, "fabric mode: give up a sweep after this long (default: --sweep-interval)")
	fl.StringVar(&o.Partitions, "partitions", "", "fabric mode (--sweep): also compare the tables with what OpenSM programs from this partitions.conf (`FILE`)")
	fl.StringVar(&o.OpenSMConf, "opensm-conf", "", "fabric mode (--sweep): audit as 'ibkey fabric check --opensm-conf' does, with OpenSM's options from its opensm.conf (`FILE`): part_enforce, allow_both_pkeys and keep_pkey_indexes replace --allow-both and the defaults, partition_config_file is the default --partitions")
	fl.BoolVar(&o.AllowBoth, "allow-both", false, "with --partitions: OpenSM runs with -W (allow_both_pkeys)")
	fl.BoolVar(&o.NoCounters, "no-counters", false, "fabric mode: do not read PMA PortCounters (tables and PortInfo only)")
	addSMLogFlag(c, o)
	// The long help lists every metric: built when help is shown, not at every start.
	c.SetHelpFunc(func(c *cobra.Command, args []string) {
		if c.Long == "" {
			c.Long = longHelp()
		}
		c.Parent().HelpFunc()(c, args)
	})
	// A daemon: stopped by a signal once it serves, it has done its job and exits 0,
	// as Prometheus does (cmd/prometheus/main.go: the termination handler returns nil,
	// "See you next time!"); systemd counts an exit status of 143 a failure unless
	// SuccessExitStatus= lists it (systemd.service(5)), a death by SIGTERM clean.
	cmdutil.SetExits(c,
		cmdutil.ExitMeaning{Code: cmdutil.ExitOK, Meaning: "--once: every metric read; serving: stopped by a signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT) once it serves, cleanly, as Prometheus does (systemd counts an exit status of 143 a failure)"},
		cmdutil.ExitMeaning{Code: cmdutil.ExitUsage, Meaning: "bad usage, or a file given (--partitions, --opensm-conf, --web.config.file) that cannot be read or parsed"},
		cmdutil.ExitMeaning{Code: cmdutil.ExitEnv, Meaning: "no RDMA devices or sysfs, no fabric access, an address it cannot listen on, a --textfile directory or --sm-log it cannot use"},
		cmdutil.ExitMeaning{Code: cmdutil.ExitIncomplete, Meaning: "--once: something was not read (listed on stderr; the metrics say which); or a failure ibkey did not foresee"},
		cmdutil.ExitMeaning{Code: cmdutil.ExitSignal, Meaning: "ended by signal N before it serves (or during --once)"},
	)
	c.MarkFlagsMutuallyExclusive("sweep", "lid")
	_ = c.MarkFlagFilename("partitions")
	_ = c.MarkFlagFilename("opensm-conf")
	_ = c.MarkFlagFilename("web.config.file", "yml", "yaml")
	_ = c.MarkFlagDirname("textfile")
	return c
}

func (o *Options) fabricMode() bool { return o.Sweep || o.LID != "" }

func (o *Options) validate() error {
	bad := func(format string, args ...any) error { return &query.UsageError{Msg: fmt.Sprintf(format, args...)} }
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"--interval", o.Interval}, {"--table-interval", o.TableInterval}, {"--sweep-interval", o.SweepInterval}} {
		if d.v <= 0 {
			return bad("invalid %s %v (accepted: a positive duration, e.g. 30s)", d.name, d.v)
		}
	}
	if o.MaxConnections < 1 {
		return bad("invalid --web.max-connections %d (accepted: 1 or more)", o.MaxConnections)
	}
	if o.SweepTimeout < 0 {
		return bad("invalid --sweep-timeout %v (accepted: a positive duration, e.g. 30s)", o.SweepTimeout)
	}
	if o.Partitions != "" && !o.Sweep {
		return bad("--partitions compares a whole sweep with the file: it needs --sweep")
	}
	if o.OpenSMConf != "" && !o.Sweep {
		return bad("--opensm-conf says how to audit a whole sweep: it needs --sweep")
	}
	if o.AllowBoth && o.Partitions == "" && o.OpenSMConf == "" {
		return bad("--allow-both applies to --partitions FILE")
	}
	if !o.fabricMode() {
		// Host mode reads its counters from sysfs and verbs, and sweeps nothing: a
		// fabric flag there would be silently ignored.
		switch {
		case o.NoCounters:
			return bad("--no-counters is for fabric mode (--sweep, --lid): host mode reads its counters from sysfs")
		case o.SweepTimeout > 0:
			return bad("--sweep-timeout is for fabric mode (--sweep, --lid)")
		}
	}
	if o.PortInfo && o.fabricMode() {
		return bad("--portinfo is for host mode; fabric mode reads PortInfo anyway")
	}
	if len(o.Listen) == 0 {
		return bad("--listen needs at least one address (accepted: host:port, e.g. 127.0.0.1:9893)")
	}
	for _, a := range o.Listen {
		if err := checkListen(a); err != nil {
			return bad("invalid --listen %q: %v (accepted: host:port, e.g. 127.0.0.1:9893 or :9893)", a, err)
		}
	}
	if o.LID != "" {
		if _, err := cmdutil.ParseLIDFlag(o.LID); err != nil {
			return err
		}
	}
	return nil
}

// checkListen checks that a --listen address ends in :PORT (net.Listen says what is
// wrong with the host).
func checkListen(a string) error {
	i := strings.LastIndex(a, ":")
	if i < 0 {
		return errors.New("no port")
	}
	if p, err := strconv.Atoi(a[i+1:]); err != nil || p < 0 || p > 65535 {
		return fmt.Errorf("port %q is not 0-65535", a[i+1:])
	}
	return nil
}

// Run runs the exporter until its context ends (or once).
func Run(o *Options) error {
	ctx := o.Ctx
	logger := slog.New(slog.NewTextHandler(o.ErrOut, &slog.HandlerOptions{Level: slog.LevelInfo}))
	if o.WebConfig != "" {
		// Its TLS files and users checked before serving; with --once or --textfile
		// too, where no server runs: the flags of a deployment are checked by adding
		// --once (contrib/kubernetes), and a file that does not work then says so. exporter-toolkit reads it
		// by path, again for every request and TLS handshake so that it can change
		// while serving, whole with os.ReadFile, which /dev/zero takes all memory
		// from and a FIFO blocks: through the bounded reader first.
		if _, err := fsread.ReadFile(o.WebConfig, maxWebConfig, "a web configuration file"); err != nil {
			return &query.UsageError{Msg: fmt.Sprintf("--web.config.file: %v", err)}
		}
		if err := web.Validate(o.WebConfig); err != nil {
			return &query.UsageError{Msg: fmt.Sprintf("--web.config.file %s: %v (accepted: an exporter-toolkit web configuration, docs/web-configuration.md in github.com/prometheus/exporter-toolkit)", o.WebConfig, oneLine(err))}
		}
	}
	if o.fabricMode() {
		return runFabric(ctx, o, logger)
	}
	return runHost(ctx, o, logger)
}

func runHost(ctx context.Context, o *Options, logger *slog.Logger) error {
	h := o.Host()
	hopts := exporter.HostOptions{Host: h, TableMaxAge: o.TableInterval}
	// A device that cannot be read is left out and named (ibkey_device_unreadable).
	if _, err := h.Devices(""); err != nil {
		var pe *query.PartialError
		switch {
		case errors.As(err, &pe):
		case o.Once:
			return err
		default:
			logger.Warn("no RDMA devices yet; serving ibkey_host_up 0 until there are", "err", err)
		}
	}
	// The violation counters sysfs does not have: through verbs (any user who may open
	// /dev/infiniband/uverbsN), as watch counters reads them, and with --portinfo from
	// SMPs for what verbs cannot read.
	var verbs *query.VerbsCounters
	if o.Verbs != nil {
		verbs = o.Verbs(h)
	}
	if verbs != nil {
		defer verbs.Close()
		hopts.Violations = verbs
	}
	if o.PortInfo {
		if o.OpenFabric == nil {
			return &query.UsageError{Msg: "--portinfo needs a MAD transport, which this build of the command was not given"}
		}
		fab, err := o.OpenFabric(ctx)
		if err != nil {
			return err
		}
		defer fab.T.Close()
		views, err := h.Load(query.Selector{}, query.LoadOptions{})
		var pe *query.PartialError
		if err != nil && !errors.As(err, &pe) {
			return err
		}
		hopts.Violations = query.LocalPortInfo(ctx, fab, h, views)
		if verbs != nil {
			hopts.Violations = query.Preferred{First: verbs, Then: hopts.Violations}
		}
	}
	c := exporter.NewHostCollector(hopts)
	mfs, err := output(ctx, o, logger, c, nil)
	if err != nil || !o.Once {
		return err
	}
	// What was not read (a device, port, table, entry or interface), as every host
	// command names it.
	var lines []string
	for _, l := range (&query.PartialError{Unread: c.NotRead()}).Lines() {
		lines = append(lines, "not read: "+l)
	}
	return onceNotRead(o, mfs, lines)
}

func runFabric(ctx context.Context, o *Options, logger *slog.Logger) error {
	if o.OpenFabric == nil {
		return &query.UsageError{Msg: "fabric mode needs a MAD transport, which this build of the command was not given"}
	}
	fopts := exporter.FabricOptions{Interval: o.SweepInterval, Timeout: o.SweepTimeout, AllowBoth: o.AllowBoth, NoCounters: o.NoCounters,
		Logf: func(format string, args ...any) { logger.Warn(fmt.Sprintf(format, args...)) }}
	if o.OpenSMConf != "" {
		osm, src, err := query.ReadOpenSMConf(o.OpenSMConf, &o.Partitions)
		if err != nil {
			return err
		}
		if src == query.ConfEmpty {
			fopts.Partitions = partconf.NoFile()
		}
		for _, w := range osm.Warnings {
			logger.Warn(w)
		}
		switch note := src.AuditNote(o.OpenSMConf, osm); {
		case src.NotCompared():
			// Every scrape then lacks the comparison the conf asks for (fabric
			// check exits 4): a warning, not news.
			logger.Warn(note)
		case note != "":
			logger.Info(note)
		}
		fopts.OpenSM = osm
	}
	if o.Partitions != "" {
		// Read as `fabric check --partitions` reads it (a named pipe too; not -: a
		// service has no standard input to give).
		data, name, err := query.ReadPartitionsText(o.Partitions, nil)
		if err != nil {
			return err
		}
		c := partconf.Parse(name, data)
		// fabric check exits 4 for such a file; a service would export the comparison
		// for weeks as if it knew what OpenSM programs: refuse it at start.
		if u := cmdutil.UncertainIncomplete(c); u != nil {
			return &query.UsageError{Msg: fmt.Sprintf("--partitions %s; the comparison would be a guess: fix the file or leave out --partitions", u.Message)}
		}
		fopts.Partitions = c
	}
	if o.LID != "" {
		lids, _ := cmdutil.ParseLIDFlag(o.LID)
		for _, l := range lids {
			fopts.Selectors = append(fopts.Selectors, query.FabricSelector{Addr: mad.LIDAddress(l), AllPorts: true})
		}
	}
	fab, err := o.OpenFabric(ctx)
	if err != nil {
		return err
	}
	fopts.Fabric = fab
	if o.Once {
		defer fab.T.Close()
	} else {
		fopts.Reopen = o.OpenFabric // the collector owns the transports
	}
	c := exporter.NewFabricCollector(fopts)
	defer c.Close()
	if o.Once {
		// A sweep that stopped early reached the fabric (not exit 3): it is not
		// served, as in a daemon, and what is printed says so (sweeps_total{result=
		// "partial"}, last_sweep_failure); exit 4, as fabric pkeys on such a sweep.
		var lines []string
		if err := c.Sweep(ctx); errors.Is(err, exporter.ErrPartial) {
			lines = append(lines, fmt.Sprintf("fabric via %s: %v: nothing of it is printed (the exporter serves only finished sweeps)", fab.Via, err))
		} else if err != nil {
			return &query.EnvError{Msg: fmt.Sprintf("fabric via %s: %v", fab.Via, err)}
		}
		mfs, err := output(ctx, o, logger, c, nil)
		if err != nil {
			return err
		}
		// A sweep with gaps, as fabric check says it.
		if gaps := fabric.NotCheckedSummary(c.NotRead()); gaps != "" {
			lines = append(lines, "partial sweep: "+gaps)
		}
		return onceNotRead(o, mfs, lines)
	}
	_, err = output(ctx, o, logger, c, c.Run)
	return err
}

// onceNotRead ends --once: lines (what the read or sweep did not read), then the
// counters the metrics printed say were not read, each on stderr; exit 4 when there
// is any.
func onceNotRead(o *Options, mfs []*dto.MetricFamily, lines []string) error {
	lines = append(lines, countersNotRead(mfs)...)
	for _, l := range lines {
		fmt.Fprintf(o.ErrOut, "ibkey: %s\n", l)
	}
	if len(lines) > 0 {
		return cmdutil.Exit(cmdutil.ExitIncomplete)
	}
	return nil
}

// countersNotRead says which counters the metrics printed name as not read
// (ibkey_port_unreadable, ibkey_fabric_port_unreadable: their value series absent),
// one line per reason, as watch counters says it: "pkey_violations, qkey_violations
// not read on 3 ports: not in sysfs: ...". A counter a port has not by nature
// (_unavailable) is not among them.
func countersNotRead(mfs []*dto.MetricFamily) []string {
	var whys []string
	counters, ports := map[string][]string{}, map[string]map[string]bool{}
	for _, mf := range mfs {
		if n := mf.GetName(); n != "ibkey_port_unreadable" && n != "ibkey_fabric_port_unreadable" {
			continue
		}
		for _, m := range mf.GetMetric() {
			var counter, why, port string
			for _, l := range m.GetLabel() {
				switch l.GetName() {
				case "counter":
					counter = l.GetValue()
				case "reason":
					why = l.GetValue()
				case "device", "node_guid", "port":
					port += l.GetValue() + "/"
				}
			}
			if ports[why] == nil {
				whys = append(whys, why)
				ports[why] = map[string]bool{}
			}
			if !slices.Contains(counters[why], counter) {
				counters[why] = append(counters[why], counter)
			}
			ports[why][port] = true
		}
	}
	out := make([]string, len(whys))
	for i, why := range whys {
		out[i] = fmt.Sprintf("%s not read on %s: %s", strings.Join(counters[why], ", "), textsafe.Plural(len(ports[why]), "port", "ports"), why)
	}
	return out
}

// output serves, writes or prints the collector's metrics. background, when set, runs
// beside it until ctx ends (the fabric sweeps). With --once it returns the families
// it wrote, for the command to say what they name as not read.
func output(ctx context.Context, o *Options, logger *slog.Logger, c prometheus.Collector, background func(context.Context)) ([]*dto.MetricFamily, error) {
	collectors := []prometheus.Collector{c}
	if o.Demo != nil && o.Demo() {
		collectors = append(collectors, exporter.DemoCollector())
	}
	runs := []func(context.Context){background}
	if o.SMLog != "" {
		smc, run, err := o.smLogCollector(ctx, logger)
		if err != nil {
			return nil, err
		}
		collectors, runs = append(collectors, smc), append(runs, run)
	}
	reg, err := exporter.NewRegistry(collectors...)
	if err != nil {
		return nil, err
	}
	once := &gathered{Gatherer: reg}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for _, run := range runs {
		if run != nil {
			wg.Go(func() { run(ctx) })
		}
	}
	defer func() { cancel(); wg.Wait() }()
	switch {
	case o.Textfile != "":
		if o.Once {
			return once.mfs, writeTextfiles(ctx, o, logger, once)
		}
		return nil, writeTextfiles(ctx, o, logger, reg)
	case o.Once:
		// One buffer for the whole exposition (8.4 MB at 2,000 nodes): handed a plain
		// writer, expfmt's MetricFamilyToText wraps it in a 4 KB bufio.Writer of its
		// own and flushes it after every family, 2,100 writes; a *bufio.Writer it
		// writes into directly (its enhancedWriter), 130 writes of 64 KB.
		w := bufio.NewWriterSize(o.Out, 64<<10)
		if err := exporter.WriteText(w, once); err != nil {
			return nil, err
		}
		return once.mfs, w.Flush()
	}
	h, err := exporter.Handler(reg, logger)
	if err != nil {
		return nil, err
	}
	sopts := exporter.ServeOptions{WebConfig: o.WebConfig, MaxConnections: o.MaxConnections, Logger: logger}
	if err := exporter.Serve(ctx, o.Listen, h, sopts); err != nil {
		return nil, &query.EnvError{Msg: fmt.Sprintf("serving on %s: %v", strings.Join(o.Listen, ","), err)}
	}
	return nil, nil
}

// gathered keeps the families of its last Gather: what --once wrote.
type gathered struct {
	prometheus.Gatherer
	mfs []*dto.MetricFamily
}

func (g *gathered) Gather() ([]*dto.MetricFamily, error) {
	mfs, err := g.Gatherer.Gather()
	g.mfs = mfs
	return mfs, err
}

// maxWebConfig bounds --web.config.file: users, TLS settings and an inline certificate
// chain fit in far less.
const maxWebConfig = 1 << 20

// oneLine joins the lines of an error (a YAML error lists one per problem).
func oneLine(err error) string {
	s := strings.ReplaceAll(strings.ReplaceAll(err.Error(), ":\n", ": "), "\n", "; ")
	return strings.Join(strings.Fields(s), " ")
}

// writeTextfiles writes the textfile every --interval until ctx ends (once with
// --once). The first write failing is an environment error (exit 3: the directory is
// wrong); a later one is logged and retried with backoff, from a second doubling up to
// a minute, while the old file stays (node_exporter's node_textfile_mtime_seconds
// shows its age); the first write that works goes back to --interval.
func writeTextfiles(ctx context.Context, o *Options, logger *slog.Logger, reg prometheus.Gatherer) error {
	if err := exporter.WriteTextfile(o.Textfile, reg); err != nil {
		return &query.EnvError{Msg: fmt.Sprintf("--textfile: %v", err)}
	}
	if o.Once {
		return nil
	}
	wait, failures := o.Interval, 0
	for {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		if err := exporter.WriteTextfile(o.Textfile, reg); err != nil {
			failures++
			wait = min(time.Second<<min(failures-1, 6), time.Minute)
			logger.Warn("writing the textfile failed; the old one stays", "dir", o.Textfile, "err", err, "failures", failures, "retry_in", wait)
			continue
		}
		if failures > 0 {
			logger.Info("textfile written again", "dir", o.Textfile, "after_failures", failures)
		}
		wait, failures = o.Interval, 0
	}
}

func longHelp() string {
	var b strings.Builder
	b.WriteString(`Export ibkey's partition view to Prometheus, through prometheus/client_golang.

Host mode (default) exports the local ports from sysfs: every valid P_Key table entry,
table size and valid count, IPoIB interfaces with the membership they really run with
(the table entry the kernel finds, not the pkey file) and whether their key is in the
table, port state, and the partition counters: PortRcv/XmitConstraintErrors as gauges
with a saturated flag (8-bit counters stop at 255: never read them as _total), and the
P_Key/Q_Key violation counters, which sysfs does not have: through verbs, as 'ibkey
watch counters' reads them (ibv_query_port, from the system's libibverbs: any user who
may open /dev/infiniband/uverbsN, no root, no MADs), and with --portinfo over MADs for
what verbs cannot read (the static build, a saved tree). A counter that cannot be read
is ibkey_port_unreadable{reason}, never 0; one the port does not have is
ibkey_port_unavailable (on Ethernet: iWARP has no keys, and mlx5 counts no P_Key
violations on RoCE; another RoCE driver's, not known to count, are unreadable). The
tables are read again every --table-interval (each pkey file read is a device query);
state and counters every scrape.

Fabric mode (--sweep or --lid, through --ca or --ibsim) sweeps on a schedule, never per
scrape: a scrape answers from the last finished sweep, its series built once, and says
its age. Every port's table and counters carry node_guid, node_name, port and lid
labels; P_Key and Q_Key violations come from the sweep's own PortInfo replies, the
constraint errors from PMA PortCounters (one batch per sweep); with --sweep the audit of
'ibkey fabric check' (and with --partitions FILE the partitions.conf comparison) is
ibkey_fabric_findings{rule,severity} and per port ibkey_fabric_port_findings;
--opensm-conf FILE gives it OpenSM's options as fabric check takes them. A sweep
that finished with gaps (what fabric check lists as not checked) is served but counted
ibkey_fabric_sweeps_total{result="gaps"}, never complete, and
ibkey_fabric_not_read{what} says what was not read. When
the MAD transport stops working (ibsim killed and restarted, its client slot dropped,
an HCA reset or driver reload) it is opened again with backoff (1s to 8s); meanwhile
ibkey_fabric_up is 0 and ibkey_fabric_last_sweep_failure says why.

Output: HTTP /metrics on --listen (default 127.0.0.1:9893; TLS and basic auth with
--web.config.file, the Prometheus exporter-toolkit format), or --textfile DIR (writes
DIR/ibkey.prom atomically for node_exporter's textfile collector; a failed write is
logged and retried), or --once (print to stdout and exit). Labels follow
node_exporter's infiniband collector (device, port). An address it cannot listen on,
or a first textfile write that fails, is exit 3; --once exits 4 when something was not
read (a device, port, table, entry or interface; a sweep with gaps, or one that
stopped early, which is not printed; a counter, as the _unreadable series say: in host
mode the violation counters neither verbs nor --portinfo read), which the series name.

With --sm-log FILE, in either mode, the partition and key events of OpenSM's log
(those 'ibkey sm log' explains) are counted by kind and partition key in
ibkey_sm_events_total: the log is read from its start, then followed as OpenSM
writes, across rotation (renamed and reopened, or truncated).

The server answers GET and HEAD (405 otherwise), runs 2 scrapes at a time (a scrape
waits up to 5s for a slot, then 503) and holds a slot only while it builds its answer;
it ends requests that send their headers or body too slowly, responses not read within
60s (or whose writes stall for 10s) and connections idle for 30s, and keeps at most --web.max-connections open (the
one idle longest is closed to let a new one in). Its errors (TLS handshakes, plain HTTP
to the TLS port) go to the log, at most 10 lines a minute.

Metrics:
`)
	for _, m := range exporter.Catalog() {
		labels := ""
		if len(m.Labels) > 0 {
			labels = "{" + strings.Join(m.Labels, ",") + "}"
		}
		mode := string(m.Mode)
		if mode == "" {
			mode = "both modes"
		}
		fmt.Fprintf(&b, "  %s%s (%s)\n      %s\n", m.Name, labels, mode, m.Help)
	}
	b.WriteString(`
Sample alert rules (drops rising, a saturated counter, an IPoIB interface without its
key, fabric findings, a stale sweep): contrib/prometheus/ibkey-rules.yml in the source,
with promtool tests beside it.
`)
	return b.String()
}
