package sm

import (
	"bufio"
	"fmt"
	"strings"
	"time"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/jsondoc"
	"github.com/ibkey/ibkey/internal/smlog"
	"github.com/ibkey/ibkey/internal/textsafe"
)

// printer writes sm log's output in its format: one document (JSON), or entries, at
// the end (the summary) or as events come (--each, --follow).
type printer struct {
	o      *LogOptions
	grid   *cmdutil.Grid   // plain output, aligned, when not following
	doc    *jsondoc.Writer // the JSON document, when not following
	events *jsondoc.ArrayWriter
	w      *bufio.Writer
	since  time.Time
}

func newPrinter(o *LogOptions) *printer {
	return &printer{o: o, w: bufio.NewWriterSize(o.IO.Out, 64<<10)}
}

func (p *printer) begin() {
	if p.o.Format == cmdutil.FormatJSON && !p.o.Follow {
		p.doc = jsondoc.New(p.w)
		p.doc.Field("schema_version", cmdutil.SchemaVersionNumber)
		p.doc.Field("log", p.o.File)
		var since *string
		if !p.since.IsZero() {
			since = new(p.since.Format(time.RFC3339))
		}
		p.doc.Field("since_at", since)
		p.events = p.doc.OpenArray("events")
	}
	if p.o.Format == cmdutil.FormatPlain {
		if p.o.Follow {
			fmt.Fprintln(p.w, strings.Join(plainHeader, "\t"))
		} else {
			p.grid = &cmdutil.Grid{Header: plainHeader, FreeLast: true}
		}
	}
}

// event writes one event (JSON: always; text: with --each or --follow).
func (p *printer) event(ev *smlog.Event, ex *smlog.Explanation) error {
	switch p.o.Format {
	case cmdutil.FormatJSON:
		j := eventJSON(ev, ex)
		if !p.o.Follow {
			p.events.Add(j)
		} else if err := cmdutil.WriteJSONLine(p.w, j); err != nil {
			return err
		}
	case cmdutil.FormatPlain:
		if p.o.Each || p.o.Follow {
			p.plainLine(ev, ex, 1, ev.Time)
		}
	default:
		if p.o.Each || p.o.Follow {
			p.block(ev, ex, 1, ev.Time, ev.Time)
		}
	}
	if p.o.Follow {
		return p.w.Flush()
	}
	return nil
}

// end writes the summary and the totals (errs and warns: its events of each
// severity); records is how many of the lines are in OpenSM's format (unchecked:
// whether anything was checked, which the summary says).
func (p *printer) end(s *smlog.Summary, errs, warns int, lines, records int64, unx *unexplained, incomplete []cmdutil.Incomplete) error {
	switch p.o.Format {
	case cmdutil.FormatJSON:
		if p.o.Follow {
			return p.w.Flush()
		}
		p.events.CloseArray()
		p.doc.Array("summary", len(s.Groups), func(i int) any { return groupJSON(s.Groups[i]) })
		p.doc.Array("not_explained", len(unx.groups), func(i int) any { return unexplainedJSON(unx.groups[i]) })
		p.doc.Field("lines_read", lines)
		p.doc.Field("errors", errs)
		p.doc.Field("warnings", warns)
		if len(incomplete) > 0 {
			p.doc.Field("incomplete", incomplete)
		}
		if err := p.doc.Close(); err != nil {
			return err
		}
	case cmdutil.FormatPlain:
		if !p.o.Follow {
			if !p.o.Each {
				for _, g := range s.Groups {
					p.plainLine(g.First, g.Explanation, g.Count, g.LastAt)
				}
			}
			for _, g := range unx.groups {
				p.grid.Add(g.LastAt.Format(time.RFC3339), fmt.Sprint(g.Count), string(smlog.NotExplained), strings.ReplaceAll(g.what(), " ", "_"), "", "", "", g.First.Text())
			}
			if err := p.grid.Render(p.w, cmdutil.FormatPlain); err != nil {
				return err
			}
		}
	default:
		if !p.o.Each && !p.o.Follow {
			for _, g := range s.Groups {
				p.block(g.First, g.Explanation, g.Count, g.FirstAt, g.LastAt)
			}
		}
		if !p.o.Follow {
			for _, g := range unx.groups {
				p.unexplainedBlock(g)
			}
		}
		what := "no partition or key event"
		switch none, _ := unchecked(lines, records); {
		case none != "":
			what = "nothing checked: " + none
		case s.Events > 0:
			what = fmt.Sprintf("%s (%s, %s) in %s", textsafe.Plural(s.Events, "event", "events"),
				textsafe.Plural(errs, "error", "errors"), textsafe.Plural(warns, "warning", "warnings"), textsafe.Plural(len(s.Groups), "problem", "problems"))
		}
		if n := unx.lines(); n > 0 {
			what += fmt.Sprintf("; %s not explained", textsafe.Plural(n, "line", "lines"))
		}
		if !p.since.IsZero() {
			what += " since " + p.since.Format(stampLayout)
		}
		fmt.Fprintf(p.w, "%s; %s read\n", what, textsafe.Plural(int(lines), "line", "lines"))
	}
	return p.w.Flush()
}

const stampLayout = "Jan _2 15:04:05"

// plainHeader: one line per problem or event, awk-friendly; the rule and the fix are
// the free text at the end.
var plainHeader = []string{"LAST_AT", "COUNT", "KIND", "TRAP_OR_CODE", "FROM", "TO", "KEY", "RULE_AND_FIX"}

