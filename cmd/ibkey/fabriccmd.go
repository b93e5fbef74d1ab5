package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/check/partconf"
	"github.com/ibkey/ibkey/internal/query"
)

// sweepWindowIbsim is the MADs in flight during a sweep on ibsim. Measured with
// BenchmarkLabSweep (internal/query) on fat trees of 50 and 512 nodes: 8 is the
// fastest, 16 (the transport's default) 2-3 times slower, probably because Linux queues
// at most net.unix.max_dgram_qlen (10) datagrams on ibsim's unix socket.
const sweepWindowIbsim = 8

// FabricSource is where a fabric command's sweep comes from: a saved file
// (--fabric-file) or a sweep run now through the transport the global flags select.
type FabricSource struct {
	*Globals
	File    string        // --fabric-file
	Timeout time.Duration // --timeout
}

func (s *FabricSource) addFlags(c *cobra.Command) {
	c.Flags().StringVar(&s.File, "fabric-file", "", "read a saved sweep from `FILE` (ibkey fabric discover -o json > FILE) instead of sweeping the fabric")
	c.Flags().DurationVar(&s.Timeout, "timeout", 5*time.Minute, "stop the sweep after this long and report what was read (exit 3)")
	_ = c.MarkFlagFilename("fabric-file", "json")
}

// readFabricFile decodes a saved sweep. Every problem is bad input (exit 2) naming the
// file and what is wrong with it.
func readFabricFile(path string) (*check.Fabric, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, &query.UsageError{Msg: fmt.Sprintf("--fabric-file: %v", err)}
	}
	defer fh.Close()
	f, err := check.DecodeFabric(fh)
	if err != nil {
		var fe *check.FabricFileError
		if errors.As(err, &fe) {
			return nil, &query.UsageError{Msg: fmt.Sprintf("--fabric-file %s: %s", path, fe.Problem)}
		}
		return nil, &query.UsageError{Msg: fmt.Sprintf("--fabric-file %s: %v", path, err)}
	}
	return f, nil
}

// sweep runs a sweep through the open transport. A sweep that stopped early comes back
// with what it read and the error.
func (s *FabricSource) sweep(ctx context.Context, fab *query.Fabric, noTables bool) (*check.Fabric, error) {
	f, err := query.Sweep(ctx, fab.T, query.SweepOptions{Timeout: s.Timeout, NoTables: noTables, Source: fab.Via})
	if f == nil {
		return nil, &query.EnvError{Msg: fmt.Sprintf("%v (via %s)", err, fab.Via)}
	}
	return f, err
}

// prepare sets the transport up for a sweep.
func (s *FabricSource) prepare() error {
	if s.Timeout <= 0 {
		return &query.UsageError{Msg: fmt.Sprintf("invalid --timeout %v (accepted: a positive duration, e.g. 30s)", s.Timeout)}
	}
	if s.ibsimBase() != "" && s.Globals.Fabric.window == 0 {
		s.Globals.Fabric.window = sweepWindowIbsim
	}
	return nil
}

// with gives fn the fabric: the saved file, or a sweep run now. fn prints what it has;
// afterwards a partial sweep (stopped early, or nodes that did not answer) is an
// environment problem, exit 3, whatever fn returned.
func (s *FabricSource) with(noTables bool, fn func(f *check.Fabric) error) error {
	n := s.notices()
	if s.File != "" {
		f, err := readFabricFile(s.File)
		if err != nil {
			return err
		}
		n.label(fmt.Sprintf("fabric: %s: %s", s.File, sweepSummary(f)))
		return partialError(f, fn(f))
	}
	if err := s.prepare(); err != nil {
		return err
	}
	return s.WithFabric(func(ctx context.Context, fab *query.Fabric) error {
		f, err := s.sweep(ctx, fab, noTables)
		if f == nil {
			return err
		}
		n.label(fmt.Sprintf("fabric: %s", sweepSummary(f)))
		return partialError(f, fn(f))
	})
}

