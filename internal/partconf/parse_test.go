package partconf

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
)

// render prints the partitions as OpenSM merged them: "key name: member=membership ...",
// leaving out the implicit Default items.
func render(c *Config) string {
	var parts []string
	for _, p := range c.Partitions {
		var ms []string
		for mi := range p.Members {
			m := &p.Members[mi]
			if m.Def.Implicit {
				continue
			}
			w := m.Kind.String()
			if m.Kind == KindGUID {
				w = fmt.Sprintf("%#x", uint64(m.GUID))
			}
			ms = append(ms, w+"="+m.Membership.String())
		}
		if p.IsDefault() && len(ms) == 0 {
			continue
		}
		parts = append(parts, fmt.Sprintf("%04x %s: %s", uint16(p.Key), p.Name, strings.Join(ms, " ")))
	}
	return strings.Join(parts, "; ")
}

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		in   string
		at   string // "line:col" of the first thing OpenSM rejects, "" if accepted
		want string // render(c), checked when not rejected
	}{
		// What OpenSM 3.3.23 rejects (lab, "PARSE ERROR: line N").
		{"line break before colon", "Default=0x7fff\n: ALL=full;\n", "1:1", ""},
		{"semicolon alone on a line", "Default=0x7fff : ALL=full\n;\n", "2:1", ""},
		{"semicolon alone after spaces", "Default=0x7fff : ALL=full\n  ;\n", "2:1", ""},
		{"double semicolon", "Default=0x7fff : ALL=full;;\n", "1:28", ""},
		{"semicolon space semicolon", "Default=0x7fff : ALL=full; ;\n", "1:29", ""},
		{"empty file", "", "1:1", ""},
		{"comments only", "# a\n\n  # b\n", "1:1", ""},
		{"text after semicolon without colon", "Default=0x7fff : ALL=full; x\n", "1:28", ""},
		{"keyword case", "p=0x10 : ALL_CAs=full;\n", "1:10", ""},
		{"lower-case all", "p=0x10 : all;\n", "1:10", ""},
		{"key not a number", "a=xyz : ALL;\n", "1:3", ""},
		{"name starting with a digit is a key", "1abc : ALL;\n", "1:1", ""},
		{"guid zero", "p=0x10 : 0x0, 0x1;\n", "1:10", ""},
		{"guid with junk", "p=0x10 : 0x0002c90300000211x;\n", "1:10", ""},
		{"mgid is not matched by prefix", "p=0x10 : m=ff12::5\n;", "1:10", ""},
		{"mgidx", "p=0x10 : mgidx=ff12::5\n, 0x1;", "1:10", ""},
		{"CRLF line ends", "Default=0x7fff : ALL=full;\r\np=0x10 : 0x1=full;\r\n", "1:27", ""},
		{"man page ShareIO example with two colons", "ShareIO = 0x80 : defmember=limited : 0x123456;\n", "1:18", ""},
		{"member line continues without ';' into a definition", "p=0x10 : 0x1=full\nq=0x20 : 0x2;\n", "2:1", ""},
		{"second error is reported too", "a=xyz : ALL;\nb=0x10 : foo;\n", "1:3", ""},

		// What OpenSM accepts.
		{"members over lines, a line end ends a member", "p=0x10 :\n 0x1=full,\n 0x2\n 0x3;\n", "", "0010 p: 0x1=full 0x2=limited 0x3=limited"},
		{"comments", "# c;\np=0x10 : 0x1=full # ;x\n , 0x2 ; # c\n", "", "0010 p: 0x1=full 0x2=limited"},
		{"spaces around delimiters", "p = 0x10 , ipoib :  0x1 = full , 0x2 ;", "", "0010 p: 0x1=full 0x2=limited"},
		{"empty items are ignored", "p=0x10 : , 0x1, =full, ,;\n", "", "0010 p: 0x1=limited"},
		{"NONE and its prefixes", "p=0x10 : NONE, N, NO=full, 0x1;\n", "", "0010 p: 0x1=limited"},
		{"membership prefixes", "p=0x10 : 0x1=f, 0x2=limi, 0x3=b, 0x4=, 0x5=fullx, 0x6=FULL;", "", "0010 p: 0x1=full 0x2=limited 0x3=both 0x4=full 0x5=limited 0x6=limited"},
		{"keyword prefixes", "p=0x10 : A, ALL_, ALL_C, ALL_S, ALL_R, S;", "", "0010 p: ALL=limited ALL_CAS=limited ALL_CAS=limited ALL_SWITCHES=limited ALL_ROUTERS=limited SELF=limited"},
		{"defmember", "a=0x10, defmember=full : 0x1, 0x2=limited;\nb=0x20, d=f : 0x3;\nc=0x30, defmember= : 0x4;\nd=0x40, defmember=xyz : 0x5;\n", "",
			"0010 a: 0x1=full 0x2=limited; 0020 b: 0x3=full; 0030 c: 0x4=full; 0040 d: 0x5=limited"},
		{"defmember is per definition", "a=0x10, defmember=full : 0x1;\na=0x10 : 0x2;\n", "", "0010 a: 0x1=full 0x2=limited"},
		{"top bit masked, duplicates merged, first name kept", "a=0x8001 : 0x1;\nb=0x0001 : 0x2;\n", "", "0001 a: 0x1=limited 0x2=limited"},
		{"key wider than 16 bits is truncated", "c=0x18002 : 0x1;\n", "", "0002 c: 0x1=limited"},
		{"name starting with a digit is the key", "16 : 0x1;\n0x20 : 0x2;\n=0x30 : 0x3;\n", "", "0010 0010: 0x1=limited; 0020 0020: 0x2=limited; 0030 0030: 0x3=limited"},
		{"generated keys and merging by name", "x : 0x1;\n: 0x2;\nc=0x0001 : 0x3;\nx : 0x4;\na=0 : 0x5;\n", "",
			"0001 x: 0x1=limited 0x3=limited 0x4=limited; 0002 0002: 0x2=limited; 0003 a: 0x5=limited"},
		{"keyless Default merges into the default partition", "Default : 0x1=limited;\n", "", "7fff Default: 0x1=limited"},
		{"decimal and octal GUIDs", "p=0x10 : 783964675506705, 010;\n", "", "0010 p: 0x2c90300000211=limited 0x8=limited"},
		{"several definitions on a line", "a=0x10:0x1=full,0x2;b=0x20:0x3=full;\n", "", "0010 a: 0x1=full 0x2=limited; 0020 b: 0x3=full"},
		{"mgid lines", "Default=0x7fff,ipoib:\n mgid=ff12:401b::0707,sl=1 # c\n mgid=ff12::1,sl=1,Q_Key=0xDEADBEEF\n ALL=full;\n", "", "7fff Default: ALL=full"},
		{"mgid swallows the rest of its line", "p=0x10: mgid=ff12::2, 0x1=full\n, 0x2=full;\n", "", "0010 p: 0x2=full"},
		{"mgid with a flag before the semicolon", "p=0x10: 0x1=full, mgid=ff12::5,sl=1;\n", "", "0010 p: 0x1=full"},
		{"mgid not multicast: logged, file kept", "p=0x10 : mgid=zzz\n, 0x1;\n", "", "0010 p: 0x1=limited"},
		{"semicolon alone after a short line", "Default=0x7fff :\nALL=full\n;\n", "", "7fff Default: ALL=full"},
		{"names of 32 bytes are never found again", "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn : 0x1;\nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn : 0x2;\n", "", "0001 nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn: 0x1=limited; 0002 nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn: 0x2=limited"},
		{"names of 31 bytes merge", "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn : 0x1;\nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn : 0x2;\n", "", "0001 nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn: 0x1=limited 0x2=limited"},
		{"last definition without semicolon", "p=0x10 : 0x1=full", "", "0010 p: 0x1=full"},
		{"NUL ends the line", "p=0x10 : 0x1=full\x00junk: ;\n, 0x2;\n", "", "0010 p: 0x1=full 0x2=limited"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Parse("p.conf", []byte(tt.in))
			at := ""
			if c.Rejected {
				at = fmt.Sprintf("%d:%d", c.RejectedAt.Line, c.RejectedAt.Col)
			}
			if at != tt.at {
				t.Fatalf("rejected at %q, want %q; findings:\n%v", at, tt.at, c.Findings)
			}
			if tt.at == "" {
				if got := render(c); got != tt.want {
					t.Errorf("got  %s\nwant %s", got, tt.want)
				}
			}
			for _, f := range c.Findings {
				if f.Pos.File != "p.conf" || f.Pos.Line < 1 || f.Pos.Col < 1 || f.Message == "" || f.Action == "" || f.Rule == "" {
					t.Errorf("incomplete finding %+v", f)
				}
			}
		})
	}
}

