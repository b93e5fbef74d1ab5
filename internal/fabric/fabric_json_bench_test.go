package fabric_test

import (
	"io"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/fabric/fabrictest"
)

// BenchmarkEncodeFabric5004 encodes the 5,004-node fabric file (issue 23 budget: at
// most 300 ms and 40 MB allocated). Each round starts with encoding/json's buffer pools
// emptied, as in a process that writes one file.
func BenchmarkEncodeFabric5004(b *testing.B) {
	f := fabrictest.FatTree(208, 12, 23)
	if len(f.Nodes) != 5004 {
		b.Fatalf("%d nodes", len(f.Nodes))
	}
	var n countWriter
	if err := fabric.EncodeFabric(&n, f); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(n))
	b.ReportAllocs()
	var cpu time.Duration
	for b.Loop() {
		b.StopTimer()
		runtime.GC() // twice: sync.Pool keeps a victim cache through one collection
		runtime.GC()
		before := cpuTime()
		b.StartTimer()
		if err := fabric.EncodeFabric(io.Discard, f); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		cpu += cpuTime() - before
		b.StartTimer()
	}
	// CPU time (the process's, the collector's included): on a loaded machine the wall
	// time per op counts the waits for a core too.
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

type countWriter int

func (c *countWriter) Write(b []byte) (int, error) { *c += countWriter(len(b)); return len(b), nil }
