package pkeys

import (
	"strings"
	"testing"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
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
