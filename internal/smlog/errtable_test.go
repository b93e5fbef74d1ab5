package smlog

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// opensmMessage is one row of testdata/opensm-3.3.23-messages.tsv: a message of
// OpenSM 3.3.23's source that carries an ERR or WRN code or is logged above the
// debug level (testdata/opensm-messages.go made the table from the source).
type opensmMessage struct {
	source, function, level, code, format string
}

func opensmMessages(t *testing.T) []opensmMessage {
	t.Helper()
	f, err := os.Open("testdata/opensm-3.3.23-messages.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []opensmMessage
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "#") {
			continue
		}
		c := strings.Split(sc.Text(), "\t")
		if len(c) != 5 {
			t.Fatalf("%q: %d columns", sc.Text(), len(c))
		}
		rows = append(rows, opensmMessage{c[0], c[1], c[2], c[3], c[4]})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

var conversion = regexp.MustCompile(`%[-+ #0]*[0-9*]*(?:\.[0-9*]+)?(?:hh|h|ll|l|z|j|t)?[diouxXcsp%]`)

// fill writes a format as OpenSM would with made-up values: numbers 1 (in the
// conversion's width), strings "x".
func fill(format string) string {
	return conversion.ReplaceAllStringFunc(format, func(c string) string {
		verb := c[len(c)-1]
		flags := strings.ReplaceAll(strings.TrimRight(c[1:len(c)-1], "hlzjt"), "*", "")
		switch verb {
		case '%':
			return "%"
		case 's':
			return "x"
		case 'c':
			return "c"
		case 'p':
			return "0x1"
		case 'u', 'i':
			verb = 'd'
		}
		return fmt.Sprintf("%"+flags+string(verb), 1)
	})
}

// levelOf is the level a row's message is logged at: its OSM_LOG_* bits. 1B30 to
// 1B36 are logged at log_level, the error level for a join and debug for a query
// (osm_sa_mcmember_record.c validate_other_comp_fields); debug lines are not read.
func levelOf(t *testing.T, level string) Level {
	var lv Level
	for _, b := range strings.Split(level, "|") {
		switch b {
		case "OSM_LOG_ERROR", "log_level":
			lv |= LevelError
		case "OSM_LOG_INFO":
			lv |= LevelInfo
		case "OSM_LOG_VERBOSE":
			lv |= LevelVerbose
		case "OSM_LOG_DEBUG":
			lv |= LevelDebug
		case "OSM_LOG_SYS":
			lv |= LevelSys
		default:
			t.Fatalf("level %q", level)
		}
	}
	return lv
}

// keySourceFiles are OpenSM's source files about partitions, P_Keys, Q_Keys,
// M_Keys, SM_Keys and traps (docs/sm.md says why each). Every line with an ERR or WRN
// code they log, and every error-level line of the Partition Manager's files, must be
// an event or shown as not explained.
var keySourceFiles = []string{
	"opensm/osm_prtn.c", "opensm/osm_prtn_config.c", "opensm/osm_pkey.c", "opensm/osm_pkey_mgr.c", "opensm/osm_pkey_rcv.c",
	"opensm/osm_sa_path_record.c", "opensm/osm_sa_multipath_record.c", "opensm/osm_sa_mcmember_record.c",
	"opensm/osm_sa_pkey_record.c", "opensm/osm_sa_informinfo.c", "opensm/osm_sa_sminfo_record.c", "opensm/osm_sa_mad_ctrl.c",
	"opensm/osm_trap_rcv.c", "opensm/osm_inform.c", "opensm/osm_sminfo_rcv.c",
	"opensm/osm_qos_policy.c", "opensm/osm_qos_parser_y.y",
}

// keySourceCodes are the M_Key messages of files about other things: osm_subnet.c's
// M_Key database and osm_sm_mad_ctrl.c's timeout that may be a wrong M_Key.
var keySourceCodes = []string{"ERR 7506", "ERR 7507", "ERR 7508", "ERR 7509", "ERR 7510", "ERR 7511", "ERR 3120"}

// keyFormatWords are words that make a message's format about keys, partitions or
// traps: none is in a message notKeys passes over.
var keyFormatWords = append([]string{"mkey", "m_key", "trap", "notice"}, keyWords...)

// scanfFormat is a format of the table (after its "ERR XXXX: ") as notKeys writes
// it: each conversion skipped, without flags, width or length (%016lx is %*x, %X
// %*x, %zu %*u, %i %*d).
func scanfFormat(t *testing.T, format string) string {
	return conversion.ReplaceAllStringFunc(format, func(c string) string {
		switch c[len(c)-1] {
		case 'd', 'i':
			return "%*d"
		case 'u':
			return "%*u"
		case 'x', 'X':
			return "%*x"
		case 's':
			return "%*s"
		}
		t.Errorf("%q: conversion %s", format, c)
		return c
	})
}

var errPrefix = regexp.MustCompile(`^(?:ERR|WRN) [0-9A-F]{4}:? ?`)

// TestOpenSMErrorTable: every message of OpenSM 3.3.23 from a source file about
// partitions or keys (keySourceFiles), written as OpenSM writes it, is in one of
// three classes: an event; a line not explained; or, for a message notKeys names
// (from its function, in its format, its reason citing the function; no key word
// in its format), neither, so that it makes no exit 4. None is dropped otherwise.
// The table holds every such message of the source, not a chosen few.
func TestOpenSMErrorTable(t *testing.T) {
	rows := opensmMessages(t)
	if len(rows) < 1200 {
		t.Fatalf("%d rows: the table is not the whole source's", len(rows))
	}
	inFile := map[string]bool{}
	for _, f := range keySourceFiles {
		inFile[f] = true
	}
	checked, codes, notKeySeen := 0, map[string]bool{}, map[string]bool{}
	for _, m := range rows {
		file, _, _ := strings.Cut(m.source, ":")
		switch {
		case inFile[file] && m.code != "":
		case (strings.Contains(m.source, "osm_prtn") || strings.Contains(m.source, "osm_pkey")) && strings.Contains(m.level, "OSM_LOG_ERROR"):
			// The Partition Manager's error lines have no code (osm_prtn.c,
			// osm_prtn_config.c).
		case m.code != "" && slices.Contains(keySourceCodes, m.code):
		default:
			continue
		}
		lv := levelOf(t, m.level)
		if lv == LevelDebug {
			continue
		}
		msg := fill(m.format)
		if m.function != "-" {
			msg = m.function + ": " + msg
		}
		lines := strings.Split(strings.ReplaceAll(msg, `\t`, "\t"), `\n`)
		lines[0] = fmt.Sprintf("Nov 28 10:00:00 000001 [AB12] 0x%02x -> %s", uint8(lv), lines[0])
		var evs []*Event
		var unx []*Unexplained
		a := NewAssembler(time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC), time.UTC, func(e *Event) { evs = append(evs, e) })
		a.Unexplained = func(u *Unexplained) { unx = append(unx, u) }
		for _, l := range lines {
			a.Line([]byte(l))
		}
		a.Flush()
		code, _ := strings.CutPrefix(m.code, "ERR ")
		if nk, ok := notKeys[code]; ok && nk.Function == m.function {
			// Not about keys: neither an event nor not explained.
			if len(evs)+len(unx) != 0 {
				t.Errorf("%s %s is in notKeys: %d events, %d not explained, want none:\n%s", m.source, m.code, len(evs), len(unx), lines[0])
			}
			if want := scanfFormat(t, errPrefix.ReplaceAllString(m.format, "")); nk.Format != want {
				t.Errorf("notKeys[%q].Format = %q, want %q (%s)", code, nk.Format, want, m.source)
			}
			for _, w := range keyFormatWords {
				if strings.Contains(strings.ToLower(m.format), w) {
					t.Errorf("%s %s says %q: it is about keys, not for notKeys", m.source, m.code, w)
				}
			}
			if !strings.HasPrefix(nk.Why, m.function+": ") || len(nk.Why) == len(m.function)+2 {
				t.Errorf("notKeys[%q].Why = %q: it cites no source function", code, nk.Why)
			}
			notKeySeen[code] = true
			checked++
			codes[m.code] = true
			continue
		}
		held := len(evs) == 1 && len(evs[0].Lines) > 0 && evs[0].Lines[0] == lines[0]
		if held == (len(unx) == 1) || len(evs)+len(unx) != 1 {
			t.Errorf("%s %s: %d events, %d not explained, want one of either:\n%s", m.source, m.code, len(evs), len(unx), lines[0])
		}
		if len(unx) == 1 && m.code != "" && strings.HasPrefix(m.code, "ERR ") && unx[0].Code != m.code[4:] {
			t.Errorf("%s: not explained with code %q", lines[0], unx[0].Code)
		}
		checked++
		codes[m.code] = true
	}
	// Every code of those files was written and read (the table is not cut short).
	for _, want := range []string{"ERR 0502", "ERR 4806", "ERR 1F1A", "ERR 451B", "ERR 1B36", "ERR 4608", "ERR 4301", "ERR 2805", "ERR 1A04", "ERR 3809", "ERR 0203", "ERR 2F18", "ERR AC05", "ERR 7511", "ERR 3120"} {
		if !codes[want] {
			t.Errorf("%s was not checked", want)
		}
	}
	// notKeys holds messages of those files only: none of another file, or of
	// another version.
	for code := range notKeys {
		if !notKeySeen[code] {
			t.Errorf("notKeys[%q] is no 3.3.23 message of a key source file from %s", code, notKeys[code].Function)
		}
	}
	t.Logf("%d messages checked, %d not about keys", checked, len(notKeySeen))
}

