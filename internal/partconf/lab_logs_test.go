package partconf

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
)

// TestLabOpenSMLogs runs files with the constructs OpenSM's doc/partition-config.txt
// documents through OpenSM 3.3.23 with -V and checks the lint against what OpenSM logs
// about them (and the model against the tables it programs):
//   - split.conf, one partition split over definitions with the same name and key:
//     OpenSM logs "Duplicated partition definition: 'ShareIO' (0x0080) prev name
//     'ShareIO'. Will use it" and the lint says nothing about it (only that the
//     documented YetAnotherOne leaves every port limited); reused.conf, a key reused under
//     another name ("prev name 'storage'"): duplicate-key.
//   - mgidcomments.conf, comments after mgid= lines: each "unrecognized mgroup flag 'X'"
//     OpenSM logs is a finding naming X on that line, an empty comment is its "flag
//     'mtu' requires valid value", and a comment's mtu=2 on an IP group is its "invalid
//     mtu (2)".
func TestLabOpenSMLogs(t *testing.T) {
	needLab(t)
	net, err := filepath.Abs(filepath.Join("testdata", "lab", "net"))
	if err != nil {
		t.Fatal(err)
	}
	l := startLab(t, net)
	before := map[check.GUID][]check.PKey{}
	dupRE := regexp.MustCompile(`Duplicated partition definition: '([^']*)' \((0x[0-9a-f]+)\) prev name '([^']*)'`)
	flagRE := regexp.MustCompile(`PARSE WARN: line (\d+): unrecognized mgroup flag '([^']*)' - ignored`)
	mtuRE := regexp.MustCompile(`PARSE WARN: line (\d+): flag 'mtu' requires valid value`)
	ipRE := regexp.MustCompile(`IP MC group \(([0-9a-f:]+)\) specified with invalid mtu \((\d+)\)`)
	for _, name := range []string{"split", "reused", "mgidcomments"} {
		t.Run(name, func(t *testing.T) {
			path, err := filepath.Abs(filepath.Join("testdata", "lab", name+".conf"))
			if err != nil {
				t.Fatal(err)
			}
			log, err := opensmArgs(t, l, path, "-V")
			if err != nil {
				t.Fatal(err)
			}
			c := loadLabConfig(t, name)
			fs := Lint(c, LintOptions{TableSize: 64})
			at := func(rule string, line int, text string) bool {
				for _, f := range fs {
					if f.Rule == rule && f.Pos.Line == line && strings.Contains(f.Message, text) {
						return true
					}
				}
				return false
			}
			dups := 0
			for _, m := range dupRE.FindAllStringSubmatch(log, -1) {
				dups++
				key, _ := strconv.ParseUint(m[2], 0, 16)
				k := check.PartitionKey(key)
				warned := slices.ContainsFunc(fs, func(f check.Finding) bool {
					return f.Rule == "duplicate-key" && strings.Contains(f.Message, "key "+k.String()+" ")
				})
				if again := m[1] == m[3]; again == warned {
					t.Errorf("OpenSM logs %q: duplicate-key warning %v, want %v", m[0], warned, !again)
				}
			}
			if name != "mgidcomments" && dups == 0 {
				t.Errorf("OpenSM logged no duplicated definition:\n%s", grepLog(log))
			}
			// The split itself draws nothing. The one finding is the documented
			// YetAnotherOne's: `ALL=limited` after `SELF=full` makes every port, the
			// SM's too, a limited member of 0x0300 (the tables below show it), so
			// nobody can talk in it.
			if name == "split" && (len(fs) != 1 || fs[0].Rule != "no-full-member" || fs[0].Pos.Line != 10) {
				t.Errorf("the documented split draws findings other than no-full-member at line 10: %v", fs)
			}
			logged := 0
			for _, m := range flagRE.FindAllStringSubmatch(log, -1) {
				logged++
				line, _ := strconv.Atoi(m[1])
				if !at("mgid-comment", line, fmt.Sprintf("unrecognized mgroup flag '%s'", m[2])) && !at("mgid-swallows", line, m[2]) {
					t.Errorf("OpenSM logs %q: no finding on line %d names it", m[0], line)
				}
			}
			for _, m := range mtuRE.FindAllStringSubmatch(log, -1) {
				logged++
				line, _ := strconv.Atoi(m[1])
				if !at("mgid-comment", line, "mtu without a value") {
					t.Errorf("OpenSM logs %q: no finding on line %d says so", m[0], line)
				}
			}
			for _, m := range ipRE.FindAllStringSubmatch(log, -1) {
				logged++
				found := slices.ContainsFunc(fs, func(f check.Finding) bool {
					return f.Rule == "mgid-mtu" && strings.Contains(f.Message, m[1]+" has mtu "+m[2])
				})
				if !found {
					t.Errorf("OpenSM logs %q: no mgid-mtu finding", m[0])
				}
			}
			comments := 0
			for _, f := range fs {
				if f.Rule == "mgid-comment" {
					comments++
				}
			}
			// Each comment finding is one of OpenSM's log lines (a flag it sets is
			// logged only when it makes an IP group invalid: one here).
			if name == "mgidcomments" && (comments == 0 || logged != comments) {
				t.Errorf("%d mgid-comment findings, %d log lines about comments:\n%s", comments, logged, grepLog(log))
			}
			m := NewModel(c, labFabric, Options{SMGUID: labSM, TableSize: 64, Before: before})
			before = map[check.GUID][]check.PKey{}
			for _, dr := range append(labHCAs, labSwitch) {
				g := portGUID(t, l, dr)
				table := pkeyTable(t, l, dr)
				before[g] = table
				if got, want := fmt.Sprint(table), slotString(m.Slots(g)); got != want {
					t.Errorf("port %s: model %s, OpenSM %s", g, want, got)
				}
			}
		})
	}
}
