package partconf

import (
	"testing"

	"github.com/ibkey/ibkey/internal/check"
)

// FuzzParse: parsing, linting and modelling any input never panics, and the rejection
// flag agrees with the findings. Seeds: testdata/fuzz/FuzzParse (the lab configs and the
// OpenSM quirks).
func FuzzParse(f *testing.F) {
	f.Add([]byte(factsExample))
	f.Add([]byte("Default=0x7fff : ALL=full\n;\n"))
	ports := []Port{{GUID: 1, Type: check.NodeCA}, {GUID: 2, Type: check.NodeCA}, {GUID: 3, Type: check.NodeSwitch}, {GUID: 4, Type: check.NodeRouter}}
	f.Fuzz(func(t *testing.T, data []byte) {
		c := Parse("fuzz.conf", data)
		rejects := false
		for _, fd := range c.Findings {
			if fd.Pos.Line < 1 || fd.Pos.Col < 1 {
				t.Fatalf("finding without position: %+v", fd)
			}
			if fd.Rule == "opensm-rejects" || fd.Rule == "bad-member" {
				rejects = true
			}
		}
		if rejects && !c.Rejected {
			t.Fatalf("a rejection finding but Rejected is false: %v", c.Findings)
		}
		for _, p := range c.Partitions {
			if p.Key == 0 || p.Key > 0x7fff {
				t.Fatalf("partition key %s", p.Key)
			}
		}
		Lint(c, LintOptions{AllowBoth: len(data)%2 == 0, TableSize: 4})
		m := NewModel(c, ports, Options{AllowBoth: len(data)%2 == 1, SMGUID: 1, TableSize: 8})
		m.Summary()
		v := canTalk(m, 1, 2)
		if v.CanTalk() != pkeyRule(m.PKeys(1), m.PKeys(2)) {
			t.Fatalf("CanTalk %v disagrees with the P_Key rule on %v %v", v.CanTalk(), m.PKeys(1), m.PKeys(2))
		}
	})
}
