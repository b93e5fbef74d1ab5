package watch

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/query"
	"github.com/ibkey/ibkey/internal/textsafe"
	"github.com/ibkey/ibkey/internal/tui"
)

// CountersOptions holds `ibkey watch counters`'s flags and dependencies.
type CountersOptions struct {
	// Deps.ColorOut: the screen may use colour.
	cmdutil.Deps
	Host func() *query.Host
	// Getenv reads the environment (the screen's terminal type).
	Getenv func(string) string
	// MAD holds the transport flags: the fabric's ports, or the local ports' PortInfo
	// counters.
	MAD *cmdutil.MADFlags
	Sampling

	Once bool
	All  bool
	// Addr holds --lid/--dr/--port; Fabric is set from them when the ports are read
	// over MADs instead of from sysfs.
	Addr   cmdutil.AddressFlags
	Fabric []query.FabricSelector
	// Verbs is the verbs source of the local ports' P_Key/Q_Key violation counters,
	// nil when verbs do not apply to the host (see query.LocalVerbs); replaced in tests.
	Verbs func(h *query.Host) *query.VerbsCounters

	// notWatched is what runCounters could not read at the start (devices, ports,
	// fabric addresses): every sample's incomplete names it.
	notWatched []cmdutil.Incomplete
	// ifcLabels say on which port each IPoIB interface named runs (after the host's).
	ifcLabels []string
}