// TestNotKeyOtherVersion: a line with a code of a key source file that OpenSM 3.3.23
// does not have (another version's message), or with a code 3.3.23 has (2F10, 1F02)
// in other words or from another function, is not explained: notKeys passes over
// only the messages it was written from.
func TestNotKeyOtherVersion(t *testing.T) {
	for _, m := range opensmMessages(t) {
		if m.code == "ERR 1F40" || m.code == "ERR 2F40" {
			t.Fatalf("%s is 3.3.23's (%s): pick a code it does not have", m.code, m.source)
		}
	}
	for _, line := range []string{
		"Nov 28 10:00:00 000001 [AB12] 0x01 -> pr_rcv_get_path_parms: ERR 1F40: Cannot find routing from LID 3 to LID 5 on switch Sw1 (GUID: 0x0002c90300000100)",
		"Nov 28 10:00:00 000001 [AB12] 0x01 -> smi_rcv_process_set_request: ERR 2F40: Error in SM state transition (IB_ERROR)",
		"Nov 28 10:00:00 000001 [AB12] 0x01 -> pr_rcv_get_path_parms: ERR 1F02: No route from LID 3 to LID 5",
		"Nov 28 10:00:00 000001 [AB12] 0x01 -> smi_rcv_process_set_request: ERR 2F10: SM state transition failed (IB_ERROR)",
		"Nov 28 10:00:00 000001 [AB12] 0x01 -> osm_sm_state_mgr_process: ERR 2F10: Error in SM state transition (IB_ERROR)",
	} {
		var got []*Unexplained
		a := NewAssembler(time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC), time.UTC, func(*Event) { t.Errorf("%s: an event", line) })
		a.Unexplained = func(u *Unexplained) { got = append(got, u) }
		a.Line([]byte(line))
		a.Flush()
		if len(got) != 1 {
			t.Errorf("%s: %d named not explained, want 1", line, len(got))
		}
	}
}

