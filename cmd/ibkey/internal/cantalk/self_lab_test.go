package cantalk

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/lab"
)

// TestLabCanTalkPartitionsSelf (issue 24 item 5): a partitions.conf without a Default
// line, OpenSM at HcaA. What OpenSM 3.3.23 did: it applied its fallback "Default=0x7fff :
// ALL=limited, SELF=full", so HcaA[1] (its own port) holds 0xffff and HcaB[1] 0x7fff,
// and the tables it programmed let them talk in the default partition. can-talk
// --partitions without --sm-guid cannot know which port is SELF: it said a confident
// "no" (exit 1); now it says the answer depends on it (exit 4), and with --sm-guid it
// agrees with the programmed tables.
func TestLabCanTalkPartitionsSelf(t *testing.T) {
	l := lab.Start(t, "../../../../internal/lab/testdata/small.net", nil)
	const conf = "a=0x0001 : 0x100001, 0x100004 ;\n" // both limited
	if err := l.RunOpenSM(conf, false); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "partitions.conf")
	if err := os.WriteFile(file, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	const hcaA, hcaB, hcaC = "0x100001", "0x100004", "0x100007"
	// The programmed tables, swept.
	if r := runIbkey(t, "can-talk", "--ibsim="+l.SockName, "--sim-node", "HcaA", hcaA, hcaB); r.Code != 0 {
		t.Fatalf("the programmed tables: exit %d, want 0 (yes)\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, tc := range []struct {
		args []string
		code int
		text string
	}{
		{[]string{hcaA, hcaB}, 4, "is the port OpenSM runs on (SELF in " + file + ", implied by its missing Default line; give --sm-guid), the answer is yes"},
		{[]string{"--sm-guid", hcaA, hcaA, hcaB}, 0, "YES"},
		{[]string{"--sm-guid", hcaC, hcaA, hcaB}, 1, "NO"},
		{[]string{"--sm-guid", hcaA, hcaB, hcaC}, 1, "NO"}, // neither is the SM: both limited
	} {
		r := runIbkey(t, append([]string{"can-talk", "--partitions", file}, tc.args...)...)
		if r.Code != tc.code || !strings.Contains(r.Stdout, tc.text) {
			t.Errorf("can-talk --partitions %s: exit %d, want %d with %q\n%s%s", strings.Join(tc.args, " "), r.Code, tc.code, tc.text, r.Stdout, r.Stderr)
		}
	}
}
