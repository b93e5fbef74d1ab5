package smlog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/partconf"
	"github.com/ibkey/ibkey/internal/query"
)

// TestExplainFixNamesTheLine: with the partitions file, the fix of a rejected
// partitions.conf quotes the line OpenSM stops at and adds what partitions check says
// to do there (its error's action), and the fix of a full table names where the file
// makes the port a member: the first of its members in each partition.
func TestExplainFixNamesTheLine(t *testing.T) {
	const guid = "0x0002c90300000001"
	path := filepath.Join(t.TempDir(), "partitions.conf")
	for _, c := range []struct {
		name, text string
		ev         *Event
		want       []string
	}{
		{
			name: "rejected",
			text: "Default=0x7fff, ipoib : ALL=full;\nfoo=0x8002 " + guid + "=full;\n",
			ev:   &Event{Kind: KindConfigRejected, ConfLine: 2, Detail: "x"},
			want: []string{"partitions.conf:2:1 `foo=0x8002 " + guid + "=full;`: join the line with the next one", "; then SIGHUP OpenSM (ibkey partitions check shows every problem)"},
		},
		{
			name: "table-full",
			text: "Default=0x7fff, ipoib : ALL=full;\na=0x0002 : " + guid + "=full, " + guid + ";\nb=0x0003 : 0x0002c90300000002, " + guid + ";\n",
			ev:   &Event{Kind: KindTableFull, Key: 0x8003, From: Port{GUID: check.GUID(0x0002c90300000001), Num: -1}},
			want: []string{"; " + path + " names it at " + path + ":2:12 (a), " + path + ":3:32 (b)"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
				t.Fatal(err)
			}
			p, err := query.ReadPartitions(path, nil, partconf.Options{TableSize: 64, SMGUID: guidA})
			if err != nil {
				t.Fatal(err)
			}
			ex := (&Explainer{R: NewResolver(nil, nil), Parts: p, PartsText: c.text}).Explain(c.ev)
			for _, w := range c.want {
				if !strings.Contains(ex.Fix, w) {
					t.Errorf("fix %q lacks %q", ex.Fix, w)
				}
			}
		})
	}
}
