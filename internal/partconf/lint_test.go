package partconf

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
)

func TestLintRules(t *testing.T) {
	const def = "Default=0x7fff, ipoib : ALL=full;\n"
	tests := []struct {
		rule string
		sev  check.Severity
		in   string
		opt  LintOptions
		at   string // line:col of the finding
	}{
		{"file-rejected", check.SeverityError, def + "p=0x10 : ALL_CAs;\n", LintOptions{}, "2:10"},
		{"opensm-rejects", check.SeverityError, def + "p=0x10\n: ALL;\n", LintOptions{}, "2:1"},
		{"opensm-rejects", check.SeverityError, def + "p=0x10 : ALL\n;\n", LintOptions{}, "3:1"},
		{"bad-member", check.SeverityError, def + "p=0x10 : host17=full;\n", LintOptions{}, "2:10"},
		{"key-zero", check.SeverityError, def + "p=0x8000 : ALL;\n", LintOptions{}, "2:3"},
		{"key-too-large", check.SeverityError, def + "p=0x18002 : ALL;\n", LintOptions{}, "2:3"},
		{"key-too-large", check.SeverityError, def + "p=-0x10 : ALL;\n", LintOptions{}, "2:3"},
		{"negative-guid", check.SeverityWarning, def + "p=0x10 : -0x0002c90300000211=full;\n", LintOptions{}, "2:10"},
		{"octal-guid", check.SeverityWarning, def + "p=0x10 : +00000540100300000001021=full;\n", LintOptions{}, "2:10"},
		{"key-top-bit", check.SeverityWarning, def + "p=0x8002 : ALL;\n", LintOptions{}, "2:3"},
		{"duplicate-key", check.SeverityWarning, def + "a=0x10 : 0x1;\nb=0x8010 : 0x2;\n", LintOptions{}, "3:1"},
		{"two-names", check.SeverityWarning, def + "a=0x10 : 0x1;\nb=0x10 : 0x2;\n", LintOptions{}, "3:1"},
		{"no-full-member", check.SeverityWarning, def + "a=0x10 : 0x1, 0x2=limited;\n", LintOptions{}, "2:1"},
		{"no-full-member", check.SeverityWarning, def + "a=0x300 : SELF=full ;\na=0x300 : ALL=limited ;\n", LintOptions{}, "2:1"},
		{"no-full-member", check.SeverityWarning, def + "a=0x300 : 0x1=both, ALL ;\n", LintOptions{AllowBoth: true}, "2:1"},
		{"conflicting-membership", check.SeverityWarning, def + "a=0x10 : 0x1=full,\n 0x2, 0x1=limited;\n", LintOptions{}, "3:7"},
		{"conflicting-membership", check.SeverityWarning, def + "a=0x10 : 0x1=full, 0x2=full,\n ALL=limited, 0x3=full;\n", LintOptions{}, "3:2"},
		{"conflicting-membership", check.SeverityWarning, def + "a=0x10 : 0x1=full, 0x2=full,\n ALL_CAS=limited, 0x3=full;\n", LintOptions{}, "3:2"},
		{"table-overflow", check.SeverityWarning, def + overflowing(3, 0x5), LintOptions{TableSize: 3}, "4:13"},
		{"table-overflow", check.SeverityWarning, def + "a=0x10 : ALL;\nb=0x20 : ALL_CAS;\n", LintOptions{TableSize: 2}, "1:1"},
		{"both-without-W", check.SeverityWarning, def + "a=0x10 : 0x1=both;\n", LintOptions{}, "2:10"},
		{"both-without-W", check.SeverityWarning, def + "a=0x10, defmember=both : 0x1;\n", LintOptions{}, "2:1"},
		{"no-default", check.SeverityWarning, "a=0x10 : 0x1=full;\n", LintOptions{}, "1:1"},
		{"sm-limited", check.SeverityWarning, "Default=0x7fff : ALL=limited;\n", LintOptions{}, "1:18"},
		{"generated-key", check.SeverityWarning, def + "a : 0x1=full;\n", LintOptions{}, "2:1"},
		{"no-members", check.SeverityWarning, def + "a=0x10 : ;\n", LintOptions{}, "2:1"},
		{"no-members", check.SeverityWarning, def + "a=0x10, ipoib : NONE;\nb=0x20 : 0x1=full;\n", LintOptions{}, "2:1"},
		{"ambiguous-name", check.SeverityWarning, def + "a=0x150 : 0x1;\na=0x106 : 0x2;\na : 0x3=full;\n", LintOptions{}, "4:1"},
		{"ambiguous-name", check.SeverityWarning, def + "Default=0x2 : 0x1;\nDefault : 0x3=full;\n", LintOptions{}, "3:1"},
		{"unknown-flag", check.SeverityWarning, def + "a=0x10, indx : 0x1=full;\n", LintOptions{}, "2:9"},
		{"unknown-membership", check.SeverityWarning, def + "a=0x10 : 0x1=Full;\n", LintOptions{}, "2:14"},
		{"empty-membership", check.SeverityWarning, def + "a=0x10 : 0x1=, 0x2;\n", LintOptions{}, "2:14"},
		{"empty-membership", check.SeverityWarning, def + "a=0x10, defmember= : 0x1, 0x2;\n", LintOptions{}, "2:9"},
		{"bad-flag", check.SeverityWarning, def + "a=0x10, defmember=yes : 0x1=full;\n", LintOptions{}, "2:9"},
		{"bad-flag", check.SeverityWarning, def + "a=0x10, ipoib=0 : 0x1=full;\n", LintOptions{}, "2:9"},
		{"sl-without-qos", check.SeverityWarning, def + "a=0x10, ipoib, sl=3 : 0x1=full;\n", LintOptions{}, "2:1"},
		{"group-exists", check.SeverityWarning, def + "a=0x10, ipoib, mtu=5 : 0x1=full;\na=0x10, ipoib : 0x2=full;\n", LintOptions{}, "3:1"},
		{"group-exists", check.SeverityWarning, def + "a=0x10 :\n mgid=ff12::9,rate=6\n mgid=ff12::9,sl=0\n 0x1=full;\n", LintOptions{}, "4:2"},
		{"bad-flag", check.SeverityWarning, def + "a=0x10, indx0=no : 0x1=full;\n", LintOptions{}, "2:9"},
		{"bad-group-flag", check.SeverityWarning, def + "a=0x10, ipoib, mtu=4x : 0x1=full;\n", LintOptions{}, "2:20"},
		{"bad-group-flag", check.SeverityWarning, def + "a=0x10 :\n mgid=ff12::1,rate=3junk\n , 0x1=full;\n", LintOptions{}, "3:20"},
		{"bad-group-flag", check.SeverityWarning, def + "a=0x10, ipoib, Q_Key= : 0x1=full;\n", LintOptions{}, "2:16"},
		{"bad-group-flag", check.SeverityWarning, def + "a=0x10, ipoib, TClass=256 : 0x1=full;\n", LintOptions{}, "2:16"},
		{"bad-group-flag", check.SeverityWarning, def + "a=0x10, ipoib, scope=5x : 0x1=full;\n", LintOptions{}, "2:22"},
		{"missing-semicolon", check.SeverityWarning, def + "a=0x10 : 0x1=full", LintOptions{}, "2:1"},
		{"mgid-swallows", check.SeverityWarning, def + "a=0x10 : mgid=ff12::1, 0x1=full\n, 0x2=full;", LintOptions{}, "2:24"},
		{"mgid-comment", check.SeverityWarning, def + "a=0x10 :\n mgid=ff12::1 # IGMP\n , 0x1=full;", LintOptions{}, "3:17"},
		{"mgid-comment", check.SeverityWarning, def + "a=0x10, ipoib :\n mgid=ff12:401b::1 # mtu=2\n , 0x1=full;", LintOptions{}, "3:22"},
		{"mgid-comment", check.SeverityWarning, def + "a=0x10 :\n mgid=ff12::1 #\n , 0x1=full;", LintOptions{}, "3:17"},
		{"mgid-not-multicast", check.SeverityWarning, def + "a=0x10 : mgid=zzz\n, 0x1=full;", LintOptions{}, "2:15"},
		{"ipoib-scope", check.SeverityWarning, def + "a=0x10, ipoib, scope=5 : 0x1=full;\n", LintOptions{}, "2:1"},
		{"ipoib-scope", check.SeverityWarning, def + "a=0x10, ipoib, scope=2, scope=8 : 0x1=full;\n", LintOptions{}, "2:1"},
		{"mgid-refused", check.SeverityWarning, def + "a=0x10, ipoib, scope=5 :\n mgid=ff12:401b::1,sl=0\n 0x1=full;\n", LintOptions{}, "3:2"},
		{"long-line", check.SeverityWarning, def + "a=0x10 :" + strings.Repeat(" ", 5000) + "0x1;\n", LintOptions{}, "2:1"},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			fs := Lint(Parse("p.conf", []byte(tt.in)), tt.opt)
			var got []string
			for _, f := range fs {
				got = append(got, f.String())
				if f.Rule == tt.rule && f.Severity == tt.sev && fmt.Sprintf("%d:%d", f.Pos.Line, f.Pos.Col) == tt.at {
					if f.Action == "" || f.Pos.File != "p.conf" {
						t.Errorf("finding without hint or file: %v", f)
					}
					return
				}
			}
			t.Errorf("no %s %s at %s in:\n%s", tt.sev, tt.rule, tt.at, strings.Join(got, "\n"))
		})
	}
}

