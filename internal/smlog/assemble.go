package smlog

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ibkey/ibkey/internal/check"
)

// Assembler turns log lines into events: it parses each line, keeps the lines of an
// event that spans several (a trap's error- and info-level lines, a parse error and
// the fallback after it) until the event is whole, and hands each event to Emit.
// Lines of other threads may come between the lines of one event; OpenSM logs one
// event's lines from one thread.
type Assembler struct {
	// Emit receives each event once it is whole.
	Emit func(*Event)
	// Names collects what the log says of ports: GUIDs by LID, descriptions by GUID.
	Names *Names
	// NoLines leaves Event.Lines empty: a caller that prints no log lines saves
	// copying them.
	NoLines bool
	// Swept, when set, is told of each heavy sweep that ended without a partitions
	// file event after one that had such events (SweptNote says what it means): an
	// output that prints events as they come says it then.
	Swept func(Sweep)
	// Unexplained, when set, receives each line about partitions or keys that is not
	// part of an event (about): a message of another OpenSM version, or one the
	// catalogue does not explain. A caller that says "no problems" without them
	// would say it of lines it never understood.
	Unexplained func(*Unexplained)

	free []*Event // events given back (Recycle), reused by newEvent

	// Repeats (a trap storm) are read once: the last time stamp's second, the last
	// trap header (up to its TID) and detail line, with what they said.
	lastStamp [15]byte
	lastSec   time.Time
	hdrs      msgCache[[2]uint64] // trap headers up to their TID: number and LID
	details   msgCache[trapDetailV]
	reports   msgCache[reportV]
	recent    msgCache[Event] // the last one-line ERR events by message (errCode)

	loc       *time.Location
	ref       time.Time // the year is inferred from it (the log's last write, or now)
	year      int
	lastMonth time.Month
	prefix    []byte // log_prefix, "PREFIX: ", when a run's first line shows one
	records   int64  // lines in OpenSM's format (Records)

	line int64
	used bool // the line being handled went into an event, or is known to be routine
	// Sweeps: OpenSM reads partitions.conf in every heavy sweep (osm_state_mgr.c
	// do_sweep calls osm_pkey_mgr_process, which calls osm_prtn_make_partitions),
	// and the QoS policy file with qos on (osm_qos_setup), and logs "SUBNET UP" at
	// the end of each (state_mgr_up_msg; a light sweep or a reroute logs none).
	// files: for partitions.conf [0] and the QoS policy [1], errSinceUp: an event
	// about the file came since the last one; clean: the SUBNET UPs whose sweep
	// logged none and that are the first such after one (all SweptSince needs: a
	// log, or an exporter's follow, without file events keeps none); verbose: the
	// log has verbose lines (a missing partitions file is logged only at that level).
	files   [2]fileSweeps
	verbose bool
	thread  string // the thread of the last event held (hold)
	// dumping is the trap whose verbose notice dump is being read: the continuation
	// lines after its "Generic Notice dump" line, up to the next record.
	dumping *pending
	// queue holds events in the order their first lines came, until every event
	// before them is whole: events are handed over in log order. Those not done
	// wait for more lines of their thread.
	queue []pending
}

// otherTrap is the kind of a held trap that is not about a key: never handed over
// (deliver drops it), it holds that trap's lines.
const otherTrap Kind = "other-trap"

// pending is an event in the queue: still collecting lines, or whole (done) and
// waiting for the events before it. A pointer to one is good until the queue
// changes.
type pending struct {
	thread string
	ev     *Event
	want   wait
	done   bool
}

// wait is what a pending event waits for.
type wait uint8

const (
	waitReport     wait = iota + 1 // a trap's "Reporting Security Notice" line
	waitJoin                       // a join's own error after the field's (ERR 1B1A, 1B1C)
	waitFallback                   // the fallback after a partitions.conf parse error
	waitQoSDropped                 // ERR AC03 or AC04 after a QoS policy file's error
)

// NewAssembler makes an assembler for a log last written at ref (the log has no year:
// the first line's year is ref's, or the year before when its month is after ref's),
// in loc (OpenSM writes local time).
func NewAssembler(ref time.Time, loc *time.Location, emit func(*Event)) *Assembler {
	return &Assembler{Emit: emit, Names: NewNames(), loc: loc, ref: ref.In(loc)}
}

// Line handles one line of the log, without its newline: each record on it (see
// glued: a message without a newline runs into the next record).
func (a *Assembler) Line(line []byte) {
	a.line++
	records := a.records
	for g := glued(line); g > 0; g = glued(line) {
		a.record(line[:g])
		line = line[g:]
	}
	a.record(line)
	// Records counts lines: one that holds two records is one line in OpenSM's format
	// (the exporter's count of the other lines is Lines less Records).
	a.records = min(a.records, records+1)
}

// record handles one record of the line being read, or text that is not one.
func (a *Assembler) record(line []byte) {
	// A line that is not of the catalogue matters only as the next line of a
	// verbose notice dump, or as a line of a pending event's thread (which ends
	// it). Events wait for lines that may be far away (a trap's report that never
	// comes): the lines between are passed over here too.
	var r record
	if !r.split(line, a.prefix) {
		if a.dumping != nil {
			a.dumpLine(a.dumping, line)
		}
		return
	}
	a.records++
	a.dumping = nil
	if p := logPrefix(r.text); p > 0 {
		a.prefix = append(a.prefix[:0], r.text[:p]...)
		r.text = r.text[p:]
	}
	if r.level&LevelVerbose != 0 {
		a.verbose = true
	}
	if string(r.text) == "SUBNET UP" {
		for i := range a.files {
			f := &a.files[i]
			if !f.errSinceUp && f.errSinceClean {
				f.clean = append(f.clean, Sweep{Line: a.line, Time: a.stamp(r.line[:stampLen]), QoS: i == 1})
				f.errSinceClean = false
				if a.Swept != nil {
					a.Swept(f.clean[len(f.clean)-1])
				}
			}
			f.errSinceUp = false
		}
	}
	if !a.candidate(&r) && a.findPending(r.thread, 0) == nil {
		return
	}
	r.function()
	a.other(&r)
	a.used = false
	if len(r.msg) >= 8 {
		a.message(&r)
	}
	if !a.used && a.Unexplained != nil && a.about(&r) {
		u := &Unexplained{Line: a.line, Time: a.stamp(r.line[:stampLen]), Level: r.level, Function: string(r.fn), Message: string(r.msg)}
		if has(r.msg, "ERR ") && len(r.msg) >= 8 {
			u.Code = string(r.msg[4:8])
		}
		a.Unexplained(u)
	}
}

// logPrefix is the length of a log_prefix ("PREFIX: ") that text starts with and
// split did not take away, 0 when it has none. OpenSM writes it before every message
// (libopensm/osm_log.c osm_log_v2), and names it alone only in a run's first line
// ("PREFIX: OpenSM 3.3.23"), which a rotated log does not have: a text is
// "PREFIX: FUNCTION: MESSAGE" when what follows its first ": " is a function's name
// (OpenSM's are lower case, as no message's first word before a ": " is) and a
// message of the catalogue (doc.go), whose first word is capitalised. A prefix with
// ": " in it is learned from the version line only.
func logPrefix(text []byte) int {
	p := bytes.Index(text, []byte(": "))
	if p < 0 {
		return 0
	}
	p += 2
	n := p
	for n < len(text) && (text[n] >= 'a' && text[n] <= 'z' || text[n] == '_' || n > p && text[n] >= '0' && text[n] <= '9') {
		n++
	}
	if n == p || !bytes.HasPrefix(text[n:], []byte(": ")) {
		return 0
	}
	msg := text[n+2:]
	if _, ok := msgCode(msg); ok || has(msg, "Received Generic Notice ") || has(msg, "Bad P_Key:") || has(msg, "Bad Q_Key:") ||
		has(msg, "Reporting Security Notice ") || has(msg, "PARSE ") || has(msg, "Partition configuration ") || has(msg, "Duplicated partition ") {
		return p
	}
	return 0
}

// Unexplained is a line about partitions or keys that no event holds.
type Unexplained struct {
	Line  int64
	Time  time.Time
	Level Level
	// Code is the message's ERR code ("0F12"), "" when it has none.
	Code string
	// Function is the C function that logged it, "" on sys lines; Message the rest,
	// as logged.
	Function, Message string
}

// Text is the line as OpenSM wrote its message: "FUNCTION: MESSAGE", or the message
// alone when it has no function.
func (u *Unexplained) Text() string {
	if u.Function == "" {
		return u.Message
	}
	return u.Function + ": " + u.Message
}

