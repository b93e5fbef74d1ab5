package tui

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/ibkey/ibkey/internal/query"
)

type styles struct {
	title, plain, dim, moved, movedRow, sat, reset, warn, paused, selected lipgloss.Style
}

// newStyles: the 16 ANSI colours (lipgloss.Color("1") is ANSI red), which the
// terminal's palette adapts to its background.
func newStyles() styles {
	return styles{
		title:    lipgloss.NewStyle().Bold(true),
		plain:    lipgloss.NewStyle(),
		dim:      lipgloss.NewStyle().Faint(true),
		moved:    lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("1")),
		movedRow: lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("3")),
		sat:      lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("5")),
		reset:    lipgloss.NewStyle().Foreground(lipgloss.Color("6")),
		warn:     lipgloss.NewStyle().Foreground(lipgloss.Color("3")),
		paused:   lipgloss.NewStyle().Reverse(true).Bold(true),
		selected: lipgloss.NewStyle().Reverse(true),
	}
}

// Short column titles for the partition counters.
var titles = map[string]string{
	query.RcvConstraintErrors:  "RCV CONSTR",
	query.XmitConstraintErrors: "XMIT CONSTR",
	query.PKeyViolations:       "P_KEY VIOL",
	query.QKeyViolations:       "Q_KEY VIOL",
}

// longTitles are used where the full column group has room.
var longTitles = map[string]string{
	query.RcvConstraintErrors:  "RCV CONSTRAINT",
	query.XmitConstraintErrors: "XMIT CONSTRAINT",
}

func title(name string) string { return cmp.Or(titles[name], name) }

// Column widths.
const (
	wMark  = 2 // selection, moved
	wState = 7
	wValue = 6
	wTotal = 6
	wDelta = 5
	wRate  = 6
	wSrc   = 16 // "pma portcounters"
)

// sparks are the trend's levels: one per decade of the rate (see trendCell).
var sparks = []rune("▁▂▃▄▅▆▇█")

// View draws the screen in the alternate screen, the cursor hidden.
func (m Model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	return v
}

// render draws the screen's text. It reads only the model.
func (m Model) render() string {
	if m.screen != screenTable {
		return m.fit(m.pageView())
	}
	var b strings.Builder
	b.WriteString(m.header())
	if m.snap == nil {
		b.WriteString("reading counters…\n")
		return m.fit(b.String())
	}
	rows := m.rows()
	var head, body []string
	if m.all {
		head, body = m.allTable(rows)
	} else {
		head, body = m.portTable(rows)
	}
	n := m.bodyHeight()
	if len(rows) == 0 {
		body = []string{m.st.dim.Render(fmt.Sprintf("  no port matches %q (esc clears the filter)", m.filter))}
	}
	end := min(m.offset+n, len(body))
	shown := body[min(m.offset, end):end]
	for _, l := range head {
		b.WriteString(l + "\n")
	}
	for _, l := range shown {
		b.WriteString(l + "\n")
	}
	for range n - len(shown) {
		b.WriteByte('\n')
	}
	b.WriteString(m.statusLine(len(body), m.offset, len(shown)) + "\n")
	b.WriteString(m.help.ShortHelpView(m.keys.ShortHelp()))
	return m.fit(b.String())
}

// bodyHeight is how many table rows fit: the height less the header, the table's
// column titles, the status line and the help line.
func (m Model) bodyHeight() int {
	head := 2
	if m.all {
		head = 1
	}
	return max(m.height-strings.Count(m.header(), "\n")-head-2, 1)
}

// fit cuts every line to the terminal width.
func (m Model) fit(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, m.width, "…")
	}
	return strings.Join(lines, "\n")
}

// titleLine is a screen's first line: its title, the interval, the last sample's time
// and whether sampling is paused.
func (m Model) titleLine(title string) string {
	t := "--:--:--"
	if m.snap != nil {
		t = m.snap.Time.Format("15:04:05")
	}
	l := m.st.title.Render(title) + fmt.Sprintf("  every %s  %s", m.interval, t)
	if m.paused {
		l += "  " + m.st.paused.Render(" PAUSED ")
	}
	return l + "\n"
}