func overflowing(n int, guid uint64) string {
	var b strings.Builder
	for k := 1; k <= n; k++ {
		fmt.Fprintf(&b, "p%d=0x%04x : 0x%x=full;\n", k, k, guid)
	}
	return b.String()
}

// A rejected file is announced first, loudly, at the first error OpenSM hits.
func TestLintRejectedHeadline(t *testing.T) {
	fs := Lint(Parse("p.conf", []byte("Default=0x7fff : ALL=limited, SELF=full;\np=0x10 : 0x1=full;\nbroken\nq=0x20 : nope;\n")), LintOptions{})
	if len(fs) < 3 || fs[0].Rule != "file-rejected" || fs[0].Pos.Line != 3 || !strings.Contains(fs[0].Message, "ALL ISOLATION IS LOST") ||
		!strings.Contains(fs[0].Message, "Default=0x7fff, ipoib : ALL=full") {
		t.Fatalf("headline: %v", fs)
	}
	errs := 0
	for _, f := range fs[1:] {
		if f.Severity == check.SeverityError {
			errs++
		}
	}
	if errs != 2 {
		t.Errorf("want both errors (lines 3 and 4) after the headline: %v", fs)
	}
}

// A rejected file is replaced by OpenSM's fallback (Default=0x7fff, ipoib : ALL=full): no
// no-default warning (which says OpenSM adds ALL=limited), and the headline says why as
// OpenSM does: PARSE ERROR for a line it could not parse, none for a file with nothing
// to parse (the lab's OpenSM logs only "Partition configuration in error").
func TestLintRejectedFallback(t *testing.T) {
	for _, c := range []struct{ name, text, why string }{
		{"empty", "", "(it holds no definition)"},
		{"comments", "# nothing here\n\n   \n", "(it holds no definition)"},
		{"parse error, no Default", "p=0x10 : 0x1=full;\nbroken\n", "(PARSE ERROR at this line)"},
	} {
		fs := Lint(Parse("p.conf", []byte(c.text)), LintOptions{})
		if len(fs) == 0 || fs[0].Rule != "file-rejected" || !strings.Contains(fs[0].Message, c.why) {
			t.Errorf("%s: headline %v, want file-rejected with %q", c.name, fs, c.why)
		}
		for _, f := range fs {
			if f.Rule == "no-default" {
				t.Errorf("%s: no-default on a rejected file: %v", c.name, f)
			}
		}
	}
	// Accepted without a Default line: OpenSM adds one, ALL=limited (the warning stays).
	fs := Lint(Parse("p.conf", []byte("p=0x10 : ALL=full;\n")), LintOptions{})
	if !slices.ContainsFunc(fs, func(f check.Finding) bool { return f.Rule == "no-default" }) {
		t.Errorf("accepted file without Default: %v, want no-default", fs)
	}
}

