package partconf

import (
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
)

// TestFindingTexts pins the words of the findings that print keys, P_Keys and GUIDs
// (0x and 4 or 16 hex digits, as ibstat and OpenSM's logs write them).
func TestFindingTexts(t *testing.T) {
	const def = "Default=0x7fff, ipoib : ALL=full;\n"
	tests := []struct {
		rule, in, want string
	}{
		{"key-too-large", def + "p=0x18002 : ALL;\n", "key 0x18002 is wider than 16 bits: OpenSM truncates it to 0x0002 | write the 15-bit key, at most 0x7fff"},
		{"key-top-bit", def + "p=0x8002 : ALL;\n", "key 0x8002 has the membership bit set: OpenSM ignores it, the key is 0x0002 | write =0x0002; membership is set per member with =full/=limited"},
		{"duplicate-key", def + "a=0x10 : 0x1;\nb=0x8010 : 0x2;\n", "key 0x0010 is already defined at p.conf:2:1: OpenSM merges the definitions and keeps the name \"a\""},
		{"duplicate-key", def + "a=0x10 : 0x1;\na=0x10 : 0x2;\nb=0x10 : 0x3;\n", "key 0x0010 is already defined at p.conf:2:1: OpenSM merges the definitions and keeps the name \"a\" | merge"},
		{"mgid-comment", def + "a=0x10 :\n mgid=ff12::1 # IGMP\n , 0x1=full;", "OpenSM reads the comment after this mgid= as group flags (when the mgid value ends the line's items, its parser goes on past the '#'): \"IGMP\" is not a flag, it logs \"unrecognized mgroup flag 'IGMP' - ignored\" | move the comment to a line of its own"},
		{"mgid-comment", def + "a=0x10 :\n mgid=ff12::1 # mtu=2\n , 0x1=full;", "OpenSM reads the comment after this mgid= as group flags (when the mgid value ends the line's items, its parser goes on past the '#'): \"mtu=2\" sets the group's mtu, and it is not ignored"},
		{"generated-key", def + "a : 0x1=full;\n", "no key: OpenSM generates 0x0001 from the order of the definitions, and it changes when definitions are added or moved | write the key: a=0x0001"},
		{"conflicting-membership", def + "a=0x10 : 0x1=full,\n 0x2, 0x1=limited;\n", "port 0x0000000000000001 is listed in partition 0x0010 as"},
		{"no-full-member", def + "a=0x10 : 0x1, 0x2=limited;\n", "every member of partition 0x0010 (a) is limited"},
		{"decimal-guid", def + "a=0x10 : 17=full;\n", "17=full has no 0x: OpenSM reads it as a decimal number, port 0x0000000000000011"},
		{"mgid-pkey", def + "a=0x10, ipoib : mgid=ff12:401b:8020::1, 0x1=full;\n", "IP multicast group ff12:401b:8020::1 carries P_Key 0x8020 but partition a is 0x8010: OpenSM logs an error and does not create it | write 0x8010 or 0000 in bytes 4-5 of the MGID"},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			c := Parse("p.conf", []byte(tt.in))
			var got []string
			for _, f := range append(append([]check.Finding(nil), c.Findings...), Lint(c, LintOptions{})...) {
				text := f.Message + " | " + f.Action
				if f.Rule == tt.rule && strings.HasPrefix(text, tt.want) {
					return
				}
				got = append(got, f.Rule+": "+text)
			}
			t.Errorf("no %s finding starting %q in:\n%s", tt.rule, tt.want, strings.Join(got, "\n"))
		})
	}
}
