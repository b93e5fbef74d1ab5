package partitions

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/partconf"
	"github.com/ibkey/ibkey/internal/query"
)

// ShowOptions are `ibkey partitions show`'s inputs.
type ShowOptions struct {
	cmdutil.Deps
	OpenSM cmdutil.OpenSMFlags
	Types  PortTypes
	File   string
	GUIDs  []string
	// Previous are the configurations OpenSM applied before FILE, oldest first;
	// Restarted: OpenSM was restarted before each (else one process applied them all).
	Previous  []string
	Restarted bool
}

// NewCmdShow is `ibkey partitions show FILE [GUID...]`; runF replaces the run in tests.
func NewCmdShow(f *cmdutil.Factory, runF func(*ShowOptions) error) *cobra.Command {
	o := &ShowOptions{}
	c := &cobra.Command{
		Use:   "show [FILE [GUID...]]",
		Short: "Each partition's members and groups, and the tables it programs",
		Long: `Show what OpenSM does with a partitions.conf:

Partitions: one row per member item, in the order OpenSM applies them (for a port
named twice, the last item wins): key, name, flags, the membership the item gives and
the member, keywords written as the rule they stand for (ALL: every port, ALL_CAS:
every CA port, ALL_ROUTERS: every router port, SELF: the SM's port, --sm-guid), and
where it is written.

Multicast groups: the groups OpenSM creates for each partition (the IPoIB broadcast
group of an ipoib partition, and each valid mgid= line, once per scope) with MGID,
Q_Key, MTU, rate, SL and scope. OpenSM creates them only while the partition has a
member in the fabric.

Ports: for each port GUID the file names (and each GUID given on the command line),
the P_Key table OpenSM programs, in the order it fills it (index 0 first: the indx0
partition, else the default partition, then keys in OpenSM's map order), with the item
that decided each entry. A GUID the file does not name gets only what ALL / ALL_CAS
(ALL_ROUTERS for a router port: --router, or --fabric-file with a saved sweep) give
it, and says so. Entries past the port's table length are dropped, as OpenSM does:
--table-size, or with --fabric-file the PartitionCap the sweep read for its ports.

The indexes are those of a port whose table held only 0xffff before (a fresh port).
OpenSM keeps a key at its index across reconfigurations, so after an earlier
configuration the indexes differ and removed partitions leave holes (0x0000): give
the configurations OpenSM applied before with --previous FILE, oldest first (repeat
it for several), starting from fresh ports. By default one running OpenSM applied
them and now FILE (it re-reads its file on SIGHUP and at every heavy sweep): it
remembers the index it gave every key since it started, so a new key goes after the
last index it ever used and a key put back returns to its old index. With
--restarted OpenSM was restarted before each (a new process remembers nothing, and
fills the hole a removed last key left). Keys added, removed, changed and moved,
indx0 moving, the default partition's line moving, -W: lab-checked (make truth). All of this is OpenSM with keep_pkey_indexes
TRUE, its default: with FALSE in its opensm.conf (--opensm-conf FILE) every sweep
rebuilds each table from index 0, and no key keeps its index (lab-checked too).

A file OpenSM rejects is shown as the fallback OpenSM applies (Default=0x7fff :
ALL=full), with a warning. When what OpenSM does with the file (or a --previous
file) cannot be predicted, what it does with the file as written is shown, stderr
says so, and the exit is 4. The exit is 4 too when a port shown would get other
entries as a router port (ALL_CAS, ALL_ROUTERS: give --router) or as the port OpenSM
runs on (SELF, written or implied by a missing Default line: give --sm-guid), in
FILE or, since they decide the indexes, in a --previous file; stderr names the ports.

Plain output (-o plain; the default when stdout is not a terminal): sections separated
by one blank line; each starts with a title line (notes after it indented by two
spaces), then a header line of column names and one record per line, fields separated
by spaces (a space inside a field is written _). For one document to parse, use
-o json.

JSON (-o json), schema
schemas/partitions-show.schema.json: {"schema_version":1,"file","rejected","uncertain"?,"applied":"file"|"opensm_default",
"previous"?,"previous_files"?,"restarted"?,"allow_both","sm_guid","table_size","partitions":[{"key","name","flags",
"ipoib","defined_at","members":[{"member","kind","rule","membership","written_membership"?,"at"}],
"groups":[{"mgid","qkey","mtu","rate","sl","scope","broadcast","at"}]}],
"ports":[{"port_guid","node_desc"? (--fabric-file),"type" (ca|router),"in_file","sm","table_size","as_router"?,"entries":[{"index","pkey","key",
"membership","valid","partition","decided_by","at","hole"?,"before"?,"kept"?}],
"dropped":[{"pkey","membership","partition","decided_by","at"}]}],
"incomplete"? (exit 4: [{"kind","message"}], what the tables shown take unchecked)}.`,
		Example: `  ibkey partitions show partitions.conf
  ibkey partitions show p.conf 0x0002c90300000299 --sm-guid 0x0002c90300000201
  ibkey partitions show partitions.conf --router 0x0002c90300000301
  ibkey partitions show partitions.conf --fabric-file fabric.json
  ibkey partitions show new.conf --previous old.conf -o json
  ibkey partitions show c.conf --previous a.conf --previous b.conf --restarted`,
		ValidArgsFunction: completePartitionsFile(true),
		RunE: cmdutil.RunE(f, o, &o.Deps, func(_ *cobra.Command, args []string) (err error) {
			o.File, err = o.OpenSM.FileArg("partitions show", args)
			if len(args) > 1 {
				o.GUIDs = args[1:]
			}
			return err
		}, runF, runShow),
	}
	o.OpenSM.AddFlags(c)
	o.OpenSM.AddQoSFlag(c)
	o.Types.add(c)
	c.Flags().StringArrayVar(&o.Previous, "previous", nil, "a configuration OpenSM applied before (`FILE`; repeat for several, oldest first): keys keep their index, removed ones leave holes")
	_ = c.MarkFlagFilename("previous")
	o.OpenSM.AddConfFlag(c, ", qos --qos, and keep_pkey_indexes FALSE rebuilds every table from index 0 (--previous then keeps no index)")
	c.Flags().BoolVar(&o.Restarted, "restarted", false, "with --previous: OpenSM was restarted before applying each file (a new process forgets where removed keys were); default: one running OpenSM re-read its file (SIGHUP, heavy sweep)")
	cmdutil.AddIndentFlag(c)
	cmdutil.SetExits(c,
		cmdutil.ExitMeaning{Code: cmdutil.ExitOK, Meaning: "success"},
		cmdutil.ExitMeaning{Code: cmdutil.ExitUsage, Meaning: "bad usage or a file that cannot be read"},
		cmdutil.ExitMeaning{Code: cmdutil.ExitIncomplete, Meaning: "OpenSM's outcome cannot be predicted, or a port's table depends on --router or --sm-guid not given"},
	)
	return c
}

