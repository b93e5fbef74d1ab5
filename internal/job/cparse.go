package job

import (
	"bytes"
	"iter"
	"math"
	"math/bits"
	"strings"

	"github.com/ibkey/ibkey/internal/check"
)

// The libraries read their settings with C's number parsers; these reproduce what each
// one accepts, so a value the library reads differently from what its user meant is
// caught (NCCL_IB_PKEY=0x8001 is index 32769, not a P_Key). TestLibcNumbers checks
// them against the C library itself (glibc's strtoll, strtoull and sscanf).

// cNumber is what strtoll/strtoull/atoi made of a string.
type cNumber struct {
	Value    int64  // strtoll's result, saturated when out of range
	Digits   bool   // at least one digit was consumed (else Value is 0)
	Rest     string // the unparsed tail (ignored by strtol(s, NULL, ...) and atoi)
	Overflow bool   // out of range: strtoll sets errno ERANGE
	Base     int    // the base used: 8, 10 or 16

	neg  bool   // a minus sign before the digits
	mag  uint64 // the digits' value, 2^64-1 when past it (then wide)
	wide bool   // the digits' value is past 2^64-1: strtoull sets errno ERANGE
}

// Unsigned is strtoull's result: past 2^64-1 it is 2^64-1 (ERANGE); a minus sign
// negates the value in 64 bits ("-1" is 2^64-1).
func (n cNumber) Unsigned() uint64 {
	if n.neg && !n.wide {
		return -n.mag
	}
	return n.mag
}

// cSpace is isspace in the C locale (the libraries do not call setlocale).
const cSpace = " \t\n\v\f\r"

// fgetsLines are a file's bytes b as C's fgets reads them into a buffer of size
// bytes (0: getline, whole lines): each read up to size-1 bytes, through a newline,
// so a longer line is read as several; no is the number of the file's line the read
// starts in. Each library's settings files are read so (cString: where the line
// ends for the C string functions).
func fgetsLines(b []byte, size int) iter.Seq2[int, []byte] {
	return func(yield func(int, []byte) bool) {
		for no := 1; len(b) > 0; {
			n := len(b)
			if size > 0 {
				n = min(n, size-1)
			}
			if i := bytes.IndexByte(b[:n], '\n'); i >= 0 {
				n = i + 1
			}
			read := b[:n]
			if b = b[n:]; !yield(no, read) {
				return
			}
			if read[n-1] == '\n' {
				no++
			}
		}
	}
}

// cString is b up to its first NUL, as the C string functions read it.
func cString(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}

// parseC parses like strtoll(s, &end, base) with base 0 (0x hex, leading 0 octal,
// else decimal), 10 or 16 (an optional 0x): optional leading white space, optional
// sign, digits. A 0x not followed by a hex digit is the number 0 and the rest "x...".
func parseC(s string, base int) cNumber {
	t := strings.TrimLeft(s, cSpace)
	n := cNumber{Base: base}
	if t != "" && (t[0] == '+' || t[0] == '-') {
		n.neg = t[0] == '-'
		t = t[1:]
	}
	hex := len(t) >= 3 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X') && isHex(t[2])
	switch {
	case hex && (base == 0 || base == 16):
		n.Base, t = 16, t[2:]
	case base == 0 && t != "" && t[0] == '0':
		n.Base = 8
	case base == 0:
		n.Base = 10
	}
	i := 0
	for ; i < len(t); i++ {
		d, ok := check.HexDigit(t[i])
		if !ok || int(d) >= n.Base {
			break
		}
		hi, lo := bits.Mul64(n.mag, uint64(n.Base))
		lo, carry := bits.Add64(lo, uint64(d), 0)
		n.wide = n.wide || hi != 0 || carry != 0
		n.mag = lo
	}
	n.Digits, n.Rest = i > 0, t[i:]
	if !n.Digits {
		return cNumber{Base: n.Base, Rest: s}
	}
	if n.wide {
		n.mag = math.MaxUint64
	}
	switch {
	case n.neg && (n.wide || n.mag > 1<<63):
		n.Overflow, n.Value = true, math.MinInt64
	case !n.neg && (n.wide || n.mag > math.MaxInt64):
		n.Overflow, n.Value = true, math.MaxInt64
	case n.neg:
		n.Value = -int64(n.mag) // 2^63 wraps to MinInt64, as strtoll returns
	default:
		n.Value = int64(n.mag)
	}
	return n
}

// Int is the result converted to a C int, as (int)strtol(...) gives it on Linux
// (long is 64 bits; the conversion keeps the low 32 bits).
func (n cNumber) Int() int { return int(int32(n.Value)) }

// atoi is glibc's atoi: (int)strtol(s, NULL, 10) (stdlib/atoi.c); anything after
// the digits is ignored and no digit reads 0.
func atoi(s string) int { return parseC(s, 10).Int() }

// scanHex is sscanf(s, "%x", &u) with u an unsigned int, as glibc does it
// (stdio-common/vfscanf-internal.c): white space, a sign, an optional 0x and hex
// digits are collected and converted with strtoul, so it takes exactly what
// strtoul(s, NULL, 16) takes, and the result is cut to 32 bits ("100000001" is 1,
// "-1" is 0xffffffff). ok is false when sscanf returns 0 or EOF (no digit).
func scanHex(s string) (uint32, bool) {
	n := parseC(s, 16)
	return uint32(n.Unsigned()), n.Digits
}

func isHex(c byte) bool { _, ok := check.HexDigit(c); return ok }