// keySources are OpenSM's source files about partitions, P_Keys, Q_Keys, M_Keys,
// SM_Keys and traps, by their messages' codes: OpenSM numbers a file's messages
// "ERR XXnn" with one XX per file (osm_pkey_mgr.c 05nn, osm_sa_path_record.c 1Fnn).
// Every line with one of these codes (or codes, for the M_Key messages of files about
// other things) is an event or is not explained: one of another version, or a
// message no event reads, is never passed over. The files, and why each, are in
// docs/sm.md; testdata/opensm-3.3.23-messages.tsv is every message of the source
// (TestOpenSMErrorTable). The Partition Manager's own files (osm_prtn.c,
// osm_prtn_config.c) log without codes: their lines are found by their words.
var (
	keySources = map[string]bool{
		"05": true, // osm_pkey_mgr.c (and libvendor's osm_vendor_mlx_sa.c, not in the Linux build)
		"48": true, // osm_pkey_rcv.c
		"1F": true, // osm_sa_path_record.c
		"45": true, // osm_sa_multipath_record.c
		"1B": true, // osm_sa_mcmember_record.c
		"46": true, // osm_sa_pkey_record.c
		"43": true, // osm_sa_informinfo.c
		"28": true, // osm_sa_sminfo_record.c
		"1A": true, // osm_sa_mad_ctrl.c
		"38": true, // osm_trap_rcv.c
		"02": true, // osm_inform.c
		"2F": true, // osm_sminfo_rcv.c
		"AC": true, // osm_qos_policy.c, osm_qos_parser_y.y
	}
	keyCodes = map[string]bool{
		// osm_subnet.c's M_Key database (guid2mkey), osm_sm_mad_ctrl.c's timeout
		// "Possible mis-set mkey?".
		"7506": true, "7507": true, "7508": true, "7509": true, "7510": true, "7511": true, "3120": true,
	}
)

// msgCode is the code a message starts with ("ERR 1F1A: ...", "WRN AD34: ...").
func msgCode(msg []byte) (string, bool) {
	if len(msg) < 8 || !has(msg, "ERR ") && !has(msg, "WRN ") {
		return "", false
	}
	for _, c := range msg[4:8] {
		if _, ok := check.HexDigit(c); !ok {
			return "", false
		}
	}
	return string(msg[4:8]), true
}

// isNotKey reports whether r, whose message has code, is the OpenSM 3.3.23 message
// notKeys has for that code: from its function, in its words.
func isNotKey(code string, r *record) bool {
	nk, ok := notKeys[code]
	if !ok || string(r.fn) != nk.Function {
		return false
	}
	body := bytes.TrimPrefix(bytes.TrimPrefix(r.msg[8:], []byte(":")), []byte(" "))
	return scanf(body, nk.Format)
}

// keyWords are the words that make an error line one about partitions or keys
// (lower case): OpenSM's own spellings (osm_pkey_mgr.c "pkey", osm_trap_rcv.c
// "P_Key", osm_sa_mcmember_record.c "PKey", osm_sa_mad_ctrl.c "SM_Key").
var keyWords = []string{"pkey", "p_key", "partition", "prtn", "qkey", "q_key", "sm_key"}

// about reports whether r, which no event holds, is about partitions or keys: a line
// with a code of a source file about them (keySources), an error line that names
// them (in its message or its function's name), or a line that starts as one of the
// catalogue's messages (doc.go) and did not read as it.
func (a *Assembler) about(r *record) bool {
	msg := r.msg
	if has(msg, "Reporting Security Notice ") || has(msg, "Partition configuration ") || has(msg, "PARSE ") {
		return true
	}
	if code, ok := msgCode(msg); ok && r.level&(LevelError|LevelInfo|LevelVerbose) != 0 && (keySources[strings.ToUpper(code[:2])] || keyCodes[code]) {
		// A message of those files that is not about keys (notKeys) is neither,
		// whatever names it holds (a node's description may say "pkey").
		return !isNotKey(code, r)
	}
	if r.level&LevelError == 0 {
		return false
	}
	if has(msg, "Received Generic Notice ") {
		return true
	}
	if has(msg, "ERR NUE") {
		return false // osm_ucast_nue.c: "partitioning" is the routing engine's graph's (METIS)
	}
	text := bytes.ToLower(r.text)
	return slices.ContainsFunc(keyWords, func(w string) bool { return bytes.Contains(text, []byte(w)) })
}

// candidate is the fast look at a record: whether it may be one of the catalogue's
// (doc.go) by its level and its first bytes. A log is mostly lines of other levels
// and messages; most are passed over here.
func (a *Assembler) candidate(r *record) bool {
	msg, lv := r.text, r.level
	if len(msg) == 0 {
		return false
	}
	switch {
	case lv&LevelError != 0:
		return true // every error line: they are few, and most are events
	case lv&(LevelInfo|LevelVerbose) != 0 && coded(msg):
		return true
	case lv == LevelInfo:
		// osm_inform.c log_notice, osm_pkey_mgr.c pkey_mgr_update_port and
		// osm_inform.c is_access_permitted are the info-level messages of the
		// catalogue; with a log_prefix not learned yet the first byte is the
		// prefix's.
		switch msg[0] {
		case 'l', 'p', 'i':
			return bytes.HasPrefix(msg, []byte("log_notice: Reporting Security")) ||
				bytes.HasPrefix(msg, []byte("pkey_mgr_update_port: Max")) ||
				bytes.HasPrefix(msg, []byte("is_access_permitted: MGID"))
		}
		return len(a.prefix) == 0 && a.line < 16 // "PREFIX: OpenSM 3.3.23" (level 0x80 or the log flags)
	case lv&LevelVerbose != 0:
		// The verbose messages of the catalogue come from partition_add_flag,
		// parse_group_flag, partition_add_port, parse_mgroup_flags (PARSE WARN),
		// osm_prtn_make_new, osm_prtn_make_partitions, mcmr_rcv_join_mgrp,
		// trap_rcv_process_request, and the notice dump, which has no function.
		switch msg[0] {
		case 'p':
			return bytes.HasPrefix(msg, []byte("partition_add_")) || bytes.HasPrefix(msg, []byte("parse_"))
		case 'o':
			return bytes.HasPrefix(msg, []byte("osm_prtn_"))
		case 'm':
			return bytes.HasPrefix(msg, []byte("mcmr_rcv_join_mgrp"))
		case 't':
			return bytes.HasPrefix(msg, []byte("trap_rcv_process_request"))
		case 'i':
			return bytes.HasPrefix(msg, []byte("is_access_permitted: Pkey mismatch"))
		case 'G':
			return bytes.HasPrefix(msg, []byte("Generic Notice dump"))
		}
		return len(a.prefix) == 0 && a.line < 16
	case lv&LevelSys != 0:
		return len(a.prefix) == 0
	}
	return false // debug, function, frame and routing levels
}

// coded reports whether a line's text ("FUNCTION: MESSAGE") starts its message with
// an ERR or WRN code (as about reads it): OpenSM logs a few below the error level (osm_sa_multipath_record.c
// ERR 451B verbose, osm_ucast_dfsssp.c WRN AD34 info), which about may name.
func coded(text []byte) bool {
	i := bytes.IndexByte(text, ':')
	if i < 0 || len(text) < i+6 || text[i+1] != ' ' {
		return false
	}
	_, ok := msgCode(text[i+2:])
	return ok
}

// other closes the thread's pending events that r shows are over: OpenSM logs a trap's
// lines one after the other from one thread, so a line of that thread that is not
// one of them ends it.
func (a *Assembler) other(r *record) {
	ended := false
	for i := range a.queue {
		if p := &a.queue[i]; !p.done && p.thread == string(r.thread) && !continues(p, r.msg) {
			p.done, ended = true, true
		}
	}
	if ended {
		a.drain()
	}
}