// partialError is exit 3 for a partial sweep, after its output; else err.
func partialError(f *check.Fabric, err error) error {
	var why []string
	if f.Incomplete != "" {
		why = append(why, "the sweep stopped early: "+f.Incomplete)
	}
	if n := len(f.Unreachable); n > 0 {
		var where []string
		for i, u := range f.Unreachable {
			if i == 3 {
				where = append(where, fmt.Sprintf("and %d more", n-3))
				break
			}
			where = append(where, fmt.Sprintf("behind %s (DR path %s): %s", f.Label(u.From), u.Path, u.Error))
		}
		why = append(why, fmt.Sprintf("%d %s did not answer, %s", n, pluralWord(n, "node", "nodes"), strings.Join(where, "; ")))
	}
	if len(why) == 0 {
		return err
	}
	return &query.EnvError{Msg: "partial sweep: " + strings.Join(why, "; ") + "; what was read is shown above"}
}

func pluralWord(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// sweepSummary is "6 nodes (2 switches, 4 CAs), 9 links, via X at T in D".
func sweepSummary(f *check.Fabric) string {
	var sw, ca, rt int
	for _, n := range f.Nodes {
		switch n.Type {
		case check.NodeSwitch:
			sw++
		case check.NodeRouter:
			rt++
		default:
			ca++
		}
	}
	kinds := []string{plural(sw, "switch", "switches"), plural(ca, "CA", "CAs")}
	if rt > 0 {
		kinds = append(kinds, plural(rt, "router", "routers"))
	}
	s := fmt.Sprintf("%s (%s), %s", plural(len(f.Nodes), "node", "nodes"), strings.Join(kinds, ", "), plural(len(f.Links()), "link", "links"))
	if f.Source != "" {
		s += ", swept via " + f.Source
	}
	if !f.SweptAt.IsZero() {
		s += " at " + f.SweptAt.UTC().Format(time.RFC3339)
	}
	return s + fmt.Sprintf(" in %v", f.Duration.Round(time.Millisecond))
}

func newFabricCmd(g *Globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "fabric",
		Short: "Sweep the subnet: nodes, links and every port's P_Key table; audit and compare sweeps",
		Long: `Sweep the whole subnet by directed route from the local port, as ibnetdiscover does,
reading every node, link and P_Key table with SMP Gets (it never sets anything), then
answer from that one sweep:

  discover          nodes with type, GUIDs, description, LIDs, ports and links
  pkeys             every port's P_Key table; --key K: the members of one partition
  check             audit the tables (cable ends that disagree, limited-only
                    partitions, enforcement off, full tables, ...), and with
                    --partitions FILE compare them with what OpenSM would program
  diff A B          what changed between two saved sweeps

The sweep needs fabric access: umad on a local port (--ca/--ca-port, default the first
ACTIVE InfiniBand port; usually root or the rdma group) or the ibsim simulator
(--ibsim). Save one with 'ibkey fabric discover -o json > fabric.json' and give it back
with --fabric-file fabric.json to pkeys, check and can-talk: audits then run offline.

Exit codes (all subcommands): 2 bad usage or an unusable --fabric-file (the problem is
named); 3 no fabric access, or a partial sweep (stopped at --timeout, or nodes behind a
link did not answer): what was read is printed first, then the error.`,
		Example: `  ibkey fabric discover --ibsim
  ibkey fabric discover -o json > fabric.json
  ibkey fabric pkeys --fabric-file fabric.json --key 0x0002
  ibkey fabric check --partitions /etc/opensm/partitions.conf
  ibkey fabric diff fabric.json`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, args []string) error { return c.Help() },
	}
	c.AddCommand(newFabricDiscoverCmd(g), newFabricPKeysCmd(g), newFabricCheckCmd(g), newFabricDiffCmd(g))
	return c
}

// ---- discover ----

// FabricDiscoverOptions holds `ibkey fabric discover`'s flags.
type FabricDiscoverOptions struct {
	FabricSource
	NoTables bool
}

