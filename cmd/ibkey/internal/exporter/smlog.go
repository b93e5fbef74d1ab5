package exporter

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/internal/exporter"
	"github.com/ibkey/ibkey/internal/query"
	"github.com/ibkey/ibkey/internal/smlog"
)

// --sm-log FILE: ibkey_sm_events_total{kind,key}, the partition and key events of
// OpenSM's log, counted as `ibkey sm log` finds them.

func addSMLogFlag(c *cobra.Command, o *Options) {
	c.Flags().StringVar(&o.SMLog, "sm-log", "", "also count the partition and key events of OpenSM's log `FILE` (ibkey_sm_events_total{kind,key}): read from its start, then followed as OpenSM writes, across rotation")
	_ = c.MarkFlagFilename("sm-log")
}

// smLogCollector counts o.SMLog's events: with --once the log is read whole now; else
// run follows it until ctx ends.
func (o *Options) smLogCollector(ctx context.Context, logger *slog.Logger) (prometheus.Collector, func(context.Context), error) {
	counts := smlog.NewCounts()
	c := exporter.NewSMLogCollector(counts)
	if o.Once {
		f, err := os.Open(o.SMLog)
		if err != nil {
			return nil, nil, &query.EnvError{Msg: fmt.Sprintf("--sm-log: %v", err)}
		}
		defer f.Close()
		ref := time.Now()
		if st, err := f.Stat(); err == nil {
			ref = st.ModTime()
		}
		a := counts.NewAssembler(ref, time.Local)
		if err := smlog.Read(ctx, f, a); err != nil {
			return nil, nil, &query.EnvError{Msg: fmt.Sprintf("--sm-log %s: %v", o.SMLog, err)}
		}
		counts.SetLines(a.Lines(), a.Records())
		return c, nil, nil
	}
	if _, err := os.Stat(o.SMLog); errors.Is(err, fs.ErrNotExist) {
		logger.Warn("OpenSM's log is not there yet: waiting for it", "sm_log", o.SMLog)
	}
	run := func(ctx context.Context) {
		fromEnd := false
		for {
			err := smlog.FollowCounts(ctx, o.SMLog, counts, smlog.FollowOptions{FromEnd: fromEnd,
				Notice: func(s string) { logger.Info(s, "sm_log", o.SMLog) }})
			if err == nil || ctx.Err() != nil {
				return
			}
			// Reading again from the start would count its events twice: from the end.
			logger.Warn("reading OpenSM's log failed; following it again from its end in 10s", "sm_log", o.SMLog, "err", err)
			counts.SetNotRead(fmt.Sprintf("reading it failed: %v; following it again from its end in 10s", err))
			fromEnd = true
			select {
			case <-ctx.Done():
				return
			case <-time.After(10 * time.Second):
			}
		}
	}
	return c, run, nil
}
