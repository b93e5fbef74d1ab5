// Package partitions holds `ibkey partitions`: check, show and matrix, which read an
// OpenSM partitions.conf the way OpenSM does (internal/partconf) and render
// what internal/query builds from it.
package partitions

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/partconf"
	"github.com/ibkey/ibkey/internal/query"
	"github.com/ibkey/ibkey/internal/textsafe"
)

// NewCmdPartitions is `ibkey partitions` and its subcommands.
func NewCmdPartitions(f *cmdutil.Factory) *cobra.Command {
	c := &cobra.Command{
		Use:   "partitions",
		Short: "Read OpenSM's partitions.conf: errors, P_Key tables, who can talk",
		Long: `Read an OpenSM partitions.conf the way OpenSM 3.3 reads it (lab-checked against
OpenSM 3.3.23 on the ibsim simulator) and answer three questions without a fabric:

  check FILE            what OpenSM rejects or silently gets wrong, with file:line:col and a fix
  show FILE [GUID...]   each partition's members and multicast groups, and the P_Key
                        table each port gets
  matrix FILE           who can talk to whom: a grid for a few ports, a summary for many

A file OpenSM rejects is not applied at all: OpenSM falls back to
Default=0x7fff, ipoib : ALL=full, every port becomes a full member of the default
partition and all isolation is lost. check says so first; show and matrix show that fallback.
When what OpenSM does with a file cannot be predicted (it reads memory the file does
not determine, or crashes), every subcommand says so on stderr and exits 4.

FILE (and --previous) may be - for standard input, or a pipe: read to its end, at most
256 MiB, as a file is (ssh sm01 cat /etc/opensm/partitions.conf | ibkey partitions
check -, or <(ssh sm01 cat /etc/opensm/partitions.conf)).

--opensm-conf FILE reads OpenSM's opensm.conf as OpenSM does: its allow_both_pkeys
replaces --allow-both, its guid (the port OpenSM binds to, unless 0) --sm-guid,
and without a partitions FILE its partition_config_file is read (said on stderr;
an empty one: OpenSM reads none and programs only Default=0x7fff, ipoib :
ALL=full).

The ports are the GUIDs the file names (show also takes more on the command line).
A file names port GUIDs, not node types, and OpenSM gives ALL_CAS' entries to CA
ports and ALL_ROUTERS' to router ports: --router names the router ports (--router
none: there are none) and a saved sweep (--fabric-file) the type of every port it
holds; the other ports are then CA ports. Without either, a port whose table would
differ as a router port (the file has ALL_CAS or ALL_ROUTERS items) is shown as a CA
port, its table says so, and the exit is 4.`,
		Example: `  ibkey partitions check /etc/opensm/partitions.conf
  ibkey partitions show partitions.conf --sm-guid 0x0002c90300000201
  ibkey partitions matrix partitions.conf -o json
  ibkey partitions check --opensm-conf /etc/opensm/opensm.conf
  ssh sm01 cat /etc/opensm/partitions.conf | ibkey partitions check -`,
	}
	c.AddCommand(NewCmdCheck(f, nil), NewCmdShow(f, nil), NewCmdMatrix(f, nil))
	return c
}

// rejectedWarning is the loud line show and matrix print when OpenSM would drop the file.
func rejectedWarning(c *partconf.Config) string {
	return fmt.Sprintf("OpenSM REJECTS %s (first error at %s) and applies Default=0x7fff, ipoib : ALL=full instead: every port is a full member of the default partition, ALL ISOLATION IS LOST; what follows is that fallback (see 'ibkey partitions check %s')",
		c.File, c.RejectedAt, c.File)
}

// stringsOf is each x's String().
func stringsOf[T fmt.Stringer](xs []T) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = x.String()
	}
	return out
}

// portGUIDs are the GUIDs of ports, in order.
func portGUIDs(ports []partconf.Port) []check.GUID {
	guids := make([]check.GUID, len(ports))
	for i, port := range ports {
		guids[i] = port.GUID
	}
	return guids
}

// typeUnknown is exit 4 when the tables printed depend on whether ports are router
// ports, which was not given (unknown: query.Partitions.UnknownType): it says which
// and how to say it (typeUnknownText).
func typeUnknown(w io.Writer, files string, unknown map[check.GUID][]check.PKey, printed string) error {
	if len(unknown) == 0 {
		return nil
	}
	fmt.Fprintln(w, "ibkey: "+typeUnknownText(files, unknown, printed))
	return cmdutil.Exit(cmdutil.ExitIncomplete)
}

