package smlog

import "bytes"

// scanf reads msg as OpenSM printed it with format, a printf format of its source
// written with the conversions scanf knows: %u and %d (decimal; %d may be negative),
// %x (hex digits; the format writes any "0x" itself), %s (text up to where the rest
// of the format's literal text next matches, or to the end), %% a percent sign. Width
// and flags are not written (%016x is %x). Arguments are *uint64 for %u %d %x and
// *string for %s. It reports whether the whole message matched.
func scanf(msg []byte, format string, args ...any) bool {
	i, a := 0, 0
	for f := 0; f < len(format); f++ {
		c := format[f]
		if c != '%' {
			if i >= len(msg) || msg[i] != c {
				return false
			}
			i++
			continue
		}
		f++
		if f >= len(format) {
			return false
		}
		switch format[f] {
		case '%':
			if i >= len(msg) || msg[i] != '%' {
				return false
			}
			i++
		case 'u', 'd', 'x':
			base := uint64(10)
			if format[f] == 'x' {
				base = 16
			}
			neg := format[f] == 'd' && i < len(msg) && msg[i] == '-'
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
		case 's':
			// Up to the next literal text of the format (to the next % or the end).
			lit := format[f+1:]
			if k := indexPercent(lit); k >= 0 {
				lit = lit[:k]
			}
			var end int
			if lit == "" {
				end = len(msg)
			} else {
				k := bytes.Index(msg[i:], []byte(lit))
				if k < 0 {
					return false
				}
				end = i + k
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

func indexPercent(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] == '%' {
			return i
		}
	}
	return -1
}

func digitIn(c byte, base uint64) (uint8, bool) {
	d, ok := hexDigit(c)
	if !ok || uint64(d) >= base {
		return 0, false
	}
	return d, true
}
