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
// error text for stderr. Plural, GroupDigits, Capped and EditDistance are the small text
// helpers every layer shares (counts in messages, capped lists, "did you mean"
// suggestions).
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
// \UNNNNNNNN. A backslash is written \\, so every escape in the result stands for one
// character of s and Unescape gives s back: a name holding a backslash and an n shows
// as \\n, one holding a newline as \n. Printable text, the ASCII space included, is
// kept as it is.
//
// String is applied once, where a name or value enters the model; text that may
// already be escaped (a fabric file ibkey wrote) comes in through Normalize, and
// messages through Text.
func String(s string) string { return escape(s, true) }

// Text is String for messages and reasons: the same escapes, but a backslash is kept as
// it is, so Text is idempotent and can be applied to a message that quotes names String
// already escaped. Its result is for reading, not for parsing back.
func Text(s string) string { return escape(s, false) }

// Normalize is String(Unescape(s)): the terminal-safe form of text that may already be
// String's (a fabric file ibkey wrote) or may hold raw controls (a file edited by hand).
// A String result comes back unchanged, and Normalize is idempotent.
func Normalize(s string) string { return String(Unescape(s)) }

func escape(s string, backslash bool) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\' && backslash:
			b.WriteString(`\\`)
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

// Unescape undoes String: \\, \t, \n, \r, \xNN (a byte), \uNNNN and \UNNNNNNNN (a
// rune). A backslash that starts none of these is kept as it is.
func Unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		// unitLen finds the escapes String writes; strconv decodes them (\xNN as a
		// byte, \u and \U as a rune, which must be a valid one).
		if n := unitLen(s[i:]); s[i] == '\\' && n > 1 {
			if v, multibyte, _, err := strconv.UnquoteChar(s[i:i+n], 0); err == nil {
				if multibyte {
					b.WriteRune(v)
				} else {
					b.WriteByte(byte(v))
				}
				i += n
				continue
			}
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// MaxMessage is how long a message Message lets through: a few terminal lines. An error
// can quote a whole input (a 10 MB one-line partitions file, a JSON document); the head
// and the tail say what went wrong, the middle is noise.
const MaxMessage = 1024

// MaxLines is how many lines Message keeps.
const MaxLines = 100

// Message makes error text safe for stderr: each line is sanitised with Text (the
// newlines between lines are kept) and capped at MaxMessage bytes, keeping its head and
// tail and naming what was left out ("head … [9,999,000 bytes omitted] … tail"), and
// after MaxLines lines the rest is counted, not shown.
func Message(s string) string {
	if len(s) <= MaxMessage && Text(s) == s {
		return s
	}
	lines := strings.Split(s, "\n")
	extra := 0
	if len(lines) > MaxLines {
		extra = len(lines) - MaxLines
		lines = lines[:MaxLines]
	}
	for i, l := range lines {
		lines[i] = Cap(Text(l), MaxMessage)
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
// as it is when it fits. Cap cuts between runes and never inside an escape String or
// Text wrote. Cap does not sanitise.
func Cap(s string, limit int) string {
	limit = max(limit, 64)
	if len(s) <= limit {
		return s
	}
	headEnd, tailStart := 0, len(s)
	for i := 0; i < len(s); {
		j := i + unitLen(s[i:])
		if j <= limit*2/3 {
			headEnd = j
		}
		if i >= len(s)-(limit-limit*2/3) {
			tailStart = i
			break
		}
		i = j
	}
	omitted := tailStart - headEnd
	return s[:headEnd] + " … [" + GroupDigits(omitted) + " bytes omitted] … " + s[tailStart:]
}

// unitLen is the length of the rune or escape s starts with.
func unitLen(s string) int {
	if s[0] == '\\' && len(s) > 1 {
		d := -1
		switch s[1] {
		case '\\', 't', 'n', 'r':
			d = 0
		case 'x':
			d = 2
		case 'u':
			d = 4
		case 'U':
			d = 8
		}
		if d >= 0 && len(s) >= 2+d && allHex(s[2:2+d]) {
			return 2 + d
		}
	}
	_, n := utf8.DecodeRuneInString(s)
	return n
}

// allHex says whether every byte of s is a hex digit, either case.
func allHex(s string) bool { return strings.Trim(s, "0123456789abcdefABCDEF") == "" }

// Plural is n and the noun that agrees with it: "1 node", "3 nodes", "0 nodes" (one
// when n is 1, else many; n in plain digits, not grouped).
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

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

// Capped is the first most items of s and, when there are others, "and N more": the
// one way a message names a list too long for a sentence.
func Capped(s []string, most int) []string {
	if len(s) > most {
		return append(s[:most:most], fmt.Sprintf("and %d more", len(s)-most))
	}
	return s
}
