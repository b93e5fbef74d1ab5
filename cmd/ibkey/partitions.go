package main

import (
	"fmt"
	"io"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/check/partconf"
	"github.com/ibkey/ibkey/internal/query"
)

// PartitionsOptions are the flags shared by `ibkey partitions` subcommands (and, for
// GUID endpoints, `ibkey can-talk --partitions`): how OpenSM runs with the file.
type PartitionsOptions struct {
	*Globals
	AllowBoth bool   // opensm -W (allow_both_pkeys)
	SMGUID    string // the port OpenSM runs on: what SELF means
	TableSize int    // P_Key table length of the ports
}

// addOpenSMFlags binds the flags that say how OpenSM runs.
func (o *PartitionsOptions) addOpenSMFlags(c *cobra.Command) {
	c.Flags().BoolVar(&o.AllowBoth, "allow-both", false, "OpenSM runs with -W (allow_both_pkeys): `both` gives a full and a limited entry")
	c.Flags().StringVar(&o.SMGUID, "sm-guid", "", "port `GUID` of the port OpenSM runs on: what SELF means")
	c.Flags().IntVar(&o.TableSize, "table-size", 128, "P_Key table length of the ports (`N`; PartitionCap: 128 on mlx5, 64 in ibsim)")
}

// openSMOptions validates the flags.
func (o *PartitionsOptions) openSMOptions() (partconf.Options, error) {
	opt := partconf.Options{AllowBoth: o.AllowBoth, TableSize: o.TableSize}
	if o.TableSize < 1 || o.TableSize > 0xffff {
		return opt, &query.UsageError{Msg: fmt.Sprintf("invalid --table-size %d (accepted: 1-65535, the port's PartitionCap)", o.TableSize)}
	}
	if o.SMGUID != "" {
		g, err := parseGUIDArg(o.SMGUID)
		if err != nil {
			return opt, err
		}
		opt.SMGUID = g
	}
	return opt, nil
}

// load reads the file with the flags' options.
func (o *PartitionsOptions) load(path string) (*query.Partitions, error) {
	opt, err := o.openSMOptions()
	if err != nil {
		return nil, err
	}
	// Parsing a generated 4 MB file allocates ~75 MB of short-lived strings and items;
	// collecting less often during the parse saves a quarter of the CPU time of
	// `can-talk --partitions` (scripts/bench), for ~20 MB more peak memory.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	return query.ReadPartitions(path, opt)
}

// parseGUIDArg reads a port GUID: hex with or without 0x, the colon form, or guid=GUID.
func parseGUIDArg(s string) (uint64, error) {
	spec, err := check.ParseEndpoint("guid=" + strings.TrimPrefix(s, "guid="))
	if err != nil {
		return 0, err
	}
	return spec.GUID, nil
}

func newPartitionsCmd(g *Globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "partitions",
		Short: "Check an OpenSM partitions.conf, show the P_Key tables it gives, and who can talk",
		Long: `Read an OpenSM partitions.conf the way OpenSM 3.3 reads it (lab-checked against
OpenSM 3.3.23 on the ibsim simulator) and answer three questions without a fabric:

  check FILE            what OpenSM rejects or silently gets wrong, with file:line:col and a fix
  show FILE [GUID...]   each partition's members, and the P_Key table each port gets
  matrix FILE           who can talk to whom: a grid for a few ports, a summary for many

A file OpenSM rejects is not applied at all: OpenSM falls back to
Default=0x7fff : ALL=full, every port becomes a full member of the default partition
and all isolation is lost. check says so first; show and matrix show that fallback.

The ports are the GUIDs the file names (show also takes more on the command line).
They are taken for CA ports: ALL_SWITCHES and ALL_ROUTERS name none of them.`,
		Example: `  ibkey partitions check /etc/opensm/partitions.conf
  ibkey partitions show partitions.conf --sm-guid 0x0002c90300000201
  ibkey partitions matrix partitions.conf -o json`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, args []string) error { return c.Help() },
	}
	c.AddCommand(newPartitionsCheckCmd(g), newPartitionsShowCmd(g), newPartitionsMatrixCmd(g))
	return c
}

// rejectedWarning is the loud line show and matrix print when OpenSM would drop the file.
func rejectedWarning(c *partconf.Config) string {
	return fmt.Sprintf("OpenSM REJECTS %s (first error at %s) and applies Default=0x7fff : ALL=full instead: every port is a full member of the default partition, ALL ISOLATION IS LOST; what follows is that fallback (see 'ibkey partitions check %s')",
		c.File, c.RejectedAt, c.File)
}

// ---- check ----

// PartitionsCheckOptions holds `ibkey partitions check`'s flags.
type PartitionsCheckOptions struct {
	PartitionsOptions
	File   string
	Strict bool
}

