package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/ibkey/ibkey/internal/ibverbs"
	"github.com/ibkey/ibkey/internal/query"
)

// fabricSample: 40 fabric ports with long node descriptions and all four partition
// counters readable. Port 0 drops a steady 3 per second, port 1 20,000 per second,
// port 2 saturates its 8-bit counter at sample 3, port 3 is reset at sample 4.
func fabricSample(i int) *query.Sample {
	cs := sets()
	s := &query.Sample{Time: t0.Add(time.Duration(i) * time.Second), Counters: cs.Violations}
	for p := range 40 {
		ps := query.PortSample{Ref: ref(fmt.Sprintf("leaf%02d HCA-%d", p/2, p%2+1), 1),
			Address: fmt.Sprintf("lid %d", p+4), State: "ACTIVE"}
		rcv, pk := uint64(0), uint64(0)
		switch p {
		case 0:
			rcv = 3 * uint64(i)
		case 1:
			pk = 20000 * uint64(i)
		case 2:
			rcv = min(100*uint64(i), 255)
		case 3:
			rcv = 40 + uint64(i)
			if i >= 4 {
				rcv = 1
			}
		}
		for _, c := range s.Counters {
			switch c.Name {
			case query.RcvConstraintErrors:
				ps.Readings = append(ps.Readings, val(rcv))
			case query.PKeyViolations:
				ps.Readings = append(ps.Readings, val(pk))
			default:
				ps.Readings = append(ps.Readings, val(0))
			}
		}
		s.Ports = append(s.Ports, ps)
	}
	return s
}

func sized(m Model, w, h int) Model {
	m2, _ := m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return m2.(Model)
}

func loadPortFake(query.PortRef, string) (*query.PortView, error) {
	raw := []ibverbs.PKeyEntry{{Index: 0, Value: 0xffff}, {Index: 1, Value: 0}, {Index: 2, Value: 0x8001}, {Index: 3, Value: 0x0001}}
	return &query.PortView{Port: &ibverbs.Port{State: ibverbs.Enum{Num: ibverbs.StateActive, Name: "ACTIVE"}},
		Table: query.DecodeTable(raw)}, nil
}

// TestLayoutGolden: the screens at 80x24, 120x40 and 200x50, ANSI stripped.
func TestLayoutGolden(t *testing.T) {
	screens := []struct {
		name string
		keys []string
	}{
		{"table", nil},
		{"scrolled", []string{"pgdown", "down"}},
		{"filtered", []string{"/", "l", "e", "a", "f", "0", "1", "enter"}},
		{"detail", []string{"down", "down", "enter"}},
		{"help", []string{"?"}},
	}
	for _, size := range [][2]int{{80, 24}, {120, 40}, {200, 50}} {
		for _, sc := range screens {
			t.Run(fmt.Sprintf("%s_%dx%d", sc.name, size[0], size[1]), func(t *testing.T) {
				m := sized(New(Options{Interval: time.Second, Label: "fabric: 40 LIDs via ibsim", LoadPort: loadPortFake}), size[0], size[1])
				for i := range 6 {
					m, _ = step(t, m, sampleMsg{sample: fabricSample(i)})
				}
				for _, k := range sc.keys {
					var cmd tea.Cmd
					m, cmd = step(t, m, keyMsg(k))
					if k == "enter" && cmd != nil {
						m, _ = step(t, m, cmd())
					}
				}
				v := view(m)
				lines := strings.Split(v, "\n")
				if len(lines) > size[1] {
					t.Errorf("%d lines on a %d-line terminal", len(lines), size[1])
				}
				for _, l := range lines {
					if w := ansi.StringWidth(l); w > size[0] {
						t.Errorf("line of %d columns on %d: %q", w, size[0], l)
					}
				}
				golden.RequireEqual(t, v)
			})
		}
	}
}

// TestLayout80ShowsTransmitAndViolations: at 80x24 the table has receive and
// transmit constraint errors and both violation columns.
func TestLayout80ShowsTransmitAndViolations(t *testing.T) {
	m := sized(New(Options{Interval: time.Second}), 80, 24)
	for i := range 3 {
		m, _ = step(t, m, sampleMsg{sample: fabricSample(i)})
	}
	v := view(m)
	for _, want := range []string{"RCV CONSTR", "XMIT CONSTR", "P_KEY VIOL", "Q_KEY VIOL", "ports 1-"} {
		if !strings.Contains(v, want) {
			t.Errorf("80x24 lacks %q:\n%s", want, v)
		}
	}
}

// TestTrendDoesNotMislead: a steady rate is a low flat line (not full bars), a
// saturated counter shows ! (not quiet), and samples at another interval are left out.
func TestTrendDoesNotMislead(t *testing.T) {
	m := sized(New(Options{Interval: time.Second}), 200, 50)
	for i := range 8 {
		m, _ = step(t, m, sampleMsg{sample: fabricSample(i)})
	}
	tr := func(p int, name string) string {
		return ansi.Strip(m.trend(m.snap.Ports[p].Ref, name, 6))
	}
	if got := tr(0, query.RcvConstraintErrors); got != "▂▂▂▂▂▂" {
		t.Errorf("steady 3/s: %q, want a flat low line", got)
	}
	if got := tr(1, query.PKeyViolations); got != "▆▆▆▆▆▆" {
		t.Errorf("steady 20k/s: %q, want a flat line at the 10k decade", got)
	}
	if got := tr(2, query.RcvConstraintErrors); !strings.HasSuffix(got, "!!!") {
		t.Errorf("saturated: %q, want ! for every sample while saturated", got)
	}
	// A sample 10 s later (a pause, or + pressed): earlier samples are not drawn beside it.
	s := fabricSample(8)
	s.Time = s.Time.Add(9 * time.Second)
	m, _ = step(t, m, sampleMsg{sample: s})
	if got := tr(0, query.RcvConstraintErrors); got != "     ▁" {
		t.Errorf("after an interval change: %q, want only the new sample", got)
	}
}
