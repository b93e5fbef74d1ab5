package partconf

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
	ibsimlab "github.com/ibkey/ibkey/internal/lab"
)

// runningSequences are files applied in turn, each sequence by one OpenSM daemon
// (SIGHUP after each file) and by a new OpenSM per file: what the two remember
// differs (osm_pkey_mgr.c's accum_pkeys, osm_prtn.c's partition map).
var runningSequences = []struct {
	name  string
	files []string
}{
	{"a removed last key's hole", []string{
		"Default=0x7fff : ALL=full ;\na=0x10 : ALL=full ;\nb=0x20 : ALL=full ;\nc=0x30 : ALL=full ;\n",
		"Default=0x7fff : ALL=full ;\na=0x10 : ALL=full ;\nb=0x20 : ALL=full ;\n",
		"Default=0x7fff : ALL=full ;\na=0x10 : ALL=full ;\nb=0x20 : ALL=full ;\nd=0x40 : ALL=full ;\n",
	}},
	{"a key put back", []string{
		"Default=0x7fff : ALL=full ;\na=0x10 : ALL=full ;\nb=0x20 : ALL=full ;\nc=0x30 : ALL=full ;\n",
		"Default=0x7fff : ALL=full ;\na=0x10 : ALL=full ;\nc=0x30 : ALL=full ;\nd=0x40 : ALL=full ;\n",
		"Default=0x7fff : ALL=full ;\na=0x10 : ALL=full ;\nb=0x20 : ALL=full ;\nc=0x30 : ALL=full ;\nd=0x40 : ALL=full ;\n",
	}},
	{"a name without a key", []string{
		"Default=0x7fff : ALL=full ;\nx3=0x00e1 : ALL=full ;\na=0x0001 : 0x0002c90300000211=full ;\n",
		"Default=0x7fff : ALL=full ;\nx3 : ALL=full ;\nb : 0x0002c90300000221=full ;\n",
	}},
	{"indx0 moving", []string{
		"Default=0x7fff : ALL=limited, SELF=full ;\na=0x10, indx0 : ALL=full ;\nb=0x20 : ALL=full ;\n",
		"Default=0x7fff : ALL=limited, SELF=full ;\na=0x10 : ALL=full ;\nb=0x20, indx0 : ALL=full ;\n",
		"Default=0x7fff, indx0 : ALL=limited, SELF=full ;\nb=0x20 : ALL=both ;\nc=0x30 : ALL=full ;\n",
		"Default=0x7fff : ALL=limited, SELF=full ;\nc=0x30 : ALL=full ;\nb=0x20 : ALL=both ;\n",
	}},
}

// TestLabRunningOpenSM: each sequence, by a daemon and by new processes: the model of
// the sequence (Reconfigure, running or not) predicts every table, with -W and
// without; and the two ways differ somewhere (else the test could not tell them).
func TestLabRunningOpenSM(t *testing.T) {
	needLab(t)
	net, err := filepath.Abs(filepath.Join("testdata", "lab", "net"))
	if err != nil {
		t.Fatal(err)
	}
	differ := 0
	for _, seq := range runningSequences {
		for _, allowBoth := range []bool{false, true} {
			name := seq.name
			if allowBoth {
				name += " -W"
			}
			t.Run(name, func(t *testing.T) {
				got := map[bool][]map[check.GUID][]check.PKey{}
				for _, running := range []bool{true, false} {
					l := startLab(t, net)
					var args, conf []string
					if allowBoth {
						args, conf = []string{"-W"}, []string{"allow_both_pkeys TRUE"}
					}
					var d *ibsimlab.OpenSMDaemon
					var m *Model
					for i, text := range seq.files {
						switch {
						case running && i == 0:
							d = l.StartOpenSMDaemon(t, text, conf...)
						case running:
							if _, _, err := d.Reprogram(context.Background(), text); err != nil {
								t.Fatal(err)
							}
						default:
							if err := l.RunOpenSMArgs(text, args...); err != nil {
								t.Fatal(err)
							}
						}
						c := Parse("p.conf", []byte(text))
						if i == 0 {
							m = NewModel(c, labFabric, Options{AllowBoth: allowBoth, SMGUID: labSM, TableSize: 64, Remember: true})
						} else {
							m = Reconfigure(m, c, running)
						}
						tables := map[check.GUID][]check.PKey{}
						for _, dr := range append(labHCAs, labSwitch) {
							g := portGUID(t, l, dr)
							tables[g] = pkeyTable(t, l, dr)
							if got, want := fmt.Sprint(tables[g]), slotString(m.Slots(g)); got != want {
								t.Errorf("running %v, file %d: port %s: model %s, OpenSM %s", running, i+1, g, want, got)
							}
						}
						got[running] = append(got[running], tables)
					}
					if d != nil {
						d.Stop()
					}
				}
				if fmt.Sprint(got[true]) != fmt.Sprint(got[false]) {
					differ++
				}
			})
		}
	}
	if differ == 0 {
		t.Error("a daemon and new processes programmed the same tables in every sequence: the test cannot tell them apart")
	}
}

