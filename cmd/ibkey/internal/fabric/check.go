package fabric

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/partconf"
	"github.com/ibkey/ibkey/internal/query"
	"github.com/ibkey/ibkey/internal/textsafe"
)

// CheckOptions are `ibkey fabric check`'s inputs.
type CheckOptions struct {
	cmdutil.Deps
	Source     *cmdutil.FabricSweep
	Partitions string
	OpenSMConf string
	AllowBoth  bool
	Strict     bool
	Ignore     []string
	SA         saCheck // --sa, --sm-key (check_sa.go)
}

// NewCmdCheck is `ibkey fabric check`; runF replaces the run in tests.
func NewCmdCheck(f *cmdutil.Factory, runF func(*CheckOptions) error) *cobra.Command {
	o := &CheckOptions{}
	c := &cobra.Command{
		Use:   "check",
		Short: "Audit the P_Key tables, and compare them with a partitions.conf",
		Long: `Audit one sweep of the subnet (or a saved one, --fabric-file). Each finding
names the ports involved and says what to do. The rules (each one --ignore
accepts):

Errors:
  hca-key-not-on-switch   a CA port holds a key the switch port it is cabled
                          to lacks, and that switch port enforces partitions:
                          it drops them (a warning when its enforcement is off
                          or was not read)
Warnings (policy, what could change, and what could not be checked):
  switch-key-not-on-hca   a switch port holds a key the CA port it faces
                          lacks: the CA drops those packets itself (OpenSM
                          leaves such stale keys)
  limited-only-partition  every member of a partition is limited: nobody can
                          talk in it
  enforcement-off         partition enforcement off on a switch port facing a
                          CA
  enforcing-between-switches
                          a switch port cabled to another switch enforces
                          partitions and lacks some the end ports hold
                          (OpenSM turns that enforcement off)
  table-full              a table with no free entry: the SM cannot add a
                          partition
  port-not-active         a cabled port that is not ACTIVE
  default-not-at-index-0  index 0 of a CA port is not the default partition:
                          IPoIB's parent interface and jobs using index 0 are
                          in another one
  not-read                a node, port, table or link the sweep could not read
  sweep-incomplete        the sweep stopped early (its timeout)

With --partitions FILE (an OpenSM partitions.conf) every end port's table is
also compared with the one OpenSM would program from FILE, and each switch port
facing a CA with that CA port's:
  partitions-missing-key       (error) FILE gives the port a key its table
                               lacks
  partitions-extra-key         (error) the table holds a key FILE does not
                               give it
  partitions-wrong-membership  (error) full where FILE says limited, or the
                               reverse
  partitions-table-overflow    (error) FILE gives the port more keys than its
                               table holds
  partitions-file-rejected     (error) OpenSM rejects FILE and applies its
                               fallback
  partitions-index-moved       (warning) the keys are right, but OpenSM will
                               move some to other indexes when it next reads
                               the table (it keeps keys where it finds them,
                               except at index 0)
  partitions-next-pass         (warning) the table is what OpenSM programs in
                               one pass (-W, 0xffff written over 0x7fff at
                               index 0); its next pass adds 0x7fff
  guid-not-in-fabric           (warning) FILE names a port GUID the fabric does
                               not have
SELF is the port whose LID the ports report as their SM LID; --allow-both
mirrors OpenSM's -W. --ignore RULE,... drops findings of those rules (the
simulator, ibsim, reports enforcement off on every switch port: --ignore
enforcement-off).

A running OpenSM does not re-read a table it programmed (only a new or reset
port's, or every table when it starts): kill -HUP re-reads partitions.conf but
leaves a table changed behind its back as it is. The actions say so.

With --sa the Subnet Manager's SA is asked too (SubnAdmGet, with --sm-key,
OpenSM's sa_key, default 1):
  sa-table-differs             (error) the SM believes a port's table holds
                               something else (P_KeyTableRecord)
  sa-view-not-file             (error) with --partitions: the SM's view of a
                               table is not what FILE gives the port
  ipoib-group-missing          (error) an ipoib partition has no IPoIB
                               broadcast group
  ipoib-group-differs          (error) its group's Q_Key, MTU or rate is not
                               FILE's
The SA answers only for ports and groups of the asking port's partitions: what
it did not answer is not checked (exit 4); ask from a port in every partition,
such as the SM's.

JSON (-o json), schema schemas/fabric-check.schema.json: {"schema_version":1,
"source","partitions_file","findings":[{"severity","rule","ports":[{"node_guid",
"port","node_desc"}],"pkeys":[],"message","action","at"?}],"errors","warnings",
"incomplete"?:[{"kind","message"}]} (at: FILE:LINE:COLUMN of a --partitions
line; incomplete: what was not checked, present whenever something was: on exit
4, and on exit 1 beside the errors found, never on exit 0; kind partial-sweep,
unread-node, unread-table or not-checked).`,
		Example: `  ibkey fabric check --ibsim
  ibkey fabric check --partitions /etc/opensm/partitions.conf --strict
  ibkey fabric check --fabric-file fabric.json -o json`,
		Args: cmdutil.NoArgs,
		RunE: cmdutil.RunE(f, o, &o.Deps, nil, runF, runCheck),
	}
	o.Source = cmdutil.AddFabricSweepFlags(c, f)
	c.Flags().StringVar(&o.Partitions, "partitions", "", "compare the tables with what OpenSM programs from this partitions.conf (`FILE`)")
	c.Flags().StringVar(&o.OpenSMConf, "opensm-conf", "", "read OpenSM's options from its opensm.conf (`FILE`): part_enforce, allow_both_pkeys and keep_pkey_indexes replace --allow-both and the defaults, partition_config_file is the default --partitions (exit 4 when it is not here); a guid not the master SM's port is noted")
	c.Flags().BoolVar(&o.AllowBoth, "allow-both", false, "OpenSM runs with -W (allow_both_pkeys): both gives a full and a limited entry")
	c.Flags().BoolVar(&o.Strict, "strict", false, "exit 1 on warnings too")
	c.Flags().StringSliceVar(&o.Ignore, "ignore", nil, "drop findings of these `RULES` (comma-separated, e.g. enforcement-off)")
	_ = c.MarkFlagFilename("partitions")
	_ = c.MarkFlagFilename("opensm-conf")
	_ = c.RegisterFlagCompletionFunc("ignore", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return checkRules(), cobra.ShellCompDirectiveNoFileComp
	})
	addSACheckFlags(c, &o.SA)
	fileOnly := o.Source.MAD.NoMADs
	o.Source.MAD.NoMADs = func() string { // --sa asks the SA also of a saved sweep
		if o.SA.Ask {
			return ""
		}
		return fileOnly()
	}
	cmdutil.SetExits(c,
		cmdutil.ExitMeaning{Code: cmdutil.ExitOK, Meaning: "no errors (warnings allowed unless --strict)"},
		cmdutil.ExitMeaning{Code: cmdutil.ExitNo, Meaning: "errors (or warnings with --strict) in what was read, also when something was not checked: what was found is definite, and stderr and the JSON's incomplete still name what was not checked"},
		cmdutil.ExitMeaning{Code: cmdutil.ExitUsage, Meaning: "bad usage, --fabric-file or --partitions file"},
		cmdutil.ExitMeaning{Code: cmdutil.ExitEnv, Meaning: "no fabric access"},
		cmdutil.ExitMeaning{Code: cmdutil.ExitIncomplete, Meaning: "no error found but something not checked: a partial sweep, a saved one without tables (--no-tables), SA records not answered, an --opensm-conf partition_config_file not on this machine or relative (not compared), or a --partitions file whose outcome in OpenSM cannot be predicted (its partitions-* findings, and --sa's comparisons with it, are then no verdict and alone exit 4): findings printed first, what was not checked named on stderr"},
	)
	return c
}

