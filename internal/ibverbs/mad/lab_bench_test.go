package mad_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

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