func newFabricDiscoverCmd(g *Globals) *cobra.Command {
	o := &FabricDiscoverOptions{FabricSource: FabricSource{Globals: g}}
	c := &cobra.Command{
		Use:   "discover",
		Short: "Sweep the subnet: nodes, GUIDs, descriptions, LIDs, ports and links",
		Long: `Sweep the subnet by directed route from the local port, breadth first as
ibnetdiscover does: every node that answers, with its type, node GUID, description,
ports (port GUID, LID, state) and the links between them. The P_Key tables are read too
(--no-tables skips them), so the JSON is a complete sweep to save and give back with
--fabric-file.

Output: one row per port that is an end port (a CA port, a switch's port 0) or has a
cable: NODE TYPE NODE_GUID PORT PORT_GUID LID STATE PEER, a table on a terminal and
plain columns otherwise; a summary goes to stderr. A switch's external ports have no
GUID or LID of their own (the switch's are on port 0).

JSON (-o json) is the fabric file: {"format":"ibkey-fabric","version":1,"source",
"swept_at","duration_ms","local":{"node_guid","port"},"incomplete"?,
"nodes":[{"node_guid","type" (ca|switch|router),"description","system_image_guid",
"vendor_id","device_id","num_ports","partition_cap","partition_enforcement_cap"?,
"dr_path","errors"?,"ports":[{"port","port_guid","lid","lmc","sm_lid","state",
"phys_state","enforcement"?:{"inbound","outbound","filter_raw_inbound",
"filter_raw_outbound"},"pkey_violations","peer":{"node_guid","port"}|null,
"peer_error"?,"table_size","pkeys":["0xffff",...]|null,"pkeys_error"?,"error"?}]}],
"unreachable":[{"from":{"node_guid","port"},"dr_path","error"}]}.

Exit codes: 0; 2 bad usage or --fabric-file; 3 no fabric access or a partial sweep
(printed first).`,
		Example: `  ibkey fabric discover --ibsim --sim-node HcaA
  ibkey fabric discover -o json > fabric.json
  ibkey fabric discover --fabric-file fabric.json -o table`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, args []string) error { return runFabricDiscover(o) },
	}
	o.addFlags(c)
	c.Flags().BoolVar(&o.NoTables, "no-tables", false, "do not read the P_Key tables (discovery only; the file then has none)")
	return c
}

func runFabricDiscover(o *FabricDiscoverOptions) error {
	f, err := o.Format()
	if err != nil {
		return err
	}
	return o.with(o.NoTables, func(fab *check.Fabric) error {
		if f == formatJSON {
			return check.EncodeFabric(o.IO.Out, fab)
		}
		g := grid{header: []string{"NODE", "TYPE", "NODE_GUID", "PORT", "PORT_GUID", "LID", "STATE", "PEER"}}
		for _, n := range fab.Nodes {
			for _, p := range n.Ports {
				if !n.IsEndPort(p) && p.Peer == nil && p.PeerError == "" {
					continue
				}
				peer := ""
				switch {
				case p.Peer != nil:
					peer = fab.Label(*p.Peer)
				case p.PeerError != "":
					peer = "no answer: " + p.PeerError
				}
				lid := ""
				if n.IsEndPort(p) {
					lid = strconv.Itoa(int(p.LID))
				}
				g.add(nodeName(n), string(n.Type), n.GUID.String(), strconv.Itoa(p.Num), guidCell(p.GUID), lid, p.State, peer)
			}
		}
		return g.render(o.IO.Out, f)
	})
}

func nodeName(n *check.Node) string {
	if n.Description == "" {
		return n.GUID.String()
	}
	return n.Description
}

func guidCell(g check.GUID) string {
	if g == 0 {
		return ""
	}
	return g.String()
}

// ---- pkeys ----

// FabricPKeysOptions holds `ibkey fabric pkeys`'s flags.
type FabricPKeysOptions struct {
	FabricSource
	Key string
}

