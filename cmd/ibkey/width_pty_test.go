//go:build linux

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/ibkey/ibkey/internal/ptytest"
)

// TestTerminalWidth runs commands on a terminal of 80x24 and 200x50, as a user would:
// at 80 columns no line of the table output is wider than the terminal (tables leave
// out their least useful columns and say so, explanations wrap between words); at 200
// columns the same tables are whole. Plain output on the same terminal is never
// wrapped.
func TestTerminalWidth(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "ibkey")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	run := func(t *testing.T, cols, rows int, args ...string) []string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env = []string{"NO_COLOR=1", "PATH=/usr/bin:/bin"}
		s, err := ptytest.Start(cmd, cols, rows)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if err := s.Wait(time.Minute); err != nil {
			t.Fatal(err)
		}
		return strings.Split(strings.ReplaceAll(string(s.Output()), "\r\n", "\n"), "\n")
	}
	widest := func(lines []string) (int, string) {
		w, line := 0, ""
		for _, l := range lines {
			if lw := ansi.StringWidth(l); lw > w {
				w, line = lw, l
			}
		}
		return w, line
	}
	for _, args := range [][]string{
		{"--demo", "devices"},
		{"--demo", "can-talk", "mlx5_0/1", "mlx5_1/1"},
		{"decode", "qkey", "0x80010000"},
		{"partitions", "check", "../../testdata/partitions/mistakes.conf"},
		{"partitions", "show", "../../testdata/partitions/cluster.conf"},
		{"partitions", "matrix", "../../testdata/partitions/cluster.conf", "--sm-guid", "0x0002c90300001001"},
		{"fabric", "pkeys", "--fabric-file", "testdata/fabric/small.json"},
		{"--demo", "job", "--want", "0x8001"},
		{"--demo", "watch", "counters", "--once", "--all-counters"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			lines := run(t, 80, 24, args...)
			if w, l := widest(lines); w > 80 {
				t.Errorf("80x24: a line is %d columns:\n%s\n---\n%s", w, l, strings.Join(lines, "\n"))
			}
			wide := run(t, 200, 50, args...)
			if strings.Contains(strings.Join(wide, "\n"), "left out to fit") {
				t.Errorf("200x50: columns left out:\n%s", strings.Join(wide, "\n"))
			}
		})
	}
	t.Run("devices at 80 and 200", func(t *testing.T) {
		narrow := strings.Join(run(t, 80, 24, "--demo", "devices"), "\n")
		if !strings.Contains(narrow, "(PHYS, SM_LID, LINK left out to fit 80 columns; -o plain shows every column)") {
			t.Errorf("80x24: the columns left out are not named:\n%s", narrow)
		}
		wide := strings.Join(run(t, 200, 50, "--demo", "devices"), "\n")
		for _, h := range []string{"PHYS", "SM_LID", "LINK", "100G 4X EDR"} {
			if !strings.Contains(wide, h) {
				t.Errorf("200x50: %q missing:\n%s", h, wide)
			}
		}
	})
	// pkeys laid its tables out for 80 columns whatever the terminal (it rendered
	// into a buffer), and a narrower one broke their rows: they fit it now, leaving
	// columns out as every table does.
	t.Run("pkeys fits 60 columns", func(t *testing.T) {
		lines := run(t, 60, 24, "--demo", "pkeys")
		out := strings.Join(lines, "\n")
		if w, l := widest(lines); w > 60 || !strings.Contains(out, "left out to fit 60 columns") {
			t.Errorf("60x24: widest line %d columns (%s):\n%s", w, l, out)
		}
	})
	// job's rows did not fit 80 columns whole and came out as plain records wrapped
	// as prose, two lines a row: a table leaves columns out instead.
	t.Run("job is a table at 80", func(t *testing.T) {
		// allow_ib: Open MPI's openib row is resolved too (it is not applicable without).
		narrow := strings.Join(run(t, 80, 24, "--demo", "job", "--want", "0x8001", "OMPI_MCA_btl_openib_allow_ib=1"), "\n")
		for _, want := range []string{"│ LIBRARY", "(HOST, MEMBER, INDEX left out to fit 80 columns; -o plain shows every column)"} {
			if !strings.Contains(narrow, want) {
				t.Errorf("80x24: %q missing:\n%s", want, narrow)
			}
		}
	})
	// Switches describe themselves as one word ("MF0;ib-leaf-r12-u40:MQM8790/U1"),
	// which cannot wrap: with such names in NODE and PEER, discover's rows did not
	// fit 80 columns and came out as plain records the terminal wrapped.
	t.Run("fabric tables with switch names at 80", func(t *testing.T) {
		file := longNamesFabric(t, map[string]string{
			"HcaA": "gpu-node-r12u07 mlx5_0", "HcaB": "gpu-node-r12u09 HCA-1",
			"HcaC": "cpu-login-01 mlx5_2", "HcaD": "storage-oss-r03u22 mlx5_1",
			"Switch1": "MF0;ib-leaf-r12-u40:MQM8790/U1", "Switch2": "MF0;ib-spine-r1-u38:MQM9790/U1",
		})
		for _, sub := range []string{"discover", "pkeys"} {
			lines := run(t, 80, 24, "fabric", sub, "--fabric-file", file)
			out := strings.Join(lines, "\n")
			var rows []string // the summary names the long temporary file: not a row
			for _, l := range lines {
				if !strings.Contains(l, "fabric.json") {
					rows = append(rows, l)
				}
			}
			if w, l := widest(rows); w > 80 || !strings.Contains(out, "│ NODE") {
				t.Errorf("fabric %s: not a table of 80 columns (widest %d: %s):\n%s", sub, w, l, out)
			}
		}
	})
	// watch counters' lines on a terminal (--once, --count) are a table a sample, as
	// wide as the terminal: they were records of up to 400 columns.
	t.Run("watch counters lines fit the terminal", func(t *testing.T) {
		wide := run(t, 200, 50, "--demo", "watch", "counters", "--once")
		if w, _ := widest(wide); w > 200 || !strings.Contains(strings.Join(wide, "\n"), "│ n/a(mlx5 does not count P_Key violations on RoCE: ibv_query_port reports 0) │") {
			t.Errorf("200x50: the table does not use the terminal's width:\n%s", strings.Join(wide, "\n"))
		}
	})
	t.Run("decode never cuts a word", func(t *testing.T) {
		out := strings.Join(run(t, 80, 24, "decode", "qkey", "0x80010000"), "\n")
		words := strings.Fields(out)
		plain := strings.Fields(strings.Join(run(t, 200, 50, "decode", "qkey", "0x80010000"), "\n"))
		if strings.Join(words, " ") != strings.Join(plain, " ") {
			t.Errorf("the words at 80 columns are not those at 200:\n%s", out)
		}
	})
	t.Run("plain is not wrapped", func(t *testing.T) {
		lines := run(t, 80, 24, "decode", "qkey", "0x80010000", "-o", "plain")
		if w, _ := widest(lines); w <= 80 {
			t.Errorf("plain output was fitted to the terminal (widest %d):\n%s", w, strings.Join(lines, "\n"))
		}
	})
}

// longNamesFabric is testdata/fabric/small.json with its nodes' descriptions renamed
// (old to new), written to a temporary file.
func longNamesFabric(t *testing.T, names map[string]string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/fabric/small.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, n := range doc["nodes"].([]any) {
		node := n.(map[string]any)
		if to, ok := names[node["description"].(string)]; ok {
			node["description"] = to
		}
	}
	if b, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "fabric.json")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}
