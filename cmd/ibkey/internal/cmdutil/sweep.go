package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/query"
	"github.com/ibkey/ibkey/internal/textsafe"
)

// sweepWindowIbsim is the MADs in flight during a sweep on ibsim. Measured with
// BenchmarkLabSweep (internal/query) on fat trees of 50 and 512 nodes: 8 is the
// fastest, 16 (the transport's default) 2-3 times slower, probably because Linux queues
// at most net.unix.max_dgram_qlen (10) datagrams on ibsim's unix socket.
const sweepWindowIbsim = 8

// FabricSource is where a fabric command's sweep comes from: a saved file
// (--fabric-file) or a sweep run now through the transport the global flags select.
type FabricSource struct {
	MAD     *MADFlags
	Notices *Notices      // nil: the factory's (set it only to print elsewhere)
	File    string        // --fabric-file
	Timeout time.Duration // --timeout
}

// AddFlags binds --fabric-file and --timeout.
func (s *FabricSource) AddFlags(c *cobra.Command) {
	c.Flags().StringVar(&s.File, "fabric-file", "", "read a saved sweep from `FILE` (ibkey fabric discover -o json > FILE) instead of sweeping the fabric")
	c.Flags().DurationVar(&s.Timeout, "timeout", 5*time.Minute, "stop the sweep after this long and report what was read (exit 3)")
	_ = c.MarkFlagFilename("fabric-file", "json")
}

// ReadFabricFile decodes a saved sweep (--fabric-file, or a file `fabric diff`
// compares). Every problem is bad input (exit 2) naming the flag, the file and what is
// wrong with it.
func ReadFabricFile(path string) (*fabric.Fabric, error) {
	f, err := query.ReadFabricFile(path)
	var fe *query.FabricFileError
	if errors.As(err, &fe) {
		flag := "--fabric-file "
		if fe.Path == "" {
			flag = "--fabric-file: " // the open's error names the file
		}
		return nil, &query.UsageError{Msg: textsafe.Message(flag + fe.Error()), Err: fe}
	}
	return f, err
}

// Sweep runs a sweep through the open transport. A sweep that stopped early comes back
// with what it read and the error.
func (s *FabricSource) Sweep(ctx context.Context, fab *query.Fabric, noTables bool) (*fabric.Fabric, error) {
	f, err := query.Sweep(ctx, fab.T, query.SweepOptions{Timeout: s.Timeout, NoTables: noTables, Source: fab.Via})
	if f == nil {
		return nil, &query.EnvError{Msg: fmt.Sprintf("%v (via %s)", err, fab.Via)}
	}
	return f, err
}

// Prepare checks --timeout and sets the transport up for a sweep (With calls it).
func (s *FabricSource) Prepare() error {
	if s.Timeout <= 0 {
		return &query.UsageError{Msg: fmt.Sprintf("invalid --timeout %v (accepted: a positive duration, e.g. 30s)", s.Timeout)}
	}
	if s.MAD.IbsimBase() != "" && s.MAD.Window == 0 {
		s.MAD.Window = sweepWindowIbsim
	}
	return nil
}

// With gives fn the fabric: the saved file, or a sweep run now. fn prints what it has;
// afterwards a partial sweep (stopped early, or nodes that did not answer) is an
// environment problem, exit 3, whatever fn returned.
func (s *FabricSource) With(ctx context.Context, noTables bool, fn func(f *fabric.Fabric) error) error {
	n := s.Notices
	if n == nil {
		n = s.MAD.f.Notices()
	}
	if s.File != "" {
		f, err := ReadFabricFile(s.File)
		if err != nil {
			return err
		}
		n.Label(fmt.Sprintf("fabric: %s: %s", s.File, SweepSummary(f)))
		return partialError(f, fn(f))
	}
	if err := s.Prepare(); err != nil {
		return err
	}
	return s.MAD.With(ctx, func(ctx context.Context, fab *query.Fabric) error {
		f, err := s.Sweep(ctx, fab, noTables)
		if f == nil {
			return err
		}
		n.Label(fmt.Sprintf("fabric: %s", SweepSummary(f)))
		return partialError(f, fn(f))
	})
}

// partialError is exit 3 for a partial sweep, after its output; else err.
func partialError(f *fabric.Fabric, err error) error {
	var why []string
	if f.Incomplete != "" {
		why = append(why, "the sweep stopped early: "+f.Incomplete)
	}
	if n := len(f.Unreachable); n > 0 {
		why = append(why, fmt.Sprintf("%d %s did not answer, %s", n, pluralWord(n, "node", "nodes"), unreachableList(f)))
	}
	if len(why) == 0 {
		return err
	}
	return &query.EnvError{Msg: "partial sweep: " + strings.Join(why, "; ") + "; what was read is shown above"}
}

func pluralWord(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// SweepSummary is "6 nodes (2 switches, 4 CAs), 9 links, via X at T in D".
func SweepSummary(f *fabric.Fabric) string {
	var sw, ca, rt int
	for _, n := range f.Nodes {
		switch n.Type {
		case check.NodeSwitch:
			sw++
		case check.NodeRouter:
			rt++
		default:
			ca++
		}
	}
	kinds := []string{Plural(sw, "switch", "switches"), Plural(ca, "CA", "CAs")}
	if rt > 0 {
		kinds = append(kinds, Plural(rt, "router", "routers"))
	}
	s := fmt.Sprintf("%s (%s), %s", Plural(len(f.Nodes), "node", "nodes"), strings.Join(kinds, ", "), Plural(len(f.Links()), "link", "links"))
	if f.Source != "" {
		s += ", swept via " + f.Source
	}
	if !f.SweptAt.IsZero() {
		s += " at " + f.SweptAt.UTC().Format(time.RFC3339)
	}
	return s + fmt.Sprintf(" in %v", f.Duration.Round(time.Millisecond))
}