// header is the table screen's first lines: the title line, the label, what is shown.
func (m Model) header() string {
	var b strings.Builder
	b.WriteString(m.titleLine("ibkey watch counters"))
	if m.label != "" {
		b.WriteString(m.st.warn.Render(m.label) + "\n")
	}
	set := "partition counters"
	if m.all {
		set = "all error counters"
	}
	order := "by port"
	if m.byActive {
		order = "by activity"
	}
	base := "--:--:--"
	if m.snap != nil {
		base = m.tracker.Base.Format("15:04:05")
	}
	b.WriteString(m.st.dim.Render(fmt.Sprintf("%s · sorted %s · totals since %s", set, order, base)))
	switch {
	case m.filtering:
		b.WriteString("  filter: " + m.filter + "█")
	case m.filter != "":
		b.WriteString("  " + m.st.warn.Render("filter: "+m.filter))
	}
	b.WriteByte('\n')
	return b.String()
}

// compact reports whether counter j is unavailable on every port: it gets a narrow
// n/a column instead of a group.
func (m Model) compact(j int) bool {
	return !slices.ContainsFunc(m.snap.Ports, func(p query.PortDelta) bool { return p.Err == "" && p.Counters[j].Unavailable == "" })
}

// cell styles text and pads it to w (widths are counted on the plain text). The
// padding stays outside the style, so a line's trailing blanks can be trimmed.
func cell(text string, w int, right bool, st *lipgloss.Style) string {
	fill := strings.Repeat(" ", max(w-ansi.StringWidth(text), 0))
	if st != nil && text != "" {
		text = st.Render(text)
	}
	if right {
		return fill + text
	}
	return text + fill
}

// pad is cell without a style.
func pad(s string, w int, right bool) string { return cell(s, w, right, nil) }

// portWidth is the port column's width: the longest name, up to a cap that leaves
// the counters room (longer names end in …; the drill-down shows them whole).
func (m Model) portWidth(rows []*query.PortDelta) int {
	w := 8
	for _, p := range rows {
		w = max(w, ansi.StringWidth(p.Ref.String()))
	}
	limit := 12
	switch {
	case m.width >= 160:
		limit = 40
	case m.width >= 110:
		limit = 22
	}
	return min(w, limit)
}

func (m Model) lead(p *query.PortDelta, pw int) string {
	moved := " "
	var st *lipgloss.Style
	if p.Moved {
		moved, st = m.st.movedRow.Render("▶"), &m.st.movedRow
	}
	name := cell(ansi.Truncate(p.Ref.String(), pw, "…"), pw, false, st)
	sel := " "
	if p.Ref == m.selected {
		sel, name = ">", m.st.selected.Render(ansi.Strip(name))
	}
	return sel + moved + name + " " + cell(p.StateWord(), wState, false, nil)
}

const wTrend = 6

