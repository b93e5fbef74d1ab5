// Package tui holds ibkey's bubbletea screens; nothing else imports bubbletea.
package tui

import (
	"cmp"
	"context"
	"io"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/ibkey/ibkey/internal/query"
	"github.com/ibkey/ibkey/internal/textsafe"
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
	// Color: false renders without colors (NO_COLOR, --no-color, tests); bold,
	// faint and reverse stay.
	Color bool
	// LoadPort reads one port with its P_Key table (PortView.Table, or TableMissing
	// saying why there is none) for the drill-down: the port as the sample names it
	// (its Ref and, over the fabric, the Address it was read through). It runs in a
	// tea.Cmd when the drill-down opens, never in Update. nil: the command has no way
	// to read tables, and the drill-down says so.
	LoadPort func(ref query.PortRef, address string) (*query.PortView, error)
	// Getenv reads the environment (the Factory's): the terminal's type and what
	// bubbletea decides from it. nil: an empty environment.
	Getenv func(string) string
}

// intervals are the steps + and - move through.
var intervals = []time.Duration{
	100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second, time.Minute,
}

// Messages. Every sample is read in a tea.Cmd and comes back as a sampleMsg; the
// next one is requested by a tickMsg armed when the previous sample arrived, so
// samples never overlap. gen invalidates ticks armed before a pause or an interval
// change. A port read for the drill-down comes back as its portLoad.
type (
	sampleMsg struct{ sample *query.Sample }
	tickMsg   struct{ gen int }
)

type keyMap struct {
	Up, Down, PageUp, PageDown, Home, End, Open, Back, Filter       key.Binding
	Pause, Faster, Slower, Sort, All, Baseline, Help, Quit, Suspend key.Binding
	// interval shows + and - as one item of the short help.
	interval key.Binding
}

// ShortHelp is the help line: the way out and the help page first, so that they
// show on any terminal (80 columns hold all of it).
func (k keyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Help, k.Quit, k.Open, k.Filter, k.Pause, k.interval, k.Sort, k.All, k.Baseline}
}

func (k keyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Home, k.End},
		{k.Open, k.Back, k.Filter, k.Help, k.Quit, k.Suspend},
		{k.Pause, k.Slower, k.Faster, k.Sort, k.All, k.Baseline},
	}
}

func newKeyMap() keyMap {
	return keyMap{
		Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		PageUp:   key.NewBinding(key.WithKeys("pgup", "ctrl+b"), key.WithHelp("pgup", "page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown", "ctrl+f"), key.WithHelp("pgdn", "page down")),
		Home:     key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("g/home", "first")),
		End:      key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("G/end", "last")),
		Open:     key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "port")),
		Back:     key.NewBinding(key.WithKeys("esc", "backspace", "left"), key.WithHelp("esc", "back")),
		Filter:   key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		Pause:    key.NewBinding(key.WithKeys("p", "space"), key.WithHelp("p", "pause")),
		Faster:   key.NewBinding(key.WithKeys("-", "_"), key.WithHelp("-", "faster")),
		Slower:   key.NewBinding(key.WithKeys("+", "="), key.WithHelp("+", "slower")),
		Sort:     key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "sort")),
		All:      key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "all")),
		Baseline: key.NewBinding(key.WithKeys("b"), key.WithHelp("b", "baseline")),
		Help:     key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Quit:     key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		// ctrl+z arrives as a key (the terminal is raw, so it sends no SIGTSTP): it
		// suspends as the shell's job control expects (see Run).
		Suspend:  key.NewBinding(key.WithKeys("ctrl+z"), key.WithHelp("ctrl+z", "suspend")),
		interval: key.NewBinding(key.WithKeys("+", "-"), key.WithHelp("+/-", "interval")),
	}
}

// screen is what fills the terminal.
type screen int

const (
	screenTable  screen = iota // the ports
	screenDetail               // one port: counters, history, P_Key table
	screenHelp                 // the columns explained
)

// portLoad is the drill-down's P_Key table read: pending in the model while it is
// read, then the message that brings it.
type portLoad struct {
	ref     query.PortRef
	pending bool
	view    *query.PortView
	err     error
}