func newFabricPKeysCmd(g *Globals) *cobra.Command {
	o := &FabricPKeysOptions{FabricSource: FabricSource{Globals: g}}
	c := &cobra.Command{
		Use:   "pkeys",
		Short: "Every port's P_Key table from one sweep; --key: the ports in one partition",
		Long: `Every port's P_Key table from one sweep of the subnet (or a saved one, --fabric-file):
the end ports (CA ports, each switch's port 0) and the switch ports that have a cable
(a switch port facing a CA holds a copy of the CA port's keys, for partition
enforcement). One row per port: NODE PORT TYPE NODE_GUID LID STATE SIZE VALID PKEYS,
PKEYS being the valid entries in index order. Ports whose table could not be read are
named on stderr.

--key PKEY lists the ports whose table holds that partition (the 15-bit key: 0x0001
and 0x8001 are the same partition) with their membership (full, limited, or both) and
the indexes of the entries; END_PORT is no for a switch's external port, which only
mirrors the port it faces. Exit 1 when no port holds it.

JSON (-o json): {"source","swept_at","ports":[{"node","node_guid","type","port",
"port_guid","lid","state","end_port","peer":{"node_guid","port"}|null,"table_size",
"valid_pkeys","entries":[{"index","pkey","key","membership"}],"pkeys_error"?}]}
(entries: the valid ones). With --key: {"key","members":[{"node_guid","port","node",
"type","end_port","membership","indexes"}]}.

Exit codes: 0; 1 (--key) no port holds the key; 2 bad usage or --fabric-file; 3 no
fabric access or a partial sweep (printed first).`,
		Example: `  ibkey fabric pkeys --ibsim
  ibkey fabric pkeys --fabric-file fabric.json --key 0x0002
  ibkey fabric pkeys --key 80:01 -o json`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, args []string) error { return runFabricPKeys(o) },
	}
	o.addFlags(c)
	c.Flags().StringVar(&o.Key, "key", "", "list the ports in partition `PKEY` (0x0001, 8001, 80:01) with their membership")
	return c
}

type fabricEntryJSON struct {
	Index      int    `json:"index"`
	PKey       string `json:"pkey"`
	Key        string `json:"key"`
	Membership string `json:"membership"`
}

type fabricPortJSON struct {
	Node       string            `json:"node"`
	NodeGUID   check.GUID        `json:"node_guid"`
	Type       check.NodeType    `json:"type"`
	Port       int               `json:"port"`
	PortGUID   *check.GUID       `json:"port_guid"`
	LID        *uint16           `json:"lid"`
	State      string            `json:"state"`
	EndPort    bool              `json:"end_port"`
	Peer       *check.PortID     `json:"peer"`
	TableSize  int               `json:"table_size"`
	Valid      int               `json:"valid_pkeys"`
	Entries    []fabricEntryJSON `json:"entries"`
	PKeysError string            `json:"pkeys_error,omitempty"`
}

