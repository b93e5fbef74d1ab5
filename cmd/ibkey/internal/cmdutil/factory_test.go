package cmdutil

import (
	"testing"
	"time"
)

// TestDecide: -o wins, else table on a terminal; colour needs a terminal and neither
// --no-color nor NO_COLOR; a bad -o is a usage error naming the accepted values.
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
