// Package jsonw streams JSON to an io.Writer without reflection: the caller says which
// object, key and value comes next, and the Writer appends their bytes to a small
// buffer it flushes as it fills. The output is byte for byte what encoding/json's
// Encoder writes for the same values (compact, or with SetIndent("", indent)), HTML
// escaping included, so a command can switch a large document to it without changing
// its output.
//
// It exists for the documents that are large enough for encoding/json's cost to show:
// the fabric file of a 5,000-node sweep, the P_Key table of every port of a
// partitions.conf. Encoding/json builds the whole document in memory (twice when it
// indents) and formats every GUID and P_Key through fmt; this appends them in place.
package jsonw

import (
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// flushAt is the buffer size at which the Writer writes to its io.Writer.
const flushAt = 64 << 10

// Writer appends one JSON document to an io.Writer. The zero value is not usable: use
// New. Methods record the first write error; End and Flush return it.
type Writer struct {
	w      io.Writer
	buf    []byte
	indent string
	// indents is indent repeated, appended in one piece per newline.
	indents string
	depth   int
	// first: no element yet in the object or array being written.
	first bool
	// afterKey: the next value is a key's value (no separator, no newline).
	afterKey bool
	err      error
}

// New returns a Writer to w. An empty indent writes compact JSON; otherwise each element
// goes on its own line, indented by indent per level, as json.Encoder.SetIndent("",
// indent) writes it.
func New(w io.Writer, indent string) *Writer {
	return &Writer{w: w, buf: make([]byte, 0, flushAt+4096), indent: indent, indents: strings.Repeat(indent, 16)}
}

// Err is the first write error, if any.
func (w *Writer) Err() error { return w.err }

// Flush writes the buffered bytes.
func (w *Writer) Flush() error {
	if w.err == nil && len(w.buf) > 0 {
		_, w.err = w.w.Write(w.buf)
	}
	w.buf = w.buf[:0]
	return w.err
}

// End finishes the document with a newline, as json.Encoder.Encode does, and flushes.
func (w *Writer) End() error {
	w.buf = append(w.buf, '\n')
	return w.Flush()
}

// value starts a value: the separator and newline an element needs, unless it is a
// key's value.
func (w *Writer) value() {
	if len(w.buf) >= flushAt && w.w != nil {
		w.Flush()
	}
	if w.afterKey {
		w.afterKey = false
		return
	}
	if w.depth > 0 {
		if !w.first {
			w.buf = append(w.buf, ',')
		}
		w.newline()
	}
	w.first = false
}

func (w *Writer) newline() {
	if w.indent == "" {
		return
	}
	w.buf = append(w.buf, '\n')
	for n := w.depth * len(w.indent); n > 0; {
		k := min(n, len(w.indents))
		w.buf = append(w.buf, w.indents[:k]...)
		n -= k
	}
}

func (w *Writer) open(c byte) {
	w.value()
	w.buf = append(w.buf, c)
	w.depth++
	w.first = true
}

func (w *Writer) close(c byte) {
	w.depth--
	if !w.first {
		w.newline() // an empty object or array stays {} or [], as json.Indent writes it
	}
	w.buf = append(w.buf, c)
	w.first = false
}

// BeginObject writes {.
func (w *Writer) BeginObject() { w.open('{') }

// EndObject writes }.
func (w *Writer) EndObject() { w.close('}') }

// BeginArray writes [.
func (w *Writer) BeginArray() { w.open('[') }

// EndArray writes ].
func (w *Writer) EndArray() { w.close(']') }

// Key writes an object key; the next call writes its value.
func (w *Writer) Key(k string) {
	w.value()
	w.buf = AppendString(w.buf, k)
	w.buf = append(w.buf, ':')
	if w.indent != "" {
		w.buf = append(w.buf, ' ')
	}
	w.afterKey = true
}

// String writes s as a JSON string.
func (w *Writer) String(s string) {
	w.value()
	w.buf = AppendString(w.buf, s)
}

// StringBytes writes b as a JSON string: for text built in a scratch buffer with
// append functions ("file:line:col" from strconv.AppendInt), without making a string.
func (w *Writer) StringBytes(b []byte) {
	w.value()
	w.buf = appendString(w.buf, b)
}

// Int writes an integer.
func (w *Writer) Int(v int64) {
	w.value()
	w.buf = strconv.AppendInt(w.buf, v, 10)
}

// Uint writes an unsigned integer.
func (w *Writer) Uint(v uint64) {
	w.value()
	w.buf = strconv.AppendUint(w.buf, v, 10)
}

// Bool writes true or false.
func (w *Writer) Bool(v bool) {
	w.value()
	w.buf = strconv.AppendBool(w.buf, v)
}

// Null writes null.
func (w *Writer) Null() {
	w.value()
	w.buf = append(w.buf, "null"...)
}

// Hex writes v as the string "0x" followed by at least digits lowercase hex digits
// (fmt's "0x%0*x"): GUIDs are Hex(g, 16), P_Keys Hex(k, 4).
func (w *Writer) Hex(v uint64, digits int) {
	w.value()
	w.buf = append(w.buf, '"')
	w.buf = AppendHex(w.buf, v, digits)
	w.buf = append(w.buf, '"')
}

// Sub returns a Writer that appends to buf[:0], instead of writing, elements that
// continue the array or object w is in (first: they are its first ones), so that
// goroutines can encode parts of a document at once: w takes their bytes, in order,
// with Splice. A Sub is never flushed; its buffer grows.
func (w *Writer) Sub(buf []byte, first bool) *Writer {
	return &Writer{buf: buf[:0], indent: w.indent, indents: w.indents, depth: w.depth, first: first}
}

// Bytes are what a Sub has written.
func (w *Writer) Bytes() []byte { return w.buf }

// Splice appends what a Sub of w wrote: elements of the array or object w is in.
func (w *Writer) Splice(b []byte) {
	if len(b) == 0 {
		return
	}
	if w.w == nil { // a Sub's Sub
		w.buf = append(w.buf, b...)
		w.first = false
		return
	}
	if len(w.buf)+len(b) > flushAt+4096 {
		w.Flush()
	}
	if len(b) >= flushAt {
		if w.err == nil {
			_, w.err = w.w.Write(b)
		}
	} else {
		w.buf = append(w.buf, b...)
	}
	w.first = false
}

// Raw writes a value that is already compact JSON (from json.Marshal of a scalar, say).
// It must not be an object or array when the Writer indents.
func (w *Writer) Raw(b []byte) {
	w.value()
	w.buf = append(w.buf, b...)
}

const hexDigits = "0123456789abcdef"

// plain8 reports whether none of the eight bytes in x is below 0x20, above 0x7f, or
// one of " \\ < > &: the bytes htmlSafe passes, tested at once (the "has zero byte"
// and "has byte less than" tricks of Hacker's Delight, 6-1).
func plain8(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	hasZero := func(v uint64) uint64 { return (v - ones) & ^v & highs }
	bad := (x & highs) | ((x - 0x20*ones) & ^x & highs) |
		hasZero(x^('"'*ones)) | hasZero(x^('\\'*ones)) | hasZero(x^('<'*ones)) | hasZero(x^('>'*ones)) | hasZero(x^('&'*ones))
	return bad == 0
}

// AppendHex appends 0x and v in lowercase hex, zero-padded to digits.
func AppendHex(dst []byte, v uint64, digits int) []byte {
	digits = max(digits, 1)
	var tmp [16]byte
	i := len(tmp)
	for v != 0 || len(tmp)-i < digits {
		if i == 0 {
			break
		}
		i--
		tmp[i] = hexDigits[v&0xf]
		v >>= 4
	}
	dst = append(dst, '0', 'x')
	for n := len(tmp) - i; n < digits; n++ { // more than 16 digits asked for
		dst = append(dst, '0')
	}
	return append(dst, tmp[i:]...)
}

// htmlSafe: the ASCII bytes encoding/json writes as they are (with HTML escaping on):
// printable, not ", \, <, > or &.
var htmlSafe = func() (t [utf8.RuneSelf]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\' && b != '<' && b != '>' && b != '&'
	}
	return t
}()

// AppendString appends s as a JSON string exactly as encoding/json writes it (with its
// default HTML escaping): \b \f \n \r \t and \" \\ short, other control bytes and < > &
// as \u00XX, invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped (appendString in Go's
// src/encoding/json/encode.go).
func AppendString(dst []byte, s string) []byte { return appendString(dst, s) }

func appendString[T []byte | string](dst []byte, s T) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		// Eight bytes at a time while none needs a look: no control character, no
		// '"', '\', '<', '>' or '&', nothing above ASCII.
		for i+8 <= len(s) && plain8(uint64(s[i])|uint64(s[i+1])<<8|uint64(s[i+2])<<16|uint64(s[i+3])<<24|
			uint64(s[i+4])<<32|uint64(s[i+5])<<40|uint64(s[i+6])<<48|uint64(s[i+7])<<56) {
			i += 8
		}
		if i >= len(s) {
			break
		}
		if b := s[i]; b < utf8.RuneSelf {
			if htmlSafe[b] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xf])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(string(s[i:min(len(s), i+utf8.UTFMax)]))
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