// continues reports whether msg may come between a pending event's lines.
func continues(p *pending, msg []byte) bool {
	if len(msg) == 0 {
		return false
	}
	switch p.want {
	case waitReport:
		// osm_trap_rcv.c trap_rcv_process_request between log_trap_info and the
		// report: the second error line, the verbose dump, the aging messages. The
		// next trap's "Received Generic Notice" ends it: in a storm every line is
		// asked, so the first byte is looked at first.
		switch msg[0] {
		case 'B':
			return bytes.HasPrefix(msg, []byte("Bad P_Key:")) || bytes.HasPrefix(msg, []byte("Bad Q_Key:"))
		case 'R':
			return bytes.HasPrefix(msg, []byte("Reporting Security Notice")) || bytes.HasPrefix(msg, []byte("Received trap ")) ||
				bytes.HasPrefix(msg, []byte("Received SLID=0 Trap"))
		case 'G':
			return bytes.HasPrefix(msg, []byte("Generic Notice dump"))
		case 'F':
			return bytes.HasPrefix(msg, []byte("Forcing heavy sweep"))
		case 'E':
			return bytes.HasPrefix(msg, []byte("ERR 3809")) || bytes.HasPrefix(msg, []byte("ERR 3802")) ||
				bytes.HasPrefix(msg, []byte("ERR 3812")) || bytes.HasPrefix(msg, []byte("ERR 3813")) || bytes.HasPrefix(msg, []byte("ERR 3803"))
		case 'I':
			return bytes.HasPrefix(msg, []byte("Ignoring noisy traps"))
		case 'C':
			return bytes.HasPrefix(msg, []byte("Cannot find port corresponding"))
		}
		return false
	case waitJoin:
		// osm_sa_mcmember_record.c: the join's own error after the field's.
		return bytes.HasPrefix(msg, []byte("ERR 1B1A")) || bytes.HasPrefix(msg, []byte("ERR 1B1C"))
	case waitFallback:
		// osm_prtn.c osm_prtn_make_partitions after the parse error.
		return bytes.HasPrefix(msg, []byte("Partition configuration")) || bytes.HasPrefix(msg, []byte("PARSE "))
	case waitQoSDropped:
		// osm_qos_parser_y.y osm_qos_parse_policy_file after yyparse or
		// osm_qos_policy_validate failed.
		return bytes.HasPrefix(msg, []byte("ERR AC03")) || bytes.HasPrefix(msg, []byte("ERR AC04"))
	}
	return false
}

// Flush hands over every pending event (at the end of the log, or when a followed
// log has been quiet: OpenSM writes an event's lines at once).
func (a *Assembler) Flush() {
	for i := range a.queue {
		a.queue[i].done = true
	}
	a.dumping = nil
	a.drain()
}

// emit hands over a whole event, or queues it behind the ones still collecting lines.
func (a *Assembler) emit(ev *Event) {
	if len(a.queue) == 0 {
		a.deliver(ev)
		return
	}
	a.queue = append(a.queue, pending{ev: ev, done: true})
}

// drain hands over the events at the head of the queue that are whole.
func (a *Assembler) drain() {
	n := 0
	for n < len(a.queue) && a.queue[n].done {
		a.deliver(a.queue[n].ev)
		n++
	}
	a.queue = slices.Delete(a.queue, 0, n)
}

func (a *Assembler) deliver(ev *Event) {
	if ev.Kind == otherTrap {
		a.Recycle(ev)
		return
	}
	// A trap names its issuer by LID and port GUID (the SM's own lookup of the trap's
	// source LID, osm_trap_rcv.c); only traps have a reporter.
	if r := ev.Reporter; r.LID != 0 && r.GUID != 0 {
		a.Names.guidByLID[r.LID] = r.GUID
	}
	a.Emit(ev)
}

// stamp reads the line's time, inferring the year: the first line's from ref (the
// year before when its month is after ref's), then one more each time the month goes
// back (December to January). Lines come many to a second: the second's time is
// kept, the microseconds added. A stamp that is not one is the zero time.
func (a *Assembler) stamp(s []byte) time.Time {
	us := 0
	for _, c := range s[16:22] {
		if c < '0' || c > '9' {
			return time.Time{}
		}
		us = us*10 + int(c-'0')
	}
	if string(s[:15]) != string(a.lastStamp[:]) {
		// "%s %02d %02d:%02d:%02d" (osm_log.c), in local time (localtime_r).
		t, err := time.Parse("Jan _2 15:04:05", string(s[:15]))
		if err != nil || s[15] != ' ' {
			return time.Time{}
		}
		switch {
		case a.year == 0:
			a.year = a.ref.Year()
			if t.Month() > a.ref.Month() {
				a.year--
			}
		case t.Month() < a.lastMonth:
			a.year++
		}
		a.lastMonth = t.Month()
		a.lastSec = time.Date(a.year, t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), 0, a.loc)
		copy(a.lastStamp[:], s[:15])
	}
	return a.lastSec.Add(time.Duration(us) * time.Microsecond)
}

func (a *Assembler) newEvent(k Kind, r *record) *Event {
	var ev *Event
	if n := len(a.free); n > 0 {
		ev = a.free[n-1]
		a.free = a.free[:n-1]
		lines := ev.Lines[:0]
		*ev = Event{Lines: lines}
	} else {
		ev = &Event{}
	}
	a.used = true
	if f := a.fileOf(k); f != nil {
		f.errSinceUp, f.errSinceClean = true, true
	}
	ev.Kind, ev.Time, ev.Line, ev.SL, ev.SwitchPort, ev.Level = k, a.stamp(r.line[:stampLen]), a.line, -1, -1, r.level
	ev.From, ev.To, ev.Reporter = unknownPort(), unknownPort(), unknownPort()
	if !a.NoLines {
		ev.Lines = append(ev.Lines, string(r.line))
	}
	return ev
}

// Recycle gives back an event Emit handed over, once nothing refers to it any more:
// the next one reuses it (a trap storm is millions of events, most of them repeats
// that are only counted).
func (a *Assembler) Recycle(ev *Event) {
	if len(a.free) < 64 {
		a.free = append(a.free, ev)
	}
}

func (a *Assembler) add(p *pending, r *record) {
	a.used = true
	if !a.NoLines {
		p.ev.Lines = append(p.ev.Lines, string(r.line))
	}
	p.ev.Level |= r.level & LevelError
}

// findPending is the event of thread waiting for want (0: for anything), if any.
func (a *Assembler) findPending(thread []byte, want wait) *pending {
	for i := range a.queue {
		if p := &a.queue[i]; !p.done && p.thread == string(thread) && (want == 0 || p.want == want) {
			return p
		}
	}
	return nil
}

// hold queues ev as pending: it waits for more lines of thread.
func (a *Assembler) hold(ev *Event, thread []byte, want wait) *pending {
	if a.thread != string(thread) {
		a.thread = string(thread) // a storm's traps come from a few threads: one copy each run
	}
	a.queue = append(a.queue, pending{thread: a.thread, ev: ev, want: want})
	return &a.queue[len(a.queue)-1]
}

// release marks a pending event whole and hands over what is ready.
func (a *Assembler) release(p *pending) {
	p.done = true
	a.drain()
}

func has(msg []byte, prefix string) bool { return bytes.HasPrefix(msg, []byte(prefix)) }

