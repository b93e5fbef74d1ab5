package ibverbs

import (
	"testing"
)

func TestParseEnum(t *testing.T) {
	good := map[string]Enum{
		"4: ACTIVE": {4, "ACTIVE"}, "1: DOWN": {1, "DOWN"}, "7: Phy Test": {7, "Phy Test"},
		"5: LinkUp": {5, "LinkUp"}, "1: CA": {1, "CA"}, "2: switch": {2, "switch"}, "4:RNIC": {4, "RNIC"},
	}
	for in, want := range good {
		if got, err := ParseEnum(in); err != nil || got != want {
			t.Errorf("ParseEnum(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "ACTIVE", "4", "4:", "x: ACTIVE", "-1: DOWN", "300: BIG", ": ACTIVE"} {
		if _, err := ParseEnum(in); err == nil {
			t.Errorf("ParseEnum(%q): want an error", in)
		}
	}
}

func TestParseGUID(t *testing.T) {
	g, err := ParseGUID("0002:c903:00a1:b2c4")
	if err != nil || g != 0x0002c90300a1b2c4 || g.String() != "0x0002c90300a1b2c4" {
		t.Errorf("ParseGUID = %v, %v", g, err)
	}
	for _, in := range []string{"", "0002:c903:00a1", "0002:c903:00a1:b2c4:0000", "002:c903:00a1:b2c4",
		"0002:c903:00a1:b2cg", "0x0002c90300a1b2c4", "0002:c903:00a1:+2c4"} {
		if _, err := ParseGUID(in); err == nil {
			t.Errorf("ParseGUID(%q): want an error", in)
		}
	}
}

func TestParseGID(t *testing.T) {
	in := "fe80:0000:0000:0000:0002:c903:00a1:b2c4"
	g, err := ParseGID(in)
	if err != nil || g.String() != in || g.PortGUID() != 0x0002c90300a1b2c4 {
		t.Errorf("ParseGID = %v, %v", g, err)
	}
	for _, in := range []string{"", "fe80::2:c903:a1:b2c4", "fe80:0000:0000:0000:0002:c903:00a1", "fe80:0000:0000:0000:0002:c903:00a1:b2cz"} {
		if _, err := ParseGID(in); err == nil {
			t.Errorf("ParseGID(%q): want an error", in)
		}
	}
}

func TestParseHWAddr(t *testing.T) {
	b, err := ParseHWAddr("00:00:10:49:fe:80:00:00:00:00:00:00:00:02:c9:03:00:a1:b2:c1")
	if err != nil || len(b) != 20 || b[4] != 0xfe || b[19] != 0xc1 {
		t.Errorf("ParseHWAddr = %x, %v", b, err)
	}
	for _, in := range []string{"", "00::10", "000:10", "zz:10"} {
		if _, err := ParseHWAddr(in); err == nil {
			t.Errorf("ParseHWAddr(%q): want an error", in)
		}
	}
}

func TestParseHexDec(t *testing.T) {
	hex := []struct {
		in   string
		bits int
		want uint64
		ok   bool
	}{
		{"0xffff", 16, 0xffff, true}, {"0x1a", 16, 0x1a, true}, {"ffff", 16, 0xffff, true},
		{"0x10000", 16, 0, false}, {"0x", 16, 0, false}, {"", 16, 0, false}, {"0x-1", 16, 0, false},
		{"0x2651e848", 32, 0x2651e848, true}, {"0xzz", 16, 0, false}, {"0x_1", 16, 0, false},
	}
	for _, tc := range hex {
		got, err := ParseHex(tc.in, tc.bits)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseHex(%q, %d) = %v, %v", tc.in, tc.bits, got, err)
		}
	}
	dec := []struct {
		in   string
		bits int
		want uint64
		ok   bool
	}{
		{"0", 8, 0, true}, {"255", 8, 255, true}, {"256", 8, 0, false}, {"N/A (no PMA)", 64, 0, false},
		{"-1", 8, 0, false}, {"", 8, 0, false}, {"18446744073709551615", 64, 1<<64 - 1, true}, {"1_0", 8, 0, false},
	}
	for _, tc := range dec {
		got, err := ParseDec(tc.in, tc.bits)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseDec(%q, %d) = %v, %v", tc.in, tc.bits, got, err)
		}
	}
}

