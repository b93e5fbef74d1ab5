package cmdutil

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/ibkey/ibkey/internal/query"
	"github.com/ibkey/ibkey/internal/textsafe"
)

// eraseLine returns the cursor to the start of the line and erases it: CR, then
// ECMA-48 "Erase in Line" (CSI K), which every terminal ibkey runs on understands.
const eraseLine = "\r\x1b[K"

// SweepProgress draws a running sweep's progress on one line of stderr, redrawn in
// place and erased by Done. A nil *SweepProgress draws nothing, so callers need not
// test whether there is a display.
type SweepProgress struct {
	mu    sync.Mutex
	w     io.Writer
	drawn bool
}

// NewSweepProgress is the progress display of a sweep, or nil when there must be
// none: stderr is not a terminal (a pipe, a file, a log), or the command writes JSON
// to a pipe (a script runs it; stderr is then for what went wrong). It is decided from
// the streams and the output format decided once for the process.
func NewSweepProgress(s *IOStreams, format Format) *SweepProgress {
	if s == nil || !s.ErrTTY || (format == FormatJSON && !s.OutTTY) {
		return nil
	}
	return &SweepProgress{w: s.ErrOut}
}

// Update redraws the line with p. query.Sweep calls it at most ten times a second,
// from its sampling goroutine.
func (d *SweepProgress) Update(p query.SweepProgress) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	fmt.Fprintf(d.w, "%ssweeping: %s found, %s in flight, %s sent, %s", eraseLine,
		textsafe.Plural(p.Nodes, "node", "nodes"), textsafe.Plural(p.InFlight, "MAD", "MADs"), textsafe.Plural(p.Sent, "MAD", "MADs"),
		p.Elapsed.Round(100*time.Millisecond))
	d.drawn = true
}

// Done erases the line, so what the command prints next starts on a clean line.
func (d *SweepProgress) Done() {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.drawn {
		io.WriteString(d.w, eraseLine)
		d.drawn = false
	}
}

// Option is the display as a query.SweepOptions.Progress value (nil when there is no
// display, so the sweep does not even sample).
func (d *SweepProgress) Option() func(query.SweepProgress) {
	if d == nil {
		return nil
	}
	return d.Update
}