// The file from the facts example is clean; AllowBoth silences both-without-W.
func TestLintClean(t *testing.T) {
	if fs := Lint(Parse("p.conf", []byte(factsExample)), LintOptions{}); len(fs) != 0 {
		t.Errorf("facts example: %v", fs)
	}
	in := "Default=0x7fff, ipoib : ALL=full;\na=0x10 : 0x1=both, 0x2;\n"
	if fs := Lint(Parse("p.conf", []byte(in)), LintOptions{AllowBoth: true}); len(fs) != 0 {
		t.Errorf("both with -W: %v", fs)
	}
	if fs := Lint(NoFile(), LintOptions{}); len(fs) != 0 {
		t.Errorf("no file: %v", fs)
	}
	// One partition split over definitions with the same name and key (OpenSM's
	// partition-config.txt), or the key alone, is merged as meant.
	split := "Default=0x7fff : ALL, SELF=full;\nDefault=0x7fff, ipoib : ALL_SWITCHES=full;\n" +
		"ShareIO = 0x80 , defmember=full : 0x123451, 0x123452;\nShareIO = 0x080 : 0x123453, 0x123455=full;\n=0x80 : 0x123456=full;\n"
	if fs := Lint(Parse("p.conf", []byte(split)), LintOptions{}); len(fs) != 0 {
		t.Errorf("split definitions: %v", fs)
	}
	// ipoib in link-local scope, scope= without ipoib, and a scope-5 broadcast group
	// an mgid= line creates (TestLabIPoIBBroadcastJoin runs it through OpenSM).
	for _, in := range []string{"a=0x10, ipoib, scope=2 : 0x1=full;\n", "a=0x10, scope=5 : 0x1=full;\n",
		"a=0x10, ipoib, scope=5 :\n mgid=ff15:401b::ffff:ffff,sl=0\n 0x1=full;\n"} {
		if fs := Lint(Parse("p.conf", []byte("Default=0x7fff, ipoib : ALL=full;\n"+in)), LintOptions{}); len(fs) != 0 {
			t.Errorf("%q: %v", in, fs)
		}
	}
	if fs := Lint(Parse("p.conf", []byte("Default=0x7fff, ipoib : ALL=full;\na=0x10, ipoib, scope=5, scope=8 : 0x1=full;\n")), LintOptions{}); len(fs) != 2 {
		t.Errorf("two scopes: %v", fs)
	}
	// An IPoIB group in scope 5 of an ipoib partition: the fix creates the scope-5
	// broadcast group (the ipoib flag makes it link-local only).
	for _, f := range Lint(Parse("p.conf", []byte("Default=0x7fff, ipoib : ALL=full;\na=0x10, ipoib, scope=5 :\n mgid=ff12:401b::1,sl=0\n 0x1=full;\n")), LintOptions{}) {
		if f.Rule == "mgid-refused" && !strings.Contains(f.Action, "`mgid=ff15:401b::ffff:ffff,sl=0` on a line before this one") {
			t.Errorf("mgid-refused fix: %s", f.Action)
		}
	}
	// A comment after an mgid that ends with a flag is a comment.
	in = "Default=0x7fff, ipoib : ALL=full;\na=0x10 :\n mgid=ff12::1,sl=0 # mtu=2, IGMP\n , 0x1=full;\n"
	if fs := Lint(Parse("p.conf", []byte(in)), LintOptions{}); len(fs) != 0 {
		t.Errorf("comment after a flag: %v", fs)
	}
}

