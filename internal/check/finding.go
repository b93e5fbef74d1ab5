package check

import "fmt"

// FilePos is a place in a configuration file (a partitions.conf line and column).
// Line and Col are 1-based; Line 0 means the finding is about something implicit in
// the file (OpenSM's own Default line).
type FilePos struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Col  int    `json:"col"`
}

func (p FilePos) String() string {
	if p.Line == 0 {
		return p.File + ":(implicit)"
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// IsZero reports whether no position is set (a finding about the fabric).
func (p FilePos) IsZero() bool { return p == FilePos{} }