// NewCmdCounters builds `ibkey watch counters`; runF, when not nil, runs instead of
// runCounters (tests of flag parsing).
func NewCmdCounters(f *cmdutil.Factory, runF func(*CountersOptions) error) *cobra.Command {
	o := &CountersOptions{Host: f.Host, Getenv: f.Getenv, Sampling: Sampling{Now: f.Now}, Verbs: query.LocalVerbs}
	c := &cobra.Command{
		Use:   "counters [DEV[/PORT]...]",
		Short: "Watch partition enforcement drops and P_Key/Q_Key violations",
		Long: `Sample each port's counters (of DEV or DEV/PORT, or of the port an IPoIB interface
such as ib0.8001 runs on) every --interval and show the value, the change in the
last interval and the rate. By default the partition counters: sysfs
port_rcv_constraint_errors and port_xmit_constraint_errors (packets dropped by
partition enforcement; 8-bit, they saturate at 255) and the P_Key/Q_Key violation
counters (16-bit). --all-counters adds every PortCounters error counter and PortInfo's
M_Key violations. Each counter names its source: sysfs, verbs, "smp portinfo" or
"pma portcounters".

The P_Key/Q_Key violation counters are not in sysfs. For local ports they are read
through verbs (ibv_query_port's bad_pkey_cntr and qkey_viol_cntr, from the system's
libibverbs loaded at run time): any user who may open /dev/infiniband/uverbsN, no
root, no MADs. On an Ethernet link layer ibv_query_port reports 0 for what the
driver does not count: rdma_rxe counts both, mlx5 only Q_Key violations and only on
a port with a GID table (not a representor, nor with RoCE disabled), iWARP neither;
those are n/a, never 0, and another driver's are n/a, not read. Where verbs cannot
read them (no libibverbs, the static build, a saved tree or the demo host) they come
from an SMP Get PortInfo when a MAD transport is chosen (--ca DEV, which needs root
or the rdma group, or --ibsim; the SMP goes to the local port, directed route 0 or
its LID, checked by NodeGUID), else they show as n/a with the reasons, never as 0;
on a RoCE port only verbs read them. M_Key violations are PortInfo's only. A RoCE port (--ca
on an Ethernet link layer) has no QP0 and answers no SMPs: ibkey says so and watches
with verbs and sysfs; so it does on an InfiniBand --ca port whose umad device cannot be
opened (no root or rdma group), M_Key violations then n/a with umad's error.

Over the fabric: --lid LIDS (a LID, a list or a range) or --dr PATH watches those
ports instead, with --port P or all as in 'ibkey pkeys' (a port several addresses
name is listed once): state and violation counters from one PortInfo Get, the error
counters from one PMA PortCounters Get per port per sample. PMA MADs are LID-routed:
a port reached by --dr without a LID (before a subnet manager ran) shows them as n/a,
not read. A switch's PMA answers for each of its ports, DOWN ones too; a CA's only
for the port a MAD arrives on, so a DOWN CA port's PortCounters are n/a over the
fabric, with that reason, and not a gap (its host's sysfs reads them). A port that
does not answer is reported on its row (NOREPLY) and sampling goes on; an address
that does not answer at the start is named (not read), the others are watched, and
the exit is 4 as for 'ibkey pkeys' (3 when none answers). The transport stays open for the whole watch.

A counter at its maximum is flagged saturated: later counts are lost, so deltas are
lower bounds or unknown. A counter that goes down was reset (by perfquery -R or a
driver restart); the delta restarts from the new value, a lower bound (what was
counted before the reset is lost), and the reset is reported. A
port that goes away or a file that cannot be read is reported on its row and the
watch goes on. ibkey never resets hardware counters.

On a terminal (stdin and stdout; not TERM=dumb) a live screen: one row per port,
rows that moved in the last interval highlighted, a trend per counter; keys: p
pause, + / - interval, s sort by activity, a all error counters, b reset the
on-screen baseline, / filter, enter one port (every counter, its history and its
P_Key table, read as 'ibkey pkeys' reads it: from sysfs, or over MADs for
--lid/--dr), ? help, q quit (then what was not read is named on stderr and the exit
is as below). ctrl+z or a SIGTSTP gives the terminal back and stops the screen; fg
resumes it.

Otherwise (a pipe, TERM=dumb, --once, --count N, -o plain/json) one line per port
per sample:
  TIME DEV/PORT STATE NAME=VALUE(+DELTA,RATE/s[,saturated][,reset][,SOURCE]) ...
(on a terminal, --once, --count and TERM=dumb, which cannot redraw a screen, print
each sample's time and a table of the same fields, a row a counter, that fits the
terminal as every table does; SOURCE is
named for counters read through verbs, or by another source than the counter's
usual one because the preferred one could not read it), or with -o json
one object per sample per line (schemas/watch-counters.schema.json):
  {"schema_version","sampled_at","interval_s","demo"?,"via"?,"ports":[{"device","port",
  "node_desc"?,"node_guid"?,"address"?,"state","error"?,"counters":{NAME:
  {"value","delta","rate","source" (sysfs, verbs, "smp portinfo", "pma portcounters"),"saturated"?,"reset"?,"error"?,"unavailable"?}}}],
  "incomplete"?:[{"kind","message"}]}
A port read over the fabric (--lid, --dr) also has "node_desc" and "node_guid", its
node's NodeDescription and NodeGUID; a local port has neither (device names it).
"value" is null when the counter could not be read ("error") or is not available
("unavailable"); "delta" and "rate" are null on the first sample, on a port's first
after it was not read (GONE, NOREPLY: it may come back reset, and a delta from
before would be too small), on a verbs counter's first after its device was lost
and opened again (the same) and while a counter stays saturated. A watch may run until interrupted, so each sample says
in-band what of it was not read, as 'ibkey pkeys' does ("incomplete", absent when
everything asked for was read or does not exist): the devices and fabric addresses
not watched (unread-device, unread-node), a port that went away or did not answer
this time (the same kinds), and the counters not read (unread-counter: a read error,
or n/a for a counter the port has). --once reads one sample, without deltas. A
counter that could not be read, or a port (GONE, NOREPLY), is named once on stderr,
and the exit is 4 (after --once, --count or an interrupt). So is a counter the port
has that the sources used cannot read (n/a: sysfs has no PortInfo counters, those a
RoCE port's driver counts need verbs, PortCounters need a LID): one warning at the
end names them and what reads them. n/a for a counter the port does not have (a RoCE
port's M_Key violations, a key's violations its driver does not count on Ethernet, a
device without PMA counters) or that nothing can reach (a DOWN CA port's
PortCounters over the fabric) is the whole answer: exit 0.`,
		Example: `  ibkey watch counters
  ibkey --demo watch counters
  ibkey watch counters mlx5_0/1 --interval 5s --all-counters
  ibkey watch counters --count 10 -o json | jq -c '.ports[].counters'
  ibkey watch counters --once
  ibkey watch counters --ca mlx5_0
  ibkey watch counters --lid 4,9 --count 3 -o json
  ibkey watch counters --ibsim --dr 0,1 --port all --all-counters`,
		Args:              cobra.ArbitraryArgs,
		ValidArgsFunction: completePortArgs(f),
		// The screen needs a terminal: -o table on a pipe is refused, not ignored.
		Annotations: map[string]string{cmdutil.AnnotationTableNeedsTerminal: "yes"},
		RunE: cmdutil.RunE(f, o, &o.Deps, func(c *cobra.Command, args []string) error {
			fab, err := o.Addr.Selectors(args)
			if err != nil {
				return err
			}
			o.Fabric = fab
			if err := o.check(c, args); err != nil {
				return err
			}
			if o.Once && c.Flags().Changed("count") && o.Count != 1 {
				return cmdutil.Usagef("--once takes one sample: it cannot be combined with --count")
			}
			return nil
		}, runF, runCounters),
	}
	o.bind(c)
	o.MAD = cmdutil.AddMADFlags(c, f)
	o.MAD.NoMADs = func() string {
		if o.Addr.Set() || o.MAD.Explicit() {
			return ""
		}
		return "'ibkey watch counters' sends them only to read --lid or --dr, or the local ports' PortInfo counters through --ca or --ibsim (give one, or leave out the MAD flags to read sysfs and verbs)"
	}
	o.Addr.Register(c)
	c.Flags().BoolVar(&o.Once, "once", false, "read one sample (values, no deltas) and exit")
	c.Flags().BoolVar(&o.All, "all-counters", false, "every PortCounters error counter, not only the partition counters")
	return c
}

