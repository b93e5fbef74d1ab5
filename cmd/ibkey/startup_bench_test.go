package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
)

// BenchmarkStartup is ibkey's own share of a run of `ibkey decode pkey 0x8001` after
// the package inits (issue 23's start-up budget, whose whole-process figure
// scripts/bench-startup measures): building the whole command tree (tree), and that
// plus running it (decode). Its allocations are the load-robust figure; a warm loop's
// time is not a cold process's.
func BenchmarkStartup(b *testing.B) {
	streams := func() *cmdutil.IOStreams { return &cmdutil.IOStreams{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}} }
	b.Run("tree", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			newRootCmd(cmdutil.NewFactory(streams(), func(string) string { return "" }, time.Now))
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s := streams()
			f := cmdutil.NewFactory(s, func(string) string { return "" }, time.Now)
			if code := cmdutil.Execute(context.Background(), newRootCmd(f), []string{"decode", "pkey", "0x8001"}, s); code != cmdutil.ExitOK {
				b.Fatalf("exit %d: %s", code, s.ErrOut)
			}
		}
	})
}
