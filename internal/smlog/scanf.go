package smlog

import (
	"bytes"
	"strings"

	"github.com/ibkey/ibkey/internal/check"
)

// scanf reads msg as OpenSM printed it with format, a printf format of its source
// written with the conversions scanf knows: %u and %d (decimal; %d may be negative),
// %x (hex digits; the format writes any "0x" itself), %s (text up to where the rest
// of the format's literal text next matches, or to the end); a '*' after the '%'
// (%*s, %*u, %*x) reads the same and skips it: no argument, nothing stored. Width
// and flags are not written (%016x is %x).
// Arguments are *uint64 for %u %d %x and *string for %s. It reports whether the
// whole message matched.
func scanf(msg []byte, format string, args ...any) bool {
	i, a := 0, 0
	for f := 0; f < len(format); f++ {
		if format[f] != '%' {
			// Literal text: byte for byte.
			if i == len(msg) || msg[i] != format[f] {
				return false
			}
			i++
			continue
		}
		if f++; f == len(format) {
			return false
		}
		skip := format[f] == '*'
		if skip {
			if f++; f == len(format) {
				return false
			}
		}
		switch conv := format[f]; conv {
		case 'u', 'd', 'x':
			base := uint64(10)
			if conv == 'x' {
				base = 16
			}
			neg := conv == 'd' && i < len(msg) && msg[i] == '-'
			if neg {
				i++
			}
			start := i
			var v uint64
			for i < len(msg) {
				d, ok := check.HexDigit(msg[i])
				if !ok || uint64(d) >= base {
					break
				}
				v = v*base + uint64(d)
				i++
			}
			if i == start {
				return false
			}
			if skip {
				continue
			}
			if a >= len(args) {
				return false
			}
			if neg {
				v = -v
			}
			p, ok := args[a].(*uint64)
			if !ok {
				return false
			}
			*p = v
			a++
		case 's':
			// Up to the next literal text of the format, or to the end.
			end := len(msg)
			if lit := format[f+1:]; lit != "" {
				if k := strings.IndexByte(lit, '%'); k >= 0 {
					lit = lit[:k]
				}
				if lit == "" {
					return false // %s followed by a conversion: nothing ends it
				}
				k := bytes.Index(msg[i:], []byte(lit))
				if k < 0 {
					return false
				}
				end = i + k
			}
			if !skip {
				if a >= len(args) {
					return false
				}
				p, ok := args[a].(*string)
				if !ok {
					return false
				}
				*p = string(msg[i:end])
				a++
			}
			i = end
		default:
			return false
		}
	}
	return i == len(msg) && a == len(args)
}
