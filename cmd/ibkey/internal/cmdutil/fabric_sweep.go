package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/query"
	"github.com/ibkey/ibkey/internal/textsafe"
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
	s.AddFileFlags(c, timeoutUsage)
	AddNodeNameMapFlag(c, &s.NodeNameMap)
	s.MAD.NoMADs = s.noMADs
	return s
}

// noMADs is why a run given --fabric-file sends no MADs (MADFlags.NoMADs).
func (s *FabricSweep) noMADs() string {
	if s.File == "" {
		return ""
	}
	return fmt.Sprintf("with --fabric-file, '%s' reads the saved sweep (leave out --fabric-file to sweep the fabric, or the MAD flags)", s.MAD.cmd.CommandPath())
}

// AddFileFlags adds --fabric-file and --timeout alone, to a command that adds the MAD
// flags itself (can-talk: it sweeps only for endpoints a sweep resolves, through a
// transport it opens).
func (s *FabricSweep) AddFileFlags(c *cobra.Command, timeoutUsage string) {
	c.Flags().StringVar(&s.File, "fabric-file", "", "read a saved sweep from `FILE` (ibkey fabric discover -o json > FILE) instead of sweeping the fabric")
	_ = c.MarkFlagFilename("fabric-file", "json")
	s.AddTimeoutFlag(c, timeoutUsage)
}

// ReadFabricFile decodes a saved sweep (--fabric-file, or a file `fabric diff`
// compares: query.ReadFabricFile). Every problem is bad input (exit 2) naming the
// flag, the file and what is wrong with it.
func ReadFabricFile(path string) (*fabric.Fabric, error) {
	return ReadFabricFileAs(path, "--fabric-file")
}

// ReadFabricFileAs is ReadFabricFile for a file the command line gives as what (a
// flag, or an argument: "fabric diff").
func ReadFabricFileAs(path, what string) (*fabric.Fabric, error) {
	f, err := query.ReadFabricFile(path)
	var fe *query.FabricFileError
	if errors.As(err, &fe) {
		prefix := what + " "
		if fe.Path == "" {
			prefix = what + ": " // the open's error names the file
		}
		return nil, &query.UsageError{Msg: textsafe.Message(prefix + fe.Error()), Err: fe}
	}
	return f, err
}

// AddTimeoutFlag adds --timeout alone (fabric diff: its files are given as arguments):
// a duration with a unit, kept as typed for its messages ("0", not "0s").
func (s *FabricSweep) AddTimeoutFlag(c *cobra.Command, usage string) {
	plainDurationVarP(c.Flags(), &s.Timeout, "timeout", "", 5*time.Minute, usage, "")
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
	names, err := ReadNodeNameMap(s.NodeNameMap)
	if err != nil {
		return err
	}
	// Nodes are named from the map (its names terminal-safe: query.ParseNodeNameMap) before the
	// command prints anything made from them; a fabric file being written keeps the
	// NodeDescriptions as read (already terminal-safe: textsafe where they entered).
	inner := fn
	fn = func(f *fabric.Fabric) error {
		if !s.RawNames {
			names.Rename(f)
		}
		return inner(f)
	}
	if s.File != "" {
		f, err := ReadFabricFile(s.File)
		if err != nil {
			return err
		}
		n.Label(fmt.Sprintf("fabric: %s: %s", s.File, query.SweepSummary(f)))
		return PartialResult(n, f, needTables, fn(f))
	}
	return s.Sweep(ctx, n, noTables, func(f *fabric.Fabric) error { return PartialResult(n, f, needTables, fn(f)) })
}

// Sweep runs a sweep now and gives fn what was read, however partial (fn decides with
// PartialResult). ctx is the command's (main cancels it on a signal); --timeout,
// counted from now, bounds the whole sweep. Attaching runs under ctx alone: the
// transport bounds it itself (ibsim: a few seconds; umad opens a local device), and a
// CONNECT cut short would leave ibsim a client slot no one frees when it gets to it (an
// abandoned connect), so a --timeout that expires while attaching takes effect right
// after. A sweep that read nothing is an error: exit 4 when --timeout or ctx ended it,
// else exit 3 (no fabric access).
func (s *FabricSweep) Sweep(ctx context.Context, n *Notices, noTables bool, fn func(f *fabric.Fabric) error) error {
	sctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	return s.MAD.With(ctx, func(ctx context.Context, fab *query.Fabric) error {
		// Progress on stderr while sweeping, when a person watches it
		// (NewSweepProgress), erased before anything else is printed.
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
		n.Label(fmt.Sprintf("fabric: %s", query.SweepSummary(f)))
		return fn(f)
	})
}

// PartialResult is err after fn printed f, unless f is partial (fabric.NotCheckedLines
// is not empty): then what it lacks goes to n's stream in one line
// (fabric.NotCheckedSummary) and the result is exit 4. With needTables, tables the sweep
// did not read (--no-tables) are gaps. An error other than an exit code (a write
// error) wins.
func PartialResult(n *Notices, f *fabric.Fabric, needTables bool, err error) error {
	if err != nil && !Reported(err) {
		return err
	}
	msg := fabric.NotCheckedSummary(f.NotRead(needTables))
	if msg == "" {
		return err
	}
	fmt.Fprintf(n.w, "ibkey: partial sweep: %s; what was read is shown above, and what was not is not checked\n", msg)
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
