package job

import "strings"

// The libraries read their settings with C's number parsers; these reproduce what each
// one accepts, so a value the library reads differently from what its user meant is
// caught (NCCL_IB_PKEY=0x8001 is index 32769, not a P_Key).

// cNumber is what strtol/strtoll/atoi made of a string.
type cNumber struct {
	Value    int64
	Digits   bool   // at least one digit was consumed (else Value is 0)
	Rest     string // the unparsed tail (ignored by strtol(s, NULL, ...) and atoi)
	Overflow bool   // out of range: strtoll sets errno ERANGE
	Base     int    // the base used: 8, 10 or 16
}

// parseC parses like strtoll(s, &end, base) with base 0 (0x hex, leading 0 octal,
// else decimal) or 10: optional leading white space, optional sign, digits.
func parseC(s string, base int) cNumber {
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if t != "" && (t[0] == '+' || t[0] == '-') {
		neg = t[0] == '-'
		t = t[1:]
	}
	b := uint64(10)
	if base == 0 {
		switch {
		case len(t) >= 3 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X') && isHex(t[2]):
			b, t = 16, t[2:]
		case len(t) >= 1 && t[0] == '0':
			b = 8
		}
	}
	n := cNumber{Base: int(b)}
	var v uint64
	i := 0
	for ; i < len(t); i++ {
		d, ok := digitVal(t[i])
		if !ok || uint64(d) >= b {
			break
		}
		n.Digits = true
		// v*b+d past 2^63 is out of range whatever the sign (checked before it is
		// computed: past 2^64 it would wrap).
		if n.Overflow || v > (1<<63-uint64(d))/b {
			n.Overflow = true
			continue
		}
		v = v*b + uint64(d)
	}
	n.Rest = t[i:]
	if !n.Digits {
		n.Rest = s
		return n
	}
	if !neg && v == 1<<63 {
		n.Overflow = true
	}
	if n.Overflow {
		if neg {
			n.Value = -1 << 63
		} else {
			n.Value = 1<<63 - 1
		}
		return n
	}
	n.Value = int64(v)
	if neg {
		n.Value = -n.Value
	}
	return n
}

func isHex(c byte) bool { _, ok := digitVal(c); return ok }

func digitVal(c byte) (int, bool) {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0'), true
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10, true
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10, true
	}
	return 0, false
}
