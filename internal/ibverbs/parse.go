package ibverbs

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ibkey/ibkey/internal/textsafe"
)

// Small pure parsers for the values the kernel writes in sysfs (drivers/infiniband/core/sysfs.c;
// Documentation/ABI/stable/sysfs-class-infiniband).
// Each takes the file's content with or without the trailing newline: the kernel
// always writes one, simulators may not.

func trimValue(b []byte) string {
	// Every trailing white space goes, as prometheus/procfs (util.SysReadFile) and
	// node_exporter do: the kernel writes one newline, but saved trees and drivers
	// have been seen with more (`InfiniBand\n\n`).
	s := strings.TrimRightFunc(string(b), unicode.IsSpace)
	// Every value enters ibkey's model terminal-safe: node_desc is set by anyone who
	// can send a SubnSet(NodeDescription) or write the file, and a --sysfs tree is
	// whatever the user was given.
	return textsafe.String(s)
}

// maxQuoted is how much of a value an error message quotes: a garbage file can hold
// a 64 KiB line, and its head says what it is.
const maxQuoted = 40

// quote quotes s for an error message, only its first maxQuoted bytes (cut at a rune
// boundary) when it is longer.
func quote(s string) string {
	if len(s) <= maxQuoted {
		return strconv.Quote(s)
	}
	n := maxQuoted
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return strconv.Quote(s[:n]) + "... (truncated)"
}

// Enum is a numbered state as sysfs prints it: `4: ACTIVE`, `7: Phy Test`, `1: CA`.
type Enum struct {
	Num  int
	Name string
}

func (e Enum) String() string { return e.Name }

// ParseEnum parses `N: NAME`. The name may contain spaces (`7: Phy Test`).
func ParseEnum(s string) (Enum, error) {
	num, name, ok := strings.Cut(s, ":")
	if !ok {
		return Enum{}, fmt.Errorf("%s: want \"N: NAME\"", quote(s))
	}
	n, err := strconv.ParseUint(strings.TrimSpace(num), 10, 8)
	if err != nil {
		return Enum{}, fmt.Errorf("%s: %s is not a state number", quote(s), quote(num))
	}
	name = strings.TrimSpace(name)
	if name == "" {
		return Enum{}, fmt.Errorf("%s: empty name", quote(s))
	}
	return Enum{Num: int(n), Name: name}, nil
}

// Port states (ibv_port_state / `state` file).
const (
	StateDown        = 1
	StateInit        = 2
	StateArmed       = 3
	StateActive      = 4
	StateActiveDefer = 5
)

// GUID is a 64-bit EUI-64 as in node_guid, sys_image_guid and GID 0's low half.
type GUID uint64

// String prints the form ibstat and smpquery use.
func (g GUID) String() string { return fmt.Sprintf("0x%016x", uint64(g)) }

// ParseGUID parses the sysfs form `0002:c903:00a1:b2c4` (four groups of four hex digits).
func ParseGUID(s string) (GUID, error) {
	parts := strings.Split(s, ":")
	if len(parts) != 4 {
		return 0, fmt.Errorf("%s: want four groups of 4 hex digits like 0002:c903:00a1:b2c4", quote(s))
	}
	var g uint64
	for _, p := range parts {
		if len(p) != 4 {
			return 0, fmt.Errorf("%s: group %s is not 4 hex digits", quote(s), quote(p))
		}
		v, err := strconv.ParseUint(p, 16, 16)
		if err != nil {
			return 0, fmt.Errorf("%s: group %s is not hex", quote(s), quote(p))
		}
		g = g<<16 | v
	}
	return GUID(g), nil
}

// GID is a 128-bit port GID; GID 0 of an IB port is subnet prefix + port GUID.
type GID [16]byte

// PortGUID returns the low 64 bits (the port GUID for GID 0 of an IB port).
func (g GID) PortGUID() GUID { return GUID(binary.BigEndian.Uint64(g[8:])) }

// String prints the full uncompressed form sysfs uses.
func (g GID) String() string {
	var b strings.Builder
	for i := 0; i < 16; i += 2 {
		if i > 0 {
			b.WriteByte(':')
		}
		fmt.Fprintf(&b, "%02x%02x", g[i], g[i+1])
	}
	return b.String()
}