func runCounters(o *CountersOptions) error {
	if o.Fabric != nil {
		// Over the fabric: the transport stays open for the whole watch and is closed
		// however it ends (ibsim has 10 client slots).
		return o.MAD.With(o.Ctx, func(ctx context.Context, fab *query.Fabric) error {
			views, lerr := fab.LoadMany(ctx, o.Fabric, query.LoadOptions{})
			if len(views) == 0 {
				return lerr
			}
			// Addresses not read (a *query.PartialError: no answer, or the port asked
			// for is not on that node) are named now, one line each, and the watch of
			// the others ends with exit 4, as the host's ports not read do and as
			// 'ibkey pkeys --lid' does after its output.
			inc, after, err := cmdutil.HostNotRead(o.Notices, nil, lerr)
			if err != nil {
				o.Notices.Warn(err.Error() + "; watching the others")
				inc = append(inc, cmdutil.Incomplete{Kind: cmdutil.IncompleteUnreadNode, Message: err.Error()})
				after = cmdutil.Exit(cmdutil.ExitCode(err))
			}
			o.notWatched = inc
			sampler, err := query.NewFabricSampler(ctx, fab, views, o.Now)
			if err != nil {
				return err
			}
			return cmp.Or(watchCounters(ctx, o, sampler, watched{label: cmdutil.FabricLabel(o.Fabric, fab.Via), via: fab.Via,
				nodes: fabricNodes(views), load: fabricTables(ctx, fab, views)}), after)
		})
	}
	host := o.Host()
	var err error
	if o.ifcLabels, err = o.resolveInterfaces(host, o.Notices); err != nil {
		return err
	}
	sampler, err := query.NewSampler(host, o.Selectors, o.Now)
	// A device or port that cannot be read does not stop the watch of the others: it
	// is named, and the watch ends with exit 4.
	inc, partial, err := cmdutil.HostNotRead(o.Notices, nil, err)
	if err != nil {
		return err
	}
	o.notWatched = inc
	return cmp.Or(o.watchHost(host, sampler), partial)
}

// loadMany is host.LoadMany without its *query.PartialError, which runCounters has
// warned about already (NewSampler reads the same ports).
func (o *CountersOptions) loadMany(host *query.Host) ([]*query.PortView, error) {
	views, err := host.LoadMany(o.Selectors)
	if _, ok := errors.AsType[*query.PartialError](err); ok {
		err = nil
	}
	return views, err
}

