package sm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/fsread"
	"github.com/ibkey/ibkey/internal/partconf"
	"github.com/ibkey/ibkey/internal/query"
	"github.com/ibkey/ibkey/internal/smlog"
	"github.com/ibkey/ibkey/internal/textsafe"
)

// LogOptions are `ibkey sm log`'s inputs.
type LogOptions struct {
	IO      *cmdutil.IOStreams
	Format  cmdutil.Format
	Notices *cmdutil.Notices
	Ctx     context.Context
	Now     func() time.Time

	// File is the log ("-": standard input); Given: named on the command line, not
	// partconf.DefaultLogFile.
	File   string
	Given  bool
	Follow bool
	// Since keeps the events of the last Since (0: all).
	Since time.Duration
	// Each prints every event instead of one entry per problem.
	Each bool
	// Kinds keeps only these kinds (none: all).
	Kinds []string
	// Year is the year of the log's first line (0: inferred).
	Year int
	// Source names ports: a saved sweep (--fabric-file) or, with a fabric transport
	// chosen explicitly, a sweep now.
	Source     *cmdutil.FabricSweep
	Partitions string
	OpenSM     cmdutil.OpenSMFlags
}

// NewCmdLog is `ibkey sm log`.
func NewCmdLog(f *cmdutil.Factory) *cobra.Command {
	o := &LogOptions{IO: f.IOStreams, Now: f.Now}
	c := &cobra.Command{
		Use:   "log [FILE|-]",
		Short: "Explain the partition and key events of an OpenSM log",
		Long: `Read OpenSM's log (FILE, default ` + partconf.DefaultLogFile + ` or --opensm-conf's log_file,
none with --demo; - for standard input) and explain every partition and key event
in it. For each: when, both
ends by name and port, the key decoded, the rule that failed (in the words can-talk
uses) and what to change.

Events (OpenSM 3.3.23; docs/sm.md lists every message and where it comes from):
  bad-pkey             trap 257: a port dropped a packet for its P_Key
  bad-qkey             trap 258: a UD QP dropped a datagram for its Q_Key
  bad-switch-pkey      trap 259: a switch port dropped a packet (partition enforcement)
  bad-mkey             trap 256: a port refused an SMP's M_Key
  path-refused         the SA refused a PathRecord for a partition (ERR 1F1A, 1F1B,
                       1F1D, 1F1E; MultiPathRecord 4518, 4519, 451C, 451D)
  path-no-partition    a path in a P_Key OpenSM has no partition for (ERR 1F1C, 451A)
  path-no-route        the SA refused a path for routing, not for a partition: no
                       route in the forwarding tables (ERR 1F02, 1F03, 1F05, 1F06,
                       1F07, 1F25; MultiPathRecord 4514, 4515, 4505, 4503, 4516,
                       4520)
  join-refused         the SA refused a multicast join (ERR 1B14, 1B30, 1B31, 1B32;
                       1B11, 1B1B: an IPoIB broadcast group that does not exist)
  untrusted-request    a request that needs the SM_Key came without it (ERR 4608, 430B)
  bad-sm-key           an SA request with a wrong SM_Key, dropped unanswered (ERR 1A04)
  sm-key-mismatch      another SM with another SM_Key (ERR 2F18)
  partitions-rejected  partitions.conf could not be parsed: OpenSM fell back to
                       Default=0x7fff, ipoib : ALL=full, and isolation is gone
  partitions-missing   no partitions.conf: the same fallback (verbose log level)
  partitions-warning   a line OpenSM skipped or read differently (mgid, IP groups,
                       verbose PARSE WARN, duplicated definitions)
  qos-policy-rejected  OpenSM could not use its QoS policy file (ERR AC05 or AC10-
                       AC13, then AC03 or AC04; AC01): it runs without one, and the
                       P_Keys its qos-levels list no longer limit the SA's paths
  pkey-table-full      a port in more partitions than its table holds (ERR 0512)
  enforcement-off      a switch port that cannot hold its CA's partitions: OpenSM
                       switched its enforcement off (ERR 0507)
  pkey-program-failed  OpenSM could not program a table or enforcement bits
  pkey-table-shrunk    a table smaller than OpenSM planned
  notice-not-forwarded a subscriber outside a group's partition, a subscription
                       deleted for a partition no longer shared, or a subscriber
                       that did not answer a notice (ERR 1A06)
  get-timeout          a Get OpenSM sent got no answer, which OpenSM says may be
                       a wrong M_Key (ERR 3120; the line names no port)

The lines of one event are one event: a trap's error-level lines and its info-level
report (which alone has the QP numbers whole: the error line keeps only QP1's low 12
bits, and OpenSM stops reporting a trap repeated 10 times within its aging window),
a parse error and the fallback after it.

A line about partitions or keys that is none of these (another OpenSM version's
wording, or a message ibkey does not explain, such as the QoS policy's ERR AC14) is
shown as "not explained", whatever --kind asks: with such lines and no error the exit
is 4, not 0. The messages of OpenSM 3.3.23's files about partitions, keys and traps
that its source shows are about something else (an SA method it does not serve, an
SM handover, a requester not swept yet) are passed over, each by its code, function
and words; docs/sm.md lists them.

Ports are named from, in this order: a saved sweep (--fabric-file FILE), a sweep now
(only when a fabric transport is chosen: --ibsim, --ca), and the log's own lines (a
trap's report names its issuer's GUID, the SA's refusals name ports by GUID and
description). A LID nothing names stays a LID. With --partitions FILE the fix names
the line to edit.

Repeats are counted: the output has one entry per problem (kind, ends and key), with
how often and when first and last; --each prints every event instead. --since 1h
keeps the last hour. --follow reads the file as tail -F does: to its end, then as
OpenSM writes, surviving rotation (renamed and reopened, or truncated); events are
printed as they come.

The log has no year: it is inferred from the file's last change (--year says it).
OpenSM writes local time.

JSON (-o json; schemas/sm-log.schema.json): {"schema_version":1,"log","lines_read",
"since_at","events":[EVENT],"summary":[GROUP],"not_explained":[LINE],"errors",
"warnings","incomplete"} (incomplete on exit 4: what was not checked); LINE {"code",
"function","level","count","first_at","last_at","first_line","last_line","message"};
EVENT
{"kind","severity","logged_at","line","level","trap","code","key_type","pkey","qkey",
"mkey","sm_key","key","membership","sl","from","to","reporter","switch","mgid",
"qos_level","conf_line","fallback","detail","rule","fix","fix_at","notes",
"log_lines"}, ends {"lid","port_guid","node_guid","node_desc","port","qp","qp_bits",
"gid","names_from"}; GROUP the same without log_lines, with "count","first_at",
"last_at","first_line","last_line","keys". With --follow, one EVENT per line
(schemas/sm-log-event.schema.json), and each line not explained on stderr.`,
		Example: `  ibkey sm log /var/log/opensm.log
  ibkey sm log --fabric-file fabric.json --partitions partitions.conf
  journalctl -u opensm -o cat | ibkey sm log -
  ibkey sm log --follow --since 10m --ibsim
  ibkey sm log --each --kind bad-pkey,path-refused -o json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			var err error
			if o.Format, err = f.Format(); err != nil {
				return err
			}
			o.Notices = f.Notices()
			o.Ctx = cmdutil.Context(c)
			o.File = partconf.DefaultLogFile
			if len(args) == 1 {
				if args[0] == "" {
					return cmdutil.Usagef(`FILE "": give an OpenSM log's path, or - for standard input`)
				}
				o.File, o.Given = args[0], true
			} else if f.IsDemo() {
				// The demo is not this machine: its own OpenSM log, named after the
				// demo fabric's ports, would be neither.
				return &query.EnvError{Msg: "no OpenSM log: the demo has none, and " + partconf.DefaultLogFile + " is this machine's: give a log's path (such as internal/smlog/testdata/lab.log in ibkey's source), or - for standard input"}
			}
			return runLog(o)
		},
	}
	o.Source = cmdutil.AddFabricSweepFlags(c, f)
	fl := c.Flags()
	fl.BoolVarP(&o.Follow, "follow", "F", false, "keep reading as OpenSM writes, surviving rotation (tail -F)")
	fl.DurationVar(&o.Since, "since", 0, "only events of the last `DURATION` (e.g. 1h)")
	fl.BoolVar(&o.Each, "each", false, "print every event, not one entry per problem")
	fl.StringSliceVar(&o.Kinds, "kind", nil, "only these event `KINDS` (comma-separated; see above)")
	fl.IntVar(&o.Year, "year", 0, "the `YEAR` of the log's first line (default: from the file's last change)")
	fl.StringVar(&o.Partitions, "partitions", "", "name the line to edit in this OpenSM partitions.conf (`FILE`)")
	_ = c.MarkFlagFilename("partitions")
	o.OpenSM.AddFlags(c)
	o.OpenSM.AddConfFlag(c, ", log_file is the log read without FILE")
	_ = c.RegisterFlagCompletionFunc("kind", cobra.FixedCompletions(kindNames(), cobra.ShellCompDirectiveNoFileComp))
	_ = c.RegisterFlagCompletionFunc("since", cmdutil.CompleteDurations("10m", "1h", "24h", "168h"))
	cmdutil.SetExits(c,
		cmdutil.ExitMeaning{Code: cmdutil.ExitOK, Meaning: "no partition or key error in the log (warnings allowed)"},
		cmdutil.ExitMeaning{Code: cmdutil.ExitNo, Meaning: "errors found"},
		cmdutil.ExitMeaning{Code: cmdutil.ExitUsage, Meaning: "bad usage, or a FILE given that cannot be read"},
		cmdutil.ExitMeaning{Code: cmdutil.ExitEnv, Meaning: "no log at " + partconf.DefaultLogFile + " (no FILE given), or the fabric cannot be read"},
		cmdutil.ExitMeaning{Code: cmdutil.ExitIncomplete, Meaning: "no error found, but lines about partitions or keys that ibkey does not explain, nothing checked (an empty log, or not OpenSM's), or a partial sweep naming the ports"},
		cmdutil.ExitMeaning{Code: cmdutil.ExitSignal, Meaning: "ended by signal N (with --follow, the way it ends)"},
	)
	return c
}

