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
)

// FabricSweep is where a fabric command's fabric comes from: a saved sweep
// (--fabric-file) or a sweep run now through the transport the MAD flags select, the
// whole command bounded by --timeout and by the command's context (main cancels it
// on a signal).
type FabricSweep struct {
	MAD     *MADFlags
	File    string        // --fabric-file
	Timeout time.Duration // --timeout
	// NodeNameMap is --node-name-map: the fabric's nodes are renamed from it before
	// the command sees the fabric, unless RawNames (a fabric file being written keeps
	// the NodeDescriptions as read).
	NodeNameMap string
	RawNames    bool
}

// timeoutUsage is --timeout's help: what happens when it expires.
const timeoutUsage = "bound the whole command: stop sweeping this long after it started and report what was read (a partial sweep, exit 4)"

// AddFabricSweepFlags adds the MAD flags, --fabric-file and --timeout to c.
func AddFabricSweepFlags(c *cobra.Command, f *Factory) *FabricSweep {
	s := &FabricSweep{MAD: AddMADFlags(c, f)}
	c.Flags().StringVar(&s.File, "fabric-file", "", "read a saved sweep from `FILE` (ibkey fabric discover -o json > FILE) instead of sweeping the fabric")
	_ = c.MarkFlagFilename("fabric-file", "json")
	s.AddTimeoutFlag(c, timeoutUsage)
	AddNodeNameMapFlag(c, &s.NodeNameMap)
	return s
}

// Names reads --node-name-map (nil when not given).
func (s *FabricSweep) Names() (*NodeNameMap, error) {
	if s.NodeNameMap == "" {
		return nil, nil
	}
	return ReadNodeNameMap(s.NodeNameMap)
}

// AddTimeoutFlag adds --timeout alone (fabric diff: its files are given as arguments).
func (s *FabricSweep) AddTimeoutFlag(c *cobra.Command, usage string) {
	c.Flags().DurationVar(&s.Timeout, "timeout", 5*time.Minute, usage)
}

// Validate checks --timeout.
func (s *FabricSweep) Validate() error {
	if s.Timeout <= 0 {
		return Usagef("invalid --timeout %v (accepted: a positive duration, e.g. 30s)", s.Timeout)
	}
	return nil
}

// Load gives fn the fabric: the saved file, or a sweep run now (see Sweep).
// fn prints what it has; afterwards a partial fabric (the sweep stopped early, reads
// that failed, links with no answer) is reported on n and the result is exit 4,
// whatever fn answered, unless fn failed outright.
//
// noTables skips the P_Key tables in a sweep run now. A command that answers from the
// tables passes needTables: then tables missing from a saved sweep (made with
// --no-tables) are gaps too.
func (s *FabricSweep) Load(ctx context.Context, n *Notices, noTables, needTables bool, fn func(f *fabric.Fabric) error) error {
	// The map is read first: a bad one is reported before a sweep is run.
	names, err := s.Names()
	if err != nil {
		return err
	}
	// Node descriptions are named from the map and sanitised (SanitizeText) before the
	// command prints anything made from them; a fabric file being written keeps them as
	// read, and is sanitised only after, for the notes on stderr.
	inner := fn
	fn = func(f *fabric.Fabric) error {
		if s.RawNames {
			err := inner(f)
			SanitizeFabric(f)
			return err
		}
		names.Rename(f)
		SanitizeFabric(f)
		return inner(f)
	}
	if s.File != "" {
		f, err := ReadFabricFile(s.File)
		if err != nil {
			return err
		}
		n.Label(fmt.Sprintf("fabric: %s: %s", s.File, SweepSummary(f)))
		return PartialResult(n, f, needTables, fn(f))
	}
	return s.Sweep(ctx, n, noTables, func(f *fabric.Fabric) error { return PartialResult(n, f, needTables, fn(f)) })
}

// TablesNotRead counts the tables a sweep holds no answer for without a failure:
// end ports and cabled ports that are not DOWN, swept with --no-tables.
func TablesNotRead(f *fabric.Fabric) int {
	k := 0
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p.PKeys == nil && p.PKeysError == "" && p.State != check.StateDown && (n.IsEndPort(p) || p.Peer != nil) {
				k++
			}
		}
	}
	return k
}

