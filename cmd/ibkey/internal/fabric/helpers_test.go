package fabric

import (
	"testing"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
)

// runIbkey runs `ibkey ARGS` in-process on a root that has the real root's persistent
// flags and only the fabric commands, with fake streams; tty makes stdout a
// terminal. Errors are printed and mapped to exit codes as main does.
func runIbkey(t *testing.T, tty bool, env map[string]string, args ...string) cmdtest.Result {
	t.Helper()
	return runWith(t, tty, env, NewCmdFabric, args...)
}

// runWith is runIbkey with the commands build makes (a test can wrap a command's run
// to replace a dependency).
func runWith(t *testing.T, tty bool, env map[string]string, build func(*cmdutil.Factory) *cobra.Command, args ...string) cmdtest.Result {
	t.Helper()
	return cmdtest.Run(t, cmdtest.WithCommands(build), tty, env, args...)
}

// runPartial is runIbkey (stdout not a terminal, no environment) for a case whose
// input leaves something the answer asks about unread (cmdtest.RunPartial).
func runPartial(t *testing.T, args ...string) cmdtest.Result {
	t.Helper()
	return cmdtest.RunPartial(t, cmdtest.WithCommands(NewCmdFabric), false, nil, args...)
}