func (o *LogOptions) validate() error {
	if o.Since < 0 {
		return cmdutil.Usagef("invalid --since %v (accepted: a positive duration, e.g. 1h)", o.Since)
	}
	if o.Year != 0 && (o.Year < 1970 || o.Year > 9999) {
		return cmdutil.Usagef("invalid --year %d (accepted: 1970-9999)", o.Year)
	}
	if o.Follow && o.File == "-" {
		return cmdutil.Usagef("--follow follows a file by name (to survive rotation); standard input is read until it ends without it")
	}
	for _, k := range o.Kinds {
		if !slices.Contains(smlog.Kinds, smlog.Kind(k)) {
			return cmdutil.Usagef("invalid --kind %q (accepted: %s)", k, strings.Join(kindNames(), ", "))
		}
	}
	return nil
}

// readConf reads --opensm-conf (cmdutil.OpenSMFlags.ReadConf): without FILE its
// log_file is the log, and without --partitions its partition_config_file names the
// lines fixes quote. Where OpenSM writes no file ibkey can read (stdout, stderr, a
// path relative to OpenSM's working directory, an empty value) FILE is needed.
func (o *LogOptions) readConf() error {
	if o.OpenSM.Conf == "" {
		return nil
	}
	conf := o.OpenSM.Conf
	osm, src, err := o.OpenSM.ReadConf(&o.Partitions, o.Notices)
	if err != nil {
		return err
	}
	switch file := osm.PartitionsFile(); src {
	case query.ConfEmpty:
		o.Notices.Note(conf + " sets partition_config_file empty: OpenSM reads no partitions.conf and programs its own Default=0x7fff, ipoib : ALL=full; fixes name no line of a file")
	case query.ConfRelative:
		o.Notices.Note(fmt.Sprintf("fixes name no line of a partitions.conf: %s names partition_config_file %s, relative to OpenSM's working directory, which ibkey cannot see (give --partitions)", conf, file))
	case query.ConfMissing:
		o.Notices.Note(fmt.Sprintf("fixes name no line of a partitions.conf: %s names partition_config_file %s, which is not here (give --partitions)", conf, file))
	case query.ConfFound:
		o.Notices.Note("reading " + o.Partitions + ", the partition_config_file of " + conf)
	}
	if o.Given {
		return nil
	}
	path, stream := osm.LogPath()
	switch {
	case stream != "":
		return cmdutil.Usagef("%s sets log_file %q: OpenSM writes its log to %s (under systemd, the journal), not to a file: give it on standard input (journalctl -u opensm -o cat | ibkey sm log -)", conf, osm.LogFile, stream)
	case path == "":
		return cmdutil.Usagef("%s sets log_file empty: OpenSM cannot open that and does not start; give the log's path", conf)
	case !filepath.IsAbs(path):
		return cmdutil.Usagef("%s sets log_file %s, relative to OpenSM's working directory, which ibkey cannot see: give the log's path", conf, path)
	}
	o.File = path
	o.Notices.Note("reading " + path + ", the log_file of " + conf)
	return nil
}

