package query

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/partconf"
)

const reconfPort = 0x0002c90300000211

// TestReconfiguredPortTable pins the reconfiguration rules the lab showed
// (partitions_lab_test.go) on PortTable's slots after an OpenSM restart (a new process).
func TestReconfiguredPortTable(t *testing.T) {
	const a = "Default=0x7fff : ALL=full;\na=0x10 : ALL=full;\nb=0x20 : ALL=full;\nc=0x30 : ALL=full;\ne=0x50 : ALL=full;\n"
	tests := []struct {
		name, next string
		size       int
		want       string
		dropped    int
	}{
		{"unchanged", a, 0, "0xffff 0x8010 0x8020 0x8030 0x8050", 0},
		{"removed leaves holes", "Default=0x7fff : ALL=full;\na=0x10 : ALL=full;\nc=0x30 : ALL=full;\n", 0, "0xffff 0x8010 hole(0x8020) 0x8030 hole(0x8050)", 0},
		{"membership changes in place", "Default=0x7fff : ALL=full;\na=0x10 : ALL=limited;\n", 0, "0xffff 0x0010 hole(0x8020) hole(0x8030) hole(0x8050)", 0},
		{"new key after the last kept one", "Default=0x7fff : ALL=full;\na=0x10 : ALL=full;\nc=0x30 : ALL=full;\nf=0x8 : ALL=full;\n", 0, "0xffff 0x8010 hole(0x8020) 0x8030 0x8008", 0},
		{"full table reuses the lowest hole", "Default=0x7fff : ALL=full;\na=0x10 : ALL=full;\nc=0x30 : ALL=full;\ne=0x50 : ALL=full;\nf=0x8 : ALL=full;\ng=0x9 : ALL=full;\n", 5, "0xffff 0x8010 0x8008 0x8030 0x8050", 1},
	}
	parse := func(conf string) *partconf.Config {
		c := partconf.Parse("t.conf", []byte(conf))
		if c.Rejected {
			t.Fatal(c.Findings)
		}
		return c
	}
	port := partconf.Port{GUID: reconfPort, Type: check.NodeCA}
	for _, tt := range tests {
		opt := partconf.Options{TableSize: tt.size, Remember: true}
		p := NewPartitions(parse(tt.next), opt)
		prev := partconf.NewModel(parse(a), []partconf.Port{port}, opt)
		m := partconf.Reconfigure(prev, p.Config, false)
		pt := p.PortTable(m, prev, port)
		var got []string
		for _, s := range pt.Slots {
			switch {
			case s.Hole():
				got = append(got, fmt.Sprintf("hole(%s)", s.Before))
			case s.Entry == nil:
				got = append(got, "0x0000")
			default:
				got = append(got, s.Entry.PKey.String())
			}
		}
		if g := strings.Join(got, " "); g != tt.want || len(pt.Dropped) != tt.dropped {
			t.Errorf("%s: got %s (%d dropped), want %s (%d dropped)", tt.name, g, len(pt.Dropped), tt.want, tt.dropped)
		}
	}
}

func TestResolveGUIDEndpoints(t *testing.T) {
	p := NewPartitions(partconf.Parse("p.conf", []byte("Default=0x7fff : ALL=full;\ns=0x10 : 0x0002c90300000201=full, 0x0002c90300000204;\n")), partconf.Options{TableSize: 128})
	host := func() *Host { t.Fatal("a GUID endpoint read the host"); return nil }
	eps, err := ResolveEndpointsFrom(EndpointSources{Host: host, Partitions: p}, specs(t, "0x0002c90300000201", "guid=0x0002c90300000204,pkey=0x8010")...)
	if err != nil {
		t.Fatal(err)
	}
	if e := eps[0].Endpoint; !e.Port || len(e.Entries) != 2 || e.Entries[1].PKey != 0x8010 || e.Entries[1].Index != check.NoIndex || e.Label != "0x0002c90300000201" {
		t.Errorf("A: %+v", e)
	}
	if e := eps[1].Endpoint; e.Port || e.Entries[0].PKey != 0x0010 || len(e.Notes) != 1 {
		t.Errorf("B: %+v", e)
	}
	_, err = ResolveEndpointsFrom(EndpointSources{Host: host, Partitions: p}, specs(t, "0x0002c90300000299,pkey=0x10", "0x8010")...)
	if _, ok := err.(*check.ResolveError); !ok || !strings.Contains(err.Error(), "gets no entry for partition 0x0010 from p.conf (it gets 0xffff)") {
		t.Errorf("not in the partition: %v", err)
	}
	if _, err := ResolveEndpointsFrom(EndpointSources{Host: host}, specs(t, "0x0002c90300000201", "0x8010")...); !errors.Is(err, ErrGUIDNeedsSource) {
		t.Errorf("without partitions: %v", err)
	}
}
