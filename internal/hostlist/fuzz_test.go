package hostlist

import (
	"strings"
	"testing"
)

// FuzzExpand: any input either expands or fails with an *Error; never more than
// MaxHosts hosts, no empty host, and no separator inside a host unless brackets were
// involved.
func FuzzExpand(f *testing.F) {
	for _, s := range []string{"node[01-04,07]", "a[1-2]b[3-4]c[5-6]", "gpu-a[01-02]-ib", "n[1", "n[3-1]", "x y\tz", "n[[1-2]", "[1-3]", "n[1-2]]", "a,,b", "n]1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		hosts, err := Expand(s)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("Expand(%q): untyped error %T %v", s, err, err)
			}
			return
		}
		if len(hosts) > MaxHosts {
			t.Fatalf("Expand(%q): %d hosts", s, len(hosts))
		}
		for _, h := range hosts {
			if h == "" {
				t.Fatalf("Expand(%q): an empty host", s)
			}
			if strings.ContainsAny(h, separators) && !strings.Contains(s, "[") {
				t.Fatalf("Expand(%q): host %q holds a separator", s, h)
			}
		}
	})
}
