package tui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/ibkey/ibkey/internal/query"
)

// The drill-down and help pages scroll in a viewport as wide as the terminal. Their
// text is laid out for that width: explanations wrap at spaces into their column
// (hang), tables narrow or leave columns out; nothing is cut mid-word.

// minColumn is the narrowest column a hanging paragraph keeps beside its label;
// narrower, its lines continue at hangFallback instead.
const (
	minColumn    = 32
	hangFallback = 4
)

// hang lays text out after prefix, in at most width columns: the lines break at
// spaces and continue under the text's first column, or at hangFallback when that
// column would be narrower than minColumn. A word longer than a line is cut. prefix
// may be styled (its width is counted without escapes); st styles the text (nil:
// plain).
func hang(prefix, text string, width int, st *lipgloss.Style) []string {
	pw := ansi.StringWidth(prefix)
	ind := pw
	if width-ind < minColumn {
		ind = min(hangFallback, pw)
	}
	first, rest := width-pw, max(width-ind, 1)
	var lines []string
	if first < 8 && first < ansi.StringWidth(text) {
		// No room beside the label: the text starts on the next line.
		lines = append([]string{""}, wrapWords(text, rest, rest)...)
	} else {
		lines = wrapWords(text, max(first, 1), rest)
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		if st != nil && l != "" {
			l = st.Render(l)
		}
		if i == 0 {
			out[i] = prefix + l
		} else {
			out[i] = strings.Repeat(" ", ind) + l
		}
	}
	return out
}

// wrapWords breaks text at spaces into lines of at most first columns (the first
// line) and rest (the others); a word longer than a line is cut into pieces.
func wrapWords(text string, first, rest int) []string {
	var lines []string
	line, lw, limit := "", 0, first
	next := func() {
		lines = append(lines, line)
		line, lw, limit = "", 0, rest
	}
	for _, w := range strings.Fields(text) {
		ww := ansi.StringWidth(w)
		if lw > 0 && lw+1+ww <= limit {
			line, lw = line+" "+w, lw+1+ww
			continue
		}
		if lw > 0 {
			next()
		}
		for ww > limit {
			cut := ansi.Truncate(w, limit, "")
			line = cut
			next()
			w = w[len(cut):]
			ww = ansi.StringWidth(w)
		}
		line, lw = w, ww
	}
	if lw > 0 || len(lines) == 0 {
		lines = append(lines, line)
	}
	return lines
}

// pageView is the detail or help screen: a title, the scrolling page, a help line.
func (m Model) pageView() string {
	var b strings.Builder
	what := "columns and keys"
	if m.screen == screenDetail {
		what = m.selected.String()
	}
	b.WriteString(m.titleLine("ibkey watch counters › " + what))
	b.WriteString(m.vp.View() + "\n")
	pos := ""
	if m.vp.TotalLineCount() > m.vp.Height() {
		pos = fmt.Sprintf("  %d%%", int(m.vp.ScrollPercent()*100))
	}
	b.WriteString(m.help.ShortHelpView([]key.Binding{m.keys.Back, m.keys.Up, m.keys.Down, m.keys.PageDown, m.keys.Pause, m.keys.Quit}) + m.st.dim.Render(pos))
	return b.String()
}

// page collects a page's lines.
type page struct {
	b     strings.Builder
	width int
}

func (p *page) line(s string) { p.b.WriteString(s + "\n") }

// para writes text after prefix, wrapped (hang).
func (p *page) para(prefix, text string, st *lipgloss.Style) {
	for _, l := range hang(prefix, text, p.width, st) {
		p.line(l)
	}
}

// detail is the drill-down page of the selected port: its counters, their history
// and its P_Key table.
func (m Model) detail() string {
	pg := &page{width: m.width}
	var p *query.PortDelta
	if m.snap != nil {
		if i := slices.IndexFunc(m.snap.Ports, func(d query.PortDelta) bool { return d.Ref == m.selected }); i >= 0 {
			p = &m.snap.Ports[i]
		}
	}
	if p == nil {
		pg.para("", "no sample of "+m.selected.String()+" yet", nil)
		return pg.b.String()
	}
	pg.para("port     ", p.Ref.String(), nil)
	if p.Address != "" {
		pg.para("address  ", p.Address, nil)
	}
	pg.para("state    ", p.StateWord(), nil)
	if p.Err != "" {
		pg.para(m.st.warn.Render("error")+"    ", p.Err, &m.st.warn)
	}
	pg.para("totals   ", "since "+m.tracker.Base.Format("15:04:05")+" (b resets them on screen; the hardware counters are never written)", nil)
	pg.line("")
	if p.Err == "" {
		m.counterTable(pg, p)
		pg.line("")
		m.history(pg, p)
	}
	pg.line("")
	m.pkeyTable(pg)
	return pg.b.String()
}

