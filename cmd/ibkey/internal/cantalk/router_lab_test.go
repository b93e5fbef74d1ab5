package cantalk

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/lab"
)

// TestLabCanTalkPartitionsRouterPorts: OpenSM programs the router lab (two HCAs, a
// router with both ports cabled) from a file where only the SM's port is a full member
// of the default partition, with ALL_CAS, ALL_ROUTERS and a router GUID as members
// (HcaB and the router's port 1 then share only the default partition, as limited
// members: they cannot talk, though as CA ports they would). For every pair of end
// ports, `can-talk --partitions --router` (the router's ports) answers what the P_Key
// rule says on the tables OpenSM programmed (read back with smpquery); without
// --router, a pair whose answer depends on whether a port is a router port is
// UNKNOWN (exit 4), and the others answer as with it.
func TestLabCanTalkPartitionsRouterPorts(t *testing.T) {
	lab.Require(t)
	if testing.Short() {
		t.Skip("lab: -short")
	}
	l := lab.StartRouterLab(t)
	const conf = `Default=0x7fff : ALL=limited, SELF=full ;
cas=0x0010 : ALL_CAS=full ;
routers=0x0020 : ALL_ROUTERS=full ;
member=0x0040 : 0x0002c90300000322=full, 0x0002c90300000311 ;
`
	if err := l.RunOpenSM(conf, false); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "partitions.conf")
	if err := os.WriteFile(file, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	ports := lab.RouterLabPorts
	real := map[check.GUID][]check.PKey{}
	var routers []string
	for _, p := range ports {
		pt, err := lab.ParsePKeys(l.MustTool("smpquery", "-D", "pkeys", p.DR))
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range pt.Entries {
			real[p.GUID] = append(real[p.GUID], check.PKey(v))
		}
		if p.Router {
			routers = append(routers, p.GUID.String())
		}
	}
	flags := []string{"--partitions", file, "--sm-guid", ports[0].GUID.String(), "--table-size", "64"}
	unknown := 0
	for i, a := range ports {
		for _, b := range ports[i+1:] {
			want := false
			for _, x := range real[a.GUID] {
				if x.Valid() && keyRule(real[a.GUID], real[b.GUID], x.Partition()) {
					want = true
				}
			}
			args := append([]string{"can-talk", a.GUID.String(), b.GUID.String()}, flags...)
			r := runIbkey(t, append(args, "--router", strings.Join(routers, ","))...)
			if got := r.Code == 0; got != want || (r.Code != 0 && r.Code != 1) {
				t.Errorf("%s-%s: can-talk --router: exit %d, the programmed tables %v / %v say %v\n%s%s", a.Name, b.Name, r.Code, real[a.GUID], real[b.GUID], want, r.Stdout, r.Stderr)
			}
			r = runIbkey(t, args...)
			switch {
			case r.Code == 4:
				unknown++
				if !strings.Contains(r.Stderr, "is a router port") && !strings.Contains(r.Stderr, "are router ports") {
					t.Errorf("%s-%s: exit 4 without saying which type it depends on:\n%s", a.Name, b.Name, r.Stderr)
				}
			case (r.Code == 0) != want || r.Code > 1:
				t.Errorf("%s-%s: can-talk without --router: exit %d, the programmed tables say %v: confidently wrong\n%s%s", a.Name, b.Name, r.Code, want, r.Stdout, r.Stderr)
			}
		}
	}
	if unknown == 0 {
		t.Error("no pair depends on the ports' types: the file does not test it")
	}
}
