package cmdutil

import (
	"cmp"
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/internal/demo"
	"github.com/ibkey/ibkey/internal/ibverbs"
	"github.com/ibkey/ibkey/internal/query"
)

// Factory holds what main decides once for the whole process (streams, environment,
// clock, the signal context) and the root's persistent flags, and builds the rest
// lazily: building the command tree calls none of its methods, so completions and
// man pages can be generated anywhere.
type Factory struct {
	IOStreams *IOStreams
	// Getenv reads the environment; no package reads it on its own.
	Getenv func(string) string
	// Environ lists the whole environment (KEY=VALUE), for a command that must see
	// names it does not know in advance (job: look-alike settings); nil: none.
	Environ func() []string
	// Now is the clock: sample times, and the demo host's moving counters.
	Now func() time.Time

	// The root's persistent flags, parsed before any command runs.
	SysfsDir string // --sysfs (env IBKEY_SYSFS)
	Demo     bool   // --demo (env IBKEY_DEMO=1)
	Output   string // -o/--output
	NoColor  bool   // --no-color (env NO_COLOR)

	// madFlags are the MAD flags of the commands that have them (AddMADFlags): the
	// running command's say whether --ibsim was given (Host's hint).
	madFlags []*MADFlags
	// mad is the MAD flags every command of the tree that has them shares.
	mad *madFlagSet

	// Decided once from the flags and the streams (Decide).
	decided            bool
	format             Format
	colorOut, colorErr bool
}

// NewFactory is the factory for one command line: the process's streams, environment
// and clock.
func NewFactory(streams *IOStreams, getenv func(string) string, now func() time.Time) *Factory {
	return &Factory{IOStreams: streams, Getenv: getenv, Now: now}
}

// Context is the process context of a running command: main cancels it on SIGINT,
// SIGTERM, SIGHUP or SIGQUIT. Commands receive it through cobra (ExecuteContext).
func Context(c *cobra.Command) context.Context {
	if ctx := c.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}

// IsDemo reports whether the embedded demo host is selected: --demo, or IBKEY_DEMO
// set true without --sysfs (a flag wins over the environment, as --sysfs wins over
// IBKEY_SYSFS). Decide refuses --demo with --sysfs and an IBKEY_DEMO that is no
// boolean.
func (f *Factory) IsDemo() bool {
	if f.Demo || f.SysfsDir != "" {
		return f.Demo
	}
	demo, _ := f.envDemo()
	return demo
}

// envDemo reads IBKEY_DEMO as strconv.ParseBool does (1, t, true, TRUE, 0, f, false,
// ...); unset or empty is false.
func (f *Factory) envDemo() (bool, error) {
	v := f.Getenv("IBKEY_DEMO")
	if v == "" {
		return false, nil
	}
	demo, err := strconv.ParseBool(v)
	if err != nil {
		return false, Usagef("invalid IBKEY_DEMO=%q (accepted: 1 or true for the demo host; 0, false or unset for this host's sysfs)", v)
	}
	return demo, nil
}

// Host returns the host the flags (and IBKEY_SYSFS / IBKEY_DEMO) select.
func (f *Factory) Host() *query.Host {
	if f.IsDemo() {
		// The demo's counters move with the time elapsed since now (demo.LiveSysfs).
		return &query.Host{Sys: demo.LiveSysfs(f.Now), Label: demo.Label}
	}
	dir := cmp.Or(f.SysfsDir, f.Getenv("IBKEY_SYSFS"), "/sys")
	h := &query.Host{Sys: ibverbs.Open(dir), NoDevicesHint: f.noDevicesHint()}
	if filepath.Clean(dir) == "/sys" {
		// This machine's own devices (query.Host.Unopenable), as query.LocalVerbs
		// tells its /sys: "/sys/" is it too.
		h.CharDevs = "/dev/infiniband"
	}
	return h
}

