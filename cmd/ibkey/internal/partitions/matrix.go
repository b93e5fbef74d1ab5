package partitions

import (
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
	"github.com/ibkey/ibkey/internal/textsafe"
)

// gridMax is the most ports matrix shows as a grid; more get the summary.
const gridMax = 16

// MatrixOptions are `ibkey partitions matrix`'s inputs.
type MatrixOptions struct {
	cmdutil.Deps
	OpenSM  cmdutil.OpenSMFlags
	Types   PortTypes
	File    string
	Summary bool
}

// NewCmdMatrix is `ibkey partitions matrix FILE`; runF replaces the run in tests.
func NewCmdMatrix(f *cmdutil.Factory, runF func(*MatrixOptions) error) *cobra.Command {
	o := &MatrixOptions{}
	c := &cobra.Command{
		Use:   "matrix [FILE]",
		Short: "Show who can talk to whom under a partitions.conf",
		Long: `Show which ports can talk to which under a partitions.conf (the P_Key rule: a
shared key and at least one full member), for the port GUIDs the file names.

Up to ` + strconv.Itoa(gridMax) + ` ports: a grid. Y: they can talk, with the partitions that work for them;
N: they cannot, with the partitions they share where both are limited members. Each
cell is can-talk --partitions for the two GUIDs: where SELF without --sm-guid, or a
port type without --router, would change it, ?Y or ?N (the answer is not known; as
taken after the ?), K? (whether K works is not known) or +? (they may share one more
partition), and the exit is 4; a file OpenSM reads unpredictably makes every pair ?
(and every figure of the summary). A port whose table (--table-size, or the
PartitionCap a --fabric-file sweep read) cannot hold its keys says in its notes which
OpenSM drops (ERR 0512): they work for no pair. A table
grid wider than the terminal (about 7 ports at 80 columns) is replaced by the summary,
saying so; -o plain and -o json keep the grid.

More ports (or --summary): per partition, its full and limited members and how many
pairs of ports can talk in it; per port, how many partitions it is a member of and
the ones in which it reaches another port; the isolation groups (ports connected through partitions where they can talk,
transitively), counting the default partition and without it; and the ports that
reach nobody except through the default partition. A figure that SELF without
--sm-guid, or a port type without --router, would change is ? (K? for a partition
in which whether the port reaches another is not known), and the exit is 4.

Plain output (-o plain; the default when stdout is not a terminal): sections separated
by one blank line; each starts with a title line (notes after it indented by two
spaces), then a header line of column names and one record per line, fields separated
by spaces (a space inside a field is written _). The summary's isolation groups are
indented text (the JSON lists them whole). For one document to parse, use
-o json.

JSON (-o json), schema schemas/partitions-matrix.schema.json: {"schema_version":1,"file","rejected","uncertain"?,"mode":"grid"|"summary","ports":[GUID],
"node_descs"?:{GUID:NAME} (--fabric-file),
"pairs"?:[{"a","b","can_talk" (null: not known),"partitions","limited_only","not_known",
"partitions_complete","why"?}] (grid only), "incomplete"?:[{"kind","message"}] (exit 4),
"summary":{"partitions":[{"key","name","full","limited","pairs"}],
"ports":[{"port_guid","member_of","reaches","reaches_not_known"?}],"groups":[[GUID]],"groups_without_default":[[GUID]],
"only_default":[GUID]}} (a figure that is ? in the text is null). Groups of one port are left out.`,
		Example: `  ibkey partitions matrix partitions.conf
  ibkey partitions matrix partitions.conf --summary
  ibkey partitions matrix partitions.conf -o json | jq '.summary.only_default'`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: completePartitionsFile(false),
		RunE: cmdutil.RunE(f, o, &o.Deps, func(_ *cobra.Command, args []string) (err error) {
			o.File, err = o.OpenSM.FileArg("partitions matrix", args)
			return err
		}, runF, runMatrix),
	}
	o.OpenSM.AddFlags(c)
	o.OpenSM.AddConfFlag(c, "")
	o.Types.add(c)
	c.Flags().BoolVar(&o.Summary, "summary", false, "the summary even for "+strconv.Itoa(gridMax)+" ports or fewer")
	cmdutil.SetExits(c,
		cmdutil.ExitMeaning{Code: cmdutil.ExitOK, Meaning: "success"},
		cmdutil.ExitMeaning{Code: cmdutil.ExitUsage, Meaning: "bad usage or a file that cannot be read"},
		cmdutil.ExitMeaning{Code: cmdutil.ExitIncomplete, Meaning: "what OpenSM does with the file cannot be predicted (the matrix of the file as written is printed), or it depends on what was not given (--sm-guid, --router): the cells it changes are marked ?"},
	)
	return c
}