// portTable: one row per port, a group of columns per counter, as wide as fits.
func (m Model) portTable(rows []*query.PortDelta) (head, body []string) {
	pw := m.portWidth(rows)
	leadW := wMark + pw + 1 + wState
	naW := func(j int) int { return 2 + max(len(title(m.snap.Counters[j].Name)), 3) }
	// The most of each counter that fits: VALUE TOTAL Δ /s TREND, VALUE Δ TREND, VALUE Δ.
	tiers := []columns{{total: true, rate: true, trend: wTrend}, {trend: wTrend}, {}}
	cols := tiers[2]
	for _, try := range tiers[:2] {
		w := leadW
		for j := range m.snap.Counters {
			if m.compact(j) {
				w += naW(j)
			} else {
				w += 2 + try.width()
			}
		}
		if w <= m.width {
			cols = try
			break
		}
	}
	var h1, h2 strings.Builder
	h1.WriteString(strings.Repeat(" ", leadW))
	h2.WriteString(pad("  PORT", wMark+pw, false) + " " + pad("STATE", wState, false))
	for j, c := range m.snap.Counters {
		if m.compact(j) {
			w := naW(j) - 2
			h1.WriteString("  " + pad(title(c.Name), w, false))
			h2.WriteString("  " + strings.Repeat(" ", w))
			continue
		}
		gw := cols.width()
		ti := title(c.Name)
		if cols.total {
			long := cmp.Or(longTitles[c.Name], ti)
			if full := long + " (" + c.Source.Name() + ")"; ansi.StringWidth(full) <= gw {
				ti = full
			} else if ansi.StringWidth(long) <= gw {
				ti = long
			}
		}
		h1.WriteString("  " + pad(ti, gw, false))
		h2.WriteString("  " + cols.head())
	}
	head = []string{m.st.title.Render(strings.TrimRight(h1.String(), " ")), m.st.title.Render(strings.TrimRight(h2.String(), " "))}
	for _, p := range rows {
		var b strings.Builder
		b.WriteString(m.lead(p, pw))
		if p.Err != "" {
			b.WriteString("  " + m.st.warn.Render(p.Err))
			body = append(body, b.String())
			continue
		}
		for j := range m.snap.Counters {
			cd := &p.Counters[j]
			if m.compact(j) {
				b.WriteString("  " + cell("n/a", naW(j)-2, false, &m.st.dim))
				continue
			}
			b.WriteString("  " + m.group(p.Ref, cd, cols))
		}
		body = append(body, strings.TrimRight(b.String(), " "))
	}
	return head, body
}

// group renders one counter of one port in a table's columns.
func (m Model) group(ref query.PortRef, cd *query.CounterDelta, cols columns) string {
	rest := strings.Repeat(" ", cols.width()-wValue)
	switch {
	case cd.Unavailable != "":
		return cell("n/a", wValue, true, &m.st.dim) + rest
	case cd.Err != "":
		return cell("error", wValue, true, &m.st.warn) + rest
	}
	return m.values(ref, cd, cols)
}

// short formats v in at most w columns: exact when it fits, else with k/M/G/T.
func short(v uint64, w int) string {
	s := strconv.FormatUint(v, 10)
	if len(s) <= w {
		return s
	}
	f := float64(v)
	for _, u := range []string{"k", "M", "G", "T", "P", "E"} {
		f /= 1000
		if t := strconv.FormatFloat(f, 'f', 1, 64) + u; len(t) <= w {
			return t
		}
		if t := strconv.FormatFloat(f, 'f', 0, 64) + u; len(t) <= w {
			return t
		}
	}
	return s
}

// columns are the columns a table shows of each counter: VALUE and Δ, and those set
// here (trend: TREND's width, 0 none).
type columns struct {
	src, total, rate bool
	trend            int
}

// width is how wide the columns are, the spaces between them included.
func (c columns) width() int {
	w := wValue + 1 + wDelta
	if c.src {
		w += wSrc + 1
	}
	if c.total {
		w += 1 + wTotal
	}
	if c.rate {
		w += 1 + wRate
	}
	if c.trend > 0 {
		w += 1 + c.trend
	}
	return w
}

// head is the columns' titles, as wide as the columns (but for a TREND that does not
// fit its title).
func (c columns) head() string {
	h := ""
	if c.src {
		h += pad("SOURCE", wSrc, false) + " "
	}
	h += pad("VALUE", wValue, true)
	if c.total {
		h += " " + pad("TOTAL", wTotal, true)
	}
	h += " " + pad("Δ", wDelta, true)
	if c.rate {
		h += " " + pad("/s", wRate, true)
	}
	if c.trend > 0 {
		h += " " + pad("TREND", c.trend, false)
	}
	return h
}

