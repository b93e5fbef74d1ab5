package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/query"
	"github.com/ibkey/ibkey/internal/tui"
)

// WatchOptions are the flags both watch commands share.
type WatchOptions struct {
	*Globals
	Selectors []query.Selector
	Interval  time.Duration
	Count     int
	// signals stops a non-terminal watch cleanly (SIGINT, SIGTERM); tests leave it nil.
	signals bool
}

// WatchCountersOptions holds `ibkey watch counters`'s flags and dependencies.
type WatchCountersOptions struct {
	WatchOptions
	Once bool
	All  bool
	// Addr holds --lid/--dr/--port; Fabric is set from them when the ports are read
	// over MADs instead of from sysfs.
	Addr   AddressFlags
	Fabric []query.FabricSelector
}

// WatchPKeysOptions holds `ibkey watch pkeys`'s flags and dependencies.
type WatchPKeysOptions struct {
	WatchOptions
}

func newWatchCmd(g *Globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "watch",
		Short: "Watch partition counters and P_Key tables change",
		Long: `Watch a host's partition counters (is traffic being dropped for P_Key reasons
right now?) or its P_Key tables (is the Subnet Manager reprogramming them?).`,
	}
	c.AddCommand(newWatchCountersCmd(g), newWatchPKeysCmd(g))
	return c
}

func (o *WatchOptions) bind(c *cobra.Command) {
	c.Flags().DurationVar(&o.Interval, "interval", time.Second, "time between samples (e.g. 500ms, 2s)")
	c.Flags().IntVar(&o.Count, "count", 0, "stop after `N` samples (0: until interrupted)")
}