func TestParseReportsAllErrors(t *testing.T) {
	c := Parse("p.conf", []byte("a=xyz : ALL;\nb=0x10 : foo;\nc=0x20 : 0x1;\nbroken\n"))
	var lines []int
	for _, f := range c.Findings {
		if f.Severity == check.SeverityError {
			lines = append(lines, f.Pos.Line)
		}
	}
	if fmt.Sprint(lines) != "[1 2 4]" {
		t.Errorf("errors on lines %v, want [1 2 4]: %v", lines, c.Findings)
	}
	if c.Partition(0x20) != nil || !c.Rejected || c.RejectedAt.Line != 1 {
		t.Error("after the first error OpenSM changes nothing (later errors are only reported)")
	}
}

// A line longer than 4094 bytes is read in pieces (lab: "ALL_C|AS" is rejected on
// OpenSM's line 3, "ALL_CA|S" is ALL_CAS and SELF).
func TestLongLine(t *testing.T) {
	mk := func(spaces int) string {
		return "Default=0x7fff : ALL=full;\np=0x10 :" + strings.Repeat(" ", spaces) + "ALL_CAS=full;\n"
	}
	c := Parse("p.conf", []byte(mk(4081)))
	if !c.Rejected || c.RejectedAt.Line != 2 || c.RejectedAt.Col != 4095 {
		t.Errorf("split ALL_C|AS: rejected %v at %v", c.Rejected, c.RejectedAt)
	}
	c = Parse("p.conf", []byte(mk(4080)))
	if c.Rejected || render(c) != "0010 p: ALL_CAS=limited SELF=full; 7fff Default: ALL=full" {
		t.Errorf("split ALL_CA|S: rejected %v, %s", c.Rejected, render(c))
	}
	if !hasRule(c.Findings, "long-line") {
		t.Errorf("no long-line warning: %v", c.Findings)
	}
}

