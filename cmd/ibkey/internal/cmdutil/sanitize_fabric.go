package cmdutil

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ibkey/ibkey/internal/check"
)

// SanitizeText returns s with everything a terminal would act on instead of showing
// written as an escape: C0 and C1 control characters and DEL (\x1b, \x9b: the
// starts of ANSI sequences), bytes that are not UTF-8, and Unicode format characters
// (U+202E and the other bidirectional overrides, zero-width characters), each as \xNN
// or \uNNNN. A backslash is written \\ so an escape in the output is never ambiguous.
// Text read from the fabric (a NodeDescription is 64 bytes any node's owner sets,
// IBA 14.2.5.2) or from a user's file passes through it before it is printed.
// infiniband-diags' clean_nodedesc (rdma-core util/node_name_map.c) blanks the same
// characters; an escape shows what was there.
func SanitizeText(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || r == '\\' || unsafeRune(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\':
			b.WriteString(`\\`)
		case r < 0x80 && unsafeRune(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// unsafeRune: a control character (C0, DEL, C1) or a format character (Cf).
func unsafeRune(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r)
}

// SanitizeFabric passes every node description of f through SanitizeText, so the
// labels, findings and tables made from it are safe to print.
func SanitizeFabric(f *check.Fabric) {
	if f == nil {
		return
	}
	for _, n := range f.Nodes {
		n.Description = SanitizeText(n.Description)
	}
}