type pairJSON struct {
	A           string   `json:"a"`
	B           string   `json:"b"`
	CanTalk     *bool    `json:"can_talk"` // null: not known (NotKnown says on what)
	Partitions  []string `json:"partitions"`
	LimitedOnly []string `json:"limited_only"`
	// PartitionsNotKnown: of partitions and limited_only, those whose working an
	// assumption not given decides otherwise.
	PartitionsNotKnown []string `json:"not_known"`
	// PartitionsComplete: false when an assumption not given would give both one
	// more shared partition.
	PartitionsComplete bool   `json:"partitions_complete"`
	Why                string `json:"why,omitempty"` // can_talk null: on what it depends
}

// A figure of the summary is null when an assumption not given would change it
// (summaryNotKnown).
type partitionReachJSON struct {
	Key     string `json:"key"`
	Name    string `json:"name"`
	Full    *int   `json:"full"`
	Limited *int   `json:"limited"`
	Pairs   *int64 `json:"pairs"`
}

type portReachJSON struct {
	PortGUID string   `json:"port_guid"`
	MemberOf *int     `json:"member_of"`
	Reaches  []string `json:"reaches"`
	// ReachesNotKnown are the partitions in which whether the port reaches another
	// is not known (not in reaches).
	ReachesNotKnown []string `json:"reaches_not_known,omitempty"`
}

type summaryJSON struct {
	Partitions           []partitionReachJSON `json:"partitions"`
	Ports                []portReachJSON      `json:"ports"`
	Groups               [][]string           `json:"groups"`
	GroupsWithoutDefault [][]string           `json:"groups_without_default"`
	OnlyDefault          []string             `json:"only_default"`
}

type matrixJSON struct {
	Schema    cmdutil.SchemaVersion `json:"schema_version"`
	File      string                `json:"file"`
	Rejected  bool                  `json:"rejected"`
	Uncertain string                `json:"uncertain,omitempty"`
	Mode      string                `json:"mode"`
	Ports     []string              `json:"ports"`
	NodeDescs map[string]string     `json:"node_descs,omitempty"` // --fabric-file: port GUID to its node's name
	Pairs     []pairJSON            `json:"pairs,omitempty"`
	Summary   summaryJSON           `json:"summary"`
	// Incomplete: what the matrix takes that was not given or cannot be predicted
	// (exit 4).
	Incomplete []cmdutil.Incomplete `json:"incomplete,omitempty"`
}

// matrix is what `partitions matrix` prints, as values.
type matrix struct {
	p       *query.Partitions
	m       *partconf.Model
	summary *partconf.Summary
	pairs   []query.Pair // grid mode only
	grid    bool
	names   map[check.GUID]string // --fabric-file: port GUID to its node's name
	// notKnown are the pairs whose answer, partitions or shared list an assumption not
	// given decides (grid mode), or every pair of a file OpenSM reads unpredictably;
	// incomplete says what the matrix takes (exit 4).
	notKnown int
	self     string // selfTaken
	// unknownType: ports taken for CA ports whose table differs as router ports
	// (query.Partitions.UnknownType), said on stderr and in incomplete.
	unknownType map[check.GUID][]check.PKey
	// unsure are the summary's figures an assumption not given would change.
	unsure     summaryNotKnown
	incomplete []cmdutil.Incomplete
}

// summaryNotKnown are the figures of the summary that an assumption not given (SELF
// without --sm-guid, a port type without --router) would change: ? in the text, null
// in the JSON. The figures are those of the ports as taken (none the SM's, CA ports
// unless --router says otherwise).
type summaryNotKnown struct {
	partitions map[check.PartitionKey]bool // a partition's FULL, LIMITED and PAIRS
	memberOf   map[check.GUID]bool
	// reaches are, by port, the partitions in which whether it reaches another port
	// is not known (they are not in its REACHES).
	reaches                                   map[check.GUID][]check.PartitionKey
	groups, groupsWithoutDefault, onlyDefault bool
}

// any reports whether some figure is not known.
func (u summaryNotKnown) any() bool {
	return len(u.partitions) > 0 || len(u.memberOf) > 0 || len(u.reaches) > 0 || u.groups || u.groupsWithoutDefault || u.onlyDefault
}