// TestSortByPos: sortByPos is the stable sort by line and column.
func TestSortByPos(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 15))
	for n := 0; n < 500; n++ {
		fs := make([]lintRec, rng.IntN(60))
		for i := range fs {
			fs[i] = lintRec{line: int32(rng.IntN(6)), col: int32(rng.IntN(4)), a: int32(i)}
		}
		want := slices.Clone(fs)
		sort.SliceStable(want, func(i, j int) bool {
			a, b := want[i], want[j]
			if a.line != b.line {
				return a.line < b.line
			}
			return a.col < b.col
		})
		sortByPos(fs)
		if !reflect.DeepEqual(fs, want) {
			t.Fatalf("sortByPos\n%v\nwant\n%v", fs, want)
		}
	}
}

// TestLintDefaultIPoIB: a file whose default partition gets no IPoIB broadcast group
// draws one warning at its first Default line; the ipoib flag on any of its lines, or
// an mgid= line making the group, silences it; no file, a rejected file (the fallback
// makes the group) and a file without a Default line (no-default says it) draw none.
// smlog's TestLabIPoIBDefaultBroadcast checks OpenSM's side on the lab.
func TestLintDefaultIPoIB(t *testing.T) {
	rules := func(in string) (out []string) {
		for _, f := range Lint(Parse("p.conf", []byte(in)), LintOptions{}) {
			if f.Rule == "default-no-ipoib" || f.Rule == "no-default" || f.Rule == "file-rejected" {
				out = append(out, fmt.Sprintf("%s@%d", f.Rule, f.Pos.Line))
			}
		}
		return out
	}
	for in, want := range map[string]string{
		"Default=0x7fff : ALL=full;\n":                                            "default-no-ipoib@1",
		"# c\nDefault=0x7fff, scope=5 : ALL=full;\nDefault=0x7fff : SELF=full;\n": "default-no-ipoib@2",
		"Default : ALL=full;\n":                                                   "default-no-ipoib@1",
		"Default=0x7fff, ipoib : ALL=full;\n":                                     "",
		"Default=0x7fff, ipo : ALL=full;\n":                                       "", // flags match by prefix
		"Default=0x7fff : ALL=full;\nDefault=0x7fff, ipoib : SELF=full;\n":        "",
		"Default=0x7fff :\n mgid=ff12:401b::ffff:ffff,sl=0\n ALL=full;\n":         "",
		"Default=0x7fff : ALL=full;\np=0x10, ipoib : ALL=full;\n":                 "default-no-ipoib@1",
		"p=0x10, ipoib : ALL=full;\n":                                             "no-default@1",
		"Default=0x7fff : ALL=full;\np=0x10 : ALL=bogus-;\n0x:\n":                 "file-rejected@3",
	} {
		if got := strings.Join(rules(in), " "); got != want {
			t.Errorf("%q: findings %s, want %s", in, got, want)
		}
	}
	if fs := Lint(NoFile(), LintOptions{}); len(fs) != 0 {
		t.Errorf("no file: %v", fs)
	}
	fs := Lint(Parse("p.conf", []byte("Default=0x7fff : ALL=full;\n")), LintOptions{})
	for _, want := range []string{"ff12:401b:ffff:0000:0000:0000:ffff:ffff, status -22", "osm_prtn.c", "osm_prtn_config.c", "ipoib_multicast.c", "ERR 1B11"} {
		if len(fs) != 1 || fs[0].Severity != check.SeverityWarning || !strings.Contains(fs[0].Message, want) || !strings.Contains(fs[0].Action, "`Default=0x7fff, ipoib : ALL=full;`") {
			t.Errorf("finding %v lacks %q or the fix", fs, want)
		}
	}
}

