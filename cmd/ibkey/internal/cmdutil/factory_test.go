package cmdutil

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// TestDecide: -o wins, else table on a terminal; colour needs a terminal and neither
// --no-color, NO_COLOR nor TERM=dumb; a bad -o is a usage error naming the accepted values.
func TestDecide(t *testing.T) {
	cases := []struct {
		output           string
		outTTY, errTTY   bool
		noColor          bool
		env              map[string]string
		format           Format
		colorOut, colorE bool
	}{
		{"", false, false, false, nil, FormatPlain, false, false},
		{"", true, true, false, nil, FormatTable, true, true},
		{"", true, false, false, nil, FormatTable, true, false},
		{"json", true, true, false, nil, FormatJSON, true, true},
		{"plain", true, true, true, nil, FormatPlain, false, false},
		{"table", false, true, false, map[string]string{"NO_COLOR": "1"}, FormatTable, false, false},
		{"", true, true, false, map[string]string{"TERM": "dumb"}, FormatTable, false, false},
		{"", true, true, false, map[string]string{"TERM": "xterm-256color"}, FormatTable, true, true},
	}
	for _, tc := range cases {
		f := NewFactory(&IOStreams{OutTTY: tc.outTTY, ErrTTY: tc.errTTY}, func(k string) string { return tc.env[k] }, time.Now)
		f.Output, f.NoColor = tc.output, tc.noColor
		if err := f.Decide(); err != nil {
			t.Fatal(err)
		}
		got, err := f.Format()
		if err != nil || got != tc.format || f.ColorOut() != tc.colorOut || f.ColorErr() != tc.colorE {
			t.Errorf("%+v: format %v (%v), colour out %v err %v", tc, got, err, f.ColorOut(), f.ColorErr())
		}
	}
	f := NewFactory(&IOStreams{}, func(string) string { return "" }, time.Now)
	f.Output = "yaml"
	if _, err := f.Format(); ExitCode(err) != ExitUsage || err.Error() != `invalid output format "yaml" (accepted: table, plain, json)` {
		t.Errorf("-o yaml: %v", err)
	}
}

// TestInputSanity: a group command given a word that is no subcommand, `help` of no
// command, an empty option value and a duration past its bound are bad input (exit 2),
// never a silent exit 0 (issue 13: `watch junk` printed help and exited 0).
func TestInputSanity(t *testing.T) {
	grp := func(f *Factory) *cobra.Command {
		g := &cobra.Command{Use: "grp"}
		sub := &cobra.Command{Use: "sub", RunE: func(*cobra.Command, []string) error { return nil }}
		sub.Flags().String("find", "", "")
		IntervalVar(sub, new(time.Duration), "interval", time.Second, "")
		plainDurationVarP(sub.Flags(), new(time.Duration), "mad-timeout", "", time.Second, "", "ms")
		(&FabricSweep{}).AddTimeoutFlag(sub, "")
		g.AddCommand(sub)
		return g
	}
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"grp", "junk"}, 2, `ibkey: unknown command "junk" for "ibkey grp" (commands: sub)` + "\n"},
		{[]string{"grp", "sbu"}, 2, `ibkey: unknown command "sbu" for "ibkey grp"; did you mean "sub"? (commands: sub)` + "\n"},
		{[]string{"grp", "sbu", "--find", "x"}, 2, `ibkey: unknown command "sbu" for "ibkey grp"; did you mean "sub"? (commands: sub)` + "\n"},
		{[]string{"grp", "--find", "x"}, 2, `ibkey: unknown flag: --find (see 'ibkey grp --help')`},
		{[]string{"gpr", "sub"}, 2, `ibkey: unknown command "gpr" for "ibkey"; did you mean "grp"? (commands: completion, grp)` + "\n"},
		{[]string{"gpr", "--find", "x"}, 2, `ibkey: unknown command "gpr" for "ibkey"; did you mean "grp"?`},
		{[]string{"help", "junk"}, 2, `help: unknown command "junk"`},
		{[]string{"help", "gpr"}, 2, `help: unknown command "gpr" for "ibkey"; did you mean "grp"?`},
		{[]string{"completion", "junk"}, 2, `unknown command "junk"`},
		{[]string{"grp", "sub", "--find="}, 2, "--find needs a value"},
		{[]string{"grp", "sub", "--interval", "100000h"}, 2, "invalid --interval 100000h: at most 24h"},
		{[]string{"grp", "sub", "--interval", "100000"}, 2, "invalid --interval 100000: at most 24h"}, // as typed, not 27h46m40s
		{[]string{"grp", "sub", "--mad-timeout", "2h"}, 2, "invalid --mad-timeout 2h: at most 1m"},
		{[]string{"grp", "sub", "--mad-timeout", "100000"}, 2, "invalid --mad-timeout 100000: at most 1m"},
		// --timeout bounds a whole command: not positive is bad input whatever the
		// command does with it (sm log accepted --timeout -1s).
		{[]string{"grp", "sub", "--timeout", "-1s"}, 2, "invalid --timeout -1s (accepted: a positive duration, e.g. 30s)"},
		// Named as typed ("0", not "0s"), as --mad-timeout is; a plain number other
		// than 0 still needs its unit.
		{[]string{"grp", "sub", "--timeout", "0"}, 2, "invalid --timeout 0 (accepted: a positive duration, e.g. 30s)"},
		{[]string{"grp", "sub", "--timeout=0ms"}, 2, "invalid --timeout 0ms (accepted: a positive duration, e.g. 30s)"},
		{[]string{"grp", "sub", "--timeout", "30"}, 2, `invalid argument "30" for "--timeout" flag: time: missing unit in duration "30" (accepted: a duration such as 500ms, 5s or 1m30s)`},
		{[]string{"grp", "sub", "--timeout", "10m", "--timeout", "0"}, 2, "invalid --timeout 0 (accepted"},
		{[]string{"grp", "sub", "--timeout", "1s"}, 0, ""},
		{[]string{"grp", "sub", "--interval", "5", "--find", "x"}, 0, ""},
		{[]string{"grp"}, 2, "grp needs a subcommand (commands: sub;"}, // a group alone is a usage mistake (issue 28)
		{[]string{"help", "grp"}, 0, ""},
	} {
		var out, errOut strings.Builder
		streams := &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
		f := NewFactory(streams, func(string) string { return "" }, time.Now)
		root := &cobra.Command{Use: "ibkey"}
		AddRootFlags(root, f)
		root.AddCommand(grp(f))
		code := Execute(context.Background(), root, c.args, streams)
		if code != c.code || !strings.Contains(errOut.String(), c.msg) || strings.Count(errOut.String(), "\n") > 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", c.args, code, errOut.String(), c.code, c.msg)
		}
	}
}

