package fabric

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/textsafe"
)

// PKeysOptions are `ibkey fabric pkeys`'s inputs.
type PKeysOptions struct {
	cmdutil.Deps
	Source *cmdutil.FabricSweep
	Key    string
}

// NewCmdPKeys is `ibkey fabric pkeys`; runF replaces the run in tests.
func NewCmdPKeys(f *cmdutil.Factory, runF func(*PKeysOptions) error) *cobra.Command {
	o := &PKeysOptions{}
	c := &cobra.Command{
		Use:   "pkeys",
		Short: "Every port's P_Key table; --key: the ports in one partition",
		Long: `Every port's P_Key table from one sweep of the subnet (or a saved one, --fabric-file):
the end ports (CA ports, each switch's port 0) and the switch ports that have a cable
(a switch port facing a CA holds a copy of the CA port's keys, for partition
enforcement). One row per port: NODE PORT TYPE NODE_GUID LID STATE SIZE VALID PKEYS,
PKEYS being the valid entries in index order. Ports whose table could not be read are
named on stderr.

--key PKEY lists the ports whose table holds that partition (the 15-bit key: 0x0001
and 0x8001 are the same partition) with their membership (full, limited, or both) and
the indexes of the entries; END_PORT is no for a switch's external port, which only
mirrors the port it faces. It answers for every port of the subnet, as pkeys --find
does for the ports asked about: exit 4 when the sweep is partial (a table or node not
read might hold it), the members read still listed; else 0 when a port holds it, 1
when none does. --find PKEY is the same flag, as 'ibkey pkeys' spells it.

JSON (-o json), schema schemas/fabric-pkeys.schema.json: {"schema_version":1,"source","swept_at","ports":[{"node_desc","node_guid","type","port",
"port_guid","lid","state","end_port","peer":{"node_guid","port"}|null,"table_size",
"valid_pkeys","entries":[{"index","pkey","key","membership"}],"pkeys_error"?,"error"?}],
"incomplete"?:[{"kind","message"}]} (entries: the valid ones; valid_pkeys and entries
are null for a table not read, table_size when its length is not known, lid and state
when the port's PortInfo was not read: error says why; n/a in the table). With --key (schemas/fabric-pkeys-key.schema.json):
{"schema_version":1,"key","members":[{"node_guid","port","node_desc","type","end_port",
"membership","indexes"}],"incomplete"?:[{"kind","message"}]}. incomplete says what
the sweep did not read (kind partial-sweep, unread-node or unread-table), present
whenever it did not: then the exit is 4.`,
		Example: `  ibkey fabric pkeys --ibsim
  ibkey fabric pkeys --fabric-file fabric.json --key 0x0002
  ibkey fabric pkeys --key 80:01 -o json`,
		Args: cmdutil.NoArgs,
		RunE: cmdutil.RunE(f, o, &o.Deps, nil, runF, runPKeys),
	}
	o.Source = cmdutil.AddFabricSweepFlags(c, f)
	c.Flags().StringVar(&o.Key, "key", "", "list the ports in partition `PKEY` (0x0001, 8001, 80:01) with their membership")
	// --find is --key: the spelling 'ibkey pkeys' uses for the same lookup.
	c.Flags().SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		if name == "find" {
			name = "key"
		}
		return pflag.NormalizedName(name)
	})
	cmdutil.SetExits(c,
		cmdutil.ExitMeaning{Code: cmdutil.ExitOK, Meaning: "success"},
		cmdutil.ExitMeaning{Code: cmdutil.ExitNo, Meaning: "(--key) no port holds the key"},
		cmdutil.ExitMeaning{Code: cmdutil.ExitUsage, Meaning: "bad usage or --fabric-file"},
		cmdutil.ExitMeaning{Code: cmdutil.ExitEnv, Meaning: "no fabric access"},
		cmdutil.ExitMeaning{Code: cmdutil.ExitIncomplete, Meaning: "a partial sweep, or a saved one without tables (--no-tables): printed first, what was not read on stderr"},
	)
	return c
}

type entryJSON struct {
	Index      int    `json:"index"`
	PKey       string `json:"pkey"`
	Key        string `json:"key"`
	Membership string `json:"membership"`
}

type portJSON struct {
	NodeDesc   string         `json:"node_desc"`
	NodeGUID   check.GUID     `json:"node_guid"`
	Type       check.NodeType `json:"type"`
	Port       int            `json:"port"`
	PortGUID   *check.GUID    `json:"port_guid"`
	LID        *uint16        `json:"lid"`   // null: a switch's external port, or PortInfo not read
	State      *string        `json:"state"` // null: PortInfo not read
	EndPort    bool           `json:"end_port"`
	Peer       *check.PortID  `json:"peer"`
	TableSize  *int           `json:"table_size"` // null: not known
	Error      string         `json:"error,omitempty"`
	Valid      *int           `json:"valid_pkeys"` // null: the table was not read
	Entries    []entryJSON    `json:"entries"`     // null: the table was not read
	PKeysError string         `json:"pkeys_error,omitempty"`
}

