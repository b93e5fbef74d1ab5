// Package pkeys is `ibkey pkeys`: P_Key tables decoded, from sysfs or over MADs, and
// --find, the index a QP should use for a partition.
package pkeys

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/query"
	"github.com/ibkey/ibkey/internal/textsafe"
)

// PKeysOptions holds `ibkey pkeys`'s flags and dependencies.
type PKeysOptions struct {
	cmdutil.Deps
	Host func() *query.Host
	// MAD holds the transport flags (AddMADFlags).
	MAD      *cmdutil.MADFlags
	Selector query.Selector
	// Addr holds --lid/--dr/--port; Fabric is set from them when the ports are read
	// over MADs instead of from sysfs.
	Addr   cmdutil.AddressFlags
	Fabric []query.FabricSelector
	All    bool
	Find   string
}

// NewCmdPKeys builds the command; runF, when not nil, runs instead of runPKeys (tests of flag parsing).
func NewCmdPKeys(f *cmdutil.Factory, runF func(*PKeysOptions) error) *cobra.Command {
	o := &PKeysOptions{Host: f.Host}
	c := &cobra.Command{
		Use:   "pkeys [DEV [PORT]]",
		Short: "Show P_Key tables, decoded",
		Long: `Show the P_Key tables of all ports, one device, or one port (DEV PORT or DEV/PORT):
index, value, membership (full/limited; an empty entry has none: "-" in plain, null
in JSON), 15-bit key, notes (default partition, a key held both as full and limited,
duplicates) and the IPoIB interfaces using each entry.
Empty (invalid) entries are hidden unless --all; holes below the last valid entry are
counted. Warnings say when a table cannot be trusted (port not ARMED/ACTIVE, RoCE) and
when an IPoIB child's key is missing from the table (it cannot come up), and when an
interface whose key the table holds is up without carrier (IPoIB turns carrier on only
once it joined its partition's broadcast group, which the SM must have made: see
'ibkey partitions check' and 'ibkey sm log'). An interface the user took down is not
a warning.

A table that exists and was not read (a saved tree without pkeys/, a pkeys/ that
cannot be read) is named with the reason and the exit is 4; a port with no table at
all (iWARP) is not. A DOWN CA port's over the fabric (no SMP arrives there) is n/a
with the reason in a note and no gap, as fabric pkeys treats it: while DOWN its
table is not defined and passes no packet (its host's sysfs shows what it holds);
--find, which asks what it holds, answers unknown for it (exit 4). A device that
cannot be read (a
dangling class/infiniband link) is named on stderr, the others shown (exit 4).

--find PKEY (or --key PKEY, as 'ibkey fabric pkeys' spells it) prints the index a
QP should use for that key's partition, as the kernel's ib_find_pkey picks it
(drivers/infiniband/core/device.c; rdma_cm and IPoIB use it): the 15-bit key
matches, the first full-member entry wins, else the first limited one. libibverbs'
ibv_get_pkey_index is another lookup: the first entry equal to all 16 bits
(rdma-core libibverbs/verbs.c). It answers for every port asked about: exit 4
when a port's answer is not known (its table or a device was not read; an entry not
read may hold the key, or a full entry ib_find_pkey would pick before the one
found), the ports found still printed; else 0 when a port holds it, 1 when none
does (a port with no table, iWARP, does not).
With -o plain and one port it prints just the index (for NCCL_IB_PKEY=$(...)), also
on exit 4; over several ports a header line and one port per line.

JSON (-o json; schemas/pkeys.schema.json): {"schema_version","demo"?,"via"?,
"ports":[{"device","port","link_layer","state","table_size","valid_pkeys",
"unreadable_pkeys"?,"pkeys_error"?,"entries":[{"index","pkey","key","membership",
"valid","default","both_memberships"?,"duplicate_of"?,"hole"?,"unreadable"?,"ipoib"?}],
"ipoib":[{"name","pkey","parent"?,"operstate"?,"admin_up","carrier","link_unread"?,
"index","membership"}],"warnings":[]}],
"incomplete"?:[{"kind","message"}]} (incomplete: the devices, tables and entries not
read, exactly on exit 4).
A table not read has "table_size", "valid_pkeys" and "entries" null and the reason in
"pkeys_error"; an unreadable entry has "pkey" null and the reason in "unreadable"
(valid_pkeys counts the entries read, then a lower bound, which tables show as
"4+ valid"; unreadable_pkeys how many were not); an IPoIB
interface whose key is not in the table has "index": null. admin_up is IFF_UP of its
flags; carrier is null while it is down; either is null when not read (class/net/IF/
flags, carrier, operstate), and link_unread says what was not read.
With --find (schemas/pkeys-find.schema.json):
{"schema_version","demo"?,"via"?,"pkey","key","found",
"ports":[{"device","port","found","outcome","index","entry","membership","reason"?}],
"incomplete"?:[{"kind","message"}]} (incomplete: the ports whose answer is not known
and the devices not read, exactly on exit 4); outcome is "found", "not-found",
"unknown" (not in the entries read, some not read) or "no-table".

Over the fabric (any node, by SMPs; needs umad access or --ibsim): --lid LIDS reads
the port each LID belongs to (a CA's port, or a switch's port 0), --dr PATH the node
at the end of a directed route (the only way before a subnet manager assigned LIDs).
--guid GUID the port with that port GUID (or the node with that node GUID),
found by a sweep of the fabric first. --port P picks another port of that node,
--port all every port. The infiniband-diags' spellings work too: -L LID, -D PATH,
-G GUID, -C DEV, -P PORT, -t MS. DEV may also be an IPoIB interface (ib0.8001):
its port is shown. A switch answers
for any of its ports; a CA answers only for the port an SMP arrives at, so its other
ports are read through their own LIDs. The device is named by the node description;
JSON adds "node_desc" (device repeats it), "node_guid", "address" (what the port was
read through) and, on switch ports, "partition_enforcement":{"inbound","outbound"};
the top level adds "via". Of several addresses (--lid 1-40), one that does not
answer is not read (a LID nobody holds looks the same): named on stderr and in
incomplete (unread-node), the others shown, exit 4, and --find is then not "not
found"; none answering is exit 3.
The table length is what smpquery reports: SwitchInfo PartitionEnforcementCap for a
switch's external ports, NodeInfo PartitionCap otherwise.`,
		Example: `  ibkey pkeys
  ibkey pkeys mlx5_0 1
  ibkey pkeys mlx5_0/1 --all
  ibkey pkeys mlx5_0 1 --find 0x8001 -o plain
  ibkey pkeys --lid 6
  ibkey pkeys --lid 2 --port all
  ibkey pkeys --ibsim --dr 0,1,3 -o json
  ibkey pkeys --lid 1-40 --find 0x8002
  ibkey pkeys --ibsim -G 0x0002c90300000204
  ibkey pkeys ib0.8001`,
		Args:              cobra.MaximumNArgs(2),
		ValidArgsFunction: completeDevPort(f),
		RunE: cmdutil.RunE(f, o, &o.Deps, func(_ *cobra.Command, args []string) error {
			fab, err := o.Addr.Selectors(args)
			if err != nil {
				return err
			}
			o.Fabric = fab
			if fab == nil {
				if o.Selector, err = selectorFromArgs(args); err != nil {
					return err
				}
			}
			return nil
		}, runF, runPKeys),
	}
	o.MAD = cmdutil.AddMADFlags(c, f)
	o.MAD.NeedsAddress(&o.Addr)
	o.Addr.RegisterFor(c, f)
	c.Flags().BoolVar(&o.All, "all", false, "also show empty (invalid) entries")
	c.Flags().StringVar(&o.Find, "find", "", "print the index to use for `PKEY`'s partition (a full-member entry preferred)")
	_ = c.RegisterFlagCompletionFunc("find", completePKeys(o))
	// --key is --find: the spelling 'ibkey fabric pkeys' uses for the same lookup.
	c.Flags().SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		if name == "key" {
			name = "find"
		}
		return pflag.NormalizedName(name)
	})
	return c
}

