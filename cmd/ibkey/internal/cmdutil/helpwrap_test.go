package cmdutil

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestWrapHelp(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"fits: unchanged", "short line\nanother\n\n  - item", "short line\nanother\n\n  - item"},
		{"paragraph reflowed",
			"aaaa bbbb cccc dddd eeee\nffff gggg",
			"aaaa bbbb cccc\ndddd eeee ffff\ngggg"},
		{"list item: continuation under its text",
			"  - aaaa bbbb cccc dddd\n    eeee\n  - next",
			"  - aaaa bbbb\n    cccc dddd\n    eeee\n  - next"},
		{"two columns: text continued under the text, a term with spaces kept",
			"  x=1  x=1,y=2  aaaa bbbb cccc\n                dddd",
			"  x=1  x=1,y=2  aaaa\n                bbbb\n                cccc\n                dddd"},
		{"JSON shape broken after commas, joined without a space",
			`J: {"aa","bb",` + "\n" + `"cc","dd"}`,
			"J: {\"aa\",\"bb\",\n\"cc\",\"dd\"}"},
		{"a key's colon before its value: no space; a sentence's colon: a space",
			`xx {"aa":` + "\n" + `{"b"} one per line:` + "\n" + `{"cc"} {N:` + "\n" + `{"d"}}`,
			"xx {\"aa\":{\"b\"}\none per line:\n{\"cc\"} {N:{\"d\"}}"},
		{"a word longer than the line stands alone, uncut",
			"aa https://example.com/a/very/long/path bb",
			"aa\nhttps://example.com/a/very/long/path\nbb"},
	} {
		got := WrapHelp(c.in, 16)
		if got != c.want {
			t.Errorf("%s:\n%s\nwant:\n%s", c.name, got, c.want)
		}
	}
	// Any text: no line over the width but a single unbreakable word, and the same
	// words in the same order.
	in := strings.Repeat("the quick brown fox, jumps over the lazy dog; ", 20)
	out := WrapHelp(in, 30)
	for _, l := range strings.Split(out, "\n") {
		if utf8.RuneCountInString(l) > 30 {
			t.Errorf("line over 30 columns: %q", l)
		}
	}
	if strings.Join(strings.Fields(out), " ") != strings.Join(strings.Fields(in), " ") {
		t.Errorf("words changed:\n%s", out)
	}
}
