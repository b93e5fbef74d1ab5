// Package tui holds ibkey's bubbletea screens; nothing else imports bubbletea.
package tui

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/ibkey/ibkey/internal/query"
)

// Sampler reads one sample; *query.Sampler is one, tests use fakes. Take runs inside
// a tea.Cmd, never in Update.
type Sampler interface {
	Take(all bool) *query.Sample
}

// Options configure the counters screen.
type Options struct {
	Sampler  Sampler
	Interval time.Duration
	// All starts with every error counter instead of the partition counters.
	All bool
	// Label names a host that is not this machine (the demo host); "" otherwise.
	Label string
	// Color: false renders without colors (NO_COLOR, --no-color, tests).
	Color bool
}

// Intervals are the steps + and - move through.
var Intervals = []time.Duration{
	100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second, time.Minute,
}

// Messages. Every sample is read in a tea.Cmd and comes back as a sampleMsg; the
// next one is requested by a tickMsg armed when the previous sample arrived, so
// samples never overlap. gen invalidates ticks armed before a pause or an interval
// change.
type (
	sampleMsg struct{ sample *query.Sample }
	tickMsg   struct{ gen int }
)

type keyMap struct {
	Pause, Faster, Slower, Sort, All, Baseline, Help, Quit key.Binding
}

func (k keyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Pause, k.Slower, k.Faster, k.Sort, k.All, k.Baseline, k.Quit}
}

func (k keyMap) FullHelp() [][]key.Binding { return [][]key.Binding{k.ShortHelp(), {k.Help}} }

func newKeyMap() keyMap {
	return keyMap{
		Pause:    key.NewBinding(key.WithKeys("p", " "), key.WithHelp("p", "pause")),
		Faster:   key.NewBinding(key.WithKeys("-", "_"), key.WithHelp("-", "faster")),
		Slower:   key.NewBinding(key.WithKeys("+", "="), key.WithHelp("+", "slower")),
		Sort:     key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "sort")),
		All:      key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "all counters")),
		Baseline: key.NewBinding(key.WithKeys("b"), key.WithHelp("b", "reset baseline")),
		Help:     key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Quit:     key.NewBinding(key.WithKeys("q", "ctrl+c", "esc"), key.WithHelp("q", "quit")),
	}
}

// Model is the counters screen.
type Model struct {
	sampler  Sampler
	tracker  *query.Tracker
	snap     *query.Snapshot
	interval time.Duration
	label    string
	all      bool
	byActive bool // sort by activity instead of by port
	paused   bool
	sampling bool // a sample is being read
	gen      int
	samples  int
	width    int
	height   int
	keys     keyMap
	help     help.Model
	st       styles
}

// New returns the model; Init starts sampling.
func New(o Options) Model {
	r := lipgloss.NewRenderer(io.Discard)
	if o.Color {
		r.SetColorProfile(colorProfile)
	}
	h := help.New()
	return Model{sampler: o.Sampler, tracker: query.NewTracker(), interval: o.Interval, label: o.Label,
		all: o.All, keys: newKeyMap(), help: h, st: newStyles(r), width: 100, height: 30,
		sampling: true} // Init's sample
}

// Init reads the first sample at once.
func (m Model) Init() tea.Cmd { return m.sample() }

// sample reads a sample in the Cmd's goroutine.
func (m Model) sample() tea.Cmd {
	s, all := m.sampler, m.all
	return func() tea.Msg { return sampleMsg{sample: s.Take(all)} }
}

func (m Model) tick() tea.Cmd {
	gen := m.gen
	return tea.Tick(m.interval, func(time.Time) tea.Msg { return tickMsg{gen: gen} })
}

// Update handles one message; it never blocks and never reads anything.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.help.Width = msg.Width
		return m, nil
	case sampleMsg:
		m.sampling = false
		m.snap = m.tracker.Add(msg.sample)
		m.samples++
		if m.paused {
			return m, nil
		}
		return m, m.tick()
	case tickMsg:
		if msg.gen != m.gen || m.paused || m.sampling {
			return m, nil
		}
		m.sampling = true
		return m, m.sample()
	case tea.KeyMsg:
		return m.key(msg)
	}
	return m, nil
}

func (m Model) key(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	switch {
	case key.Matches(msg, m.keys.Quit):
		return m, tea.Quit
	case key.Matches(msg, m.keys.Pause):
		m.paused = !m.paused
		m.gen++
		if !m.paused {
			return m.sampleNow()
		}
	case key.Matches(msg, m.keys.Slower):
		return m.setInterval(+1)
	case key.Matches(msg, m.keys.Faster):
		return m.setInterval(-1)
	case key.Matches(msg, m.keys.Sort):
		m.byActive = !m.byActive
	case key.Matches(msg, m.keys.All):
		m.all = !m.all
		m.gen++
		if !m.paused {
			return m.sampleNow()
		}
	case key.Matches(msg, m.keys.Baseline):
		if m.snap != nil {
			// On screen only: the hardware counters are never written.
			m.tracker.ResetBaseline(m.snap.Time)
			for i := range m.snap.Ports {
				for j := range m.snap.Ports[i].Counters {
					c := &m.snap.Ports[i].Counters[j]
					c.Total, c.TotalLowerBound = 0, false
				}
			}
		}
	case key.Matches(msg, m.keys.Help):
		m.help.ShowAll = !m.help.ShowAll
	}
	return m, nil
}

// sampleNow reads a sample unless one is already being read (its arrival re-arms the tick).
func (m Model) sampleNow() (tea.Model, tea.Cmd) {
	if m.sampling {
		return m, nil
	}
	m.sampling = true
	return m, m.sample()
}

func (m Model) setInterval(step int) (tea.Model, tea.Cmd) {
	i := 0
	for i < len(Intervals)-1 && Intervals[i] < m.interval {
		i++
	}
	if Intervals[i] != m.interval && step < 0 {
		i++ // between two steps: "faster" goes to the lower one
	}
	i += step
	if i < 0 || i >= len(Intervals) {
		return m, nil
	}
	m.interval = Intervals[i]
	m.gen++
	if m.paused || m.sampling {
		return m, nil
	}
	return m, m.tick()
}

// Interval is the current sampling interval.
func (m Model) Interval() time.Duration { return m.interval }

// Paused reports whether sampling is paused.
func (m Model) Paused() bool { return m.paused }

// SortedByActivity reports the row order.
func (m Model) SortedByActivity() bool { return m.byActive }

// AllCounters reports whether every error counter is shown.
func (m Model) AllCounters() bool { return m.all }

// Samples is how many samples arrived.
func (m Model) Samples() int { return m.samples }

// Snapshot is the last sample's meaning (nil before the first).
func (m Model) Snapshot() *query.Snapshot { return m.snap }

// Run shows the screen on a terminal until the user quits (q, Ctrl-C) or the process
// gets SIGINT/SIGTERM; bubbletea restores the terminal in every case.
func Run(ctx context.Context, o Options, in io.Reader, out io.Writer) error {
	p := tea.NewProgram(New(o), tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out), tea.WithAltScreen())
	_, err := p.Run()
	if errors.Is(err, tea.ErrInterrupted) || errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return nil
	}
	return err
}
