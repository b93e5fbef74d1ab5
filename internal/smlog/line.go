package smlog

import (
	"bytes"

	"github.com/ibkey/ibkey/internal/check"
)

// A line of OpenSM's log (libopensm/osm_log.c osm_log_v2, OpenSM 3.3.x on Linux):
//
//	Nov 27 09:20:23 280958 [ED5266C0] 0x02 -> osm_ucast_mgr_process: minhop tables configured
//	MMM DD HH:MM:SS USECS  [THREAD]   LEVEL    FUNCTION: MESSAGE
//
// The month is the C locale's three letters, the day and time zero-padded, the
// microseconds six digits, the thread pthread_self() in upper-case hex, the level the
// message's OSM_LOG_* bit in two hex digits (0x01 error, 0x02 info, 0x04 verbose,
// 0x08 debug, 0x80 sys, 0x03 for the first line). OSM_LOG prefixes the message with
// the C function's name and ": " (include/opensm/osm_log.h), except on sys lines.
// With log_prefix set in opensm.conf, "PREFIX: " comes before the function. A message
// of several lines (the verbose dumps) carries the prefix on its first line only: the
// others are continuation lines. The log has no year.

// Level is a line's OSM_LOG_* level bits.
type Level uint8

// Log levels (include/opensm/osm_log.h).
const (
	LevelError   Level = 0x01
	LevelInfo    Level = 0x02
	LevelVerbose Level = 0x04
	LevelDebug   Level = 0x08
	LevelSys     Level = 0x80
)

func (l Level) String() string {
	switch {
	case l&LevelError != 0:
		return "error"
	case l&LevelInfo != 0:
		return "info"
	case l&LevelVerbose != 0:
		return "verbose"
	case l&LevelSys != 0:
		return "sys"
	}
	return "debug"
}

// record is one line split into its parts; the byte slices point into the read
// buffer and are valid only while the line is handled.
type record struct {
	line   []byte // the whole line; its first stampLen bytes are the time stamp
	thread []byte // "ED5266C0"
	level  Level
	text   []byte // "FUNCTION: MESSAGE", after the log_prefix
	fn     []byte // the function name (function); empty on sys lines
	msg    []byte // after "FUNCTION: " (function)
}

const stampLen = len("Nov 27 09:20:23 280958")

// split parses one line (without its newline) into r. It returns false for a line
// that is not a log record: a continuation line, or text that is not OpenSM's.
func (r *record) split(line []byte, prefix []byte) bool {
	// "MMM DD HH:MM:SS UUUUUU [" is fixed width.
	if len(line) < stampLen+12 || line[stampLen] != ' ' || line[stampLen+1] != '[' || line[3] != ' ' || line[15] != ' ' {
		return false
	}
	rest := line[stampLen+2:]
	end := bytes.IndexByte(rest, ']')
	// "] 0xLL -> "
	if end < 1 || len(rest) < end+10 || string(rest[end+1:end+4]) != " 0x" || string(rest[end+6:end+10]) != " -> " {
		return false
	}
	hi, ok1 := check.HexDigit(rest[end+4])
	lo, ok2 := check.HexDigit(rest[end+5])
	if !ok1 || !ok2 {
		return false
	}
	r.line, r.thread, r.level = line, rest[:end], Level(hi<<4|lo)
	msg := rest[end+10:]
	if len(prefix) > 0 && bytes.HasPrefix(msg, prefix) {
		msg = msg[len(prefix):]
	}
	r.text = msg
	return true
}

// glued returns where a second record starts inside line, or -1. OpenSM writes a
// record's header and its message with one fprintf and leaves the newline to the
// message's format (libopensm/osm_log.c osm_log_v2), so a message whose format has
// none runs into the next record on the same line. OpenSM 3.3.23 has such messages in
// the files about keys: ERR 4505 (osm_sa_multipath_record.c mpr_rcv_get_path_parms;
// the lab's log has it, TestLabPathNoRoute), the unpath and repath notices
// (osm_inform.c log_notice, whose format ends in "n"; the lab's log has them,
// TestLabQoSPolicyRejected) and ERR AC02 (osm_qos_parser_y.y __validate_pkeys, a
// branch 3.3.23 never takes: its callers all ask for the IPoIB check).
func glued(line []byte) int {
	// A header is "... UUUUUU [THREAD] 0xLL -> ": look at each ']' (rare in messages;
	// a search for the arrow would stop at every space).
	for from := 0; ; {
		i := bytes.IndexByte(line[from:], ']')
		if i < 0 {
			return -1
		}
		end := from + i
		from = end + 1
		if len(line) < end+10 || string(line[end+1:end+4]) != " 0x" || string(line[end+6:end+10]) != " -> " {
			continue
		}
		start := bytes.LastIndexByte(line[:end], '[') - 1 - stampLen
		if start <= 0 || line[start+9] != ':' || line[start+12] != ':' {
			continue // the line's own record (start 0), or not a time stamp
		}
		var r record
		if r.split(line[start:], nil) {
			return start
		}
	}
}

// function splits r's text into the function's name and the message (split leaves
// them to the records that may matter).
func (r *record) function() {
	r.fn, r.msg = nil, r.text
	if r.level == LevelSys {
		return // sys lines (osm_log with OSM_LOG_SYS) are the message alone
	}
	// The function: an identifier, then ": ".
	if c := bytes.IndexByte(r.text, ':'); c >= 1 && c+1 < len(r.text) && r.text[c+1] == ' ' {
		r.fn, r.msg = r.text[:c], r.text[c+2:]
	}
}
