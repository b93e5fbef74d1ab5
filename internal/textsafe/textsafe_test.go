package textsafe

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestStringHostile(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"HcaA mlx5_0", "HcaA mlx5_0"},
		{"", ""},
		{"caf\u00e9 \u4e2d\u6587", "caf\u00e9 \u4e2d\u6587"}, // printable UTF-8 stays
		{"\x1b[2J\x1b[Hpwned", `\x1b[2J\x1b[Hpwned`},         // clear screen, home
		{"\x1b]0;title\x07", `\x1b]0;title\x07`},             // OSC window title, BEL
		{"\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\", `\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\`},
		{"a\tb\nc\rd", `a\tb\nc\rd`},
		{"nul\x00here", `nul\x00here`},
		{"del\x7f", `del\x7f`},
		{"\u009b31m", `\u009b31m`},                   // C1 CSI, as UTF-8
		{"\x9b31m", `\x9b31m`},                       // C1 CSI as a raw byte (invalid UTF-8)
		{"\xff\xfe", `\xff\xfe`},                     // not UTF-8
		{"abc\xe2\x80", `abc\xe2\x80`},               // truncated rune
		{"admin\u202etxt.exe", `admin\u202etxt.exe`}, // right-to-left override
		{"\u2066x\u2069", `\u2066x\u2069`},           // isolates
		{"\u200e\u200f\u061c", `\u200e\u200f\u061c`},
		{"line\u2028sep\u2029", `line\u2028sep\u2029`},
		{"zero\u200bwidth\ufeff", `zero\u200bwidth\ufeff`},
		{"tag\U000e0041", `tag\U000e0041`},
	} {
		got := String(tc.in)
		if got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
		}
		checkRoundTrip(t, tc.in, got)
	}
}

// checkRoundTrip fails unless out, String's result for in, unescapes to in, Normalize
// keeps it, and Text (the messages' form) leaves it alone.
func checkRoundTrip(t *testing.T, in, out string) {
	t.Helper()
	if back := Unescape(out); back != in {
		t.Fatalf("Unescape(String(%q)) = %q", in, back)
	}
	if n := Normalize(out); n != out {
		t.Fatalf("Normalize(%q) = %q, want it unchanged", out, n)
	}
	if Text(out) != out {
		t.Fatalf("Text(%q) = %q, want it unchanged", out, Text(out))
	}
}

// checkSafe fails when s holds anything a terminal could act on.
func checkSafe(t *testing.T, in, s string) {
	t.Helper()
	if !utf8.ValidString(s) {
		t.Fatalf("String(%q) = %q: not UTF-8", in, s)
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || !unicode.IsPrint(r) {
			t.Fatalf("String(%q) = %q: holds %U", in, s, r)
		}
	}
}

// TestStringRandom: random bytes and random runes from the dangerous ranges always come
// out printable, valid UTF-8, and unescape to what went in.
func TestStringRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pool := []rune{0, 7, 8, 0x1b, 0x7f, 0x85, 0x9b, 0x9d, 0x202a, 0x202e, 0x2066, 0x2069, 0x200b, 0xfeff, 0x2028, 'a', ' ', '\\', 'x', 0xe9, 0x4e2d, 0x1f600}
	for range 20000 {
		var b []byte
		for range rng.IntN(24) {
			if rng.IntN(3) == 0 {
				b = append(b, byte(rng.IntN(256)))
			} else {
				b = utf8.AppendRune(b, pool[rng.IntN(len(pool))])
			}
		}
		in := string(b)
		out := String(in)
		checkSafe(t, in, out)
		checkRoundTrip(t, in, out)
		checkSafe(t, in, Text(in))
		if Text(Text(in)) != Text(in) {
			t.Fatalf("Text is not idempotent on %q", in)
		}
		// Anything at all, an escape-looking text included, normalizes to a safe
		// text that a second Normalize keeps.
		if n := Normalize(in); Normalize(n) != n {
			t.Fatalf("Normalize is not idempotent on %q: %q -> %q", in, n, Normalize(n))
		}
	}
}

func FuzzString(f *testing.F) {
	f.Add("\x1b[31mred")
	f.Add("\xff\u202e")
	f.Fuzz(func(t *testing.T, in string) {
		out := String(in)
		checkSafe(t, in, out)
		checkRoundTrip(t, in, out)
		checkSafe(t, in, Normalize(in))
	})
}

