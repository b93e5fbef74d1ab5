package partconf

import (
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
)

// TestPosText: an item with a line is FILE:LINE:COL; OpenSM's own items (no line) are
// the implicit Default, or the fallback of a rejected file.
func TestPosText(t *testing.T) {
	ok := Parse("p.conf", []byte("Default=0x7fff : ALL=full ;\n"))
	bad := Parse("p.conf", []byte("a=xyz : ALL;\n"))
	if !bad.Rejected || ok.Rejected {
		t.Fatalf("Rejected: %v, %v", ok.Rejected, bad.Rejected)
	}
	for _, c := range []struct {
		c    *Config
		p    check.FilePos
		want string
	}{
		{ok, check.FilePos{File: "p.conf", Line: 1, Col: 18}, "p.conf:1:18"},
		{ok, check.FilePos{File: "p.conf"}, "p.conf:(implicit)"},
		{bad, check.FilePos{File: "p.conf"}, "p.conf:(fallback)"},
	} {
		if got := c.c.PosText(c.p); got != c.want {
			t.Errorf("PosText(%v) = %q, want %q", c.p, got, c.want)
		}
	}
	if ok.Unpredictable() != "" {
		t.Errorf("Unpredictable of a plain file = %q", ok.Unpredictable())
	}
	crash := Parse("p.conf", []byte("Default=0x7fff : ALL=full :\n  mgid ;\n"))
	if got := crash.Unpredictable(); crash.Uncertain == "" || !strings.HasPrefix(got, "p.conf: what OpenSM 3.3.23 does with this file cannot be predicted (p.conf:") || !strings.HasSuffix(got, crash.Uncertain+")") {
		t.Errorf("Unpredictable = %q (Uncertain %q)", got, crash.Uncertain)
	}
}