// Model is the counters screen.
type Model struct {
	sampler  Sampler
	loadPort func(query.PortRef, string) (*query.PortView, error)
	tracker  *query.Tracker
	hist     history
	snap     *query.Snapshot
	interval time.Duration
	label    string
	all      bool
	byActive bool // sort by activity instead of by port
	paused   bool
	sampling bool // a sample is being read
	gen      int
	width    int
	height   int

	screen    screen
	selected  query.PortRef // the selected port (kept across re-sorts and samples)
	offset    int           // first table row shown
	filter    string
	filtering bool // typing the filter
	port      portLoad
	vp        viewport.Model // the detail and help screens

	keys keyMap
	help help.Model
	st   styles
}

// New returns the model; Init starts sampling.
func New(o Options) Model {
	// The styles use the 16 ANSI colours, bold, faint and reverse, which follow the
	// terminal's own palette: nothing depends on its background colour, so nothing
	// asks the terminal for it. Run gives the program the colour profile (ANSI, or
	// ASCII without colours), which strips what the terminal is not to get.
	st := newStyles()
	h := help.New()
	h.Styles = help.Styles{
		Ellipsis: st.dim, ShortKey: st.title, ShortDesc: st.plain, ShortSeparator: st.dim,
		FullKey: st.title, FullDesc: st.plain, FullSeparator: st.dim,
	}
	h.ShortSeparator = " "
	keys := newKeyMap()
	vp := viewport.New(viewport.WithWidth(80), viewport.WithHeight(20))
	vp.Style = st.plain
	// The pages scroll with the table's keys (space is pause's), and ctrl+u, ctrl+d.
	vp.KeyMap = viewport.KeyMap{Up: keys.Up, Down: keys.Down, PageUp: keys.PageUp, PageDown: keys.PageDown,
		HalfPageUp: key.NewBinding(key.WithKeys("ctrl+u")), HalfPageDown: key.NewBinding(key.WithKeys("ctrl+d")),
		Left: key.NewBinding(key.WithDisabled()), Right: key.NewBinding(key.WithDisabled())}
	return Model{sampler: o.Sampler, loadPort: o.LoadPort, tracker: query.NewTracker(), hist: history{},
		interval: o.Interval, label: o.Label, all: o.All, keys: keys, help: h, st: st, vp: vp,
		width: 100, height: 30, sampling: true} // Init's sample
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
	var cmd tea.Cmd
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = max(msg.Width, 20), max(msg.Height, 8)
		m.help.SetWidth(m.width)
	case sampleMsg:
		m.sampling = false
		m.snap = m.tracker.Add(msg.sample)
		m.hist.add(m.snap)
		if m.selected == (query.PortRef{}) && len(m.snap.Ports) > 0 {
			m.selected = m.snap.Ports[0].Ref
		}
		if !m.paused {
			cmd = m.tick()
		}
	case tickMsg:
		if msg.gen == m.gen && !m.paused && !m.sampling {
			m.sampling = true
			cmd = m.sample()
		}
	case portLoad:
		if msg.ref == m.port.ref {
			m.port = msg
		}
	case tea.KeyPressMsg:
		m, cmd = m.key(msg)
	case tea.PasteMsg:
		if m.filtering {
			// Pasted text is drawn in the header: escaped as names are (a name
			// holding a control character matches its escaped form).
			m.filter += textsafe.Text(strings.Join(strings.Fields(msg.Content), " "))
		}
	}
	return m.layout(), cmd
}

// layout brings the derived state in line with the model: the selection exists and
// is visible, the viewport has the right size and content.
func (m Model) layout() Model {
	rows := m.rows()
	if len(rows) > 0 && rowOf(rows, m.selected) < 0 {
		m.selected = rows[0].Ref
	}
	body := m.bodyHeight()
	if i := rowOf(rows, m.selected); i >= 0 {
		n := 1
		if m.all {
			n = max(len(rows[i].Counters), 1)
		}
		m.offset = max(min(m.offset, i), i+n-body)
	}
	m.offset = max(min(m.offset, len(rows)-body), 0)
	m.vp.SetWidth(m.width)
	m.vp.SetHeight(max(m.height-3, 1)) // title, blank, help line
	switch m.screen {
	case screenDetail:
		m.vp.SetContent(m.detail())
	case screenHelp:
		m.vp.SetContent(m.columnsHelp())
	}
	return m
}