// checkRules are what --ignore accepts: the audit's rules (partconf.AuditRules, the
// list the exporter exports too) and --sa's; made when asked for (a check run, a
// completion), not with the command tree.
func checkRules() []string {
	var rules []string
	for _, r := range partconf.AuditRules(true) {
		rules = append(rules, r.Rule)
	}
	return append(rules, RuleSATableDiffers, RuleSAViewNotFile, RuleIPoIBGroupMissing, RuleIPoIBGroupDiffers)
}

func runCheck(o *CheckOptions) error {
	ignore := map[string]bool{}
	rules := checkRules()
	for _, r := range o.Ignore {
		if !slices.Contains(rules, r) {
			return cmdutil.Usagef("invalid --ignore %q (accepted: %s)", r, strings.Join(rules, ", "))
		}
		ignore[r] = true
	}
	var osm *partconf.OpenSMConf
	var conf *partconf.Config
	// confGap: the conf names the partitions.conf OpenSM programs from, and it could
	// not be compared (relative, or not on this machine): not checked, so exit 4 with
	// no definite finding, never an all-clear.
	var confGap *cmdutil.Incomplete
	if o.OpenSMConf != "" {
		var src query.ConfPartitions
		var err error
		if osm, src, err = query.ReadOpenSMConf(o.OpenSMConf, &o.Partitions); err != nil {
			return err
		}
		if src == query.ConfEmpty {
			conf = partconf.NoFile()
		}
		for _, w := range osm.Warnings {
			o.Notices.Warn(w)
		}
		if note := src.AuditNote(o.OpenSMConf, osm); note != "" {
			o.Notices.Note(note)
			if src.NotCompared() {
				confGap = &cmdutil.Incomplete{Kind: cmdutil.IncompleteNotChecked, Message: note}
			}
		}
	}
	if o.Partitions != "" {
		// The one read of a partitions.conf (query.ReadPartitions): bounded, and "-"
		// or a pipe (`--partitions <(ssh sm01 cat /etc/opensm/partitions.conf)`) read
		// as a stream, as partitions and can-talk read theirs.
		p, err := query.ReadPartitions(o.Partitions, o.IO.In, partconf.Options{})
		if err != nil {
			return err
		}
		conf = p.Config
	}
	if err := o.SA.validate(); err != nil {
		return err
	}
	// The exit follows the one table (cmdutil.ExitCodes): 1 when a finding is a
	// definite failure (an error, or with --strict a warning, in what was read), even
	// with something not checked (a partial sweep, an audit gap, a --partitions file
	// whose outcome in OpenSM cannot be predicted), which stderr still names; 4 when
	// nothing definite was found and something was not checked; else 0.
	definite := false
	err := o.Source.Load(o.Ctx, o.Notices, false, true, func(fab *fabric.Fabric) error {
		if note := osm.NotMaster(fab); note != "" {
			o.Notices.Note(note)
		}
		res, model := partconf.AuditFabric(fab, conf, osm, o.AllowBoth)
		all := res.Findings
		// saGaps: the SA records --sa did not get, after the sweep's own gaps in
		// res.NotChecked.
		var saGaps []fabric.NotChecked
		if o.SA.Ask {
			saf, nc, err := o.saFindings(fab, conf, model)
			if err != nil {
				return &query.EnvError{Msg: fmt.Sprintf("--sa: %v", err)}
			}
			all, saGaps = append(all, saf...), nc
			res.NotChecked = append(res.NotChecked, nc...)
		}
		var uncertain *cmdutil.Incomplete
		fromFile := map[string]bool{}
		if conf != nil {
			uncertain = cmdutil.UncertainIncomplete(conf)
			fromFile = fileRules()
		}
		var findings []check.Finding
		var errs, warns int
		for _, fd := range all {
			if ignore[fd.Rule] {
				continue
			}
			findings = append(findings, fd)
			if fd.Severity == check.SeverityError {
				errs++
			} else {
				warns++
			}
			// What was not read is no failure; what is compared with a file OpenSM's
			// handling of which cannot be predicted is no verdict.
			definite = definite || check.HasErrors([]check.Finding{fd}, o.Strict) &&
				fd.Rule != fabric.RuleNotRead && fd.Rule != fabric.RuleSweepIncomplete && (uncertain == nil || !fromFile[fd.Rule])
		}
		check.SortFindings(findings)
		// Load names a partial sweep's gaps (or a saved sweep's missing tables) on
		// stderr; what else the audit could not check (saGaps) is named below, partial
		// sweep or not. The document's incomplete says what was not checked whenever
		// something was: why the command exits 4, or what a definite failure (exit 1)
		// was found beside.
		why := incompleteItems(res.NotChecked)
		if uncertain != nil {
			why = append(why, *uncertain)
		}
		if confGap != nil {
			why = append(why, *confGap)
		}
		if o.Format == cmdutil.FormatJSON {
			var file *string
			if conf != nil {
				file = &o.Partitions // "": partition_config_file empty, OpenSM's own default
			}
			if err := cmdutil.WriteJSON(o.IO.Out, struct {
				Schema     cmdutil.SchemaVersion `json:"schema_version"`
				Source     string                `json:"source"`
				Partitions *string               `json:"partitions_file"` // null: none compared
				Findings   []check.Finding       `json:"findings"`
				Errors     int                   `json:"errors"`
				Warnings   int                   `json:"warnings"`
				Incomplete []cmdutil.Incomplete  `json:"incomplete,omitempty"`
			}{cmdutil.SchemaVersion{}, fab.Source, file, cmdutil.List(findings), errs, warns, why}); err != nil {
				return err
			}
		} else {
			writeFindings(o.IO.Out, fab, findings)
			against := o.Partitions
			if conf != nil && against == "" {
				against = "OpenSM's own Default=0x7fff, ipoib : ALL=full (partition_config_file empty)"
			}
			fmt.Fprintln(o.IO.Out, checkSummary(fab, res.TablesChecked, against, errs, warns, len(all)-len(findings), res.Incomplete() || confGap != nil))
		}
		var after error
		if conf != nil {
			after = cmdutil.Uncertain(o.IO.ErrOut, conf, "the partitions-* findings above are")
		}
		if len(res.Outside) > 0 {
			o.Notices.Note(fmt.Sprintf("%s outside the swept subnet, not audited: %s", textsafe.Plural(len(res.Outside), "port", "ports"), outsideList(fab, res.Outside)))
		}
		if len(saGaps) > 0 {
			fmt.Fprintf(o.IO.ErrOut, "ibkey: audit incomplete: %s; not checked, so no all-clear\n", fabric.NotCheckedSummary(saGaps))
			after = cmdutil.Exit(cmdutil.ExitIncomplete)
		}
		if confGap != nil {
			after = cmdutil.Exit(cmdutil.ExitIncomplete) // named by the note above
		}
		if definite {
			return cmdutil.Exit(cmdutil.ExitNo)
		}
		return after
	})
	if definite && cmdutil.ExitCode(err) == cmdutil.ExitIncomplete {
		return cmdutil.Exit(cmdutil.ExitNo)
	}
	return err
}

