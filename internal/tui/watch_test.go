package tui

import (
	"bytes"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/ibkey/ibkey/internal/query"
)

// sysfsLabel names the fake source "sysfs"; it is never read (fakeSampler builds samples).
type sysfsLabel struct{}

func (sysfsLabel) Name() string                                  { return "sysfs" }
func (sysfsLabel) Read(query.PortRef, []string, []query.Reading) {}
func sets() query.CounterSets                                    { return query.DefaultCounterSets(sysfsLabel{}) }
func val(v uint64) query.Reading                                 { return query.Reading{Value: v} }
func na() query.Reading                                          { return query.Reading{Unavailable: naReason} }
func ref(dev string, port int) query.PortRef                     { return query.PortRef{Device: dev, Port: port} }

// naReason is the reason `ibkey watch counters` gives the PortInfo counters without
// fabric access: the command names its flags (the screen shows what it is given).
var naReason = query.NeedsFabricAccess("pass --ca DEV as root or the rdma group, or --ibsim")

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// fakeSampler scripts samples: call i returns script(i, all) at t0 + i seconds.
type fakeSampler struct {
	mu    sync.Mutex
	calls int
	all   []bool
}

func (f *fakeSampler) Take(all bool) *query.Sample {
	f.mu.Lock()
	i := f.calls
	f.calls++
	f.all = append(f.all, all)
	f.mu.Unlock()
	return script(i, all)
}

// script: mlx5_0/1 drops 3 per sample, mlx5_1/1 climbs to 255 and saturates, then
// is reset; mlx5_1/2 is quiet; mlx5_2/1 goes away at sample 3.
func script(i int, all bool) *query.Sample {
	cs := sets()
	s := &query.Sample{Time: t0.Add(time.Duration(i) * time.Second), Counters: cs.Violations}
	if all {
		s.Counters = cs.All
	}
	sat := uint64(250 + 3*i)
	if sat > 255 {
		sat = 255
	}
	if i >= 5 {
		sat = 1
	}
	rows := []struct {
		ref      query.PortRef
		state    string
		rcv, xmt uint64
	}{
		{ref("mlx5_0", 1), "ACTIVE", 12 + 3*uint64(i), 0},
		{ref("mlx5_1", 1), "ACTIVE", 0, sat},
		{ref("mlx5_1", 2), "DOWN", 0, 0},
		{ref("mlx5_2", 1), "ACTIVE", 7, 0},
	}
	for _, r := range rows {
		ps := query.PortSample{Ref: r.ref, State: r.state}
		if r.ref.Device == "mlx5_2" && i == 3 {
			ps = query.PortSample{Ref: r.ref, Err: "port went away (state file does not exist)"}
			s.Ports = append(s.Ports, ps)
			continue
		}
		for _, c := range s.Counters {
			switch c.Name {
			case query.RcvConstraintErrors:
				ps.Readings = append(ps.Readings, val(r.rcv))
			case query.XmitConstraintErrors:
				ps.Readings = append(ps.Readings, val(r.xmt))
			case query.PKeyViolations, query.QKeyViolations, query.MKeyViolations:
				ps.Readings = append(ps.Readings, na())
			case "symbol_error":
				ps.Readings = append(ps.Readings, query.Reading{Err: "read failed: input/output error (EIO)"})
			default:
				ps.Readings = append(ps.Readings, val(0))
			}
		}
		s.Ports = append(s.Ports, ps)
	}
	return s
}

func newModel(f *fakeSampler) Model {
	m := New(Options{Sampler: f, Interval: time.Second, Label: "demo host (test)"})
	m2, _ := m.Update(tea.WindowSizeMsg{Width: 120, Height: 30})
	return m2.(Model)
}

// step runs one message through Update.
func step(t *testing.T, m Model, msg tea.Msg) (Model, tea.Cmd) {
	t.Helper()
	m2, cmd := m.Update(msg)
	return m2.(Model), cmd
}

// keyMsg is the key press bubbletea delivers for s.
func keyMsg(s string) tea.KeyPressMsg {
	switch s {
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	case "ctrl+z":
		return tea.KeyPressMsg{Code: 'z', Mod: tea.ModCtrl}
	case " ":
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEsc}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "pgdown":
		return tea.KeyPressMsg{Code: tea.KeyPgDown}
	}
	r := []rune(s)[0]
	return tea.KeyPressMsg{Code: r, Text: s}
}