func TestStrtoull(t *testing.T) {
	tests := []struct {
		in   string
		v    uint64
		used int
	}{
		{"0x10", 16, 4}, {"16", 16, 2}, {"010", 8, 3}, {"0", 0, 1}, {"0x", 0, 1}, {"0xg", 0, 1},
		{"x", 0, 0}, {"", 0, 0}, {"-1", ^uint64(0), 2}, {" \v12", 12, 4}, {"99999999999999999999", ^uint64(0), 20},
		{"0x0002c90300000201", 0x0002c90300000201, 18}, {"12ab", 12, 2},
		// At and just past 2^64-1 in each base: saturation, as C's strtoull.
		{"18446744073709551615", ^uint64(0), 20}, {"18446744073709551616", ^uint64(0), 20},
		{"18446744073709551614", ^uint64(0) - 1, 20}, {"0xffffffffffffffff", ^uint64(0), 18},
		{"0x10000000000000000", ^uint64(0), 19}, {"01777777777777777777777", ^uint64(0), 23},
		{"02000000000000000000000", ^uint64(0), 23}, {"-18446744073709551615", 1, 21},
	}
	for _, tt := range tests {
		if v, n := strtoull(tt.in); v != tt.v || n != tt.used {
			t.Errorf("strtoull(%q) = %d, %d; want %d, %d", tt.in, v, n, tt.v, tt.used)
		}
	}
	// Random digit strings in each base against math/big, saturated at 2^64-1.
	rng := rand.New(rand.NewPCG(7, 7))
	max := new(big.Int).SetUint64(^uint64(0))
	for range 20000 {
		base := []int{8, 10, 16}[rng.IntN(3)]
		digits := "0123456789abcdef"[:base]
		var b strings.Builder
		for range 1 + rng.IntN(24) {
			b.WriteByte(digits[rng.IntN(base)])
		}
		body := strings.TrimLeft(b.String(), "0")
		if body == "" {
			body = "1"
		}
		in := map[int]string{8: "0" + body, 10: body, 16: "0x" + body}[base]
		if base == 10 && body[0] == '0' {
			continue
		}
		want, _ := new(big.Int).SetString(body, base)
		if want.Cmp(max) > 0 {
			want = max
		}
		if v, n := strtoull(in); v != want.Uint64() || n != len(in) {
			t.Fatalf("strtoull(%q) = %#x, %d; want %#x, %d", in, v, n, want.Uint64(), len(in))
		}
	}
}