// message handles a line whose message may be one of the catalogue's (doc.go).
func (a *Assembler) message(r *record) {
	msg := r.msg
	switch {
	case has(msg, "ERR "):
		a.errCode(r)
	case has(msg, "Received Generic Notice "):
		a.trapHeader(r)
	case has(msg, "Bad P_Key:") || has(msg, "Bad Q_Key:"):
		a.trapDetail(r)
	case has(msg, "Reporting Security Notice "):
		a.trapReport(r)
	case has(msg, "Generic Notice dump"):
		// The verbose dump of the trap being handled (osm_dump_notice_v2); its
		// continuation lines follow.
		if p := a.findPending(r.thread, waitReport); p != nil {
			a.add(p, r)
			a.dumping = p
		}
	case has(msg, "Ignoring noisy traps") || has(msg, "Cannot find port corresponding to lid:"):
		// No report follows (osm_trap_rcv.c): the trap is whole as it is.
		if p := a.findPending(r.thread, waitReport); p != nil {
			a.add(p, r)
			a.release(p)
		}
	case has(msg, "PARSE ERROR"):
		a.parseError(r)
	case has(msg, "PARSE WARN: "):
		ev := a.newEvent(KindConfigWarning, r)
		var n uint64
		var rest string
		if scanf(msg, "PARSE WARN: line %d: %s", &n, &rest) {
			ev.ConfLine, ev.Detail = int(n), rest
		}
		a.emit(ev)
	case has(msg, "Partition configuration "):
		a.partitionConfig(r)
	case has(msg, "IP MC group ("):
		ev := a.newEvent(KindConfigWarning, r)
		var mgid, rest string
		if scanf(msg, "IP MC group (%s) specified with %s", &mgid, &rest) {
			ev.MGID, ev.Detail = mgid, "specified with "+rest
		}
		a.emit(ev)
	case has(msg, "Duplicated partition definition"):
		// osm_prtn.c osm_prtn_make_new: a definition of a key OpenSM already has a
		// partition for. OpenSM keeps its partitions from one sweep to the next
		// (osm_prtn_make_partitions clears only their members), so every sweep logs
		// this for the implicit Default made before the file is read and for every
		// partition the last sweep kept, with the same name: routine (the lab logs it
		// for each partition at each SIGHUP). A same-name definition written twice in
		// the file reads the same, and means the same: OpenSM adds its members.
		var name, prev string
		var key uint64
		if scanf(msg, dupFormat, &name, &key, &prev) && name == prev {
			a.used = true
			return
		}
		ev := a.newEvent(KindConfigWarning, r)
		ev.Detail = strings.TrimSpace(string(msg))
		a.emit(ev)
	case has(msg, "Max number of blocks reduced"):
		ev := a.newEvent(KindTableShrunk, r)
		var from, to, node, port uint64
		var desc string
		if scanf(msg, "Max number of blocks reduced from %u to %u for node 0x%x port %u (%s)", &from, &to, &node, &port, &desc) {
			ev.From = Port{NodeGUID: check.GUID(node), Num: int(port), NodeDesc: desc}
			ev.Detail = fmt.Sprintf("from %d to %d blocks of 32 entries", from, to)
		}
		a.emit(ev)
	case has(msg, "MGID ") && bytes.HasSuffix(msg, []byte("do not share same pkey")):
		ev := a.newEvent(KindNoticeNotForwarded, r)
		var mgid string
		var guid uint64
		if scanf(msg, "MGID %s and port GUID:0x%x do not share same pkey", &mgid, &guid) {
			ev.MGID, ev.To = mgid, Port{GUID: check.GUID(guid), Num: -1}
		}
		a.emit(ev)
	case has(msg, "Pkey mismatch on lid_range_begin != 0xFFFF"):
		// osm_inform.c is_access_permitted (verbose): a subscription to a LID range
		// whose notice's source no longer shares a partition with the subscriber
		// is deleted (o13-17.1.2). The line names neither.
		ev := a.newEvent(KindNoticeNotForwarded, r)
		ev.Detail = subscriptionRemoved
		a.emit(ev)
	case has(msg, "Port and requester don't share PKey"), has(msg, "Invalid PKey supplied in request"):
		ev := a.newEvent(KindJoinRefused, r)
		ev.Detail = string(msg)
		a.emit(ev)
	case has(msg, "Failed to create MC group ("), has(msg, "Unable to create partition"), has(msg, "realloc error to create MC group"):
		ev := a.newEvent(KindProgramFailed, r)
		ev.Detail = string(msg)
		var mgid string
		var key uint64
		if scanf(msg, "Failed to create MC group (%s) with pkey 0x%x", &mgid, &key) {
			ev.MGID, ev.Key, ev.KeyType = mgid, key, KeyPKey
		}
		a.emit(ev)
	case r.level == LevelSys && has(msg, "Found remote SM ("):
		// The sys copy of ERR 2F18 (osm_sminfo_rcv.c): the error line is the event.
		a.used = true
	case len(a.prefix) == 0 && r.fn != nil && has(msg, "OpenSM ") && msg[7] >= '0' && msg[7] <= '9':
		// "PREFIX: OpenSM 3.3.23", the first line of a run (osm_opensm_init logs
		// it without a function): the log has log_prefix set.
		a.prefix = append(append([]byte(nil), r.fn...), ':', ' ')
	}
}

// broadcastComparedWith names, in a join refusal's Detail, the group a new IPoIB
// group's fields were compared with (ERR 1B1C).
const broadcastComparedWith = "its partition's IPoIB broadcast group's"

// subscriptionRemoved is the Detail of a notice-not-forwarded event whose
// subscription OpenSM deleted.
const subscriptionRemoved = "subscription removed"

// dupFormat is osm_prtn.c osm_prtn_make_new's message for a key already defined.
const dupFormat = "Duplicated partition definition: '%s' (0x%x) prev name '%s'.  Will use it"

// errCode handles "ERR XXXX: ..." lines. A repeat of a recent one-line event (an
// application asking the SA the same refused path in a loop) is the template's
// event, with this line's time.
func (a *Assembler) errCode(r *record) {
	if tmpl, ok := a.recent.get(r.msg); ok {
		ev := a.newEvent(tmpl.Kind, r)
		t, ln, lines, lv := ev.Time, ev.Line, ev.Lines, ev.Level
		*ev = tmpl
		ev.Time, ev.Line, ev.Lines, ev.Level = t, ln, lines, lv
		a.emit(ev)
	} else if ev := a.errEvent(r); ev != nil {
		tmpl := *ev
		tmpl.Lines = nil
		a.recent.put(r.msg, tmpl)
		a.emit(ev)
	}
}