// summaryUnknown works out summaryNotKnown: every figure of a partition in which a
// port's table may differ (as the SM's port, SELF's partitions; as a router port,
// those where ALL_ROUTERS and ALL_CAS give it other entries), whether its members
// reach another there, a port's count of partitions where it may join one, and the
// groups (an entry gained or lost may join or split them).
func (x *matrix) summaryUnknown() summaryNotKnown {
	u := summaryNotKnown{partitions: map[check.PartitionKey]bool{}, memberOf: map[check.GUID]bool{}, reaches: map[check.GUID][]check.PartitionKey{}}
	// Each partition's members as taken, full or not, and in port order.
	members := map[check.PartitionKey]map[check.GUID]bool{}
	inOrder := map[check.PartitionKey][]check.GUID{}
	isMember := func(g check.GUID, k check.PartitionKey) bool {
		_, ok := members[k][g]
		return ok
	}
	for _, port := range x.m.Ports {
		for _, p := range x.m.PKeys(port.GUID) {
			k := p.Partition()
			if members[k] == nil {
				members[k] = map[check.GUID]bool{}
			}
			if !isMember(port.GUID, k) {
				inOrder[k] = append(inOrder[k], port.GUID)
			}
			members[k][port.GUID] = members[k][port.GUID] || p.IsFull()
		}
	}
	groupOf := func(groups [][]check.GUID) map[check.GUID]int {
		out := map[check.GUID]int{}
		for i, grp := range groups {
			for _, g := range grp {
				out[g] = i + 1
			}
		}
		return out
	}
	all, noDef := groupOf(x.summary.Groups), groupOf(x.summary.GroupsWithoutDefault)
	// joins: ports a and b would be linked through partition k.
	joins := func(a, b check.GUID, k check.PartitionKey) {
		if a == b {
			return
		}
		if all[a] == 0 || all[a] != all[b] {
			u.groups = true
		}
		if k != check.DefaultPartition && (noDef[a] == 0 || noDef[a] != noDef[b]) {
			u.groupsWithoutDefault = true
		}
	}
	reached := map[check.GUID][]check.PartitionKey{}
	for _, pr := range x.summary.Ports {
		reached[pr.GUID] = pr.Reaches
	}
	mayReach := func(g check.GUID, k check.PartitionKey) {
		if !slices.Contains(u.reaches[g], k) {
			u.reaches[g] = append(u.reaches[g], k)
		}
	}
	// SELF: any port may be the SM's, and SELF may give it an entry or change its
	// membership in each partition with a SELF item (selfPartitions). Where SELF only
	// raises it, what is reached stays reached and groups only merge: the SM's port,
	// a full member, would join every member of the partition; else (the model,
	// checked against OpenSM by make truth, lowers a full member for a limited SELF
	// after it) nothing of the partition's members is known.
	if x.self != "" {
		for k, raises := range selfPartitions(x.p.Config) {
			if raises && !slices.ContainsFunc(x.m.Ports, func(p partconf.Port) bool { return !members[k][p.GUID] }) {
				continue // every port a full member already: SELF changes nothing there
			}
			u.partitions[k] = true
			var first check.GUID // a member: every other port may be linked to it
			if len(inOrder[k]) > 0 {
				first = inOrder[k][0]
			}
			for _, port := range x.m.Ports {
				if !isMember(port.GUID, k) {
					u.memberOf[port.GUID] = true
				}
				if first == 0 {
					continue // the SM's port alone in it: it reaches nobody there
				}
				if !raises || !slices.Contains(reached[port.GUID], k) && len(x.m.Ports) > 1 {
					mayReach(port.GUID, k)
				}
				if !raises {
					u.groups = true // a port may leave a group
					u.groupsWithoutDefault = u.groupsWithoutDefault || k != check.DefaultPartition
				}
				joins(first, port.GUID, k)
			}
		}
	}
	for g, asRouter := range x.unknownType {
		asCA := x.m.PKeys(g)
		of := func(keys []check.PKey, k check.PartitionKey) []check.PKey {
			var out []check.PKey
			for _, p := range keys {
				if p.Partition() == k {
					out = append(out, p)
				}
			}
			return out
		}
		for _, p := range slices.Concat(asCA, asRouter) {
			k := p.Partition()
			if slices.Equal(of(asCA, k), of(asRouter, k)) {
				continue
			}
			u.partitions[k] = true
			if (len(of(asCA, k)) == 0) != (len(of(asRouter, k)) == 0) {
				u.memberOf[g] = true
			}
			mayReach(g, k)
			for _, o := range inOrder[k] {
				mayReach(o, k)
				joins(g, o, k)
			}
			u.groups = true // a port that loses an entry may leave a group
			u.groupsWithoutDefault = u.groupsWithoutDefault || k != check.DefaultPartition
		}
	}
	if cmdutil.UncertainIncomplete(x.p.Config) != nil {
		// OpenSM reads the file unpredictably: the summary is the file as written,
		// and no figure of it is known (as no pair of the grid is).
		u.groups, u.groupsWithoutDefault, u.onlyDefault = true, true, true
		for _, part := range x.p.Config.Partitions {
			u.partitions[part.Key] = true
		}
		for _, port := range x.m.Ports {
			u.memberOf[port.GUID] = true
			for k := range members {
				mayReach(port.GUID, k)
			}
		}
	}
	only := map[check.GUID]bool{}
	for _, g := range x.summary.OnlyDefault {
		only[g] = true
	}
	for g, ks := range u.reaches {
		slices.Sort(ks)
		u.reaches[g] = ks
		// A port that reaches nobody outside the default partition may reach one
		// there; one that does may no longer.
		if slices.ContainsFunc(ks, func(k check.PartitionKey) bool {
			return k != check.DefaultPartition && (only[g] || slices.Contains(reached[g], k))
		}) {
			u.onlyDefault = true
		}
	}
	// A partition without members as taken is not in the summary; one a port may
	// join is, with its figures not known.
	for k := range u.partitions {
		if !slices.ContainsFunc(x.summary.Partitions, func(pr partconf.PartitionReach) bool { return pr.Key == k }) {
			if part := x.p.Config.Partition(k); part != nil {
				x.summary.Partitions = append(x.summary.Partitions, partconf.PartitionReach{Key: k, Name: part.Name})
			}
		}
	}
	sort.SliceStable(x.summary.Partitions, func(i, j int) bool { return keyLess(x.summary.Partitions[i].Key, x.summary.Partitions[j].Key) })
	return u
}

