package query

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseLIDList(t *testing.T) {
	good := map[string][]uint16{
		"3":         {3},
		"0x10":      {16},
		"3,5,9":     {3, 5, 9},
		"3-6":       {3, 4, 5, 6},
		"1,3-5,4,1": {1, 3, 4, 5},
		"49151":     {49151},
		"3 - 5":     {3, 4, 5},
		"0x0010":    {16},
		" 49151 ":   {49151},
	}
	for in, want := range good {
		got, err := ParseLIDList(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ParseLIDList(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "49152", "0xffff", "5-3", "3-", "-3", "a", "3,,4", "1-49151,x", "0xc000", "65535", "-1", "x",
		// One parser with an endpoint's lid= (check.ParseLID): no octal leading 0
		// (infiniband-diags would read 010 as 8), no Go-only 0b, 0o or 1_0.
		"010", "3-010", "0b11", "0o7", "1_0"} {
		if got, err := ParseLIDList(in); err == nil {
			t.Errorf("ParseLIDList(%q) = %v, want an error", in, got)
		} else if !strings.Contains(err.Error(), "accepted:") || strings.Contains(err.Error(), "--lid") {
			t.Errorf("ParseLIDList(%q): %v does not say what is accepted (or names a flag)", in, err)
		}
	}
}