// TestLabKeepPKeyIndexesRunning: a running OpenSM re-reads keep_pkey_indexes in the
// heavy sweep a SIGHUP starts (osm_subnet.c: can_update, osm_subn_rescan_conf_files),
// but only a value the file gives and gave otherwise before (opts_parse_boolean): with
// keep_pkey_indexes FALSE, then TRUE, a removed partition leaves a hole (b stays at
// index 2); with the line removed instead, OpenSM keeps FALSE and b moves to index 1.
// The model follows Options.ForgetIndexes of each run.
func TestLabKeepPKeyIndexesRunning(t *testing.T) {
	needLab(t)
	net, err := filepath.Abs(filepath.Join("testdata", "lab", "net"))
	if err != nil {
		t.Fatal(err)
	}
	const first = "Default=0x7fff : ALL=full ;\na=0x10 : ALL=full ;\nb=0x20 : ALL=full ;\nc=0x30 : ALL=full ;\n"
	const second = "Default=0x7fff : ALL=full ;\nb=0x20 : ALL=full ;\nc=0x30 : ALL=full ;\n"
	for _, tc := range []struct {
		then string // the daemon's keep_pkey_indexes line for the second file
		want string // a CA port's table after it
	}{
		{"keep_pkey_indexes TRUE", "[0xffff 0x0000 0x8020 0x8030]"},
		{"", "[0xffff 0x8020 0x8030]"},
	} {
		t.Run(fmt.Sprintf("then %q", tc.then), func(t *testing.T) {
			l := startLab(t, net)
			d := l.StartOpenSMDaemon(t, first, "keep_pkey_indexes FALSE")
			m := NewModel(Parse("p.conf", []byte(first)), labFabric, Options{SMGUID: labSM, TableSize: 64, Remember: true, ForgetIndexes: true})
			// The daemon's opensm.conf (internal/lab, OpenSMDaemonAt).
			if err := os.WriteFile(filepath.Join(filepath.Dir(d.Conf), "opensm.conf"), []byte("force_log_flush TRUE\n"+tc.then+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, _, err := d.Reprogram(context.Background(), second); err != nil {
				t.Fatal(err)
			}
			m.Options.ForgetIndexes = tc.then == ""
			m = Reconfigure(m, Parse("p.conf", []byte(second)), true)
			for i, dr := range append(labHCAs, labSwitch) {
				g := portGUID(t, l, dr)
				got := fmt.Sprint(pkeyTable(t, l, dr))
				if want := slotString(m.Slots(g)); got != want {
					t.Errorf("port %s: model %s, OpenSM %s", g, want, got)
				}
				if i == 0 && got != tc.want {
					t.Errorf("port %s: OpenSM %s, this test expects %s", g, got, tc.want)
				}
			}
		})
	}
}