// feed delivers the samples the fake reads next.
func feed(t *testing.T, m Model, f *fakeSampler, n int) Model {
	t.Helper()
	for range n {
		var cmd tea.Cmd
		m, cmd = step(t, m, sampleMsg{sample: f.Take(m.all)})
		if cmd == nil && !m.paused {
			t.Fatal("a sample arrived and no tick was armed")
		}
	}
	return m
}

func TestUpdateSampleArmsTick(t *testing.T) {
	f := &fakeSampler{}
	m := newModel(f)
	if m.Init() == nil {
		t.Fatal("Init reads no sample")
	}
	m = feed(t, m, f, 2)
	snap := m.snap
	if snap == nil || !snap.Time.Equal(t0.Add(time.Second)) || snap.Interval != time.Second {
		t.Fatalf("after two samples: %+v", snap)
	}
	if c := snap.Ports[0].Counters[0]; c.Delta != 3 || !snap.Ports[0].Moved {
		t.Errorf("mlx5_0/1: %+v", c)
	}
	// The tick asks for a sample (in a Cmd, not in Update) ...
	m, cmd := step(t, m, tickMsg{gen: m.gen})
	if cmd == nil || !m.sampling {
		t.Fatal("tick: no sample requested")
	}
	msg := cmd()
	if _, ok := msg.(sampleMsg); !ok || f.calls != 3 {
		t.Fatalf("the command returned %T after %d reads", msg, f.calls)
	}
	// ... and a second tick while it is being read starts nothing.
	if _, cmd := step(t, m, tickMsg{gen: m.gen}); cmd != nil {
		t.Error("overlapping samples")
	}
	// A tick from before an interval change is ignored.
	m, _ = step(t, m, msg)
	if _, cmd := step(t, m, tickMsg{gen: m.gen - 1}); cmd != nil {
		t.Error("a stale tick read a sample")
	}
}

func TestUpdateKeys(t *testing.T) {
	f := &fakeSampler{}
	m := feed(t, newModel(f), f, 2)

	m, cmd := step(t, m, keyMsg("p"))
	if !m.paused || cmd != nil {
		t.Fatalf("pause: paused=%v cmd=%v", m.paused, cmd)
	}
	if _, cmd := step(t, m, tickMsg{gen: m.gen}); cmd != nil {
		t.Error("a tick sampled while paused")
	}
	m, cmd = step(t, m, keyMsg(" "))
	if m.paused || cmd == nil {
		t.Fatal("resume does not sample at once")
	}
	m, _ = step(t, m, cmd())

	m, _ = step(t, m, keyMsg("+"))
	if m.interval != 2*time.Second {
		t.Errorf("+: %s", m.interval)
	}
	m, _ = step(t, m, keyMsg("-"))
	m, _ = step(t, m, keyMsg("-"))
	if m.interval != 500*time.Millisecond {
		t.Errorf("- -: %s", m.interval)
	}
	for range 10 {
		m, _ = step(t, m, keyMsg("-"))
	}
	if m.interval != intervals[0] {
		t.Errorf("faster than the fastest step: %s", m.interval)
	}

	m, _ = step(t, m, keyMsg("s"))
	if !m.byActive {
		t.Error("s does not sort by activity")
	}

	m, cmd = step(t, m, keyMsg("a"))
	if !m.all || cmd == nil {
		t.Fatal("a: no sample of all counters")
	}
	m, _ = step(t, m, cmd())
	if !f.all[len(f.all)-1] || len(m.snap.Counters) != len(query.ErrorCounters)+len(query.PortInfoViolations) {
		t.Errorf("a: sampler asked for all=%v, snapshot has %d counters", f.all[len(f.all)-1], len(m.snap.Counters))
	}

	if c := m.snap.Ports[0].Counters[0]; c.Total == 0 {
		t.Fatalf("no total to reset: %+v", c)
	}
	m, _ = step(t, m, keyMsg("b"))
	if c := m.snap.Ports[0].Counters[0]; c.Total != 0 || c.Value == 0 {
		t.Errorf("b: total %d, value %d (the value is the hardware's, untouched)", c.Total, c.Value)
	}

	for _, k := range []string{"q", "ctrl+c"} {
		_, cmd = step(t, m, keyMsg(k))
		if cmd == nil {
			t.Fatalf("%s: no command", k)
		}
		if _, ok := cmd().(tea.QuitMsg); !ok {
			t.Errorf("%s does not quit", k)
		}
	}
}