func (m Model) key(msg tea.KeyPressMsg) (Model, tea.Cmd) {
	switch msg.String() {
	case "ctrl+c":
		return m, tea.Quit
	case "ctrl+z":
		return m, tea.Suspend
	}
	if m.filtering {
		return m.filterKey(msg), nil
	}
	switch {
	case key.Matches(msg, m.keys.Quit):
		return m, tea.Quit
	case key.Matches(msg, m.keys.Back):
		switch {
		case m.screen != screenTable:
			m.screen = screenTable
		case m.filter != "":
			m.filter = ""
		}
		return m, nil
	case key.Matches(msg, m.keys.Help):
		if m.screen == screenHelp {
			m.screen = screenTable
		} else {
			m.screen = screenHelp
			m.vp.GotoTop()
		}
		return m, nil
	case key.Matches(msg, m.keys.Pause):
		m.paused = !m.paused
		return m.resample()
	case key.Matches(msg, m.keys.Slower):
		return m.setInterval(+1)
	case key.Matches(msg, m.keys.Faster):
		return m.setInterval(-1)
	case key.Matches(msg, m.keys.Baseline):
		m.resetBaseline()
		return m, nil
	}
	if m.screen != screenTable {
		var cmd tea.Cmd
		switch {
		case key.Matches(msg, m.keys.Home):
			m.vp.GotoTop()
		case key.Matches(msg, m.keys.End):
			m.vp.GotoBottom()
		default:
			m.vp, cmd = m.vp.Update(msg)
		}
		return m, cmd
	}
	rows := m.rows()
	i := rowOf(rows, m.selected)
	move := func(to int) {
		if len(rows) > 0 {
			m.selected = rows[max(min(to, len(rows)-1), 0)].Ref
		}
	}
	page := max(m.bodyHeight(), 1)
	if m.all && m.snap != nil { // before the first sample there is no counter set yet
		page = max(page/max(len(m.snap.Counters), 1), 1)
	}
	switch {
	case key.Matches(msg, m.keys.Up):
		move(i - 1)
	case key.Matches(msg, m.keys.Down):
		move(i + 1)
	case key.Matches(msg, m.keys.PageUp):
		move(i - page)
	case key.Matches(msg, m.keys.PageDown):
		move(i + page)
	case key.Matches(msg, m.keys.Home):
		move(0)
	case key.Matches(msg, m.keys.End):
		move(len(rows) - 1)
	case key.Matches(msg, m.keys.Filter):
		m.filtering = true
	case key.Matches(msg, m.keys.Open):
		if i < 0 {
			return m, nil
		}
		m.screen = screenDetail
		m.vp.GotoTop()
		// Read each time the port is opened: the SM may have changed the table since.
		m.port = portLoad{ref: m.selected}
		if m.loadPort == nil {
			return m, nil
		}
		m.port.pending = true
		load, ref, addr := m.loadPort, m.selected, rows[i].Address
		return m, func() tea.Msg {
			v, err := load(ref, addr)
			return portLoad{ref: ref, view: v, err: err}
		}
	case key.Matches(msg, m.keys.Sort):
		m.byActive = !m.byActive
	case key.Matches(msg, m.keys.All):
		m.all = !m.all
		return m.resample()
	}
	return m, nil
}

// filterKey edits the filter: typed text narrows the ports at once, enter keeps it,
// esc clears it.
func (m Model) filterKey(msg tea.KeyPressMsg) Model {
	switch msg.Code {
	case tea.KeyEnter:
		m.filtering = false
	case tea.KeyEsc:
		m.filtering, m.filter = false, ""
	case tea.KeyBackspace:
		if r := []rune(m.filter); len(r) > 0 {
			m.filter = string(r[:len(r)-1])
		}
	default:
		if msg.Mod&^tea.ModShift == 0 {
			m.filter += msg.Text
		}
	}
	return m
}

func (m *Model) resetBaseline() {
	if m.snap == nil {
		return
	}
	// On screen only: the hardware counters are never written.
	m.tracker.ResetBaseline(m.snap.Time)
	clear(m.hist)
	for i := range m.snap.Ports {
		for j := range m.snap.Ports[i].Counters {
			c := &m.snap.Ports[i].Counters[j]
			c.Total, c.TotalLowerBound = 0, false
		}
	}
}