// TestLintTablesAgainstModel generates files whose ports are named by GUID, some
// several times in one partition, over several lines and with several definitions of
// one partition, and checks lintTables' count against what the OpenSM model programs
// with an unlimited table: a port gets a table-overflow warning exactly when the model
// gives it more entries than the table holds, and the warning points at the last line
// naming the port.
func TestLintTablesAgainstModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 5))
	flags := []string{"", "=full", "=limited", "=both"}
	var over, fits int
	for n := range 300 {
		allowBoth := n%2 == 1
		var b strings.Builder
		b.WriteString("Default=0x7fff, ipoib : ALL=full;\n")
		guids := 1 + rng.IntN(6)
		for range 1 + rng.IntN(8) {
			key := 1 + rng.IntN(5) // a key may be defined twice: one partition, two definitions
			fmt.Fprintf(&b, "p%d=0x%x :", key, key)
			for j := range 1 + rng.IntN(5) {
				if j > 0 {
					b.WriteString(",")
					if rng.IntN(3) == 0 {
						b.WriteString("\n")
					}
				}
				fmt.Fprintf(&b, " 0x%x%s", 1+rng.IntN(guids), flags[rng.IntN(len(flags))])
			}
			b.WriteString(";\n")
		}
		c := Parse("p.conf", []byte(b.String()))
		if c.Rejected {
			continue
		}
		var ports []Port
		for _, g := range c.GUIDs {
			ports = append(ports, Port{GUID: g, Type: check.NodeCA})
		}
		m := NewModel(c, ports, Options{AllowBoth: allowBoth})
		size := 1 + rng.IntN(4)
		warned := map[string]string{}
		for _, f := range Lint(c, LintOptions{AllowBoth: allowBoth, TableSize: size}) {
			if f.Rule == "table-overflow" {
				warned[strings.Fields(f.Message)[1]] = fmt.Sprint(f.Pos.Line)
			}
		}
		for _, g := range c.GUIDs {
			lastLine := 0
			for _, p := range c.Partitions {
				for _, it := range p.Members {
					if it.Kind == KindGUID && it.GUID == g && int(it.line) > lastLine {
						lastLine = int(it.line)
					}
				}
			}
			want := len(m.PKeys(g)) > size
			if want {
				over++
			} else {
				fits++
			}
			at, got := warned[g.String()]
			if got != want || (got && at != fmt.Sprint(lastLine)) {
				t.Fatalf("file %d (-W %v, table %d), port %s: model %v, warning %v at line %s (last line naming it %d)\n%s",
					n, allowBoth, size, g, m.PKeys(g), got, at, lastLine, b.String())
			}
		}
	}
	if over < 100 || fits < 100 {
		t.Fatalf("%d ports over their table and %d within it: the generator should give both", over, fits)
	}
}

