package pkeys

import (
	"bytes"
	"testing"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
	"github.com/ibkey/ibkey/internal/fakesysfs"
	"github.com/ibkey/ibkey/internal/ibverbs"
	"github.com/ibkey/ibkey/internal/query"
)

// largeHost writes the `make bench` host: 16 devices x 2 ports x 128 entries.
func largeHost(b *testing.B) string {
	dir := b.TempDir()
	if err := fakesysfs.Write(dir, fakesysfs.Large(16, 2, 128)); err != nil {
		b.Fatal(err)
	}
	return dir
}

// BenchmarkWritePlain16x2x128 renders `pkeys --all -o plain` of the bench host (4,096
// rows) from tables already read: the render path alone.
func BenchmarkWritePlain16x2x128(b *testing.B) {
	h := &query.Host{Sys: ibverbs.Open(largeHost(b))}
	views, err := h.Load(query.Selector{}, query.LoadOptions{Tables: true, Interfaces: true})
	if err != nil {
		b.Fatal(err)
	}
	var out bytes.Buffer
	for b.Loop() {
		out.Reset()
		if err := writePlain(&out, views, true, func(string) {}); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(out.Len()))
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/4096, "ns/row")
}

// BenchmarkPKeysAllPlain16x2x128 is the whole command in-process: read every table of
// the bench host (4,096 files) and render it, as `ibkey pkeys --all -o plain`.
func BenchmarkPKeysAllPlain16x2x128(b *testing.B) {
	dir := largeHost(b)
	for b.Loop() {
		r := cmdtest.Run(b, root, false, nil, "--sysfs", dir, "pkeys", "--all", "-o", "plain")
		if r.Code != 0 {
			b.Fatal(r.Stderr)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/4096, "ns/entry")
}