func TestMessageCapsHugeLines(t *testing.T) {
	// A 5 MB one-line error quoting a hostile input.
	huge := "partitions file p.conf: line 1: bad token \"" + strings.Repeat("\x1b[2J", 1<<20) + strings.Repeat("A", 1<<20) + "\" at the end"
	got := Message(huge)
	if len(got) > MaxMessage+64 {
		t.Fatalf("Message of %d bytes gave %d bytes", len(huge), len(got))
	}
	if !strings.HasPrefix(got, `partitions file p.conf: line 1: bad token "\x1b[2J`) || !strings.HasSuffix(got, `AAAA" at the end`) {
		t.Errorf("head or tail lost: %q", got)
	}
	if !strings.Contains(got, " bytes omitted] … ") {
		t.Errorf("no omission note: %q", got)
	}
	checkSafe(t, "huge", strings.ReplaceAll(got, "\n", ""))
	if strings.Count(got, "\n") != 0 {
		t.Errorf("one line became several: %q", got)
	}

	// Many lines: each kept line sanitised, the rest counted.
	many := strings.Repeat("x\x1b\n", MaxLines+50)
	got = Message(many)
	if n := strings.Count(got, "\n"); n != MaxLines {
		t.Errorf("%d newlines, want %d", n, MaxLines)
	}
	if !strings.HasSuffix(got, "[51 more lines omitted]") || !strings.HasPrefix(got, `x\x1b`+"\n") {
		t.Errorf("many lines: %q", got[:40]+" ... "+got[len(got)-40:])
	}

	if Message("short and safe") != "short and safe" || Error(nil) != "" || Error(errors.New("a\x1bb")) != `a\x1bb` {
		t.Error("short messages changed")
	}
}

func TestCapNeverSplitsEscapes(t *testing.T) {
	for n := 64; n < 200; n++ {
		s := String(strings.Repeat("é\x1b\u202e\\", 200))
		got := Cap(s, n)
		head, tail, ok := strings.Cut(got, " … [")
		if !ok {
			t.Fatalf("Cap(%d): no note", n)
		}
		_, tail, _ = strings.Cut(tail, "] … ")
		for _, part := range []string{head, tail} {
			if !utf8.ValidString(part) {
				t.Fatalf("Cap(%d) split a rune: %q", n, part)
			}
			if !strings.HasPrefix(s, head) || !strings.HasSuffix(s, tail) {
				t.Fatalf("Cap(%d): %q is not a head and tail of the input", n, got)
			}
		}
		// A piece of an escape would show as a backslash without its full hex run.
		for _, part := range []string{head, tail} {
			for i := 0; i < len(part); i++ {
				if part[i] != '\\' {
					continue
				}
				esc := part[i:]
				if !(strings.HasPrefix(esc, `\x1b`) || strings.HasPrefix(esc, `\u202e`) || strings.HasPrefix(esc, `\\`)) {
					t.Fatalf("Cap(%d) cut an escape: %q", n, part)
				}
				if strings.HasPrefix(esc, `\\`) {
					i++
				}
			}
			if Unescape(part) == part && strings.Contains(part, `\`) {
				t.Fatalf("Cap(%d): %q does not unescape", n, part)
			}
		}
	}
}

func TestGroupDigits(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 9999000: "9,999,000", 123456789: "123,456,789"} {
		if got := GroupDigits(n); got != want {
			t.Errorf("GroupDigits(%d) = %q, want %q", n, got, want)
		}
	}
}

// Plural picks the singular only for 1 and never groups digits (the four copies it
// replaced printed "1 link", "0 links", "1000 entries").
func TestPlural(t *testing.T) {
	for n, want := range map[int]string{0: "0 nodes", 1: "1 node", 2: "2 nodes", 1000: "1000 nodes", -1: "-1 nodes"} {
		if got := Plural(n, "node", "nodes"); got != want {
			t.Errorf("Plural(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"", "abc", 3}, {"pkey", "pkeys", 1}, {"counter", "counters", 1}, {"NCCL_IB_PKEYS", "NCCL_IB_PKEY", 1}, {"kitten", "sitting", 3}, {"flaw", "lawn", 2}} {
		if got := EditDistance(c.a, c.b); got != c.want {
			t.Errorf("EditDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := EditDistance(c.b, c.a); got != c.want {
			t.Errorf("EditDistance(%q, %q) = %d, want %d", c.b, c.a, got, c.want)
		}
	}
}

func TestStringEscapes(t *testing.T) {
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
		{`back\slash`, `back\\slash`},
		// Issue 28: a name holding a backslash and an n is not shown as one holding a
		// newline.
		{`literal\n`, `literal\\n`},
		{"real\n", `real\n`},
		{`\x1b`, `\\x1b`},
		{"", ""},
	} {
		if got := String(c.in); got != c.want {
			t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// FuzzStringPrintable: the result is valid UTF-8 with no control or format character,
// whatever the input.
func FuzzStringPrintable(f *testing.F) {
	for _, s := range []string{"HcaA", "\x1b[2J", "\u202e", "\xff", `\x1b`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := String(s)
		if !utf8.ValidString(out) {
			t.Fatalf("%q: invalid UTF-8 %q", s, out)
		}
		if i := strings.IndexFunc(out, func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }); i >= 0 {
			t.Fatalf("%q: %q keeps %q", s, out, out[i:])
		}
	})
}

func TestCapped(t *testing.T) {
	abc := []string{"a", "b", "c"}
	for _, tc := range []struct {
		most int
		want string
	}{
		{0, "and 3 more"}, {1, "a|and 2 more"}, {2, "a|b|and 1 more"}, {3, "a|b|c"}, {9, "a|b|c"},
	} {
		if got := strings.Join(Capped(abc, tc.most), "|"); got != tc.want {
			t.Errorf("Capped(abc, %d) = %q, want %q", tc.most, got, tc.want)
		}
	}
	if strings.Join(abc, "") != "abc" {
		t.Errorf("Capped changed its argument: %q", abc)
	}
}
