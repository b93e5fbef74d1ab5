package main

import (
	"regexp"
	"strings"
	"testing"
)

// plainHeader is a plain table's header: upper-case column names, two spaces apart.
var plainHeader = regexp.MustCompile(`^[A-Z][A-Z_]*(  +[A-Z][A-Z_]*)*$`)

// checkPlainTable fails unless lines are a plain table as the README promises: a
// header line, then one record per line with as many whitespace-separated cells as
// the header has columns (no spaces inside a cell, "-" for an empty one). A table
// whose last column is free text (decode's NOTES) has at least that many.
func checkPlainTable(t *testing.T, what string, lines []string) {
	t.Helper()
	if len(lines) < 2 {
		t.Errorf("%s: no header and record:\n%s", what, strings.Join(lines, "\n"))
		return
	}
	if !plainHeader.MatchString(lines[0]) {
		t.Errorf("%s: first line is not a header: %q", what, lines[0])
		return
	}
	cols := len(strings.Fields(lines[0]))
	freeLast := strings.HasSuffix(lines[0], "  NOTES")
	for _, l := range lines[1:] {
		if n := len(strings.Fields(l)); n != cols && !(freeLast && n > cols) {
			t.Errorf("%s: %d cells, the header has %d: %q", what, n, cols, l)
		}
	}
}

// TestPlainTables: what the README's "Output formats" says of -o plain holds, on the
// demo host, the fixtures and a saved sweep: the commands printing one plain table
// print exactly that; pkeys --find prints the index alone for one port and a table
// for several; can-talk a verdict line, reasons and a table; job a table first.
func TestPlainTables(t *testing.T) {
	const fabricFile = "testdata/fabric/small.json"
	for _, args := range [][]string{
		{"--demo", "devices"},
		{"--sysfs", mlx5, "devices"},
		{"--demo", "pkeys"},
		{"--demo", "pkeys", "--all"},
		{"--sysfs", mlx5, "pkeys", "--all"},
		{"--sysfs", "../../testdata/sysfs/cantalk", "pkeys", "--find", "0x0002"},
		{"--demo", "pkeys", "--find", "0x7fff"},
		{"decode", "pkey", "0x8001", "0", "7fff", "80:02"},
		{"decode", "qkey", "0x80010000", "b1b", "0x11"},
		{"fabric", "discover", "--fabric-file", fabricFile},
		{"fabric", "pkeys", "--fabric-file", fabricFile},
		{"fabric", "pkeys", "--fabric-file", fabricFile, "--key", "0x0002"},
	} {
		args = append(args, "-o", "plain")
		r := runIbkey(t, false, nil, args...)
		want := 0
		if args[1] == mlx5 && args[2] != "pkeys" || args[1] == mlx5 && args[3] == "--all" {
			want = 4 // the fixture's entry mlx5_1/1[3] is not read
		}
		if r.code != want {
			t.Errorf("%v: exit %d, want %d: %s", args, r.code, want, r.stderr)
			continue
		}
		checkPlainTable(t, strings.Join(args, " "), strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n"))
	}

	// pkeys --find on one port: the index alone.
	r := runIbkey(t, false, nil, "--demo", "pkeys", "mlx5_0/1", "--find", "0x0003", "-o", "plain")
	if r.code != 0 || r.stdout != "3\n" {
		t.Errorf("pkeys --find on one port: exit %d, %q; want the index alone", r.code, r.stdout)
	}

	// can-talk: the verdict line, indented reasons, an empty line, the legend, a table.
	verdict := regexp.MustCompile(`^(YES|NO|ONE-WAY|UNKNOWN)( \([A-Z ]+\))?: `)
	for _, ab := range [][2]string{{"mlx5_0/1", "mlx5_1/1"}, {"mlx5_1/1", "0x0002"}, {"mlx5_0/1", "mlx5_2/1"}} {
		r := runIbkey(t, false, nil, "--demo", "can-talk", ab[0], ab[1], "-o", "plain")
		what := "can-talk " + ab[0] + " " + ab[1]
		lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
		if !verdict.MatchString(lines[0]) {
			t.Errorf("%s: first line is not the verdict: %q", what, lines[0])
			continue
		}
		i := 1
		for i < len(lines) && strings.HasPrefix(lines[i], "  ") {
			i++
		}
		if i+2 >= len(lines) || lines[i] != "" || !strings.HasPrefix(lines[i+1], "Shared partitions (") {
			t.Errorf("%s: no empty line and legend after the reasons:\n%s", what, r.stdout)
			continue
		}
		if strings.HasSuffix(lines[i+1], " none") {
			continue
		}
		checkPlainTable(t, what, lines[i+2:])
	}

	// watch counters: no header, one line per port per sample: TIME DEV/PORT STATE
	// NAME=VALUE..., no spaces inside a field.
	counterLine := regexp.MustCompile(`^\d{4}-\d\d-\d\dT[0-9:.]+Z \S+/\d+ [A-Z_]+( [A-Za-z0-9_]+=\S+)+$`)
	r = runIbkey(t, false, nil, "--demo", "watch", "counters", "--count", "2", "--interval", "10ms", "-o", "plain")
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if r.code != 4 || len(lines) != 8 { // 4: the demo's PortInfo counters are not read
		t.Errorf("watch counters: exit %d, %d lines; want 2 samples of 4 ports:\n%s", r.code, len(lines), r.stdout)
	}
	for _, l := range lines {
		if !counterLine.MatchString(l) {
			t.Errorf("watch counters line: %q", l)
		}
	}

	// job: the table of ports first, up to the first empty line.
	r = runIbkey(t, false, nil, "--demo", "job", "NCCL_IB_PKEY=1", "UCX_IB_PKEY=0x0002", "-o", "plain")
	table, _, _ := strings.Cut(r.stdout, "\n\n")
	checkPlainTable(t, "job", strings.Split(table, "\n"))
}