func runFabricPKeys(o *FabricPKeysOptions) error {
	f, err := o.Format()
	if err != nil {
		return err
	}
	var key check.PKey
	if o.Key != "" {
		if key, err = check.ParsePKey(o.Key); err != nil {
			return err
		}
		if key.Key() == 0 {
			return &query.UsageError{Msg: fmt.Sprintf("invalid --key %q: key 0 is not a partition (accepted: a P_Key whose low 15 bits are not 0, e.g. 0x0001)", o.Key)}
		}
	}
	return o.with(false, func(fab *check.Fabric) error {
		if o.Key != "" {
			return fabricMembers(o, f, fab, key)
		}
		var ports []fabricPortJSON
		var unread []string
		for _, n := range fab.Nodes {
			for _, p := range n.Ports {
				end := n.IsEndPort(p)
				if !end && p.Peer == nil {
					continue
				}
				pj := fabricPortJSON{Node: n.Description, NodeGUID: n.GUID, Type: n.Type, Port: p.Num, State: p.State,
					EndPort: end, Peer: p.Peer, TableSize: p.TableSize, Entries: []fabricEntryJSON{}, PKeysError: p.PKeysError}
				if end {
					if p.GUID != 0 {
						g := p.GUID
						pj.PortGUID = &g
					}
					lid := p.LID
					pj.LID = &lid
				}
				for _, e := range p.Entries() {
					pj.Entries = append(pj.Entries, fabricEntryJSON{e.Index, e.PKey.String(), e.PKey.KeyString(), e.PKey.Membership().String()})
				}
				pj.Valid = len(pj.Entries)
				if p.PKeys == nil && (end || p.Peer != nil) && p.State != check.StateDown {
					why := p.PKeysError
					if why == "" {
						why = "not read"
					}
					unread = append(unread, fmt.Sprintf("%s: %s", fab.Label(check.PortID{Node: n.GUID, Port: p.Num}), why))
				}
				ports = append(ports, pj)
			}
		}
		if f == formatJSON {
			if ports == nil {
				ports = []fabricPortJSON{}
			}
			err := writeJSON(o.IO.Out, struct {
				Source  string           `json:"source"`
				SweptAt time.Time        `json:"swept_at"`
				Ports   []fabricPortJSON `json:"ports"`
			}{fab.Source, fab.SweptAt, ports})
			if err != nil {
				return err
			}
		} else {
			g := grid{header: []string{"NODE", "PORT", "TYPE", "NODE_GUID", "LID", "STATE", "SIZE", "VALID", "PKEYS"}}
			for _, p := range ports {
				lid := ""
				if p.LID != nil {
					lid = strconv.Itoa(int(*p.LID))
				}
				size, valid := strconv.Itoa(p.TableSize), strconv.Itoa(p.Valid)
				keys := make([]string, len(p.Entries))
				for i, e := range p.Entries {
					keys[i] = e.PKey
				}
				if p.Entries == nil || p.PKeysError != "" {
					valid = ""
				}
				name := p.Node
				if name == "" {
					name = p.NodeGUID.String()
				}
				g.add(name, strconv.Itoa(p.Port), string(p.Type), p.NodeGUID.String(), lid, p.State, size, valid, strings.Join(keys, ","))
			}
			if err := g.render(o.IO.Out, f); err != nil {
				return err
			}
		}
		n := o.notices()
		for i, u := range unread {
			if i == 10 {
				n.warn(fmt.Sprintf("and %d more tables not read", len(unread)-10))
				break
			}
			n.warn("table not read: " + u)
		}
		return nil
	})
}

func fabricMembers(o *FabricPKeysOptions, f format, fab *check.Fabric, key check.PKey) error {
	members := fab.Members(key)
	if f == formatJSON {
		if members == nil {
			members = []check.Member{}
		}
		if err := writeJSON(o.IO.Out, struct {
			Key     string         `json:"key"`
			Members []check.Member `json:"members"`
		}{key.KeyString(), members}); err != nil {
			return err
		}
	} else if len(members) > 0 {
		g := grid{header: []string{"NODE", "PORT", "TYPE", "NODE_GUID", "END_PORT", "MEMBERSHIP", "INDEXES"}}
		for _, m := range members {
			name := m.Description
			if name == "" {
				name = m.Node.String()
			}
			end := "yes"
			if !m.EndPort {
				end = "no"
			}
			idx := make([]string, len(m.Indexes))
			for i, x := range m.Indexes {
				idx[i] = strconv.Itoa(x)
			}
			g.add(name, strconv.Itoa(m.Port), string(m.Type), m.Node.String(), end, m.Membership, strings.Join(idx, ","))
		}
		if err := g.render(o.IO.Out, f); err != nil {
			return err
		}
	}
	var full, limited, ends int
	for _, m := range members {
		if !m.EndPort {
			continue
		}
		ends++
		switch m.Membership {
		case "full":
			full++
		case "limited":
			limited++
		default:
			full++ // both: it can talk as a full member
		}
	}
	n := o.notices()
	if len(members) == 0 {
		n.note(fmt.Sprintf("no port holds partition %s", key.KeyString()))
		return &silentError{code: exitNo}
	}
	n.note(fmt.Sprintf("partition %s: %s (%d full, %d limited), %s mirroring them", key.KeyString(),
		plural(ends, "end port", "end ports"), full, limited, plural(len(members)-ends, "switch port", "switch ports")))
	if full == 0 && ends > 0 {
		n.warn(fmt.Sprintf("every end port of partition %s is a limited member: limited members cannot talk to each other", key.KeyString()))
	}
	return nil
}

