package check

import "testing"

// TestSortFindingsFileOrder: findings of one severity and rule about a file's lines
// come in line, then column order, whatever their messages.
func TestSortFindingsFileOrder(t *testing.T) {
	fs := []Finding{
		{Severity: SeverityWarning, Rule: "r", Pos: FilePos{File: "p.conf", Line: 9, Col: 42}, Message: "a"},
		{Severity: SeverityWarning, Rule: "r", Pos: FilePos{File: "p.conf", Line: 9, Col: 17}, Message: "z"},
		{Severity: SeverityWarning, Rule: "r", Pos: FilePos{File: "p.conf", Line: 6, Col: 99}, Message: "m"},
		{Severity: SeverityError, Rule: "r", Pos: FilePos{File: "p.conf", Line: 10, Col: 1}, Message: "e"},
	}
	SortFindings(fs)
	var got string
	for _, f := range fs {
		got += f.Pos.String() + " "
	}
	if want := "p.conf:10:1 p.conf:6:99 p.conf:9:17 p.conf:9:42 "; got != want {
		t.Errorf("order %q, want %q", got, want)
	}
}