// kindNames are the event kinds --kind accepts.
func kindNames() []string {
	var names []string
	for _, k := range smlog.Kinds {
		names = append(names, string(k))
	}
	return names
}

func runLog(o *LogOptions) error {
	if err := o.validate(); err != nil {
		return err
	}
	if err := o.readConf(); err != nil {
		return err
	}
	// The partitions file is read first: a bad one is reported before anything else.
	x := &smlog.Explainer{}
	if o.Partitions != "" {
		opt, err := o.OpenSM.Options()
		if err != nil {
			return err
		}
		// Read once (the fix quotes its lines), as partitions and can-talk read theirs:
		// a pipe (`--partitions <(ssh sm01 cat ...)`) is read as a stream, and - is
		// standard input unless the log is.
		stdin := o.IO.In
		if o.File == "-" {
			if o.Partitions == "-" {
				return cmdutil.Usagef("--partitions -: standard input is the log; give the partitions file by its path")
			}
			stdin = strings.NewReader("")
		}
		text, name, err := query.ReadPartitionsText(o.Partitions, stdin)
		if err != nil {
			return err
		}
		p := query.NewPartitions(partconf.ParseWith(name, text, opt), opt)
		x.Parts, x.PartsText = p, string(text)
		if p.Config.Rejected {
			o.Notices.Note(fmt.Sprintf("OpenSM rejects %s (first error at %s): it runs with Default=0x7fff, ipoib : ALL=full", o.Partitions, p.Config.RejectedAt))
		}
	}
	// The log is opened before a sweep: a missing file is reported at once.
	in, ref, err := o.openLog()
	if err != nil {
		return err
	}
	if in != nil {
		defer in.Close()
	}
	var found bool
	run := func(f *fabric.Fabric) error {
		var err error
		if found, err = o.read(in, ref, f, x); err == nil && found {
			return cmdutil.Exit(cmdutil.ExitNo)
		}
		return err
	}
	if o.Source.File == "" && !o.Source.MAD.Explicit() {
		return run(nil)
	}
	err = o.Source.Load(o.Ctx, o.Notices, false, false, run)
	// Errors found in the log are definite, whatever the sweep that names the ports
	// could not read (it is named on stderr).
	if se, ok := errors.AsType[*cmdutil.SilentError](err); found && ok && se.Code == cmdutil.ExitIncomplete {
		return cmdutil.Exit(cmdutil.ExitNo)
	}
	return err
}