// errEvent reads an ERR line: the one-line event it is, or nil (an event that waits
// for more lines is held, a line that ends a pending one is added to it).
func (a *Assembler) errEvent(r *record) *Event {
	msg := r.msg
	code := string(msg[4:8])
	body := msg[8:]
	body = bytes.TrimPrefix(body, []byte(":"))
	body = bytes.TrimPrefix(body, []byte(" "))
	var g1, g2, p1, p2, key, a1, b1 uint64
	var d1, d2, qos string
	ev := func(k Kind) *Event {
		e := a.newEvent(k, r)
		e.Code = code
		return e
	}
	switch code {
	case "1F1A", "4518", "1F1B", "4519", "1F1D", "451C", "1F1E", "451D":
		// The SA's path refusals (osm_sa_path_record.c, osm_sa_multipath_record.c).
		var ok bool
		keyed := true
		switch code {
		case "1F1A":
			ok = scanf(body, "Ports 0x%x (%s port %d) and 0x%x (%s port %d) do not share specified PKey 0x%x", &g1, &d1, &p1, &g2, &d2, &p2, &key)
		case "4518":
			ok = scanf(body, "Ports src 0x%x (%s port %d) and dst 0x%x (%s port %d) do not share the specified PKey 0x%x", &g1, &d1, &p1, &g2, &d2, &p2, &key)
		case "1F1B", "4519":
			ok, keyed = scanf(body, "Ports src 0x%x (%s port %d) and dst 0x%x (%s port %d) do not have any shared PKeys", &g1, &d1, &p1, &g2, &d2, &p2), false
		case "1F1D":
			ok = scanf(body, "QoS level \"%s\" doesn't define specified PKey 0x%x for ports 0x%x (%s port %d) and 0x%x (%s port %d)", &qos, &key, &g1, &d1, &p1, &g2, &d2, &p2)
		case "451C":
			ok = scanf(body, "Ports src 0x%x (%s port %d) and dst 0x%x (%s port %d) do not share specified PKey (0x%x) as defined by QoS level \"%s\"", &g1, &d1, &p1, &g2, &d2, &p2, &key, &qos)
		case "1F1E":
			p1, p2 = ^uint64(0), ^uint64(0) // no port numbers: -1, not known
			ok, keyed = scanf(body, "Ports 0x%x (%s) and 0x%x (%s) do not share PKeys defined by QoS level \"%s\"", &g1, &d1, &g2, &d2, &qos), false
		case "451D":
			ok, keyed = scanf(body, "Ports src 0x%x (%s port %d) and dst 0x%x (%s port %d) do not share a PKey as defined by QoS level \"%s\"", &g1, &d1, &p1, &g2, &d2, &p2, &qos), false
		}
		if !ok {
			return nil
		}
		e := ev(KindPathRefused)
		e.From = Port{GUID: check.GUID(g1), NodeDesc: d1, Num: int(p1)}
		e.To = Port{GUID: check.GUID(g2), NodeDesc: d2, Num: int(p2)}
		a.Names.learn(e.From)
		a.Names.learn(e.To)
		if keyed {
			e.Key, e.KeyType = key, KeyPKey
		}
		e.QoSLevel = qos
		return e
	case "1F02", "1F03", "1F05", "1F06", "1F07", "1F25", "4514", "4515", "4505", "4503", "4516", "4520":
		from, to, ok := pathNoRoute(code, body)
		if !ok {
			return nil
		}
		e := ev(KindPathNoRoute)
		e.From, e.To, e.Detail = from, to, string(body)
		a.Names.learn(e.From)
		a.Names.learn(e.To)
		return e
	case "1A06":
		// osm_sa_mad_ctrl.c sa_mad_ctrl_send_err_callback: a MAD the SA sent that
		// wanted an answer got none. The SA sends only one such: a notice forwarded
		// to a subscriber (osm_inform.c send_report); other MADs stay not explained.
		var status string
		var lid uint64
		if !scanf(body, "MAD completed in error (%s): SubnAdmReport(Notice), attr_mod 0x%*x, LID %u, TID 0x%*x", &status, &lid) {
			return nil
		}
		e := ev(KindNoticeNotForwarded)
		e.To, e.Detail = Port{LID: uint16(lid), Num: -1}, status
		return e
	case "1F1C", "451A":
		var sl uint64
		if !scanf(body, "No partition found for PKey 0x%x - using default SL %d [%s port %d <-> %s port %d]", &key, &sl, &d1, &p1, &d2, &p2) {
			return nil
		}
		e := ev(KindPathNoPartition)
		e.Key, e.KeyType, e.SL = key, KeyPKey, int(sl)
		e.From = Port{NodeDesc: d1, Num: int(p1)}
		e.To = Port{NodeDesc: d2, Num: int(p2)}
		return e
	case "1B14":
		var mgid string
		if !scanf(body, "Cannot join port 0x%x to MGID %s - Port is not in partition of this MC group", &g1, &mgid) {
			return nil
		}
		e := ev(KindJoinRefused)
		e.From = Port{GUID: check.GUID(g1), Num: -1}
		e.MGID = mgid
		return e
	case "1B11":
		// A join of a group that does not exist, without the components OpenSM needs
		// to create it (osm_sa_mcmember_record.c mcmr_rcv_join_mgrp). Only an IPoIB
		// broadcast group is a partition's: the kernel's IPoIB joins it that way
		// (ipoib_multicast.c ipoib_mcast_join) and leaves creating it to the SM.
		var mgid string
		if !scanf(body, "Port 0x%x (%s) failed to join non-existing multicast group with MGID %s, insufficient components specified for implicit create (comp_mask 0x%x)", &g1, &d1, &mgid, &a1) {
			return nil
		}
		k, _, broadcast, _ := ipoibMGID(mgid)
		if !broadcast {
			return nil // an application's join without the components to create its group: not explained (docs/sm.md)
		}
		e := ev(KindJoinRefused)
		e.From = Port{GUID: check.GUID(g1), NodeDesc: d1, Num: -1}
		a.Names.learn(e.From)
		e.MGID, e.Key, e.KeyType = mgid, uint64(k), KeyPKey
		return e
	case "1B1B":
		// A join that would create an IPoIB multicast group (an IPv4 or IPv6 group of
		// a partition) whose partition has no broadcast group in that scope: OpenSM
		// copies the new group's parameters from it (osm_sa_mcmember_record.c
		// mcmr_rcv_create_new_mgrp, ipoib_mcgroup_creation_validation, on by
		// default). The line names neither the port nor the group asked for.
		var mgid string
		if !scanf(body, "Broadcast group %s not found, sending IB_SA_MAD_STATUS_REQ_INVALID", &mgid) {
			return nil
		}
		k, _, broadcast, _ := ipoibMGID(mgid)
		if !broadcast {
			return nil
		}
		e := ev(KindJoinRefused)
		e.MGID, e.Key, e.KeyType = mgid, uint64(k), KeyPKey
		return e
	case "1B31", "1B32":
		var what string
		if !scanf(body, "%s: query 0x%x group 0x%x", &what, &a1, &b1) {
			return nil
		}
		e := ev(KindJoinRefused)
		e.Key, e.KeyType, e.Detail = a1, KeyPKey, fmt.Sprintf("%s: the request's P_Key 0x%04x, the group's 0x%04x", what, a1, b1)
		a.hold(e, r.thread, waitJoin)
	case "1B30":
		if !scanf(body, "Q_Key mismatch: query 0x%x group 0x%x", &a1, &b1) {
			return nil
		}
		e := ev(KindJoinRefused)
		e.Key, e.KeyType, e.Detail = a1, KeyQKey, fmt.Sprintf("Q_Key mismatch: the request's Q_Key 0x%08x, the group's 0x%08x", a1, b1)
		a.hold(e, r.thread, waitJoin)
	case "1B1A", "1B1C":
		// The join that failed the field check above (a query's checks log nothing).
		p := a.findPending(r.thread, waitJoin)
		if p == nil {
			return nil
		}
		a.add(p, r)
		var mgid string
		if scanf(body, "validate_other_comp_fields failed for MGID: %s port 0x%x (%s), sending IB_SA_MAD_STATUS_REQ_INVALID", &mgid, &g1, &d1) {
			p.ev.MGID, p.ev.From = mgid, Port{GUID: check.GUID(g1), NodeDesc: d1, Num: -1}
		} else if scanf(body, "validate_other_comp_fields failed for MGID: %s, sending IB_SA_MAD_STATUS_REQ_INVALID", &mgid) {
			// mcmr_rcv_create_new_mgrp: the join would create an IPoIB group, and
			// its fields were checked against the partition's broadcast group,
			// whose Q_Key and P_Key the new group copies (the lab: the group named
			// does not exist, the one compared with is the broadcast group).
			p.ev.MGID = mgid
			p.ev.Detail = strings.Replace(p.ev.Detail, ", the group's ", ", "+broadcastComparedWith+" ", 1)
		}
		a.release(p)
	case "4608", "430B":
		// A request that needs the SA's SM_Key (osm_sa_pkey_record.c, osm_sa_informinfo.c).
		format, what := "Ignoring PKeyRecord request from non-trusted requester with SM_Key 0x%x", "P_KeyTableRecord"
		if code == "430B" {
			format, what = "Request for security trap from non-trusted requester: Given SM_Key:0x%x", "InformInfo for a security trap"
		}
		if !scanf(body, format, &key) {
			return nil
		}
		e := ev(KindUntrusted)
		e.Key, e.KeyType, e.Detail = key, KeySMKey, what
		return e
	case "1A04":
		var method, attr uint64
		var name string
		if !scanf(body, "Non-Zero MAD SM_Key: 0x%x != SM_Key: 0x%x; SA MAD ignored for method 0x%x attribute 0x%x (%s)", &key, &a1, &method, &attr, &name) {
			return nil
		}
		e := ev(KindBadSMKey)
		e.Key, e.KeyType, e.Detail = key, KeySMKey, name
		return e
	case "2F18":
		var who string
		if !scanf(body, "Got SM (%s) with sm_key 0x%x that doesn't match our local sm_key. Ignoring SMInfo", &who, &key) {
			return nil
		}
		e := ev(KindSMKeyMismatch)
		e.Key, e.KeyType, e.Detail = key, KeySMKey, who
		if lid, ok := strings.CutPrefix(who, "LID "); ok {
			var v uint64
			if scanf([]byte(lid), "%u", &v) {
				e.From = Port{LID: uint16(v), Num: -1}
			}
		}
		return e
	case "3120":
		// osm_sm_mad_ctrl.c sm_mad_ctrl_send_err_cb, after its ERR 3113 for the same
		// MAD: the line names the attribute, not the port.
		var attr uint64
		var name string
		if !scanf(body, "Timeout while getting attribute 0x%x (%s); Possible mis-set mkey?", &attr, &name) {
			return nil
		}
		e := ev(KindGetTimeout)
		e.Detail = fmt.Sprintf("%s (attribute 0x%04X)", name, attr)
		return e
	case "0512":
		var node, port uint64
		var desc string
		if !scanf(body, "Failed to set PKey 0x%x because Pkey table is full for node 0x%x port %u (%s)", &key, &node, &port, &desc) {
			return nil
		}
		e := ev(KindTableFull)
		e.Key, e.KeyType = key, KeyPKey
		e.From = Port{NodeGUID: check.GUID(node), Num: int(port), NodeDesc: desc}
		return e
	case "0507":
		if vendorMLX(r.fn) {
			a.used = true
			return nil // libvendor's osm_vendor_mlx_sa.c has an ERR 0507 too
		}
		var cap, last, node, port uint64
		var desc string
		if !scanf(body, "Not enough pkey entries (%u <= %u) on switch 0x%x port %u (%s). Clearing Enforcement bit", &cap, &last, &node, &port, &desc) {
			return nil
		}
		e := ev(KindEnforcementOff)
		e.From = Port{NodeGUID: check.GUID(node), Num: int(port), NodeDesc: desc}
		// last is an index of the switch port's own new table, the CA's keys as
		// copied to it (invalid entries and a limited key beside its full one left
		// out): not an index of the CA's table (osm_pkey_mgr.c last_used_pkey_index
		// on the peer's table).
		e.Detail = fmt.Sprintf("the switch port holds %d entries; the CA's partitions, copied to it, reach index %d", cap, last)
		return e
	case "0502", "0503", "0505", "0506", "0508", "0509", "0510", "0511":
		if vendorMLX(r.fn) {
			a.used = true
			return nil // the same codes in libvendor's osm_vendor_mlx_sa.c (not the ibumad build)
		}
		e := ev(KindProgramFailed)
		e.Detail = string(body)
		var node, port, blk, idx uint64
		var desc string
		switch {
		case scanf(body, "Failed to obtain P_Key 0x%x block and index for node 0x%x port %u", &key, &node, &port),
			scanf(body, "Failed to allocate new pending pkey entry for node 0x%x port %u", &node, &port):
			e.From = Port{NodeGUID: check.GUID(node), Num: int(port)}
		case scanf(body, "Failed to set PKey 0x%x in block %u idx %u for node 0x%x port %u (%s)", &key, &blk, &idx, &node, &port, &desc),
			scanf(body, "Failed to set accum_pkeys PKey 0x%x in block %u idx %u for node 0x%x port %u (%s)", &key, &blk, &idx, &node, &port, &desc),
			scanf(body, "pkey_mgr_update_pkey_entry() failed to update pkey table block %u for node 0x%x port %u (%s)", &blk, &node, &port, &desc),
			scanf(body, "Failed to set PortInfo for node 0x%x port %u (%s)", &node, &port, &desc):
			e.From = Port{NodeGUID: check.GUID(node), Num: int(port), NodeDesc: desc}
		}
		if key != 0 {
			e.Key, e.KeyType = key, KeyPKey
		}
		return e
	case "AC05", "AC10", "AC11", "AC12", "AC13", "AC03", "AC04", "AC01":
		a.qosPolicy(r, code, body)
	case "3802":
		// "Error sending response": the trap is not reported (osm_trap_rcv.c).
		if p := a.findPending(r.thread, waitReport); p != nil {
			a.add(p, r)
			a.release(p)
		}
	case "3809", "3812", "3813", "3803":
		// osm_trap_rcv.c trap_rcv_process_request after the trap's first lines: 3809,
		// "Failed to find source physical port for trap" (the trap is still answered
		// and reported); 3812, 3813, 3803: no port for trap 144 or 145 (a description
		// or system image GUID update), the reports not sent. The trap held on the thread takes them: a key trap is
		// handed over at its report, which osm_inform.c osm_report_notice logs before
		// it sends (so 3803 after it is not explained), unless the info level is off.
		if p := a.findPending(r.thread, waitReport); p != nil {
			a.add(p, r)
		}
	}
	return nil
}

