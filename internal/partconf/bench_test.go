package partconf

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
)

// bigFabric is 20,000 CA ports in 4,000 partitions of 50 members (each port in 10), the
// first two members of each full, plus Default=0x7fff : ALL=full.
func bigFabric() ([]byte, []Port) {
	const nPorts, nParts, per = 20000, 4000, 50
	ports := make([]Port, nPorts)
	for i := range ports {
		ports[i] = Port{GUID: check.GUID(0x0002c90300000000 + uint64(i)*16 + 1), Type: check.NodeCA}
	}
	var b strings.Builder
	b.WriteString("Default=0x7fff, ipoib : ALL=full, SELF=full;\n")
	for k := 0; k < nParts; k++ {
		fmt.Fprintf(&b, "part%d=0x%04x, ipoib :", k, k+1)
		for j := 0; j < per; j++ {
			g := ports[((k*per+j)*7919)%nPorts].GUID // a bijection per 20,000 slots: each port in 10
			if j > 0 {
				b.WriteString(",")
			}
			if j%25 == 24 {
				b.WriteString("\n  ") // member lists over lines
			}
			if j < 2 {
				fmt.Fprintf(&b, " %s=full", g)
			} else {
				fmt.Fprintf(&b, " %s", g)
			}
		}
		b.WriteString(";\n")
	}
	return []byte(b.String()), ports
}

// BenchmarkCheckAndSummary is `ibkey partitions check` plus `matrix` on a large fabric:
// parse, lint, model the tables of every port, and summarise reachability.
func BenchmarkCheckAndSummary(b *testing.B) {
	data, ports := bigFabric()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		c := Parse("big.conf", data)
		if c.Rejected {
			b.Fatal(c.Findings[0])
		}
		if fs := Lint(c, LintOptions{}); len(fs) != 0 {
			b.Fatal(fs[0])
		}
		m := NewModel(c, ports, Options{SMGUID: ports[0].GUID, TableSize: 128})
		s := m.Summary()
		if len(s.Partitions) != 4001 || len(m.Table(ports[7].GUID)) != 11 {
			b.Fatalf("%d partitions, table %v", len(s.Partitions), m.PKeys(ports[7].GUID))
		}
	}
}

func BenchmarkParse(b *testing.B) {
	data, _ := bigFabric()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		Parse("big.conf", data)
	}
}