// fileRules are the rules whose findings compare the fabric with what OpenSM programs
// from the --partitions file: no verdict when what it does with the file cannot be
// predicted.
func fileRules() map[string]bool {
	m := map[string]bool{RuleSAViewNotFile: true, RuleIPoIBGroupMissing: true, RuleIPoIBGroupDiffers: true}
	for _, r := range partconf.AuditRules(true)[len(partconf.AuditRules(false)):] {
		m[r.Rule] = true
	}
	return m
}

// outsideList names up to four ports outside the subnet, with why.
func outsideList(fab *fabric.Fabric, out []fabric.OutsidePort) string {
	var parts []string
	for _, p := range out {
		parts = append(parts, fmt.Sprintf("%s (%s)", fab.Label(p.PortID), p.Reason))
	}
	return strings.Join(textsafe.Capped(parts, 4), ", ")
}

func writeFindings(w io.Writer, fab *fabric.Fabric, findings []check.Finding) {
	var b strings.Builder
	for _, fd := range findings {
		if fd.Pos.Line > 0 {
			fmt.Fprintf(&b, "%s: ", fd.Pos)
		}
		fmt.Fprintf(&b, "%s: %s [%s]\n", fd.Severity, fd.Message, fd.Rule)
		if len(fd.Ports) > 0 {
			ports := make([]string, len(fd.Ports))
			for i, p := range fd.Ports {
				ports[i] = fmt.Sprintf("%s (node %s)", fab.Label(p.PortID), p.Node)
			}
			fmt.Fprintf(&b, "  ports: %s\n", strings.Join(ports, ", "))
		}
		if fd.Action != "" {
			fmt.Fprintf(&b, "  do: %s\n", fd.Action)
		}
	}
	io.WriteString(w, b.String())
}

// checkSummary is the last line of fabric check: tables is how many tables the audit
// checked (AuditResult.TablesChecked: not those of ports outside the subnet, which it
// does not audit).
func checkSummary(fab *fabric.Fabric, tables int, partitions string, errs, warns, ignored int, incomplete bool) string {
	what := fmt.Sprintf("%s, %s checked", textsafe.Plural(len(fab.Nodes), "node", "nodes"), textsafe.Plural(tables, "P_Key table", "P_Key tables"))
	if partitions != "" {
		what += " against " + partitions
	}
	if ignored > 0 {
		what += fmt.Sprintf("; %d ignored (--ignore)", ignored)
	}
	if errs+warns == 0 {
		if incomplete {
			// Not an all-clear: what was not read is not checked (stderr lists it).
			return fmt.Sprintf("no problems found in what was read (%s); the audit is incomplete: what was not read is not checked", what)
		}
		return fmt.Sprintf("no problems found (%s)", what)
	}
	return fmt.Sprintf("%s, %s (%s)", textsafe.Plural(errs, "error", "errors"), textsafe.Plural(warns, "warning", "warnings"), what)
}
