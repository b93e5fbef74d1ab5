package partitions

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var columnName = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// checkPlain checks the plain-output contract that show and matrix state in their
// help: sections separated by one blank line; each is one or more title lines (the
// first not indented, notes after it indented by two spaces), then, for a table, a
// header line of upper-case column names and one record per line with exactly as
// many space-separated fields as the header (a space inside a field is written _).
func checkPlain(out string) []string {
	var bad []string
	for si, sec := range strings.Split(strings.TrimSuffix(out, "\n"), "\n\n") {
		lines := strings.Split(sec, "\n")
		if lines[0] == "" || strings.HasPrefix(lines[0], " ") {
			bad = append(bad, "section "+strconv.Itoa(si)+" does not start with a title: "+lines[0])
			continue
		}
		i := 1
		for i < len(lines) && strings.HasPrefix(lines[i], "  ") {
			i++
		}
		if i == len(lines) {
			continue // a section of titles only
		}
		header := strings.Fields(lines[i])
		for _, h := range header {
			if !columnName.MatchString(h) {
				bad = append(bad, "section "+strconv.Itoa(si)+": not a header line: "+lines[i])
				break
			}
		}
		for _, l := range lines[i+1:] {
			if strings.HasPrefix(l, " ") || len(strings.Fields(l)) != len(header) {
				bad = append(bad, "section "+strconv.Itoa(si)+": record with "+strconv.Itoa(len(strings.Fields(l)))+" fields under "+strconv.Itoa(len(header))+" columns: "+l)
			}
		}
	}
	return bad
}

// TestPlainContract: every plain golden of show and matrix (stdout not a terminal, no
// -o, or -o plain) keeps the contract of checkPlain, and so do the summary and the
// grid of matrix run now.
func TestPlainContract(t *testing.T) {
	files, err := filepath.Glob("testdata/TestPartitions/*.golden")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		first, rest, _ := strings.Cut(string(b), "\n")
		stdout, _, _ := strings.Cut(rest, "--- stderr\n")
		args := strings.Fields(first)
		if len(args) < 4 || (args[3] != "show" && args[3] != "matrix") || strings.Contains(first, " -o ") && !strings.Contains(first, "-o plain") || stdout == "" {
			continue
		}
		n++
		for _, msg := range checkPlain(stdout) {
			t.Errorf("%s: %s", file, msg)
		}
	}
	for _, args := range [][]string{
		{"partitions", "matrix", clusterConf, "--summary"},
		{"partitions", "matrix", mistakesConf, "--summary"},
		{"partitions", "matrix", clusterConf, "-o", "plain"},
	} {
		r := runIbkey(t, false, nil, args...)
		n++
		for _, msg := range checkPlain(r.Stdout) {
			t.Errorf("%v: %s", args, msg)
		}
	}
	if n < 5 {
		t.Fatalf("only %d plain outputs checked", n)
	}
}