// JSON shapes of `pkeys -o json` (documented in the command help and its man page).
type pkeyEntryJSON struct {
	Index      int      `json:"index"`
	PKey       *string  `json:"pkey"`
	Key        *string  `json:"key"`
	Membership *string  `json:"membership"`
	Valid      bool     `json:"valid"`
	Default    bool     `json:"default"`
	Both       bool     `json:"both_memberships,omitempty"`
	Duplicate  *int     `json:"duplicate_of,omitempty"`
	Hole       bool     `json:"hole,omitempty"`
	Unreadable string   `json:"unreadable,omitempty"`
	IPoIB      []string `json:"ipoib,omitempty"`
}

type ipoibJSON struct {
	Name       string  `json:"name"`
	PKey       string  `json:"pkey"`
	Parent     string  `json:"parent,omitempty"`
	OperState  string  `json:"operstate,omitempty"`
	AdminUp    *bool   `json:"admin_up"`
	Carrier    *bool   `json:"carrier"`
	LinkUnread string  `json:"link_unread,omitempty"`
	Index      *int    `json:"index"`
	Membership *string `json:"membership"`
}

type pkeyPortJSON struct {
	Device       string          `json:"device"`
	Port         int             `json:"port"`
	LinkLayer    *string         `json:"link_layer"`
	State        string          `json:"state"`
	TableSize    *int            `json:"table_size"`
	ValidPKeys   *int            `json:"valid_pkeys"`
	UnreadPKeys  int             `json:"unreadable_pkeys,omitempty"`
	TableMissing string          `json:"pkeys_error,omitempty"`
	Entries      []pkeyEntryJSON `json:"entries"`
	IPoIB        []ipoibJSON     `json:"ipoib"`
	Warnings     []string        `json:"warnings"`
	// Over the fabric only.
	NodeDesc    *string          `json:"node_desc,omitempty"`
	NodeGUID    string           `json:"node_guid,omitempty"`
	Address     string           `json:"address,omitempty"`
	Enforcement *enforcementJSON `json:"partition_enforcement,omitempty"`
}