// qosPolicy reads the lines of a QoS policy file OpenSM could not use
// (osm_qos_parser_y.y osm_qos_parse_policy_file, at every heavy sweep with qos on:
// osm_qos.c osm_qos_setup): the error (yyerror's ERR AC05 while parsing, or
// osm_qos_policy.c osm_qos_policy_validate's AC10 to AC13), then AC03 or AC04 naming
// the file, after which OpenSM has no policy; or AC01, the file not opened. OpenSM
// 3.3.23 logs AC03 after every AC05 (each yyerror ends the parse) and AC04 after each
// of AC10 to AC13 (validation stops at the first): the error waits for it. The
// event's Detail is "FILE: WHAT" once the file is known (Fallback: OpenSM dropped
// the policy), WHAT alone before.
func (a *Assembler) qosPolicy(r *record, code string, body []byte) {
	var n, col uint64
	var s, file string
	switch code {
	case "AC03", "AC04":
		if !scanf(body, "Failed parsing QoS policy file (%s)", &file) && !scanf(body, "Error(s) in QoS policy file (%s)", &file) {
			return
		}
		p := a.findPending(r.thread, waitQoSDropped)
		if p == nil {
			// No error line before it (cut off): the event is this line. Emitted,
			// not returned, so errCode does not take it for the template of the
			// next sweep's AC03, which closes an error held.
			ev := a.newEvent(KindQoSRejected, r)
			ev.Code, ev.Detail, ev.Fallback = code, file, true
			a.emit(ev)
			return
		}
		a.add(p, r)
		p.ev.Detail, p.ev.Fallback = file+": "+p.ev.Detail, true
		a.release(p)
	case "AC01":
		var why string
		if !scanf(body, "Failed opening QoS policy file %s - %s", &file, &why) {
			return
		}
		ev := a.newEvent(KindQoSRejected, r)
		ev.Code, ev.Detail, ev.Fallback = code, file+": cannot be opened ("+why+")", true
		a.emit(ev)
	default:
		switch {
		case code == "AC05" && scanf(body, "Syntax error (line %d:%d): %s", &n, &col, &s):
			s = fmt.Sprintf("%s (line %d, column %d)", s, n, col)
		case code == "AC10" && scanf(body, "Default qos-level (%s) not defined.", &s):
			s = "the default qos-level (" + s + ") is not defined"
		case code == "AC11" && scanf(body, "qos-match-rule num %u: qos-level '%s' not found", &n, &s),
			code == "AC12" && scanf(body, "qos-match-rule num %u: source port-group '%s' not found", &n, &s),
			code == "AC13" && scanf(body, "qos-match-rule num %u: destination port-group '%s' not found", &n, &s):
			s, n = string(body), 0 // n is the rule's number, not a line
		default:
			return
		}
		ev := a.newEvent(KindQoSRejected, r)
		ev.Code, ev.ConfLine, ev.Detail = code, int(n), s
		a.hold(ev, r.thread, waitQoSDropped)
	}
}

// pathNoRoute reads the SA's routing refusals (osm_sa_path_record.c and
// osm_sa_multipath_record.c pr_rcv_get_path_parms, mpr_rcv_get_path_parms: the route
// along the forwarding tables OpenSM computed, walked before any partition check):
// the ends they name (1F02-1F05, 1F07 by LID, 1F25 by port GUID, 1F06 by node GUID
// and port; the multipath ones alike).
func pathNoRoute(code string, body []byte) (from, to Port, ok bool) {
	from, to = unknownPort(), unknownPort()
	var l1, l2, g1, g2, p1, p2 uint64
	var d1, d2 string
	switch code {
	case "1F02":
		ok = scanf(body, "Cannot find routing from LID %u to LID %u on switch %*s (GUID: 0x%*x)", &l1, &l2)
	case "1F03":
		ok = scanf(body, "Can't find routing from LID %u to LID %u on switch %*s (GUID: 0x%*x)", &l1, &l2)
	case "4514", "4515":
		ok = scanf(body, "Can't find routing from LID %u to LID %u on switch %*s (GUID 0x%*x)", &l1, &l2)
	case "1F05":
		ok = scanf(body, "Can't find remote phys port of %*s (GUID: 0x%*x) port %*d while routing from LID %u to LID %u", &l1, &l2)
	case "4505":
		ok = scanf(body, "Can't find remote phys port of %*s (GUID 0x%*x) port %*d while routing from LID %u to LID %u", &l1, &l2)
	case "1F07", "4516":
		ok = scanf(body, "Dead end path on switch %*s (GUID: 0x%*x) to LID %u", &l2)
	case "1F25":
		ok = scanf(body, "Path from GUID 0x%x (%s port %d) to lid %u GUID 0x%x (%s port %d) needs more than %*d hops, max %*d hops allowed", &g1, &d1, &p1, &l2, &g2, &d2, &p2)
		from, to = Port{GUID: check.GUID(g1), NodeDesc: d1, Num: int(p1)}, Port{GUID: check.GUID(g2), NodeDesc: d2, Num: int(p2)}
	case "4520":
		ok = scanf(body, "Path from GUID 0x%x (%s) to lid %u GUID 0x%x (%s) needs more than %*d hops, max %*d hops allowed", &g1, &d1, &l2, &g2, &d2)
		from, to = Port{GUID: check.GUID(g1), NodeDesc: d1, Num: -1}, Port{GUID: check.GUID(g2), NodeDesc: d2, Num: -1}
	case "1F06":
		ok = scanf(body, "Internal error, bad path while routing %s (GUID: 0x%x) port %d to %s (GUID: 0x%x) port %d; ended at %*s port %*d", &d1, &g1, &p1, &d2, &g2, &p2)
		from, to = Port{NodeGUID: check.GUID(g1), NodeDesc: d1, Num: int(p1)}, Port{NodeGUID: check.GUID(g2), NodeDesc: d2, Num: int(p2)}
	case "4503":
		ok = scanf(body, "Internal error, bad path while routing from %s (GUID: 0x%x) port %d to %s (GUID: 0x%x) port %d; ended at %*s port %*d", &d1, &g1, &p1, &d2, &g2, &p2)
		from, to = Port{NodeGUID: check.GUID(g1), NodeDesc: d1, Num: int(p1)}, Port{NodeGUID: check.GUID(g2), NodeDesc: d2, Num: int(p2)}
	}
	from.LID, to.LID = uint16(l1), uint16(l2)
	return from, to, ok
}