// show is what `partitions show` prints, as values.
type show struct {
	p       *query.Partitions
	applied *partconf.Config // the configuration OpenSM programs (the fallback when rejected)
	// model predicts the tables, over prevModel's with --previous (tables).
	model, prevModel *partconf.Model
	// history are the --previous files as named, previous as read; restarted:
	// OpenSM restarted before each file (--restarted).
	history   []string
	previous  []*partconf.Config
	restarted bool
	// unknownType: ports shown as CA ports whose table would differ as router ports
	// (no --router, no --fabric-file), with that table.
	unknownType map[check.GUID][]check.PKey
	names       map[check.GUID]string // --fabric-file: port GUID to its node's name
}

func runShow(o *ShowOptions) error {
	s, err := loadShow(o)
	if err != nil {
		return err
	}
	// SELF without --sm-guid: a port shown, as the port OpenSM runs on, would get other
	// entries (the tables shown take none for it), as the matrix says. With
	// --previous, SELF in a file before counts too: the keys it gave the port decide
	// the indexes shown (each port is modelled through every file as the SM's).
	table := fileTables(s.p, s.model)
	if len(s.previous) > 0 {
		table = func(sm check.GUID, port partconf.Port) []check.PKey {
			if sm == 0 {
				return s.model.TableValues(port.GUID)
			}
			opt := s.p.Options
			opt.SMGUID = sm
			m, _ := s.tables([]partconf.Port{port}, opt)
			return m.TableValues(port.GUID)
		}
	}
	self := selfTaken(s.p, s.model.Ports, table, "the tables shown take none of the ports", s.previous...)
	if o.Format == cmdutil.FormatJSON {
		err = s.writeJSON(o.IO.Out, s.incomplete(self))
	} else {
		err = s.text(o.IO.Out, o.Format)
	}
	if err != nil {
		return err
	}
	// A file before that OpenSM reads unpredictably leaves tables that cannot be
	// predicted, and FILE's keys keep their indexes there.
	for _, c := range s.chain() {
		if err := cmdutil.Uncertain(o.IO.ErrOut, c, "what is shown above is"); err != nil {
			return err
		}
	}
	var selfErr error
	if self != "" {
		o.Notices.Warn(self) // wrapped to a terminal's width
		selfErr = cmdutil.Exit(cmdutil.ExitIncomplete)
	}
	return cmp.Or(typeUnknown(o.IO.ErrOut, filesOf(s.p, s.previous), s.unknownType, "the tables above are"), selfErr)
}

