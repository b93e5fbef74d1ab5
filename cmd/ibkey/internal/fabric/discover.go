package fabric

import (
	"strconv"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/internal/fabric"
)

// DiscoverOptions are `ibkey fabric discover`'s inputs.
type DiscoverOptions struct {
	cmdutil.Deps
	Source   *cmdutil.FabricSweep
	NoTables bool
}

// NewCmdDiscover is `ibkey fabric discover`; runF replaces the run in tests.
func NewCmdDiscover(f *cmdutil.Factory, runF func(*DiscoverOptions) error) *cobra.Command {
	o := &DiscoverOptions{}
	c := &cobra.Command{
		Use:   "discover",
		Short: "Sweep the subnet: nodes, GUIDs, names, LIDs, ports and links",
		Long: `Sweep the subnet by directed route from the local port, breadth first as
ibnetdiscover does: every node that answers, with its type, node GUID, description,
ports (port GUID, LID, state) and the links between them. The P_Key tables are read too
(--no-tables skips them), so the JSON is a complete sweep to save and give back with
--fabric-file.

Output: one row per port that is an end port (a CA port, a switch's port 0) or has a
cable: NODE TYPE NODE_GUID PORT PORT_GUID LID STATE PEER, a table on a terminal and
plain columns otherwise; a summary goes to stderr. A switch's external ports have no
GUID or LID of their own (the switch's are on port 0).

JSON (-o json) is the fabric file, schema schemas/fabric-file.schema.json (its "version"
is its schema version; version 1 files, which said "description", are still read):
{"format":"ibkey-fabric","version":2,"source",
"swept_at","duration_ms","local":{"node_guid","port"},"incomplete"?,
"nodes":[{"node_guid","type" (ca|switch|router),"node_desc","system_image_guid",
"vendor_id","device_id","num_ports","partition_cap","partition_enforcement_cap"?,
"dr_path","errors"?,"ports":[{"port","port_guid","lid","lmc","sm_lid","state",
"phys_state","enforcement"?:{"inbound","outbound","filter_raw_inbound",
"filter_raw_outbound"},"pkey_violations","peer":{"node_guid","port"}|null,
"peer_error"?,"table_size","pkeys":["0xffff",...]|null,"pkeys_error"?,"error"?}]}],
"unreachable":[{"from":{"node_guid","port"},"dr_path","error"}]}. A partial sweep is
still written in full, with what failed in it. The file is indented by two spaces, as
every ibkey JSON document is.
NodeDescriptions are kept as the nodes report them, with control and format characters
written as escapes (\x1b, \u202e), as everywhere ibkey prints them; --node-name-map
renames nodes in the table, and where the file is read back.`,
		Example: `  ibkey fabric discover --ibsim --sim-node HcaA
  ibkey fabric discover -o json > fabric.json
  ibkey fabric discover --fabric-file fabric.json -o table`,
		Args: cmdutil.NoArgs,
		RunE: cmdutil.RunE(f, o, &o.Deps, nil, runF, runDiscover),
	}
	o.Source = cmdutil.AddFabricSweepFlags(c, f)
	c.Flags().BoolVar(&o.NoTables, "no-tables", false, "do not read the P_Key tables (discovery only; the file then has none)")
	cmdutil.AddIndentFlag(c)
	cmdutil.SetExits(c,
		cmdutil.ExitMeaning{Code: cmdutil.ExitOK, Meaning: "success"},
		cmdutil.ExitMeaning{Code: cmdutil.ExitUsage, Meaning: "bad usage or --fabric-file"},
		cmdutil.ExitMeaning{Code: cmdutil.ExitEnv, Meaning: "no fabric access"},
		cmdutil.ExitMeaning{Code: cmdutil.ExitIncomplete, Meaning: "a partial sweep (printed first; what was not read on stderr)"},
	)
	return c
}

func runDiscover(o *DiscoverOptions) error {
	// The fabric file keeps the NodeDescriptions as the sweep read them (already
	// terminal-safe: mad.ParseNodeDescription); --node-name-map renames nodes when the
	// file is read back.
	o.Source.RawNames = o.Format == cmdutil.FormatJSON
	return o.Source.Load(o.Ctx, o.Notices, o.NoTables, false, func(fab *fabric.Fabric) error {
		if o.Format == cmdutil.FormatJSON {
			return fabric.EncodeFabric(o.IO.Out, fab)
		}
		// NODE, PORT and PEER are the topology; the rest gives way first, so that
		// switch descriptions such as "MF0;ib-leaf-r12-u40:MQM8790/U1" (a word
		// that cannot wrap) in NODE and PEER still make a table at 80 columns.
		g := cmdutil.Grid{Header: []string{"NODE", "TYPE", "NODE_GUID", "PORT", "PORT_GUID", "LID", "STATE", "PEER"},
			Required: []string{"NODE", "PORT", "PEER"}, Optional: [][]string{{"NODE_GUID"}, {"TYPE"}, {"PORT_GUID"}, {"LID"}, {"STATE"}}}
		for _, n := range fab.Nodes {
			name, nodeGUID := n.Name(), n.GUID.String()
			for _, p := range n.Ports {
				// A switch port without a cable is left out; one that may have one
				// (PortInfo not read, no answer from its far end) is shown.
				if !n.Listed(p) {
					continue
				}
				peer := ""
				switch {
				case p.Peer != nil:
					peer = fab.Label(*p.Peer)
				case p.PeerError != "":
					peer = "no answer: " + p.PeerError
				}
				lid, state := lidState(n, p)
				guid := ""
				if p.GUID != 0 { // none on a switch's external port
					guid = p.GUID.String()
				}
				g.Add(name, string(n.Type), nodeGUID, strconv.Itoa(p.Num), guid, lid, state, peer)
			}
		}
		return g.Render(o.IO.Out, o.Format)
	})
}
