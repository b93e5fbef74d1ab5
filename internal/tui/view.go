package tui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"github.com/ibkey/ibkey/internal/query"
)

const colorProfile = termenv.ANSI

type styles struct {
	title, dim, moved, movedRow, sat, reset, warn, paused lipgloss.Style
}

func newStyles(r *lipgloss.Renderer) styles {
	return styles{
		title:    r.NewStyle().Bold(true),
		dim:      r.NewStyle().Faint(true),
		moved:    r.NewStyle().Bold(true).Foreground(lipgloss.Color("1")),
		movedRow: r.NewStyle().Bold(true).Foreground(lipgloss.Color("3")),
		sat:      r.NewStyle().Bold(true).Foreground(lipgloss.Color("5")),
		reset:    r.NewStyle().Foreground(lipgloss.Color("6")),
		warn:     r.NewStyle().Foreground(lipgloss.Color("3")),
		paused:   r.NewStyle().Reverse(true).Bold(true),
	}
}

// Short column titles for the partition counters.
var titles = map[string]string{
	query.RcvConstraintErrors:  "RCV CONSTRAINT",
	query.XmitConstraintErrors: "XMIT CONSTRAINT",
	query.PKeyViolations:       "P_KEY VIOL",
	query.QKeyViolations:       "Q_KEY VIOL",
}

// Column widths of one counter group: VALUE TOTAL Δ /s TREND.
const (
	wMark  = 2
	wPort  = 10
	wState = 7
	wValue = 6
	wTotal = 6
	wDelta = 5
	wRate  = 6
	wTrend = 8
)

const sparks = "▁▂▃▄▅▆▇█"

// View draws the screen. It reads only the model.
func (m Model) View() string {
	var b strings.Builder
	m.header(&b)
	if m.snap == nil {
		b.WriteString("\nreading counters…\n")
		return m.fit(b.String())
	}
	var rows []string
	if m.all {
		rows = m.allRows()
	} else {
		rows = m.portRows()
	}
	// Rows first; the footer's explanations get what room is left.
	avail := m.height - strings.Count(b.String(), "\n") - 2 // the help line and the blank above it
	if len(rows) > max(avail, 2) {
		more := len(rows) - max(avail-1, 2)
		rows = append(rows[:len(rows)-more], m.st.dim.Render(fmt.Sprintf("  … %d more rows (make the terminal taller)", more)))
	}
	footer := m.footer()
	if room := avail - len(rows); len(footer) > room {
		footer = footer[:max(room, 0)]
	}
	for _, r := range rows {
		b.WriteString(r)
		b.WriteByte('\n')
	}
	for _, f := range footer {
		b.WriteString(f)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	b.WriteString(m.help.View(m.keys))
	return m.fit(b.String())
}

// fit cuts every line to the terminal width.
func (m Model) fit(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if ansi.StringWidth(l) > m.width {
			lines[i] = ansi.Truncate(l, m.width, "…")
		}
	}
	return strings.Join(lines, "\n")
}

func (m Model) header(b *strings.Builder) {
	t := "--:--:--"
	if m.snap != nil {
		t = m.snap.Time.Format("15:04:05")
	}
	b.WriteString(m.st.title.Render("ibkey watch counters"))
	fmt.Fprintf(b, "  every %s  %s", m.interval, t)
	if m.paused {
		b.WriteString("  " + m.st.paused.Render(" PAUSED "))
	}
	b.WriteByte('\n')
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
	b.WriteString("\n\n")
}

// ports returns the snapshot's ports in display order.
func (m Model) ports() []*query.PortDelta {
	ps := make([]*query.PortDelta, len(m.snap.Ports))
	for i := range m.snap.Ports {
		ps[i] = &m.snap.Ports[i]
	}
	if m.byActive {
		slices.SortStableFunc(ps, func(a, b *query.PortDelta) int {
			switch {
			case a.Activity > b.Activity:
				return -1
			case a.Activity < b.Activity:
				return 1
			}
			return 0
		})
	}
	return ps
}

// compact reports whether counter j is unavailable on every port: it gets a narrow
// n/a column instead of a group.
func (m Model) compact(j int) bool {
	for _, p := range m.snap.Ports {
		if p.Err == "" && p.Counters[j].Unavailable == "" {
			return false
		}
	}
	return true
}