// counterTable lists every counter of port p with all its columns as the width
// allows: TREND takes the room that is left (none under 5 columns); narrower, SOURCE
// goes (the help page lists the sources), then TOTAL and /s. A counter that was not
// read names no source ("-": nothing was asked) and says why, wrapped.
func (m Model) counterTable(pg *page, p *query.PortDelta) {
	wName := len("COUNTER")
	for _, c := range m.snap.Counters {
		wName = max(wName, len(c.Name))
	}
	// TREND takes the room that is left; SOURCE goes first, then TOTAL and /s.
	cols := columns{src: true, total: true, rate: true}
	if wName+2+cols.width() > pg.width {
		cols.src = false
	}
	if wName+2+cols.width() > pg.width {
		cols.total, cols.rate = false, false
	}
	if tw := min(24, pg.width-wName-2-cols.width()-1); tw >= len("TREND") {
		cols.trend = tw
	}
	pg.line(m.st.title.Render(strings.TrimRight(pad("COUNTER", wName, false)+"  "+cols.head(), " ")))
	for j, c := range m.snap.Counters {
		cd := &p.Counters[j]
		lead := pad(c.Name, wName, false) + "  " + cols.source(cd)
		switch {
		case cd.Unavailable != "":
			pg.para(lead+m.st.dim.Render(pad("n/a", wValue, true))+"  ", cd.Unavailable, &m.st.dim)
		case cd.Err != "":
			pg.para(lead+m.st.warn.Render(pad("error", wValue, true))+"  ", cd.Err, &m.st.warn)
		default:
			pg.line(strings.TrimRight(lead+m.values(p.Ref, cd, cols), " "))
		}
	}
}

// formatInterval says how long an interval was as a person reads it: milliseconds
// under a second, seconds with one decimal under a minute, whole seconds above.
func formatInterval(d time.Duration) string {
	switch {
	case d < time.Second:
		return strconv.FormatInt(d.Round(time.Millisecond).Milliseconds(), 10) + "ms"
	case d < time.Minute:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
	}
	return d.Round(time.Second).String()
}

// history lists the port's recent samples, newest first: Δ per sample of each
// readable counter (in the all-counters view, of those that counted something).
// A row is one sample: a counter's cell is on the row of the sample it came from
// (the counters only the all-counters view reads have none from before it was
// turned on). Each column is as wide as its widest cell; the columns that do not
// fit the terminal are left out and counted.
func (m Model) history(pg *page, p *query.PortDelta) {
	type col struct {
		title string
		cells map[time.Time]string // by the sample's time
		width int
	}
	var cols []col
	var rows []point // a point of each sample, for its time and interval
	seen := map[time.Time]bool{}
	deltas := 0 // the most samples with a delta of any readable counter
	for j, c := range m.snap.Counters {
		if !p.Counters[j].OK() {
			continue
		}
		ps := m.hist[histKey{p.Ref, c.Name}]
		if ps == nil {
			continue
		}
		deltas = max(deltas, len(ps))
		if m.all && !slices.ContainsFunc(ps, func(pt point) bool { return pt.delta > 0 || pt.kind == pointSaturated || pt.kind == pointReset }) {
			continue
		}
		cl := col{title: ansi.Truncate(title(c.Name), 14, "…"), cells: map[time.Time]string{}}
		cl.width = ansi.StringWidth(cl.title)
		for _, pt := range ps {
			s := historyCell(pt)
			if pt.span > 0 && !similar(pt.span, pt.interval) {
				s += " in " + formatInterval(pt.span) // not read in between: since it last was
			}
			cl.cells[pt.at] = s
			cl.width = max(cl.width, ansi.StringWidth(s))
			if !seen[pt.at] {
				seen[pt.at] = true
				rows = append(rows, pt)
			}
		}
		cols = append(cols, cl)
	}
	pg.line(m.st.title.Render("HISTORY") + m.st.dim.Render(" Δ per sample, newest first"))
	switch {
	case deltas == 0:
		pg.para("  ", "(a delta needs two samples)", &m.st.dim)
		return
	case len(cols) == 0: // the all-counters view, and nothing counted
		pg.para("  ", fmt.Sprintf("no counter of this port counted anything in the last %d samples", deltas), &m.st.dim)
		return
	}
	slices.SortFunc(rows, func(a, b point) int { return b.at.Compare(a.at) })
	rows = rows[:min(len(rows), histLen)]
	// Under a second, samples share a second: the time shows tenths.
	timeFmt := "15:04:05"
	wInt := len("INTERVAL")
	for _, pt := range rows {
		if pt.interval < time.Second {
			timeFmt = "15:04:05.0"
		}
		wInt = max(wInt, len(formatInterval(pt.interval)))
	}
	w := len(timeFmt) + 1 + wInt
	shown := 0
	for _, c := range cols {
		if w+2+c.width > pg.width {
			break
		}
		w += 2 + c.width
		shown++
	}
	h := pad("TIME", len(timeFmt), false) + " " + pad("INTERVAL", wInt, true)
	for _, c := range cols[:shown] {
		h += "  " + pad(c.title, c.width, true)
	}
	pg.line(m.st.title.Render(h))
	for _, pt := range rows {
		l := pt.at.Format(timeFmt) + " " + pad(formatInterval(pt.interval), wInt, true)
		for _, c := range cols[:shown] {
			l += "  " + pad(c.cells[pt.at], c.width, true)
		}
		pg.line(l)
	}
	if left := len(cols) - shown; left > 0 {
		pg.para("  ", fmt.Sprintf("(%d more counter(s) not shown: the terminal is too narrow for their columns)", left), &m.st.dim)
	}
}