// watchHost watches the local ports of sampler.
func (o *CountersOptions) watchHost(host *query.Host, sampler *query.Sampler) error {
	// Local ports: the P_Key/Q_Key violation counters come from verbs first (any user,
	// no MADs), and from SMPs (PortInfo) only for what verbs cannot read.
	var verbs *query.VerbsCounters
	if o.Verbs != nil {
		verbs = o.Verbs(host)
	}
	if verbs != nil {
		defer verbs.Close()
	}
	prefer := func() {
		if verbs != nil {
			sampler.PreferVerbs(verbs)
		}
	}
	why := o.noSMPs(host)
	switch {
	case !o.MAD.Explicit() || why != "":
		// No SMP is sent: every PortInfo counter is n/a, a RoCE or iWARP port's
		// because it has no PortInfo (not for want of fabric access), an InfiniBand
		// port's because SMPs need fabric access (query.NeedsFabricAccess, with the
		// MAD flags that give it).
		views, err := o.loadMany(host)
		if err != nil {
			return err
		}
		sampler.UsePortInfo(query.NewNoPortInfo(query.SourcePortInfo, query.NeedsFabricAccess(cmdutil.FabricAccessHow), host, views))
		if why != "" {
			// A RoCE port has no QP0: SMPs cannot read anything there. Say what the
			// port supports and watch with the sources that work.
			o.Notices.Note(why)
		}
	default:
		// A transport was chosen: the local ports' PortInfo violation counters, which
		// sysfs does not have, come from SMPs to the local port.
		opened := false
		err := o.MAD.With(o.Ctx, func(ctx context.Context, fab *query.Fabric) error {
			opened = true
			views, err := o.loadMany(host)
			if err != nil {
				return err
			}
			sampler.UsePortInfo(query.LocalPortInfo(ctx, fab, host, views))
			prefer()
			return watchCounters(ctx, o, sampler, localWatch(host, fab.Via))
		})
		var umadErr *query.EnvError
		if opened || verbs == nil || o.MAD.IbsimBase() != "" || !errors.As(err, &umadErr) {
			return err
		}
		// The umad device of an InfiniBand --ca port cannot be opened (no root or
		// rdma group, no device): the violation counters verbs reads need neither.
		// Say so, and watch with verbs and sysfs as on a RoCE port; only PortInfo's
		// own counters (M_Key violations) are n/a, with umad's reason, on the
		// InfiniBand ports.
		ca := o.caPort(host)
		if ca == nil {
			return err // no such --ca port: umad's error names it
		}
		views, err := o.loadMany(host)
		if err != nil {
			return err
		}
		o.Notices.Note(query.MADSupport(ca, errors.New(umadErr.Msg)))
		sampler.UsePortInfo(query.NewNoPortInfo(query.SourcePortInfo, "no PortInfo: umad unavailable: "+umadErr.Msg, host, views))
	}
	prefer()
	return watchCounters(o.Ctx, o, sampler, localWatch(host, ""))
}

// noSMPs says, when --ca names a local port that cannot send SMPs (a RoCE or iWARP
// port: no QP0), what that port supports instead (query.MADSupport); "" otherwise.
func (o *CountersOptions) noSMPs(host *query.Host) string {
	v := o.caPort(host)
	if v == nil {
		return "" // umad reports a missing --ca port itself
	}
	if ll := v.LinkLayer(); ll == "" || ll == "InfiniBand" {
		return ""
	}
	return query.MADSupport(v, fmt.Errorf("--ca %s: not an InfiniBand port", v.Ref()))
}

// caPort is the local port --ca and --ca-port name (port 1 by default, as umad
// takes it), nil without --ca, with --ibsim, or when there is no such port.
func (o *CountersOptions) caPort(host *query.Host) *query.PortView {
	if o.MAD.CA == "" || o.MAD.IbsimBase() != "" {
		return nil
	}
	views, err := host.Load(query.Selector{Device: o.MAD.CA, Port: cmp.Or(o.MAD.CAPort, 1), HasPort: true}, query.LoadOptions{})
	if err != nil || len(views) != 1 {
		return nil
	}
	return views[0]
}

// fabricNode is the node of ports read over the fabric: its NodeDescription and
// NodeGUID, as read when the ports were loaded.
type fabricNode struct {
	desc string
	guid check.GUID
}

// fabricNodes are the nodes of views read over the fabric, by the address each was
// read through (query.FabricPort.Address, which every sample of the port repeats):
// an address reaches one node, so every port read through it is that node's.
func fabricNodes(views []*query.PortView) map[string]fabricNode {
	nodes := map[string]fabricNode{}
	for _, v := range views {
		if v.Fabric != nil {
			nodes[v.Fabric.Address] = fabricNode{desc: v.Device.NodeDesc.Value, guid: v.Fabric.NodeGUID}
		}
	}
	return nodes
}

// watched is what a watch shows besides its samples.
type watched struct {
	// label names a host that is not this machine (the demo host, a fabric
	// address); via is the MAD transport, if any.
	label, via string
	// nodes are the nodes of ports read over the fabric (fabricNodes), nil for local
	// ports.
	nodes map[string]fabricNode
	// load reads one port's P_Key table for the screen's drill-down.
	load func(ref query.PortRef, address string) (*query.PortView, error)
}

// localWatch watches the ports of host: their P_Key tables are read where `ibkey
// pkeys` reads them, from the host's sysfs (the real one, --sysfs, the demo host).
func localWatch(host *query.Host, via string) watched {
	return watched{label: host.Label, via: via, load: func(ref query.PortRef, _ string) (*query.PortView, error) {
		views, err := host.Load(query.Selector{Device: ref.Device, Port: ref.Port, HasPort: true}, query.LoadOptions{Tables: true, Interfaces: true})
		if err != nil {
			return nil, err
		}
		if len(views) != 1 {
			return nil, fmt.Errorf("%s: %d ports read", ref, len(views))
		}
		return views[0], nil
	}}
}