func pad(s string, w int, right bool) string {
	n := ansi.StringWidth(s)
	if n >= w {
		return s
	}
	if right {
		return strings.Repeat(" ", w-n) + s
	}
	return s + strings.Repeat(" ", w-n)
}

// cell pads text to w then styles it (widths are counted on the plain text).
func cell(text string, w int, right bool, st *lipgloss.Style) string {
	s := pad(text, w, right)
	if st != nil && text != "" {
		return st.Render(s)
	}
	return s
}

func (m Model) lead(p *query.PortDelta) string {
	mark, port := "  ", cell(p.Ref.String(), wPort, false, nil)
	if p.Moved {
		mark = m.st.movedRow.Render("▶ ")
		port = cell(p.Ref.String(), wPort, false, &m.st.movedRow)
	}
	state := p.State
	if p.Err != "" {
		state = "GONE" // a local port went away
		if p.Address != "" {
			state = "NOREPLY" // a fabric port did not answer (it may again)
		}
	}
	return mark + port + " " + cell(state, wState, false, nil)
}

// portRows: one row per port, a group of columns per counter.
func (m Model) portRows() []string {
	var h1, h2 strings.Builder
	h1.WriteString(strings.Repeat(" ", wMark+wPort+1+wState))
	h2.WriteString(pad("  PORT", wMark+wPort, false) + " " + pad("STATE", wState, false))
	gw := wValue + wTotal + wDelta + wRate + wTrend + 4
	for j, c := range m.snap.Counters {
		title := titles[c.Name]
		if title == "" {
			title = c.Name
		}
		if m.compact(j) {
			w := max(len(title), 3)
			h1.WriteString("  " + pad(title, w, false))
			h2.WriteString("  " + strings.Repeat(" ", w))
			continue
		}
		h1.WriteString("  " + pad(title+" ("+c.Source.Name()+")", gw, false))
		h2.WriteString("  " + pad("VALUE", wValue, true) + " " + pad("TOTAL", wTotal, true) + " " +
			pad("Δ", wDelta, true) + " " + pad("/s", wRate, true) + " " + pad("TREND", wTrend, false))
	}
	rows := []string{m.st.title.Render(strings.TrimRight(h1.String(), " ")), m.st.title.Render(strings.TrimRight(h2.String(), " "))}
	for _, p := range m.ports() {
		var r strings.Builder
		r.WriteString(m.lead(p))
		if p.Err != "" {
			r.WriteString("  " + m.st.warn.Render(p.Err))
			rows = append(rows, r.String())
			continue
		}
		for j, c := range m.snap.Counters {
			cd := &p.Counters[j]
			if m.compact(j) {
				title := titles[c.Name]
				if title == "" {
					title = c.Name
				}
				r.WriteString("  " + cell("n/a", max(len(title), 3), false, &m.st.dim))
				continue
			}
			r.WriteString("  " + m.group(p.Ref, cd))
		}
		rows = append(rows, strings.TrimRight(r.String(), " "))
	}
	return rows
}

// group renders VALUE TOTAL Δ /s TREND of one counter.
func (m Model) group(ref query.PortRef, cd *query.CounterDelta) string {
	switch {
	case cd.Unavailable != "":
		return cell("n/a", wValue, true, &m.st.dim) + strings.Repeat(" ", wTotal+wDelta+wRate+wTrend+4)
	case cd.Err != "":
		return cell("error", wValue, true, &m.st.warn) + strings.Repeat(" ", wTotal+wDelta+wRate+wTrend+4)
	}
	value, total, delta, rate := m.cells(cd)
	return value + " " + total + " " + delta + " " + rate + " " + m.trend(ref, cd.Name, wTrend)
}

// cells formats VALUE, TOTAL, Δ and /s of a readable counter.
func (m Model) cells(cd *query.CounterDelta) (value, total, delta, rate string) {
	v := strconv.FormatUint(cd.Value, 10)
	if cd.Saturated {
		value = cell(v+"!", wValue, true, &m.st.sat)
	} else {
		value = cell(v, wValue, true, nil)
	}
	t := strconv.FormatUint(cd.Total, 10)
	if cd.TotalLowerBound {
		t = "≥" + t
	}
	total = cell(t, wTotal, true, nil)
	switch {
	case cd.Reset:
		delta = cell("↺"+strconv.FormatUint(cd.Delta, 10), wDelta, true, &m.st.reset)
	case cd.HasDelta && cd.Delta > 0:
		delta = cell("+"+strconv.FormatUint(cd.Delta, 10), wDelta, true, &m.st.moved)
	case cd.HasDelta:
		delta = cell("0", wDelta, true, &m.st.dim)
	case cd.Saturated && m.snap.Interval > 0:
		delta = cell("?", wDelta, true, &m.st.sat)
	default:
		delta = pad("", wDelta, true)
	}
	if cd.HasDelta {
		rate = cell(formatRate(cd.Rate), wRate, true, nil)
	} else {
		rate = pad("", wRate, true)
	}
	return
}