// tablePort is one row of `fabric pkeys`: an end port, or a switch port with a cable.
type tablePort struct {
	node    *fabric.Node
	port    *fabric.Port
	end     bool
	entries []check.TableEntry // the valid ones
}

// tablePorts are the ports `fabric pkeys` lists (fabric.Node.Listed): end ports, and
// switch ports with a cable or that may have one.
func tablePorts(fab *fabric.Fabric) []tablePort {
	var ports []tablePort
	for _, n := range fab.Nodes {
		for _, p := range n.Ports {
			end := n.IsEndPort(p)
			if !n.Listed(p) {
				continue // a switch port known to have no cable
			}
			ports = append(ports, tablePort{node: n, port: p, end: end, entries: p.Entries()})
		}
	}
	return ports
}

// naNotes say why the tables shown n/a that are not gaps (fabric.NotRead: the partial
// sweep line names those) were not read, one line per group: DOWN ports (no link, so
// their table is part of no answer), and ports outside the swept subnet.
func naNotes(fab *fabric.Fabric, ports []tablePort) []string {
	gap := map[check.PortID]bool{}
	for _, nc := range fab.NotRead(true) {
		gap[nc.Port.PortID] = true
	}
	var down, outside []string
	downWhy := ""
	for _, t := range ports {
		p := t.port
		id := check.PortID{Node: t.node.GUID, Port: p.Num}
		switch {
		case p.PKeys != nil || gap[id]:
		case p.State == check.StateDown:
			down = append(down, fab.Label(id))
			downWhy = cmp.Or(downWhy, p.PKeysError)
		default:
			why := p.PKeysError
			if s, scope := fab.PortScope(id); s == fabric.ScopeUnmanaged || s == fabric.ScopeOtherSubnet {
				why = "outside the swept subnet: " + scope
			}
			outside = append(outside, fab.Label(id)+": "+why)
		}
	}
	var notes []string
	if len(down) > 0 {
		notes = append(notes, fmt.Sprintf("P_Key tables n/a on DOWN ports (%s): %s", strings.Join(textsafe.Capped(down, 5), ", "), cmp.Or(downWhy, "not read")))
	}
	if len(outside) > 0 {
		notes = append(notes, "P_Key tables n/a, not part of the swept subnet: "+strings.Join(textsafe.Capped(outside, 5), "; "))
	}
	return notes
}

// size is the port's table length; ok is false when it is not known (the table was
// not read and nothing gave its length: a sweep without tables, a failed SwitchInfo or
// PortInfo).
func (t tablePort) size() (int, bool) {
	return t.port.TableSize, t.port.TableSize > 0 || t.port.PKeys != nil
}

func (t tablePort) json() portJSON {
	n, p := t.node, t.port
	pj := portJSON{NodeDesc: n.Description, NodeGUID: n.GUID, Type: n.Type, Port: p.Num,
		EndPort: t.end, Peer: p.Peer, PKeysError: p.PKeysError, Error: p.Error}
	if t.end && p.GUID != 0 {
		pj.PortGUID = new(p.GUID)
	}
	if p.Error == "" { // PortInfo read
		pj.State = new(p.State)
		if t.end {
			pj.LID = new(p.LID)
		}
	}
	if size, ok := t.size(); ok {
		pj.TableSize = &size
	}
	if p.PKeys == nil {
		return pj // not read: valid_pkeys and entries are null
	}
	pj.Entries = []entryJSON{}
	for _, e := range t.entries {
		pj.Entries = append(pj.Entries, entryJSON{e.Index, e.PKey.String(), e.PKey.Partition().String(), e.PKey.Membership().String()})
	}
	pj.Valid = new(len(pj.Entries))
	return pj
}