// vendorMLX reports whether fn is a function of libvendor's osm_vendor_mlx_sa.c,
// whose codes 0501-0511 are osm_pkey_mgr.c's too: its functions are osmv_* and
// __osmv_*. osm_pkey_mgr.c's are not all pkey_mgr_* (update_peer_block logs ERR 0509).
func vendorMLX(fn []byte) bool { return bytes.Contains(fn, []byte("osmv")) }

// trapHeader: "Received Generic Notice type:%u num:%u (%s) Producer:%u (%s) from
// LID:%u%s TID:0x%016" (osm_trap_rcv.c log_trap_info, error level).
func (a *Assembler) trapHeader(r *record) {
	var num, lid uint64
	msg := r.msg
	// The TID ends the message, printed 0x%016" PRIx64: at a fixed place from the end.
	t := len(msg) - len(" TID:0x0123456789abcdef")
	if t <= 0 || !bytes.HasPrefix(msg[t:], []byte(" TID:0x")) {
		t = -1
	}
	if v, ok := a.hdrs.get(msg[:max(t, 0)]); t > 0 && ok {
		num, lid = v[0], v[1] // a repeat: the same trap from the same LID
	} else {
		var typ, prod, tid uint64
		if !scanf(msg, "Received Generic Notice type:%u num:%u (%*s) Producer:%u (%*s) from LID:%u%*s TID:0x%x", &typ, &num, &prod, &lid, &tid) {
			return
		}
		if t > 0 {
			a.hdrs.put(msg[:t], [2]uint64{num, lid})
		}
	}
	if p := a.findPending(r.thread, waitReport); p != nil {
		a.release(p)
	}
	// The key comes with the trap's next lines (the detail line, the report), which
	// may not follow: until one does, it is not known.
	var k Kind
	switch num {
	case 256:
		k = KindBadMKey
	case 257:
		k = KindBadPKey
	case 258:
		k = KindBadQKey
	case 259:
		k = KindBadSwitchPKey
	default:
		// Another trap (a link, a GID, a port's capabilities): not a key's. It is
		// held as otherTrap, so that its own error lines after (ERR 3809 for a
		// source port not found, 3802, 3812, 3813, 3803) are known as its, not
		// shown as not explained, and dropped with it.
		a.hold(a.newEvent(otherTrap, r), r.thread, waitReport)
		return
	}
	ev := a.newEvent(k, r)
	ev.Trap = int(num)
	ev.Reporter.LID = uint16(lid)
	a.hold(ev, r.thread, waitReport)
}

// msgCache holds what the last 32 messages of one kind said, by their bytes: a
// message seen again (traps repeat, with other threads and times; an application asks
// the SA the same refused path in a loop) is not parsed again. 32: a P_Key table that
// overflows logs an ERR 0512 per partition left out, a dozen in the lab, and the
// messages between two repeats must fit.
type msgCache[V any] struct {
	keys [32][]byte
	vals [32]V
	next int
}

func (c *msgCache[V]) get(msg []byte) (V, bool) {
	for i := range c.keys {
		if len(c.keys[i]) == len(msg) && c.keys[i] != nil && string(c.keys[i]) == string(msg) {
			return c.vals[i], true
		}
	}
	var zero V
	return zero, false
}

func (c *msgCache[V]) put(msg []byte, v V) {
	c.keys[c.next] = append(c.keys[c.next][:0], msg...)
	c.vals[c.next] = v
	c.next = (c.next + 1) % len(c.keys)
}

// trapDetailV is what a trap's detail line says.
type trapDetailV struct {
	kind                          string
	key, sl, lid1, qp1, lid2, qp2 uint64
}

// trapDetail: "Bad %s_Key:0x%x on SL:%d from LID1:%u QP1:0x%x to LID2:%u QP2:0x%x"
// (log_trap_info). QP1 is printed & 0xfff: only its low 12 bits.
func (a *Assembler) trapDetail(r *record) {
	v, ok := a.details.get(r.msg)
	if !ok {
		if !scanf(r.msg, "Bad %s_Key:0x%x on SL:%d from LID1:%u QP1:0x%x to LID2:%u QP2:0x%x", &v.kind, &v.key, &v.sl, &v.lid1, &v.qp1, &v.lid2, &v.qp2) {
			return
		}
		a.details.put(r.msg, v)
	}
	k, trap, kt := KindBadPKey, 257, KeyPKey
	if v.kind == "Q" {
		k, trap, kt = KindBadQKey, 258, KeyQKey
	}
	p := a.findPending(r.thread, waitReport)
	if p != nil && p.ev.Kind != k {
		a.release(p) // OpenSM writes this line only right after its own trap's header
		p = nil
	}
	if p == nil {
		// The header line was not in the log read (it starts mid-event).
		ev := a.newEvent(k, r)
		ev.Trap = trap
		p = a.hold(ev, r.thread, waitReport)
	} else {
		a.add(p, r)
	}
	ev := p.ev
	// OpenSM writes this line before the dump and the report (osm_trap_rcv.c
	// trap_rcv_process_request), which have QP1 whole.
	ev.Key, ev.KeyType, ev.SL = v.key, kt, int(v.sl)
	ev.From.QP, ev.From.QPKnown, ev.From.QPLow12 = uint32(v.qp1), true, true
	ev.From.LID, ev.To.LID = uint16(v.lid1), uint16(v.lid2)
	ev.To.QP, ev.To.QPKnown = uint32(v.qp2), true
}

// reportV is what a trap's report line says; form is which of log_notice's
// formats it is (1: 257/258, 2: 259, 3: 256).
type reportV struct {
	form                                                     int
	keyName, gid1, gid2                                      string
	issuer, guid, lid1, lid2, key, sl, qp1, qp2, port, valid uint64
}