// ---- check ----

// FabricCheckOptions holds `ibkey fabric check`'s flags.
type FabricCheckOptions struct {
	FabricSource
	Partitions string
	AllowBoth  bool
	Strict     bool
	Ignore     []string
}

func newFabricCheckCmd(g *Globals) *cobra.Command {
	o := &FabricCheckOptions{FabricSource: FabricSource{Globals: g}}
	c := &cobra.Command{
		Use:   "check",
		Short: "Audit the subnet's P_Key tables, and compare them with a partitions.conf",
		Long: `Audit one sweep of the subnet (or a saved one, --fabric-file). Each finding names the
ports involved and says what to do.

Errors (the tables of a cable's two ends disagree, so a partition's packets are
dropped at the switch, or a switch lets a partition through to a non-member):
  hca-key-not-on-switch   a CA port holds a key the switch port it is cabled to lacks
  switch-key-not-on-hca   the switch port holds a key the CA port it faces lacks
Warnings (policy, and what could not be checked):
  limited-only-partition  every member of a partition is limited: nobody can talk in it
  enforcement-off         partition enforcement off on a switch port facing a CA
  table-full              a table with no free entry: the SM cannot add a partition
  port-not-active         a cabled port that is not ACTIVE
  not-read, sweep-incomplete   what the sweep could not read

With --partitions FILE (an OpenSM partitions.conf) every end port's table is also
compared with the one OpenSM would program from FILE, and each switch port facing a
CA with that CA port's (errors: partitions-missing-key, partitions-extra-key,
partitions-wrong-membership, partitions-table-overflow, partitions-file-rejected). SELF
is the port whose LID the ports report as their SM LID; --allow-both mirrors OpenSM's
-W. --ignore RULE,... drops findings of those rules (the simulator, ibsim, reports
enforcement off on every switch port: --ignore enforcement-off).

Exit codes: 0 no errors (warnings allowed unless --strict); 1 errors (or warnings with
--strict); 2 bad usage, --fabric-file or --partitions file; 3 no fabric access or a
partial sweep (findings printed first).

JSON (-o json): {"source","partitions","findings":[{"severity","rule","ports":
[{"node_guid","port","node"}],"pkeys":[],"message","action"}],"errors","warnings"}.`,
		Example: `  ibkey fabric check --ibsim
  ibkey fabric check --partitions /etc/opensm/partitions.conf --strict
  ibkey fabric check --fabric-file fabric.json -o json`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, args []string) error { return runFabricCheck(o) },
	}
	o.addFlags(c)
	c.Flags().StringVar(&o.Partitions, "partitions", "", "compare the tables with what OpenSM programs from this partitions.conf (`FILE`)")
	c.Flags().BoolVar(&o.AllowBoth, "allow-both", false, "OpenSM runs with -W (allow_both_pkeys): `both` gives a full and a limited entry")
	c.Flags().BoolVar(&o.Strict, "strict", false, "exit 1 on warnings too")
	c.Flags().StringSliceVar(&o.Ignore, "ignore", nil, "drop findings of these `RULES` (comma-separated, e.g. enforcement-off)")
	_ = c.MarkFlagFilename("partitions")
	_ = c.RegisterFlagCompletionFunc("ignore", cobra.FixedCompletions(checkRules, cobra.ShellCompDirectiveNoFileComp))
	return c
}