func runPKeys(o *PKeysOptions) error {
	var key check.PKey
	if o.Key != "" {
		var err error
		if key, err = check.ParsePartitionKey(o.Key); err != nil {
			return err
		}
	}
	return o.Source.Load(o.Ctx, o.Notices, false, true, func(fab *fabric.Fabric) error {
		if o.Key != "" {
			return members(o, fab, key)
		}
		ports := tablePorts(fab)
		if o.Format == cmdutil.FormatJSON {
			out := make([]portJSON, len(ports))
			for i, t := range ports {
				out[i] = t.json()
			}
			if err := cmdutil.WriteJSON(o.IO.Out, struct {
				Schema  cmdutil.SchemaVersion `json:"schema_version"`
				Source  string                `json:"source"`
				SweptAt time.Time             `json:"swept_at"`
				Ports   []portJSON            `json:"ports"`
				// Incomplete: the sweep's gaps, exactly when Load exits 4 for them.
				Incomplete []cmdutil.Incomplete `json:"incomplete,omitempty"`
			}{cmdutil.SchemaVersion{}, fab.Source, fab.SweptAt, out, incompleteItems(fab.NotRead(true))}); err != nil {
				return err
			}
		} else {
			g := cmdutil.Grid{Header: []string{"NODE", "PORT", "TYPE", "NODE_GUID", "LID", "STATE", "SIZE", "VALID", "PKEYS"},
				Required: []string{"NODE", "PORT", "PKEYS"}, Optional: [][]string{{"NODE_GUID"}, {"TYPE"}, {"SIZE"}}}
			for _, t := range ports {
				n, p := t.node, t.port
				lid, state := lidState(n, p)
				size := "n/a"
				if s, ok := t.size(); ok {
					size = strconv.Itoa(s)
				}
				valid := strconv.Itoa(len(t.entries))
				keys := make([]string, len(t.entries))
				for i, e := range t.entries {
					keys[i] = e.PKey.String()
				}
				pkeys := strings.Join(keys, ",")
				if p.PKeys == nil {
					// Not read: n/a, never an empty table; why is on stderr (the
					// partial sweep line for a gap, naNotes for the rest).
					valid, pkeys = "n/a", "n/a"
				}
				g.Add(n.Name(), strconv.Itoa(p.Num), string(n.Type), n.GUID.String(), lid, state, size, valid, pkeys)
			}
			if err := g.Render(o.IO.Out, o.Format); err != nil {
				return err
			}
		}
		// Tables not read that the answer needs are named by Load (the partial sweep
		// line, exit 4); the other n/a cells are explained here.
		for _, note := range naNotes(fab, ports) {
			o.Notices.Note(note)
		}
		return nil
	})
}

func members(o *PKeysOptions, fab *fabric.Fabric, key check.PKey) error {
	members := fab.Members(key)
	if o.Format == cmdutil.FormatJSON {
		if err := cmdutil.WriteJSON(o.IO.Out, struct {
			Schema  cmdutil.SchemaVersion `json:"schema_version"`
			Key     string                `json:"key"`
			Members []fabric.Member       `json:"members"`
			// Incomplete: the sweep's gaps, exactly when Load exits 4 for them (a
			// partition found nowhere in a partial sweep is not a definite no).
			Incomplete []cmdutil.Incomplete `json:"incomplete,omitempty"`
		}{cmdutil.SchemaVersion{}, key.Partition().String(), cmdutil.List(members), incompleteItems(fab.NotRead(true))}); err != nil {
			return err
		}
	} else if len(members) > 0 {
		g := cmdutil.Grid{Header: []string{"NODE", "PORT", "TYPE", "NODE_GUID", "END_PORT", "MEMBERSHIP", "INDEXES"},
			Required: []string{"NODE", "PORT", "MEMBERSHIP"}, Optional: [][]string{{"NODE_GUID"}, {"TYPE"}}}
		for _, m := range members {
			name := cmp.Or(m.Description, m.Node.String())
			idx := make([]string, len(m.Indexes))
			for i, x := range m.Indexes {
				idx[i] = strconv.Itoa(x)
			}
			g.Add(name, strconv.Itoa(m.Port), string(m.Type), m.Node.String(), cmdutil.YesNo(m.EndPort), m.Membership, strings.Join(idx, ","))
		}
		if err := g.Render(o.IO.Out, o.Format); err != nil {
			return err
		}
	}
	var full, limited, ends int
	for _, m := range members {
		if !m.EndPort {
			continue
		}
		ends++
		if m.Membership == check.Limited.String() {
			limited++
		} else {
			full++ // full, or both: it can talk as a full member
		}
	}
	n := o.Notices
	// In a partial sweep (fabric.NotRead; Load names it and exits 4) what was not read
	// may hold the partition: the notes speak of what was read.
	read, more := "", ""
	if len(fab.NotRead(true)) > 0 {
		read, more = " read", "; what was not read may hold more"
	}
	// The tables n/a that are no gap (DOWN ports, ports outside the subnet) are named
	// as the listing names them: left out of the members, not silently.
	notes := naNotes(fab, tablePorts(fab))
	if len(members) == 0 {
		n.Note(fmt.Sprintf("no port%s holds partition %s%s", read, key.Partition().String(), more))
		for _, note := range notes {
			n.Note(note)
		}
		return cmdutil.Exit(cmdutil.ExitNo)
	}
	n.Note(fmt.Sprintf("partition %s: %s%s (%d full, %d limited), %s mirroring them%s", key.Partition().String(),
		textsafe.Plural(ends, "end port", "end ports"), read, full, limited, textsafe.Plural(len(members)-ends, "switch port", "switch ports"), more))
	for _, note := range notes {
		n.Note(note)
	}
	if full == 0 && ends > 0 {
		n.Warn(fmt.Sprintf("every end port%s of partition %s is a limited member: limited members cannot talk to each other%s", read, key.Partition().String(),
			strings.Replace(more, "more", "a full member", 1)))
	}
	return nil
}