// openLog opens the log (nil for --follow, which opens it by name itself) and says
// when it was last written (the year of its lines is inferred from it).
func (o *LogOptions) openLog() (io.ReadCloser, time.Time, error) {
	now := o.Now()
	if o.File == "-" {
		return io.NopCloser(o.IO.In), now, nil
	}
	st, err := os.Stat(o.File)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, now, o.notOpened(fmt.Sprintf("no OpenSM log %s: give its path (opensm -f, log_file in opensm.conf), or - for standard input", o.File))
		}
		return nil, now, o.notOpened(err.Error())
	}
	if !st.Mode().IsRegular() {
		return nil, now, cmdutil.Usagef("%s is not a regular file: read a pipe or a device through standard input (ibkey sm log - < %s)", o.File, o.File)
	}
	if o.Follow {
		return nil, st.ModTime(), nil
	}
	f, err := fsread.Open(o.File, 1<<62, "an OpenSM log")
	if err != nil {
		return nil, now, o.notOpened(err.Error())
	}
	return f, st.ModTime(), nil
}

// notOpened is a log that cannot be opened: a FILE given is bad input (exit 2, as
// every file given that cannot be read), partconf.DefaultLogFile is this machine's
// environment (3).
func (o *LogOptions) notOpened(msg string) error {
	if o.Given {
		return cmdutil.Usagef("%s", msg)
	}
	return &query.EnvError{Msg: msg}
}

