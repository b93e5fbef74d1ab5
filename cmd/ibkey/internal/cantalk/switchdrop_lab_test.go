package cantalk

import (
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/lab"
)

// TestLabCanTalkSASwitchDrop (wave 19): a saved sweep where Sw1's port facing HcaD
// lacks partition 0x0003 and enforces partitions (ibsim keeps no enforcement bits,
// so the file says it): the verdict is NO, and OpenSM gives the path, since a
// PathRecord looks only at the ends' tables (osm_sa_path_record.c
// pr_rcv_get_path_parms). The SM line said "it agrees" under the NO; it now says it
// agrees on the ends' tables only, and the NO stands (exit 1).
func TestLabCanTalkSASwitchDrop(t *testing.T) {
	lab.Require(t)
	if testing.Short() {
		t.Skip("lab: -short")
	}
	l := lab.StartPartconf(t)
	l.StartOpenSMDaemon(t, saLabConf)
	file, _ := savedSweep(t, l, "enforcing.json", func(swept *fabric.Fabric) {
		dropped := false
		for _, n := range swept.Nodes {
			for _, p := range n.Ports {
				if n.Type != check.NodeSwitch || p.Num != 4 { // Sw1[4] faces HcaD
					continue
				}
				for i := range p.PKeys {
					if p.PKeys[i].Valid() && p.PKeys[i].Partition() == 0x0003 {
						p.PKeys[i], dropped = 0, true
					}
				}
				p.Enforcement = &check.Enforcement{Inbound: true, Outbound: true}
			}
		}
		if !dropped {
			t.Fatal("Sw1[4] holds no key of partition 0x0003")
		}
	})
	r := runIbkey(t, "can-talk", "--fabric-file", file, "lid=3,pkey=0x8003", "lid=5,pkey=0x0003", "--sa", "--ibsim="+l.SockName, "--sim-node", "HcaA")
	text := strings.Join(strings.Fields(r.Stdout), " ")
	if r.Code != 1 || !strings.HasPrefix(r.Stdout, "NO: ") || !strings.Contains(text, "it drops that partition's packets") ||
		!strings.Contains(text, "it agrees on the ends' P_Key tables, all a PathRecord looks at (not the switch ports' tables, not Q_Keys): its path does not undo the verdict") {
		t.Errorf("exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}
