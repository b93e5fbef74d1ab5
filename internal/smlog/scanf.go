package smlog

import "bytes"

// scanf reads msg as OpenSM printed it with f, a printf format of its source
// written with the conversions scanf knows: %u and %d (decimal; %d may be negative),
// %x (hex digits; the format writes any "0x" itself), %s (text up to where the rest
// of the format's literal text next matches, or to the end), %*s (the same, skipped:
// no argument, nothing copied), %% a percent sign. Width and flags are not written
// (%016x is %x). Arguments are *uint64 for %u %d %x and *string for %s. It reports
// whether the whole message matched.
func scanf(msg []byte, f *format, args ...any) bool {
	i, a := 0, 0
	for _, s := range f.segs {
		if s.lit != nil {
			if !bytes.HasPrefix(msg[i:], s.lit) {
				return false
			}
			i += len(s.lit)
			continue
		}
		switch s.conv {
		case 'u', 'd', 'x':
			base := uint64(10)
			if s.conv == 'x' {
				base = 16
			}
			neg := s.conv == 'd' && i < len(msg) && msg[i] == '-'
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
			// Up to the next literal text of the format, or to the end.
			end := len(msg)
			if s.next != nil {
				k := bytes.Index(msg[i:], s.next)
				if k < 0 {
					return false
				}
				end = i + k
			}
			if s.conv == '*' {
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
			*p = intern(msg[i:end])
			i = end
			a++
		}
	}
	return i == len(msg) && a == len(args)
}

// intern returns the strings every trap line repeats without allocating them.
func intern(b []byte) string {
	switch string(b) {
	case "::":
		return "::"
	case "P_Key":
		return "P_Key"
	case "Q_Key":
		return "Q_Key"
	case "P":
		return "P"
	case "Q":
		return "Q"
	}
	return string(b)
}

// format is a compiled scanf format: literal runs and conversions.
type format struct{ segs []segment }

type segment struct {
	lit  []byte // a literal run, or nil for a conversion
	conv byte   // 'u', 'd', 'x', 's', '*' (%*s)
	next []byte // %s: the literal run after it (nil at the end)
}

// mustCompile compiles a format of the package's; a format scanf cannot read is a
// bug, caught when the package loads.
func mustCompile(fs string) *format {
	f := compile(fs)
	if f == nil {
		panic("smlog: bad scanf format " + fs)
	}
	return f
}

func compile(fs string) *format {
	f := &format{}
	var lit []byte
	flush := func() {
		if lit != nil {
			f.segs = append(f.segs, segment{lit: lit})
			lit = nil
		}
	}
	for i := 0; i < len(fs); i++ {
		c := fs[i]
		if c != '%' {
			lit = append(lit, c)
			continue
		}
		i++
		if i >= len(fs) {
			return nil
		}
		switch fs[i] {
		case '%':
			lit = append(lit, '%')
		case 'u', 'd', 'x', 's':
			flush()
			f.segs = append(f.segs, segment{conv: fs[i]})
		case '*':
			if i+1 >= len(fs) || fs[i+1] != 's' {
				return nil
			}
			i++
			flush()
			f.segs = append(f.segs, segment{conv: '*'})
		default:
			return nil
		}
	}
	flush()
	for k := range f.segs {
		if c := f.segs[k].conv; (c == 's' || c == '*') && k+1 < len(f.segs) {
			if f.segs[k+1].lit == nil {
				return nil // %s followed by a conversion: nothing to end it
			}
			f.segs[k].next = f.segs[k+1].lit
		}
	}
	return f
}

func digitIn(c byte, base uint64) (uint8, bool) {
	d, ok := hexDigit(c)
	if !ok || uint64(d) >= base {
		return 0, false
	}
	return d, true
}