func newPartitionsCheckCmd(g *Globals) *cobra.Command {
	o := &PartitionsCheckOptions{PartitionsOptions: PartitionsOptions{Globals: g}}
	c := &cobra.Command{
		Use:   "check FILE",
		Short: "Lint an OpenSM partitions.conf: what OpenSM rejects, and mistakes it accepts silently",
		Long: `Lint an OpenSM partitions.conf. Each finding is printed like a compiler message:
FILE:LINE:COL: SEVERITY: MESSAGE [RULE], then the fix.

Errors are what OpenSM rejects. Any error makes OpenSM drop the WHOLE file and apply
Default=0x7fff : ALL=full instead (all isolation lost): the first finding then says so.
Warnings are what OpenSM accepts but probably not as meant: duplicate keys (merged),
two names for one key, a partition where every member is limited (nobody can talk in
it), a port listed twice with different memberships, more partitions than a table holds
(--table-size), 'both' without -W (--allow-both), no Default line, the SM's own port a
limited member of the default partition, keys OpenSM generates.

Exit codes: 0 no errors (warnings allowed unless --strict); 1 errors (or warnings with
--strict); 2 bad usage or a file that cannot be read.

JSON (-o json): {"file","rejected","findings":[{"severity","file","line","column",
"rule","message","hint"}],"errors","warnings"}.`,
		Example: `  ibkey partitions check /etc/opensm/partitions.conf
  ibkey partitions check partitions.conf --allow-both --table-size 64 --strict
  ibkey partitions check partitions.conf -o json`,
		Args:              usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: completePartitionsFile,
		RunE: func(c *cobra.Command, args []string) error {
			o.File = args[0]
			return runPartitionsCheck(o)
		},
	}
	o.addOpenSMFlags(c)
	c.Flags().BoolVar(&o.Strict, "strict", false, "exit 1 on warnings too")
	return c
}

type findingJSON struct {
	Severity string `json:"severity"`
	File     string `json:"file"`
	Line     int    `json:"line"`
	Column   int    `json:"column"`
	Rule     string `json:"rule"`
	Message  string `json:"message"`
	Hint     string `json:"hint"`
}

func runPartitionsCheck(o *PartitionsCheckOptions) error {
	f, err := o.Format()
	if err != nil {
		return err
	}
	p, err := o.load(o.File)
	if err != nil {
		return err
	}
	c := p.Config
	findings := partconf.Lint(c, partconf.LintOptions{AllowBoth: o.AllowBoth, TableSize: o.TableSize})
	var errs, warns int
	for _, fd := range findings {
		if fd.Severity == partconf.Error {
			errs++
		} else {
			warns++
		}
	}
	if f == formatJSON {
		out := struct {
			File     string        `json:"file"`
			Rejected bool          `json:"rejected"`
			Findings []findingJSON `json:"findings"`
			Errors   int           `json:"errors"`
			Warnings int           `json:"warnings"`
		}{c.File, c.Rejected, []findingJSON{}, errs, warns}
		for _, fd := range findings {
			out.Findings = append(out.Findings, findingJSON{fd.Severity.String(), fd.Pos.File, fd.Pos.Line, fd.Pos.Col, fd.Rule, fd.Message, fd.Action})
		}
		if err := writeJSON(o.IO.Out, out); err != nil {
			return err
		}
	} else {
		writeFindings(o.IO.Out, findings, f == formatTable && o.IO.OutTTY && !o.NoColor && o.Getenv("NO_COLOR") == "")
		fmt.Fprintln(o.IO.Out, checkSummary(p, errs, warns))
	}
	if errs > 0 || (o.Strict && warns > 0) {
		return &silentError{code: exitNo}
	}
	return nil
}

