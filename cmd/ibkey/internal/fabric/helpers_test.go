package fabric

import (
	"regexp"
	"strings"
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

// TestFindIsKey: fabric pkeys' --find is --key, the spelling 'ibkey pkeys' uses for
// the same lookup (a user who typed one in the other command got "unknown flag").
func TestFindIsKey(t *testing.T) {
	for _, args := range [][]string{{"--key", "0x8001"}, {"--key", "0x0002", "-o", "json"}} {
		want := runIbkey(t, false, nil, append([]string{"--demo", "fabric", "pkeys"}, args...)...)
		find := append([]string{"--find"}, args[1:]...)
		got := runIbkey(t, false, nil, append([]string{"--demo", "fabric", "pkeys"}, find...)...)
		// The sweep's time and duration are in both documents: compare them without.
		at := regexp.MustCompile(`20\d\d-\d\d-\d\dT[0-9:.]+Z( in [0-9.]+[a-zµ]*s)?`)
		norm := func(s string) string { return at.ReplaceAllString(s, "TIME") }
		if norm(got.Stdout) != norm(want.Stdout) || norm(got.Stderr) != norm(want.Stderr) || got.Code != want.Code || want.Code != 0 {
			t.Errorf("%v: exit %d\n%s%s\nwant (--key) exit %d\n%s%s", find, got.Code, got.Stdout, got.Stderr, want.Code, want.Stdout, want.Stderr)
		}
	}
}

// TestKeyNamesDownPorts: fabric pkeys --key names the DOWN ports whose tables were
// not read, as the listing does, instead of leaving them out of the members silently;
// no gap, exit 0 (query.PortView.DownTableNotRead). The SA answers the same: its
// PKeyTableRecords of a CA are those of the ports in port_guid_tbl, and no port is
// discovered through a DOWN one (osm_sa_pkey_record.c, sa_pkey_by_comp_mask). pkeys
// --find, which names the port, answers unknown for it.
func TestKeyNamesDownPorts(t *testing.T) {
	r := runIbkey(t, false, nil, "--demo", "fabric", "pkeys", "--key", "0x7fff")
	if r.Code != 0 || !strings.Contains(r.Stderr, `note: P_Key tables n/a on DOWN ports ("demo-node HCA-2"[2])`) {
		t.Errorf("exit %d, want 0 naming the DOWN port\n%s", r.Code, r.Stderr)
	}
}
