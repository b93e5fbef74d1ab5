package partitions

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/partconf"
	"github.com/ibkey/ibkey/internal/query"
)

// TestMatrixNotKnown: a pair's can_talk is null (exit 4, incomplete) exactly where an
// assumption not given decides it (query.CanTalk's alternatives: SELF without
// --sm-guid, a port type without --router, a file OpenSM reads unpredictably), and
// true or false where it is given; a partition whose working the assumption decides
// is listed in not_known.
func TestMatrixNotKnown(t *testing.T) {
	const g1, g2, g3 = "0x0002c90300000001", "0x0002c90300000002", "0x0002c90300000003"
	cases := []struct {
		name string
		args []string
		code int
		// pairs: "a-b can_talk not_known partitions_complete", a and b the last
		// hex digit of the GUIDs.
		pairs      []string
		incomplete []string // kinds
	}{
		// No Default line: SELF=full in the implicit Default. 1 and 2 are limited
		// everywhere: as OpenSM's port either would be full in 0x7fff (the lab:
		// TestLabCanTalkPKeyUnderSelf). 1 and 3 talk in 0x0002 whatever SELF does, but
		// whether 0x7fff works for them depends on it.
		{"self", []string{selfConf}, 4, []string{
			"1-2 null [0x7fff] true", "1-3 true [0x7fff] true", "2-3 null [0x7fff] true"}, []string{"not-checked"}},
		{"self given", []string{selfConf, "--sm-guid", g1}, 0, []string{
			"1-2 true [] true", "1-3 true [] true", "2-3 false [] true"}, nil},
		{"self elsewhere", []string{selfConf, "--sm-guid", "0x0002c90300000009"}, 0, []string{
			"1-2 false [] true", "1-3 true [] true", "1-9 true [] true", "2-3 false [] true", "2-9 true [] true", "3-9 true [] true"}, nil},
		// ALL_CAS and ALL_ROUTERS without --router: 0x0010 and 0x0020 work for a pair
		// only as some types; 0x7fff (ALL=full) always works, so can_talk is known.
		{"router not given", []string{routerConf}, 4, []string{
			"1-2 true [0x0010] false"}, []string{"not-checked"}},
		{"router none", []string{routerConf, "--router", "none"}, 0, []string{
			"1-2 true [] true"}, nil},
		{"router given", []string{routerConf, "--router", routerPort}, 0, []string{
			"1-2 true [] true"}, nil},
		// A file OpenSM reads unpredictably: nothing is known.
		{"uncertain", []string{"testdata/uncertain2.conf"}, 4, nil, []string{"not-checked"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runIbkey(t, false, nil, append([]string{"partitions", "matrix", "-o", "json"}, tc.args...)...)
			if r.Code != tc.code {
				t.Fatalf("exit %d, want %d\n%s%s", r.Code, tc.code, r.Stdout, r.Stderr)
			}
			var doc struct {
				Pairs []struct {
					A, B               string
					CanTalk            *bool    `json:"can_talk"`
					NotKnown           []string `json:"not_known"`
					PartitionsComplete bool     `json:"partitions_complete"`
				} `json:"pairs"`
				Incomplete []struct{ Kind, Message string } `json:"incomplete"`
			}
			if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range doc.Pairs {
				ct := "null"
				if p.CanTalk != nil {
					ct = fmt.Sprint(*p.CanTalk)
				}
				got = append(got, fmt.Sprintf("%s-%s %s %v %v", p.A[len(p.A)-1:], p.B[len(p.B)-1:], ct, p.NotKnown, p.PartitionsComplete))
			}
			if tc.name == "uncertain" {
				for _, p := range doc.Pairs {
					if p.CanTalk != nil {
						t.Errorf("uncertain file: %s-%s can_talk %v, want null", p.A, p.B, *p.CanTalk)
					}
				}
				if len(doc.Pairs) != 1 {
					t.Errorf("uncertain file: %d pairs, want 1", len(doc.Pairs))
				}
				got, tc.pairs = nil, nil
			}
			if strings.Join(got, "\n") != strings.Join(tc.pairs, "\n") {
				t.Errorf("pairs:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.pairs, "\n"))
			}
			var kinds []string
			for _, in := range doc.Incomplete {
				kinds = append(kinds, in.Kind)
			}
			if strings.Join(kinds, ",") != strings.Join(tc.incomplete, ",") {
				t.Errorf("incomplete %v, want %v: %+v", kinds, tc.incomplete, doc.Incomplete)
			}
		})
	}
}

// TestMatrixSMPortTypeNotKnown: the port --sm-guid names is a port of the matrix
// (query.Partitions.TypedPorts) even when the file does not name it, so its type is
// an assumption not given as every other port's: without --router, where it would get
// other entries as a router port (here ALL_ROUTERS gives it 0x0001, which the file's
// own ports hold whatever their type), the grid's pairs with it and the summary's
// figures about it are not known, stderr names it, and the exit is 4, as partitions
// show says of the same port. The matrix looked only at the file's GUIDs: exit 0, and
// the summary stated that the SM's port reaches nobody except through 0x7fff.
func TestMatrixSMPortTypeNotKnown(t *testing.T) {
	const sm = "0x0002c90300000009"
	conf := filepath.Join(t.TempDir(), "p.conf")
	text := "Default=0x7fff : ALL=full ;\np1=0x0001 : ALL_ROUTERS=full, 0x0002c90300000001=full, 0x0002c90300000002=full ;\n"
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"grid", "summary"} {
		args := []string{"partitions", "matrix", "-o", "json", conf, "--sm-guid", sm}
		if mode == "summary" {
			args = append(args, "--summary")
		}
		r := runIbkey(t, false, nil, args...)
		if r.Code != 4 || !strings.Contains(r.Stderr, sm+" would get other entries as router ports") {
			t.Errorf("%s: exit %d, want 4 naming %s\n%s", mode, r.Code, sm, r.Stderr)
		}
		var doc struct {
			Summary struct {
				Ports []struct {
					PortGUID        string   `json:"port_guid"`
					ReachesNotKnown []string `json:"reaches_not_known"`
				} `json:"ports"`
				OnlyDefault []string `json:"only_default"`
			} `json:"summary"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
			t.Fatal(err)
		}
		for _, p := range doc.Summary.Ports {
			if p.PortGUID == sm && !slices.Contains(p.ReachesNotKnown, "0x0001") {
				t.Errorf("%s: %s reaches_not_known %v, want 0x0001 in it (a router port reaches it)", mode, sm, p.ReachesNotKnown)
			}
		}
		if doc.Summary.OnlyDefault != nil {
			t.Errorf("%s: only_default %v, want null (as a router port %s reaches 0x0001)", mode, doc.Summary.OnlyDefault, sm)
		}
	}
}

// TestSelfTakenExact: selfTaken models as the SM's port only some ports (those named
// in a partition with SELF, or of a type SELF gives other entries); on generated files
// (SELF full, limited or both, before or after the other items, in the Default line
// or another, beside ALL, ALL_CAS, ALL_ROUTERS and GUID items of either membership,
// CA and router ports, with and without allow_both) it names exactly the ports whose
// table differs as the SM's port, modelled one by one.
func TestSelfTakenExact(t *testing.T) {
	const g1, g2, g3 = "0x0002c90300000001", "0x0002c90300000002", "0x0002c90300000003"
	n := 0
	for _, def := range []string{"", "Default=0x7fff : ALL=full ;\n", "Default=0x7fff : ALL=limited ;\n", "Default=0x7fff : ALL=limited, SELF=full ;\n", "Default=0x7fff : ALL_CAS=full, SELF=limited ;\n"} {
		for _, self := range []string{"", "SELF=full", "SELF=limited", "SELF", "SELF=both", "SELF last", "SELF=both last", "SELF=full last"} {
			for _, others := range []string{"ALL=limited", "ALL_CAS=full", "ALL_ROUTERS=full", g1 + "=full, " + g2, g2 + "=limited, " + g3 + "=full", "ALL=full, " + g3} {
				members := others
				// SELF after the others: an item for the SM's port after another wins
				// (a port that holds the entry SELF gives may differ as the SM's).
				switch item, last := strings.CutSuffix(self, " last"); {
				case last:
					members = others + ", " + item
				case self != "":
					members = self + ", " + others
				}
				conf := def + "p=0x0010 : " + members + " ;\nq=0x0020 : " + g1 + ", " + g2 + "=full, " + g3 + " ;\n"
				for _, flags := range [][]string{{"--router", "none"}, {"--router", g2}, {"--router", "none", "--allow-both"}} {
					n++
					p, err := query.ReadPartitions("-", strings.NewReader(conf), partconf.Options{AllowBoth: len(flags) == 3})
					if err != nil {
						t.Fatal(err)
					}
					types := map[check.GUID]check.NodeType{}
					if flags[1] == g2 {
						types[0x0002c90300000002] = check.NodeRouter
					}
					p.Types, p.TypesComplete = types, true
					x := matrix{p: p, m: partconf.NewModel(p.Config, p.TypedPorts(), p.Options)}
					var want []string
					for _, port := range x.m.Ports {
						asSM := *p
						asSM.Options.SMGUID = port.GUID
						if !slices.Equal(asSM.ModelOf(port.GUID).PKeys(port.GUID), x.m.PKeys(port.GUID)) {
							want = append(want, port.GUID.String())
						}
					}
					got := selfTaken(x.p, x.m.Ports, fileTables(x.p, x.m), "the matrix takes none of its ports")
					for _, port := range x.m.Ports {
						if strings.Contains(got, port.GUID.String()) != slices.Contains(want, port.GUID.String()) {
							t.Errorf("%s %v: selfTaken %q, want the ports %v", conf, flags, got, want)
							break
						}
					}
					if (got == "") != (len(want) == 0) {
						t.Errorf("%s %v: selfTaken %q, want the ports %v", conf, flags, got, want)
					}
				}
			}
		}
	}
	t.Logf("%d files", n)
}

// TestMatrixNoPorts: a file that names no port GUID (only keywords) gives the matrix
// no port to answer for: grid and summary say so and how to give one, and the
// summary does not say that every port reaches another (there is none).
func TestMatrixNoPorts(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "p.conf")
	if err := os.WriteFile(conf, []byte("Default=0x7fff, ipoib : ALL=full;\np=0x10 : ALL_CAS=full;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{nil, {"--summary"}, {"-o", "table"}, {"--summary", "-o", "table"}} {
		r := runIbkey(t, false, nil, append([]string{"partitions", "matrix", conf, "-o", "plain", "--router", "none"}, args...)...)
		if r.Code != 0 || !strings.Contains(r.Stdout, "no port: the file names no port GUID") || strings.Contains(r.Stdout, "Every port reaches") {
			t.Errorf("%v: exit %d:\n%s%s", args, r.Code, r.Stdout, r.Stderr)
		}
	}
	// With --sm-guid the SM's port is one.
	if r := runIbkey(t, false, nil, "partitions", "matrix", conf, "--sm-guid", "0x1", "--router", "none", "-o", "plain"); r.Code != 0 || strings.Contains(r.Stdout, "no port") {
		t.Errorf("--sm-guid: exit %d:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// TestMatrixDroppedNote: a key OpenSM drops from a port's full table (ERR 0512) is
// no partition the port talks in; the grid's port notes say which keys it drops and
// at what table length, so an N is not left unexplained.
func TestMatrixDroppedNote(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "p.conf")
	text := "Default=0x7fff, ipoib : ALL=full;\na=0x10 : 0x0002c90300000001=full, 0x0002c90300000002=full;\nb=0x20 : 0x0002c90300000001=full, 0x0002c90300000002=full;\n"
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runIbkey(t, false, nil, "partitions", "matrix", conf, "--sm-guid", "0x0002c90300000001", "--table-size", "2", "-o", "plain")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	for _, g := range []string{"0x0002c90300000001", "0x0002c90300000002"} {
		found := false
		for _, line := range strings.Split(r.Stdout, "\n") {
			if strings.Contains(line, " "+g+" ") {
				found = strings.Contains(line, "drops_0x8020") && strings.Contains(line, "2_entries")
			}
		}
		if !found {
			t.Errorf("port %s: no note of the dropped 0x8020:\n%s", g, r.Stdout)
		}
	}
	if r := runIbkey(t, false, nil, "partitions", "matrix", conf, "--sm-guid", "0x0002c90300000001", "-o", "plain"); strings.Contains(r.Stdout, "drops") {
		t.Errorf("a table of 128 drops nothing:\n%s", r.Stdout)
	}
}
