package check

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestParsePKey(t *testing.T) {
	good := []struct {
		in   string
		want PKey
	}{
		{"0x8001", 0x8001}, {"8001", 0x8001}, {"0X8001", 0x8001}, {"0xFFFF", 0xffff},
		{"ffff", 0xffff}, {"FfFf", 0xffff}, {"0x0000", 0}, {"0", 0}, {"0x8000", 0x8000},
		{"0x7fff", 0x7fff}, {"7FFF", 0x7fff}, {"0x1", 1}, {"0x0001", 1}, {"1", 1},
		{"0x00008001", 0x8001}, // leading zeros are fine while the value fits
		{"80:01", 0x8001}, {"7f:ff", 0x7fff}, {"FF:FF", 0xffff}, {"0:1", 0x0001},
		{"00:00", 0}, {"80:0", 0x8000},
	}
	for _, tc := range good {
		got, err := ParsePKey(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParsePKey(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	bad := []struct{ in, problem string }{
		{"", "empty"}, {"0x", "no hex digits"}, {"0x10000", "larger than 0xffff"},
		{"10000", "larger than 0xffff"}, {"-1", "signs"}, {"+8001", "signs"}, {"0x-1", "signs"},
		{"0x8001 ", "spaces"}, {" 8001", "spaces"}, {"xyz", "not a hex digit"},
		{"0x80g1", "not a hex digit"}, {"8001h", "not a hex digit"}, {"0o17", "not a hex digit"},
		{"80:01:02", "exactly two bytes"}, {"800:01", "more than one byte"}, {":01", "empty byte"},
		{"80:", "empty byte"}, {"8g:01", "not a hex digit"}, {"0x80:01", "more than one byte"},
		{"１２", "not a hex digit"}, {"99999999999999999999", "larger than 0xffff"},
		// Decimal-looking values are read as hex, and the message says so.
		{"32769", "read as hex 0x32769, larger than 0xffff (values are hex: decimal 32769 is 0x8001)"},
		{"99999999999999999999", "read as hex 0x99999999999999999999, larger than 0xffff (values are hex)"},
		{"0x32769", "larger than 0xffff"},
	}
	for _, tc := range bad {
		_, err := ParsePKey(tc.in)
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("ParsePKey(%q): want *ParseError, got %v", tc.in, err)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, tc.problem) || !strings.Contains(msg, PKeyForms) || !strings.Contains(msg, `"`+tc.in+`"`) {
			t.Errorf("ParsePKey(%q) error %q: want it to name the input, say %q and list the forms", tc.in, msg, tc.problem)
		}
		if strings.Contains(msg, "\n") {
			t.Errorf("ParsePKey(%q) error spans lines: %q", tc.in, msg)
		}
	}
}

func TestDecodePKey(t *testing.T) {
	tests := []struct {
		in         PKey
		key        string
		membership string
		valid, def bool
		note       string
	}{
		// Key 0 names no partition: no membership (issue 25: as pkeys --all says).
		{0x0000, "0x0000", "", false, false, "invalid"},
		{0x8000, "0x0000", "", false, false, "invalid"},
		{0x7fff, "0x7fff", "limited", true, true, "limited member of the default partition"},
		{0xffff, "0x7fff", "full", true, true, "the default P_Key"},
		{0x8001, "0x0001", "full", true, false, "full member of partition 0x0001"},
		{0x0001, "0x0001", "limited", true, false, "not to other limited members"},
	}
	for _, tc := range tests {
		d := DecodePKey(tc.in)
		if d.Value != tc.in.String() || d.Key != tc.key || d.Membership != tc.membership || d.Valid != tc.valid || d.Default != tc.def {
			t.Errorf("DecodePKey(%v) = %+v", tc.in, d)
		}
		if !strings.Contains(strings.Join(d.Notes, "\n"), tc.note) {
			t.Errorf("DecodePKey(%v) notes %q: want %q", tc.in, d.Notes, tc.note)
		}
	}
}

func TestPKeyBits(t *testing.T) {
	if PKey(0x8001).Partition() != PKey(0x0001).Partition() || PKey(0x8001).Partition() == PKey(0x8002).Partition() {
		t.Error("Partition is the 15-bit key")
	}
	if PKey(0x7fff).Partition() != PKey(0xffff).Partition() {
		t.Error("0x7fff and 0xffff are both the default partition")
	}
	if PKey(0x0005).WithMembership(Full) != 0x8005 || PKey(0x8005).WithMembership(Limited) != 0x0005 {
		t.Error("WithMembership sets or clears bit 15")
	}
	for _, p := range []PKey{0, 0x8000} {
		if p.Valid() || p.IsDefault() {
			t.Errorf("%v: key 0 is invalid and not default", p)
		}
	}
}

func TestParseQKey(t *testing.T) {
	good := map[string]QKey{"0x80010000": GSIQKey, "80010000": GSIQKey, "b1b": IPoIBQKey,
		"0x00000B1B": IPoIBQKey, "0": 0, "ffffffff": 0xffffffff, "0x0000000080000000": 0x80000000}
	for in, want := range good {
		if got, err := ParseQKey(in); err != nil || got != want {
			t.Errorf("ParseQKey(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0x", "0x100000000", "-1", "+1", "0x8001:0000", "1 2", "qkey", "12345678901"} {
		_, err := ParseQKey(in)
		var pe *ParseError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), QKeyForms) {
			t.Errorf("ParseQKey(%q): want a ParseError listing the forms, got %v", in, err)
		}
	}
}

func TestDecodeQKey(t *testing.T) {
	tests := []struct {
		in         QKey
		controlled bool
		rng        QKeyRange
		wellKnown  string
	}{
		{0, false, QKeyUnprivileged, ""},
		{0x00000b1b, false, QKeyUnprivileged, "ipoib"},
		{0x7fffffff, false, QKeyUnprivileged, ""},
		{0x80000000, true, QKeyGeneralUse, ""},
		{0x8000ffff, true, QKeyGeneralUse, ""},
		{0x80010000, true, QKeyReserved, "gsi"},
		{0x8fffffff, true, QKeyReserved, ""},
		{0x90000000, true, QKeyControlled, ""},
		{0xffffffff, true, QKeyControlled, ""},
	}
	for _, tc := range tests {
		d := DecodeQKey(tc.in)
		if d.Controlled != tc.controlled || d.Range != tc.rng || d.WellKnown != tc.wellKnown || d.Value != tc.in.String() {
			t.Errorf("DecodeQKey(%v) = %+v", tc.in, d)
		}
		if tc.controlled != strings.Contains(strings.Join(d.Notes, " "), "privileged-qkey") {
			t.Errorf("DecodeQKey(%v): the privileged-qkey note belongs to controlled keys only", tc.in)
		}
	}
}

func FuzzParsePKey(f *testing.F) {
	for _, s := range []string{"0x8001", "8001", "80:01", "0xffff", "", "0x10000", "-1", "0:0", "ff:ff:ff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePKey(s)
		if err != nil {
			if strings.Contains(err.Error(), "\n") && !strings.Contains(s, "\n") {
				t.Fatalf("multi-line error for %q", s)
			}
			return
		}
		// Whatever parses prints in the canonical form and parses back to itself.
		back, err := ParsePKey(p.String())
		if err != nil || back != p {
			t.Fatalf("%q -> %v -> %v, %v", s, p, back, err)
		}
		_ = DecodePKey(p)
	})
}

func FuzzParseQKey(f *testing.F) {
	for _, s := range []string{"0x80010000", "b1b", "", "0x100000000", "ffffffff", "0x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := ParseQKey(s)
		if err != nil {
			return
		}
		if back, err := ParseQKey(q.String()); err != nil || back != q {
			t.Fatalf("%q -> %v -> %v, %v", s, q, back, err)
		}
		_ = DecodeQKey(q)
	})
}

