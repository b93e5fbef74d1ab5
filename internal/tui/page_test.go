package tui

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/ibkey/ibkey/internal/ibverbs"
	"github.com/ibkey/ibkey/internal/query"
)

func TestFormatInterval(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{1002256326 * time.Nanosecond, "1.0s"},
		{998 * time.Millisecond, "998ms"},
		{100*time.Millisecond + 240*time.Microsecond, "100ms"},
		{2*time.Second + 460*time.Millisecond, "2.5s"},
		{10 * time.Second, "10.0s"},
		{59*time.Second + 940*time.Millisecond, "59.9s"},
		{time.Minute + 400*time.Millisecond, "1m0s"},
		{5*time.Minute + 31*time.Second, "5m31s"},
	} {
		if got := formatInterval(tc.d); got != tc.want {
			t.Errorf("formatInterval(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

// words are the words of s, ANSI stripped.
func words(s string) []string { return strings.Fields(ansi.Strip(s)) }

// containsRun reports whether want appears in have as consecutive words.
func containsRun(have, want []string) bool {
	for i := 0; i+len(want) <= len(have); i++ {
		ok := true
		for j := range want {
			if have[i+j] != want[j] {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func TestWrapWords(t *testing.T) {
	text := "the quick brown fox jumps over the lazy dog; a-very-long-token-that-does-not-fit-anywhere ends"
	for first := 1; first <= 40; first++ {
		for _, rest := range []int{1, 5, 12, 30} {
			lines := wrapWords(text, first, rest)
			for i, l := range lines {
				limit := rest
				if i == 0 {
					limit = first
				}
				if w := ansi.StringWidth(l); w > limit {
					t.Fatalf("first %d rest %d: line %d is %d wide: %q", first, rest, i, w, l)
				}
			}
			// Words shorter than a line are never cut.
			got := strings.Fields(strings.Join(lines, " "))
			for _, w := range strings.Fields(text) {
				if len(w) <= min(first, rest) && !containsRun(got, []string{w}) {
					t.Fatalf("first %d rest %d: %q was cut: %q", first, rest, w, lines)
				}
			}
			if strings.Join(lines, "") != strings.ReplaceAll(strings.Join(strings.Fields(text), " "), " ", "") &&
				strings.ReplaceAll(strings.Join(lines, ""), " ", "") != strings.ReplaceAll(text, " ", "") {
				t.Fatalf("first %d rest %d: text lost: %q", first, rest, lines)
			}
		}
	}
}

func TestHang(t *testing.T) {
	got := hang("totals   ", "since 12:00:00 (b resets them on screen; the hardware counters are never written)", 44, nil)
	want := []string{
		"totals   since 12:00:00 (b resets them on",
		"         screen; the hardware counters are",
		"         never written)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("hang:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A label that leaves less than minColumn: the lines continue at hangFallback.
	got = hang(strings.Repeat("x", 30)+" ", "one two three four five six seven eight nine ten", 40, nil)
	for _, l := range got[1:] {
		if !strings.HasPrefix(l, strings.Repeat(" ", hangFallback)) || strings.HasPrefix(l, strings.Repeat(" ", hangFallback+1)) {
			t.Errorf("continuation %q does not start at column %d", l, hangFallback)
		}
	}
}

// TestPagesWrapAtWords: at every width from 50 to 200 columns the help page and the
// drill-down (with a long unavailable reason, a long error and long P_Key notes)
// fit the terminal, and every explanation's words appear whole and in order:
// nothing is cut mid-word.
func TestPagesWrapAtWords(t *testing.T) {
	load := func(query.PortRef, string) (*query.PortView, error) {
		v, _ := loadPortFake(query.PortRef{}, "")
		for i := range v.Table.Entries {
			if v.Table.Entries[i].PKey.Valid() {
				v.Table.Entries[i].Interfaces = []string{"ib0.8001 (an IPoIB child interface)", "ib1.8001 (another IPoIB child interface on the same key)"}
			}
		}
		return v, nil
	}
	for width := 50; width <= 200; width += 5 {
		m := sized(New(Options{Interval: time.Second, Label: "fabric", LoadPort: load}), width, 40)
		for i := range 3 {
			m, _ = step(t, m, sampleMsg{sample: fabricSample(i)})
		}
		m, _ = step(t, m, keyMsg("?"))
		help := m.columnsHelp()
		m, _ = step(t, m, keyMsg("esc"))
		m, cmd := step(t, m, keyMsg("enter"))
		m, _ = step(t, m, cmd())
		detail := m.detail()
		for name, page := range map[string]string{"help": help, "detail": detail} {
			for _, l := range strings.Split(page, "\n") {
				if w := ansi.StringWidth(l); w > width {
					t.Errorf("%d columns, %s page: a line of %d: %q", width, name, w, ansi.Strip(l))
				}
			}
		}
		for _, c := range helpColumns {
			if !containsRun(words(help), strings.Fields(c.text)) {
				t.Errorf("%d columns: the help for %s is cut:\n%s", width, c.term, ansi.Strip(help))
			}
		}
		for _, want := range []string{
			"(b resets them on screen; the hardware counters are never written)",
			"ib0.8001 (an IPoIB child interface), ib1.8001 (another IPoIB child interface on the same key)",
			"4 entries, 3 valid",
		} {
			if !containsRun(words(detail), strings.Fields(want)) {
				t.Errorf("%d columns: the drill-down cuts %q:\n%s", width, want, ansi.Strip(detail))
			}
		}
	}
}

// TestDetailUnavailableNamesNoSource: a counter that was not read names no source
// (no SMP was sent: "-") and says why in full; the help page's SOURCES says the same.
func TestDetailUnavailableNamesNoSource(t *testing.T) {
	f := &fakeSampler{}
	m := newModel(f)
	m = sized(m, 80, 40)
	m = feed(t, m, f, 2)
	m, _ = step(t, m, keyMsg("enter"))
	d := ansi.Strip(m.detail())
	for _, l := range strings.Split(d, "\n") {
		if strings.HasPrefix(l, "pkey_violations") || strings.HasPrefix(l, "qkey_violations") {
			if strings.Contains(l, "smp") || !regexp.MustCompile(`_violations +- +n/a  needs fabric access`).MatchString(l) {
				t.Errorf("an unread counter's line: %q", l)
			}
		}
	}
	if !containsRun(words(d), strings.Fields(naReason)) {
		t.Errorf("the reason is not given whole:\n%s", d)
	}
	m, _ = step(t, m, keyMsg("esc"))
	m, _ = step(t, m, keyMsg("?"))
	h := ansi.Strip(m.columnsHelp())
	if !regexp.MustCompile(`pkey_violations +- \(read on no port: see NOTES\)`).MatchString(h) {
		t.Errorf("SOURCES names a source for a counter read on no port:\n%s", h)
	}
}

// TestHistoryReadable: intervals read as a person reads them (1.0s, 100ms, never
// 1.002256326s), sub-second samples show tenths in TIME, and the columns line up
// whatever the cells hold.
func TestHistoryReadable(t *testing.T) {
	for _, tc := range []struct {
		name  string
		every time.Duration
		want  []string
	}{
		{"1s", time.Second + 2256326*time.Nanosecond, []string{"1.0s"}},
		{"100ms", 100*time.Millisecond + 311*time.Microsecond, []string{"100ms", "12:00:00.3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := sized(New(Options{Interval: time.Second}), 120, 60)
			for i := range 6 {
				s := fabricSample(i)
				s.Time = t0.Add(time.Duration(i) * tc.every)
				if i == 3 {
					// A big delta in one cell: the column widens, the rows stay aligned.
					s.Ports[0].Readings[0] = val(123456789)
				}
				m, _ = step(t, m, sampleMsg{sample: s})
			}
			m, _ = step(t, m, keyMsg("enter"))
			d := ansi.Strip(m.detail())
			hist := d[strings.Index(d, "HISTORY"):strings.Index(d, "P_KEY TABLE")]
			lines := strings.Split(strings.TrimSpace(hist), "\n")[1:] // the header, then the rows
			for _, w := range tc.want {
				if !strings.Contains(hist, w) {
					t.Errorf("no %q in:\n%s", w, hist)
				}
			}
			if regexp.MustCompile(`\d\.\d{3,}s`).MatchString(hist) {
				t.Errorf("a raw duration:\n%s", hist)
			}
			// Aligned: every column ends at the same offset on every row, where its
			// title ends.
			ends := func(l string) []int {
				var out []int
				r := []rune(l)
				for i := range r {
					if r[i] != ' ' && (i+1 == len(r) || r[i+1] == ' ') {
						out = append(out, i)
					}
				}
				return out
			}
			want := ends(lines[1])
			for _, l := range lines[1:] {
				if got := ends(l); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("columns do not line up:\n%s\n(%v, want %v)", hist, got, want)
					break
				}
			}
			head := map[int]bool{}
			for _, e := range ends(lines[0]) {
				head[e] = true
			}
			for _, e := range want[1:] { // TIME is left-aligned
				if !head[e] {
					t.Errorf("a column does not end under its title (offset %d):\n%s", e, hist)
				}
			}
		})
	}
}

// TestStatusLineCutsAtWords: the status line's note is cut at a word when it does
// not fit, and still says where the notes are (?), at any width.
func TestStatusLineCutsAtWords(t *testing.T) {
	for width := 60; width <= 200; width += 3 {
		f := &fakeSampler{}
		m := sized(New(Options{Sampler: f, Interval: time.Second}), width, 30)
		m = feed(t, m, f, 2)
		lines := strings.Split(view(m), "\n")
		status := lines[len(lines)-2]
		if ansi.StringWidth(status) > width {
			t.Fatalf("%d columns: %q", width, status)
		}
		note := status[strings.LastIndex(status, " · ")+len(" · "):]
		if !strings.HasSuffix(note, "?)") && note != "notes: ?" {
			t.Errorf("%d columns: the note does not point at ?: %q", width, note)
		}
		if note == "notes: ?" {
			continue
		}
		body := regexp.MustCompile(` \((\+\d+: )?\?\)$`).ReplaceAllString(note, "")
		full := m.notes()[0]
		if text, cut := strings.CutSuffix(body, "…"); cut {
			if !strings.HasPrefix(full, text) || full[len(text)] != ' ' {
				t.Errorf("%d columns: %q cuts %q mid-word", width, note, full)
			}
		} else if body != full {
			t.Errorf("%d columns: %q is not %q", width, body, full)
		}
	}
}

// TestDetailValidCountLowerBound (wave 11): with an entry not read the drill-down's
// count of valid entries is a lower bound, said as pkeys and devices say it ("3+
// valid, 1 unread"), and the entry not read is not counted among the invalid ones not
// listed (it is listed, as unreadable).
func TestDetailValidCountLowerBound(t *testing.T) {
	load := func(query.PortRef, string) (*query.PortView, error) {
		raw := []ibverbs.PKeyEntry{{Index: 0, Value: 0xffff}, {Index: 1, Value: 0}, {Index: 2, Value: 0x8001}, {Index: 3, Value: 0x0001},
			{Index: 4, Err: errors.New("read failed: EIO")}}
		return &query.PortView{Port: &ibverbs.Port{State: ibverbs.Enum{Num: ibverbs.StateActive, Name: "ACTIVE"}},
			Table: query.DecodeTable(raw)}, nil
	}
	m := sized(New(Options{Interval: time.Second, Label: "fabric", LoadPort: load}), 120, 40)
	for i := range 3 {
		m, _ = step(t, m, sampleMsg{sample: fabricSample(i)})
	}
	m, cmd := step(t, m, keyMsg("enter"))
	m, _ = step(t, m, cmd())
	d := ansi.Strip(m.detail())
	for _, want := range []string{"5 entries, 3+ valid, 1 unread", "(1 invalid entries not listed, except holes)"} {
		if !containsRun(words(d), strings.Fields(want)) {
			t.Errorf("the drill-down does not say %q:\n%s", want, d)
		}
	}
}

// TestHistoryRowsByTime: a row of the history is one sample: each counter's cell
// sits on the row of the sample it came from. The counters only --all-counters reads
// have fewer samples than the partition counters after a toggle (a), and were laid
// out from the oldest row, beside samples taken before they were read at all.
func TestHistoryRowsByTime(t *testing.T) {
	cs := sets()
	sample := func(i int, all bool, symbol uint64) *query.Sample {
		s := &query.Sample{Time: t0.Add(time.Duration(i) * time.Second), Counters: cs.Violations}
		if all {
			s.Counters = cs.All
		}
		ps := query.PortSample{Ref: ref("mlx5_0", 1), State: "ACTIVE"}
		for _, c := range s.Counters {
			switch c.Name {
			case query.RcvConstraintErrors:
				ps.Readings = append(ps.Readings, val(uint64(i)))
			case "symbol_error":
				ps.Readings = append(ps.Readings, val(symbol))
			default:
				ps.Readings = append(ps.Readings, val(0))
			}
		}
		s.Ports = []query.PortSample{ps}
		return s
	}
	m := sized(New(Options{Interval: time.Second}), 120, 60)
	for i := range 5 {
		m, _ = step(t, m, sampleMsg{sample: sample(i, false, 0)})
	}
	m.all = true
	for i, sym := range []uint64{10, 17} { // samples 5 and 6: symbol_error +7 in 6
		m, _ = step(t, m, sampleMsg{sample: sample(5+i, true, sym)})
	}
	m, _ = step(t, m, keyMsg("enter"))
	d := ansi.Strip(m.detail())
	hist := d[strings.Index(d, "HISTORY"):strings.Index(d, "P_KEY TABLE")]
	for _, l := range strings.Split(hist, "\n") {
		if strings.HasPrefix(l, "12:00:0") && strings.Contains(l, "+7") != strings.HasPrefix(l, "12:00:06") {
			t.Errorf("symbol_error's +7 (sample 12:00:06) is on the wrong row:\n%s", hist)
			break
		}
	}
}

// TestHistoryNothingCounted: in the all-counters view, a port none of whose
// counters counted anything says so, not "(a delta needs two samples)" after many:
// the message for nothing counted could not be reached.
func TestHistoryNothingCounted(t *testing.T) {
	f := &fakeSampler{}
	m := newModel(f)
	m.all = true
	m = feed(t, m, f, 4)
	m.selected = ref("mlx5_1", 2) // DOWN, every counter 0
	m, _ = step(t, m, keyMsg("enter"))
	d := ansi.Strip(m.detail())
	if !strings.Contains(d, "no counter of this port counted anything in the last 3 samples") {
		t.Errorf("a quiet port after 4 samples:\n%s", d)
	}
	m = feed(t, newModel(f), &fakeSampler{}, 1)
	m, _ = step(t, m, keyMsg("enter"))
	if d := ansi.Strip(m.detail()); !strings.Contains(d, "(a delta needs two samples)") {
		t.Errorf("after one sample:\n%s", d)
	}
}

// TestDrillDownRereadsTable: each time a port is opened its P_Key table is read
// again: a table read minutes ago was shown as the port's table, with no word of
// when it was read, after the SM had changed it.
func TestDrillDownRereadsTable(t *testing.T) {
	reads := 0
	load := func(query.PortRef, string) (*query.PortView, error) {
		reads++
		raw := []ibverbs.PKeyEntry{{Index: 0, Value: 0xffff}, {Index: 1, Value: 0x8000 | uint16(reads)}}
		return &query.PortView{Port: &ibverbs.Port{State: ibverbs.Enum{Num: ibverbs.StateActive, Name: "ACTIVE"}},
			Table: query.DecodeTable(raw)}, nil
	}
	f := &fakeSampler{}
	m := New(Options{Sampler: f, Interval: time.Second, LoadPort: load})
	m = feed(t, sized(m, 120, 40), f, 1)
	for want := 1; want <= 2; want++ {
		var cmd tea.Cmd
		m, cmd = step(t, m, keyMsg("enter"))
		if cmd == nil {
			t.Fatalf("open %d: the table is not read", want)
		}
		m, _ = step(t, m, cmd())
		if d := ansi.Strip(m.detail()); reads != want || !strings.Contains(d, fmt.Sprintf("0x800%d", want)) {
			t.Fatalf("open %d: %d reads:\n%s", want, reads, d)
		}
		m, _ = step(t, m, keyMsg("esc"))
	}
}

// TestHistoryDeltaAfterAGap: a counter whose read failed in a sample comes back
// with the change since it was last read, which covers more than its row's
// interval: the history says over how long, instead of showing it as one
// interval's delta. A port that was not read at all (GONE, NOREPLY) may come back
// reset (query.Tracker): its next row has no delta.
func TestHistoryDeltaAfterAGap(t *testing.T) {
	for _, tc := range []struct {
		name  string
		gap   query.PortSample
		delta bool
	}{
		{"read error", query.PortSample{State: "ACTIVE", Readings: []query.Reading{
			{Err: "read failed: input/output error (EIO)"}, {Err: "read failed: input/output error (EIO)"}, na(), na()}}, true},
		{"port gone", query.PortSample{Err: "port went away (state file does not exist)"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := sized(New(Options{Interval: time.Second}), 120, 60)
			for i := range 6 {
				s := &query.Sample{Time: t0.Add(time.Duration(i) * time.Second), Counters: sets().Violations}
				ps := query.PortSample{Ref: ref("mlx5_0", 1), State: "ACTIVE"}
				if i == 3 {
					ps = tc.gap
					ps.Ref = ref("mlx5_0", 1)
				} else {
					ps.Readings = []query.Reading{val(uint64(i)), val(0), na(), na()}
				}
				s.Ports = []query.PortSample{ps}
				m, _ = step(t, m, sampleMsg{sample: s})
			}
			m, _ = step(t, m, keyMsg("enter"))
			d := ansi.Strip(m.detail())
			hist := d[strings.Index(d, "HISTORY"):strings.Index(d, "P_KEY TABLE")]
			rows := 0
			for _, l := range strings.Split(hist, "\n") {
				if !strings.HasPrefix(l, "12:00:0") {
					continue
				}
				rows++
				after := strings.HasPrefix(l, "12:00:04")
				gap := after && tc.delta
				if gap != strings.Contains(l, "+2 in 2.0s") || gap != strings.Contains(l, " 0 in 2.0s") || !gap && strings.Contains(l, " in ") {
					t.Errorf("row %q:\n%s", l, hist)
				}
				if after && !tc.delta && strings.Contains(l, "+") {
					t.Errorf("row %q after the port came back has a delta:\n%s", l, hist)
				}
			}
			if rows != 5 {
				t.Errorf("%d rows:\n%s", rows, hist)
			}
		})
	}
}