// historyCell is one sample of one counter in the history.
func historyCell(pt point) string {
	switch pt.kind {
	case pointDelta:
		s := strconv.FormatUint(pt.delta, 10)
		if pt.delta > 0 {
			s = "+" + s
		}
		return s
	case pointReset:
		return "↺" + strconv.FormatUint(pt.delta, 10)
	case pointSaturated:
		if pt.delta > 0 {
			return "≥" + strconv.FormatUint(pt.delta, 10) + "!"
		}
		return "! at max"
	}
	return "-"
}

// pkeyTable renders the port's P_Key table as the command's LoadPort read it.
func (m Model) pkeyTable(pg *page) {
	pg.line(m.st.title.Render("P_KEY TABLE"))
	switch {
	case m.port.ref != m.selected || m.loadPort == nil:
		pg.para("  ", "not read (this screen was started without a way to read it)", &m.st.dim)
		return
	case m.port.pending:
		pg.para("  ", "reading…", &m.st.dim)
		return
	case m.port.err != nil:
		pg.para("  ", "not read: "+m.port.err.Error(), &m.st.warn)
		return
	case m.port.view == nil || m.port.view.Table == nil:
		why := "no table"
		if m.port.view != nil && m.port.view.TableMissing != "" {
			why = m.port.view.TableMissing
		}
		pg.para("  ", why, &m.st.dim)
		return
	}
	v := m.port.view
	if !v.TableTrusted() {
		pg.para("  ", "the port is "+v.Port.State.Name+": the table's contents are not defined until it is ARMED or ACTIVE", &m.st.warn)
	}
	t := v.Table
	pg.para("  ", t.Sizes(), nil)
	pg.line(m.st.title.Render("  INDEX  P_KEY   KEY     MEMBER   NOTES"))
	for _, e := range t.Entries {
		if e.Unreadable == "" && !e.PKey.Valid() && !e.Hole {
			continue // empty slots after the last key
		}
		if e.Unreadable != "" {
			pg.para(m.st.warn.Render(fmt.Sprintf("  %5d  unreadable:", e.Index))+" ", e.Unreadable, &m.st.warn)
			continue
		}
		var notes []string
		if e.Hole {
			notes = append(notes, "hole (invalid entry below a valid one)")
		}
		if e.PKey.Valid() && e.PKey.IsDefault() {
			notes = append(notes, "default partition")
		}
		if e.Both {
			notes = append(notes, "held as full and as limited")
		}
		if e.DuplicateOf >= 0 {
			notes = append(notes, fmt.Sprintf("duplicate of index %d", e.DuplicateOf))
		}
		notes = append(notes, e.Interfaces...)
		member := ""
		if e.PKey.Valid() {
			member = e.PKey.Membership().String()
		}
		lead := fmt.Sprintf("  %5d  %s  %s  %-7s  ", e.Index, e.PKey, e.PKey.Partition().String(), member)
		if len(notes) == 0 {
			pg.line(strings.TrimRight(lead, " "))
			continue
		}
		pg.para(lead, strings.Join(notes, ", "), nil)
	}
	if n := len(t.Entries) - t.Valid - len(t.Unread()); n > 0 { // those not read are listed
		pg.para("  ", fmt.Sprintf("(%d invalid entries not listed, except holes)", n), &m.st.dim)
	}
}