// writeFindings prints compiler-style lines; the rejection headline in red on a terminal.
func writeFindings(w io.Writer, findings []partconf.Finding, color bool) {
	var b strings.Builder
	for _, fd := range findings {
		line := fmt.Sprintf("%s: %s: %s [%s]", fd.Pos, fd.Severity, fd.Message, fd.Rule)
		if fd.Rule == "file-rejected" && color {
			line = "\x1b[1;31m" + line + "\x1b[0m"
		}
		b.WriteString(line + "\n")
		if fd.Action != "" {
			b.WriteString("  fix: " + fd.Action + "\n")
		}
	}
	io.WriteString(w, b.String())
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

func checkSummary(p *query.Partitions, errs, warns int) string {
	c := p.Config
	size := fmt.Sprintf("%s, %s", plural(len(c.Partitions), "partition", "partitions"), plural(len(p.FileGUIDs), "port GUID", "port GUIDs"))
	switch {
	case c.Rejected:
		return fmt.Sprintf("%s: %s, %s: OPENSM REJECTS THIS FILE and applies Default=0x7fff : ALL=full", c.File, plural(errs, "error", "errors"), plural(warns, "warning", "warnings"))
	case errs+warns == 0:
		return fmt.Sprintf("%s: no problems found (%s)", c.File, size)
	}
	return fmt.Sprintf("%s: %s, %s (%s)", c.File, plural(errs, "error", "errors"), plural(warns, "warning", "warnings"), size)
}

// ---- show ----

// PartitionsShowOptions holds `ibkey partitions show`'s arguments.
type PartitionsShowOptions struct {
	PartitionsOptions
	File     string
	GUIDs    []string
	Previous string
}

func newPartitionsShowCmd(g *Globals) *cobra.Command {
	o := &PartitionsShowOptions{PartitionsOptions: PartitionsOptions{Globals: g}}
	c := &cobra.Command{
		Use:   "show FILE [GUID...]",
		Short: "Show each partition's members and the P_Key table OpenSM programs on each port",
		Long: `Show what OpenSM does with a partitions.conf:

Partitions: one row per member item, in the order OpenSM applies them (for a port
named twice, the last item wins): key, name, flags, the membership the item gives and
the member, keywords written as the rule they stand for (ALL: every port, ALL_CAS:
every CA port, SELF: the SM's port, --sm-guid), and where it is written.

Ports: for each port GUID the file names (and each GUID given on the command line),
the P_Key table OpenSM programs, in the order it fills it (index 0 first: the indx0
partition, else the default partition, then keys in OpenSM's map order), with the item
that decided each entry. A GUID the file does not name gets only what ALL / ALL_CAS
give it, and says so. Entries past --table-size are dropped, as OpenSM does.

The indexes are those of a port whose table held only 0xffff before (a fresh port).
OpenSM keeps a key at its index across reconfigurations, so after an earlier
configuration the indexes differ and removed partitions leave holes (0x0000): give
that configuration with --previous FILE (lab-checked for keys added, removed and
changed; indx0 changes are not modelled).

A file OpenSM rejects is shown as the fallback OpenSM applies (Default=0x7fff :
ALL=full), with a warning.

JSON (-o json): {"file","rejected","applied":"file"|"opensm_default","previous"?,
"allow_both","sm_guid","table_size","partitions":[{"key","name","flags","ipoib",
"defined_at","members":[{"member","kind","rule","membership","at"}]}],
"ports":[{"guid","in_file","sm","table_size","entries":[{"index","pkey","key",
"membership","valid","partition","decided_by","at","hole"?,"before"?,"kept"?}],
"dropped":[{"pkey","membership","partition","decided_by","at"}]}]}.`,
		Example: `  ibkey partitions show partitions.conf
  ibkey partitions show partitions.conf 0x0002c90300000299 --sm-guid 0x0002c90300000201
  ibkey partitions show new.conf --previous old.conf -o json`,
		Args:              usageArgs(cobra.MinimumNArgs(1)),
		ValidArgsFunction: completePartitionsFileThenGUIDs,
		RunE: func(c *cobra.Command, args []string) error {
			o.File, o.GUIDs = args[0], args[1:]
			return runPartitionsShow(o)
		},
	}
	o.addOpenSMFlags(c)
	c.Flags().StringVar(&o.Previous, "previous", "", "the configuration OpenSM applied before (`FILE`): keys keep their index, removed ones leave holes")
	_ = c.MarkFlagFilename("previous")
	return c
}

type memberJSON struct {
	Member     string `json:"member"`
	Kind       string `json:"kind"`
	Rule       string `json:"rule"`
	Membership string `json:"membership"`
	At         string `json:"at"`
}

type partitionJSON struct {
	Key       string       `json:"key"`
	Name      string       `json:"name"`
	Flags     []string     `json:"flags"`
	IPoIB     bool         `json:"ipoib"`
	DefinedAt []string     `json:"defined_at"`
	Members   []memberJSON `json:"members"`
}

type tableEntryJSON struct {
	Index      int     `json:"index"`
	PKey       string  `json:"pkey"`
	Key        string  `json:"key"`
	Membership *string `json:"membership"`
	Valid      bool    `json:"valid"`
	Partition  *string `json:"partition"`
	DecidedBy  *string `json:"decided_by"`
	At         *string `json:"at"`
	Hole       bool    `json:"hole,omitempty"`
	Before     *string `json:"before,omitempty"`
	Kept       *bool   `json:"kept,omitempty"`
}

type droppedJSON struct {
	PKey       string `json:"pkey"`
	Membership string `json:"membership"`
	Partition  string `json:"partition"`
	DecidedBy  string `json:"decided_by"`
	At         string `json:"at"`
}

type portTableJSON struct {
	GUID      string           `json:"guid"`
	InFile    bool             `json:"in_file"`
	SM        bool             `json:"sm"`
	TableSize int              `json:"table_size"`
	Entries   []tableEntryJSON `json:"entries"`
	Dropped   []droppedJSON    `json:"dropped"`
}

type showJSON struct {
	File       string          `json:"file"`
	Rejected   bool            `json:"rejected"`
	Applied    string          `json:"applied"`
	Previous   string          `json:"previous,omitempty"`
	AllowBoth  bool            `json:"allow_both"`
	SMGUID     *string         `json:"sm_guid"`
	TableSize  int             `json:"table_size"`
	Partitions []partitionJSON `json:"partitions"`
	Ports      []portTableJSON `json:"ports"`
}

// memberRule says what a member item names, keywords as the rule they stand for.
func memberRule(m *partconf.Member, sm uint64) string {
	switch m.Kind {
	case partconf.KindGUID:
		return check.FormatGUID(m.GUID)
	case partconf.KindAll:
		return "ALL: every port"
	case partconf.KindAllCAs:
		return "ALL_CAS: every CA port"
	case partconf.KindAllSwitches:
		return "ALL_SWITCHES: every switch's port 0"
	case partconf.KindAllRouters:
		return "ALL_ROUTERS: every router port"
	case partconf.KindSelf:
		if sm == 0 {
			return "SELF: the SM's port (unknown: give --sm-guid)"
		}
		return "SELF: the SM's port " + check.FormatGUID(sm)
	}
	return m.Text
}

// effectiveMembership is what an item gives: both is full without -W.
func effectiveMembership(m *partconf.Member, allowBoth bool) string {
	if m.Membership == partconf.FlagBoth && !allowBoth {
		return "full (both without -W)"
	}
	return m.Membership.String()
}

// posText prints where an item is written. Items without a line are OpenSM's: the
// implicit Default items it applies before the file (ALL=limited, SELF=full), or its
// fallback for a rejected file (ALL=full).
func posText(p partconf.Pos, src *partconf.Config) string {
	switch {
	case p.Line == 0 && src.Rejected:
		return src.File + ":(fallback)"
	case p.Line == 0:
		return src.File + ":(implicit)"
	}
	return p.String()
}

func partitionFlags(p *partconf.Partition) []string {
	out := []string{}
	seen := map[string]bool{}
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, d := range p.Defs {
		if d.IPoIB {
			add("ipoib")
		}
		if d.Indx0 {
			add("indx0")
		}
		for _, f := range d.Flags {
			switch {
			case f.Name == "ipoib":
			case f.Name != "":
				add(f.Name + "=" + f.Value)
			case f.Text != "" && f.Text != "indx0":
				add(f.Text + " (ignored)")
			}
		}
	}
	return out
}

func partitionsJSON(c, src *partconf.Config, opt partconf.Options) []partitionJSON {
	out := []partitionJSON{}
	for _, p := range keyOrder(c.Partitions) {
		pj := partitionJSON{Key: fmt.Sprintf("0x%04x", p.Key), Name: p.Name, Flags: partitionFlags(p), IPoIB: p.IPoIB, DefinedAt: []string{}, Members: []memberJSON{}}
		for _, d := range p.Defs {
			pj.DefinedAt = append(pj.DefinedAt, posText(d.Pos, src))
		}
		for _, m := range p.Members {
			pj.Members = append(pj.Members, memberJSON{Member: m.Text, Kind: m.Kind.String(), Rule: memberRule(m, opt.SMGUID),
				Membership: effectiveMembership(m, opt.AllowBoth), At: posText(m.Pos, src)})
		}
		out = append(out, pj)
	}
	return out
}

func strp(s string) *string { return &s }

// keyOrder sorts partitions for people: the default partition first, then by key (OpenSM
// applies them in its map order, which only the tables show).
func keyOrder(ps []*partconf.Partition) []*partconf.Partition {
	out := append([]*partconf.Partition(nil), ps...)
	sort.SliceStable(out, func(i, j int) bool { return keyLess(out[i].Key, out[j].Key) })
	return out
}

func keyLess(a, b uint16) bool {
	if (a == check.DefaultKey) != (b == check.DefaultKey) {
		return a == check.DefaultKey
	}
	return a < b
}

// portTables builds the per-port tables, with --previous when given.
func portTables(p *query.Partitions, m *partconf.Model, prev *partconf.Model) []portTableJSON {
	var out []portTableJSON
	for _, port := range m.Ports {
		pj := portTableJSON{GUID: check.FormatGUID(port.GUID), InFile: p.InFile(port.GUID), SM: port.GUID == p.Options.SMGUID,
			TableSize: p.Options.TableSize, Entries: []tableEntryJSON{}, Dropped: []droppedJSON{}}
		entry := func(i int, e *partconf.Entry) tableEntryJSON {
			if e == nil {
				return tableEntryJSON{Index: i, PKey: "0x0000", Key: "0x0000"}
			}
			ms := e.PKey.Membership().String()
			return tableEntryJSON{Index: i, PKey: e.PKey.String(), Key: e.PKey.KeyString(), Membership: &ms, Valid: true,
				Partition: strp(e.Partition.Name), DecidedBy: strp(e.DecidedBy.Text), At: strp(posText(e.DecidedBy.Pos, p.Config))}
		}
		drop := func(e partconf.Entry) droppedJSON {
			return droppedJSON{e.PKey.String(), e.PKey.Membership().String(), e.Partition.Name, e.DecidedBy.Text, posText(e.DecidedBy.Pos, p.Config)}
		}
		table := m.Table(port.GUID)
		if prev == nil {
			for i := range table {
				pj.Entries = append(pj.Entries, entry(i, &table[i]))
			}
			// The model keeps the first TableSize entries; the rest were dropped. Rebuild
			// them from an unlimited model only when there are some (rare and small).
			if n := m.Dropped(port.GUID); n > 0 {
				unl := partconf.NewModel(p.Config, []partconf.Port{port}, withTableSize(p.Options, 0))
				all := unl.Table(port.GUID)
				for _, e := range all[len(all)-n:] {
					pj.Dropped = append(pj.Dropped, drop(e))
				}
			}
		} else {
			// Reprogram needs every entry the port should get, dropped ones included.
			unl := partconf.NewModel(p.Config, []partconf.Port{port}, withTableSize(p.Options, 0))
			slots, dropped := query.Reprogram(prev.PKeys(port.GUID), unl.Table(port.GUID), p.Options.TableSize, p.Options.AllowBoth)
			for _, s := range slots {
				ej := entry(s.Index, s.Entry)
				if s.Before.Valid() {
					ej.Before = strp(s.Before.String())
					kept := s.Kept
					ej.Kept = &kept
				}
				ej.Hole = s.Hole()
				pj.Entries = append(pj.Entries, ej)
			}
			for _, e := range dropped {
				pj.Dropped = append(pj.Dropped, drop(e))
			}
		}
		out = append(out, pj)
	}
	return out
}

func withTableSize(o partconf.Options, n int) partconf.Options { o.TableSize = n; return o }

func runPartitionsShow(o *PartitionsShowOptions) error {
	f, err := o.Format()
	if err != nil {
		return err
	}
	p, err := o.load(o.File)
	if err != nil {
		return err
	}
	var extra []uint64
	for _, a := range o.GUIDs {
		g, err := parseGUIDArg(a)
		if err != nil {
			return err
		}
		extra = append(extra, g)
	}
	var prev *partconf.Model
	if o.Previous != "" {
		pp, err := query.ReadPartitions(o.Previous, p.Options)
		if err != nil {
			return err
		}
		prev = partconf.NewModel(pp.Config, p.Ports(extra...), p.Options)
		if pp.Config.Rejected {
			o.notices().warn(fmt.Sprintf("the previous configuration %s is one OpenSM rejects: it was applied as Default=0x7fff : ALL=full", pp.Config.File))
		}
	}
	m := p.Model(extra...)
	c := m.Config // the applied configuration
	out := showJSON{File: p.Config.File, Rejected: p.Config.Rejected, Applied: "file", Previous: o.Previous,
		AllowBoth: o.AllowBoth, TableSize: o.TableSize, Partitions: partitionsJSON(c, p.Config, p.Options), Ports: portTables(p, m, prev)}
	if p.Config.Rejected {
		out.Applied = "opensm_default"
	}
	if p.Options.SMGUID != 0 {
		out.SMGUID = strp(check.FormatGUID(p.Options.SMGUID))
	}
	if p.Config.Rejected {
		o.notices().warn(rejectedWarning(p.Config))
	}
	if f == formatJSON {
		return writeJSON(o.IO.Out, out)
	}
	return showText(o.IO.Out, f, out)
}

func showText(w io.Writer, f format, s showJSON) error {
	how := "OpenSM without -W"
	if s.AllowBoth {
		how = "OpenSM with -W"
	}
	self := "SELF unknown (no --sm-guid)"
	if s.SMGUID != nil {
		self = "SELF = " + *s.SMGUID
	}
	applied := s.File
	if s.Rejected {
		applied = "OpenSM's fallback for the rejected " + s.File
	}
	fmt.Fprintf(w, "Partitions (%s; %s, %s, table size %d):\n", applied, how, self, s.TableSize)
	fmt.Fprintln(w, "  member items in the order OpenSM applies them: for a port named twice, the last wins;")
	if s.Rejected {
		fmt.Fprintln(w, "  (fallback) is what OpenSM applies instead of a file it rejects")
	} else {
		fmt.Fprintln(w, "  (implicit) items are OpenSM's, applied before the file's")
	}
	pg := grid{header: []string{"KEY", "NAME", "FLAGS", "MEMBERSHIP", "MEMBER", "AT"}}
	for _, p := range s.Partitions {
		flags := strings.Join(p.Flags, ",")
		if len(p.Members) == 0 {
			pg.add(p.Key, p.Name, flags, "", "(no members)", strings.Join(p.DefinedAt, ","))
		}
		for _, m := range p.Members {
			pg.add(p.Key, p.Name, flags, m.Membership, m.Rule, m.At)
		}
	}
	if err := pg.render(w, f); err != nil {
		return err
	}
	fmt.Fprintln(w)
	order := "in the order OpenSM fills them, on ports that held only 0xffff"
	if s.Previous != "" {
		order = "after " + s.Previous + ": keys keep their index, removed ones leave holes"
	}
	fmt.Fprintf(w, "P_Key tables (%s):\n", order)
	tg := grid{header: []string{"PORT", "INDEX", "PKEY", "MEMBERSHIP", "PARTITION", "DECIDED_BY", "AT", "NOTES"}}
	for _, p := range s.Ports {
		var portNotes []string
		if p.SM {
			portNotes = append(portNotes, "SM port (SELF)")
		}
		if !p.InFile {
			portNotes = append(portNotes, "not in the file: only what ALL/ALL_CAS give it")
		}
		first := true
		note := func(more ...string) string {
			n := append([]string(nil), more...)
			if first {
				n = append(append([]string(nil), portNotes...), n...)
				first = false
			}
			return strings.Join(n, "; ")
		}
		for _, e := range p.Entries {
			var extra []string
			switch {
			case e.Hole:
				extra = append(extra, "hole: "+*e.Before+" removed")
			case e.Before != nil && e.Kept != nil && *e.Kept && *e.Before != e.PKey:
				extra = append(extra, "was "+*e.Before)
			case e.Before != nil && e.Kept != nil && !*e.Kept && e.Valid:
				extra = append(extra, "replaces "+*e.Before)
			}
			if !e.Valid {
				tg.add(p.GUID, strconv.Itoa(e.Index), e.PKey, "", "", "", "", note(extra...))
				continue
			}
			tg.add(p.GUID, strconv.Itoa(e.Index), e.PKey, *e.Membership, e.Key+" "+*e.Partition, *e.DecidedBy, *e.At, note(extra...))
		}
		for _, d := range p.Dropped {
			tg.add(p.GUID, "", d.PKey, d.Membership, d.Partition, d.DecidedBy, d.At, note(fmt.Sprintf("DROPPED: the table holds %d entries", p.TableSize)))
		}
	}
	return tg.render(w, f)
}

// ---- matrix ----

// gridMax is the most ports matrix shows as a grid; more get the summary.
const gridMax = 16

// PartitionsMatrixOptions holds `ibkey partitions matrix`'s arguments.
type PartitionsMatrixOptions struct {
	PartitionsOptions
	File    string
	Summary bool
}

func newPartitionsMatrixCmd(g *Globals) *cobra.Command {
	o := &PartitionsMatrixOptions{PartitionsOptions: PartitionsOptions{Globals: g}}
	c := &cobra.Command{
		Use:   "matrix FILE",
		Short: "Show who can talk to whom under a partitions.conf",
		Long: fmt.Sprintf(`Show which ports can talk to which under a partitions.conf (the P_Key rule: a
shared key and at least one full member), for the port GUIDs the file names.

Up to %d ports: a grid. Y: they can talk, with the partitions that work for them;
N: they cannot, with the partitions they share where both are limited members.

More ports (or --summary): per partition, its full and limited members and how many
pairs of ports can talk in it; per port, the partitions in which it reaches another
port; the isolation groups (ports connected through partitions where they can talk,
transitively), counting the default partition and without it; and the ports that
reach nobody except through the default partition.

JSON (-o json): {"file","rejected","mode":"grid"|"summary","ports":[GUID],
"pairs"?:[{"a","b","can_talk","partitions","limited_only"}] (grid only),
"summary":{"partitions":[{"key","name","full","limited","pairs"}],
"ports":[{"guid","reaches"}],"groups":[[GUID]],"groups_without_default":[[GUID]],
"only_default":[GUID]}}. Groups of one port are left out.`, gridMax),
		Example: `  ibkey partitions matrix partitions.conf
  ibkey partitions matrix partitions.conf --summary
  ibkey partitions matrix partitions.conf -o json | jq '.summary.only_default'`,
		Args:              usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: completePartitionsFile,
		RunE: func(c *cobra.Command, args []string) error {
			o.File = args[0]
			return runPartitionsMatrix(o)
		},
	}
	o.addOpenSMFlags(c)
	c.Flags().BoolVar(&o.Summary, "summary", false, fmt.Sprintf("the summary even for %d ports or fewer", gridMax))
	return c
}

type pairJSON struct {
	A           string   `json:"a"`
	B           string   `json:"b"`
	CanTalk     bool     `json:"can_talk"`
	Partitions  []string `json:"partitions"`
	LimitedOnly []string `json:"limited_only"`
}

type partitionReachJSON struct {
	Key     string `json:"key"`
	Name    string `json:"name"`
	Full    int    `json:"full"`
	Limited int    `json:"limited"`
	Pairs   int64  `json:"pairs"`
}

type portReachJSON struct {
	GUID    string   `json:"guid"`
	Reaches []string `json:"reaches"`
}

type summaryJSON struct {
	Partitions           []partitionReachJSON `json:"partitions"`
	Ports                []portReachJSON      `json:"ports"`
	Groups               [][]string           `json:"groups"`
	GroupsWithoutDefault [][]string           `json:"groups_without_default"`
	OnlyDefault          []string             `json:"only_default"`
}

type matrixJSON struct {
	File     string      `json:"file"`
	Rejected bool        `json:"rejected"`
	Mode     string      `json:"mode"`
	Ports    []string    `json:"ports"`
	Pairs    []pairJSON  `json:"pairs,omitempty"`
	Summary  summaryJSON `json:"summary"`
}

func guidStrings(gs []uint64) []string {
	out := make([]string, len(gs))
	for i, g := range gs {
		out[i] = check.FormatGUID(g)
	}
	return out
}

func keyStrings(ks []uint16) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = fmt.Sprintf("0x%04x", k)
	}
	return out
}