type enforcementJSON struct {
	Inbound  bool `json:"inbound"`
	Outbound bool `json:"outbound"`
}

func runPKeys(o *PKeysOptions) error {
	var find check.PKey
	if o.Find != "" {
		var err error
		if find, err = check.ParsePartitionKey(o.Find); err != nil {
			return err
		}
	}
	if o.Fabric != nil {
		return cmdutil.RenderFabricPorts(o.Ctx, o.MAD, o.Notices, &o.Addr, o.Fabric, func(views []*query.PortView, src cmdutil.Source, err error) error {
			return renderPKeys(o, views, find, src, err)
		})
	}
	host := o.Host()
	sel, ifc, err := host.ResolveDeviceOrInterface(o.Selector, o.Notices.Warn)
	if err != nil {
		return err
	}
	views, err := host.Load(sel, query.LoadOptions{Tables: true, Interfaces: true})
	labels := []string{host.Label}
	if ifc != nil {
		labels = append(labels, ifc.Describe())
	}
	return renderPKeys(o, views, find, cmdutil.Source{Demo: host.Label != ""}, err, labels...)
}

// renderPKeys shows views, read with err (a partial read), and what was not read
// (cmdutil.HostNotRead: the devices on stderr, then the labels; each table not read
// with its port, its entries not read in the port's warning); exit 4 when anything was
// not (--find: when a port's answer is not known, findPKey).
func renderPKeys(o *PKeysOptions, views []*query.PortView, find check.PKey, src cmdutil.Source, err error, labels ...string) error {
	n := o.Notices
	var after error
	src.Incomplete, after, err = cmdutil.HostNotRead(n, views, err)
	if err != nil {
		return err
	}
	for _, l := range labels {
		n.Label(l)
	}
	if o.Find != "" {
		return findPKey(o, views, find, src)
	}
	switch o.Format {
	case cmdutil.FormatJSON:
		out := make([]pkeyPortJSON, len(views))
		for i, v := range views {
			out[i] = pkeyPortToJSON(v, o.All)
		}
		err = cmdutil.WriteJSON(o.IO.Out, struct {
			Schema     cmdutil.SchemaVersion `json:"schema_version"`
			Demo       bool                  `json:"demo,omitempty"`
			Via        string                `json:"via,omitempty"`
			Ports      []pkeyPortJSON        `json:"ports"`
			Incomplete []cmdutil.Incomplete  `json:"incomplete,omitempty"`
		}{cmdutil.SchemaVersion{}, src.Demo, src.Via, out, src.Incomplete})
	case cmdutil.FormatPlain:
		err = writePlain(o.IO.Out, views, o.All, n.Note)
	default:
		// Straight to the output stream: its width (the terminal's) is the one the
		// tables must fit (a buffer would lay them out for 80 columns).
		for i, v := range views {
			if i > 0 {
				fmt.Fprintln(o.IO.Out)
			}
			if err = pkeysTable(o.IO.Out, v, o.All); err != nil {
				break
			}
		}
	}
	if err != nil {
		return err
	}
	// The ports' warnings, after the tables (many alike are summarised: Notices), and
	// each table that exists and was not read: the exit 4 is listed on stderr, as the
	// exit-code table says, in every format (the table also shows it with its port).
	for _, v := range views {
		for _, w := range v.Warnings {
			n.Warn(w)
		}
		if why := v.TableNotRead(); why != "" && v.DownTableNotRead() {
			n.Note(v.Ref().String() + ": P_Key table n/a: " + why + "; " + downTableNote)
		} else if why != "" {
			n.Warn(v.Ref().String() + ": " + why)
		}
	}
	return after
}