// Sweep runs a sweep now and gives fn what was read, however partial (fn decides with
// PartialResult). ctx is the command's (main cancels it on a signal); --timeout,
// counted from now, bounds the whole sweep. Attaching runs under ctx alone: the
// transport bounds it itself (ibsim: a few seconds; umad opens a local device), and a
// CONNECT cut short would leave ibsim a client slot no one frees when it gets to it (an
// abandoned connect), so a --timeout that expires while attaching takes effect right
// after. A sweep that read nothing is an error: exit 4 when --timeout or ctx ended it,
// else exit 3 (no fabric access).
func (s *FabricSweep) Sweep(ctx context.Context, n *Notices, noTables bool, fn func(f *fabric.Fabric) error) (err error) {
	if err := s.Validate(); err != nil {
		return err
	}
	sctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	if s.MAD.IbsimBase() != "" && s.MAD.Window == 0 {
		s.MAD.Window = sweepWindowIbsim
	}
	fab, err := s.MAD.Open(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := fab.T.Close(); cerr != nil && err == nil {
			n.Warn(fmt.Sprintf("closing %s: %v", fab.Via, cerr))
		}
	}()
	// Progress on stderr while sweeping, when a person watches it (NewSweepProgress),
	// erased before anything else is printed.
	format, _ := s.MAD.f.Format()
	progress := NewSweepProgress(s.MAD.f.IOStreams, format)
	f, err := query.Sweep(sctx, fab.T, query.SweepOptions{NoTables: noTables, Source: fab.Via, Progress: progress.Option()})
	progress.Done()
	if f == nil {
		if expired(sctx) && ctx.Err() == nil {
			fmt.Fprintf(n.w, "ibkey: --timeout %v expired before anything was read: %v (via %s)\n", s.Timeout, err, fab.Via)
			return Exit(ExitIncomplete)
		}
		return &query.EnvError{Msg: fmt.Sprintf("%v (via %s)", err, fab.Via)}
	}
	n.Label(fmt.Sprintf("fabric: %s", SweepSummary(f)))
	return fn(f)
}

// FabricIncomplete lists the gaps of a swept or saved fabric, as a document's
// "incomplete": empty exactly when PartialResult does not make the command exit 4
// (it decides from this list). Kinds: partial-sweep (the sweep stopped early, or
// links whose far end did not answer: the nodes behind them were not swept),
// unread-node (node attributes or PortInfo not read), unread-table (P_Key tables not
// read; with needTables also those the sweep skipped, --no-tables).
func FabricIncomplete(f *fabric.Fabric, needTables bool) []Incomplete {
	g := query.FabricGaps(f)
	var out []Incomplete
	if g.Stopped != "" {
		out = append(out, Incomplete{IncompletePartialSweep, "the sweep stopped early (" + g.Stopped + "): nodes past that point were not swept"})
	}
	if k := len(f.Unreachable); k > 0 {
		msg := Plural(k, "link", "links") + " with no answer from the far end (the nodes behind them are missing)"
		out = append(out, Incomplete{IncompletePartialSweep, msg + ": " + unreachableList(f)})
	}
	if g.NodeReads > 0 {
		out = append(out, Incomplete{IncompleteUnreadNode, Plural(g.NodeReads, "node attribute read", "node attribute reads") + " (NodeDescription, SwitchInfo) failed"})
	}
	if g.PortReads > 0 {
		out = append(out, Incomplete{IncompleteUnreadNode, Plural(g.PortReads, "PortInfo read", "PortInfo reads") + " failed"})
	}
	if g.TableReads > 0 {
		out = append(out, Incomplete{IncompleteUnreadTable, Plural(g.TableReads, "P_Key table", "P_Key tables") + " not read"})
	}
	if needTables {
		if k := TablesNotRead(f); k > 0 {
			out = append(out, Incomplete{IncompleteUnreadTable, Plural(k, "P_Key table", "P_Key tables") + " not in the sweep (made with --no-tables)"})
		}
	}
	return out
}

// unreachableList names up to three of the links of f whose far end did not answer,
// and how many more there are.
func unreachableList(f *fabric.Fabric) string {
	var where []string
	for i, u := range f.Unreachable {
		if i == 3 {
			where = append(where, fmt.Sprintf("and %d more", len(f.Unreachable)-3))
			break
		}
		where = append(where, fmt.Sprintf("behind %s (DR path %s): %s", f.Label(u.From), u.Path, u.Error))
	}
	return strings.Join(where, "; ")
}

// PartialResult is err after fn printed f, unless f is partial (FabricIncomplete is
// not empty): then the gaps go to n's stream (one line, with up to three of the links
// that did not answer) and the result is exit 4. With needTables, tables the sweep did
// not read (--no-tables) are gaps. An error other than an exit code (a write error)
// wins.
func PartialResult(n *Notices, f *fabric.Fabric, needTables bool, err error) error {
	if err != nil && !Reported(err) {
		return err
	}
	if len(FabricIncomplete(f, needTables)) == 0 {
		return err
	}
	gaps := query.FabricGaps(f)
	var skipped int
	if needTables {
		skipped = TablesNotRead(f)
	}
	var parts []string
	if gaps.Partial() {
		parts = append(parts, gaps.String())
	}
	if skipped > 0 {
		parts = append(parts, Plural(skipped, "P_Key table", "P_Key tables")+" not in the sweep (made with --no-tables)")
	}
	msg := "partial sweep: " + strings.Join(parts, "; ")
	if len(f.Unreachable) > 0 {
		msg += ": " + unreachableList(f)
	}
	fmt.Fprintf(n.w, "ibkey: %s; what was read is shown above, and what was not is not checked\n", msg)
	return Exit(ExitIncomplete)
}

// expired reports whether ctx's deadline has passed: a transport that waits until the
// deadline may return before ctx's own timer has marked it done.
func expired(ctx context.Context) bool {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return true
	}
	d, ok := ctx.Deadline()
	return ok && !time.Now().Before(d)
}