// selectorsFromArgs reads DEV or DEV/PORT arguments.
func selectorsFromArgs(args []string) ([]query.Selector, error) {
	var out []query.Selector
	for _, a := range args {
		s, err := query.ParseSelector(a)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func (o *WatchOptions) check(args []string) error {
	sels, err := selectorsFromArgs(args)
	if err != nil {
		return err
	}
	o.Selectors = sels
	if o.Interval < 10*time.Millisecond {
		return &query.UsageError{Msg: fmt.Sprintf("invalid --interval %s (accepted: a duration of at least 10ms, e.g. 500ms, 1s, 1m)", o.Interval)}
	}
	if o.Count < 0 {
		return &query.UsageError{Msg: fmt.Sprintf("invalid --count %d (accepted: 0 for no limit, or a positive number of samples)", o.Count)}
	}
	return nil
}

func newWatchCountersCmd(g *Globals) *cobra.Command {
	o := &WatchCountersOptions{WatchOptions: WatchOptions{Globals: g, signals: true}}
	c := &cobra.Command{
		Use:   "counters [DEV[/PORT]...]",
		Short: "Watch partition enforcement drops and P_Key/Q_Key violations",
		Long: `Sample each port's counters every --interval and show the value, the change in the
last interval and the rate. By default the partition counters: sysfs
port_rcv_constraint_errors and port_xmit_constraint_errors (packets dropped by
partition enforcement; 8-bit, they saturate at 255) and the PortInfo P_Key/Q_Key
violation counters (16-bit). --all-counters adds every PortCounters error counter
and PortInfo's M_Key violations. Each counter names its source: sysfs,
"smp portinfo" or "pma portcounters".

The PortInfo counters are not in sysfs: they are read with an SMP Get PortInfo, when
a MAD transport is chosen (--ca DEV, which needs root or the rdma group, or --ibsim);
the SMP goes to the local port (directed route 0, or its LID), checked by NodeGUID.
Without a transport they show as n/a with that reason, never as 0.

Over the fabric: --lid LIDS (a LID, a list or a range) or --dr PATH watches those
ports instead, with --port P or all as in 'ibkey pkeys': state and violation counters
from one PortInfo Get, the error counters from one PMA PortCounters Get per port per
sample. PMA MADs are LID-routed: a port reached by --dr without a LID (before a
subnet manager ran) shows them as n/a. A port that does not answer is reported on its
row (NOREPLY) and sampling goes on. The transport stays open for the whole watch.

A counter at its maximum is flagged saturated: later counts are lost, so deltas are
lower bounds or unknown. A counter that goes down was reset (by perfquery -R or a
driver restart); the delta restarts from the new value and the reset is reported. A
port that goes away or a file that cannot be read is reported on its row and the
watch goes on. ibkey never resets hardware counters.

On a terminal (stdin and stdout) a live screen: one row per port, rows that moved in
the last interval highlighted, a trend per counter; keys: p pause, + / - interval,
s sort by activity, a all error counters, b reset the on-screen baseline, q quit.

Otherwise (a pipe, --once, --count N, -o plain/json) one line per port per sample:
  TIME DEV/PORT STATE NAME=VALUE(+DELTA,RATE/s[,saturated][,reset]) ...
or with -o json one object per sample per line:
  {"time","interval_s","via"?,"ports":[{"device","port","address"?,"state","error"?,"counters":{NAME:
  {"value","delta","rate","source","saturated"?,"reset"?,"error"?,"unavailable"?}}}]}
"value" is null when the counter could not be read ("error") or is not available
("unavailable"); "delta" and "rate" are null on the first sample and while a
counter stays saturated. --once reads one sample, without deltas.`,
		Example: `  ibkey watch counters
  ibkey --demo watch counters
  ibkey watch counters mlx5_0/1 --interval 5s --all-counters
  ibkey watch counters --count 10 -o json | jq -c '.ports[].counters'
  ibkey watch counters --once
  ibkey watch counters --ca mlx5_0
  ibkey watch counters --lid 4,9 --count 3 -o json
  ibkey watch counters --ibsim --dr 0,1 --port all --all-counters`,
		Args:              usageArgs(cobra.ArbitraryArgs),
		ValidArgsFunction: completePortArgs(g),
		RunE: func(c *cobra.Command, args []string) error {
			fab, err := o.Addr.Selectors(args)
			if err != nil {
				return err
			}
			o.Fabric = fab
			if err := o.check(args); err != nil {
				return err
			}
			if o.Once && c.Flags().Changed("count") && o.Count != 1 {
				return &query.UsageError{Msg: "--once takes one sample: it cannot be combined with --count"}
			}
			return runWatchCounters(o)
		},
	}
	o.bind(c)
	o.Addr.register(c)
	c.Flags().BoolVar(&o.Once, "once", false, "read one sample (values, no deltas) and exit")
	c.Flags().BoolVar(&o.All, "all-counters", false, "every PortCounters error counter, not only the partition counters")
	return c
}

func newWatchPKeysCmd(g *Globals) *cobra.Command {
	o := &WatchPKeysOptions{WatchOptions: WatchOptions{Globals: g, signals: true}}
	c := &cobra.Command{
		Use:   "pkeys [DEV[/PORT]...]",
		Short: "Print P_Key table changes as they happen",
		Long: `Poll the P_Key tables every --interval and print one event per changed entry
(index, old value, new value, what changed), as a program sees IBV_EVENT_PKEY_CHANGE
when the Subnet Manager reprograms a table. Each pkeys/ file is read once per poll.
The first poll is the baseline and prints nothing on stdout.

Lines: TIME DEV/PORT index=I old=OLD new=NEW CHANGE: DESCRIPTION
(OLD and NEW are 0x%04x, "unreadable" or "absent"; CHANGE is added, removed,
membership, replaced, unreadable, readable, port_error or port_back).
JSON (-o json), one object per event per line: {"time","device","port","index",
"old","new","change","description"}; old/new are null when absent or unreadable.`,
		Example: `  ibkey watch pkeys
  ibkey watch pkeys mlx5_0/1 --interval 200ms
  ibkey watch pkeys -o json --count 60`,
		Args:              usageArgs(cobra.ArbitraryArgs),
		ValidArgsFunction: completePortArgs(g),
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.check(args); err != nil {
				return err
			}
			return runWatchPKeys(o)
		},
	}
	o.bind(c)
	return c
}

// loop calls step every interval (the first at once) until count steps ran, ctx ends
// or step fails.
func (o *WatchOptions) loop(ctx context.Context, count int, step func(i int) error) error {
	tick := time.NewTicker(o.Interval)
	defer tick.Stop()
	for i := 0; count == 0 || i < count; i++ {
		if i > 0 {
			select {
			case <-ctx.Done():
				return nil
			case <-tick.C:
			}
		}
		if err := step(i); err != nil {
			return err
		}
	}
	return nil
}

func (o *WatchOptions) context() (context.Context, context.CancelFunc) {
	if !o.signals {
		return context.WithCancel(context.Background())
	}
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

func runWatchCounters(o *WatchCountersOptions) error {
	f, err := o.Format()
	if err != nil {
		return err
	}
	if o.Fabric != nil {
		// Over the fabric: the transport stays open for the whole watch and is closed
		// however it ends (ibsim has 10 client slots).
		return o.WithFabric(func(ctx context.Context, fab *query.Fabric) error {
			views, lerr := fab.LoadMany(ctx, o.Fabric, query.LoadOptions{})
			if len(views) == 0 {
				return lerr
			}
			if lerr != nil {
				o.notices().warn(lerr.Error() + "; watching the others")
			}
			sampler, err := query.NewFabricSampler(ctx, fab, views, o.Now)
			if err != nil {
				return err
			}
			label := "fabric: " + o.Fabric[0].String()
			if len(o.Fabric) > 1 {
				label = fmt.Sprintf("fabric: %d LIDs (%s .. %s)", len(o.Fabric), o.Fabric[0].Addr, o.Fabric[len(o.Fabric)-1].Addr)
			}
			return watchCounters(ctx, o, f, sampler, label+" via "+fab.Via, fab.Via)
		})
	}
	host := o.Host()
	sampler, err := query.NewSampler(host, o.Selectors, o.Now)
	if err != nil {
		return err
	}
	if o.ibsimBase() != "" || o.Globals.Fabric.CA != "" {
		// A transport was chosen: the local ports' PortInfo violation counters, which
		// sysfs does not have, come from SMPs to the local port.
		return o.WithFabric(func(ctx context.Context, fab *query.Fabric) error {
			views, err := host.LoadMany(o.Selectors)
			if err != nil {
				return err
			}
			sampler.UsePortInfo(query.LocalPortInfo(ctx, fab, views))
			return watchCounters(ctx, o, f, sampler, host.Label, fab.Via)
		})
	}
	ctx, cancel := o.context()
	defer cancel()
	return watchCounters(ctx, o, f, sampler, host.Label, "")
}

// watchCounters runs the screen, or prints samples until ctx ends or --count is
// reached. label names a host that is not this machine (the demo host, a fabric
// address); via is the MAD transport, if any.
func watchCounters(ctx context.Context, o *WatchCountersOptions, f format, sampler *query.Sampler, label, via string) error {
	n := o.notices()
	if o.IO.InTTY && o.IO.OutTTY && !o.Once && o.Count == 0 && f == formatTable {
		return tui.Run(ctx, tui.Options{Sampler: sampler, Interval: o.Interval, All: o.All,
			Label: label, Color: !o.NoColor && o.Getenv("NO_COLOR") == ""}, o.IO.In, o.IO.Out)
	}
	n.label(label)
	count := o.Count
	if o.Once {
		count = 1
	}
	demo := label != "" && o.Fabric == nil && via == ""
	tracker := query.NewTracker()
	explained := map[string]bool{}
	return o.loop(ctx, count, func(int) error {
		snap := tracker.Add(sampler.Take(o.All))
		explainUnavailable(n, snap, explained)
		if f == formatJSON {
			return writeJSONLine(o.IO.Out, countersToJSON(snap, demo, via))
		}
		_, err := io.WriteString(o.IO.Out, countersLines(snap, o.Once))
		return err
	})
}

// explainUnavailable notes once, on stderr, why a counter is n/a.
func explainUnavailable(n *notices, snap *query.Snapshot, done map[string]bool) {
	for _, p := range snap.Ports {
		for _, c := range p.Counters {
			if c.Unavailable == "" || done[c.Name+c.Unavailable] {
				continue
			}
			done[c.Name+c.Unavailable] = true
			n.note(fmt.Sprintf("%s: n/a: %s", c.Name, c.Unavailable))
		}
	}
}

func writeJSONLine(w io.Writer, v any) error { return json.NewEncoder(w).Encode(v) }

const lineTime = "2006-01-02T15:04:05.000Z07:00"

// countersLines prints one line per port: TIME DEV/PORT STATE NAME=VALUE(+DELTA,RATE/s,...) ...
func countersLines(snap *query.Snapshot, once bool) string {
	var b strings.Builder
	t := snap.Time.Format(lineTime)
	for _, p := range snap.Ports {
		b.WriteString(t + " " + p.Ref.String() + " ")
		if p.Err != "" {
			b.WriteString(goneWord(p) + " error=" + plainCell(p.Err) + "\n")
			continue
		}
		b.WriteString(plainCell(p.State))
		for _, c := range p.Counters {
			b.WriteString(" " + c.Name + "=")
			switch {
			case c.Unavailable != "":
				// The short reason; the whole one is noted once on stderr.
				why, _, _ := strings.Cut(c.Unavailable, " (")
				b.WriteString("n/a(" + plainCell(why) + ")")
				continue
			case c.Err != "":
				b.WriteString("error(" + plainCell(strings.ReplaceAll(c.Err, ",", ";")) + ")")
				continue
			}
			b.WriteString(strconv.FormatUint(c.Value, 10))
			if once {
				if c.Saturated {
					b.WriteString("(saturated)")
				}
				continue
			}
			var flags []string
			if c.HasDelta {
				flags = append(flags, "+"+strconv.FormatUint(c.Delta, 10), strconv.FormatFloat(c.Rate, 'f', 2, 64)+"/s")
			}
			if c.Saturated {
				flags = append(flags, "saturated")
			}
			if c.Reset {
				flags = append(flags, "reset")
			}
			if len(flags) > 0 {
				b.WriteString("(" + strings.Join(flags, ",") + ")")
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// goneWord stands for the state of a port that could not be read: a local port went
// away; a port on the fabric did not answer (it may again).
func goneWord(p query.PortDelta) string {
	if p.Address != "" {
		return "NOREPLY"
	}
	return "GONE"
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
	Device   string                 `json:"device"`
	Port     int                    `json:"port"`
	Address  string                 `json:"address,omitempty"`
	State    string                 `json:"state,omitempty"`
	Error    string                 `json:"error,omitempty"`
	Counters map[string]counterJSON `json:"counters"`
}

type countersSampleJSON struct {
	Time     string            `json:"time"`
	Interval *float64          `json:"interval_s"`
	Demo     bool              `json:"demo,omitempty"`
	Via      string            `json:"via,omitempty"`
	Ports    []counterPortJSON `json:"ports"`
}

func countersToJSON(snap *query.Snapshot, demo bool, via string) countersSampleJSON {
	out := countersSampleJSON{Time: snap.Time.Format(time.RFC3339Nano), Demo: demo, Via: via, Ports: make([]counterPortJSON, len(snap.Ports))}
	if snap.Interval > 0 {
		s := snap.Interval.Seconds()
		out.Interval = &s
	}
	for i, p := range snap.Ports {
		pj := counterPortJSON{Device: p.Ref.Device, Port: p.Ref.Port, Address: p.Address, State: p.State, Error: p.Err, Counters: map[string]counterJSON{}}
		for _, c := range p.Counters {
			cj := counterJSON{Source: c.Source, Saturated: c.Saturated, Reset: c.Reset, Error: c.Err, Unavailable: c.Unavailable}
			if c.OK() {
				v := c.Value
				cj.Value = &v
			}
			if c.HasDelta {
				d, r := c.Delta, c.Rate
				cj.Delta, cj.Rate = &d, &r
			}
			pj.Counters[c.Name] = cj
		}
		out.Ports[i] = pj
	}
	return out
}

// P_Key table polling.

type pkeyEventJSON struct {
	Time        string  `json:"time"`
	Device      string  `json:"device"`
	Port        int     `json:"port"`
	Index       *int    `json:"index"`
	Old         *string `json:"old"`
	New         *string `json:"new"`
	Change      string  `json:"change"`
	Description string  `json:"description"`
}

// tableState is what one poll saw of a port: entries, or the reason it could not be read.
type tableState struct {
	entries []entryState
	err     string
}

type entryState struct {
	value    check.PKey
	readable bool
}

func runWatchPKeys(o *WatchPKeysOptions) error {
	f, err := o.Format()
	if err != nil {
		return err
	}
	host := o.Host()
	views, err := host.LoadMany(o.Selectors)
	if err != nil {
		return err
	}
	n := o.notices()
	n.label(host.Label)
	var refs []query.PortRef
	for _, v := range views {
		if !v.Port.HasPKeys {
			n.note(fmt.Sprintf("%s: no P_Key table (no pkeys/ directory): not watched", v.Ref()))
			continue
		}
		refs = append(refs, v.Ref())
	}
	if len(refs) == 0 {
		return &query.EnvError{Msg: "no port with a P_Key table to watch"}
	}
	names := make([]string, len(refs))
	for i, r := range refs {
		names[i] = r.String()
	}
	n.note(fmt.Sprintf("watching the P_Key tables of %s every %s", strings.Join(names, ", "), o.Interval))
	ctx, cancel := o.context()
	defer cancel()
	prev := make([]*tableState, len(refs))
	return o.loop(ctx, o.Count, func(int) error {
		now := o.Now()
		for i, r := range refs {
			cur := readTable(host, r)
			if prev[i] != nil {
				for _, ev := range tableEvents(r, prev[i], cur) {
					ev.Time = now.Format(time.RFC3339Nano)
					if err := printPKeyEvent(o.IO.Out, f, now, ev); err != nil {
						return err
					}
				}
			}
			prev[i] = cur
		}
		return nil
	})
}

func readTable(h *query.Host, r query.PortRef) *tableState {
	raw, err := h.Sys.PKeys(r.Device, r.Port)
	if err != nil {
		return &tableState{err: err.Error()}
	}
	t := &tableState{entries: make([]entryState, len(raw))}
	for i, e := range raw {
		t.entries[i] = entryState{value: check.PKey(e.Value), readable: e.Err == nil}
	}
	return t
}

// tableEvents compares two polls of a port's table: one event per changed index.
func tableEvents(r query.PortRef, old, cur *tableState) []pkeyEventJSON {
	base := pkeyEventJSON{Device: r.Device, Port: r.Port}
	switch {
	case cur.err != "" && old.err == "":
		ev := base
		ev.Change, ev.Description = "port_error", cur.err
		return []pkeyEventJSON{ev}
	case cur.err != "":
		return nil
	case old.err != "":
		ev := base
		ev.Change, ev.Description = "port_back", fmt.Sprintf("the table is readable again (%d entries)", len(cur.entries))
		return []pkeyEventJSON{ev}
	}
	var out []pkeyEventJSON
	for i := 0; i < max(len(old.entries), len(cur.entries)); i++ {
		var a, b *entryState
		if i < len(old.entries) {
			a = &old.entries[i]
		}
		if i < len(cur.entries) {
			b = &cur.entries[i]
		}
		change, desc := describeChange(a, b)
		if change == "" {
			continue
		}
		ev := base
		idx := i
		ev.Index, ev.Old, ev.New, ev.Change, ev.Description = &idx, entryValue(a), entryValue(b), change, desc
		out = append(out, ev)
	}
	return out
}

func entryValue(e *entryState) *string {
	if e == nil || !e.readable {
		return nil
	}
	s := e.value.String()
	return &s
}

func member(p check.PKey) string {
	return fmt.Sprintf("%s member of partition %s", p.Membership(), p.KeyString())
}

// describeChange says what a change of one entry means; "" when nothing changed.
func describeChange(a, b *entryState) (change, desc string) {
	valid := func(e *entryState) bool { return e != nil && e.readable && e.value.Valid() }
	switch {
	case a != nil && b != nil && a.readable == b.readable && (!a.readable || a.value == b.value):
		return "", ""
	case a == nil && b != nil && b.readable && !b.value.Valid():
		return "", "" // the table grew by an empty entry
	case b == nil && a != nil && a.readable && !a.value.Valid():
		return "", ""
	case b != nil && !b.readable:
		return "unreadable", "the entry can no longer be read"
	case a != nil && !a.readable && !valid(b):
		return "readable", "the entry can be read again: empty (invalid)"
	case a != nil && !a.readable:
		return "readable", "the entry can be read again: " + member(b.value)
	case !valid(a) && valid(b):
		return "added", member(b.value)
	case valid(a) && !valid(b):
		return "removed", member(a.value) + " (a QP using this index loses the partition)"
	case valid(a) && valid(b) && a.value.Key() == b.value.Key():
		return "membership", fmt.Sprintf("partition %s: %s -> %s member", b.value.KeyString(), a.value.Membership(), b.value.Membership())
	case valid(a) && valid(b):
		return "replaced", fmt.Sprintf("%s replaced by %s (a QP using this index now sends in another partition)", member(a.value), member(b.value))
	}
	return "", "" // invalid to another invalid value (0x0000 <-> 0x8000)
}

func printPKeyEvent(w io.Writer, f format, now time.Time, ev pkeyEventJSON) error {
	if f == formatJSON {
		return writeJSONLine(w, ev)
	}
	t := now.Format(lineTime)
	port := ev.Device + "/" + strconv.Itoa(ev.Port)
	var err error
	if ev.Index == nil {
		_, err = fmt.Fprintf(w, "%s %s %s: %s\n", t, port, ev.Change, ev.Description)
		return err
	}
	old, cur := "absent", "absent"
	if ev.Old != nil {
		old = *ev.Old
	} else if ev.Change == "readable" {
		old = "unreadable"
	}
	if ev.New != nil {
		cur = *ev.New
	} else if ev.Change == "unreadable" {
		cur = "unreadable"
	}
	_, err = fmt.Fprintf(w, "%s %s index=%d old=%s new=%s %s: %s\n", t, port, *ev.Index, old, cur, ev.Change, ev.Description)
	return err
}

// completePortArgs completes each argument as DEV or DEV/PORT.
func completePortArgs(g *Globals) cobra.CompletionFunc {
	return func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		devs, err := g.Host().Devices("")
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		given := map[string]bool{}
		for _, a := range args {
			given[a] = true
		}
		var out []cobra.Completion
		for _, d := range devs {
			desc := ""
			if d.NodeDesc.OK() {
				desc = d.NodeDesc.Value + " "
			}
			if !given[d.Name] {
				out = append(out, d.Name+"\t"+desc+"(every port)")
			}
			for _, p := range d.Ports {
				ref := d.Name + "/" + strconv.Itoa(p)
				if !given[ref] && strings.HasPrefix(ref, toComplete) {
					out = append(out, ref+"\t"+desc+"port "+strconv.Itoa(p))
				}
			}
		}
		sort.Strings(out)
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}