// downTableNote says why a DOWN port's table not read over the fabric is no gap
// (query.PortView.DownTableNotRead).
const downTableNote = "a DOWN port's table is defined only once it is ARMED or ACTIVE, and its host's sysfs shows what the device holds"

func show(e query.Entry, all bool) bool { return all || e.Valid() || e.Unreadable != "" }

// entryCells are INDEX PKEY MEMBERSHIP KEY NOTES IPOIB.
func entryCells(e query.Entry) []string {
	idx := strconv.Itoa(e.Index)
	if e.Unreadable != "" {
		// The reason is in the port's warning; the cell stays one word.
		return []string{idx, "unreadable", "", "", "unreadable", ""}
	}
	return []string{idx, e.PKey.String(), membership(e.PKey), e.PKey.Partition().String(),
		strings.Join(entryNotes(e), ","), strings.Join(e.Interfaces, ",")}
}

// membership is the MEMBERSHIP cell of an entry: "" (an empty cell, "-" in plain) for
// an empty entry, whose key 0 names no partition (0x0000 and 0x8000 are the invalid
// P_Key, IBA vol. 1 §10.9), so its top bit makes it a member of nothing.
func membership(p check.PKey) string {
	if !p.Valid() {
		return ""
	}
	return p.Membership().String()
}

func entryNotes(e query.Entry) []string {
	var notes []string
	switch {
	case !e.PKey.Valid() && e.Hole:
		notes = append(notes, "hole")
	case !e.PKey.Valid():
		notes = append(notes, "empty")
	case e.PKey.IsDefault():
		notes = append(notes, "default")
	}
	if e.Both {
		notes = append(notes, "both")
	}
	if e.DuplicateOf >= 0 {
		notes = append(notes, "duplicate-of-"+strconv.Itoa(e.DuplicateOf))
	}
	return notes
}

