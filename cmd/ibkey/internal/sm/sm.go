// Package sm is `ibkey sm`: the Subnet Manager's side of partitions, what OpenSM
// logged about partitions and keys (sm log), explained.
package sm

import (
	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
)

// NewCmdSM is `ibkey sm` and its subcommands.
func NewCmdSM(f *cmdutil.Factory) *cobra.Command {
	c := &cobra.Command{
		Use:   "sm",
		Short: "What the Subnet Manager logged about partitions and keys",
		Long: `The Subnet Manager decides every partition question and records every violation,
tersely, in its log. 'ibkey sm log' reads OpenSM's log and explains each partition
and key event: the traps ports send when they drop a packet for its P_Key or Q_Key,
the SA's refusals, partitions.conf files OpenSM rejects, tables that overflow.

  log [FILE|-]      explain the partition and key events of an OpenSM log`,
		Example: `  ibkey sm log /var/log/opensm.log
  ibkey sm log --follow --fabric-file fabric.json --partitions partitions.conf`,
	}
	c.AddCommand(NewCmdLog(f))
	return c
}