func runMatrix(o *MatrixOptions) error {
	p, err := o.OpenSM.LoadFile(&o.File, &o.Deps)
	if err != nil {
		return err
	}
	names, err := o.Types.apply(p)
	if err != nil {
		return err
	}
	if p.Config.Rejected {
		o.Notices.Warn(rejectedWarning(p.Config))
	}
	m := partconf.NewModel(p.Config, p.TypedPorts(), p.Options)
	x := matrix{p: p, m: m, summary: m.Summary(), names: names} // assumptions sorts its partitions
	if len(m.Ports) <= gridMax && !o.Summary {
		x.grid = true
		if x.pairs, err = p.Pairs(m.Ports); err != nil {
			return err
		}
	}
	x.assumptions()
	switch {
	case o.Format == cmdutil.FormatJSON:
		err = cmdutil.WriteJSON(o.IO.Out, x.json())
	case x.grid:
		err = x.gridText(o.IO.Out, o.Format)
	default:
		err = x.summaryText(o.IO.Out, o.Format)
	}
	if err != nil {
		return err
	}
	if x.notKnown > 0 {
		fmt.Fprintf(o.IO.ErrOut, "ibkey: for %d of the %s, %s\n",
			x.notKnown, textsafe.Plural(len(x.pairs), "pair", "pairs"), pairsNotKnown)
	}
	if x.self != "" {
		o.Notices.Warn(x.self) // wrapped to a terminal's width, as partitions show's
	}
	err = cmdutil.Uncertain(o.IO.ErrOut, p.Config, "the matrix above is")
	if err := typeUnknown(o.IO.ErrOut, p.Config.File, x.unknownType, "the matrix above is"); err != nil {
		return err
	}
	if err == nil && len(x.incomplete) > 0 {
		return cmdutil.Exit(cmdutil.ExitIncomplete)
	}
	return err
}

// pairsNotKnown is what a pair not known depends on, as can-talk says it.
const pairsNotKnown = "whether they can talk (?Y, ?N), which partitions work for them (K?) or whether they share one more (+?) depends on what was not given (--sm-guid, --router) or cannot be predicted; 'ibkey can-talk --partitions FILE GUID GUID' says on what"

