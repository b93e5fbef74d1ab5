// Package watch is `ibkey watch counters` and `ibkey watch pkeys`: partition counters
// sampled over time (a live screen on a terminal, lines or JSON otherwise) and P_Key
// table changes as they happen.
package watch

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/internal/query"
)

// NewCmdWatch is `ibkey watch`, the parent of counters and pkeys.
func NewCmdWatch(f *cmdutil.Factory) *cobra.Command {
	c := &cobra.Command{
		Use:   "watch",
		Short: "Watch partition counters and P_Key tables change",
		Long: `Watch a host's partition counters (is traffic being dropped for P_Key reasons
right now?) or its P_Key tables (is the Subnet Manager reprogramming them?).`,
		// A bare `ibkey watch` is a usage mistake, exit 2 in one line naming the
		// subcommands (cmdutil's sanity walk gives every group that RunE).
	}
	c.AddCommand(NewCmdCounters(f, nil), NewCmdPKeys(f, nil))
	return c
}

// Sampling is what both watch commands share: the ports, how often and how many
// samples, and the clock. A signal (main's context, Deps.Ctx) ends the watch after
// the sample in progress.
type Sampling struct {
	Selectors []query.Selector
	Interval  time.Duration
	Count     int
	Now       func() time.Time
}

func (o *Sampling) bind(c *cobra.Command) {
	cmdutil.IntervalVar(c, &o.Interval, "interval", time.Second, "time between samples (e.g. 500ms, 2s)")
	c.Flags().IntVar(&o.Count, "count", 0, "stop after `N` samples (0: until interrupted)")
}

func (o *Sampling) check(c *cobra.Command, args []string) error {
	o.Selectors = nil
	for i, a := range args { // DEV or DEV/PORT
		if i > 0 && a != "" && strings.Trim(a, "0123456789") == "" && !strings.ContainsAny(args[i-1], "/:") {
			// `watch counters mlx5_0 1`, as `ibkey pkeys mlx5_0 1` takes a port: here
			// every argument is a device or DEV/PORT, so "1" would be "no device 1".
			dev := args[i-1]
			return cmdutil.Usagef("%q after %s is not a device: give a port as DEV/PORT (%s/%s); every argument here is DEV or DEV/PORT", a, dev, dev, a)
		}
		s, err := query.ParseSelector(a)
		if err != nil {
			return err
		}
		o.Selectors = append(o.Selectors, s)
	}
	if o.Interval < 10*time.Millisecond {
		return cmdutil.Usagef("invalid --interval %s (accepted: a duration of at least 10ms, e.g. 500ms, 1s, 1m)", cmdutil.FlagText(c, "interval"))
	}
	if o.Count < 0 {
		return cmdutil.Usagef("invalid --count %d (accepted: 0 for no limit, or a positive number of samples)", o.Count)
	}
	return nil
}

// loop calls step every interval (the first at once) until count steps ran, ctx ends
// or step fails. Ended by ctx (a signal: main's context), it returns the cause, so the
// command exits 128+signo as the exit-code table says, as a watch that also found
// something not read did; it returned nil, exit 0.
func (o *Sampling) loop(ctx context.Context, count int, step func(i int) error) error {
	tick := time.NewTicker(o.Interval)
	defer tick.Stop()
	for i := 0; count == 0 || i < count; i++ {
		if i > 0 {
			select {
			case <-ctx.Done():
				return context.Cause(ctx)
			case <-tick.C:
			}
		}
		if err := step(i); err != nil {
			return err
		}
	}
	return nil
}

const lineTime = "2006-01-02T15:04:05.000Z07:00"

// completePortArgs completes each argument as DEV or DEV/PORT, from the host the
// command line selects so far: --sysfs or --demo given earlier on the line are
// already parsed when cobra calls it.
func completePortArgs(f *cmdutil.Factory) cobra.CompletionFunc {
	return func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		devs, err := f.Host().Devices("")
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