// fabricTables reads a fabric port's P_Key table over MADs, as `ibkey pkeys --lid`
// (or --dr) does, through the transport the watch holds open: the port is found by
// the address it was read through and its number.
func fabricTables(ctx context.Context, fab *query.Fabric, views []*query.PortView) func(query.PortRef, string) (*query.PortView, error) {
	type at struct {
		address string
		port    int
	}
	sels := map[at]query.FabricSelector{}
	for _, v := range views {
		if v.Fabric != nil {
			sels[at{v.Fabric.Address, v.Port.Num}] = query.FabricSelector{Addr: v.Fabric.Addr, Port: v.Port.Num, HasPort: true}
		}
	}
	return func(ref query.PortRef, address string) (*query.PortView, error) {
		sel, ok := sels[at{address, ref.Port}]
		if !ok {
			return nil, fmt.Errorf("%s: not a port this watch read (address %q)", ref, address)
		}
		views, err := fab.Load(ctx, sel, query.LoadOptions{Tables: true})
		if err != nil {
			return nil, err
		}
		for _, v := range views {
			if v.Port.Num == ref.Port {
				return v, nil
			}
		}
		return nil, fmt.Errorf("%s: %s did not return port %d", ref, sel, ref.Port)
	}
}

// watchCounters runs the screen, or prints samples until ctx ends or --count is
// reached. Either way its samples go through one watchEnd, which decides the exit.
func watchCounters(ctx context.Context, o *CountersOptions, sampler *query.Sampler, w watched) error {
	n, f := o.Notices, o.Format
	how := "the notes above say why and what reads them"
	if w.via == "" && w.nodes == nil { // local ports, no MADs sent
		how += "; --lid LID with --ca or --ibsim reads a port over the fabric"
	}
	// A dumb terminal (TERM=dumb: Emacs' shell, some serial consoles) cannot move the
	// cursor, so it gets the lines, each sample a table, as --count draws them.
	screen := o.Getenv == nil || o.Getenv("TERM") != "dumb"
	if o.IO.InTTY && o.IO.OutTTY && screen && !o.Once && o.Count == 0 && f == cmdutil.FormatTable {
		// The screen owns the terminal: what its samples leave to say waits for its end
		// (the screen shows the same n/a and NOREPLY cells meanwhile), and then decides
		// the exit as the lines' does: quitting a watch that did not read a counter is
		// not an exit 0.
		held := &heldNotices{}
		end := newWatchEnd(held)
		err := tui.Run(ctx, tui.Options{Sampler: &screenSampler{s: sampler, end: end}, Interval: o.Interval, All: o.All,
			Label: w.label, Color: o.ColorOut, Getenv: o.Getenv, LoadPort: w.load}, o.IO.In, o.IO.Out)
		end.mu.Lock()
		defer end.mu.Unlock()
		for _, say := range *held {
			say(n)
		}
		var stop *query.InterruptedError
		return end.exit(n, how, err, errors.As(err, &stop))
	}
	for _, l := range append([]string{w.label}, o.ifcLabels...) {
		n.Label(l)
	}
	if f == cmdutil.FormatTable {
		// Lines on a terminal: its width, as every other command's table.
		o.IO.WrapOut()
	}
	count := o.Count
	if o.Once {
		count = 1
	}
	demo := w.label != "" && o.Fabric == nil && w.via == ""
	end := newWatchEnd(n)
	err := o.loop(ctx, count, func(int) error {
		sample := sampler.Take(o.All)
		snap := end.add(sample)
		if f == cmdutil.FormatJSON {
			// A stream ends (and exits) only when stopped: each sample says in-band
			// what of it was not read, by the rules that make the exit 4 below.
			doc := countersToJSON(snap, demo, w.via, w.nodes)
			doc.Incomplete = append(slices.Clip(o.notWatched), sampleNotRead(sample)...)
			return cmdutil.WriteJSONLine(o.IO.Out, doc)
		}
		if f == cmdutil.FormatTable {
			return countersTable(o.IO.Out, snap, o.Once)
		}
		_, err := io.WriteString(o.IO.Out, countersLines(snap, o.Once))
		return err
	})
	// A signal ends the loop with its cause: what was not read is still named below,
	// then the cause is returned (exit 128+signo, ahead of 4).
	return end.exit(n, how, err, err != nil && ctx.Err() != nil && errors.Is(err, context.Cause(ctx)))
}

// watchEnd is what a watch's samples leave for its end: why counters are n/a (noted
// once each), the counters and ports not read (warned once each) and the counters
// the ports have that were n/a. Its notices go to n as the samples come.
type watchEnd struct {
	mu                sync.Mutex // the screen takes samples in its own goroutines
	n                 notices
	tracker           *query.Tracker
	explained, failed map[string]bool
	unread            notRead
}