// assumptions sets the pairs not known and the matrix's incomplete items: a file
// OpenSM reads unpredictably (every pair), SELF without --sm-guid and port types
// without --router where they change a port's table (query.CanTalk's alternatives).
func (x *matrix) assumptions() {
	if u := cmdutil.UncertainIncomplete(x.p.Config); u != nil {
		x.incomplete = append(x.incomplete, *u)
		x.notKnown = len(x.pairs)
		for i := range x.pairs {
			x.pairs[i].Kind = check.VerdictUnknown
		}
	} else {
		for _, pr := range x.pairs {
			if pr.Kind == check.VerdictUnknown || len(pr.NotKnown) > 0 || pr.SharedAssumed {
				x.notKnown++
			}
		}
	}
	if x.self = selfTaken(x.p, x.m.Ports, fileTables(x.p, x.m), "the matrix takes none of its ports"); x.self != "" {
		x.incomplete = append(x.incomplete, cmdutil.Incomplete{Kind: cmdutil.IncompleteNotChecked, Message: x.self})
	}
	// Every port of the matrix, the SM's (--sm-guid) too when the file does not name
	// it, as partitions show does.
	x.unknownType = x.p.UnknownType(portGUIDs(x.m.Ports)...)
	if t := typeUnknownText(x.p.Config.File, x.unknownType, "the matrix is"); t != "" {
		x.incomplete = append(x.incomplete, cmdutil.Incomplete{Kind: cmdutil.IncompleteNotChecked, Message: t})
	}
	x.unsure = x.summaryUnknown()
}

// selfTaken says, without --sm-guid, which of ports SELF would give other entries as
// the port OpenSM runs on (taken says what takes none of them for it: the matrix, the
// tables shown), as can-talk's alternatives compare them; "" when none would. table
// is a port's table when OpenSM runs on the port sm (0: on none of them), more the
// configurations applied before FILE (partitions show --previous), whose SELF items
// count too.
func selfTaken(p *query.Partitions, ports []partconf.Port, table func(sm check.GUID, port partconf.Port) []check.PKey, taken string, more ...*partconf.Config) string {
	if p.Options.SMGUID != 0 || !slices.ContainsFunc(append([]*partconf.Config{p.Config}, more...), func(c *partconf.Config) bool { return len(selfPartitions(c)) > 0 }) {
		return ""
	}
	var differ []string
	for _, port := range ports {
		if !slices.Equal(table(port.GUID, port), table(0, port)) {
			differ = append(differ, port.GUID.String())
			if len(differ) > 3 {
				break
			}
		}
	}
	if len(differ) == 0 {
		return ""
	}
	list := strings.Join(differ[:min(len(differ), 3)], ", ")
	if len(differ) > 3 {
		list += " and others"
	}
	return fmt.Sprintf("%s for the port OpenSM runs on: as that port, %s would get other entries (SELF in %s): give --sm-guid",
		taken, list, filesOf(p, more))
}

// filesOf names FILE, and with configurations applied before it (more: partitions
// show --previous) says they count too.
func filesOf(p *query.Partitions, more []*partconf.Config) string {
	if len(more) > 0 {
		return p.Config.File + " or a --previous file"
	}
	return p.Config.File
}

// fileTables is selfTaken's table for m, FILE's model: each port is modelled as the
// SM's alone (a model of one port replays only its items, partconf.Config.replay, so
// this is linear in the file).
func fileTables(p *query.Partitions, m *partconf.Model) func(sm check.GUID, port partconf.Port) []check.PKey {
	return func(sm check.GUID, port partconf.Port) []check.PKey {
		if sm == 0 {
			return m.PKeys(port.GUID)
		}
		asSM := *p
		asSM.Options.SMGUID = sm
		return asSM.ModelOf(port.GUID).PKeys(port.GUID)
	}
}

// selfPartitions are the partitions with a SELF item in the configuration OpenSM
// applies from c (written, or implied by a missing Default line), each true when every
// SELF item there is full (or both): SELF then only raises the SM's port's membership
// there (an item for the port after it wins either way, as it does for every port).
func selfPartitions(c *partconf.Config) map[check.PartitionKey]bool {
	out := map[check.PartitionKey]bool{}
	for _, d := range c.Applied().Definitions {
		for _, m := range d.Members {
			if m.Kind != partconf.KindSelf {
				continue
			}
			raises, seen := out[d.Key]
			out[d.Key] = (raises || !seen) && m.Membership != partconf.FlagLimited
		}
	}
	return out
}

