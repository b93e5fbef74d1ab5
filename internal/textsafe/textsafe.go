// Package textsafe makes strings from the fabric and the file system safe to print on a
// terminal. A NodeDescription is 64 bytes any node on the subnet may set (IBA 14.2.5.2),
// and a --sysfs tree or a fabric file can hold anything: printed raw, an escape sequence
// in them can move the cursor, rewrite earlier lines, set the window title or hide text
// (ECMA-48 C0/C1 controls; U+202E and friends reorder text, Unicode UAX #9).
//
// String is the one sanitiser. ibkey applies it where such strings enter its model
// (internal/ibverbs for sysfs text attributes, internal/ibverbs/mad for NodeDescription,
// internal/query for fabric files), so every output path (tables, plain text, JSON, the
// TUI, metrics labels) gets the same, already safe, value. Message caps and sanitises
// error text for stderr. GroupDigits and EditDistance are the two small text helpers
// the commands share (counts in messages, "did you mean" suggestions).
package textsafe

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// String returns s with everything a terminal could act on replaced by a visible
// escape: C0 controls, DEL and bytes that are not UTF-8 as \xNN (tab, newline and
// carriage return as \t, \n, \r), and every other rune Go does not consider printable
// (C1 controls such as U+009B CSI, bidirectional overrides and isolates, line and
// paragraph separators, zero-width and other format characters) as \uNNNN or
// \UNNNNNNNN. Printable text, the ASCII space included, is kept as it is, so String is
// idempotent: a sanitised string comes back unchanged. Backslashes are not escaped, so
// the result is for reading, not for parsing back.
func String(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case unicode.IsPrint(r):
			b.WriteString(s[i : i+n])
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
		i += n
	}
	return b.String()
}

// Safe reports whether String(s) == s.
func Safe(s string) bool { return String(s) == s }

// MaxMessage is how long a message Message lets through: a few terminal lines. An error
// can quote a whole input (a 10 MB one-line partitions file, a JSON document); the head
// and the tail say what went wrong, the middle is noise.
const MaxMessage = 1024

// MaxLines is how many lines Message keeps.
const MaxLines = 100

// Message makes error text safe for stderr: each line is sanitised with String (the
// newlines between lines are kept) and capped at MaxMessage bytes, keeping its head and
// tail and naming what was left out ("head … [9,999,000 bytes omitted] … tail"), and
// after MaxLines lines the rest is counted, not shown.
func Message(s string) string {
	if len(s) <= MaxMessage && Safe(s) {
		return s
	}
	lines := strings.Split(s, "\n")
	extra := 0
	if len(lines) > MaxLines {
		extra = len(lines) - MaxLines
		lines = lines[:MaxLines]
	}
	for i, l := range lines {
		lines[i] = Cap(String(l), MaxMessage)
	}
	out := strings.Join(lines, "\n")
	if extra > 0 {
		out += "\n[" + GroupDigits(extra) + " more lines omitted]"
	}
	return out
}

// Error is Message(err.Error()); "" for a nil error.
func Error(err error) string {
	if err == nil {
		return ""
	}
	return Message(err.Error())
}

// Cap shortens s to about limit bytes (at least 64), keeping the first two thirds and
// the last third of the budget and naming the number of bytes omitted. s is returned
// as it is when it fits. Cap does not sanitise.
func Cap(s string, limit int) string {
	limit = max(limit, 64)
	if len(s) <= limit {
		return s
	}
	headLen := limit * 2 / 3
	tailLen := limit - headLen
	head := cutBack(s, headLen)
	tail := cutFront(s, len(s)-tailLen)
	omitted := len(s) - len(head) - len(tail)
	return head + " … [" + GroupDigits(omitted) + " bytes omitted] … " + tail
}

// cutBack returns s[:n] moved back to a rune boundary that does not split a visible
// escape made by String (a backslash within the last 9 bytes starts one).
func cutBack(s string, n int) string {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	if k := strings.LastIndexByte(s[max(0, n-9):n], '\\'); k >= 0 {
		n = max(0, n-9) + k
	}
	return s[:n]
}

// cutFront returns s[n:] moved forward to a rune boundary and past a partly cut escape.
func cutFront(s string, n int) string {
	for n < len(s) && !utf8.RuneStart(s[n]) {
		n++
	}
	if k := strings.IndexByte(s[max(0, n-9):n], '\\'); k >= 0 {
		// An escape starting before n may run past it: skip to after its hex digits.
		start := max(0, n-9) + k
		end := start + 2
		for end < len(s) && end < start+10 && isHex(s[end]) {
			end++
		}
		if end > n {
			n = end
		}
	}
	return s[n:]
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' }

// GroupDigits is n with its thousands separated by commas: 9,999,000.
func GroupDigits(n int) string {
	s := strconv.Itoa(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// EditDistance is the Levenshtein distance of a and b, in bytes: what a "did you mean"
// suggestion ranks candidates by.
func EditDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
