package cmdutil

import (
	"context"
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
	// Now is the clock: sample times, and the demo host's moving counters.
	Now func() time.Time

	// The root's persistent flags, parsed before any command runs.
	SysfsDir string // --sysfs (env IBKEY_SYSFS)
	Demo     bool   // --demo (env IBKEY_DEMO=1)
	Output   string // -o/--output
	NoColor  bool   // --no-color (env NO_COLOR)
}

// Context is the process context of a running command: main cancels it on SIGINT,
// SIGTERM, SIGHUP or SIGQUIT. Commands receive it through cobra (ExecuteContext).
func Context(c *cobra.Command) context.Context {
	if ctx := c.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}

// IsDemo reports whether the embedded demo host is selected.
func (f *Factory) IsDemo() bool { return f.Demo || f.Getenv("IBKEY_DEMO") == "1" }

// Host returns the host the flags (and IBKEY_SYSFS / IBKEY_DEMO) select.
func (f *Factory) Host() *query.Host {
	if f.IsDemo() {
		// The demo's counters move with the time elapsed since now (counters.txt).
		return &query.Host{Sys: demo.LiveSysfs(f.Now), Label: demo.Label}
	}
	dir := f.SysfsDir
	if dir == "" {
		dir = f.Getenv("IBKEY_SYSFS")
	}
	if dir == "" {
		dir = "/sys"
	}
	return &query.Host{Sys: ibverbs.Open(dir)}
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

// Format decides table vs plain vs JSON: -o wins, else table on a terminal.
func (f *Factory) Format() (Format, error) {
	switch f.Output {
	case "":
		if f.IOStreams.OutTTY {
			return FormatTable, nil
		}
		return FormatPlain, nil
	case "table":
		return FormatTable, nil
	case "plain":
		return FormatPlain, nil
	case "json":
		return FormatJSON, nil
	}
	return 0, Usagef("invalid output format %q (accepted: %s)", f.Output, strings.Join(OutputFormats, ", "))
}

// colorAllowed is the user's choice: --no-color and NO_COLOR (https://no-color.org) turn
// colour off.
func (f *Factory) colorAllowed() bool { return !f.NoColor && f.Getenv("NO_COLOR") == "" }

// ColorOut reports whether stdout may be coloured (a terminal, colour allowed).
func (f *Factory) ColorOut() bool { return f.IOStreams.OutTTY && f.colorAllowed() }

// ColorErr reports whether stderr may be coloured (a terminal, colour allowed).
func (f *Factory) ColorErr() bool { return f.IOStreams.ErrTTY && f.colorAllowed() }

// Notices returns the printer of warnings and notes on stderr.
func (f *Factory) Notices() *Notices { return NewNotices(f.IOStreams.ErrOut, f.ColorErr()) }
