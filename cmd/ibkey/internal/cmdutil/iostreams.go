package cmdutil

import (
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"
)

// IOStreams are a command's input and outputs: data on Out, warnings and errors on
// ErrOut. Whether each is a terminal, and how wide, is decided once, when the streams
// are made.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	InTTY  bool
	OutTTY bool
	ErrTTY bool
	// OutWidth and ErrWidth are the widths in columns the output fits: the terminals',
	// or COLUMNS (Factory.Decide); 0 when not known (not a terminal, no COLUMNS):
	// tables then fit DefaultWidth and stderr is not wrapped.
	OutWidth, ErrWidth int

	wrapped *LineWrapper // Out, when it wraps long lines (WrapOut)
	notices *Notices
}

// SystemIOStreams are the process's stdin, stdout and stderr.
func SystemIOStreams() *IOStreams {
	s := &IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		InTTY: isTerminal(os.Stdin), OutTTY: isTerminal(os.Stdout), ErrTTY: isTerminal(os.Stderr)}
	if s.OutTTY {
		s.OutWidth = termWidth(os.Stdout)
	}
	if s.ErrTTY {
		s.ErrWidth = termWidth(os.Stderr)
	}
	return s
}

// isTerminal reports whether f is a terminal (golang.org/x/term: every platform Go
// builds for, where an ioctl number is not portable).
func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// termWidth is the terminal's width in columns (TIOCGWINSZ, which only reads the
// kernel's record of the window size: the terminal is not asked anything), 0 when
// not known.
func termWidth(f *os.File) int {
	w, _, err := term.GetSize(int(f.Fd()))
	if err != nil || w <= 0 {
		return 0
	}
	return w
}

// DefaultWidth is the width tables and text fit when the terminal's is not known: the
// 80 columns of most terminals' default window.
const DefaultWidth = 80

// Width is how many columns stdout's text should fit.
func (s *IOStreams) Width() int {
	if s.OutWidth > 0 {
		return s.OutWidth
	}
	return DefaultWidth
}

// WrapOut makes Out wrap lines wider than Width at word boundaries (tables fit on
// their own, see Grid). The root does it once for table output, except for a command
// that hands stdout to a full-screen program.
func (s *IOStreams) WrapOut() {
	if s.wrapped == nil {
		s.wrapped = NewLineWrapper(s.Out, s.Width())
		s.Out = s.wrapped
	}
}

// errLine prints one line of text on stderr, wrapped to its width when it is a
// terminal: each line of a multi-line text on its own.
func (s *IOStreams) errLine(text string) { fmt.Fprintln(s.ErrOut, wrapLines(text, s.ErrWidth)) }

// wrapLines is text with each of its lines wrapped at width (wrapLine); width 0: as it
// is.
func wrapLines(text string, width int) string {
	if width <= 0 {
		return text
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = wrapLine(l, width)
	}
	return strings.Join(lines, "\n")
}

// Finish ends the command's output: the last line of a wrapped Out, and the summary
// of the warnings that were counted instead of printed. Execute calls it.
func (s *IOStreams) Finish() {
	if s.wrapped != nil {
		_ = s.wrapped.Flush()
	}
	if s.notices != nil {
		s.notices.Summary()
	}
}

// Unwrapped is w without its line wrapping (a LineWrapper), for lines that
// must reach stdout as they are written (shell lines to eval, records, a table that
// fits already): what was written before is written first.
func Unwrapped(w io.Writer) io.Writer {
	if l, ok := w.(*LineWrapper); ok {
		_ = l.Flush()
		return l.w
	}
	return w
}