// plainLine adds a row to the grid, or with --follow writes it at once
// (tab-separated: the widths are not known in advance).
func (p *printer) plainLine(ev *smlog.Event, ex *smlog.Explanation, count int, last time.Time) {
	cells := []string{last.Format(time.RFC3339), fmt.Sprint(count), string(ev.Kind), what(ev), endCell(ex.From), endCell(ex.To), keyCell(ev),
		ex.Rule + "; fix: " + ex.Fix}
	if p.grid != nil {
		p.grid.Add(cells...)
		return
	}
	for i := 0; i < len(cells)-1; i++ {
		cells[i] = cmdutil.PlainCell(cells[i])
	}
	cells[len(cells)-1] = strings.NewReplacer("\t", " ", "\n", " ").Replace(cells[len(cells)-1])
	fmt.Fprintln(p.w, strings.Join(cells, "\t"))
}

func what(ev *smlog.Event) string {
	switch {
	case ev.Trap != 0:
		return fmt.Sprintf("trap_%d", ev.Trap)
	case ev.Code != "":
		return "ERR_" + ev.Code
	}
	return ""
}

func endCell(e *smlog.End) string {
	if e == nil {
		return ""
	}
	return e.Label()
}

func keyCell(ev *smlog.Event) string {
	switch ev.KeyType {
	case smlog.KeyPKey:
		return check.PKey(ev.Key).String()
	case smlog.KeyQKey:
		return check.QKey(ev.Key).String()
	case smlog.KeyMKey, smlog.KeySMKey:
		return fmt.Sprintf("0x%016x", ev.Key)
	}
	return ""
}

// keyWords describes the event's key: "P_Key 0x8001 (partition 0x0001, full member)".
func keyWords(ev *smlog.Event) string {
	switch ev.KeyType {
	case smlog.KeyPKey:
		k := check.PKey(ev.Key)
		return fmt.Sprintf("P_Key %s (partition %s, %s member)", k, k.Partition(), k.Membership())
	case smlog.KeyQKey:
		if check.QKey(ev.Key).Controlled() {
			return "Q_Key " + keyCell(ev) + " (controlled: top bit set)"
		}
		return "Q_Key " + keyCell(ev)
	case smlog.KeyMKey:
		return "M_Key " + keyCell(ev)
	case smlog.KeySMKey:
		return "SM_Key " + keyCell(ev)
	}
	return ""
}

// block writes one problem or event as a headline and indented lines, wrapped to fit
// stdout's width (80 columns when it is not a terminal).
func (p *printer) block(ev *smlog.Event, ex *smlog.Explanation, count int, first, last time.Time) {
	head := string(ev.Kind)
	if w := what(ev); w != "" {
		head += " (" + strings.ReplaceAll(w, "_", " ") + ")"
	}
	p.headline(head, count, first, last, ev.Line)
	line := func(label, text string) {
		if text != "" {
			wrap(p.w, "  "+fmt.Sprintf("%-5s ", label), "        ", text, p.o.IO.Width())
		}
	}
	for _, e := range []struct {
		label string
		end   *smlog.End
	}{{"from", ex.From}, {"to", ex.To}, {"by", reporterOnly(ex)}, {"at", ex.Switch}} {
		if e.end != nil {
			line(e.label, endWords(e.end))
		}
	}
	k := keyWords(ev)
	if ev.SL >= 0 {
		if k != "" {
			k += ", "
		}
		k += fmt.Sprintf("SL %d", ev.SL)
	}
	line("key", k)
	if ev.MGID != "" {
		line("group", ev.MGID)
	}
	line("rule", ex.Rule)
	line("fix", ex.Fix)
	for _, n := range ex.Notes {
		line("note", n)
	}
	fmt.Fprintln(p.w)
}

// headline is a block's first line: head, xCOUNT when it repeats, when (first to
// last), and the log line of its first.
func (p *printer) headline(head string, count int, first, last time.Time, line int64) {
	when := first.Format(stampLayout)
	if count > 1 {
		head += fmt.Sprintf(" x%d", count)
		if l := last.Format(stampLayout); l != when {
			when += " to " + l
		}
	}
	fmt.Fprintf(p.w, "%s  %s  line %d\n", head, when, line)
}

// unexplainedBlock writes a group of lines not explained as a block like an event's.
func (p *printer) unexplainedBlock(g *unexplainedGroup) {
	p.headline("not explained ("+g.what()+")", g.Count, g.First.Time, g.LastAt, g.First.Line)
	wrap(p.w, "  log   ", "        ", textsafe.String(g.First.Text()), p.o.IO.Width())
	wrap(p.w, "  note  ", "        ", unexplainedNote, p.o.IO.Width())
	fmt.Fprintln(p.w)
}

// reporterOnly is the trap's reporter when it is not already one of the ends.
func reporterOnly(ex *smlog.Explanation) *smlog.End {
	r := ex.Reporter
	if r == nil || ex.Switch != nil {
		return nil
	}
	for _, e := range []*smlog.End{ex.From, ex.To} {
		if e != nil && (e.GUID != 0 && e.GUID == r.GUID || e.LID != 0 && e.LID == r.LID) {
			return nil
		}
	}
	return r
}

// endWords is a port with what is known of it.
func endWords(e *smlog.End) string {
	s := e.LongLabel()
	if e.QPKnown {
		if e.QPLow12 {
			s += fmt.Sprintf(", QP 0x...%03x (low 12 bits)", e.QP)
		} else {
			s += fmt.Sprintf(", QP 0x%06x", e.QP)
		}
	}
	return s
}

// wrap writes text after first, wrapped at width with rest before each further line.
func wrap(w *bufio.Writer, first, rest, text string, width int) {
	prefix := first
	line := prefix
	for _, word := range strings.Fields(text) {
		if len(line) > len(prefix) && len(line)+1+len(word) > width {
			w.WriteString(line + "\n")
			prefix = rest
			line = prefix
		}
		if len(line) > len(prefix) {
			line += " "
		}
		line += word
	}
	w.WriteString(line + "\n")
}