// source is the SOURCE cell and its space: "-" for a counter that was not read
// (nothing was asked).
func (c columns) source(cd *query.CounterDelta) string {
	if !c.src {
		return ""
	}
	src := cd.Source
	if cd.Unavailable != "" {
		src = "-"
	}
	return pad(src, wSrc, false) + " "
}

// values are the cells of a readable counter from VALUE on, those c shows.
func (m Model) values(ref query.PortRef, cd *query.CounterDelta, c columns) string {
	l := cell(short(cd.Value, wValue), wValue, true, nil)
	if cd.Saturated {
		l = cell(short(cd.Value, wValue-1)+"!", wValue, true, &m.st.sat)
	}
	if c.total {
		t := short(cd.Total, wTotal)
		if cd.TotalLowerBound {
			t = "≥" + short(cd.Total, wTotal-1)
		}
		l += " " + cell(t, wTotal, true, nil)
	}
	switch {
	case cd.Reset:
		l += " " + cell("↺"+short(cd.Delta, wDelta-1), wDelta, true, &m.st.reset)
	case cd.HasDelta && cd.Delta > 0 && cd.Saturated:
		l += " " + cell("≥"+short(cd.Delta, wDelta-1), wDelta, true, &m.st.sat)
	case cd.HasDelta && cd.Delta > 0:
		l += " " + cell("+"+short(cd.Delta, wDelta-1), wDelta, true, &m.st.moved)
	case cd.HasDelta:
		l += " " + cell("0", wDelta, true, &m.st.dim)
	case cd.Saturated && m.snap.Interval > 0:
		l += " " + cell("?", wDelta, true, &m.st.sat) // counts lost: unknown, not 0
	default:
		l += " " + pad("", wDelta, true)
	}
	switch {
	case c.rate && cd.HasDelta && (cd.Saturated || cd.Reset):
		// The delta is a lower bound (counts lost at the maximum, or before the
		// reset), so is the rate over it.
		l += " " + cell("≥"+formatRate(cd.Rate, wRate-1), wRate, true, nil)
	case c.rate && cd.HasDelta:
		l += " " + cell(formatRate(cd.Rate, wRate), wRate, true, nil)
	case c.rate:
		l += " " + pad("", wRate, true)
	}
	if c.trend > 0 {
		l += " " + m.trend(ref, cd.Name, c.trend)
	}
	return l
}

// formatRate formats a rate in at most w columns (w >= 5).
func formatRate(r float64, w int) string {
	switch {
	case r == 0:
		return "0"
	case r < 10:
		return strconv.FormatFloat(r, 'f', 2, 64)
	case r < 1000:
		return strconv.FormatFloat(r, 'f', 1, 64)
	case r < 1e5:
		return strconv.FormatFloat(r, 'f', 0, 64)
	}
	return short(uint64(r), w)
}

// level is a rate's trend level: its decade, on a fixed scale (▁ under 1/s, ▂ under
// 10/s, ... █ from 1,000,000/s). A fixed scale, not one relative to the window's
// maximum: a steady 3/s stays a low flat line instead of filling every cell as if
// it were at the top.
func level(rate float64) int {
	if rate < 1 {
		return 0
	}
	return min(int(math.Log10(rate))+1, len(sparks)-1)
}

// trend draws the last w samples of a counter taken at the current interval, newest
// on the right: · nothing counted, a bar per decade of the rate, ↺ reset, ! saturated
// (counts lost: unknown, never drawn as quiet), blank not known.
func (m Model) trend(ref query.PortRef, name string, w int) string {
	pts := m.hist.sameInterval(ref, name, w)
	var b strings.Builder
	b.WriteString(strings.Repeat(" ", w-len(pts)))
	for _, p := range pts {
		b.WriteString(m.trendCell(p))
	}
	return b.String()
}