// notices are where a watch's notes and warnings go: cmdutil.Notices, or heldNotices
// while the screen owns the terminal.
type notices interface {
	Warn(string)
	Note(string)
}

func newWatchEnd(n notices) *watchEnd {
	return &watchEnd{n: n, tracker: query.NewTracker(), explained: map[string]bool{}, failed: map[string]bool{}}
}

// add accounts for one sample and returns what it means given the ones before.
func (e *watchEnd) add(s *query.Sample) *query.Snapshot {
	e.unread.add(s)
	snap := e.tracker.Add(s)
	explainUnavailable(e.n, snap, e.explained)
	warnFailed(e.n, snap, e.failed)
	return snap
}

// exit is the watch's exit once its loop or screen ended with err (stopped: by a
// signal, whose cause err is): exit 4 when something was not read, named on n (how:
// what reads the n/a counters), then the signal's 128+signo ahead of it.
func (e *watchEnd) exit(n *cmdutil.Notices, how string, err error, stopped bool) error {
	switch {
	case err != nil && !stopped:
		return err
	case len(e.failed) > 0:
		// Shown as error(...) (a counter) or GONE/NOREPLY (a port) in the lines: a
		// counter not read is not checked.
		return cmp.Or(err, cmdutil.Exit(cmdutil.ExitIncomplete))
	case len(e.unread.ports) > 0:
		// Shown as n/a: a listing with its reasons, but counters the watch was asked
		// for that the port has and the sources chosen could not read (sysfs has no
		// PortInfo counters). Rule 1: show what was read, name what was not, exit 4.
		// n/a because the port has no such counter (Reading.Absent) is not a gap.
		n.Warn(fmt.Sprintf("%s not read on %s (n/a: %s)", strings.Join(e.unread.names, ", "),
			textsafe.Plural(len(e.unread.ports), "port", "ports"), how))
		return cmp.Or(err, cmdutil.Exit(cmdutil.ExitIncomplete))
	}
	return err // nil, or the signal that stopped the watch
}

// screenSampler is the screen's sampler: each sample it takes also goes to the
// watch's end.
type screenSampler struct {
	s   *query.Sampler
	end *watchEnd
}

func (s *screenSampler) Take(all bool) *query.Sample {
	sample := s.s.Take(all)
	s.end.mu.Lock()
	defer s.end.mu.Unlock()
	s.end.add(sample)
	return sample
}

// heldNotices keeps a screen's notes and warnings, in order, for after it.
type heldNotices []func(notices)

func (h *heldNotices) Warn(msg string) { *h = append(*h, func(n notices) { n.Warn(msg) }) }
func (h *heldNotices) Note(msg string) { *h = append(*h, func(n notices) { n.Note(msg) }) }

// naNotRead: r is n/a for a counter the port has (Unavailable, not Absent), so it was
// not read; n/a because the port has no such counter is the whole answer.
func naNotRead(r query.Reading) bool { return r.Unavailable != "" && !r.Absent }

// notRead collects the counters a watch was asked for that a port has and that were
// not read (Unavailable, not Absent): which, in the order shown, and on which ports.
type notRead struct {
	names []string
	ports map[query.PortRef]bool
}

func (u *notRead) add(s *query.Sample) {
	for _, p := range s.Ports {
		for j, r := range p.Readings {
			if !naNotRead(r) {
				continue
			}
			if u.ports == nil {
				u.ports = map[query.PortRef]bool{}
			}
			u.ports[p.Ref] = true
			if name := s.Counters[j].Name; !slices.Contains(u.names, name) {
				u.names = append(u.names, name)
			}
		}
	}
}

// warnFailed warns once, on stderr, about each port (it went away, it did not answer)
// and each counter (a read error, a value that does not fit the counter) that could
// not be read: the sample shows GONE/NOREPLY or error(...), and the command exits 4.
func warnFailed(n notices, snap *query.Snapshot, done map[string]bool) {
	for _, p := range snap.Ports {
		if key := "port " + p.Ref.String() + " " + p.Err; p.Err != "" && !done[key] {
			done[key] = true
			n.Warn(portNotRead(p.Ref, p.Address, p.Err))
		}
		for _, c := range p.Counters {
			key := p.Ref.String() + " " + c.Name + " " + c.Err
			if c.Err == "" || done[key] {
				continue
			}
			done[key] = true
			n.Warn(fmt.Sprintf("%s: %s not read: %s", p.Ref, c.Name, c.Err))
		}
	}
}