func TestUpdatePausedSampleDoesNotRearm(t *testing.T) {
	f := &fakeSampler{}
	m := feed(t, newModel(f), f, 1)
	m, _ = step(t, m, tickMsg{gen: m.gen}) // a sample is being read
	m, _ = step(t, m, keyMsg("p"))
	m, cmd := step(t, m, sampleMsg{sample: f.Take(false)})
	if cmd != nil || m.snap == nil || !m.snap.Time.Equal(t0.Add(time.Second)) {
		t.Errorf("a sample that arrives while paused is shown (%+v) but arms no tick (%v)", m.snap, cmd)
	}
}

func view(m Model) string { return ansi.Strip(m.View().Content) }

// TestViewGolden: the screen at 120x30 after several samples, ANSI stripped.
func TestViewGolden(t *testing.T) {
	cases := []struct {
		name    string
		samples int
		keys    []string
	}{
		{"first_sample", 1, nil},
		{"moving", 3, nil},
		{"saturated_gone_sorted", 4, []string{"s"}},
		{"reset_paused", 6, []string{"p"}},
		{"all_counters", 3, []string{"a"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeSampler{}
			m := newModel(f)
			for _, k := range tc.keys {
				if k == "a" {
					m.all = true
				} else {
					m, _ = step(t, m, keyMsg(k))
				}
			}
			for range tc.samples {
				m, _ = step(t, m, sampleMsg{sample: f.Take(m.all)})
			}
			golden.RequireEqual(t, view(m))
		})
	}
}

func TestViewHighlightsMovedRows(t *testing.T) {
	f := &fakeSampler{}
	m := New(Options{Sampler: f, Interval: time.Second, Color: true})
	for range 2 {
		m, _ = step(t, m, sampleMsg{sample: f.Take(false)})
	}
	v := m.View().Content
	if !strings.Contains(v, "\x1b[") {
		t.Fatal("no colors")
	}
	lines := strings.Split(v, "\n")
	for _, l := range lines {
		plain := ansi.Strip(l)
		switch {
		case strings.Contains(plain, "mlx5_0/1"):
			if !strings.HasPrefix(plain[1:], "▶") || !regexp.MustCompile(`\x1b\[1;31m *\+3`).MatchString(l) {
				t.Errorf("moved row not highlighted: %q", l)
			}
		case strings.Contains(plain, "mlx5_1/2"):
			if strings.HasPrefix(plain[1:], "▶") {
				t.Errorf("quiet row highlighted: %q", l)
			}
		}
	}
}

func TestViewNarrowTerminal(t *testing.T) {
	f := &fakeSampler{}
	m := newModel(f)
	m, _ = step(t, m, tea.WindowSizeMsg{Width: 60, Height: 12})
	for range 2 {
		m, _ = step(t, m, sampleMsg{sample: f.Take(false)})
	}
	v := view(m)
	for _, l := range strings.Split(v, "\n") {
		if w := ansi.StringWidth(l); w > 60 {
			t.Errorf("line of %d columns on a 60-column terminal: %q", w, l)
		}
	}
	if !strings.Contains(v, "mlx5_0/1") {
		t.Errorf("rows missing:\n%s", v)
	}
}

