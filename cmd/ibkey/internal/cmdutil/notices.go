package cmdutil

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/textsafe"
)

// Notices prints warnings and notes on stderr, coloured when allowed, and keeps them
// few: after NoticeRepeats of one kind (the message with its numbers masked:
// "mlx5_12: port 3: ..." and "mlx5_7: port 1: ..." are one kind), and after NoticeMax
// in all, the rest are counted, and Summary says how many were not shown. Input the command reads can hold millions of mistakes (a partitions file, a
// sysfs tree of 20,000 bogus devices); the first few say what is wrong.
type Notices struct {
	w     io.Writer
	color bool
	width int // wrap at this many columns; 0: never

	shown  int
	byKind map[string]int
	hidden []*hiddenNotices
}

// hiddenNotices are the notices of one kind that were counted, not printed.
type hiddenNotices struct {
	prefix, kind string
	n            int
	last         string // the last one, for the summary
}

// NoticeRepeats is how many notices of one kind are printed; NoticeMax how many in all.
const (
	NoticeRepeats = 5
	NoticeMax     = 50
)

// NewNotices prints on w; color allows a coloured "warning:" prefix.
func NewNotices(w io.Writer, color bool) *Notices { return &Notices{w: w, color: color} }

// Notices returns the stream's one printer of warnings and notes (one per process, so
// that repeats are counted across a whole command): stderr, coloured when color, its
// lines wrapped to the terminal's width when stderr is one.
func (s *IOStreams) Notices(color bool) *Notices {
	if s.notices == nil {
		s.notices = NewNotices(s.ErrOut, color)
		s.notices.width = s.ErrWidth
	}
	return s.notices
}

// Warn prints "warning: msg".
func (n *Notices) Warn(msg string) { n.print("warning:", msg) }

// Note prints "note: msg".
func (n *Notices) Note(msg string) { n.print("note:", msg) }

// print prints prefix and msg unless too many notices of msg's kind (the message with
// its numbers masked), or in all, were printed.
func (n *Notices) print(prefix, msg string) {
	key := prefix + maskNumbers(msg)
	if n.shown >= NoticeMax {
		n.hide(prefix, key, msg)
		return
	}
	if n.byKind == nil {
		n.byKind = map[string]int{}
	}
	n.byKind[key]++
	if n.byKind[key] > NoticeRepeats {
		n.hide(prefix, key, msg)
		return
	}
	n.shown++
	n.line(prefix, msg)
}

func (n *Notices) line(prefix, msg string) {
	text := wrapLines(prefix+" "+msg, n.width)
	if prefix == "warning:" && n.color {
		text = Paint(prefix, "3", true) + text[len(prefix):]
	}
	fmt.Fprintln(n.w, text)
}

// hide counts a notice not printed: with the others of its kind, or, once NoticeMax
// were printed, with every other notice of a kind not seen before.
func (n *Notices) hide(prefix, key, msg string) {
	of := func(h *hiddenNotices) bool { return h.kind == key }
	i := slices.IndexFunc(n.hidden, of)
	if i < 0 && n.shown >= NoticeMax {
		key = prefix // the catch-all: a message's kind is never empty
		i = slices.IndexFunc(n.hidden, of)
	}
	if i < 0 {
		i = len(n.hidden)
		n.hidden = append(n.hidden, &hiddenNotices{prefix: prefix, kind: key})
	}
	n.hidden[i].n++
	n.hidden[i].last = msg
}

// Summary prints, once, how many notices of each kind were counted and not printed,
// with the last of them.
func (n *Notices) Summary() {
	for _, h := range n.hidden {
		what := "warnings"
		if h.prefix == "note:" {
			what = "notes"
		}
		like := " like these"
		if h.kind == h.prefix {
			like = ""
		}
		n.line(h.prefix, fmt.Sprintf("%s more %s%s not shown (the last: %s)", textsafe.GroupDigits(h.n), what, like, textsafe.Cap(h.last, 200)))
	}
	n.hidden = nil
}

// Label announces a host that is not the real machine, or where data came from.
func (n *Notices) Label(host string) {
	if host != "" {
		n.line("ibkey:", host)
	}
}

// maskNumbers is s with every run of digits (and the hex digits after "0x") as "#":
// the kind of a message about one of many numbered things.
func maskNumbers(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '0' && i+1 < len(s) && (s[i+1] == 'x' || s[i+1] == 'X'):
			j := i + 2
			for j < len(s) && isHex(s[j]) {
				j++
			}
			b.WriteByte('#')
			i = j
		case c >= '0' && c <= '9':
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				i++
			}
			b.WriteByte('#')
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

func isHex(c byte) bool { _, ok := check.HexDigit(c); return ok }
