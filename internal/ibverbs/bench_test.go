package ibverbs_test

import (
	"testing"

	"github.com/ibkey/ibkey/internal/fakesysfs"
	"github.com/ibkey/ibkey/internal/ibverbs"
)

// benchTree writes the `make bench` host: 16 devices x 2 ports x 128 entries, 4096 pkey
// files, with class/infiniband/DEV symlinks into devices/ as the kernel lays them out.
func benchTree(b *testing.B) *ibverbs.Sysfs {
	dir := b.TempDir()
	if err := fakesysfs.Write(dir, fakesysfs.Large(16, 2, 128)); err != nil {
		b.Fatal(err)
	}
	return ibverbs.Open(dir)
}

// BenchmarkPKeys4096 reads every P_Key file of the host once per iteration.
func BenchmarkPKeys4096(b *testing.B) {
	s := benchTree(b)
	names, err := s.DeviceNames()
	if err != nil || len(names) != 16 {
		b.Fatal(names, err)
	}
	b.ResetTimer()
	for b.Loop() {
		for _, d := range names {
			for p := 1; p <= 2; p++ {
				tab, err := s.PKeys(d, p)
				if err != nil || len(tab) != 128 || tab[0].Err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/4096, "ns/file")
}

// BenchmarkPort reads one port's attributes (about 15 files through the full path).
func BenchmarkPort(b *testing.B) {
	s := benchTree(b)
	names, err := s.DeviceNames()
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		p, err := s.Port(names[0], 1)
		if err != nil || p.State.Num == 0 {
			b.Fatal(err)
		}
	}
}