// TestModelMemoryFlat: 100,000 samples through Update (and a View every 100) keep
// the heap flat: the history is a ring.
func TestModelMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("100,000 samples")
	}
	f := &fakeSampler{}
	m := newModel(f)
	samples := make([]*query.Sample, 6)
	for i := range samples {
		samples[i] = script(i, false)
	}
	at := t0
	next := func(i int) tea.Msg {
		s := *samples[i%len(samples)]
		s.Time = at
		at = at.Add(time.Second)
		return sampleMsg{sample: &s}
	}
	for i := range 1000 {
		m, _ = step(t, m, next(i))
	}
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.HeapAlloc
	for i := range 100_000 {
		m, _ = step(t, m, next(i))
		if i%100 == 0 {
			_ = m.View()
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&ms)
	after := ms.HeapAlloc
	t.Logf("TUI model: heap %d bytes before, %d after 100,000 samples", before, after)
	if after > before+256<<10 {
		t.Errorf("heap grew from %d to %d bytes", before, after)
	}
}

// TestFlow runs the program with teatest: start, two samples, pause, change the
// sort, quit; then checks the final screen.
func TestFlow(t *testing.T) {
	f := &fakeSampler{}
	m := New(Options{Sampler: f, Interval: 100 * time.Millisecond})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 30))
	waitFor := func(what string) {
		t.Helper()
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(what)) },
			teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	}
	// bubbletea v2 writes only the cells that changed: the waits look for what
	// appears new on the screen ("activity" replaces "port" in "sorted by port");
	// the final screen is checked whole below.
	waitFor("+3") // the second sample's delta
	tm.Type("p")
	waitFor("PAUSED")
	tm.Type("s")
	waitFor("activity")
	tm.Type("q")
	final := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(Model)
	// A snapshot with an interval comes from a second sample at least.
	if !final.paused || !final.byActive || final.snap == nil || final.snap.Interval <= 0 {
		t.Errorf("final model: paused=%v byActivity=%v snapshot=%+v", final.paused, final.byActive, final.snap)
	}
	screen := view(final)
	for _, want := range []string{"PAUSED", "sorted by activity", "mlx5_0/1", "mlx5_1/2", "P_KEY VIOL", "n/a: needs fabric access"} {
		if !strings.Contains(screen, want) {
			t.Errorf("final screen lacks %q:\n%s", want, screen)
		}
	}
	// Sorted by activity: the port that moved most comes first.
	if i, j := strings.Index(screen, "mlx5_0/1"), strings.Index(screen, "mlx5_1/2"); i > j {
		t.Errorf("mlx5_0/1 (+3 per sample) should precede mlx5_1/2 (quiet):\n%s", screen)
	}

}

// TestKeysBeforeFirstSample: with every error counter (--all-counters) the keys
// that move the selection worked out a page from the snapshot's counters, and the
// snapshot is nil until the first sample arrives (a slow fabric read): a panic in
// Update, which ended the screen with a stack trace.
func TestKeysBeforeFirstSample(t *testing.T) {
	for _, all := range []bool{false, true} {
		m := New(Options{Sampler: &fakeSampler{}, Interval: time.Second, All: all})
		m, _ = step(t, m, tea.WindowSizeMsg{Width: 80, Height: 24})
		for _, k := range []string{"down", "up", "pgdown", "enter", "esc", "/", "esc", "s", "a"} {
			m, _ = step(t, m, keyMsg(k))
			if v := view(m); !strings.Contains(v, "ibkey watch counters") {
				t.Fatalf("all=%v, after %s: %q", all, k, v)
			}
		}
	}
}

// TestRateLowerBound: a delta that is a lower bound (the counter saturated in the
// interval, or was reset) has a rate that is one too: it is marked ≥ as the delta
// is, not shown as a measured rate (IBA 16.1.3.5: the error counters stop at their
// maximum, so what went past it was not counted).
func TestRateLowerBound(t *testing.T) {
	f := &fakeSampler{}
	m := feed(t, newModel(f), f, 3) // mlx5_1/1's xmit: 250, 253, 255 (saturated)
	m, _ = step(t, m, tea.WindowSizeMsg{Width: 200, Height: 30})
	cd := m.snap.Ports[1].Counters[1]
	if !cd.Saturated || !cd.HasDelta || cd.Delta != 2 {
		t.Fatalf("script: %+v", cd)
	}
	cols := columns{total: true, rate: true}
	if got := ansi.Strip(m.values(m.snap.Ports[1].Ref, &cd, cols)); !strings.HasSuffix(got, " ≥2.00") {
		t.Errorf("saturated in the interval: %q, want the rate marked ≥", got)
	}
	m = feed(t, m, f, 3) // reset at sample 5: 255 -> 1
	cd = m.snap.Ports[1].Counters[1]
	if !cd.Reset {
		t.Fatalf("script: %+v", cd)
	}
	if got := ansi.Strip(m.values(m.snap.Ports[1].Ref, &cd, cols)); !strings.HasSuffix(got, " ≥1.00") {
		t.Errorf("reset: %q, want the rate marked ≥", got)
	}
}