// A definition named Default that is not the default partition (another key, or no
// key and another case: OpenSM matches the name exactly) is named by the no-default
// warning, with the partition it is.
func TestLintNoDefaultNamesTheLookAlike(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Default=0x10, ipoib : ALL=full;\n", `"Default" at p.conf:1:1 is partition 0x0010`},
		{"a=0x20 : ALL=full;\ndefault, ipoib : ALL=full;\n", `"default" at p.conf:2:1 is partition 0x0001`},
	} {
		var got []string
		for _, f := range Lint(Parse("p.conf", []byte(c.in)), LintOptions{}) {
			if f.Rule == "no-default" && strings.Contains(f.Message, c.want) {
				got = nil
				break
			}
			got = append(got, f.String())
		}
		if got != nil {
			t.Errorf("%q: no no-default naming %s in:\n%s", c.in, c.want, strings.Join(got, "\n"))
		}
	}
}

// An empty item among a definition's flags is OpenSM's mtu without a value: the
// finding says it is an empty flag, not an mtu written without a number.
func TestLintEmptyFlag(t *testing.T) {
	for _, in := range []string{"p=0x10, , ipoib : ALL=full;\n", "p=0x10, ipoib, : ALL=full;\n"} {
		fs := Lint(Parse("p.conf", []byte("Default=0x7fff, ipoib : ALL=full;\n"+in)), LintOptions{})
		if !slices.ContainsFunc(fs, func(f check.Finding) bool {
			return f.Rule == "bad-group-flag" && f.Pos.Line == 2 && strings.HasPrefix(f.Message, "an empty flag") && f.Action == "remove the extra comma"
		}) {
			t.Errorf("%q: no empty-flag finding in %v", in, fs)
		}
	}
}

