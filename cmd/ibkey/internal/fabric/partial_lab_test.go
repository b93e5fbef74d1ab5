package fabric

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/lab"
)

// killAt kills the simulator just before the at-th batch of MADs the sweep sends (as
// internal/query's sweep_fault_lab_test does).
type killAt struct {
	*mad.Ibsim
	n    atomic.Int32
	at   int32
	kill func()
}

func (k *killAt) Exchange(ctx context.Context, calls []mad.Call) error {
	if k.n.Add(1) == k.at {
		k.kill()
	}
	return k.Ibsim.Exchange(ctx, calls)
}

// withKilledSimulator is `fabric` with each subcommand's transport wrapped in killAt.
func withKilledSimulator(l *lab.Lab, at int32) func(*cmdutil.Factory) *cobra.Command {
	dial := func(ctx context.Context, o mad.IbsimOptions) (mad.Transport, string, error) {
		t, err := mad.DialIbsim(ctx, o)
		if err != nil {
			return nil, "", err
		}
		return &killAt{Ibsim: t, at: at, kill: l.Kill}, t.Node, nil
	}
	return func(f *cmdutil.Factory) *cobra.Command {
		c := &cobra.Command{Use: "fabric"}
		c.AddCommand(
			NewCmdDiscover(f, func(o *DiscoverOptions) error { o.Source.MAD.DialIbsim = dial; return runDiscover(o) }),
			NewCmdPKeys(f, func(o *PKeysOptions) error { o.Source.MAD.DialIbsim = dial; return runPKeys(o) }),
			NewCmdCheck(f, func(o *CheckOptions) error { o.Source.MAD.DialIbsim = dial; return runCheck(o) }),
		)
		return c
	}
}

// TestLabFabricIbsimKilled kills ibsim partway through the sweep of discover, pkeys
// and check (a fat tree of 38 nodes): each still writes its JSON for what was read,
// names the gaps on stderr and exits 4 (incomplete), never 0.
func TestLabFabricIbsimKilled(t *testing.T) {
	net := filepath.Join(t.TempDir(), "fattree.net")
	if err := os.WriteFile(net, []byte(lab.FatTree(6, 2, 5)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"discover", "pkeys", "check"} {
		t.Run(sub, func(t *testing.T) {
			l := lab.Start(t, net, nil)
			// Batch 6: the local CA and its leaf are read; the probes behind the leaf fail.
			r := runWith(t, false, nil, withKilledSimulator(l, 6), "fabric", sub, "-o", "json", "--ibsim="+l.SockName, "--mad-timeout", "200ms", "--mad-retries", "1")
			if r.Code != 4 || !strings.Contains(r.Stderr, "ibkey: partial sweep: ") || !strings.Contains(r.Stderr, "not checked") {
				t.Fatalf("exit %d, want 4 with the gaps on stderr:\n%s", r.Code, r.Stderr)
			}
			t.Logf("stderr:\n%s", r.Stderr)
			if !json.Valid([]byte(r.Stdout)) || r.Stdout == "" {
				t.Fatalf("no JSON for what was read:\n%s", r.Stdout)
			}
			switch sub {
			case "discover":
				f, err := fabric.DecodeFabric(strings.NewReader(r.Stdout))
				if err != nil {
					t.Fatal(err)
				}
				if len(f.Nodes) == 0 || len(f.Nodes) >= len(l.Topology.Nodes) {
					t.Errorf("%d nodes of %d after ibsim was killed", len(f.Nodes), len(l.Topology.Nodes))
				}
			case "check":
				if !strings.Contains(r.Stdout, `"rule": "not-read"`) {
					t.Errorf("no not-read finding:\n%s", r.Stdout)
				}
			}
		})
	}
}