// TestColumns: COLUMNS, a positive number, is the width the output fits, on a pipe
// (-o table | less) as on a terminal, where it wins over the window's size; stderr is
// wrapped to it only on a terminal. It was ignored: a table on a pipe always fit 80.
func TestColumns(t *testing.T) {
	for _, tc := range []struct {
		columns          string
		outTTY, errTTY   bool
		window           int
		wantOut, wantErr int
	}{
		{"", false, false, 0, 80, 0},
		{"200", false, false, 0, 200, 0},
		{"200", false, true, 0, 200, 200},
		{"60", true, true, 100, 60, 60},
		{"", true, true, 100, 100, 100},
		{"x", false, false, 0, 80, 0},
		{"0", true, false, 100, 100, 0},
		{"-5", false, false, 0, 80, 0},
	} {
		s := &IOStreams{Out: io.Discard, ErrOut: io.Discard, OutTTY: tc.outTTY, ErrTTY: tc.errTTY}
		if tc.outTTY {
			s.OutWidth = tc.window
		}
		if tc.errTTY && tc.window > 0 {
			s.ErrWidth = tc.window
		}
		f := NewFactory(s, func(k string) string { return map[string]string{"COLUMNS": tc.columns}[k] }, time.Now)
		f.Output = "table"
		if err := f.Decide(); err != nil {
			t.Fatal(err)
		}
		if s.Width() != tc.wantOut || s.ErrWidth != tc.wantErr {
			t.Errorf("COLUMNS=%q tty %v/%v window %d: widths %d/%d, want %d/%d", tc.columns, tc.outTTY, tc.errTTY, tc.window, s.Width(), s.ErrWidth, tc.wantOut, tc.wantErr)
		}
	}
}

// TestHostCharDevs: the host is this machine's own, whose /dev/infiniband tells what a
// library can open (query.Host.Unopenable, MaxPKeys), exactly when it is /sys however
// written, as query.LocalVerbs tells it; never for another tree or the demo host.
func TestHostCharDevs(t *testing.T) {
	for _, tc := range []struct {
		sysfs, env string
		demo       bool
		want       string
	}{
		{"", "", false, "/dev/infiniband"},
		{"/sys", "", false, "/dev/infiniband"},
		{"/sys/", "", false, "/dev/infiniband"},
		{"", "//sys/.", false, "/dev/infiniband"},
		{"testdata/sys", "", false, ""},
		{"/sys-copy", "", false, ""},
		{"", "", true, ""},
	} {
		f := NewFactory(&IOStreams{}, func(k string) string { return map[string]string{"IBKEY_SYSFS": tc.env}[k] }, time.Now)
		f.SysfsDir, f.Demo = tc.sysfs, tc.demo
		if got := f.Host().CharDevs; got != tc.want {
			t.Errorf("--sysfs %q IBKEY_SYSFS %q demo %v: CharDevs %q, want %q", tc.sysfs, tc.env, tc.demo, got, tc.want)
		}
	}
}
