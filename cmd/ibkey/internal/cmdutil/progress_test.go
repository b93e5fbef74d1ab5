package cmdutil

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/query"
)

// TestSweepProgress: a display only when stderr is a terminal and not for JSON to a
// pipe; each update redraws the one line in place; Done erases it.
func TestSweepProgress(t *testing.T) {
	for _, c := range []struct {
		name           string
		outTTY, errTTY bool
		format         Format
		want           bool
	}{
		{"terminal", true, true, FormatTable, true},
		{"plain to a pipe, stderr a terminal", false, true, FormatPlain, true},
		{"json to a terminal", true, true, FormatJSON, true},
		{"json to a pipe", false, true, FormatJSON, false},
		{"stderr a pipe", true, false, FormatTable, false},
		{"all pipes", false, false, FormatPlain, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var errOut bytes.Buffer
			d := NewSweepProgress(&IOStreams{ErrOut: &errOut, OutTTY: c.outTTY, ErrTTY: c.errTTY}, c.format)
			if (d != nil) != c.want || (d.Option() != nil) != c.want {
				t.Fatalf("display %v, want %v", d != nil, c.want)
			}
			d.Update(query.SweepProgress{Nodes: 1, InFlight: 8, Sent: 9, Elapsed: 120 * time.Millisecond})
			d.Update(query.SweepProgress{Nodes: 12, InFlight: 1, Sent: 40, Elapsed: 1234 * time.Millisecond})
			d.Done()
			got := errOut.String()
			if !c.want {
				if got != "" {
					t.Fatalf("wrote %q", got)
				}
				return
			}
			want := eraseLine + "sweeping: 1 node found, 8 MADs in flight, 9 MADs sent, 100ms" +
				eraseLine + "sweeping: 12 nodes found, 1 MAD in flight, 40 MADs sent, 1.2s" + eraseLine
			if got != want {
				t.Fatalf("wrote %q\nwant  %q", got, want)
			}
			if strings.Contains(got, "\n") {
				t.Fatal("progress must stay on one line")
			}
		})
	}
	var nilDisplay *SweepProgress
	nilDisplay.Done() // no display: nothing to erase, no panic
}