// partitionsOf is each P_Key's 15-bit partition key, as text.
func partitionsOf(ks []check.PKey) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = k.Partition().String()
	}
	return out
}

func (x matrix) json() matrixJSON {
	out := matrixJSON{File: x.p.Config.File, Rejected: x.p.Config.Rejected, Uncertain: x.p.Config.Uncertain, Mode: "summary", Ports: make([]string, len(x.m.Ports))}
	for i, port := range x.m.Ports {
		out.Ports[i] = port.GUID.String()
		if name, ok := x.names[port.GUID]; ok {
			if out.NodeDescs == nil {
				out.NodeDescs = map[string]string{}
			}
			out.NodeDescs[out.Ports[i]] = name
		}
	}
	s, u := x.summary, x.unsure
	out.Summary = summaryJSON{Partitions: []partitionReachJSON{}, Ports: []portReachJSON{}}
	if !u.onlyDefault {
		out.Summary.OnlyDefault = stringsOf(s.OnlyDefault)
	}
	for _, pr := range s.Partitions {
		j := partitionReachJSON{Key: pr.Key.String(), Name: pr.Name}
		if !u.partitions[pr.Key] {
			j.Full, j.Limited, j.Pairs = new(pr.Full), new(pr.Limited), new(pr.Pairs)
		}
		out.Summary.Partitions = append(out.Summary.Partitions, j)
	}
	for _, pr := range s.Ports {
		known, notKnown := reachesOf(pr, u)
		j := portReachJSON{PortGUID: pr.GUID.String(), Reaches: stringsOf(known)}
		if len(notKnown) > 0 {
			j.ReachesNotKnown = stringsOf(notKnown)
		}
		if !u.memberOf[pr.GUID] {
			j.MemberOf = new(pr.MemberOf)
		}
		out.Summary.Ports = append(out.Summary.Ports, j)
	}
	for _, x := range []struct {
		groups  [][]check.GUID
		unknown bool
		out     *[][]string
	}{{s.Groups, u.groups, &out.Summary.Groups}, {s.GroupsWithoutDefault, u.groupsWithoutDefault, &out.Summary.GroupsWithoutDefault}} {
		if x.unknown {
			continue // null
		}
		*x.out = [][]string{}
		for _, g := range x.groups {
			*x.out = append(*x.out, stringsOf(g))
		}
	}
	if x.grid {
		out.Mode = "grid"
		out.Pairs = []pairJSON{}
		for _, pr := range x.pairs {
			j := pairJSON{A: pr.A.String(), B: pr.B.String(), Partitions: partitionsOf(pr.Partitions), LimitedOnly: partitionsOf(pr.LimitedOnly),
				PartitionsNotKnown: partitionsOf(pr.NotKnown), PartitionsComplete: !pr.SharedAssumed}
			switch pr.Kind {
			case check.VerdictYes, check.VerdictNo:
				j.CanTalk = new(pr.Kind == check.VerdictYes)
			default:
				var why []string
				for _, nc := range pr.NotChecked {
					why = append(why, nc.Sentence)
				}
				if u := cmdutil.UncertainIncomplete(x.p.Config); u != nil {
					why = append(why, u.Message)
				}
				j.Why = strings.Join(why, "; ")
			}
			out.Pairs = append(out.Pairs, j)
		}
	}
	out.Incomplete = x.incomplete
	return out
}

// reachesOf are the partitions in which a port reaches another port, and those in
// which that is not known (u).
func reachesOf(pr partconf.PortReach, u summaryNotKnown) (known, notKnown []check.PartitionKey) {
	notKnown = u.reaches[pr.GUID]
	for _, k := range pr.Reaches {
		if !slices.Contains(notKnown, k) {
			known = append(known, k)
		}
	}
	return known, notKnown
}

// portLetter names grid rows and columns: A..Z, then AA...
func portLetter(i int) string {
	s := ""
	for i++; i > 0; i = (i - 1) / 26 {
		s = string(rune('A'+(i-1)%26)) + s
	}
	return s
}

