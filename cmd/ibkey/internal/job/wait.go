package job

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/job"
	"github.com/ibkey/ibkey/internal/textsafe"
)

// The gate's pace. A sysfs pkey file read is a device query (a MAD or firmware
// command per entry on mlx5) and a re-read over the fabric is a few SMPs per port,
// so the gate starts quick (the SM usually programs a new partition within a second
// of its sweep) and backs off to firstInterval*1.5^n, at most maxInterval, or one
// millisecond per MAD or entry of a read when that is longer (a job of 1,000 ports
// read over MADs then averages at most about 1,000 MADs a second).
const (
	firstInterval = 500 * time.Millisecond
	maxInterval   = 2 * time.Second
	backoff       = 1.5
	// progressEvery is how often an unchanged wait says it is still waiting.
	progressEvery = 5 * time.Second
)

// gate waits until the job's ports hold the wanted partition (job.Gate finds
// nothing pending), reading them again with back-off.
type gate struct {
	o    *Options
	src  *portSource
	libs []*job.Library
	in   job.Inputs
	key  check.PKey
	// start is when the command began: --wait bounds the whole gate, the first read
	// (a sweep with --node) included.
	start time.Time
	// took is how long the last read took: the next read starts that long before
	// the deadline at the latest, so that it can end before it.
	took time.Duration

	reads     int
	entries   int   // pkey entries read from sysfs, all reads
	firstMADs int64 // MADs of the first read (a sweep with --node)
}

// nextInterval is the pause after a read that cost cost (MADs or pkey entries).
func nextInterval(prev time.Duration, cost int) time.Duration {
	return max(min(time.Duration(float64(prev)*backoff), maxInterval), time.Duration(cost)*time.Millisecond)
}

// sysfsEntries counts the pkey files a read of ports read (the local and --host
// ports: those read over MADs are counted as MADs).
func sysfsEntries(ports []*job.Port) int {
	n := 0
	for _, p := range ports {
		if !p.Fabric {
			n += len(p.Table)
		}
	}
	return n
}

// run evaluates ports (those already read) and then reads again until nothing is
// pending, the wait ends (exit 1, or 4 when only unread tables are pending; nothing
// is printed on stdout), or ctx ends (a signal: the error says what was still
// pending). The wait ends by g.start plus --wait: a read still under way then is
// stopped (a Slurm Prolog still running at PrologEpilogTimeout is killed, which
// drains its node: prep_script_slurmd.c, run_command's max_wait); only the first
// read, without which there is no answer, may end after it.
func (g *gate) run(ctx context.Context, ports []*job.Port) ([]*job.Result, []*job.Port, error) {
	deadline := g.start.Add(g.o.Wait)
	g.reads, g.entries, g.firstMADs, g.took = 1, sysfsEntries(ports), g.src.mads.Load(), time.Since(g.start)
	interval := firstInterval
	var last, said []job.Pending
	var lastErr error
	lastSaid := time.Time{}
	part := g.key.Partition().String()
	stopped := func() error {
		return fmt.Errorf("stopped waiting for partition %s after %s, still waiting for %s", part, since(g.start), summary(last))
	}
	for {
		var pending []job.Pending
		var ws []*job.Result
		if lastErr == nil {
			ws = job.WantPartition(g.libs, g.in, g.key, ports)
			pending = append(job.Gate(ws, g.key, g.o.Emit == "env"), job.UnreadPending(ws, g.in.Unread, ports)...)
			if len(pending) == 0 {
				// Nothing a re-read can change is left; a setting ibkey does not
				// interpret (not checked, exit 4) is not "ready".
				checked := !slices.ContainsFunc(ws, func(w *job.Result) bool { return w.Verdict == job.Incomplete })
				switch {
				case g.reads > 1 && checked:
					g.o.Notices.Label(fmt.Sprintf("partition %s ready after %s (%s)", part, since(g.start), g.cost()))
				case g.reads > 1:
					g.o.Notices.Label(fmt.Sprintf("partition %s: nothing left to wait for after %s (%s), but not everything was checked", part, since(g.start), g.cost()))
				}
				return ws, ports, nil
			}
			last = pending
			if h := job.Hopeless(pending); len(h) > 0 {
				return nil, nil, g.aborts(h)
			}
		}
		now := time.Now()
		if g.reads == 1 {
			g.o.Notices.Label(fmt.Sprintf("waiting up to %s for partition %s on %s; reading again after %s, backing off to every %s", g.o.Wait, part, describePorts(ws), firstInterval, nextInterval(maxInterval, sysfsEntries(ports))))
		}
		if !now.Before(deadline) {
			return nil, nil, g.timedOut(last, lastErr, false)
		}
		if lastErr != nil {
			g.o.Notices.Label(fmt.Sprintf("%s: reading the job's ports failed (%v); trying again", since(g.start), lastErr))
		} else if !slices.Equal(said, pending) || now.Sub(lastSaid) >= progressEvery {
			g.o.Notices.Label(fmt.Sprintf("%s: waiting for %s", since(g.start), summary(pending)))
			said, lastSaid = pending, now
		}
		select {
		case <-ctx.Done():
			return nil, nil, stopped()
		case <-time.After(min(interval, deadline.Sub(now)-g.took)):
		}
		if !time.Now().Before(deadline) {
			return nil, nil, g.timedOut(last, lastErr, false)
		}
		before, began := g.src.mads.Load(), time.Now()
		rctx, cancel := context.WithDeadline(ctx, deadline)
		next, err := g.src.read(rctx)
		cut := rctx.Err() != nil
		cancel()
		g.took = time.Since(began)
		switch {
		case ctx.Err() != nil:
			return nil, nil, stopped()
		case cut:
			// What the read found may be the deadline's doing (ports "not read").
			return nil, nil, g.timedOut(last, lastErr, true)
		}
		g.reads++
		lastErr = err
		if err == nil {
			ports, g.in.Unread = next, g.src.unread
			g.entries += sysfsEntries(next)
		}
		// What one read costs: MADs when the ports come over the fabric, else pkey
		// entries read from sysfs.
		interval = nextInterval(interval, max(int(g.src.mads.Load()-before), sysfsEntries(ports)))
	}
}

