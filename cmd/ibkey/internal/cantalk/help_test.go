package cantalk

import (
	"strings"
	"testing"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
)

// TestHelpNamesTheLookupItDoes: pkey= picks the entry the kernel's ib_find_pkey picks
// (15-bit key, a full member preferred: drivers/infiniband/core/device.c), which is
// what check.FindPKeyIndex does. libibverbs' ibv_get_pkey_index is another lookup: it
// returns the first entry equal to all 16 bits (rdma-core libibverbs/verbs.c), so
// the help must not credit it with preferring a full member.
func TestHelpNamesTheLookupItDoes(t *testing.T) {
	c := NewCmdCanTalk(&cmdutil.Factory{}, nil)
	if strings.Contains(c.Long, "ibv_get_pkey_index picks") {
		t.Errorf("can-talk --help says ibv_get_pkey_index picks a full member; it matches all 16 bits:\n%s", c.Long)
	}
	if !strings.Contains(c.Long, "ib_find_pkey") {
		t.Errorf("can-talk --help does not name the kernel's ib_find_pkey for pkey=:\n%s", c.Long)
	}
}
