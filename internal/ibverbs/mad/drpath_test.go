package mad

import "testing"

func TestFormatDRPath(t *testing.T) {
	for _, tc := range []struct {
		path []uint8
		want string
	}{
		{nil, "0"},
		{[]uint8{1}, "0,1"},
		{[]uint8{1, 7, 2}, "0,1,7,2"},
		{[]uint8{255, 0, 36}, "0,255,0,36"},
	} {
		if got := FormatDRPath(tc.path); got != tc.want {
			t.Errorf("FormatDRPath(%v) = %q, want %q", tc.path, got, tc.want)
		}
		if got, want := (Address{Directed: true, Path: tc.path}).String(), "DR path "+tc.want; got != want {
			t.Errorf("Address.String() = %q, want %q", got, want)
		}
	}
}