// incomplete is what the JSON says of each exit-4 cause of show (the stderr lines'):
// an outcome that cannot be predicted, ports whose table differs as router ports
// (--router not given), and self (selfTaken), all kind not-checked.
func (s *show) incomplete(self string) []cmdutil.Incomplete {
	var out []cmdutil.Incomplete
	for _, c := range s.chain() {
		if u := cmdutil.UncertainIncomplete(c); u != nil {
			out = append(out, *u)
		}
	}
	if t := typeUnknownText(filesOf(s.p, s.previous), s.unknownType, "the tables shown are"); t != "" {
		out = append(out, cmdutil.Incomplete{Kind: cmdutil.IncompleteNotChecked, Message: t})
	}
	if self != "" {
		out = append(out, cmdutil.Incomplete{Kind: cmdutil.IncompleteNotChecked, Message: self})
	}
	return out
}

// loadShow reads the files and predicts the tables; warnings go to o.Notices.
func loadShow(o *ShowOptions) (*show, error) {
	stdin := 0
	for _, f := range append([]string{o.File}, o.Previous...) {
		if f == "-" {
			stdin++
		}
	}
	if stdin > 1 {
		return nil, cmdutil.Usagef("FILE and --previous name - (standard input) %d times: give all but one as files", stdin)
	}
	if o.Restarted && len(o.Previous) == 0 {
		return nil, cmdutil.Usagef("--restarted needs --previous FILE: the configuration OpenSM applied before it was restarted")
	}
	p, err := o.OpenSM.LoadFile(&o.File, &o.Deps)
	if err != nil {
		return nil, err
	}
	names, err := o.Types.apply(p)
	if err != nil {
		return nil, err
	}
	var extra []check.GUID
	for _, a := range o.GUIDs {
		g, err := check.ParseGUID(strings.TrimPrefix(a, "guid="))
		if err != nil {
			return nil, err
		}
		extra = append(extra, g)
	}
	ports := p.TypedPorts(extra...)
	s := &show{p: p, restarted: o.Restarted, names: names}
	for _, f := range o.Previous {
		pp, err := o.OpenSM.Load(f, o.IO)
		if err != nil {
			return nil, err
		}
		s.history = append(s.history, pp.Config.File)
		s.previous = append(s.previous, pp.Config)
		if pp.Config.Rejected {
			o.Notices.Warn(fmt.Sprintf("the previous configuration %s is one OpenSM rejects: it was applied as Default=0x7fff, ipoib : ALL=full", pp.Config.File))
		}
	}
	s.model, s.prevModel = s.tables(ports, p.Options)
	s.applied = s.model.Config
	s.unknownType = s.typeUnknown(ports)
	if p.Config.Rejected {
		o.Notices.Warn(rejectedWarning(p.Config))
	}
	return s, nil
}

