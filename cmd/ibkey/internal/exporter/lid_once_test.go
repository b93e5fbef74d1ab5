package exporter

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/internal/demo"
	"github.com/ibkey/ibkey/internal/query"
)

// TestOnceLIDNotAnswering: exporter --lid --once over a LID that does not answer
// prints the ports that answered, names the LID (a node not read, as in a sweep) and
// exits 4. Before, the whole read failed (exit 3) and nothing was printed.
func TestOnceLIDNotAnswering(t *testing.T) {
	open := func(context.Context) (*query.Fabric, error) {
		tr, err := demo.OpenTransport("mlx5_0", 1, time.Now)
		return &query.Fabric{T: tr, Via: demo.Via}, err
	}
	var stdout, stderr bytes.Buffer
	o := onceOptions(&stdout, &stderr, nil, open)
	o.LID = "9,99"
	err := Run(o)
	if code := cmdutil.ExitCode(err); code != 4 || !strings.Contains(stderr.String(), "ibkey: partial sweep: node not checked: lid 99 (all ports): no answer via ") ||
		!strings.Contains(stdout.String(), `node_name="demo-node HCA-2"`) {
		t.Errorf("exit %d (%v), want 4 naming lid 99\n%s", code, err, stderr.String())
	}
}
