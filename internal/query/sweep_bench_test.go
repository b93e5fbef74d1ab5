package query_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/lab"
	"github.com/ibkey/ibkey/internal/query"
)

// cpuTime is this process's user+system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkLabSweep sweeps generated two-level fat trees of about 50 to 500 nodes in
// ibsim, after OpenSM programmed them: discovery plus every P_Key table, in-process.
// It reports nodes, MADs per sweep and time per node, to show how the sweep grows.
//
//	go test ./internal/query -run '^$' -bench LabSweep -benchtime 10x
func BenchmarkLabSweep(b *testing.B) {
	for _, size := range []struct{ leaves, spines, hcas int }{
		{4, 2, 11},  // 50 nodes
		{6, 3, 15},  // 99
		{12, 4, 19}, // 244
		{24, 8, 20}, // 512
	} {
		nodes := size.leaves*(size.hcas+1) + size.spines
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			net := filepath.Join(b.TempDir(), "fattree.net")
			if err := os.WriteFile(net, []byte(lab.FatTree(size.leaves, size.spines, size.hcas)), 0o644); err != nil {
				b.Fatal(err)
			}
			l := lab.Start(b, net, nil)
			if err := l.RunOpenSM("Default=0x7fff, ipoib : ALL=full ;\nstorage=0x0001 : ALL_CAS=limited, ALL_SWITCHES=full ;\n", false); err != nil {
				b.Fatal(err)
			}
			tr, err := mad.DialIbsim(context.Background(), mad.IbsimOptions{SockName: l.SockName, Options: labMAD})
			if err != nil {
				b.Fatal(err)
			}
			defer tr.Close()
			ctx := context.Background()
			var f *fabric.Fabric
			before := tr.Stats()
			cpu0 := cpuTime(b)
			for b.Loop() {
				if f, err = query.Sweep(ctx, tr, query.SweepOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			cpu := cpuTime(b) - cpu0
			after := tr.Stats()
			if len(f.Nodes) != nodes || len(f.Unreachable) > 0 {
				b.Fatalf("%d nodes (want %d), %d unreachable", len(f.Nodes), nodes, len(f.Unreachable))
			}
			if g := query.FabricGaps(f); g.Partial() {
				b.Fatalf("partial sweep: %s", g)
			}
			sent := after.Sent - before.Sent
			per := b.Elapsed() / time.Duration(b.N)
			b.ReportMetric(float64(len(f.Nodes)), "nodes")
			b.ReportMetric(float64(sent)/float64(b.N), "MADs/op")
			b.ReportMetric(float64(after.Retries-before.Retries)/float64(b.N), "retries/op")
			b.ReportMetric(float64(per.Microseconds())/float64(len(f.Nodes)), "µs/node")
			b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(sent), "µs-CPU/MAD")
		})
	}
}