// chain is every configuration the tables shown come from: the --previous files,
// then FILE.
func (s *show) chain() []*partconf.Config {
	return append(slices.Clone(s.previous), s.p.Config)
}

// tables predicts the tables of ports: the configurations applied before
// (--previous), in turn from fresh ports, each over the tables the one before left
// (partconf.Reconfigure), then FILE; prev is the model of the last one before (nil
// without --previous).
func (s *show) tables(ports []partconf.Port, opt partconf.Options) (m, prev *partconf.Model) {
	for _, c := range s.previous {
		if prev == nil {
			opt.Remember = true
			prev = partconf.NewModel(c, ports, opt)
			continue
		}
		prev = partconf.Reconfigure(prev, c, !s.restarted)
	}
	if prev == nil {
		return partconf.NewModel(s.p.Config, ports, opt), nil
	}
	return partconf.Reconfigure(prev, s.p.Config, !s.restarted), prev
}

// typeUnknown are the ports whose type was not given and whose table shown would
// differ as router ports, with that table (query.Partitions.UnknownType). With
// --previous what the files before gave them counts too: the indexes shown are
// where those left their keys, so an ALL_CAS item there decides them; the table is
// then index by index (0x0000 for an empty entry).
func (s *show) typeUnknown(ports []partconf.Port) map[check.GUID][]check.PKey {
	if len(s.previous) == 0 {
		return s.p.UnknownType(portGUIDs(ports)...)
	}
	if s.p.TypesComplete {
		return nil
	}
	asRouter := slices.Clone(ports)
	for i := range asRouter {
		if _, known := s.p.Types[asRouter[i].GUID]; !known {
			asRouter[i].Type = check.NodeRouter
		}
	}
	m, _ := s.tables(asRouter, s.p.Options)
	var out map[check.GUID][]check.PKey
	for i, port := range ports {
		if r := m.TableValues(port.GUID); asRouter[i].Type != port.Type && !slices.Equal(s.model.TableValues(port.GUID), r) {
			if out == nil {
				out = map[check.GUID][]check.PKey{}
			}
			out[port.GUID] = r
		}
	}
	return out
}

// memberRule says what a member item names, keywords as the rule they stand for.
func memberRule(m *partconf.Member, sm check.GUID) string {
	switch m.Kind {
	case partconf.KindGUID:
		return m.GUID.String()
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
		return "SELF: the SM's port " + sm.String()
	}
	return m.Text()
}

