package query

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/partconf"
)

func slotsText(ss []Slot) string {
	var out []string
	for _, s := range ss {
		switch {
		case s.Hole():
			out = append(out, fmt.Sprintf("%d:hole(%s)", s.Index, s.Before))
		case s.Entry == nil:
			out = append(out, fmt.Sprintf("%d:-", s.Index))
		default:
			out = append(out, fmt.Sprintf("%d:%s", s.Index, s.Entry.PKey))
		}
	}
	return strings.Join(out, " ")
}

// TestPortTables: a fresh port's table is the model's slots (an empty index included:
// -W gives a port that is only a limited member of the default partition an empty
// index 0), entries past the table size are dropped, --previous leaves holes, and a
// router port gets ALL_ROUTERS' keys instead of ALL_CAS'.
func TestPortTables(t *testing.T) {
	const (
		ca     = 0x0002c90300000301
		router = 0x0002c90300000302
	)
	conf := "Default=0x7fff : ALL=limited, SELF=full;\ncas=0x10 : ALL_CAS=full;\nrouters=0x20 : ALL_ROUTERS=full;\nx=0x30 : 0x0002c90300000301, 0x0002c90300000302;\n"
	prevConf := "Default=0x7fff : ALL=limited, SELF=full;\nold=0x40 : ALL=full;\ncas=0x10 : ALL_CAS=full;\n"
	types := map[check.GUID]check.NodeType{router: check.NodeRouter}
	tests := []struct {
		name      string
		opt       partconf.Options
		types     map[check.GUID]check.NodeType
		prev      bool
		ca, rt    string
		dropped   int
		routerTyp check.NodeType
	}{
		{"fresh", partconf.Options{}, types, false, "0:0x7fff 1:0x8010 2:0x0030", "0:0x7fff 1:0x8020 2:0x0030", 0, check.NodeRouter},
		{"no router flag", partconf.Options{}, nil, false, "0:0x7fff 1:0x8010 2:0x0030", "0:0x7fff 1:0x8010 2:0x0030", 0, check.NodeCA},
		{"-W: limited default leaves index 0 empty", partconf.Options{AllowBoth: true}, types, false, "0:- 1:0x8010 2:0x0030 3:0x7fff", "0:- 1:0x8020 2:0x0030 3:0x7fff", 0, check.NodeRouter},
		{"table of 2", partconf.Options{TableSize: 2}, types, false, "0:0x7fff 1:0x8010", "0:0x7fff 1:0x8020", 1, check.NodeRouter},
		// Before: CA 0x7fff 0x8010 0x8040, router 0x7fff 0x8040; the first new key
		// goes after the last kept one, where 0x8040 was.
		{"after a previous configuration", partconf.Options{}, types, true, "0:0x7fff 1:0x8010 2:0x0030", "0:0x7fff 1:0x8020 2:0x0030", 0, check.NodeRouter},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := NewPartitions(partconf.Parse("t.conf", []byte(conf)), tc.opt)
			p.Types = tc.types
			ports := p.TypedPorts(ca, router)
			m := partconf.NewModel(p.Config, ports, p.Options)
			var prev *partconf.Model
			if tc.prev {
				prev = partconf.NewModel(partconf.Parse("prev.conf", []byte(prevConf)), ports, p.Options)
			}
			if len(m.Ports) != 2 {
				t.Fatalf("%d ports", len(m.Ports))
			}
			got := map[check.GUID]PortTable{}
			for _, port := range m.Ports {
				got[port.GUID] = p.PortTable(m, prev, port)
			}
			if s := slotsText(got[ca].Slots); s != tc.ca {
				t.Errorf("CA port: %s, want %s", s, tc.ca)
			}
			if s := slotsText(got[router].Slots); s != tc.rt {
				t.Errorf("router port: %s, want %s", s, tc.rt)
			}
			if n := len(got[ca].Dropped); n != tc.dropped {
				t.Errorf("CA port: %d dropped, want %d", n, tc.dropped)
			}
			if tc.prev {
				if s := got[ca].Slots[2]; s.Before != 0x8040 || s.Kept || !got[ca].Slots[1].Kept {
					t.Errorf("CA port: slot 2 %+v, slot 1 %+v: want 0x8040 replaced, 0x8010 kept", s, got[ca].Slots[1])
				}
				if s := got[router].Slots[1]; s.Before != 0x8040 || s.Kept {
					t.Errorf("router port: slot 1 %+v: want 0x8040 replaced", s)
				}
			}
			if got[router].Port.Type != tc.routerTyp || !got[ca].InFile || got[ca].SM {
				t.Errorf("port facts: %+v %+v", got[router].Port, got[ca])
			}
		})
	}
}

// TestPairs: the grid's pairs in port order, keys ascending, and Working leaves the
// default partition out unless it is the only one that works.
func TestPairs(t *testing.T) {
	conf := "Default=0x7fff : ALL=full;\na=0x10 : 0x1=full, 0x2;\nb=0x20 : 0x2, 0x3;\nc=0x30 : 0x1=full, 0x3=full;\n"
	p := NewPartitions(partconf.Parse("t.conf", []byte(conf)), partconf.Options{})
	pairs, err := p.Pairs(p.TypedPorts())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, pr := range pairs {
		if pr.NotKnown != nil || pr.SharedAssumed || pr.NotChecked != nil {
			t.Errorf("%x-%x: not known %v, shared assumed %v, %v: nothing is assumed here", uint64(pr.A), uint64(pr.B), pr.NotKnown, pr.SharedAssumed, pr.NotChecked)
		}
		got = append(got, fmt.Sprintf("%x-%x %v talk=%v working=%v limited=%v", uint64(pr.A), uint64(pr.B), pr.Kind == check.VerdictYes, pr.Partitions, pr.Working(), pr.LimitedOnly))
	}
	want := []string{
		"1-2 true talk=[0x0010 0x7fff] working=[0x0010] limited=[]",
		"1-3 true talk=[0x0030 0x7fff] working=[0x0030] limited=[]",
		"2-3 true talk=[0x7fff] working=[0x7fff] limited=[0x0020]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("pairs:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if w := (Pair{Partitions: []check.PKey{}}).Working(); len(w) != 0 {
		t.Errorf("no partition: Working %v", w)
	}
}