// portNotRead says that a port of a sample was not read, and why: "not read: port
// mlx5_0/1: ..." (a local port), "not read: port HcaB/1 (lid 4): ..." (a fabric one).
func portNotRead(ref query.PortRef, address, why string) string {
	return "not read: port " + portName(ref, address) + ": " + why
}

// portName names a port in a message: mlx5_0/1 locally, HcaB/1 (lid 4) over the
// fabric, where the address says which node of that name.
func portName(ref query.PortRef, address string) string {
	if address != "" {
		return ref.String() + " (" + address + ")"
	}
	return ref.String()
}

// sampleNotRead is what of one sample was not read, for its JSON's incomplete: each
// port not read this time (it went away, it did not answer), each counter whose read
// failed, and a port's counters that it has and the sources used cannot read (n/a,
// not Absent: grouped by reason). They are what makes the watch exit 4 (warnFailed,
// notRead), so a sample with none is all read.
func sampleNotRead(s *query.Sample) []cmdutil.Incomplete {
	var out []cmdutil.Incomplete
	for _, p := range s.Ports {
		if p.Err != "" {
			kind := cmdutil.IncompleteUnreadDevice
			if p.Address != "" {
				kind = cmdutil.IncompleteUnreadNode
			}
			out = append(out, cmdutil.Incomplete{Kind: kind, Message: portNotRead(p.Ref, p.Address, p.Err)})
			continue
		}
		name := portName(p.Ref, p.Address)
		var whys []string
		na := map[string][]string{}
		for j, r := range p.Readings {
			counter := s.Counters[j].Name
			switch {
			case r.Err != "":
				out = append(out, cmdutil.Incomplete{Kind: cmdutil.IncompleteUnreadCounter, Message: name + ": " + counter + " not read: " + r.Err})
			case naNotRead(r):
				if na[r.Unavailable] == nil {
					whys = append(whys, r.Unavailable)
				}
				na[r.Unavailable] = append(na[r.Unavailable], counter)
			}
		}
		for _, why := range whys {
			out = append(out, cmdutil.Incomplete{Kind: cmdutil.IncompleteUnreadCounter,
				Message: name + ": " + strings.Join(na[why], ", ") + " not read (n/a: " + why + ")"})
		}
	}
	return out
}

// explainUnavailable notes once, on stderr, why a counter is n/a.
func explainUnavailable(n notices, snap *query.Snapshot, done map[string]bool) {
	for _, p := range snap.Ports {
		for _, c := range p.Counters {
			if c.Unavailable == "" || done[c.Name+c.Unavailable] {
				continue
			}
			done[c.Name+c.Unavailable] = true
			n.Note(fmt.Sprintf("%s: n/a: %s", c.Name, c.Unavailable))
		}
	}
}

