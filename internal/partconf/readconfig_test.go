package partconf

import (
	"io"
	"strings"
	"testing"
)

// zeros is an endless reader, like /dev/zero.
type zeros struct{ n int64 }

func (z *zeros) Read(p []byte) (int, error) {
	clear(p)
	z.n += int64(len(p))
	return len(p), nil
}

// TestReadConfigBound: an endless input ends with an error naming the bound, after
// reading at most one byte past it.
func TestReadConfigBound(t *testing.T) {
	z := &zeros{}
	_, err := ReadConfig("/dev/zero", z)
	if err == nil || !strings.Contains(err.Error(), "too large for a partitions file") {
		t.Fatalf("ReadConfig(/dev/zero): %v", err)
	}
	if z.n > MaxFileSize+1<<20 {
		t.Errorf("read %d bytes, bound %d", z.n, MaxFileSize)
	}
	c, err := ReadConfig("p.conf", io.MultiReader(strings.NewReader("Default=0x7fff : ALL=full;\n")))
	if err != nil || len(c.Partitions) != 1 {
		t.Errorf("a small file: %v", err)
	}
}
