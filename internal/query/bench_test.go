package query

import (
	"testing"

	"github.com/ibkey/ibkey/internal/fakesysfs"
	"github.com/ibkey/ibkey/internal/ibverbs"
)

// BenchmarkLoadLarge reads every table of the `make bench` host (16 devices x 2 ports x
// 128 entries: 4096 pkey files) with interfaces, as `ibkey pkeys` does.
func BenchmarkLoadLarge(b *testing.B) {
	dir := b.TempDir()
	if err := fakesysfs.Write(dir, fakesysfs.Large(16, 2, 128)); err != nil {
		b.Fatal(err)
	}
	h := &Host{Sys: ibverbs.Open(dir)}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		views, err := h.Load(Selector{}, LoadOptions{Tables: true, Interfaces: true})
		if err != nil || len(views) != 32 {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/4096, "ns/entry")
}