// read reads the log and prints what it finds; found says whether it holds an error.
func (o *LogOptions) read(in io.Reader, ref time.Time, f *fabric.Fabric, x *smlog.Explainer) (bool, error) {
	loc := time.Local
	if o.Year != 0 {
		// The first line's year: a reference in the last moment of that year makes
		// the assembler take it (and the next one after a December).
		ref = time.Date(o.Year, 12, 31, 23, 59, 59, 0, loc)
	}
	out := newPrinter(o)
	if o.Since > 0 {
		out.since = o.Now().Add(-o.Since)
	}
	sum := smlog.NewSummary()
	var a *smlog.Assembler
	var werr error
	// fileErrs are the partitions and QoS policy file events printed as they came
	// (kind and line) since the last sweep that logged none about their file: when
	// the next such sweep comes, the outputs that print events as they come say for
	// each what the summary's note says (smlog.Assembler.SweptNote).
	streaming := o.Each || o.Follow || o.Format == cmdutil.FormatJSON
	type fileErr struct {
		kind smlog.Kind
		line int64
	}
	var fileErrs []fileErr
	a = smlog.NewAssembler(ref, loc, func(ev *smlog.Event) {
		// Without --since, out.since is the zero time: no event is before it.
		if werr != nil || ev.Time.Before(out.since) || len(o.Kinds) > 0 && !slices.Contains(o.Kinds, string(ev.Kind)) {
			return
		}
		g := sum.Add(ev)
		if streaming {
			ex := x.Explain(ev) // the ends' QP numbers and times are the event's own
			werr = out.event(ev, &ex)
			if ev.Kind == smlog.KindConfigRejected || ev.Kind == smlog.KindConfigMissing || ev.Kind == smlog.KindQoSRejected {
				fileErrs = append(fileErrs, fileErr{ev.Kind, ev.Line})
			}
		}
		if g.First != ev {
			a.Recycle(ev) // printed and counted: only a group's first event is kept
		}
	})
	// The log lines go only into JSON events.
	a.NoLines = o.Format != cmdutil.FormatJSON
	// Lines about partitions or keys that no event holds are shown whatever --kind
	// asks (one may be an event of that kind ibkey did not read); --follow names
	// each on stderr as it comes (its stdout is events only).
	unx := &unexplained{}
	a.Unexplained = func(l *smlog.Unexplained) {
		if l.Time.Before(out.since) {
			return
		}
		if o.Follow {
			o.Notices.Warn(fmt.Sprintf("line %d not explained: %s", l.Line, textsafe.String(l.Text())))
		}
		unx.add(l)
	}
	a.Swept = func(s smlog.Sweep) {
		fileErrs = slices.DeleteFunc(fileErrs, func(e fileErr) bool {
			if (e.kind == smlog.KindQoSRejected) != s.QoS {
				return false // the other file's
			}
			o.Notices.Note(fmt.Sprintf("%s at line %d: %s", e.kind, e.line, a.SweptNote(s)))
			return true
		})
	}
	x.R = smlog.NewResolver(f, a.Names)
	out.begin()
	var err error
	if o.Follow {
		err = smlog.Follow(o.Ctx, o.File, a, smlog.FollowOptions{Notice: o.Notices.Note})
	} else {
		err = smlog.Read(o.Ctx, in, a)
	}
	if werr != nil {
		return false, werr
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		if o.Ctx.Err() == nil {
			return false, &query.EnvError{Msg: fmt.Sprintf("reading %s: %v", o.File, err)}
		}
	}
	// The summary is explained with everything the log said (names learned after a
	// group's first event).
	// errs and warns count the events of each severity; found: errors.
	errs, warns := 0, 0
	for _, g := range sum.Groups {
		ex := x.ExplainGroup(g)
		// The partitions and QoS policy file kinds' note ("" for the kinds about no file).
		if n := a.SweptSince(g.First.Kind, g.LastLine); n != "" {
			ex.Notes = append(ex.Notes, n)
		}
		g.Explanation = &ex
		if smlog.SeverityOf(g.First.Kind) == check.SeverityError {
			errs += g.Count
		} else {
			warns += g.Count
		}
	}
	found := errs > 0
	var incomplete []cmdutil.Incomplete
	if _, what := unchecked(a.Lines(), a.Records()); what != "" {
		incomplete = append(incomplete, cmdutil.Incomplete{Kind: cmdutil.IncompleteNotChecked, Message: fmt.Sprintf("%s: %s, so nothing was checked", o.File, what)})
	}
	if i := unx.incomplete(o.File); i != nil {
		incomplete = append(incomplete, *i)
	}
	if f != nil {
		if msg := fabric.NotCheckedSummary(f.NotRead(false)); msg != "" {
			incomplete = append(incomplete, cmdutil.Incomplete{Kind: cmdutil.IncompletePartialSweep, Message: "the sweep naming the ports is partial: " + msg})
		}
	}
	if err := out.end(sum, errs, warns, a.Lines(), a.Records(), unx, incomplete); err != nil {
		return found, err
	}
	if err := o.nothingChecked(a.Lines(), a.Records()); err != nil {
		return found, err
	}
	if len(unx.groups) > 0 {
		// Exit 1 when errors were found: they are definite whatever was not explained.
		fmt.Fprintf(o.IO.ErrOut, "ibkey: %s\n", unx.summary(o.File))
		if !found {
			return false, cmdutil.Exit(cmdutil.ExitIncomplete)
		}
	}
	return found, nil
}

