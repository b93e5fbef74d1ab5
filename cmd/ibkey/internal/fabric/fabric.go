// Package fabric holds `ibkey fabric`: discover, pkeys, check and diff, which answer
// from one sweep of the subnet (internal/query.Sweep) or a saved one (--fabric-file).
package fabric

import (
	"strconv"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/internal/fabric"
)

// NewCmdFabric is `ibkey fabric` and its subcommands.
func NewCmdFabric(f *cmdutil.Factory) *cobra.Command {
	c := &cobra.Command{
		Use:   "fabric",
		Short: "Sweep the subnet and its P_Key tables; audit and compare sweeps",
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

--timeout bounds the whole command (attaching and the sweep); SIGINT and SIGTERM end
it too, with the simulator or umad port released.`,
		Example: `  ibkey fabric discover --ibsim
  ibkey fabric discover -o json > fabric.json
  ibkey fabric pkeys --fabric-file fabric.json --key 0x0002
  ibkey fabric check --partitions /etc/opensm/partitions.conf
  ibkey fabric diff fabric.json`,
	}
	c.AddCommand(NewCmdDiscover(f, nil), NewCmdPKeys(f, nil), NewCmdCheck(f, nil), NewCmdDiff(f, nil))
	cmdutil.SetExits(c,
		cmdutil.ExitMeaning{Code: cmdutil.ExitUsage, Meaning: "no subcommand, or an unknown one (each subcommand's --help lists its own exit codes)"},
	)
	return c
}

// lidState are a listed port's LID and state cells: no LID on a switch's external
// port, n/a for both when its PortInfo was not read (stderr names it: partial sweep).
func lidState(n *fabric.Node, p *fabric.Port) (lid, state string) {
	if p.Error != "" {
		return "n/a", "n/a"
	}
	if n.IsEndPort(p) {
		lid = strconv.Itoa(int(p.LID))
	}
	return lid, p.State
}

// incompleteItems is what was not read or not checked (fabric.NotCheckedLines: one item
// per kind), as a document's "incomplete". Of a fabric's NotRead(true), what a command
// that answers from its P_Key tables lacks: empty exactly when cmdutil.PartialResult
// (needTables) does not make the command exit 4. Kinds: partial-sweep, unread-node,
// unread-table (fabric.NotCheckedKind).
func incompleteItems(items []fabric.NotChecked) []cmdutil.Incomplete {
	lines := fabric.NotCheckedLines(items)
	out := make([]cmdutil.Incomplete, len(lines))
	for i, l := range lines {
		out[i] = cmdutil.Incomplete{Kind: string(l.Kind), Message: l.Text}
	}
	return out
}