var checkRules = []string{
	check.RuleHCAKeyNotOnSwitch, check.RuleSwitchKeyNotOnHCA, check.RuleLimitedOnly, check.RuleEnforcementOff,
	check.RuleTableFull, check.RulePortNotActive, check.RuleNotRead, check.RuleSweepIncomplete,
	partconf.RuleMissingKey, partconf.RuleExtraKey, partconf.RuleWrongMembership, partconf.RuleTableOverflow, partconf.RuleFileRejected,
}

func runFabricCheck(o *FabricCheckOptions) error {
	f, err := o.Format()
	if err != nil {
		return err
	}
	ignore := map[string]bool{}
	for _, r := range o.Ignore {
		known := false
		for _, k := range checkRules {
			known = known || k == r
		}
		if !known {
			return &query.UsageError{Msg: fmt.Sprintf("invalid --ignore %q (accepted: %s)", r, strings.Join(checkRules, ", "))}
		}
		ignore[r] = true
	}
	var conf *partconf.Config
	if o.Partitions != "" {
		data, err := os.ReadFile(o.Partitions)
		if err != nil {
			return &query.UsageError{Msg: fmt.Sprintf("--partitions: %v", err)}
		}
		conf = partconf.Parse(o.Partitions, data)
	}
	return o.with(false, func(fab *check.Fabric) error {
		all := check.Audit(fab)
		if conf != nil {
			all = append(all, partconf.CompareFabric(fab, partconf.NewFabricModel(conf, fab, partconf.Options{AllowBoth: o.AllowBoth}))...)
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
		}
		check.SortFindings(findings)
		if f == formatJSON {
			if findings == nil {
				findings = []check.Finding{}
			}
			var file *string
			if o.Partitions != "" {
				file = &o.Partitions
			}
			if err := writeJSON(o.IO.Out, struct {
				Source     string          `json:"source"`
				Partitions *string         `json:"partitions"`
				Findings   []check.Finding `json:"findings"`
				Errors     int             `json:"errors"`
				Warnings   int             `json:"warnings"`
			}{fab.Source, file, findings, errs, warns}); err != nil {
				return err
			}
		} else {
			writeFabricFindings(o.IO.Out, fab, findings)
			fmt.Fprintln(o.IO.Out, fabricCheckSummary(fab, o.Partitions, errs, warns, len(all)-len(findings)))
		}
		if check.HasErrors(findings, o.Strict) {
			return &silentError{code: exitNo}
		}
		return nil
	})
}

