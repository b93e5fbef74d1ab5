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

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/lab"
)

// The fabric commands on the simulated fabric, run in-process like a user would:
// discovery against ibnetdiscover, each audit problem injected and found, partial
// sweeps, and can-talk lid= / GUID endpoints against the P_Key rule applied to the
// tables smpquery reads. `make fabric-test` runs them (-run 'Lab|Fabric').

// labRun runs ibkey attached to the lab and returns the result, whatever the exit code.
func (l *fabricLab) run(t *testing.T, args ...string) result {
	t.Helper()
	all := []string{"--ibsim=" + l.SockName, "--sim-node", l.from}
	return runIbkey(t, false, nil, append(all, args...)...)
}

// discoverFile runs `fabric discover -o json` and decodes the fabric file.
func (l *fabricLab) discoverFile(t *testing.T, args ...string) (*check.Fabric, result) {
	t.Helper()
	r := l.run(t, append([]string{"fabric", "discover", "-o", "json"}, args...)...)
	f, err := check.DecodeFabric(strings.NewReader(r.stdout))
	if err != nil {
		t.Fatalf("fabric discover -o json: exit %d: %v\nstderr: %s", r.code, err, r.stderr)
	}
	return f, r
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
	l, targets := startFabricLab(t, "small.net")
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
	resolveLIDs(t, l, targets)
	f, _ := l.discoverFile(t)
	file := filepath.Join(t.TempDir(), "fabric.json")
	var buf strings.Builder
	if err := check.EncodeFabric(&buf, f); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(buf.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	type hcaPort struct {
		*fabricTarget
		table []uint16
		guid  check.GUID
	}
	var ports []hcaPort
	for _, tg := range targets {
		if tg.typ != lab.CA {
			continue
		}
		pt, err := lab.ParsePKeys(l.tool(t, "smpquery", "pkeys", strconv.Itoa(tg.lid)))
		if err != nil {
			t.Fatal(err)
		}
		guid, err := lab.ParseFields(l.tool(t, "smpquery", "nodeinfo", strconv.Itoa(tg.lid))).Uint("PortGuid")
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
			if a.fabricTarget == b.fabricTarget {
				continue
			}
			want := pkeyRule(a.table, b.table)
			for _, args := range [][]string{
				{"can-talk", "lid=" + strconv.Itoa(a.lid), "lid=" + strconv.Itoa(b.lid)},
				{"can-talk", "--fabric-file", file, a.guid.String(), b.guid.String()},
			} {
				r := l.run(t, append(args, "-o", "json")...)
				var d canTalkDoc
				if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
					t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, r.stderr)
				}
				wantCode := 1
				if want != "" {
					wantCode = 0
				}
				if d.working() != want || d.CanTalk != (want != "") || r.code != wantCode {
					t.Errorf("%s (%s, %s): can_talk %v exit %d, partitions that work %q; P_Key rule on smpquery's tables: %q",
						strings.Join(args, " "), a, b, d.CanTalk, r.code, d.working(), want)
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
	r := l.run(t, "can-talk", "node=HcaC", "node=HcaD,port=2")
	if r.code != 0 || !strings.Contains(r.stderr, `node=HcaD,port=2 is "HcaD"[2] (port GUID 0x000000000010000b`) {
		t.Errorf("node=: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// A GUID sweeps the fabric when --ibsim is given.
	r = l.run(t, "can-talk", "0x100007", "lid="+strconv.Itoa(ports[0].lid))
	if r.code > 1 || !strings.Contains(r.stderr, `0x0000000000100007 is "HcaC"[1]`) {
		t.Errorf("GUID with --ibsim: exit %d\n%s", r.code, r.stderr)
	}
	if r := l.run(t, "can-talk", "node=HcaD", "0x8001"); r.code != 2 || !strings.Contains(r.stderr, "HcaD has ports 1, 2: add ,port=P") {
		t.Errorf("node=HcaD: exit %d %s", r.code, r.stderr)
	}
	if r := l.run(t, append([]string{"can-talk", "lid=999", "0x8001"}, fastFail...)...); r.code != 3 || !strings.Contains(r.stderr, "no LID 999 in the sweep (LIDs: ") {
		t.Errorf("lid=999: exit %d %s", r.code, r.stderr)
	}
}