// TestIntervalBetweenSteps: from an --interval between two of the steps (1.5s),
// - (faster) goes to the step below and + (slower) to the step above; beyond the
// last step, - goes to the last one and + stays.
func TestIntervalBetweenSteps(t *testing.T) {
	for _, tc := range []struct {
		from time.Duration
		key  string
		want time.Duration
	}{
		{1500 * time.Millisecond, "-", time.Second},
		{1500 * time.Millisecond, "+", 2 * time.Second},
		{time.Second, "-", 500 * time.Millisecond},
		{time.Second, "+", 2 * time.Second},
		{5 * time.Minute, "-", time.Minute},
		{5 * time.Minute, "+", 5 * time.Minute},
		{50 * time.Millisecond, "-", 50 * time.Millisecond},
		{50 * time.Millisecond, "+", 100 * time.Millisecond},
	} {
		m := New(Options{Sampler: &fakeSampler{}, Interval: tc.from})
		if m, _ = step(t, m, keyMsg(tc.key)); m.interval != tc.want {
			t.Errorf("%s from %s: %s, want %s", tc.key, tc.from, m.interval, tc.want)
		}
	}
}

// TestPastedFilterIsSafe: text pasted into the filter is drawn in the header, so
// its control characters are escaped as a name's are (textsafe), never sent to the
// terminal: a pasted OSC could set the window title, a CSI move the cursor.
func TestPastedFilterIsSafe(t *testing.T) {
	f := &fakeSampler{}
	m := feed(t, newModel(f), f, 1)
	m, _ = step(t, m, keyMsg("/"))
	m, _ = step(t, m, tea.PasteMsg{Content: "mlx5\x1b]0;pwned\x07\x1b[2J\u009b31m"})
	v := m.View().Content
	for _, bad := range []string{"\x1b]0;", "\x07", "\x1b[2J", "\u009b"} {
		if strings.Contains(v, bad) {
			t.Errorf("the pasted %q reached the screen", bad)
		}
	}
	if !strings.Contains(ansi.Strip(v), `filter: mlx5\x1b]0;pwned\x07\x1b[2J\u009b31m`) {
		t.Errorf("the filter is not shown escaped:\n%s", ansi.Strip(v))
	}
}

// TestTotalOfALateCounter: TOTAL is "since" the baseline the header names; a
// counter first read after it (one only --all-counters reads, after a; one that
// was n/a or failed until then) did not count from the baseline, so its total is
// a lower bound (≥), not the exact count since then that it was shown as.
func TestTotalOfALateCounter(t *testing.T) {
	f := &fakeSampler{}
	m := feed(t, newModel(f), f, 2)
	m, cmd := step(t, m, keyMsg("a"))
	m, _ = step(t, m, cmd())
	m, _ = step(t, m, sampleMsg{sample: f.Take(true)})
	p := m.snap.Ports[0]
	for j, c := range m.snap.Counters {
		cd := p.Counters[j]
		if !cd.OK() {
			continue
		}
		partition := c.Name == query.RcvConstraintErrors || c.Name == query.XmitConstraintErrors
		if cd.TotalLowerBound == partition {
			t.Errorf("%s: total %d, lower bound %v: read since the baseline: %v", c.Name, cd.Total, cd.TotalLowerBound, partition)
		}
	}
	// b: the baseline is now, and every counter has been read since.
	m, _ = step(t, m, keyMsg("b"))
	m, _ = step(t, m, sampleMsg{sample: f.Take(true)})
	for j, c := range m.snap.Counters {
		if cd := m.snap.Ports[0].Counters[j]; cd.OK() && cd.TotalLowerBound {
			t.Errorf("after b: %s total %d given as a lower bound", c.Name, cd.Total)
		}
	}
}
