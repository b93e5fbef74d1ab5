package partitions

import (
	"bytes"
	"testing"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/internal/partconf"
	"github.com/ibkey/ibkey/internal/query"
)

// findingJSON and checkJSON are the document of `partitions check -o json` as structs,
// as it was encoded before it was streamed (writeCheckJSON).
type findingJSON struct {
	Severity string `json:"severity"`
	File     string `json:"file"`
	Line     int    `json:"line"`
	Column   int    `json:"column"`
	Rule     string `json:"rule"`
	Message  string `json:"message"`
	Action   string `json:"action"`
}

type checkJSON struct {
	Schema    cmdutil.SchemaVersion `json:"schema_version"`
	File      string                `json:"file"`
	Rejected  bool                  `json:"rejected"`
	Uncertain string                `json:"uncertain,omitempty"`
	Findings  []findingJSON         `json:"findings"`
	Errors    int                   `json:"errors"`
	Warnings  int                   `json:"warnings"`
}

// TestCheckJSONMatchesStructs: writeCheckJSON writes what cmdutil.WriteJSON writes for
// checkJSON, on files of every shape (showConfigs) linted with and without -W and
// with a small table.
func TestCheckJSONMatchesStructs(t *testing.T) {
	n := 0
	for _, file := range showConfigs(t) {
		for _, lo := range []partconf.LintOptions{{}, {AllowBoth: true, TableSize: 2}} {
			p, err := query.ReadPartitions(file, nil, partconf.Options{TableSize: 128})
			if err != nil {
				t.Fatal(err)
			}
			c := p.Config
			fs := partconf.Lint(c, lo)
			errs, warns := 0, 0
			want := checkJSON{File: c.File, Rejected: c.Rejected, Uncertain: c.Uncertain, Findings: []findingJSON{}}
			for _, fd := range fs {
				if fd.Severity == partconf.Error {
					errs++
				} else {
					warns++
				}
				want.Findings = append(want.Findings, findingJSON{fd.Severity.String(), fd.Pos.File, fd.Pos.Line, fd.Pos.Col, fd.Rule, fd.Message, fd.Action})
			}
			want.Errors, want.Warnings = errs, warns
			var got, wb bytes.Buffer
			lf := partconf.LintFindings(c, lo)
			if lf.Errors() != errs || lf.Warnings() != warns {
				t.Errorf("%s %+v: LintFindings counts %d errors, %d warnings; Lint %d, %d", file, lo, lf.Errors(), lf.Warnings(), errs, warns)
			}
			if err := writeCheckJSON(&got, c, lf, errs, warns); err != nil {
				t.Fatal(err)
			}
			if err := cmdutil.WriteJSON(&wb, want); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), wb.Bytes()) {
				t.Fatalf("%s %+v: streamed\n%s\nwant\n%s", file, lo, firstDiff(got.Bytes(), wb.Bytes()), firstDiff(wb.Bytes(), got.Bytes()))
			}
			n += len(fs)
		}
	}
	if n == 0 {
		t.Fatal("no findings compared")
	}
	t.Logf("%d findings compared", n)
}