// effectiveMembership is what an item gives (partconf.MemberFlag.Effective).
func effectiveMembership(m *partconf.Member, allowBoth bool) string {
	if eff := m.Membership.Effective(allowBoth); eff != m.Membership {
		return eff.String() + " (both without -W)"
	}
	return m.Membership.String()
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

// keyOrder sorts partitions for people: the default partition first, then by key (OpenSM
// applies them in its map order, which only the tables show).
func keyOrder(ps []*partconf.Partition) []*partconf.Partition {
	out := append([]*partconf.Partition(nil), ps...)
	sort.SliceStable(out, func(i, j int) bool { return keyLess(out[i].Key, out[j].Key) })
	return out
}

// scopeNames are the multicast scopes of an IB MGID (IBA Vol 1 4.1.1, as IPv6's, RFC
// 4291 2.7). The MTU and rate codes are partconf.MTUBytes and partconf.RateGbps.
var scopeNames = map[uint8]string{1: "interface-local", 2: "link-local", 4: "admin-local", 5: "site-local", 8: "organization-local", 0xe: "global"}

func codeText[V int | string](code uint8, names func(uint8) (V, bool), unit string) string {
	if n, ok := names(code); ok {
		return fmt.Sprintf("%d (%v%s)", code, n, unit)
	}
	return fmt.Sprintf("%d (not a valid code)", code)
}

func (s show) text(w io.Writer, f cmdutil.Format) error {
	p := s.p
	how := "OpenSM without -W"
	if p.Options.AllowBoth {
		how = "OpenSM with -W"
	}
	switch {
	case p.Options.QoS && p.Options.AllowBoth: // only with -Q does a partition's sl= reach its groups
		how = "OpenSM with -W and -Q"
	case p.Options.QoS:
		how = "OpenSM with -Q, without -W"
	}
	self := "SELF unknown (no --sm-guid)"
	if p.Options.SMGUID != 0 {
		self = "SELF = " + p.Options.SMGUID.String()
	}
	applied := p.Config.File
	if p.Config.Rejected {
		applied = "OpenSM's fallback for the rejected " + p.Config.File
	}
	size := fmt.Sprintf("table size %d", p.Options.TableSize)
	if len(p.TableSizes) > 0 {
		size = fmt.Sprintf("table size: a swept port's PartitionCap, else %d", p.Options.TableSize)
	}
	fmt.Fprintf(w, "Partitions (%s; %s, %s, %s):\n", applied, how, self, size)
	fmt.Fprintln(w, "  member items in the order OpenSM applies them: for a port named twice, the last wins;")
	if p.Config.Rejected {
		fmt.Fprintln(w, "  (fallback) is what OpenSM applies instead of a file it rejects")
	} else {
		fmt.Fprintln(w, "  (implicit) items are OpenSM's, applied before the file's")
	}
	parts := keyOrder(s.applied.Partitions)
	pg := cmdutil.Grid{Header: []string{"KEY", "NAME", "FLAGS", "MEMBERSHIP", "MEMBER", "AT"}, Required: []string{"KEY", "MEMBERSHIP", "MEMBER"}, Optional: [][]string{{"AT"}, {"FLAGS"}}}
	for _, part := range parts {
		flags := strings.Join(partitionFlags(part), ",")
		if len(part.Members) == 0 {
			var at []string
			for _, d := range part.Defs {
				at = append(at, p.Config.PosText(d.Pos))
			}
			pg.Add(part.Key.String(), part.Name, flags, "", "(no members)", strings.Join(at, ","))
		}
		for mi := range part.Members {
			m := &part.Members[mi]
			pg.Add(part.Key.String(), part.Name, flags, effectiveMembership(m, p.Options.AllowBoth), memberRule(m, p.Options.SMGUID), p.Config.PosText(m.Pos()))
		}
	}
	if err := pg.Render(w, f); err != nil {
		return err
	}
	if err := s.groupsText(w, f, parts); err != nil {
		return err
	}
	fmt.Fprintln(w)
	order := "in the order OpenSM fills them, on ports that held only 0xffff"
	if len(s.history) > 0 {
		order = "after " + strings.Join(s.history, ", then ") + ", applied by one running OpenSM that re-read its file: keys keep their index, removed ones leave holes, new keys go after the last index it used"
		if s.restarted {
			order = "after " + strings.Join(s.history, ", then ") + ", OpenSM restarted before each: keys keep their index, removed ones leave holes"
		}
	}
	fmt.Fprintf(w, "P_Key tables (%s):\n", order)
	if len(s.model.Ports) == 0 {
		// A note under the title, as every section's; plain keeps its header line.
		fmt.Fprintln(w, "  no port: the file names no port GUID; give port GUIDs after FILE (or --sm-guid) for the tables they get")
		if f == cmdutil.FormatTable {
			return nil
		}
	}
	tg := cmdutil.Grid{Header: []string{"PORT", "INDEX", "PKEY", "MEMBERSHIP", "PARTITION", "DECIDED_BY", "AT", "NOTES"},
		Required: []string{"PORT", "PKEY"}, Optional: [][]string{{"AT"}, {"DECIDED_BY"}, {"NODE"}, {"MEMBERSHIP"}}}
	addRow := nodeColumn(&tg, 1, s.names)
	for _, port := range s.model.Ports {
		t := p.PortTable(s.model, s.prevModel, port)
		guid := t.Port.GUID.String()
		add := func(cells ...string) { addRow(t.Port.GUID, cells...) }
		var portNotes []string
		if t.SM {
			portNotes = append(portNotes, "SM port (SELF)")
		}
		if t.Port.Type == check.NodeRouter {
			portNotes = append(portNotes, "router port")
		}
		if !t.InFile {
			// The keywords that name a port of its type (partition_add_all), and
			// SELF for the SM's port.
			kw := map[check.NodeType]string{check.NodeRouter: "ALL/ALL_ROUTERS", check.NodeSwitch: "ALL/ALL_SWITCHES"}[t.Port.Type]
			kw = cmp.Or(kw, "ALL/ALL_CAS")
			if t.SM {
				kw += " and SELF"
			}
			portNotes = append(portNotes, "not in the file: only what "+kw+" give it")
		}
		if r, ok := s.unknownType[t.Port.GUID]; ok {
			portNotes = append(portNotes, "taken for a CA port: a router port gets "+strings.Join(stringsOf(r), " ")+" (--router)")
		}
		first := true // the port's notes go on its first row
		note := func(more ...string) string {
			if first {
				more, first = append(slices.Clone(portNotes), more...), false
			}
			return strings.Join(more, "; ")
		}
		for _, sl := range t.Slots {
			var extra []string
			e := sl.Entry
			switch {
			case sl.Hole():
				extra = append(extra, "hole: "+sl.Before.String()+" removed")
			case sl.Before.Valid() && sl.Kept && sl.Before != e.PKey:
				extra = append(extra, "was "+sl.Before.String())
			case sl.Before.Valid() && !sl.Kept && e != nil:
				extra = append(extra, "replaces "+sl.Before.String())
			}
			if e == nil {
				add(guid, strconv.Itoa(sl.Index), "0x0000", "", "", "", "", note(extra...))
				continue
			}
			add(guid, strconv.Itoa(sl.Index), e.PKey.String(), e.PKey.Membership().String(), e.PKey.Partition().String()+" "+e.Partition.Name,
				e.DecidedBy.Text(), p.Config.PosText(e.DecidedBy.Pos()), note(extra...))
		}
		for _, d := range t.Dropped {
			add(guid, "", d.PKey.String(), d.PKey.Membership().String(), d.Partition.Name, d.DecidedBy.Text(), p.Config.PosText(d.DecidedBy.Pos()),
				note(fmt.Sprintf("DROPPED: the table holds %d entries", t.Size)))
		}
	}
	return tg.Render(w, f)
}

// groupsText lists the multicast groups OpenSM creates, when there are any.
func (s show) groupsText(w io.Writer, f cmdutil.Format, parts []*partconf.Partition) error {
	gg := cmdutil.Grid{Header: []string{"KEY", "NAME", "MGID", "Q_KEY", "MTU", "RATE", "SL", "SCOPE", "AT"},
		Required: []string{"KEY", "MGID"}, Optional: [][]string{{"AT"}, {"SL", "SCOPE"}, {"Q_KEY"}, {"RATE"}}}
	for _, part := range parts {
		for _, g := range part.Groups {
			at := s.p.Config.PosText(g.Pos)
			if g.Broadcast {
				at += " (IPoIB broadcast)"
			}
			gg.Add(part.Key.String(), part.Name, g.MGID.String(), fmt.Sprintf("0x%08x", g.QKey), codeText(g.MTU, partconf.MTUBytes, " bytes"),
				codeText(g.Rate, partconf.RateGbps, " Gb/s"), strconv.Itoa(int(g.SL)), codeText(g.Scope, func(c uint8) (string, bool) { n, ok := scopeNames[c]; return n, ok }, ""), at)
		}
	}
	if len(gg.Rows) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Multicast groups (OpenSM creates them while the partition has a member in the fabric):")
	return gg.Render(w, f)
}