func runPartitionsMatrix(o *PartitionsMatrixOptions) error {
	f, err := o.Format()
	if err != nil {
		return err
	}
	p, err := o.load(o.File)
	if err != nil {
		return err
	}
	if p.Config.Rejected {
		o.notices().warn(rejectedWarning(p.Config))
	}
	m := p.Model()
	out := matrixJSON{File: p.Config.File, Rejected: p.Config.Rejected, Mode: "summary", Ports: make([]string, len(m.Ports))}
	for i, port := range m.Ports {
		out.Ports[i] = check.FormatGUID(port.GUID)
	}
	s := m.Summary()
	out.Summary = summaryJSON{Partitions: []partitionReachJSON{}, Ports: []portReachJSON{}, Groups: [][]string{}, GroupsWithoutDefault: [][]string{}, OnlyDefault: guidStrings(s.OnlyDefault)}
	sort.SliceStable(s.Partitions, func(i, j int) bool { return keyLess(s.Partitions[i].Key, s.Partitions[j].Key) })
	for _, pr := range s.Partitions {
		out.Summary.Partitions = append(out.Summary.Partitions, partitionReachJSON{fmt.Sprintf("0x%04x", pr.Key), pr.Name, pr.Full, pr.Limited, pr.Pairs})
	}
	for _, pr := range s.Ports {
		out.Summary.Ports = append(out.Summary.Ports, portReachJSON{check.FormatGUID(pr.GUID), keyStrings(pr.Reaches)})
	}
	for _, g := range s.Groups {
		out.Summary.Groups = append(out.Summary.Groups, guidStrings(g))
	}
	for _, g := range s.GroupsWithoutDefault {
		out.Summary.GroupsWithoutDefault = append(out.Summary.GroupsWithoutDefault, guidStrings(g))
	}
	if len(m.Ports) <= gridMax && !o.Summary {
		out.Mode = "grid"
		out.Pairs = []pairJSON{}
		for i, a := range m.Ports {
			for _, b := range m.Ports[i+1:] {
				out.Pairs = append(out.Pairs, pairOf(m, a.GUID, b.GUID))
			}
		}
	}
	if f == formatJSON {
		return writeJSON(o.IO.Out, out)
	}
	if out.Mode == "grid" {
		return matrixGridText(o.IO.Out, f, p, out)
	}
	return matrixSummaryText(o.IO.Out, f, p, out)
}