func (x matrix) gridText(w io.Writer, f cmdutil.Format) error {
	n := len(x.m.Ports)
	cells := make([][]string, n)
	for i := range cells {
		cells[i] = make([]string, n)
		cells[i][i] = "-"
	}
	k := 0
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			cells[i][j] = pairCell(x.pairs[k])
			cells[j][i] = cells[i][j]
			k++
		}
	}
	header := []string{"PORT"}
	for i := range x.m.Ports {
		header = append(header, portLetter(i))
	}
	mg := cmdutil.Grid{Header: header, Required: header} // a grid without a port is wrong: Fits or the summary
	for i := range x.m.Ports {
		mg.Add(append([]string{portLetter(i)}, cells[i]...)...)
	}
	if f == cmdutil.FormatTable && !mg.Fits(w) {
		// A table column a port: at 80 columns about 7 ports fit. Plain records as
		// wide as the grid would wrap on the terminal; the summary says the same per
		// partition and per port.
		fmt.Fprintf(w, "(the grid of %d ports does not fit %d columns: the summary instead; -o plain shows the grid)\n\n", n, cmdutil.TableWidth(w))
		return x.summaryText(w, f)
	}
	fmt.Fprintf(w, "Ports (%s):\n", x.p.Config.File)
	if n == 0 {
		// A note under the title, as partitions show's; plain keeps its header lines.
		fmt.Fprintln(w, noPorts)
		if f == cmdutil.FormatTable {
			return nil
		}
	}
	pg := cmdutil.Grid{Header: []string{"PORT", "GUID", "NOTES"}, Required: []string{"PORT", "GUID"}}
	add := nodeColumn(&pg, 2, x.names)
	for i, port := range x.m.Ports {
		var notes []string
		if port.GUID == x.p.Options.SMGUID {
			notes = append(notes, "SM port (SELF)")
		}
		if port.Type == check.NodeRouter {
			notes = append(notes, "router port")
		}
		if !x.p.InFile(port.GUID) {
			notes = append(notes, "not in the file")
		}
		if d := x.m.DroppedEntries(port.GUID); len(d) > 0 {
			// OpenSM could not place them (ERR 0512): no partition the port talks in.
			keys := make([]string, len(d))
			for i, e := range d {
				keys[i] = e.PKey.String()
			}
			notes = append(notes, fmt.Sprintf("table full (%d entries): OpenSM drops %s", x.p.TableSize(port), strings.Join(keys, " ")))
		}
		add(port.GUID, portLetter(i), port.GUID.String(), strings.Join(notes, "; "))
	}
	if err := pg.Render(w, f); err != nil {
		return err
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Who can talk: Y yes, in these partitions (the default partition 0x7fff only when no other works),")
	if x.notKnown > 0 {
		fmt.Fprintln(w, "  N no; (limited K) partitions they share where both are limited members; not known:")
		fmt.Fprintln(w, "  ?Y, ?N the answer as taken, K? whether K works, +? whether they share one more:")
	} else {
		fmt.Fprintln(w, "  N no; (limited K) partitions they share where both are limited members:")
	}
	return mg.Render(w, f)
}

// pairCell is one grid cell: Y and the partitions that work (Pair.Working), or N;
// then the shared partitions where both are limited. Not known: ? before the answer
// as taken, ? after a partition whose working is not known, +? when they may share
// one more.
func pairCell(pr query.Pair) string {
	keys := func(ks []check.PKey) string {
		out := partitionsOf(ks)
		for i, k := range ks {
			if slices.Contains(pr.NotKnown, k) {
				out[i] += "?"
			}
		}
		return strings.Join(out, ",")
	}
	c := "N"
	if len(pr.Partitions) > 0 {
		c = "Y " + keys(pr.Working())
	}
	if len(pr.LimitedOnly) > 0 {
		c += " (limited " + keys(pr.LimitedOnly) + ")"
	}
	if pr.SharedAssumed {
		c += " +?"
	}
	if pr.Kind != check.VerdictYes && pr.Kind != check.VerdictNo {
		c = "?" + c
	}
	return c
}

// noPorts is the note of a matrix without a port: a file that names no port GUID
// (only keywords) and no --sm-guid.
const noPorts = "  no port: the file names no port GUID; give --sm-guid for the SM's port, or ask 'ibkey can-talk --partitions FILE GUID GUID' for any two"

// listMax bounds GUID lists in the summary text; the JSON has them all.
const listMax = 8

// guidList is gs as text; in a table (on a terminal, where long lines wrap between
// words) with a space after each comma, so that a list of GUIDs wraps between them
// rather than running off the screen; plain keeps one field.
func guidList(gs []check.GUID, f cmdutil.Format) string {
	sep := ","
	if f == cmdutil.FormatTable {
		sep = ", "
	}
	if len(gs) <= listMax {
		return strings.Join(stringsOf(gs), sep)
	}
	return strings.Join(stringsOf(gs[:listMax]), sep) + fmt.Sprintf(" and %d more", len(gs)-listMax)
}