// typeUnknownText is typeUnknown's sentence, also the JSON's incomplete message:
// printed ("the tables above are") holds for CA ports, and which of unknown's ports
// would get other entries as router ports; "" when none would. files names where the
// items are (FILE, or FILE or a --previous file).
func typeUnknownText(files string, unknown map[check.GUID][]check.PKey, printed string) string {
	if len(unknown) == 0 {
		return ""
	}
	list := textsafe.Capped(stringsOf(slices.Sorted(maps.Keys(unknown))), 3)
	return fmt.Sprintf("%s for CA ports: %s would get other entries as router ports (%s has ALL_CAS or ALL_ROUTERS items, which OpenSM applies by node type): name the router ports with --router (--router none if there are none), or give --fabric-file with a saved sweep",
		printed, strings.Join(list, ", "), files)
}

// PortTypes are --router and --fabric-file: which port GUIDs are router ports (a file
// names port GUIDs, not node types), and with --fabric-file the name of each port's
// node (--node-name-map renames them).
type PortTypes struct {
	Routers     []string // --router
	FabricFile  string   // --fabric-file: the node types of a saved sweep's ports
	NodeNameMap string   // --node-name-map: node names for the fabric file's nodes
}

func (p *PortTypes) add(c *cobra.Command) {
	c.Flags().StringSliceVar(&p.Routers, "router", nil, "the router ports' `GUIDS` (comma-separated; none: there are none); the others are CA ports: ALL_ROUTERS names router ports, ALL_CAS CA ports")
	c.Flags().StringVar(&p.FabricFile, "fabric-file", "", "take the ports' node types and table lengths (PartitionCap) from a saved sweep (`FILE`, ibkey fabric discover -o json), and name each port's node (a NODE column)")
	_ = c.MarkFlagFilename("fabric-file", "json")
	cmdutil.AddNodeNameMapFlag(c, &p.NodeNameMap)
}

// apply sets p's port types and, with --fabric-file, the table lengths of the ports
// the sweep holds (query.Partitions.SetPortTypes), and returns the names of their
// nodes, keyed by port GUID (nil without --fabric-file).
func (t PortTypes) apply(p *query.Partitions) (map[check.GUID]string, error) {
	if t.NodeNameMap != "" && t.FabricFile == "" {
		// A partitions file names port GUIDs; a node name map names node GUIDs.
		return nil, cmdutil.Usagef("--node-name-map needs --fabric-file (the map names node GUIDs, the partitions file port GUIDs: the sweep links them)")
	}
	if t.FabricFile == "" {
		return nil, p.SetPortTypes(t.Routers, nil)
	}
	nm, err := cmdutil.ReadNodeNameMap(t.NodeNameMap)
	if err != nil {
		return nil, err
	}
	f, err := cmdutil.ReadFabricFile(t.FabricFile)
	if err != nil {
		return nil, err
	}
	nm.Rename(f)
	names := map[check.GUID]string{}
	for _, n := range f.Nodes {
		for _, port := range n.Ports {
			if port.GUID != 0 {
				names[port.GUID] = n.Description
			}
		}
	}
	return names, p.SetPortTypes(t.Routers, f)
}

// nodeColumn gives g a NODE column at index at when there are names (--fabric-file),
// and returns how to add a row about port guid: its node's name goes there ("-" when
// the sweep does not hold it).
func nodeColumn(g *cmdutil.Grid, at int, names map[check.GUID]string) func(guid check.GUID, cells ...string) {
	if names != nil {
		g.Header = slices.Insert(slices.Clone(g.Header), at, "NODE")
	}
	return func(guid check.GUID, cells ...string) {
		if names != nil {
			cells = slices.Insert(cells, at, cmp.Or(names[guid], "-"))
		}
		g.Add(cells...)
	}
}

// keyLess sorts partitions for people: the default partition first, then by key.
func keyLess(a, b check.PartitionKey) bool {
	if (a == check.DefaultPartition) != (b == check.DefaultPartition) {
		return a == check.DefaultPartition
	}
	return a < b
}

// completePartitionsFile completes FILE with file names, then with guids the port
// GUIDs it names.
func completePartitionsFile(guids bool) cobra.CompletionFunc {
	return func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		switch {
		case len(args) == 0:
			return nil, cobra.ShellCompDirectiveDefault
		case guids:
			return cmdutil.FileGUIDCompletions(args[0]), cobra.ShellCompDirectiveNoFileComp
		}
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
}