func (m Model) trendCell(p point) string {
	switch p.kind {
	case pointDelta:
		if p.delta == 0 {
			return m.st.dim.Render("·")
		}
		return m.st.moved.Render(string(sparks[level(p.rate)]))
	case pointReset:
		return m.st.reset.Render("↺")
	case pointSaturated:
		return m.st.sat.Render("!")
	}
	return " "
}

// allTable: every error counter, one row per counter, grouped by port.
func (m Model) allTable(rows []*query.PortDelta) (head, body []string) {
	pw := m.portWidth(rows)
	leadW := wMark + pw + 1 + wState
	wName := 0
	for _, c := range m.snap.Counters {
		wName = max(wName, len(c.Name))
	}
	fixed := leadW + 2 + wName + 1
	cols := columns{src: true, total: true, rate: true, trend: 12}
	if fixed+cols.width() > m.width {
		cols = columns{rate: true}
		cols.trend = max(min(m.width-fixed-cols.width()-1, 12), 0)
	}
	head = []string{m.st.title.Render(strings.TrimRight(pad("  PORT", wMark+pw, false)+" "+pad("STATE", wState, false)+"  "+
		pad("COUNTER", wName, false)+" "+cols.head(), " "))}
	blank := strings.Repeat(" ", leadW)
	for _, p := range rows {
		if p.Err != "" {
			body = append(body, m.lead(p, pw)+"  "+m.st.warn.Render(p.Err))
			continue
		}
		for j, c := range m.snap.Counters {
			cd := &p.Counters[j]
			lead := blank
			if j == 0 {
				lead = m.lead(p, pw)
			}
			// An n/a's reason is in the notes.
			l := lead + "  " + pad(c.Name, wName, false) + " " + cols.source(cd) + m.group(p.Ref, cd, cols)
			body = append(body, strings.TrimRight(l, " "))
		}
	}
	return head, body
}

// statusLine: where the view is in the table, the marks, and the first note (? lists
// them all).
func (m Model) statusLine(total, offset, shown int) string {
	var parts []string
	if total > shown || m.filter != "" {
		what := "ports"
		if m.all {
			what = "rows"
		}
		parts = append(parts, fmt.Sprintf("%s %d-%d of %d", what, min(offset+1, total), offset+shown, total))
		if m.filter != "" {
			parts[0] += fmt.Sprintf(" (filtered from %d ports)", len(m.snap.Ports))
		}
	}
	parts = append(parts, "▶ moved ! saturated ↺ reset ≥ lower bound")
	if notes := m.notes(); len(notes) > 0 {
		// The first note, cut at a word when it does not fit (? lists them whole).
		more := " (?)"
		if len(notes) > 1 {
			more = fmt.Sprintf(" (+%d: ?)", len(notes)-1)
		}
		note := notes[0]
		room := m.width - ansi.StringWidth(strings.Join(parts, " · ")+" · ")
		switch {
		case ansi.StringWidth(note) <= room && len(notes) == 1:
		case ansi.StringWidth(note+more) <= room:
			note += more
		case room-ansi.StringWidth("…"+more) >= 12:
			note = wrapWords(note, room-ansi.StringWidth("…"+more), 1)[0] + "…" + more
		default:
			note = "notes: ?"
		}
		parts = append(parts, note)
	}
	return m.st.dim.Render(strings.Join(parts, " · "))
}

// notes explain n/a and error cells, each reason once.
func (m Model) notes() []string {
	if m.snap == nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, p := range m.snap.Ports {
		if p.Err != "" {
			add(p.Ref.String() + ": " + p.Err)
			continue
		}
		for j := range p.Counters {
			cd := &p.Counters[j]
			switch {
			case cd.Unavailable != "" && m.compact(j):
				add(title(cd.Name) + ": n/a: " + cd.Unavailable)
			case cd.Unavailable != "":
				add(p.Ref.String() + " " + cd.Name + ": n/a: " + cd.Unavailable)
			case cd.Err != "":
				add(p.Ref.String() + " " + cd.Name + ": " + cd.Err)
			}
		}
	}
	return out
}