func TestParseRate(t *testing.T) {
	tests := []struct {
		in    string
		gbps  float64
		width string
		speed string
	}{
		{"100 Gb/sec (4X EDR)", 100, "4X", "EDR"},
		{"2.5 Gb/sec (1X SDR)", 2.5, "1X", "SDR"},
		{"10 Gb/sec (4X)", 10, "4X", ""}, // old kernels: no speed name
		{"200 Gb/sec (4X HDR)", 200, "4X", "HDR"},
		{"40 Gb/sec", 40, "", ""},
	}
	for _, tc := range tests {
		r, err := ParseRate(tc.in)
		if err != nil || r.Gbps != tc.gbps || r.Width != tc.width || r.Speed != tc.speed || r.Text != tc.in {
			t.Errorf("ParseRate(%q) = %+v, %v", tc.in, r, err)
		}
	}
	for _, in := range []string{"", "fast", "x Gb/sec (4X)", "100 Gb/sec 4X EDR", "100 Gb/sec ()", "100 Gb/sec (4X EDR extra)", "-1 Gb/sec"} {
		if _, err := ParseRate(in); err == nil {
			t.Errorf("ParseRate(%q): want an error", in)
		}
	}
}

func TestTrimValue(t *testing.T) {
	for in, want := range map[string]string{"0xffff\n": "0xffff", "0xffff": "0xffff", "4: ACTIVE\n": "4: ACTIVE", "x \n": "x", "\n": ""} {
		if got := trimValue([]byte(in)); got != want {
			t.Errorf("trimValue(%q) = %q", in, got)
		}
	}
}

// FuzzSysfsValues feeds one string to every sysfs value parser: none may panic, and
// whatever parses must print back to something that parses to the same value.
func FuzzSysfsValues(f *testing.F) {
	for _, s := range []string{"4: ACTIVE", "7: Phy Test", "0002:c903:00a1:b2c4",
		"fe80:0000:0000:0000:0002:c903:00a1:b2c4", "100 Gb/sec (4X EDR)", "10 Gb/sec (4X)",
		"0xffff", "255", "N/A (no PMA)", "00:00:10:49:fe:80", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if g, err := ParseGUID(s); err == nil {
			if back, err := ParseGUID(guidSysfs(g)); err != nil || back != g {
				t.Fatalf("GUID %q round trip: %v %v", s, back, err)
			}
		}
		if g, err := ParseGID(s); err == nil {
			if back, err := ParseGID(g.String()); err != nil || back != g {
				t.Fatalf("GID %q round trip: %v %v", s, back, err)
			}
		}
		_, _ = ParseEnum(s)
		_, _ = ParseRate(s)
		_, _ = ParseHex(s, 16)
		_, _ = ParseDec(s, 64)
		_, _ = ParseHWAddr(s)
	})
}

func guidSysfs(g GUID) string {
	s := g.String()[2:]
	return s[0:4] + ":" + s[4:8] + ":" + s[8:12] + ":" + s[12:16]
}

func TestTableIndex(t *testing.T) {
	for name, want := range map[string]int{"0": 0, "7": 7, "127": 127, "65535": 65535} {
		if n, ok := tableIndex(name); !ok || n != want {
			t.Errorf("tableIndex(%q) = %d, %v; want %d", name, n, ok, want)
		}
	}
	for _, name := range []string{"", "00", "01", "+1", "-1", "-0", "1a", " 1", "65536", "123456", "99999999999999999999", "0x1"} {
		if n, ok := tableIndex(name); ok {
			t.Errorf("tableIndex(%q) = %d: an entry", name, n)
		}
	}
	g, _ := ParseGID("fe80:0000:0000:0000:0002:c903:00a1:b2c4")
	if g.PortGUID() != 0x0002c90300a1b2c4 {
		t.Errorf("PortGUID %s", g.PortGUID())
	}
}
