package fabric

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/lab"
)

// TestLabKeyMembersAsSA: the end ports `fabric pkeys --key K` lists are the ones the
// SA's P_KeyTableRecords (saquery --smkey 1 PKTR LID, asked of the OpenSM daemon that
// programmed the tables) show holding K, for every partition of the file and one of
// none. small.net's HcaA has a second port with no cable (DOWN): the SA has no record
// for it (osm_sa_pkey_record.c answers for a CA only the ports in port_guid_tbl, and
// none is discovered through a DOWN port), and ibkey leaves it out of the members too,
// naming it in a note with exit 0 (query.PortView.DownTableNotRead); so do HcaB's and
// HcaC's. (Asked for that port by name, the SA answers with the records of port 1.)
func TestLabKeyMembersAsSA(t *testing.T) {
	lab.Require(t)
	if testing.Short() {
		t.Skip("lab: -short")
	}
	l := startFabricLab(t, "small.net")
	l.StartOpenSMDaemon(t, partitionsConf(t))
	sim := "--ibsim=" + l.SockName
	r := runIbkey(t, false, nil, "fabric", "pkeys", sim, "-o", "json")
	var listing struct {
		Ports []struct {
			NodeGUID string `json:"node_guid"`
			Type     string `json:"type"`
			Port     int    `json:"port"`
			LID      int    `json:"lid"`
			EndPort  bool   `json:"end_port"`
		} `json:"ports"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &listing); err != nil || r.Code != 0 {
		t.Fatalf("fabric pkeys: exit %d: %v\n%s", r.Code, err, r.Stderr)
	}
	lidOf := map[string]int{} // node GUID/port of each end port
	lids := map[int]bool{}    // the end ports' LIDs: true for a switch's
	for _, p := range listing.Ports {
		if p.EndPort && p.LID > 0 {
			lidOf[fmt.Sprintf("%s/%d", p.NodeGUID, p.Port)] = p.LID
			lids[p.LID] = p.Type == "switch"
		}
	}
	// What the SA holds: every record of every end port's LID, by LID/port.
	tables := map[string][]uint16{}
	for _, lid := range slices.Sorted(maps.Keys(lids)) {
		out := l.tool(t, "saquery", "--smkey", "1", "PKTR", strconv.Itoa(lid))
		for _, rec := range strings.Split(out, "PKeyTableRecord dump:")[1:] {
			port := field(t, rec, "Port")
			if lids[lid] && port != 0 { // a switch's end port is port 0
				continue
			}
			k := fmt.Sprintf("%d/%d", lid, port)
			tables[k] = append(tables[k], saquery16(t, rec)...)
		}
	}
	if _, ok := tables["1/2"]; ok || len(tables) != len(lidOf) {
		t.Fatalf("SA records %v, want one per end port %v and none for HcaA/2", slices.Sorted(maps.Keys(tables)), lidOf)
	}
	// Asked for port 2 by name, the SA answers with port 1's records: for a CA it
	// takes the port of the LID, whatever port the query names (sa_pkey_by_comp_mask,
	// "Using Physical Default Port Number"), as a CA's SMA does for P_KeyTable.
	out := l.tool(t, "saquery", "--smkey", "1", "PKTR", "1/2")
	for _, rec := range strings.Split(out, "PKeyTableRecord dump:")[1:] {
		if field(t, rec, "LID") != 1 || field(t, rec, "Port") != 1 {
			t.Errorf("saquery PKTR 1/2 (HcaA's DOWN port 2) answered:\n%s", out)
		}
	}
	for _, key := range []uint16{0x0002, 0x0003, 0x0004, 0x0005, 0x7fff, 0x0042} {
		var sa []string
		for k, tbl := range tables {
			if slices.ContainsFunc(tbl, func(e uint16) bool { return e&0x7fff == key }) {
				sa = append(sa, k)
			}
		}
		slices.Sort(sa)
		r := runIbkey(t, false, nil, "fabric", "pkeys", sim, "--key", fmt.Sprintf("0x%04x", key), "-o", "json")
		var doc struct {
			Members []struct {
				NodeGUID string `json:"node_guid"`
				Port     int    `json:"port"`
				EndPort  bool   `json:"end_port"`
			} `json:"members"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
			t.Fatalf("--key 0x%04x: %v\n%s", key, err, r.Stderr)
		}
		var got []string
		for _, m := range doc.Members {
			if m.EndPort {
				got = append(got, fmt.Sprintf("%d/%d", lidOf[fmt.Sprintf("%s/%d", m.NodeGUID, m.Port)], m.Port))
			}
		}
		slices.Sort(got)
		want := 0
		if len(sa) == 0 {
			want = 1
		}
		if !slices.Equal(got, sa) || r.Code != want || !strings.Contains(r.Stderr, `P_Key tables n/a on DOWN ports ("HcaA"[2], "HcaB"[2], "HcaC"[2])`) {
			t.Errorf("--key 0x%04x: exit %d (want %d), members %v, the SA's %v\n%s", key, r.Code, want, got, sa, r.Stderr)
		}
	}
}

// field is the number saquery prints after NAME's dots in rec.
func field(t *testing.T, rec, name string) int {
	t.Helper()
	for _, line := range strings.Split(rec, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+"."); ok {
			n, err := strconv.Atoi(strings.TrimLeft(v, "."))
			if err != nil {
				t.Fatalf("saquery %s: %q", name, line)
			}
			return n
		}
	}
	t.Fatalf("saquery record without %s:\n%s", name, rec)
	return 0
}

// saquery16 reads the 32 entries of one PKeyTableRecord's dump.
func saquery16(t *testing.T, rec string) []uint16 {
	t.Helper()
	_, after, ok := strings.Cut(rec, "PKey Table:")
	var v []uint16
	for _, f := range strings.Fields(after) {
		n, err := strconv.ParseUint(f, 0, 16)
		if err != nil {
			break
		}
		v = append(v, uint16(n))
	}
	if !ok || len(v) != 32 {
		t.Fatalf("saquery PKTR printed %d entries:\n%s", len(v), rec)
	}
	return v
}