// resample drops the armed tick and, unless paused, reads a sample now, unless one is
// already being read (its arrival re-arms the tick).
func (m Model) resample() (Model, tea.Cmd) {
	m.gen++
	if m.paused || m.sampling {
		return m, nil
	}
	m.sampling = true
	return m, m.sample()
}

func (m Model) setInterval(step int) (Model, tea.Cmd) {
	i, found := slices.BinarySearch(intervals, m.interval)
	switch {
	case found:
		i += step
	case step < 0:
		i-- // between two steps (or past the last): "faster" is the one below
	}
	if i < 0 || i >= len(intervals) {
		return m, nil
	}
	m.interval = intervals[i]
	m.gen++
	if m.paused || m.sampling {
		return m, nil
	}
	return m, m.tick()
}

// rows returns the snapshot's ports in display order, filtered.
func (m Model) rows() []*query.PortDelta {
	if m.snap == nil {
		return nil
	}
	f := strings.ToLower(m.filter)
	var out []*query.PortDelta
	for i := range m.snap.Ports {
		p := &m.snap.Ports[i]
		if f != "" && !strings.Contains(strings.ToLower(p.Ref.String()+" "+p.Address+" "+p.State+" "+p.StateWord()), f) {
			continue
		}
		out = append(out, p)
	}
	if m.byActive {
		slices.SortStableFunc(out, func(a, b *query.PortDelta) int { return cmp.Compare(b.Activity, a.Activity) })
	}
	return out
}

func rowOf(rows []*query.PortDelta, ref query.PortRef) int {
	return slices.IndexFunc(rows, func(p *query.PortDelta) bool { return p.Ref == ref })
}

// Run shows the screen on the terminal in/out until the user quits (q, Ctrl-C:
// nil) or ctx ends (*query.InterruptedError).
//
// The caller owns the process's signals: it cancels ctx on SIGINT, SIGTERM, SIGHUP
// and SIGQUIT. bubbletea's own handler is off (tea.WithoutSignalHandler): two owners
// deadlocked (bubbletea v1's handler blocked on sending a QuitMsg to a program that
// the context had already stopped, with the terminal left raw in the alternate
// screen). On ctx's end bubbletea kills the program without waiting for running
// commands (a sample being read is abandoned) and restores the terminal (cursor
// shown, alternate screen left, cooked mode) before Run returns; so do a quit and
// an error. Job control is the screen's own (suspendOnSIGTSTP): a SIGTSTP gives the
// terminal back before the process stops, SIGCONT takes it again.
//
// Nothing here waits for an answer from the terminal: the styles do not depend on
// its background colour, and the colour profile is given (tea.WithColorProfile), not
// detected. bubbletea v2 asks once, at start, whether the terminal has synchronized
// output (DECRQM 2026 and 2027) and, with its first frame, for the kitty keyboard
// flags (CSI ? u), and goes on without waiting for either; an answer only turns
// features on (bubbletea v2.1.1: tea.go Run, cursed_renderer.go).
func Run(ctx context.Context, o Options, in io.Reader, out io.Writer) error {
	profile := colorprofile.ASCII
	if o.Color {
		profile = colorprofile.ANSI
	}
	jc := newJobControl()
	p := tea.NewProgram(New(o), tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out),
		tea.WithoutSignalHandler(), tea.WithColorProfile(profile), tea.WithEnvironment(environ(o.Getenv)),
		tea.WithFilter(jc.filter))
	stop := jc.start(p)
	_, err := p.Run()
	stop()
	if ctx.Err() != nil {
		return &query.InterruptedError{Cause: context.Cause(ctx)}
	}
	return err
}

// environ is what bubbletea reads of the environment: the terminal's type (its
// renderer's capabilities), the size fallbacks, and what it decides whether to ask
// the terminal about synchronized output from (not over SSH, not on Apple's
// Terminal). Read through getenv, never os.Environ: the command owns the
// environment.
func environ(getenv func(string) string) []string {
	env := []string{} // not nil: bubbletea reads os.Environ for nil
	if getenv == nil {
		return env
	}
	for _, k := range []string{"TERM", "TERM_PROGRAM", "SSH_TTY", "WT_SESSION", "COLUMNS", "LINES"} {
		if v := getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}
