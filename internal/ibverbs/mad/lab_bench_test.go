package mad_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/lab"
)

// BenchmarkLabPKeyBlock measures one in-process Get P_KeyTable round trip
// (one block) through the ibsim transport.
func BenchmarkLabPKeyBlock(b *testing.B) {
	l := lab.Start(b, smallNet, nil)
	if err := l.RunOpenSM("Default=0x7fff : ALL=full ;\n", false); err != nil {
		b.Fatal(err)
	}
	tr := l.Dial(b, "", labOpts)
	ctx := context.Background()
	hcaB := lidOf(b, l, tr, "HcaB", 1)
	for _, bc := range []struct {
		name string
		addr mad.Address
	}{
		{"DR-local", mad.DirectedRoute()},
		{"DR-2hops", mad.DirectedRoute(1, 2)},
		{"LID-remote", mad.LIDAddress(hcaB)},
	} {
		req := mad.Request{Addr: bc.addr, Class: mad.ClassSubnLID, Method: mad.MethodGet, Attr: mad.AttrPKeyTable, Modifier: mad.PKeyTableModifier(0, 1)}
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := tr.Do(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(bc.name+"-parallel", func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := tr.Do(ctx, req); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkLabPKeyTable64 reads a whole 64-entry table (two concurrent
// block reads) by directed route.
func BenchmarkLabPKeyTable64(b *testing.B) {
	l := lab.Start(b, smallNet, nil)
	tr := l.Dial(b, "", labOpts)
	ctx := context.Background()
	for b.Loop() {
		if _, err := mad.GetPKeyTable(ctx, tr, mad.DirectedRoute(1, 2), 1, 64); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLabFatTree512 reads every CA's whole P_Key table (64 entries, two
// blocks) by directed route on a 512-CA fat tree (lab.FatTree(16, 4, 32)),
// all CAs concurrently through one transport. One op is the whole fabric.
func BenchmarkLabFatTree512(b *testing.B) {
	file := filepath.Join(b.TempDir(), "fattree512.net")
	if err := os.WriteFile(file, []byte(lab.FatTree(16, 4, 32)), 0o644); err != nil {
		b.Fatal(err)
	}
	l := lab.Start(b, file, nil)
	tr := l.Dial(b, "", labOpts)
	src := l.Topology.Nodes[0].Name
	var paths [][]uint8
	for _, n := range l.Topology.CAs() {
		p, err := l.Topology.DRPath(src, n.Name, 1)
		if err != nil {
			b.Fatal(err)
		}
		paths = append(paths, p)
	}
	ctx := context.Background()
	for b.Loop() {
		var wg sync.WaitGroup
		for _, p := range paths {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := mad.GetPKeyTable(ctx, tr, mad.DirectedRoute(p...), 1, 64); err != nil {
					b.Error(err)
				}
			}()
		}
		wg.Wait()
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(len(paths)), "µs/CA")
}

// BenchmarkLabExchange is the MAD loop alone: batches of P_KeyTable reads by
// directed route (two hops) through one ibsim transport (its window in flight). One op is one
// MAD; with -benchmem, B/op and allocs/op are per MAD too (the Calls are reused).
// It reports the CPU this process spends per MAD (the target is 8 µs; ibsim's own
// cost is not in it).
//
//	go test ./internal/ibverbs/mad -run '^$' -bench LabExchange -benchmem
func BenchmarkLabExchange(b *testing.B) {
	l := lab.Start(b, smallNet, nil)
	tr := l.Dial(b, "", labOpts)
	ctx := context.Background()
	for _, size := range []int{8, 256} {
		b.Run(fmt.Sprintf("batch=%d", size), func(b *testing.B) {
			calls := make([]mad.Call, size)
			for i := range calls {
				calls[i].Req = mad.Request{Addr: mad.DirectedRoute(1, 2), Class: mad.ClassSubnLID, Method: mad.MethodGet, Attr: mad.AttrPKeyTable, Modifier: mad.PKeyTableModifier(uint16(i%2), 1)}
			}
			var ru0, ru1 syscall.Rusage
			syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
			n := 0
			b.ResetTimer()
			for n < b.N {
				k := min(size, b.N-n)
				if err := tr.Exchange(ctx, calls[:k]); err != nil {
					b.Fatal(err)
				}
				for i := range calls[:k] {
					if calls[i].Err != nil {
						b.Fatal(calls[i].Err)
					}
				}
				n += k
			}
			b.StopTimer()
			syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
			cpu := time.Duration(ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
			b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(b.N), "µs-CPU/MAD")
		})
	}
}
