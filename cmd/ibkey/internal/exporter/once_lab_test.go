package exporter

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/lab"
	"github.com/ibkey/ibkey/internal/query"
)

// TestOnceSweepWithGapsLab: --sweep --once on a sweep with gaps (HcaC does not answer)
// exits 4 and says what was not read, as fabric check does; the sweep is printed.
func TestOnceSweepWithGapsLab(t *testing.T) {
	l := lab.Start(t, "../../../../internal/lab/testdata/small.net", nil)
	if err := l.RunOpenSM("Default=0x7fff : ALL=full ;\n", false); err != nil {
		t.Fatal(err)
	}
	open := func(context.Context) (*query.Fabric, error) {
		return &query.Fabric{T: l.Dial(t, "HcaA", mad.Options{Timeout: 200 * time.Millisecond, Retries: 1}), Via: "ibsim"}, nil
	}
	var stdout, stderr bytes.Buffer
	o := onceOptions(&stdout, &stderr, nil, open)
	o.Sweep = true
	if err := Run(o); err != nil || stderr.Len() > 0 {
		t.Fatalf("a whole sweep: %v\n%s", err, stderr.String())
	}
	l.MustConsole(`Error "HcaC"[1] 100`)
	stdout.Reset()
	err := Run(o)
	if code := cmdutil.ExitCode(err); code != 4 || !strings.Contains(stderr.String(), "ibkey: partial sweep: 1 link with no answer") ||
		!strings.Contains(stdout.String(), `ibkey_fabric_not_read{what="link"} 1`) {
		t.Errorf("a sweep with gaps: exit %d (%v), want 4 naming the link\n%s", code, err, stderr.String())
	}
}