// ParseGID parses `fe80:0000:0000:0000:0002:c903:00a1:b2c4` (eight groups of 4 hex digits).
func ParseGID(s string) (GID, error) {
	var g GID
	parts := strings.Split(s, ":")
	if len(parts) != 8 {
		return g, fmt.Errorf("%s: want eight groups of 4 hex digits", quote(s))
	}
	for i, p := range parts {
		if len(p) != 4 {
			return g, fmt.Errorf("%s: group %s is not 4 hex digits", quote(s), quote(p))
		}
		v, err := strconv.ParseUint(p, 16, 16)
		if err != nil {
			return g, fmt.Errorf("%s: group %s is not hex", quote(s), quote(p))
		}
		g[2*i], g[2*i+1] = byte(v>>8), byte(v)
	}
	return g, nil
}

// ParseHWAddr parses a colon-separated hardware address (`/sys/class/net/IF/address`);
// IPoIB addresses are 20 bytes: 4 bytes of flags and QPN, then the port's GID 0.
func ParseHWAddr(s string) ([]byte, error) {
	if s == "" {
		return nil, fmt.Errorf("empty address")
	}
	parts := strings.Split(s, ":")
	out := make([]byte, len(parts))
	for i, p := range parts {
		if len(p) == 0 || len(p) > 2 {
			return nil, fmt.Errorf("%s: %s is not a byte", quote(s), quote(p))
		}
		v, err := strconv.ParseUint(p, 16, 8)
		if err != nil {
			return nil, fmt.Errorf("%s: %s is not hex", quote(s), quote(p))
		}
		out[i] = byte(v)
	}
	return out, nil
}

// ParseHex parses a `0x`-prefixed (or bare) hex number of at most bits bits, as in
// pkeys/I (`0xffff`), lid (`0x1a`), cap_mask (`0x2651e848`) and net pkey files.
func ParseHex(s string, bits int) (uint64, error) {
	return parseUint(s, strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X"), 16, bits, "hex")
}

// ParseDec parses a decimal number of at most bits bits (counters, lid_mask_count, sm_sl).
// Very old kernels print `N/A (no PMA)` in counter files: that is an error, not 0.
func ParseDec(s string, bits int) (uint64, error) {
	return parseUint(s, s, 10, bits, "decimal")
}

// parseUint parses digits (s without its prefix) strictly: no sign, no underscores.
func parseUint(s, digits string, base, bits int, what string) (uint64, error) {
	if digits == "" || strings.ContainsAny(digits, "+-_") {
		return 0, fmt.Errorf("%s is not a %s number", quote(s), what)
	}
	v, err := strconv.ParseUint(digits, base, bits)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return 0, fmt.Errorf("%s does not fit in %d bits", quote(s), bits)
		}
		return 0, fmt.Errorf("%s is not a %s number", quote(s), what)
	}
	return v, nil
}

// Rate is a port's `rate` file: `100 Gb/sec (4X EDR)`; old kernels print `(4X)`.
type Rate struct {
	Text  string  // as the kernel printed it
	Gbps  float64 // 100, 2.5
	Width string  // "4X"
	Speed string  // "EDR"; empty on old kernels
}

// ParseRate parses the rate file.
func ParseRate(s string) (Rate, error) {
	r := Rate{Text: s}
	num, rest, ok := strings.Cut(s, " Gb/sec")
	if !ok {
		return r, fmt.Errorf("%s: want \"N Gb/sec (WIDTH SPEED)\"", quote(s))
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 {
		return r, fmt.Errorf("%s: %s is not a rate", quote(s), quote(num))
	}
	r.Gbps = v
	rest = strings.TrimSpace(rest)
	if rest != "" {
		if !strings.HasPrefix(rest, "(") || !strings.HasSuffix(rest, ")") {
			return r, fmt.Errorf("%s: want \"(WIDTH SPEED)\" after the rate", quote(s))
		}
		f := strings.Fields(rest[1 : len(rest)-1])
		if len(f) == 0 || len(f) > 2 {
			return r, fmt.Errorf("%s: want \"(WIDTH SPEED)\" after the rate", quote(s))
		}
		r.Width = f[0]
		if len(f) == 2 {
			r.Speed = f[1]
		}
	}
	return r, nil
}