// trapReport: the info-level "Reporting Security Notice" line (osm_inform.c
// log_notice), which has the QP numbers whole and, for trap 259, the switch port.
func (a *Assembler) trapReport(r *record) {
	msg := r.msg
	v, cached := a.reports.get(msg)
	switch {
	case cached:
	case scanf(msg, "Reporting Security Notice \"%*s\" from LID %u, GUID 0x%x : LID1 %u, LID2 %u, %s 0x%x, SL %d, QP1 0x%x, QP2 0x%x, GID1 %s, GID2 %s", &v.issuer, &v.guid, &v.lid1, &v.lid2, &v.keyName, &v.key, &v.sl, &v.qp1, &v.qp2, &v.gid1, &v.gid2):
		v.form = 1
	case scanf(msg, "Reporting Security Notice \"%*s\" from switch LID %u, GUID 0x%x port %d : data_valid 0x%x, LID1 %u, LID2 %u, PKey 0x%x, SL %d, QP1 0x%x, QP2 0x%x, GID1 %s, GID2 %s", &v.issuer, &v.guid, &v.port, &v.valid, &v.lid1, &v.lid2, &v.key, &v.sl, &v.qp1, &v.qp2, &v.gid1, &v.gid2):
		v.form = 2
	case scanf(msg, "Reporting Security Notice \"%*s\" from LID %u, GUID 0x%x, Method 0x%x, Attribute 0x%x, AttrMod 0x%x, M_Key 0x%x", &v.issuer, &v.guid, &v.lid1, &v.lid2, &v.sl, &v.key):
		v.form = 3
	default:
		return
	}
	if !cached {
		a.reports.put(msg, v)
	}
	var ev *Event
	p := a.findPending(r.thread, waitReport)
	get := func(k Kind, trap int) *Event {
		if p != nil && p.ev.Kind == k {
			a.add(p, r)
			return p.ev
		}
		if p != nil {
			a.release(p)
		}
		e := a.newEvent(k, r)
		e.Trap = trap
		p = a.hold(e, r.thread, waitReport)
		return e
	}
	switch v.form {
	case 1:
		k, kt, trap := KindBadPKey, KeyPKey, 257
		if v.keyName == "Q_Key" {
			k, kt, trap = KindBadQKey, KeyQKey, 258
		}
		ev = get(k, trap)
		ev.KeyType = kt
		ev.From.QP, ev.From.QPKnown, ev.From.QPLow12 = uint32(v.qp1), true, false
		ev.To.QP, ev.To.QPKnown = uint32(v.qp2), true
	case 2:
		ev = get(KindBadSwitchPKey, 259)
		ev.KeyType = KeyPKey
		ev.SwitchPort = int(v.port)
		// IBA 14.3.1 table 181 DataValid: bit 0 LID1, 1 LID2, 2 P_Key, 3 SL, 4 QP1,
		// 5 QP2, 6 GID1, 7 GID2. A field not valid is not known.
		ev.Detail = fmt.Sprintf("data_valid 0x%04x", v.valid)
		if v.valid&1 == 0 {
			v.lid1 = 0
		}
		if v.valid&2 == 0 {
			v.lid2 = 0
		}
		if v.valid&8 == 0 {
			v.sl = ^uint64(0)
		}
		ev.From.QP, ev.From.QPKnown = uint32(v.qp1), v.valid&0x10 != 0
		ev.To.QP, ev.To.QPKnown = uint32(v.qp2)&0xffffff, v.valid&0x20 != 0
		if v.valid&4 == 0 {
			ev.KeyType, v.key = "", 0
		}
		if v.valid&0x40 == 0 {
			v.gid1 = ""
		}
		if v.valid&0x80 == 0 {
			v.gid2 = ""
		}
	case 3:
		ev = get(KindBadMKey, 256)
		ev.KeyType = KeyMKey
		ev.Key = v.key
		ev.Detail = fmt.Sprintf("method 0x%x, attribute 0x%x, modifier 0x%x", v.lid1, v.lid2, v.sl)
		ev.Reporter.LID, ev.Reporter.GUID = uint16(v.issuer), check.GUID(v.guid)
		a.release(p)
		return
	}
	ev.Key = v.key
	if int64(v.sl) >= 0 && v.sl < 16 {
		ev.SL = int(v.sl)
	} else {
		ev.SL = -1
	}
	ev.From.LID, ev.To.LID = uint16(v.lid1), uint16(v.lid2)
	ev.From.GID, ev.To.GID = v.gid1, v.gid2
	ev.Reporter.LID, ev.Reporter.GUID = uint16(v.issuer), check.GUID(v.guid)
	a.release(p)
}

// dumpLine reads a continuation line of the verbose notice dump
// (osm_helper.c osm_dump_notice_to_buf_generic): it has QP1 whole, which helps when
// no report line follows.
func (a *Assembler) dumpLine(p *pending, line []byte) {
	if !a.NoLines {
		p.ev.Lines = append(p.ev.Lines, string(line))
	}
	var v uint64
	if scanf(bytes.TrimSpace(line), "qp1......................0x%x", &v) {
		p.ev.From.QP, p.ev.From.QPKnown, p.ev.From.QPLow12 = uint32(v), true, false
	}
}

// parseError: "PARSE ERROR: line %d: %s" (osm_prtn_config.c), or the non-fatal
// "PARSE ERROR partition conf file line %d: mgid \"%s\": gid is not multicast".
func (a *Assembler) parseError(r *record) {
	var n uint64
	var rest, mgid string
	if scanf(r.msg, "PARSE ERROR partition conf file line %d: mgid \"%s\": gid is not multicast", &n, &mgid) {
		ev := a.newEvent(KindConfigWarning, r)
		ev.ConfLine, ev.MGID, ev.Detail = int(n), mgid, "mgid is not a multicast GID: the group is not created"
		a.emit(ev)
		return
	}
	if !scanf(r.msg, "PARSE ERROR: line %d: %s", &n, &rest) {
		return
	}
	if p := a.findPending(r.thread, waitFallback); p != nil {
		a.release(p)
	}
	ev := a.newEvent(KindConfigRejected, r)
	ev.ConfLine, ev.Detail = int(n), rest
	a.hold(ev, r.thread, waitFallback)
}

// partitionConfig: osm_prtn.c's "Partition configuration ..." lines.
func (a *Assembler) partitionConfig(r *record) {
	msg := r.msg
	p := a.findPending(r.thread, waitFallback)
	switch {
	case has(msg, "Partition configuration in error; retrying with default config"):
		if p == nil {
			// No parse error was logged: the file held no definition at all
			// (osm_prtn_config_parse_file returns 1 when nothing was parsed).
			ev := a.newEvent(KindConfigRejected, r)
			ev.Detail = "no partition definition was read from the file"
			p = a.hold(ev, r.thread, waitFallback)
		} else {
			a.add(p, r)
		}
		p.ev.Fallback = true
		a.release(p)
	case has(msg, "Partition configuration was not fully processed"):
		// osm_prtn.c logs it (verbose) before "in error; retrying", which makes the
		// event when no parse error came first (a file with no definition).
		a.used = true
		if p != nil {
			a.add(p, r)
		}
	default:
		var file, why string
		if scanf(msg, "Partition configuration %s is not accessible (%s)", &file, &why) {
			ev := a.newEvent(KindConfigMissing, r)
			ev.Detail = file + ": " + why
			ev.Fallback = true
			a.emit(ev)
		}
	}
}

// Sweep is a heavy sweep's end in the log: its "SUBNET UP" line. QoS says it is the
// first to log no QoS policy error after some (else no partitions file error).
type Sweep struct {
	Line int64
	Time time.Time
	QoS  bool
}

// fileOf is the file whose sweeps an event of kind k is about: partitions.conf's
// (files[0]) for partitions-rejected and partitions-missing, the QoS policy's
// (files[1], Sweep.QoS) for qos-policy-rejected; nil for any other kind.
func (a *Assembler) fileOf(k Kind) *fileSweeps {
	switch k {
	case KindConfigRejected, KindConfigMissing:
		return &a.files[0]
	case KindQoSRejected:
		return &a.files[1]
	}
	return nil
}

// fileSweeps is what the sweeps said of one file (Assembler.files).
type fileSweeps struct {
	errSinceUp, errSinceClean bool
	clean                     []Sweep
}

// SweptSince is what the log says of the file after a group of kind k
// (partitions-rejected, partitions-missing, qos-policy-rejected) whose last event is
// at line last: "" when no heavy sweep ended after it without such an event, else a
// note naming the first that did (SweptNote).
func (a *Assembler) SweptSince(k Kind, last int64) string {
	f := a.fileOf(k)
	if f == nil {
		return ""
	}
	clean := f.clean
	i, _ := slices.BinarySearchFunc(clean, last+1, func(s Sweep, line int64) int { return cmp.Compare(s.Line, line) })
	if i == len(clean) {
		return ""
	}
	return a.SweptNote(clean[i])
}

// SweptNote is what sweep c, the first after a file's events to log none, says of
// them (for partitions.conf at the verbose level, where a missing file shows, that it
// read a file it could parse): the one wording of every output.
func (a *Assembler) SweptNote(c Sweep) string {
	at := fmt.Sprintf("SUBNET UP at line %d, %s", c.Line, c.Time.Format("Jan _2 15:04:05"))
	if c.QoS {
		// OpenSM logs "Loading QoS policy file" only at its first load
		// (osm_qos_parse_policy_file's first_time): a good file read again logs
		// nothing, nor does a sweep with qos off (osm_qos_setup returns first).
		return fmt.Sprintf("OpenSM swept again after this and logged no QoS policy error (%s): it read a policy file it accepts then (it logs nothing when it does), or QoS was turned off", at)
	}
	if a.verbose {
		return fmt.Sprintf("OpenSM swept again after this and read a partitions file it could parse (%s): the fallback ended then; the tables follow that file since", at)
	}
	return fmt.Sprintf("OpenSM swept again after this and logged no partitions file error (%s): it read a file it could parse then, or found none (this log is not verbose: a missing file logs nothing at its level)", at)
}

// Lines is how many lines the assembler has read.
func (a *Assembler) Lines() int64 { return a.line }

// Records is how many of those lines are in OpenSM's log format (a time stamp, the
// thread, the level: opensm/osm_log.c osm_log). None in a file that has lines: it is
// not OpenSM's log (a syslog copy, the wrong file), and nothing in it was checked.
func (a *Assembler) Records() int64 { return a.records }
