package job

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/lab"
	"github.com/ibkey/ibkey/internal/query"
)

// keepOpen leaves closing the lab's transport to lab.Dial's cleanup.
type keepOpen struct{ mad.Transport }

func (keepOpen) Close() error { return nil }

// `ibkey job --lid` and `--node` on the live simulated fabric, after OpenSM removed
// storage (0x0001) and added ai (0x0003): the ports are read over MADs now (--lid)
// or found in a sweep run now (--node).
func TestLabJobCommand(t *testing.T) {
	l := lab.Start(t, "../../../../internal/lab/testdata/small.net", nil)
	for _, conf := range []string{
		"Default=0x7fff, ipoib : ALL=full ;\nstorage=0x0001 : 0x100001=full, 0x100004=full, 0x100007=full ;\ncompute=0x0002, defmember=full : 0x100004, 0x100007, 0x10000a ;\n",
		"Default=0x7fff, ipoib : ALL=full ;\ncompute=0x0002, defmember=full : 0x100004, 0x100007, 0x10000a ;\nai=0x0003, defmember=full : 0x100001, 0x100004, 0x100007, 0x10000a ;\n",
	} {
		if err := l.RunOpenSM(conf, false); err != nil {
			t.Fatal(err)
		}
	}
	tr := l.Dial(t, "", mad.Options{Timeout: 300 * time.Millisecond, Retries: 2})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	f, err := query.Sweep(ctx, tr, query.SweepOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lid := map[string]uint16{}
	for _, n := range f.Nodes {
		if n.Type == check.NodeCA && n.Port(1) != nil {
			lid[n.Description] = n.Port(1).LID
		}
	}
	run := func(args ...string) result {
		var out, errOut bytes.Buffer
		deps := Deps{Out: &out, ErrOut: &errOut, Ctx: ctx,
			Getenv: func(string) string { return "" },
			Format: formatOf("plain"),
			Fabric: func(context.Context) (*query.Fabric, error) {
				return &query.Fabric{T: keepOpen{tr}, Via: "the lab"}, nil
			},
			Exit: func(c int) error { return &exitErr{c} },
		}
		c := NewCmdJob(deps, nil)
		c.SetArgs(args)
		c.SilenceUsage, c.SilenceErrors = true, true
		err := c.Execute()
		code := 0
		var ee *exitErr
		if errors.As(err, &ee) {
			code = ee.code
		} else if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return result{out.String(), errOut.String(), code}
	}
	lids := fmt.Sprintf("%d,%d,%d", lid["HcaA"], lid["HcaB"], lid["HcaD"])
	r := run("--lid", lids, "NCCL_IB_PKEY=1", "UCX_IB_PKEY=0x0003")
	for _, want := range []string{
		"HcaB/1: NCCL_IB_PKEY index 1 holds 0x0000, an empty entry",
		"partition 0x0003 on HcaA/1 index 1; partition 0x0002 on HcaD/1 index 1",
		"fix: for partition 0x0003: no single value works; per port: HcaA/1: NCCL_IB_PKEY=1, HcaB/1: NCCL_IB_PKEY=3, HcaD/1: NCCL_IB_PKEY=2",
		"UCX: works: UCX_IB_PKEY=0x0003",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("--lid %s: missing %q in:\n%s", lids, want, r.stdout)
		}
	}
	if r.code != 1 {
		t.Errorf("--lid: exit %d, want 1\n%s", r.code, r.stderr)
	}
	r = run("--node", "HcaB,HcaC", "NCCL_IB_PKEY=2")
	if r.code != 0 || !strings.Contains(r.stdout, "NCCL: works: NCCL_IB_PKEY=2") || !strings.Contains(r.stdout, "partition 0x0002 in the sweep: 3 end ports full members, 0 limited") {
		t.Errorf("--node HcaB,HcaC NCCL_IB_PKEY=2: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