// pkeysTable prints one port as a heading, a table and a summary line.
func pkeysTable(w io.Writer, v *query.PortView, all bool) error {
	ll := cmp.Or(v.LinkLayer(), "link layer n/a")
	head := fmt.Sprintf("%s  %s  %s", v.Ref(), ll, v.Port.State.Name)
	if v.Port.LID.OK() && ll == "InfiniBand" {
		head += fmt.Sprintf("  LID %d", v.Port.LID.Value)
	}
	if v.Fabric != nil {
		if !v.Port.LID.OK() || v.Fabric.Address != fmt.Sprintf("lid %d", v.Port.LID.Value) {
			head += "  via " + v.Fabric.Address
		}
		if e := v.Fabric.Enforcement; e != nil {
			head += fmt.Sprintf("  enforcement inbound %s, outbound %s", onOff(e.Inbound), onOff(e.Outbound))
		}
	}
	if v.Table == nil {
		fmt.Fprintf(w, "%s\n  %s\n", head, v.TableMissing)
		return nil
	}
	fmt.Fprintf(w, "%s  %s\n", head, v.Table.Sizes())
	g := cmdutil.Grid{Header: []string{"INDEX", "PKEY", "MEMBERSHIP", "KEY", "NOTES", "IPOIB"}, Required: []string{"INDEX", "PKEY"}}
	hidden, holes := 0, []int{}
	for _, e := range v.Table.Entries {
		if e.Hole {
			holes = append(holes, e.Index)
		}
		if !show(e, all) {
			hidden++
			continue
		}
		g.Add(entryCells(e)...)
	}
	if len(g.Rows) > 0 {
		if err := g.Render(w, cmdutil.FormatTable); err != nil {
			return err
		}
	}
	var sum []string
	if hidden > 0 {
		sum = append(sum, textsafe.Plural(hidden, "empty entry", "empty entries")+" hidden (--all shows them)")
	}
	if len(holes) > 0 {
		sum = append(sum, "holes at "+strings.Join(query.IndexRanges(holes), ", "))
	}
	if len(sum) > 0 {
		fmt.Fprintf(w, "  %s\n", strings.Join(sum, "; "))
	}
	return nil
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func pkeyPortToJSON(v *query.PortView, all bool) pkeyPortJSON {
	j := pkeyPortJSON{Device: v.Port.Device, Port: v.Port.Num, State: v.Port.State.Name,
		TableMissing: v.TableMissing, Warnings: cmdutil.List(v.Warnings), IPoIB: []ipoibJSON{}}
	if v.Fabric != nil {
		j.NodeDesc, j.NodeGUID, j.Address = new(v.Device.NodeDesc.Value), v.Fabric.NodeGUID.String(), v.Fabric.Address
		if e := v.Fabric.Enforcement; e != nil {
			j.Enforcement = &enforcementJSON{Inbound: e.Inbound, Outbound: e.Outbound}
		}
	}
	if v.Port.LinkLayer.OK() {
		j.LinkLayer = &v.Port.LinkLayer.Value
	}
	if v.Table != nil {
		j.TableSize, j.ValidPKeys, j.UnreadPKeys = new(len(v.Table.Entries)), new(v.Table.Valid), len(v.Table.Unread())
		j.Entries = []pkeyEntryJSON{}
		for _, e := range v.Table.Entries {
			if show(e, all) {
				j.Entries = append(j.Entries, entryToJSON(e))
			}
		}
	}
	for _, ip := range v.Interfaces {
		ij := ipoibJSON{Name: ip.Name, PKey: ip.PKey.String(), Parent: ip.Parent, OperState: ip.OperState}
		// Carrier is Missing while the interface is down: null then, and not "not read".
		if ip.AdminUp.OK() {
			ij.AdminUp = &ip.AdminUp.Value
		}
		if ip.Carrier.OK() {
			ij.Carrier = &ip.Carrier.Value
		} else if !ip.AdminUp.OK() || ip.AdminUp.Value {
			ij.LinkUnread = ip.Carrier.Missing
		}
		if ip.Index >= 0 && ip.Unknown == "" {
			ij.Index, ij.Membership = new(ip.Index), new(ip.Membership.String())
		}
		j.IPoIB = append(j.IPoIB, ij)
	}
	return j
}

func entryToJSON(e query.Entry) pkeyEntryJSON {
	j := pkeyEntryJSON{Index: e.Index, Valid: e.Valid(), Hole: e.Hole, Both: e.Both,
		Unreadable: e.Unreadable, IPoIB: e.Interfaces}
	if e.Unreadable == "" {
		j.PKey, j.Key = new(e.PKey.String()), new(e.PKey.Partition().String())
		if m := membership(e.PKey); m != "" {
			j.Membership = &m // null for an empty entry: it has no membership
		}
		j.Default = e.Valid() && e.PKey.IsDefault()
	}
	if e.DuplicateOf >= 0 {
		j.Duplicate = new(e.DuplicateOf)
	}
	return j
}

type findJSON struct {
	Device     string  `json:"device"`
	Port       int     `json:"port"`
	NodeDesc   *string `json:"node_desc,omitempty"` // over the fabric
	NodeGUID   string  `json:"node_guid,omitempty"`
	Found      bool    `json:"found"`
	Index      *int    `json:"index"`
	Entry      *string `json:"entry"`
	Membership *string `json:"membership"`
	// Outcome: found, not-found, unknown (some entries could not be read) or no-table.
	Outcome string `json:"outcome"`
	Reason  string `json:"reason,omitempty"`
}

// findPKey prints the index a QP should use for key's partition on each port asked
// about. The answer lists every one of them, so it is complete only when each port's
// answer is known: a port whose entries or table were not read and that may hold the
// key (or whose index an entry not read may change), or a device not read, makes it
// incomplete (exit 4, those in incomplete), the ports found still printed. Else exit 0
// when a port holds the key, 1 when none does. incomplete is what the read did not
// read (cmdutil.HostNotRead): of it, only the devices and the ports whose answer is
// unknown are kept, in that order. Its JSON names the source (demo, via) as the
// tables' does.
func findPKey(o *PKeysOptions, views []*query.PortView, key check.PKey, src cmdutil.Source) error {
	incomplete := src.Incomplete
	n := o.Notices
	var results []findJSON
	found := false
	unknown := map[query.PortRef]bool{}
	for _, v := range views {
		r := findJSON{Device: v.Port.Device, Port: v.Port.Num}
		if v.Fabric != nil {
			r.NodeDesc, r.NodeGUID = new(v.Device.NodeDesc.Value), v.Fabric.NodeGUID.String()
		}
		if why := v.TableNotRead(); why != "" && v.DownTableNotRead() {
			// The table view notes it as no gap, but --find asks what it holds: the
			// device may hold the key (its host's sysfs shows), so this port's answer
			// is unknown, never a definite no.
			r.Outcome, r.Reason = query.FindUnknown.String(), "P_Key table n/a: "+why+"; "+downTableNote
			unknown[v.Ref()] = true
			results = append(results, r)
			continue
		}
		// FindPKey: the rule can-talk uses; entries that could not be read make a
		// missing key "unknown", never a definite no.
		fr := query.FindPKey(v, key)
		r.Outcome, r.Reason = fr.Outcome.String(), fr.Reason
		switch fr.Outcome {
		case query.FindFound:
			r.Found, r.Index, r.Entry, r.Membership = true, new(fr.Entry.Index), new(fr.Entry.PKey.String()), new(fr.Entry.PKey.Membership().String())
			found = true
			// Not Known: an entry not read may be the one the kernel picks instead.
			unknown[v.Ref()] = !fr.Known
		case query.FindNotFound:
			if v.Table == nil {
				break // no table at all (iWARP): fr.Reason says so; a definite no
			}
			r.Reason = fmt.Sprintf("partition %s is not in the %s table (valid keys: %s)", key.Partition().String(), v.Ref(), validKeys(v.Table))
		default: // unknown, no-table: it may be in what was not read
			unknown[v.Ref()] = true
		}
		if stale := query.StaleTable(v); stale != "" {
			n.Warn(stale) // as the table's own view warns: the answer is from that table
		}
		results = append(results, r)
	}
	// What was not read that the answer asked about: the devices, ports and fabric
	// addresses not read at all (unread-device, unread-node), then each port whose
	// answer is unknown, with HostNotRead's words.
	incomplete = slices.DeleteFunc(incomplete, func(i cmdutil.Incomplete) bool {
		return i.Kind == cmdutil.IncompleteUnreadTable || i.Kind == cmdutil.IncompleteUnreadEntries
	})
	ports, _ := query.NotRead(views, nil)
	for _, u := range ports {
		if unknown[query.PortRef{Device: u.Device, Port: u.Port}] {
			kind := cmdutil.IncompleteUnreadEntries
			if u.Table {
				kind = cmdutil.IncompleteUnreadTable
			}
			incomplete = append(incomplete, cmdutil.Incomplete{Kind: kind, Message: u.Message()})
		}
	}
	code := cmdutil.ExitNo
	switch {
	case len(incomplete) > 0:
		code = cmdutil.ExitIncomplete
	case found:
		code = cmdutil.ExitOK
	}
	switch o.Format {
	case cmdutil.FormatJSON:
		if err := cmdutil.WriteJSON(o.IO.Out, struct {
			Schema     cmdutil.SchemaVersion `json:"schema_version"`
			Demo       bool                  `json:"demo,omitempty"`
			Via        string                `json:"via,omitempty"`
			PKey       string                `json:"pkey"`
			Key        string                `json:"key"`
			Found      bool                  `json:"found"`
			Ports      []findJSON            `json:"ports"`
			Incomplete []cmdutil.Incomplete  `json:"incomplete,omitempty"`
		}{cmdutil.SchemaVersion{}, src.Demo, src.Via, key.String(), key.Partition().String(), found, results, incomplete}); err != nil {
			return err
		}
	case cmdutil.FormatPlain:
		if len(results) == 1 {
			// One port: just the index, for NCCL_IB_PKEY=$(ibkey pkeys DEV PORT --find K).
			if r := results[0]; r.Found {
				fmt.Fprintln(o.IO.Out, *r.Index)
			}
			break
		}
		fallthrough
	default:
		// Several ports: a header line and one port per line, as every plain table.
		g := cmdutil.Grid{Header: []string{"PORT", "INDEX", "ENTRY", "MEMBERSHIP"}, Required: []string{"PORT", "INDEX"}}
		for _, r := range results {
			if r.Found {
				g.Add(fmt.Sprintf("%s/%d", r.Device, r.Port), strconv.Itoa(*r.Index), *r.Entry, *r.Membership)
			}
		}
		if len(g.Rows) > 0 {
			if err := g.Render(o.IO.Out, o.Format); err != nil {
				return err
			}
		}
	}
	if w := indexesDiffer(results, key); w != "" {
		n.Warn(w)
	}
	for _, r := range results {
		if !r.Found || r.Reason != "" {
			n.Note(fmt.Sprintf("%s/%d: %s", r.Device, r.Port, r.Reason))
		}
		if r.Found && *r.Membership == "limited" && !unknown[query.PortRef{Device: r.Device, Port: r.Port}] {
			// Only when known: an entry not read may hold a full one (the reason says so).
			n.Note(fmt.Sprintf("%s/%d: only a limited entry holds partition %s: a QP there talks only to full members", r.Device, r.Port, key.Partition().String()))
		}
	}
	if code != cmdutil.ExitOK {
		return cmdutil.Exit(code)
	}
	return nil
}

// indexesDiffer warns when the partition sits at different indexes on the ports that
// hold it: a job selecting the partition by index (NCCL_IB_PKEY, UCX_IB_PKEY is a key
// but perftest's --pkey_index an index) cannot use one value on all of them.
func indexesDiffer(results []findJSON, key check.PKey) string {
	var at []string
	seen := map[int]bool{}
	for _, r := range results {
		if r.Found {
			seen[*r.Index] = true
			at = append(at, fmt.Sprintf("%s/%d %d", r.Device, r.Port, *r.Index))
		}
	}
	if len(seen) < 2 {
		return ""
	}
	return fmt.Sprintf("partition %s is at different indexes (%s): no single NCCL_IB_PKEY (a table index) works on all these ports; set it per port, or select the partition by key where the tool allows it", key.Partition().String(), strings.Join(at, ", "))
}

func validKeys(t *query.Table) string {
	var keys []string
	for _, e := range t.Entries {
		if e.Valid() {
			keys = append(keys, e.PKey.String())
		}
	}
	if len(keys) == 0 {
		return "none"
	}
	return strings.Join(keys, " ")
}

// completePKeys completes the P_Keys present in the selected port's (or every port's)
// table, for --find.
func completePKeys(o *PKeysOptions) cobra.CompletionFunc {
	return func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		sel, err := selectorFromArgs(args)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		views, err := o.Host().Load(sel, query.LoadOptions{Tables: true})
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return cmdutil.PKeyCompletions(views), cobra.ShellCompDirectiveNoFileComp
	}
}