func TestNodeTypeOf(t *testing.T) {
	for _, tc := range []struct {
		num  uint8
		want NodeType
		ok   bool
		word string
	}{
		{0, "", false, "node"},
		{1, NodeCA, true, "CA"},
		{2, NodeSwitch, true, "switch"},
		{3, NodeRouter, true, "router"},
		{4, "", false, "node"},
	} {
		got, ok := NodeTypeOf(tc.num)
		if got != tc.want || ok != tc.ok || got.Word() != tc.word {
			t.Errorf("NodeTypeOf(%d) = %q, %v (word %q), want %q, %v (%q)", tc.num, got, ok, got.Word(), tc.want, tc.ok, tc.word)
		}
	}
}

func TestPartitionKey(t *testing.T) {
	for _, tc := range []struct {
		p    PKey
		want string
	}{
		{0xffff, "0x7fff"}, {0x7fff, "0x7fff"}, {0x8001, "0x0001"}, {0x0000, "0x0000"}, {0x8abc, "0x0abc"},
	} {
		k := tc.p.Partition()
		if k.String() != tc.want || uint16(k) != uint16(tc.p&KeyMask) {
			t.Errorf("%s: Partition %s (%#x); want %s", tc.p, k, uint16(k), tc.want)
		}
		if full := k.PKey(Full); full.Partition() != k || !full.IsFull() {
			t.Errorf("%s.PKey(Full) = %s", k, full)
		}
	}
	for v := 0; v <= 0xffff; v++ {
		if got, want := PKey(v).String(), fmt.Sprintf("0x%04x", v); got != want {
			t.Fatalf("PKey(%#x).String() = %s, want %s", v, got, want)
		}
	}
}