func (x matrix) summaryText(w io.Writer, f cmdutil.Format) error {
	s := x.summary
	fmt.Fprintf(w, "%s: %s, %s\n", x.p.Config.File, textsafe.Plural(len(x.m.Ports), "port", "ports"), textsafe.Plural(len(s.Partitions), "partition", "partitions"))
	if len(x.m.Ports) == 0 {
		// Nothing below would be about a port: not "every port reaches another".
		fmt.Fprintln(w, noPorts)
		return nil
	}
	fmt.Fprintln(w)
	u := x.unsure
	fmt.Fprintln(w, "Partitions (PAIRS: pairs of ports that can talk in it):")
	if u.any() {
		fmt.Fprintln(w, "  ?: not known (here and below): it depends on which port is the SM's or a")
		fmt.Fprintln(w, "  router port, not given (--sm-guid, --router); the rest holds either way")
	}
	pg := cmdutil.Grid{Header: []string{"KEY", "NAME", "FULL", "LIMITED", "PAIRS"}, Required: []string{"KEY", "PAIRS"}}
	for _, pr := range s.Partitions {
		if u.partitions[pr.Key] {
			pg.Add(pr.Key.String(), pr.Name, "?", "?", "?")
			continue
		}
		pg.Add(pr.Key.String(), pr.Name, strconv.Itoa(pr.Full), strconv.Itoa(pr.Limited), strconv.FormatInt(pr.Pairs, 10))
	}
	if err := pg.Render(w, f); err != nil {
		return err
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Ports (REACHES: the partitions in which the port can talk to another port):")
	rg := cmdutil.Grid{Header: []string{"PORT", "PARTITIONS", "REACHES"}, Required: []string{"PORT", "REACHES"}}
	add := nodeColumn(&rg, 1, x.names)
	for _, pr := range s.Ports {
		known, notKnown := reachesOf(pr, u)
		keys := stringsOf(known)
		for _, k := range notKnown {
			keys = append(keys, k.String()+"?")
		}
		slices.SortFunc(keys, func(a, b string) int { return strings.Compare(strings.TrimSuffix(a, "?"), strings.TrimSuffix(b, "?")) })
		reaches := "nobody"
		if len(keys) > 0 {
			reaches = strings.Join(keys, ",")
		}
		memberOf := strconv.Itoa(pr.MemberOf)
		if u.memberOf[pr.GUID] {
			memberOf = "?"
		}
		add(pr.GUID, pr.GUID.String(), memberOf, reaches)
	}
	if err := rg.Render(w, f); err != nil {
		return err
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Isolation groups (ports connected through partitions where they can talk, transitively):")
	for _, g := range []struct {
		what    string
		groups  [][]check.GUID
		unknown bool
	}{{"counting the default partition", s.Groups, u.groups}, {"without the default partition", s.GroupsWithoutDefault, u.groupsWithoutDefault}} {
		if g.unknown {
			fmt.Fprintf(w, "  %s: not known (?)\n", g.what)
			continue
		}
		in := 0
		for _, grp := range g.groups {
			in += len(grp)
		}
		fmt.Fprintf(w, "  %s: %s, %s alone\n", g.what, textsafe.Plural(len(g.groups), "group", "groups"), textsafe.Plural(len(x.m.Ports)-in, "port", "ports"))
		for i, grp := range g.groups {
			if i == listMax {
				fmt.Fprintf(w, "    and %d more groups\n", len(g.groups)-listMax)
				break
			}
			fmt.Fprintf(w, "    %d: %s: %s\n", i+1, textsafe.Plural(len(grp), "port", "ports"), guidList(grp, f))
		}
	}
	fmt.Fprintln(w)
	if u.onlyDefault {
		fmt.Fprintln(w, "Which ports reach nobody except through the default partition: not known (?).")
		return nil
	}
	if len(s.OnlyDefault) == 0 {
		fmt.Fprintln(w, "Every port reaches another port outside the default partition.")
		return nil
	}
	fmt.Fprintf(w, "Reach nobody except through the default partition: %s: %s\n", textsafe.Plural(len(s.OnlyDefault), "port", "ports"), guidList(s.OnlyDefault, f))
	return nil
}