// completeDevPort completes DEV for the first argument and the device's ports for the
// second (`pkeys DEV PORT`).
func completeDevPort(f *cmdutil.Factory) cobra.CompletionFunc {
	return func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		host := f.Host()
		// ports are dev's port numbers, each after prefix.
		ports := func(dev, prefix string) []cobra.Completion {
			devs, err := host.Devices(dev)
			if err != nil {
				return nil
			}
			var out []cobra.Completion
			for _, p := range devs[0].Ports {
				out = append(out, prefix+strconv.Itoa(p))
			}
			return out
		}
		switch {
		case len(args) == 1 && !strings.Contains(args[0], "/"):
			return ports(args[0], ""), cobra.ShellCompDirectiveNoFileComp
		case len(args) > 0:
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		if dev, _, ok := strings.Cut(toComplete, "/"); ok {
			return ports(dev, dev+"/"), cobra.ShellCompDirectiveNoFileComp // DEV/<TAB>
		}
		devs, err := host.Devices("")
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for _, d := range devs {
			desc := ""
			if d.NodeDesc.OK() {
				desc = "\t" + d.NodeDesc.Value
			}
			out = append(out, d.Name+desc)
		}
		return append(out, interfaceCompletions(host)...), cobra.ShellCompDirectiveNoFileComp
	}
}

