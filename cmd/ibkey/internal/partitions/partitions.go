// Package partitions holds `ibkey partitions`: check, show and matrix, which read an
// OpenSM partitions.conf the way OpenSM does (internal/partconf) and render
// what internal/query builds from it.
package partitions

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/partconf"
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
Default=0x7fff : ALL=full, every port becomes a full member of the default partition
and all isolation is lost. check says so first; show and matrix show that fallback.
When what OpenSM does with a file cannot be predicted (it reads memory the file does
not determine, or crashes), every subcommand says so on stderr and exits 4.

FILE (and --previous) may be - for standard input, or a pipe: read to its end, at most
256 MiB, as a file is (ssh sm01 cat /etc/opensm/partitions.conf | ibkey partitions
check -, or <(ssh sm01 cat /etc/opensm/partitions.conf)).

The ports are the GUIDs the file names (show also takes more on the command line).
They are taken for CA ports unless --router names them or a saved sweep
(--fabric-file) shows them on a router: ALL_ROUTERS names router ports, ALL_CAS does
not, and ALL_SWITCHES names none of them.`,
		Example: `  ibkey partitions check /etc/opensm/partitions.conf
  ibkey partitions show partitions.conf --sm-guid 0x0002c90300000201
  ibkey partitions matrix partitions.conf -o json
  ssh sm01 cat /etc/opensm/partitions.conf | ibkey partitions check -`,
		Args: cmdutil.UsageArgs(cobra.NoArgs),
	}
	c.AddCommand(NewCmdCheck(f, nil), NewCmdShow(f, nil), NewCmdMatrix(f, nil))
	return c
}

// rejectedWarning is the loud line show and matrix print when OpenSM would drop the file.
func rejectedWarning(c *partconf.Config) string {
	return fmt.Sprintf("OpenSM REJECTS %s (first error at %s) and applies Default=0x7fff : ALL=full instead: every port is a full member of the default partition, ALL ISOLATION IS LOST; what follows is that fallback (see 'ibkey partitions check %s')",
		c.File, c.RejectedAt, c.File)
}

// uncertain is exit 4 when what OpenSM does with c's file cannot be predicted
// (cmdutil.Uncertain).
func uncertain(w io.Writer, c *partconf.Config, printed string) error {
	return cmdutil.Uncertain(w, c, printed)
}

// PortTypes are --router and --fabric-file: which port GUIDs are router ports (a
// file names port GUIDs, not node types), and with --fabric-file the name of each
// port's node (--node-name-map renames them).
type PortTypes struct {
	Routers     []string // --router
	FabricFile  string   // --fabric-file: the router ports of a saved sweep
	NodeNameMap string   // --node-name-map: node names for the fabric file's nodes
}

func (p *PortTypes) add(c *cobra.Command) {
	c.Flags().StringSliceVar(&p.Routers, "router", nil, "the port `GUIDS` (comma-separated) are router ports: ALL_ROUTERS names them, ALL_CAS does not")
	c.Flags().StringVar(&p.FabricFile, "fabric-file", "", "take the router ports from a saved sweep (`FILE`, ibkey fabric discover -o json), and name each port's node (a NODE column)")
	_ = c.MarkFlagFilename("fabric-file", "json")
	cmdutil.AddNodeNameMapFlag(c, &p.NodeNameMap)
}

// types reads the router GUIDs, and with --fabric-file the names of the nodes of the
// ports it holds (nil without it), keyed by port GUID.
func (p PortTypes) types() (map[check.GUID]check.NodeType, map[check.GUID]string, error) {
	out := map[check.GUID]check.NodeType{}
	if p.NodeNameMap != "" && p.FabricFile == "" {
		// A partitions file names port GUIDs; a node name map names node GUIDs.
		return nil, nil, cmdutil.Usagef("--node-name-map needs --fabric-file (the map names node GUIDs, the partitions file port GUIDs: the sweep links them)")
	}
	var names map[check.GUID]string
	if p.FabricFile != "" {
		nm, err := (&cmdutil.FabricSweep{NodeNameMap: p.NodeNameMap}).Names()
		if err != nil {
			return nil, nil, err
		}
		f, err := cmdutil.ReadFabricFile(p.FabricFile)
		if err != nil {
			return nil, nil, err
		}
		nm.Rename(f)
		cmdutil.SanitizeFabric(f)
		names = map[check.GUID]string{}
		for _, n := range f.Nodes {
			for _, port := range n.Ports {
				if port.GUID != 0 {
					names[port.GUID] = n.Description
				}
			}
		}
		if err := cmdutil.AddRouters(out, p.Routers, f); err != nil {
			return nil, nil, err
		}
		return out, names, nil
	}
	return out, names, cmdutil.AddRouters(out, p.Routers, nil)
}

// nodeCell is a port's node name for a table: "-" when the sweep does not hold it.
func nodeCell(names map[check.GUID]string, guid check.GUID) string {
	if name, ok := names[guid]; ok && name != "" {
		return name
	}
	return "-"
}

// keyLess sorts partitions for people: the default partition first, then by key.
func keyLess(a, b check.PartitionKey) bool {
	if (a == check.DefaultPartition) != (b == check.DefaultPartition) {
		return a == check.DefaultPartition
	}
	return a < b
}