// A name that starts with a digit and has no =key is the key (partition_create): when it
// is not a number the error and the headline point at it, and say so.
func TestLintDigitName(t *testing.T) {
	fs := Lint(Parse("p.conf", []byte("Default=0x7fff, ipoib : ALL=full;\n  1st : ALL=full;\n")), LintOptions{})
	if len(fs) < 2 || fs[0].Rule != "file-rejected" || fs[0].Pos.String() != "p.conf:2:3" {
		t.Fatalf("want the headline at p.conf:2:3: %v", fs)
	}
	if f := fs[1]; f.Rule != "opensm-rejects" || f.Pos.String() != "p.conf:2:3" || !strings.Contains(f.Message, "starts with a digit") || strings.Contains(f.Message, "earlier, longer line") {
		t.Errorf("want the error at p.conf:2:3 saying the name starts with a digit: %v", f)
	}
}

// The missing ';' is said at the last definition, as what it is: not as something
// OpenSM read from its line buffer's leftovers.
func TestLintMissingSemicolonWords(t *testing.T) {
	fs := Lint(Parse("p.conf", []byte("Default=0x7fff, ipoib : ALL=full;\n  p=0x10 : 0x1=full")), LintOptions{})
	if !slices.ContainsFunc(fs, func(f check.Finding) bool {
		return f.Rule == "missing-semicolon" && f.Pos.String() == "p.conf:2:3" && !strings.Contains(f.Message, "earlier, longer line")
	}) {
		t.Errorf("want missing-semicolon at p.conf:2:3 without the line-buffer words: %v", fs)
	}
}

// TestLintAllCAsOverrides: ALL_CAS after a port item that gives the port another
// membership overrides it where the port is a CA port (osm_prtn_add_all adds by node
// type through osm_prtn_add_port, where the last item naming a port wins), and the
// warning says so; the model (checked against OpenSM by the truth soak) agrees: the
// CA port is limited, a switch's port 0 keeps its full entry.
func TestLintAllCAsOverrides(t *testing.T) {
	conf := "Default=0x7fff, ipoib : ALL=full ;\na=0x0010 : 0x1=full, ALL_CAS=limited, 0x3=full ;\n"
	c := Parse("p.conf", []byte(conf))
	fs := slices.Collect(LintFindings(c, LintOptions{}).All())
	i := slices.IndexFunc(fs, func(f check.Finding) bool { return f.Rule == "conflicting-membership" })
	if i < 0 || fs[i].Pos.Line != 2 || !strings.Contains(fs[i].Message, "where the port is a CA port") || !strings.Contains(fs[i].Action, "put ALL_CAS first") {
		t.Fatalf("findings %v", fs)
	}
	for _, tc := range []struct {
		typ  check.NodeType
		want check.PKey
	}{{check.NodeCA, 0x0010}, {check.NodeSwitch, 0x8010}} {
		m := NewModel(c, []Port{{GUID: 1, Type: tc.typ}, {GUID: 3, Type: check.NodeCA}}, Options{})
		if !slices.Contains(m.PKeys(1), tc.want) {
			t.Errorf("port 0x1 of type %v: %v, want %v", tc.typ, m.PKeys(1), tc.want)
		}
	}
}