// unchecked is why a read of the log checked nothing, "" and "" when it checked
// something: it has no line, or none of its lines has OpenSM's "Mon DD HH:MM:SS USEC
// [THREAD] 0xLEVEL -> " prefix (opensm/osm_log.c osm_log), such as a syslog copy or
// the wrong file. "No event" would then be a verdict on a log never seen. It is the
// one decision: the table's summary line says summary, and the command exits 4 with
// detail on stderr (nothingChecked), --follow included (it reads the file from its
// start, so a follow that saw no OpenSM line checked nothing either).
func unchecked(lines, records int64) (summary, detail string) {
	switch {
	case records > 0:
		return "", ""
	case lines == 0:
		return "the log is empty", "it is empty"
	}
	return "no line is in OpenSM's log format", fmt.Sprintf("none of its %s is in OpenSM's log format (Mon DD HH:MM:SS USEC [THREAD] 0xLEVEL -> FUNCTION: MESSAGE)",
		textsafe.Plural(int(lines), "line", "lines"))
}

// nothingChecked is exit 4, said on stderr, when the log read checked nothing
// (unchecked).
func (o *LogOptions) nothingChecked(lines, records int64) error {
	_, what := unchecked(lines, records)
	if what == "" {
		return nil
	}
	fmt.Fprintf(o.IO.ErrOut, "ibkey: %s: %s, so nothing was checked: give OpenSM's own log file (opensm -f, log_file in opensm.conf)\n",
		textsafe.String(o.File), what)
	return cmdutil.Exit(cmdutil.ExitIncomplete)
}
