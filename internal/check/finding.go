package check

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// FilePos is a place in a configuration file (a partitions.conf line and column).
// Line and Col are 1-based physical lines and byte columns (OpenSM's own "line N"
// counts 4094-byte pieces of longer lines); Line 0 means the finding is about
// something implicit in the file (OpenSM's own Default line).
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

// Severity says how bad a finding is. Errors make `ibkey fabric check` and `ibkey
// partitions check` exit 1; warnings are policy and exit 0 unless --strict. It is the
// one severity of every finding: the audit's, the partitions.conf lint's and the
// comparison with a file's. Higher is worse.
type Severity uint8

const (
	SeverityWarning Severity = iota
	SeverityError
)

func (s Severity) String() string {
	if s == SeverityError {
		return "error"
	}
	return "warning"
}

// MarshalText writes "error" or "warning".
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// FindingPort is a port a finding is about, with its node's description for people.
type FindingPort struct {
	PortID
	Description string `json:"node_desc"`
}

// Finding is one result of a rule: what is wrong, where, and what to do. It is the one
// finding type of the fabric audit, the comparison with a partitions.conf, the
// partitions.conf lint and the fabric diff (one finding per change): a finding about
// the fabric names Ports, one about a file its Pos.
type Finding struct {
	Severity Severity `json:"severity"`
	// Pos is where in a configuration file the finding is; zero for the fabric's.
	Pos   FilePos       `json:"-"`
	Rule  string        `json:"rule"`
	Ports []FindingPort `json:"ports"`
	// PKeys are the keys the finding is about, when there are any.
	PKeys   []PKey `json:"-"`
	Message string `json:"message"`
	// Action says what to do about it (for a file: how to fix the line).
	Action string `json:"action"`
	// Field, Before and After are the value a finding of a comparison (the fabric
	// diff) is about: its name, and what it was and is ("" when absent on that side).
	Field  string `json:"field,omitempty"`
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
}

// MarshalJSON writes the keys as hex strings.
func (f Finding) MarshalJSON() ([]byte, error) {
	type alias Finding
	keys := make([]string, len(f.PKeys))
	for i, k := range f.PKeys {
		keys[i] = k.String()
	}
	a := alias(f)
	if a.Ports == nil {
		a.Ports = []FindingPort{}
	}
	// A finding about a file's line says where as the documents' file positions do:
	// one "FILE:LINE:COLUMN" string named at.
	var at string
	if !f.Pos.IsZero() {
		at = f.Pos.String()
	}
	return json.Marshal(struct {
		alias
		PKeys []string `json:"pkeys"`
		At    string   `json:"at,omitempty"`
	}{a, keys, at})
}

func (f Finding) String() string {
	if !f.Pos.IsZero() {
		s := fmt.Sprintf("%s: %s: %s [%s]", f.Pos, f.Severity, f.Message, f.Rule)
		if f.Action != "" {
			s += " (fix: " + f.Action + ")"
		}
		return s
	}
	s := fmt.Sprintf("%s: %s [%s]", f.Severity, f.Message, f.Rule)
	if f.Action != "" {
		s += "\n  do: " + f.Action
	}
	return s
}

// HasErrors reports whether a check with these findings fails: any error, or with
// strict any finding at all.
func HasErrors(findings []Finding, strict bool) bool {
	return slices.ContainsFunc(findings, func(f Finding) bool { return f.Severity == SeverityError || strict })
}

// SortFindings orders findings: errors first, then by rule, then by the first port.
func SortFindings(fs []Finding) {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		// Findings about a file's lines come in file order.
		return cmp.Or(cmp.Compare(b.Severity, a.Severity), strings.Compare(a.Rule, b.Rule),
			slices.CompareFunc(a.Ports, b.Ports, func(x, y FindingPort) int {
				return cmp.Or(cmp.Compare(x.Node, y.Node), cmp.Compare(x.Port, y.Port))
			}),
			strings.Compare(a.Pos.File, b.Pos.File), cmp.Compare(a.Pos.Line, b.Pos.Line), cmp.Compare(a.Pos.Col, b.Pos.Col),
			strings.Compare(a.Message, b.Message))
	})
}