func writeFabricFindings(w io.Writer, fab *check.Fabric, findings []check.Finding) {
	var b strings.Builder
	for _, fd := range findings {
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

func fabricCheckSummary(fab *check.Fabric, partitions string, errs, warns, ignored int) string {
	tables := 0
	for _, n := range fab.Nodes {
		for _, p := range n.Ports {
			if p.PKeys != nil {
				tables++
			}
		}
	}
	what := fmt.Sprintf("%s, %s checked", plural(len(fab.Nodes), "node", "nodes"), plural(tables, "P_Key table", "P_Key tables"))
	if partitions != "" {
		what += " against " + partitions
	}
	if ignored > 0 {
		what += fmt.Sprintf("; %d ignored (--ignore)", ignored)
	}
	if errs+warns == 0 {
		return fmt.Sprintf("no problems found (%s)", what)
	}
	return fmt.Sprintf("%s, %s (%s)", plural(errs, "error", "errors"), plural(warns, "warning", "warnings"), what)
}

// ---- diff ----

// FabricDiffOptions holds `ibkey fabric diff`'s arguments.
type FabricDiffOptions struct {
	FabricSource
	A, B string
}

func newFabricDiffCmd(g *Globals) *cobra.Command {
	o := &FabricDiffOptions{FabricSource: FabricSource{Globals: g}}
	c := &cobra.Command{
		Use:   "diff A.json [B.json]",
		Short: "What changed between two sweeps: nodes, links, ports, P_Key entries",
		Long: `Compare two saved sweeps (ibkey fabric discover -o json), or a saved sweep with one run
now when B is not given: nodes added or gone, links added or gone, port changes (state,
LID, port GUID, enforcement), P_Key entries added, removed or moved to another index
(a QP holding the old index then uses another entry), tables resized or no longer
readable. Nodes are matched by node GUID, ports by number; P_Key violation counters,
the SM's LID and the sweeps' own times are not compared.

One line per change: KIND: MESSAGE, in node GUID and port order; kinds: node-added,
node-removed, node-changed, link-added, link-removed, port-changed, pkey-added,
pkey-removed, pkey-moved, table-readable, table-resized.

Exit codes, as diff(1): 0 no differences; 1 differences; 2 bad usage or a file that is
not a fabric file (named); 3 (B swept now) no fabric access or a partial sweep.

JSON (-o json): {"a","b","same","changes":[{"kind","ports":[{"node_guid","port","node"}],
"field"?,"before"?,"after"?,"message"}]}.`,
		Example: `  ibkey fabric diff monday.json tuesday.json
  ibkey fabric diff fabric.json --ibsim
  ibkey fabric diff a.json b.json -o json`,
		Args:              usageArgs(cobra.RangeArgs(1, 2)),
		ValidArgsFunction: cobra.FixedCompletions([]string{"json"}, cobra.ShellCompDirectiveFilterFileExt),
		RunE: func(c *cobra.Command, args []string) error {
			o.A = args[0]
			if len(args) == 2 {
				o.B = args[1]
			}
			return runFabricDiff(o)
		},
	}
	c.Flags().DurationVar(&o.Timeout, "timeout", 5*time.Minute, "with one file: stop the sweep after this long (exit 3)")
	return c
}

func runFabricDiff(o *FabricDiffOptions) error {
	f, err := o.Format()
	if err != nil {
		return err
	}
	a, err := readFabricFile(o.A)
	if err != nil {
		return err
	}
	compare := func(b *check.Fabric, bName string) error {
		n := o.notices()
		for _, x := range []struct {
			name string
			f    *check.Fabric
		}{{o.A, a}, {bName, b}} {
			if x.f.Incomplete != "" || len(x.f.Unreachable) > 0 {
				n.warn(fmt.Sprintf("%s is a partial sweep: changes in the part not read are not seen", x.name))
			}
		}
		changes := check.Diff(a, b)
		if f == formatJSON {
			if changes == nil {
				changes = []check.Change{}
			}
			if err := writeJSON(o.IO.Out, struct {
				A       string         `json:"a"`
				B       string         `json:"b"`
				Same    bool           `json:"same"`
				Changes []check.Change `json:"changes"`
			}{o.A, bName, len(changes) == 0, changes}); err != nil {
				return err
			}
		} else {
			var sb strings.Builder
			for _, c := range changes {
				fmt.Fprintf(&sb, "%s: %s\n", c.Kind, c.Message)
			}
			io.WriteString(o.IO.Out, sb.String())
		}
		if len(changes) == 0 {
			n.note(fmt.Sprintf("no differences between %s and %s", o.A, bName))
			return nil
		}
		n.note(fmt.Sprintf("%s between %s and %s", plural(len(changes), "change", "changes"), o.A, bName))
		return &silentError{code: exitNo}
	}
	if o.B != "" {
		b, err := readFabricFile(o.B)
		if err != nil {
			return err
		}
		return compare(b, o.B)
	}
	if err := o.prepare(); err != nil {
		return err
	}
	return o.WithFabric(func(ctx context.Context, fab *query.Fabric) error {
		b, err := o.sweep(ctx, fab, false)
		if b == nil {
			return err
		}
		o.notices().label("fabric: " + sweepSummary(b))
		return partialError(b, compare(b, "the sweep now"))
	})
}