// countersLines prints one line per port: TIME DEV/PORT STATE NAME=VALUE(+DELTA,RATE/s,...) ...
func countersLines(snap *query.Snapshot, once bool) string {
	var b strings.Builder
	t := snap.Time.Format(lineTime)
	for _, p := range snap.Ports {
		state, fields := countersFields(snap, p, once, cmdutil.PlainCell)
		b.WriteString(t + " " + p.Ref.String() + " " + state)
		for _, f := range fields {
			b.WriteString(" " + f)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// countersTable is a sample on a terminal (line mode: --once, --count, stdin not a
// terminal): its time, then its lines' fields as a table, a row a counter, which fits
// the terminal as every table does (cmdutil.Grid).
func countersTable(w io.Writer, snap *query.Snapshot, once bool) error {
	g := cmdutil.Grid{Header: []string{"PORT", "STATE", "COUNTER", "VALUE"}, Required: []string{"PORT", "COUNTER", "VALUE"}}
	for _, p := range snap.Ports {
		// Spaces stay in a table's cells, where the reasons wrap between words.
		state, fields := countersFields(snap, p, once, func(s string) string { return s })
		for i, f := range fields {
			name, value, _ := strings.Cut(f, "=")
			if i == 0 {
				g.Add(p.Ref.String(), state, name, value)
			} else {
				g.Add("", "", name, value)
			}
		}
	}
	if _, err := fmt.Fprintln(w, snap.Time.Format(lineTime)); err != nil {
		return err
	}
	return g.Render(w, cmdutil.FormatTable)
}

// countersFields are a port's state and the fields of its line: NAME=VALUE(+DELTA,
// RATE/s,...) for each counter, or error=WHY for a port that could not be read; cell
// makes a text one field (cmdutil.PlainCell) or leaves it.
func countersFields(snap *query.Snapshot, p query.PortDelta, once bool, cell func(string) string) (string, []string) {
	if p.Err != "" {
		return p.StateWord(), []string{"error=" + cell(p.Err)}
	}
	var fields []string
	for j, c := range p.Counters {
		var b strings.Builder
		b.WriteString(c.Name + "=")
		switch {
		case c.Unavailable != "":
			// The short reason; the whole one is noted once on stderr.
			why, _, _ := strings.Cut(c.Unavailable, " (")
			b.WriteString("n/a(" + cell(why) + ")")
			fields = append(fields, b.String())
			continue
		case c.Err != "":
			b.WriteString("error(" + cell(strings.ReplaceAll(c.Err, ",", ";")) + ")")
			fields = append(fields, b.String())
			continue
		}
		b.WriteString(strconv.FormatUint(c.Value, 10))
		var flags []string
		if c.HasDelta && !once {
			flags = append(flags, "+"+strconv.FormatUint(c.Delta, 10), strconv.FormatFloat(c.Rate, 'f', 2, 64)+"/s")
		}
		if c.Saturated {
			flags = append(flags, "saturated")
		}
		if c.Reset && !once {
			flags = append(flags, "reset")
		}
		if namedSource(snap.Counters[j], c) {
			flags = append(flags, cell(c.Source))
		}
		if len(flags) > 0 {
			b.WriteString("(" + strings.Join(flags, ",") + ")")
		}
		fields = append(fields, b.String())
	}
	return cell(p.StateWord()), fields
}

// namedSource: plain lines name a counter's source when it is verbs (the violation
// counters of local ports, read with ibv_query_port) or when the preferred source could
// not read the counter and another one answered; the counters read where they always
// were (sysfs locally, MADs over the fabric) keep their short form.
func namedSource(c query.Counter, d query.CounterDelta) bool {
	return d.Source == query.SourceVerbs || d.Source != c.Source.Name()
}

type counterJSON struct {
	Value       *uint64  `json:"value"`
	Delta       *uint64  `json:"delta"`
	Rate        *float64 `json:"rate"`
	Source      string   `json:"source"`
	Saturated   bool     `json:"saturated,omitempty"`
	Reset       bool     `json:"reset,omitempty"`
	Error       string   `json:"error,omitempty"`
	Unavailable string   `json:"unavailable,omitempty"`
}

type counterPortJSON struct {
	Device string `json:"device"`
	Port   int    `json:"port"`
	// NodeDesc and NodeGUID name the node of a port read over the fabric (absent
	// locally, where device names the port).
	NodeDesc *string                `json:"node_desc,omitempty"`
	NodeGUID string                 `json:"node_guid,omitempty"`
	Address  string                 `json:"address,omitempty"`
	State    string                 `json:"state,omitempty"`
	Error    string                 `json:"error,omitempty"`
	Counters map[string]counterJSON `json:"counters"`
}

type countersSampleJSON struct {
	Schema   cmdutil.SchemaVersion `json:"schema_version"`
	Time     string                `json:"sampled_at"`
	Interval *float64              `json:"interval_s"`
	Demo     bool                  `json:"demo,omitempty"`
	Via      string                `json:"via,omitempty"`
	Ports    []counterPortJSON     `json:"ports"`
	// Incomplete: what of this sample was not read (sampleNotRead), and the devices,
	// ports or addresses not watched at all; absent when every counter asked for was
	// read or does not exist.
	Incomplete []cmdutil.Incomplete `json:"incomplete,omitempty"`
}

func countersToJSON(snap *query.Snapshot, demo bool, via string, nodes map[string]fabricNode) countersSampleJSON {
	out := countersSampleJSON{Time: snap.Time.Format(time.RFC3339Nano), Demo: demo, Via: via, Ports: make([]counterPortJSON, len(snap.Ports))}
	if snap.Interval > 0 {
		out.Interval = new(snap.Interval.Seconds())
	}
	for i, p := range snap.Ports {
		pj := counterPortJSON{Device: p.Ref.Device, Port: p.Ref.Port, Address: p.Address, State: p.State, Error: p.Err, Counters: map[string]counterJSON{}}
		if n, ok := nodes[p.Address]; ok && p.Address != "" {
			pj.NodeDesc, pj.NodeGUID = new(n.desc), n.guid.String()
		}
		for _, c := range p.Counters {
			cj := counterJSON{Source: c.Source, Saturated: c.Saturated, Reset: c.Reset, Error: c.Err, Unavailable: c.Unavailable}
			if c.OK() {
				cj.Value = new(c.Value)
			}
			if c.HasDelta {
				cj.Delta, cj.Rate = new(c.Delta), new(c.Rate)
			}
			pj.Counters[c.Name] = cj
		}
		out.Ports[i] = pj
	}
	return out
}
