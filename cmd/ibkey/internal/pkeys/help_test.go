package pkeys

import (
	"slices"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
)

// TestHelpNamesTheLookupItDoes: --find picks the entry the kernel's ib_find_pkey picks
// (15-bit key, the first full entry wins: drivers/infiniband/core/device.c), which is
// check.FindPKeyIndex's rule; libibverbs' ibv_get_pkey_index returns the first entry
// equal to all 16 bits (rdma-core libibverbs/verbs.c), so the help must not credit it
// with the 15-bit lookup (red-team finding 10).
func TestHelpNamesTheLookupItDoes(t *testing.T) {
	c := NewCmdPKeys(&cmdutil.Factory{}, nil)
	if strings.Contains(c.Long, "ibv_get_pkey_index does") {
		t.Errorf("pkeys --help credits ibv_get_pkey_index with the full-member preference:\n%s", c.Long)
	}
	if !strings.Contains(c.Long, "ib_find_pkey") || !strings.Contains(c.Long, "all 16 bits") {
		t.Errorf("pkeys --help does not name ib_find_pkey for --find, or ibv_get_pkey_index's 16-bit match:\n%s", c.Long)
	}
}

// TestKeyIsFind: --key is --find, the spelling 'ibkey fabric pkeys' uses for the same
// lookup (a user who typed one in the other command got "unknown flag").
func TestKeyIsFind(t *testing.T) {
	for _, args := range [][]string{{"--find", "0x8001"}, {"--find", "0x8001", "-o", "json"}, {"mlx5_0/1", "--find", "2", "-o", "plain"}} {
		want := cmdtest.Run(t, root, false, nil, append([]string{"--demo", "pkeys"}, args...)...)
		key := slices.Clone(args)
		key[slices.Index(key, "--find")] = "--key"
		got := cmdtest.Run(t, root, false, nil, append([]string{"--demo", "pkeys"}, key...)...)
		if got != want || want.Code != 0 {
			t.Errorf("%v: exit %d\n%s%s\nwant (--find) exit %d\n%s%s", key, got.Code, got.Stdout, got.Stderr, want.Code, want.Stdout, want.Stderr)
		}
	}
}

// TestFindWarnsStaleTable: --find answers from a DOWN port's table with the warning
// the table's own view gives (the demo host's mlx5_1/2: a table is valid only while the
// port is ARMED or ACTIVE); it answered "index 0" with no word of it. The exit code is
// the table view's: 0.
func TestFindWarnsStaleTable(t *testing.T) {
	const stale = "warning: mlx5_1/2 is DOWN: a P_Key table is valid only while the port is ARMED or ACTIVE; these entries may be stale"
	for _, args := range [][]string{{"--find", "0xffff"}, {"--find", "0x8001", "-o", "json"}, {"mlx5_1/2", "--find", "0xffff", "-o", "plain"}} {
		r := cmdtest.Run(t, root, false, nil, append([]string{"--demo", "pkeys"}, args...)...)
		if r.Code != 0 || strings.Count(r.Stderr, stale) != 1 {
			t.Errorf("%v: exit %d, want 0 and the stale-table warning once:\n%s%s", args, r.Code, r.Stdout, r.Stderr)
		}
	}
	if r := cmdtest.Run(t, root, false, nil, "--demo", "pkeys", "mlx5_0/1", "--find", "0xffff"); strings.Contains(r.Stderr, "may be stale") {
		t.Errorf("an ACTIVE port's answer warns of a stale table:\n%s", r.Stderr)
	}
}