// interfaceCompletions are the host's IPoIB interfaces, described by their port and
// P_Key (pkeys accepts them where a device goes: ResolveDeviceOrInterface).
func interfaceCompletions(host *query.Host) []cobra.Completion {
	views, err := host.Load(query.Selector{}, query.LoadOptions{Interfaces: true})
	if err != nil {
		return nil
	}
	var out []cobra.Completion
	for _, v := range views {
		for _, ip := range v.Interfaces {
			out = append(out, cobra.CompletionWithDesc(ip.Name, fmt.Sprintf("IPoIB on %s, P_Key %s", v.Ref(), ip.PKey)))
		}
	}
	return out
}

// selectorFromArgs reads `DEV PORT`, `DEV/PORT`, `DEV` or nothing.
func selectorFromArgs(args []string) (query.Selector, error) {
	switch len(args) {
	case 0:
		return query.Selector{}, nil
	case 1:
		return query.ParseSelector(args[0])
	}
	sel, err := query.ParseSelector(args[0])
	if err != nil {
		return sel, err
	}
	if sel.HasPort { // DEV/PORT or DEV:PORT, then a port again
		return query.Selector{}, &query.UsageError{Msg: fmt.Sprintf("unexpected %q after %q (accepted: DEV PORT or DEV/PORT)", args[1], args[0])}
	}
	n, err := query.ParsePortNum(args[1])
	if err != nil {
		return sel, err
	}
	sel.Port, sel.HasPort = n, true
	return sel, nil
}