func (g *gate) cost() string {
	s := fmt.Sprintf("%d reads", g.reads)
	if g.entries > 0 {
		s += fmt.Sprintf(", %d pkey entries from sysfs", g.entries)
	}
	if g.src.via != "" {
		total := g.src.mads.Load()
		s += fmt.Sprintf(", %d MADs", total)
		if g.reads > 1 {
			s += fmt.Sprintf(": %d in the first read, %d per read after", g.firstMADs, (total-g.firstMADs)/int64(g.reads-1))
		}
	}
	return s
}

// timedOut is the end of a wait that did not succeed: every pending port on stderr,
// exit 1 when one of them is a definite no, 4 when only reads failed; cut: a read
// under way at the deadline was stopped, and pending is the read before it.
func (g *gate) timedOut(pending []job.Pending, lastErr error, cut bool) error {
	part := g.key.Partition().String()
	fmt.Fprintf(g.o.IO.ErrOut, "ibkey: timed out after %s waiting for partition %s (%s):\n", since(g.start), part, g.cost())
	definite := false
	var hosts []string
	for _, p := range pending {
		line := p.String()
		if p.Port != job.HostName(p.Host) { // a host's own line (an abort) names it already
			line = job.HostName(p.Host) + ": " + line
		}
		fmt.Fprintf(g.o.IO.ErrOut, "  %s\n", line)
		definite = definite || p.Definite()
		if !slices.Contains(hosts, job.HostName(p.Host)) {
			hosts = append(hosts, job.HostName(p.Host))
		}
	}
	if lastErr != nil {
		fmt.Fprintf(g.o.IO.ErrOut, "  the last read failed: %v\n", lastErr)
	}
	if cut {
		fmt.Fprintln(g.o.IO.ErrOut, "  the read under way at the deadline was stopped; the above is the read before it")
	}
	if g.o.Emit != "" {
		fmt.Fprintln(g.o.IO.ErrOut, "ibkey: nothing exported")
	}
	if definite {
		fmt.Fprintf(g.o.IO.ErrOut, "ibkey: not ready: %s\n", strings.Join(hosts, ", "))
		return exit(cmdutil.ExitNo)
	}
	return exit(cmdutil.ExitIncomplete)
}

// aborts ends a wait at once: a library stops the process on a host, for a reason
// no Subnet Manager change can remove (job.Hopeless). Exit 1, nothing on stdout.
func (g *gate) aborts(hopeless []job.Pending) error {
	fmt.Fprintf(g.o.IO.ErrOut, "ibkey: not waiting for partition %s: a library will abort at start-up whatever the Subnet Manager does (%s):\n", g.key.Partition().String(), since(g.start))
	for _, p := range hopeless {
		fmt.Fprintf(g.o.IO.ErrOut, "  %s\n", p)
	}
	if g.o.Emit != "" {
		fmt.Fprintln(g.o.IO.ErrOut, "ibkey: nothing exported")
	}
	return exit(cmdutil.ExitNo)
}

func since(t time.Time) string { return time.Since(t).Round(100 * time.Millisecond).String() }

// summary names the pending ports, at most five.
func summary(ps []job.Pending) string {
	var out []string
	for _, p := range ps {
		out = append(out, p.String())
	}
	return strings.Join(textsafe.Capped(out, 5), "; ")
}

// describePorts says what the gate waits on, the ports some library uses (or waits
// for): "2 ports of 2 hosts".
func describePorts(ws []*job.Result) string {
	ports, hosts := map[*job.Port]bool{}, map[string]bool{}
	for _, w := range ws {
		for _, pw := range w.Ports {
			ports[pw.Port], hosts[pw.Port.Host] = true, true
		}
		for _, p := range w.Idle {
			ports[p], hosts[p.Host] = true, true
		}
	}
	s := textsafe.Plural(len(ports), "port", "ports")
	if len(hosts) > 1 {
		s += fmt.Sprintf(" of %d hosts", len(hosts))
	}
	return s
}
