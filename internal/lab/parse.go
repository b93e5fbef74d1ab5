package lab

import (
	"bufio"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// PKeyTable is what `smpquery pkeys` prints.
type PKeyTable struct {
	// Entries are the printed entries in index order. smpquery prints whole
	// rows of 8, so there may be more than Capacity.
	Entries []uint16
	// Capacity is the "N pkeys capacity for this port" line.
	Capacity int
}

var (
	pkeyRowRE = regexp.MustCompile(`^\s*(\d+):((?:\s+0x[0-9a-fA-F]{4})+)\s*$`)
	pkeyCapRE = regexp.MustCompile(`^\s*(\d+) pkeys capacity for this port\s*$`)
)

// ParsePKeys parses `smpquery pkeys` output: rows `   0: 0xffff 0x8001 ...`
// (8 per row, starting at the printed index) and a capacity line.
func ParsePKeys(out string) (PKeyTable, error) {
	var t PKeyTable
	haveCap := false
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if m := pkeyRowRE.FindStringSubmatch(line); m != nil {
			idx, _ := strconv.Atoi(m[1])
			if idx != len(t.Entries) {
				return t, fmt.Errorf("smpquery pkeys: row starts at index %d, want %d: %q", idx, len(t.Entries), line)
			}
			for _, f := range strings.Fields(m[2]) {
				v, err := strconv.ParseUint(f, 0, 16)
				if err != nil {
					return t, fmt.Errorf("smpquery pkeys: %q: %v", line, err)
				}
				t.Entries = append(t.Entries, uint16(v))
			}
			continue
		}
		if m := pkeyCapRE.FindStringSubmatch(line); m != nil {
			t.Capacity, _ = strconv.Atoi(m[1])
			haveCap = true
			continue
		}
		if strings.TrimSpace(line) != "" && !strings.HasPrefix(strings.TrimSpace(line), "#") {
			return t, fmt.Errorf("smpquery pkeys: unexpected line %q", line)
		}
	}
	if !haveCap {
		return t, fmt.Errorf("smpquery pkeys: no capacity line in %q", out)
	}
	if len(t.Entries) < t.Capacity {
		return t, fmt.Errorf("smpquery pkeys: %d entries printed for capacity %d", len(t.Entries), t.Capacity)
	}
	return t, nil
}

// Fields is the `Name:.....value` output of smpquery nodeinfo / portinfo /
// switchinfo and perfquery, by name.
type Fields map[string]string

// ParseFields parses `Name:.....value` lines; lines starting with # and
// lines without a colon are skipped. A name printed twice keeps its first
// value.
func ParseFields(out string) Fields {
	f := Fields{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, val, ok := strings.Cut(line, ":")
		if !ok || strings.ContainsAny(name, " \t") {
			continue
		}
		if _, dup := f[name]; !dup {
			f[name] = strings.TrimSpace(strings.TrimLeft(val, "."))
		}
	}
	return f
}

// Uint returns field name as a number (decimal or 0x hex).
func (f Fields) Uint(name string) (uint64, error) {
	v, ok := f[name]
	if !ok {
		return 0, fmt.Errorf("no field %q", name)
	}
	n, err := strconv.ParseUint(v, 0, 64)
	if err != nil {
		return 0, fmt.Errorf("field %s: %q is not a number", name, v)
	}
	return n, nil
}