func TestReadConfig(t *testing.T) {
	c := Parse("x.conf", []byte("p=0x10 : 0x1=full;\n"))
	if c.Partition(0x8010) == nil || c.Partition(0x10).Name != "p" {
		t.Fatalf("Parse: %+v", c)
	}
	if c.HasDefault || !c.Exists {
		t.Errorf("HasDefault %v Exists %v", c.HasDefault, c.Exists)
	}
	if n := NoFile(); n.Exists || n.Rejected || render(n) != "" {
		t.Errorf("NoFile: %+v", n)
	}
}

func hasRule(fs []check.Finding, rule string) bool {
	for _, f := range fs {
		if f.Rule == rule {
			return true
		}
	}
	return false
}

// TestMembersWindows: each definition's Members are its own items in file order, and
// each partition's the items of its definitions, with members separated by line ends,
// not commas, and when definitions of one key are merged.
func TestMembersWindows(t *testing.T) {
	var b strings.Builder
	b.WriteString("Default=0x7fff : ALL=full ;\n")
	for k := 0; k < 40; k++ {
		fmt.Fprintf(&b, "p%d=0x%04x :", k, k%25+1)
		for j := 0; j < 30; j++ {
			if j > 0 {
				b.WriteString("\n")
			}
			fmt.Fprintf(&b, " 0x%016x", 0x0002c90300000001+uint64(k*30+j))
		}
		b.WriteString(" ;\n")
	}
	c := Parse("w.conf", []byte(b.String()))
	if c.Rejected {
		t.Fatal(c.Findings)
	}
	n := 0
	for _, d := range c.Definitions {
		for j := range d.Members {
			if d.Members[j].Def != d {
				t.Fatalf("%s: item %d is not its own", d.Name, j)
			}
			n++
		}
	}
	if n != 2+1+40*30 {
		t.Fatalf("%d items in definitions, %d in the file", n, 2+1+40*30)
	}
	// The same item, not a copy: a model entry's DecidedBy is one of its definition's
	// Members.
	var ports []Port
	for _, g := range c.GUIDs {
		ports = append(ports, Port{GUID: g, Type: check.NodeCA})
	}
	own := func(e Entry) bool {
		ms := e.DecidedBy.Def.Members
		for j := range ms {
			if &ms[j] == e.DecidedBy {
				return true
			}
		}
		return false
	}
	m := NewModel(c, ports, Options{})
	for _, p := range ports {
		for _, e := range m.Table(p.GUID) {
			if !own(e) {
				t.Fatalf("port %s: %s is decided by a copy of an item", p.GUID, e.PKey)
			}
		}
	}
	for _, p := range c.Partitions {
		var want []Member
		for _, d := range p.Defs {
			want = append(want, d.Members...)
		}
		if !reflect.DeepEqual(p.Members, want) || (p.Key != 0x7fff && p.Key <= 15 && len(p.Defs) != 2) {
			t.Fatalf("partition %s: %d members, %d defs", p.Key, len(p.Members), len(p.Defs))
		}
	}
}