func pairOf(m *partconf.Model, a, b uint64) pairJSON {
	v := m.CanTalk(a, b)
	pj := pairJSON{A: check.FormatGUID(a), B: check.FormatGUID(b), CanTalk: v.CanTalk, Partitions: []string{}, LimitedOnly: []string{}}
	sh := append([]partconf.Shared(nil), v.Shared...)
	sort.Slice(sh, func(i, j int) bool { return sh[i].Key < sh[j].Key })
	for _, s := range sh {
		if s.CanTalk {
			pj.Partitions = append(pj.Partitions, fmt.Sprintf("0x%04x", s.Key))
		} else {
			pj.LimitedOnly = append(pj.LimitedOnly, fmt.Sprintf("0x%04x", s.Key))
		}
	}
	return pj
}

// portLetter names grid rows and columns: A..Z, then AA...
func portLetter(i int) string {
	s := ""
	for i++; i > 0; i = (i - 1) / 26 {
		s = string(rune('A'+(i-1)%26)) + s
	}
	return s
}

func matrixGridText(w io.Writer, f format, p *query.Partitions, out matrixJSON) error {
	fmt.Fprintf(w, "Ports (%s):\n", out.File)
	pg := grid{header: []string{"PORT", "GUID", "NOTES"}}
	for i, g := range out.Ports {
		var notes []string
		guid, _ := parseGUIDArg(g)
		if guid == p.Options.SMGUID {
			notes = append(notes, "SM port (SELF)")
		}
		if !p.InFile(guid) {
			notes = append(notes, "not in the file")
		}
		pg.add(portLetter(i), g, strings.Join(notes, "; "))
	}
	if err := pg.render(w, f); err != nil {
		return err
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Who can talk: Y yes, in these partitions (the default partition 0x7fff only when no other works),")
	fmt.Fprintln(w, "N no; (limited K) partitions they share where both are limited members:")
	n := len(out.Ports)
	cells := make([][]string, n)
	for i := range cells {
		cells[i] = make([]string, n)
		cells[i][i] = "-"
	}
	k := 0
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			cells[i][j] = pairCell(out.Pairs[k])
			cells[j][i] = cells[i][j]
			k++
		}
	}
	header := []string{"PORT"}
	for i := range out.Ports {
		header = append(header, portLetter(i))
	}
	mg := grid{header: header}
	for i := range out.Ports {
		mg.add(append([]string{portLetter(i)}, cells[i]...)...)
	}
	return mg.render(w, f)
}