// helpColumns explains the table's columns, one paragraph each.
var helpColumns = []struct{ term, text string }{
	{"PORT", "device/port (a fabric port: node description/port). > marks the selected port (enter opens it), ▶ a port whose counters moved in the last interval."},
	{"STATE", "the port's state; GONE: a local port went away; NOREPLY: a fabric port did not answer this time."},
	{"RCV CONSTR", "PortRcvConstraintErrors: packets dropped on receive by the partition (P_Key) enforcement of a switch port, or raw-packet filtering."},
	{"XMIT CONSTR", "PortXmitConstraintErrors: the same on transmit."},
	{"P_KEY VIOL", "PortInfo P_KeyViolations: packets with a P_Key the port's table lacks."},
	{"Q_KEY VIOL", "PortInfo Q_KeyViolations: datagrams with a Q_Key that did not match. (IBA vol. 1: PortCounters 16.1.3.5, PortInfo 14.2.5.6)"},
	{"VALUE", "the hardware counter now. ! it is at its maximum: it stopped counting, later drops are lost (error counters saturate, they do not wrap)."},
	{"TOTAL", "the sum of deltas since the baseline (b); ≥ a lower bound (counts lost to saturation or a reset)."},
	{"Δ", "the change over the last interval, or since the counter was last read when it was not read in between (the history says over how long); ↺ the counter was reset (the delta counts from 0: a lower bound); ? saturated: unknown, not 0."},
	{"/s", "the rate over the time since the previous reading; ≥ a lower bound, as its Δ is (saturated or reset)."},
	{"TREND", "one cell per sample taken at the current interval, newest on the right (samples at another interval, before + or - or a pause, are left out): · nothing counted; a bar per decade of the rate: ▁ under 1/s, ▂ 1-10/s, ▃ 10-100/s, ▄ 100-1k/s, ▅ 1k-10k/s, ▆ 10k-100k/s, ▇ 100k-1M/s, █ more; ↺ reset; ! saturated (counts lost); blank: not known."},
	{"n/a", "not read from this source, or a counter the port does not have; the reasons are below. n/a is never 0."},
}

// columnsHelp is the ? page.
func (m Model) columnsHelp() string {
	pg := &page{width: m.width}
	pg.line(m.st.title.Render("COLUMNS"))
	for _, c := range helpColumns {
		pg.para("  "+pad(c.term, 11, false)+" ", c.text, nil)
	}
	pg.line("")
	pg.para("  ", "Narrow terminals show VALUE Δ only, then TREND; TOTAL and /s from ~150 columns. enter shows everything for one port: all columns, the history, its P_Key table.", nil)
	pg.line("")
	if m.snap != nil {
		pg.line(m.st.title.Render("SOURCES"))
		for j, c := range m.snap.Counters {
			src := c.Source.Name()
			if m.compact(j) {
				src = "- (read on no port: see NOTES)"
			}
			pg.para("  "+pad(c.Name, 32, false)+" ", src, nil)
		}
		pg.line("")
	}
	if notes := m.notes(); len(notes) > 0 {
		pg.line(m.st.title.Render("NOTES"))
		for _, n := range notes {
			pg.para("  - ", n, nil)
		}
		pg.line("")
	}
	pg.line(m.st.title.Render("KEYS"))
	var items []string
	for _, g := range m.keys.FullHelp() {
		for _, k := range g {
			items = append(items, pad(k.Help().Key, 7, false)+" "+k.Help().Desc)
		}
	}
	iw := 0
	for _, it := range items {
		iw = max(iw, ansi.StringWidth(it))
	}
	iw += 3
	per := max((pg.width-2)/iw, 1)
	for i := 0; i < len(items); i += per {
		row := items[i:min(i+per, len(items))]
		var l strings.Builder
		l.WriteString("  ")
		for k, it := range row {
			if k < len(row)-1 {
				it = pad(it, iw, false)
			}
			l.WriteString(it)
		}
		pg.line(l.String())
	}
	pg.para("  ", "esc/← goes back and clears the filter; ctrl+c quits, also while typing a filter; ctrl+z suspends the screen (fg in the shell resumes it).", nil)
	return pg.b.String()
}