// noDevicesHint is NoDevicesHint, or, when the running command was given --ibsim but
// reads the local host, how it reaches the simulated fabric instead (issue 25: the
// sysfs advice alone suggested the simulator was not used for lack of a device).
func (f *Factory) noDevicesHint() string {
	for _, m := range f.madFlags {
		if m.cmd.Flags().Parsed() && m.IbsimBase() != "" {
			return m.addressHint() + "; or " + NoDevicesHint
		}
	}
	return NoDevicesHint
}

// Format is how a command prints its data.
type Format int

// Output formats (-o).
const (
	FormatTable Format = iota
	FormatPlain
	FormatJSON
)

// OutputFormats are -o's accepted values.
var OutputFormats = []string{"table", "plain", "json"}

// Format is the output format decided once, before any command runs (Decide): -o
// wins, else table on a terminal. The error is the one Decide reported (it ends the
// command first, so a command never sees it).
func (f *Factory) Format() (Format, error) {
	if !f.decided {
		if err := f.Decide(); err != nil {
			return 0, err
		}
	}
	return f.format, nil
}

// Decide validates -o and decides the output format and the colour of stdout and
// stderr, once for the process. The root's PersistentPreRunE calls it, so a bad -o is
// reported before any command reads anything.
func (f *Factory) Decide() error {
	switch f.Output {
	case "":
		f.format = FormatPlain
		if f.IOStreams.OutTTY {
			f.format = FormatTable
		}
	case "table":
		f.format = FormatTable
	case "plain":
		f.format = FormatPlain
	case "json":
		f.format = FormatJSON
	default:
		return Usagef("invalid output format %q (accepted: %s)", f.Output, strings.Join(OutputFormats, ", "))
	}
	// Two hosts chosen at once: say so rather than read one of them silently.
	if f.Demo && f.SysfsDir != "" {
		return Usagef("--demo and --sysfs %q both choose the host to read: give one", f.SysfsDir)
	}
	if _, err := f.envDemo(); err != nil {
		return err
	}
	// --no-color and NO_COLOR (https://no-color.org) turn colour off, and so does
	// TERM=dumb (a terminal that says it has no capabilities: terminfo's "dumb" entry
	// has no setaf); a stream that is not a terminal is never coloured.
	allowed := !f.NoColor && f.Getenv("NO_COLOR") == "" && f.Getenv("TERM") != "dumb"
	f.colorOut = allowed && f.IOStreams.OutTTY
	f.colorErr = allowed && f.IOStreams.ErrTTY
	f.columns()
	f.decided = true
	return nil
}

// columns applies COLUMNS, when it is a positive number, to the widths the output
// fits: POSIX (XBD 8.3) makes it "the user's preferred width in column positions for
// the terminal screen or window", and, as ls(1) does, it wins over the window's size
// and holds on a pipe too (COLUMNS=200 ibkey ... -o table | less -S). stderr is
// wrapped only on a terminal, to COLUMNS there: on a pipe or in a file its lines are
// records for logs. Any other value is ignored, as ls(1) ignores it (with a warning
// there); the live screen of watch follows its window, which it is told of as it
// changes.
func (f *Factory) columns() {
	n, err := strconv.Atoi(f.Getenv("COLUMNS"))
	if err != nil || n <= 0 {
		return
	}
	f.IOStreams.OutWidth = n
	if f.IOStreams.ErrTTY {
		f.IOStreams.ErrWidth = n
	}
}

// ColorOut reports whether stdout may be coloured (a terminal, colour allowed).
func (f *Factory) ColorOut() bool { f.decide(); return f.colorOut }

// ColorErr reports whether stderr may be coloured (a terminal, colour allowed).
func (f *Factory) ColorErr() bool { f.decide(); return f.colorErr }

// decide makes the decision for callers that cannot report an error (colour); a bad -o
// is reported by Format and by the root before any command runs.
func (f *Factory) decide() {
	if !f.decided {
		_ = f.Decide()
	}
}

// Notices returns the printer of warnings and notes on stderr, one for the process
// (IOStreams.Notices).
func (f *Factory) Notices() *Notices { return f.IOStreams.Notices(f.ColorErr()) }

// NoDevicesHint is what a command adds when the sysfs tree has no RDMA devices.
const NoDevicesHint = "point --sysfs at a saved tree, or try --demo"