// pairCell is one grid cell: Y and the partitions that work (the default one only when
// alone: it is everywhere), or N; then the shared partitions where both are limited.
func pairCell(pr pairJSON) string {
	c := "N"
	if pr.CanTalk {
		var keys []string
		for _, k := range pr.Partitions {
			if k != "0x7fff" {
				keys = append(keys, k)
			}
		}
		if len(keys) == 0 {
			keys = []string{"0x7fff"}
		}
		c = "Y " + strings.Join(keys, ",")
	}
	if len(pr.LimitedOnly) > 0 {
		c += " (limited " + strings.Join(pr.LimitedOnly, ",") + ")"
	}
	return c
}

// listMax bounds GUID lists in the summary text; the JSON has them all.
const listMax = 8

func guidList(gs []string) string {
	if len(gs) <= listMax {
		return strings.Join(gs, ",")
	}
	return strings.Join(gs[:listMax], ",") + fmt.Sprintf(" and %d more", len(gs)-listMax)
}

func matrixSummaryText(w io.Writer, f format, p *query.Partitions, out matrixJSON) error {
	s := out.Summary
	fmt.Fprintf(w, "%s: %s, %s\n\n", out.File, plural(len(out.Ports), "port", "ports"), plural(len(s.Partitions), "partition", "partitions"))
	fmt.Fprintln(w, "Partitions (PAIRS: pairs of ports that can talk in it):")
	pg := grid{header: []string{"KEY", "NAME", "FULL", "LIMITED", "PAIRS"}}
	for _, pr := range s.Partitions {
		pg.add(pr.Key, pr.Name, strconv.Itoa(pr.Full), strconv.Itoa(pr.Limited), strconv.FormatInt(pr.Pairs, 10))
	}
	if err := pg.render(w, f); err != nil {
		return err
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Ports (REACHES: the partitions in which the port can talk to another port):")
	rg := grid{header: []string{"PORT", "PARTITIONS", "REACHES"}}
	for _, pr := range s.Ports {
		reach := strings.Join(pr.Reaches, ",")
		if reach == "" {
			reach = "nobody"
		}
		rg.add(pr.GUID, strconv.Itoa(len(pr.Reaches)), reach)
	}
	if err := rg.render(w, f); err != nil {
		return err
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Isolation groups (ports connected through partitions where they can talk, transitively):")
	for _, g := range []struct {
		what   string
		groups [][]string
	}{{"counting the default partition", s.Groups}, {"without the default partition", s.GroupsWithoutDefault}} {
		in := 0
		for _, grp := range g.groups {
			in += len(grp)
		}
		fmt.Fprintf(w, "  %s: %s, %s alone\n", g.what, plural(len(g.groups), "group", "groups"), plural(len(out.Ports)-in, "port", "ports"))
		for i, grp := range g.groups {
			if i == listMax {
				fmt.Fprintf(w, "    and %d more groups\n", len(g.groups)-listMax)
				break
			}
			fmt.Fprintf(w, "    %d: %s: %s\n", i+1, plural(len(grp), "port", "ports"), guidList(grp))
		}
	}
	fmt.Fprintln(w)
	if len(s.OnlyDefault) == 0 {
		fmt.Fprintln(w, "Every port reaches another port outside the default partition.")
		return nil
	}
	fmt.Fprintf(w, "Reach nobody except through the default partition: %s: %s\n", plural(len(s.OnlyDefault), "port", "ports"), guidList(s.OnlyDefault))
	return nil
}

// ---- completion ----

// completePartitionsFile completes FILE with file names.
func completePartitionsFile(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) == 0 {
		return nil, cobra.ShellCompDirectiveDefault
	}
	return nil, cobra.ShellCompDirectiveNoFileComp
}

// completePartitionsFileThenGUIDs completes FILE, then the port GUIDs it names.
func completePartitionsFileThenGUIDs(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) == 0 {
		return nil, cobra.ShellCompDirectiveDefault
	}
	return fileGUIDCompletions(args[0]), cobra.ShellCompDirectiveNoFileComp
}

// fileGUIDCompletions offers the port GUIDs a partitions file names, each described by
// the partitions that name it; nothing when the file cannot be read.
func fileGUIDCompletions(path string) []cobra.Completion {
	p, err := query.ReadPartitions(path, partconf.Options{})
	if err != nil {
		return nil
	}
	names := map[uint64][]string{}
	for _, part := range p.Config.Partitions {
		for _, m := range part.Members {
			if m.Kind == partconf.KindGUID {
				if l := names[m.GUID]; len(l) == 0 || l[len(l)-1] != part.Name {
					names[m.GUID] = append(l, part.Name)
				}
			}
		}
	}
	out := make([]cobra.Completion, 0, len(p.FileGUIDs))
	for _, g := range p.FileGUIDs {
		desc := "in " + strings.Join(names[g], ", ")
		if len(desc) > 60 {
			desc = desc[:57] + "..."
		}
		out = append(out, cobra.CompletionWithDesc(check.FormatGUID(g), desc))
	}
	return out
}
