package cmdutil

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestSanitizeText(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"HcaA mlx5_0", "HcaA mlx5_0"},
		{"nœud ünïcode 節点", "nœud ünïcode 節点"},
		{"\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"title\x1b]0;pwned\x07", `title\x1b]0;pwned\x07`},
		{"c1 \u009b2J", `c1 \u009b2J`},
		{"line\nbreak\ttab\rcr\x00nul\x7fdel", `line\nbreak\ttab\rcr\x00nul\x7fdel`},
		{"bidi \u202egnp.exe", `bidi \u202egnp.exe`},
		{"zero\u200bwidth", `zero\u200bwidth`},
		{"bad \xff\xfe utf8", `bad \xff\xfe utf8`},
		{`back\slash`, `back\slash`}, // textsafe.String is idempotent: a backslash stays
		{"", ""},
	} {
		if got := SanitizeText(c.in); got != c.want {
			t.Errorf("SanitizeText(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// FuzzSanitizeText: the result is valid UTF-8 with no control or format character,
// whatever the input.
func FuzzSanitizeText(f *testing.F) {
	for _, s := range []string{"HcaA", "\x1b[2J", "\u202e", "\xff", `\x1b`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := SanitizeText(s)
		if !utf8.ValidString(out) {
			t.Fatalf("%q: invalid UTF-8 %q", s, out)
		}
		if i := strings.IndexFunc(out, func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }); i >= 0 {
			t.Fatalf("%q: %q keeps %q", s, out, out[i:])
		}
	})
}