func formatRate(r float64) string {
	switch {
	case r == 0:
		return "0"
	case r < 10:
		return strconv.FormatFloat(r, 'f', 2, 64)
	case r < 1000:
		return strconv.FormatFloat(r, 'f', 1, 64)
	}
	return strconv.FormatFloat(r, 'f', 0, 64)
}

// trend is a sparkline of the last w per-interval deltas, scaled to their maximum.
func (m Model) trend(ref query.PortRef, name string, w int) string {
	var buf [query.HistoryLen]uint64
	h := m.tracker.Trend(ref, name, w, buf[:0])
	var hi uint64
	for _, v := range h {
		hi = max(hi, v)
	}
	var b strings.Builder
	for _, v := range h {
		i := 0
		if hi > 0 && v > 0 {
			i = 1 + int((v*uint64(len([]rune(sparks))-2)+hi-1)/hi)
		}
		b.WriteRune([]rune(sparks)[i])
	}
	s := pad(b.String(), w, false)
	if hi > 0 {
		return m.st.moved.Render(s)
	}
	return m.st.dim.Render(s)
}

// allRows: every error counter, one row per counter, grouped by port.
func (m Model) allRows() []string {
	const wName, wSrc = 32, 16 // wSrc: "pma portcounters"
	head := pad("  PORT", wMark+wPort, false) + " " + pad("STATE", wState, false) + "  " + pad("COUNTER", wName, false) + " " +
		pad("SOURCE", wSrc, false) + " " + pad("VALUE", wValue, true) + " " + pad("TOTAL", wTotal, true) + " " +
		pad("Δ", wDelta, true) + " " + pad("/s", wRate, true) + " " + "TREND"
	rows := []string{m.st.title.Render(head)}
	blank := strings.Repeat(" ", wMark+wPort+1+wState)
	for _, p := range m.ports() {
		if p.Err != "" {
			rows = append(rows, m.lead(p)+"  "+m.st.warn.Render(p.Err))
			continue
		}
		for j, c := range m.snap.Counters {
			cd := &p.Counters[j]
			lead := blank
			if j == 0 {
				lead = m.lead(p)
			}
			r := lead + "  " + pad(c.Name, wName, false) + " " + pad(cd.Source, wSrc, false) + " "
			switch {
			case cd.Unavailable != "":
				r += cell("n/a", wValue, true, &m.st.dim)
			case cd.Err != "":
				r += cell("error", wValue, true, &m.st.warn)
			default:
				value, total, delta, rate := m.cells(cd)
				r += value + " " + total + " " + delta + " " + rate + " " + m.trend(p.Ref, cd.Name, 12)
			}
			rows = append(rows, strings.TrimRight(r, " "))
		}
	}
	return rows
}

// footer explains n/a and error cells, each reason once.
func (m Model) footer() []string {
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
			add(m.st.warn.Render(p.Ref.String() + ": " + p.Err))
			continue
		}
		for j := range p.Counters {
			cd := &p.Counters[j]
			switch {
			case cd.Unavailable != "" && m.compact(j):
				add(m.st.dim.Render(cd.Name + ": n/a: " + cd.Unavailable))
			case cd.Unavailable != "":
				add(m.st.dim.Render(p.Ref.String() + " " + cd.Name + ": n/a: " + cd.Unavailable))
			case cd.Err != "":
				add(m.st.warn.Render(p.Ref.String() + " " + cd.Name + ": " + cd.Err))
			}
		}
	}
	if len(out) > 0 {
		out = append([]string{""}, out...)
	}
	out = append(out, m.st.dim.Render("! saturated (at the maximum: later counts are lost)  ↺ reset  ≥ lower bound"))
	return out
}
