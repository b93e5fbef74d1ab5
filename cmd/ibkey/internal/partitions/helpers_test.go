package partitions

import (
	"testing"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
)

// runIbkey runs `ibkey ARGS` in-process on a root that has the real root's persistent
// flags and only the partitions commands, with fake streams; tty makes stdout a
// terminal. Errors are printed and mapped to exit codes as main does.
func runIbkey(t *testing.T, tty bool, env map[string]string, args ...string) cmdtest.Result {
	t.Helper()
	return cmdtest.Run(t, cmdtest.WithCommands(NewCmdPartitions), tty, env, args...)
}

// showJSON is the part of `partitions show -o json` the tests read back.
type showJSON struct {
	TableSize int             `json:"table_size"`
	Ports     []portTableJSON `json:"ports"`
}