// formatRE is a printf format as a regular expression matching what it prints:
// numbers for the numeric conversions, anything for strings and for the macros the
// table shows as <NAME>.
func formatRE(format string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	rest := format
	for rest != "" {
		loc := conversion.FindStringIndex(rest)
		macro := strings.Index(rest, "<")
		if macro >= 0 && (loc == nil || macro < loc[0]) {
			if end := strings.Index(rest[macro:], ">"); end > 0 {
				b.WriteString(regexp.QuoteMeta(rest[:macro]) + ".*")
				rest = rest[macro+end+1:]
				continue
			}
		}
		if loc == nil {
			b.WriteString(regexp.QuoteMeta(rest))
			break
		}
		b.WriteString(regexp.QuoteMeta(rest[:loc[0]]))
		c := rest[loc[0]:loc[1]]
		switch c[len(c)-1] {
		case '%':
			b.WriteString("%")
		case 'd', 'i':
			b.WriteString(`-?[0-9]+`)
		case 'u':
			b.WriteString(`[0-9]+`)
		case 'x', 'X', 'p':
			b.WriteString(`(?:0x)?[0-9a-fA-F]+`)
		case 'c':
			b.WriteString(".")
		default:
			b.WriteString(".*")
		}
		rest = rest[loc[1]:]
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

// TestWordingFromSource: the log lines the tests write by hand (handWritten, for what
// the lab's OpenSM cannot be made to write; unexplainedCases) are OpenSM 3.3.23's:
// each is a message of the source table printed by its format, from the function
// that logs it, at its level.
func TestWordingFromSource(t *testing.T) {
	rows := opensmMessages(t)
	var lines []string
	for _, c := range handWritten {
		lines = append(lines, c.line)
	}
	for _, c := range unexplainedCases {
		if c.wording == "" {
			lines = append(lines, c.line)
		}
	}
	for _, line := range lines {
		var r record
		if !r.split([]byte(line), nil) {
			t.Errorf("%s: not a log line", line)
			continue
		}
		r.function()
		fn, msg := string(r.fn), string(r.msg)
		var near []string
		found := false
		for _, m := range rows {
			first, _, _ := strings.Cut(m.format, `\n`)
			if !formatRE(first).MatchString(msg) {
				continue
			}
			if m.function == fn && (m.level == "log_level" || levelOf(t, m.level)&r.level != 0) {
				found = true
				break
			}
			if m.function == fn || m.code != "" && strings.Contains(msg, m.code) {
				near = append(near, fmt.Sprintf("%s %s %s", m.source, m.function, m.level))
			}
		}
		if !found {
			t.Errorf("%s: no message of OpenSM 3.3.23 from %s at level 0x%02x reads so (same words: %v)", line, fn, uint8(r.level), near)
		}
	}
}

// TestNoMessageReadsAsPrefixed: no message of OpenSM 3.3.23's source, written as
// OpenSM writes it without a log_prefix, reads as one with a prefix (logPrefix), so
// a log without log_prefix is never cut at a message's first ": ".
func TestNoMessageReadsAsPrefixed(t *testing.T) {
	for _, m := range opensmMessages(t) {
		msg := fill(m.format)
		if m.function != "-" {
			msg = m.function + ": " + msg
		}
		first, _, _ := strings.Cut(msg, `\n`)
		if p := logPrefix([]byte(first)); p > 0 {
			t.Errorf("%s: %q reads as log_prefix %q", m.source, first, first[:p])
		}
	}
}
