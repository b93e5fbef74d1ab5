package cmdtest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/lab"
)

// Lab is a simulated fabric (internal/lab) that ibkey commands run against in-process,
// attached, like the infiniband-diags oracles, at From, the topology's first node.
type Lab struct {
	*lab.Lab
	From string
	root Root
	sem  chan struct{}
}

// StartLab starts ibsim on the topology file name of internal/lab/testdata (small.net,
// fattree.net); root is the command tree Run uses. It needs the lab (lab.Start skips
// outside CI, fails under CI=true).
func StartLab(t *testing.T, name string, root Root) *Lab {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "..", "internal", "lab", "testdata")
	l := &Lab{Lab: lab.Start(t, filepath.Join(dir, name), nil), root: root, sem: make(chan struct{}, 4)}
	l.From = l.Topology.Nodes[0].Name
	return l
}

// FabricConf is cmd/ibkey/testdata/fabric/partitions.conf, the partitions OpenSM
// applies to the lab's fabrics (and that the committed sweeps were recorded with).
func FabricConf(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "..", "testdata", "fabric", "partitions.conf"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Attach is the flags that attach a command line to the lab.
func (l *Lab) Attach() []string { return []string{"--ibsim=" + l.SockName, "--sim-node", l.From} }

// Run runs ibkey attached to the lab, whatever the exit code.
func (l *Lab) Run(t testing.TB, args ...string) Result {
	t.Helper()
	return Run(t, l.root, false, nil, append(l.Attach(), args...)...)
}

// RunJSON runs ibkey attached to the lab, fails the test unless it exits 0, and decodes
// its stdout into v (when not nil).
func (l *Lab) RunJSON(t testing.TB, v any, args ...string) Result {
	t.Helper()
	r := l.Run(t, args...)
	if r.Code != 0 {
		t.Fatalf("ibkey %s: exit %d\n%s", strings.Join(args, " "), r.Code, r.Stderr)
	}
	if v != nil {
		if err := json.Unmarshal([]byte(r.Stdout), v); err != nil {
			t.Fatalf("ibkey %s: %v\n%s", strings.Join(args, " "), err, r.Stdout)
		}
	}
	return r
}

// Diag runs an infiniband-diags tool (args[0]) attached at From; an error fails the test.
func (l *Lab) Diag(t testing.TB, args ...string) string {
	t.Helper()
	out, err := l.ToolAt(l.From, args[0], args[1:]...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Target is one port of the lab to compare: every port of every switch (0 included)
// and every connected CA port, with the directed route that reaches it from From (for
// a CA, arriving on that port).
type Target struct {
	Node string
	Type lab.NodeType
	Port int
	Path string // "0,1,3"
	LID  int    // set by ResolveLIDs, once OpenSM ran
}

func (tg Target) String() string { return fmt.Sprintf("%s[%d]", tg.Node, tg.Port) }

// Targets lists the ports of the lab's topology to compare.
func (l *Lab) Targets(t testing.TB) []*Target {
	t.Helper()
	var out []*Target
	for _, n := range l.Topology.Nodes {
		first, arrive := 1, true
		if n.Type == lab.Switch {
			first, arrive = 0, false
		}
		for port := first; port <= n.NumPorts; port++ {
			if _, linked := n.Links[port]; arrive && !linked {
				continue
			}
			at := 0
			if arrive {
				at = port
			}
			p, err := l.Topology.DRPath(l.From, n.Name, at)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, &Target{Node: n.Name, Type: n.Type, Port: port, Path: mad.FormatDRPath(p)})
		}
	}
	return out
}

// Each runs f for every target as parallel subtests, at most 4 at once (ibsim has 10
// client slots; each check holds one at a time).
func (l *Lab) Each(t *testing.T, targets []*Target, f func(t *testing.T, tg *Target)) {
	t.Helper()
	for _, tg := range targets {
		t.Run(tg.String(), func(t *testing.T) {
			t.Parallel()
			l.sem <- struct{}{}
			defer func() { <-l.sem }()
			f(t, tg)
		})
	}
}

// ResolveLIDs asks smpquery (by directed route) for each target's LID: a CA port's
// own, a switch's port 0's. The test stops if one cannot be read.
func (l *Lab) ResolveLIDs(t *testing.T, targets []*Target) {
	t.Helper()
	// Each subtest sets its own target's LID; t.Run returns once they all ended.
	t.Run("lids", func(t *testing.T) {
		l.Each(t, targets, func(t *testing.T, tg *Target) {
			port := tg.Port
			if tg.Type == lab.Switch {
				port = 0
			}
			lid, err := lab.ParseFields(l.Diag(t, "smpquery", "-D", "portinfo", tg.Path, strconv.Itoa(port))).Uint("Lid")
			if err != nil || lid == 0 {
				t.Fatalf("smpquery portinfo: LID %d, %v", lid, err)
			}
			tg.LID = int(lid)
		})
	})
	if t.Failed() {
		t.FailNow()
	}
}
