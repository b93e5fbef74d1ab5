package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/lab"
)

// can-talk on the simulated fabric, through the whole tree: lid= endpoints read over
// MADs, GUIDs in the file `fabric discover` wrote, node= through a live sweep, against
// the P_Key rule applied to the tables smpquery reads (the fabric commands' own lab
// tests: cmd/ibkey/internal/fabric). `make fabric-test` runs them (-run 'Lab|Fabric').

// discoverFile runs `fabric discover -o json` and decodes the fabric file.
func discoverFile(t *testing.T, l *cmdtest.Lab) *fabric.Fabric {
	t.Helper()
	r := l.Run(t, "fabric", "discover", "-o", "json")
	f, err := fabric.DecodeFabric(strings.NewReader(r.Stdout))
	if err != nil {
		t.Fatalf("fabric discover -o json: exit %d: %v\nstderr: %s", r.Code, err, r.Stderr)
	}
	return f
}

// canTalkDoc is the part of `can-talk -o json` compared.
type canTalkDoc struct {
	CanTalk bool `json:"can_talk"`
	Shared  []struct {
		Key   string `json:"key"`
		Works bool   `json:"works"`
	} `json:"shared_partitions"`
}

// working lists the partitions that work for the pair.
func (d canTalkDoc) working() string {
	var out []string
	for _, s := range d.Shared {
		if s.Works {
			out = append(out, s.Key)
		}
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// pkeyRule applies the P_Key rule to two tables: the partitions where both hold a valid
// entry and at least one of them is full.
func pkeyRule(a, b []uint16) string {
	full := func(t []uint16) map[uint16]bool {
		m := map[uint16]bool{}
		for _, k := range t {
			if k&0x7fff != 0 {
				m[k&0x7fff] = m[k&0x7fff] || k&0x8000 != 0
			}
		}
		return m
	}
	fa, fb := full(a), full(b)
	var out []string
	for k, af := range fa {
		if bf, ok := fb[k]; ok && (af || bf) {
			out = append(out, fmt.Sprintf("0x%04x", k))
		}
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// TestLabFabricCanTalk: for every pair of HCA ports of small.net after OpenSM applied
// a partitions.conf, `can-talk lid=A lid=B` (tables read over MADs) agrees with the P_Key
// rule applied to the tables smpquery reads; so does can-talk on the port GUIDs with
// --fabric-file (a saved sweep), and node= through a live sweep.
func TestLabFabricCanTalk(t *testing.T) {
	l := cmdtest.StartLab(t, "small.net", newRootCmd)
	targets := l.Targets(t)
	// The default partition limited for all but the SM's port, so that some pairs
	// share no working partition.
	conf := `Default=0x7fff : ALL=limited, SELF=full ;
storage=0x0002 : 0x100001=full, 0x100004=limited, 0x10000a=limited, 0x100007=full ;
compute=0x0003 : ALL_CAS=limited, 0x100007=full ;
mgmt=0x0004 : 0x10000b=full, 0x100004=limited ;
`
	if err := l.RunOpenSM(conf, false); err != nil {
		t.Fatal(err)
	}
	l.ResolveLIDs(t, targets)
	f := discoverFile(t, l)
	file := filepath.Join(t.TempDir(), "fabric.json")
	var buf strings.Builder
	if err := fabric.EncodeFabric(&buf, f); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(buf.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	type hcaPort struct {
		*cmdtest.Target
		table []uint16
		guid  check.GUID
	}
	var ports []hcaPort
	for _, tg := range targets {
		if tg.Type != lab.CA {
			continue
		}
		pt, err := lab.ParsePKeys(l.Diag(t, "smpquery", "pkeys", strconv.Itoa(tg.LID)))
		if err != nil {
			t.Fatal(err)
		}
		guid, err := lab.ParseFields(l.Diag(t, "smpquery", "nodeinfo", strconv.Itoa(tg.LID))).Uint("PortGuid")
		if err != nil {
			t.Fatal(err)
		}
		ports = append(ports, hcaPort{tg, pt.Entries[:pt.Capacity], check.GUID(guid)})
	}
	if len(ports) != 5 {
		t.Fatalf("%d HCA ports, want 5", len(ports))
	}
	yes, no := 0, 0
	for _, a := range ports {
		for _, b := range ports {
			if a.Target == b.Target {
				continue
			}
			want := pkeyRule(a.table, b.table)
			for _, args := range [][]string{
				{"can-talk", "lid=" + strconv.Itoa(a.LID), "lid=" + strconv.Itoa(b.LID)},
				{"can-talk", "--fabric-file", file, a.guid.String(), b.guid.String()},
			} {
				r := l.Run(t, append(args, "-o", "json")...)
				var d canTalkDoc
				if err := json.Unmarshal([]byte(r.Stdout), &d); err != nil {
					t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, r.Stderr)
				}
				wantCode := 1
				if want != "" {
					wantCode = 0
				}
				if d.working() != want || d.CanTalk != (want != "") || r.Code != wantCode {
					t.Errorf("%s (%s, %s): can_talk %v exit %d, partitions that work %q; P_Key rule on smpquery's tables: %q",
						strings.Join(args, " "), a, b, d.CanTalk, r.Code, d.working(), want)
				}
			}
			if want != "" {
				yes++
			} else {
				no++
			}
		}
	}
	t.Logf("%d pairs can talk, %d cannot", yes, no)
	if yes == 0 || no == 0 {
		t.Error("every pair gives the same answer: the comparison proves little")
	}

	// node= through a live sweep, naming the port it found on stderr.
	r := l.Run(t, "can-talk", "node=HcaC", "node=HcaD,port=2")
	if r.Code != 0 || !strings.Contains(r.Stderr, `node=HcaD,port=2 is "HcaD"[2] (port GUID 0x000000000010000b`) {
		t.Errorf("node=: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	// A GUID sweeps the fabric when --ibsim is given.
	r = l.Run(t, "can-talk", "0x100007", "lid="+strconv.Itoa(ports[0].LID))
	if r.Code > 1 || !strings.Contains(r.Stderr, `0x0000000000100007 is "HcaC"[1]`) {
		t.Errorf("GUID with --ibsim: exit %d\n%s", r.Code, r.Stderr)
	}
	if r := l.Run(t, "can-talk", "node=HcaD", "0x8001"); r.Code != 2 || !strings.Contains(r.Stderr, "HcaD has ports 1, 2: add ,port=P") {
		t.Errorf("node=HcaD: exit %d %s", r.Code, r.Stderr)
	}
	if r := l.Run(t, append([]string{"can-talk", "lid=999", "0x8001"}, fastFail...)...); r.Code != 3 || !strings.Contains(r.Stderr, "no LID 999 in the sweep (LIDs: ") {
		t.Errorf("lid=999: exit %d %s", r.Code, r.Stderr)
	}
}
