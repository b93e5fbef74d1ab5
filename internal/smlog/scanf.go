package smlog

import (
	"bytes"
	"strings"

	"github.com/ibkey/ibkey/internal/check"
)

// scanf reads msg as OpenSM printed it with format, a printf format of its source
// written with the conversions scanf knows: %u and %d (decimal; %d may be negative),
// %x (hex digits; the format writes any "0x" itself), %s (text up to where the rest
// of the format's literal text next matches, or to the end), %*s (the same, skipped:
// no argument, nothing copied). Width and flags are not written (%016x is %x).
// Arguments are *uint64 for %u %d %x and *string for %s. It reports whether the
// whole message matched.
func scanf(msg []byte, format string, args ...any) bool {
	i, a := 0, 0
	for f := format; f != ""; {
		if f[0] != '%' {
			// A literal run, up to the next conversion.
			lit := f
			if k := strings.IndexByte(f, '%'); k >= 0 {
				lit = f[:k]
			}
			if len(msg)-i < len(lit) || string(msg[i:i+len(lit)]) != lit {
				return false
			}
			i += len(lit)
			f = f[len(lit):]
			continue
		}
		if len(f) < 2 {
			return false
		}
		conv := f[1]
		f = f[2:]
		switch conv {
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
				d, ok := digitIn(msg[i], base)
				if !ok {
					break
				}
				v = v*base + uint64(d)
				i++
			}
			if i == start || a >= len(args) {
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
		case 's', '*':
			skip := conv == '*'
			if skip {
				if f == "" || f[0] != 's' {
					return false
				}
				f = f[1:]
			}
			// Up to the next literal text of the format, or to the end.
			end := len(msg)
			if f != "" {
				lit := f
				if k := strings.IndexByte(f, '%'); k >= 0 {
					lit = f[:k]
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
			if skip {
				i = end
				continue
			}
			if a >= len(args) {
				return false
			}
			p, ok := args[a].(*string)
			if !ok {
				return false
			}
			*p = string(msg[i:end])
			i = end
			a++
		default:
			return false
		}
	}
	return i == len(msg) && a == len(args)
}

func digitIn(c byte, base uint64) (uint8, bool) {
	d, ok := check.HexDigit(c)
	if !ok || uint64(d) >= base {
		return 0, false
	}
	return d, true
}
