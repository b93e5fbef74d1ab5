package partitions

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
)

// benchConf writes the benchmark's file shape (internal/tools/partconfgen): ports port
// GUIDs in ports/5 partitions, each port in 10, the first two members of each full,
// member lists over lines, plus Default=0x7fff : ALL=full.
func benchConf(b *testing.B, ports int) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), fmt.Sprintf("p%d.conf", ports))
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	parts, slots := ports/5, ports*10
	per := (slots + parts - 1) / parts
	fmt.Fprintln(w, "Default=0x7fff, ipoib : ALL=full, SELF=full ;")
	for k := 0; k < parts; k++ {
		fmt.Fprintf(w, "part%d=0x%04x, ipoib :", k, k+1)
		for j := 0; j < per && k*per+j < slots; j++ {
			if j > 0 {
				w.WriteString(",")
				if j%5 == 0 {
					w.WriteString("\n ")
				}
			}
			fmt.Fprintf(w, " 0x%016x", 0x0002c90300000001+uint64(((k*per+j)*7919)%ports)*16)
			if j < 2 {
				w.WriteString("=full")
			}
		}
		w.WriteString(" ;\n")
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

// runDiscard runs `ibkey ARGS` in-process with stdout discarded.
func runDiscard(b *testing.B, args ...string) {
	streams := &cmdutil.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard}
	f := cmdutil.NewFactory(streams, func(string) string { return "" }, time.Now)
	if code := cmdutil.Execute(context.Background(), cmdtest.WithCommands(NewCmdPartitions)(f), args, streams); code != 0 {
		b.Fatalf("%v: exit %d", args, code)
	}
}

// BenchmarkShowJSON20k is `partitions show -o json` on 20,000 ports (no budget; it must
// stay usable at 100,000, scripts/bench-partitions): read, parse, model every table,
// write the JSON a port at a time. The "encode" case is the JSON alone, from a model
// built once.
func BenchmarkShowJSON20k(b *testing.B) {
	conf := benchConf(b, 20000)
	b.Run("command", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			runDiscard(b, "partitions", "show", "-o", "json", conf)
		}
	})
	b.Run("encode", func(b *testing.B) {
		streams := &cmdutil.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard}
		o := &ShowOptions{File: conf, OpenSM: cmdutil.OpenSMFlags{TableSize: 128}, Deps: cmdutil.Deps{IO: streams, Notices: cmdutil.NewNotices(io.Discard, false)}}
		s, err := loadShow(o)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if err := s.writeJSON(io.Discard, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkCheck is `partitions check` on 20,000 and 100,000 ports, and
// BenchmarkMatrix100k `matrix -o plain` on 100,000, in-process (issue 23 budget for
// check: linear from 20,000 ports, at most 5.5x for 5x the ports, and at most 200 MiB
// peak RSS, which scripts/bench-partitions measures on whole processes; the ratio of
// the two check cases is that budget's in-process view).
func BenchmarkCheck(b *testing.B) {
	for _, ports := range []int{20000, 100000} {
		b.Run(fmt.Sprintf("ports=%d", ports), func(b *testing.B) {
			conf := benchConf(b, ports)
			b.ReportAllocs()
			for b.Loop() {
				runDiscard(b, "partitions", "check", conf)
			}
		})
	}
}

func BenchmarkMatrix100k(b *testing.B) {
	conf := benchConf(b, 100000)
	b.ReportAllocs()
	for b.Loop() {
		runDiscard(b, "partitions", "matrix", "-o", "plain", conf)
	}
}
